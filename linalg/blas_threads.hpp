#pragma once
// The one place that decides how many threads OpenBLAS may use.
//
// cholsim runs its own tree-parallel tasks (independent subtrees of the assembly tree) and
// calls BLAS inside them. If OpenBLAS also spawned its threads inside each task, 2 tasks × 2
// BLAS threads would oversubscribe a 2-core machine. So the library keeps BLAS at one thread
// while tasks run in parallel, and raises it only around the large fronts near the root where
// a single task is active. Every change of the BLAS thread count goes through this header.
//
// The default at process start comes from the environment as OpenBLAS reads it
// (OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else all cores).

namespace cholsim::linalg {

/// Number of threads OpenBLAS currently uses.
int blas_threads();

/// Sets the number of threads OpenBLAS uses (values < 1 are treated as 1).
void set_blas_threads(int threads);

/// Number of hardware threads available to this process (≥ 1).
int hardware_threads();

/// Sets the BLAS thread count for a scope and restores the previous count on exit.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;

 private:
  int previous_;
};

}  // namespace cholsim::linalg

#include "linalg/blas_threads.hpp"

#include <algorithm>
#include <thread>

extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
}

namespace cholsim::linalg {

int blas_threads() { return openblas_get_num_threads(); }

void set_blas_threads(int threads) { openblas_set_num_threads(std::max(threads, 1)); }

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

ScopedBlasThreads::ScopedBlasThreads(int threads) : previous_(blas_threads()) {
  set_blas_threads(threads);
}

ScopedBlasThreads::~ScopedBlasThreads() { set_blas_threads(previous_); }

}  // namespace cholsim::linalg

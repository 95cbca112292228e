#pragma once
// The floating-point control state of a thread, which tasks run on other threads must share.
//
// Why: subnormal numbers (below 2.2·10⁻³⁰⁸) cost a microcode assist per operation on x86,
// about a hundred times a normal one. A factor whose entries decay geometrically away from the
// diagonal — a strongly diagonally dominant 2D grid with 20 dense rows, 490,020 unknowns —
// held 108,095 of them among 35 million entries, and its factorization ran at 4 GFLOP/s
// where the same flops elsewhere run at 60 (docs/benchmarks.md, issue 23 item 2). Flushed to
// zero they change nothing a double can represent relative to the entries beside them.
//
// The mode is per thread (x86: the MXCSR register's flush-to-zero and denormals-are-zero
// bits), so work handed to other threads takes the mode of the thread that handed it out:
// FloatingPointMode::current() captures it, a Scope applies it for as long as it lives. On
// processors without these bits both are no-ops.
#include <utility>

namespace cholsim::linalg {

class FloatingPointMode {
 public:
  /// The calling thread's mode.
  static FloatingPointMode current();
  /// The calling thread's mode with subnormal results and operands flushed to zero.
  static FloatingPointMode flushing_subnormals();

  /// Applies a mode to the calling thread and restores the thread's own on destruction.
  class Scope {
   public:
    explicit Scope(FloatingPointMode mode);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    unsigned previous_;
  };

 private:
  explicit FloatingPointMode(unsigned control) : control_(control) {}
  unsigned control_;
};

/// `work` as a callable that runs in the calling thread's current mode on whichever thread
/// calls it: what a task handed to other threads is wrapped in.
template <typename Work>
auto in_current_mode(Work work) {
  return [work = std::move(work), mode = FloatingPointMode::current()](auto&&... arguments) {
    const FloatingPointMode::Scope same_mode(mode);
    return work(std::forward<decltype(arguments)>(arguments)...);
  };
}

}  // namespace cholsim::linalg

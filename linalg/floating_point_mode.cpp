#include "linalg/floating_point_mode.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define CHOLSIM_HAS_MXCSR 1
#endif

namespace cholsim::linalg {
namespace {

#ifdef CHOLSIM_HAS_MXCSR
constexpr unsigned kFlushToZero = 0x8000;       // MXCSR.FTZ: subnormal results become 0
constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR.DAZ: subnormal operands read as 0
unsigned read_control() { return _mm_getcsr(); }
void write_control(unsigned control) { _mm_setcsr(control); }
#else
constexpr unsigned kFlushToZero = 0;
constexpr unsigned kDenormalsAreZero = 0;
unsigned read_control() { return 0; }
void write_control(unsigned) {}
#endif

}  // namespace

FloatingPointMode FloatingPointMode::current() { return FloatingPointMode(read_control()); }

FloatingPointMode FloatingPointMode::flushing_subnormals() {
  return FloatingPointMode(read_control() | kFlushToZero | kDenormalsAreZero);
}

FloatingPointMode::Scope::Scope(FloatingPointMode mode) : previous_(read_control()) {
  if (mode.control_ != previous_) write_control(mode.control_);
}

FloatingPointMode::Scope::~Scope() {
  if (read_control() != previous_) write_control(previous_);
}

}  // namespace cholsim::linalg

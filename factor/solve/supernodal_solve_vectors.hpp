#pragma once
// Pieces shared by the two supernodal substitutions (supernodal_solve.cpp on Factor's blocks,
// supernodal_solve_tiled.cpp on TiledSolveFactor's copy): the vector types their kernels are
// written with, the row-interleaved right-hand sides, and the choice between the AVX2 and the
// SSE2 compilation of the kernels. Internal to factor/: not part of the library's interface.
#include <cstdlib>

#include "linalg/index_types.hpp"
#include "linalg/unaligned_vector.hpp"

// The kernels are compiled twice: with 4-double vectors for AVX2 + FMA (x86-64-v3), chosen at
// run time when the CPU has them (unless CHOLSIM_SOLVE_BASELINE is set), and with 2-double
// vectors for the SSE2 baseline of x86-64.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CHOLSIM_SOLVE_AVX2 1
#else
#define CHOLSIM_SOLVE_AVX2 0
#endif
// Kernel pieces are inlined into each compiled copy of the kernel.
#define CHOLSIM_INLINE [[gnu::always_inline]] inline

namespace cholsim::factor::solve_detail {

using linalg::Index;

/// Two and four doubles as GCC/Clang vectors: one SSE2 or one AVX register. The row loops are
/// written with them (the kernels take the type as `Vector`) because compilers vectorize these
/// loops poorly alone. Passed by reference only: by value their ABI depends on the target.
CHOLSIM_UNALIGNED_VECTOR(Pair, double, 2);
CHOLSIM_UNALIGNED_VECTOR(Quad, double, 4);
template <typename Vector>
constexpr Index kLanes = static_cast<Index>(sizeof(Vector) / sizeof(double));

// Unaligned access through the vector type (its alignment is 8: linalg/unaligned_vector.hpp);
// GCC and Clang let a vector of double alias doubles. (std::memcpy here made GCC 12 bounce
// the values through the stack.) One overload per type, not a template on the kernels'
// `Vector`: both compilers drop a typedef's `aligned` from a template argument, and the cast
// would then be to a 16- or 32-byte-aligned type.
CHOLSIM_INLINE void load(Pair& v, const double* p) { v = *reinterpret_cast<const Pair*>(p); }
CHOLSIM_INLINE void load(Quad& v, const double* p) { v = *reinterpret_cast<const Quad*>(p); }
CHOLSIM_INLINE void store(double* p, const Pair& v) { *reinterpret_cast<Pair*>(p) = v; }
CHOLSIM_INLINE void store(double* p, const Quad& v) { *reinterpret_cast<Quad*>(p) = v; }
/// Loads two or four floats and widens them to doubles (a copy of L kept in single precision).
CHOLSIM_UNALIGNED_VECTOR(PairOfFloats, float, 2);
CHOLSIM_UNALIGNED_VECTOR(QuadOfFloats, float, 4);
CHOLSIM_INLINE void load(Pair& v, const float* p) {
  v = __builtin_convertvector(*reinterpret_cast<const PairOfFloats*>(p), Pair);
}
CHOLSIM_INLINE void load(Quad& v, const float* p) {
  v = __builtin_convertvector(*reinterpret_cast<const QuadOfFloats*>(p), Quad);
}

/// Interleaved right-hand sides: element (i, c) at data[i·count + c].
struct InterleavedRhs {
  double* data;
  Index count;
  [[nodiscard]] double* row(Index i) const {
    return data + static_cast<std::size_t>(i) * static_cast<std::size_t>(count);
  }
};

#if CHOLSIM_SOLVE_AVX2
/// True when the CPU has AVX2 and FMA and CHOLSIM_SOLVE_BASELINE is not set in the
/// environment (the variable forces the SSE2 kernels, for tests and comparisons).
inline bool use_avx2_kernels() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has && std::getenv("CHOLSIM_SOLVE_BASELINE") == nullptr;
}
#endif

}  // namespace cholsim::factor::solve_detail

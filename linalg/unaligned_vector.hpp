#pragma once
// CHOLSIM_UNALIGNED_VECTOR(Name, Scalar, Count[, attributes...]) declares Name, a GCC/Clang
// vector of Count Scalars aligned like one Scalar, for kernels that load and store rows of
// doubles or floats a vector at a time wherever the rows happen to start; it fails to compile
// where the compiler would not honour the lowered alignment.
//
// The two compilers honour it in different declarations, so the spelling depends on the
// compiler:
//  * Clang ignores `aligned` in an alias-declaration: `using V = double
//    __attribute__((vector_size(32), aligned(8)))` keeps 32-byte alignment, its accesses compile
//    to aligned moves and fault on unaligned rows (Clang's UBSan reported them). Clang honours
//    the typedef form.
//  * GCC 12, given the typedef form, emitted aligned moves for some of these accesses (the
//    16-byte halves of opsplit's 32-byte right-hand-side rows on SSE2; the AVX2 supernodal solve
//    faulted on the cloth QPs); the alias-declaration gives unaligned moves.
// Both compilers drop the lowered alignment from a template argument (GCC says so with
// -Wignored-attributes), so cast pointers to the declared name, never to a template parameter
// that names it. A packed struct around the vector would be unaligned for both, but changed
// GCC's code for the supernodal solve throughout. Both let a vector type alias its element type.
#if defined(__clang__)
#define CHOLSIM_UNALIGNED_VECTOR_DECLARATION(name, scalar, count, ...) \
  typedef scalar name                                                    \
      __attribute__((vector_size((count) * sizeof(scalar)), aligned(sizeof(scalar)) __VA_OPT__(, ) __VA_ARGS__))
#else
#define CHOLSIM_UNALIGNED_VECTOR_DECLARATION(name, scalar, count, ...) \
  using name = scalar                                                    \
      __attribute__((vector_size((count) * sizeof(scalar)), aligned(sizeof(scalar)) __VA_OPT__(, ) __VA_ARGS__))
#endif
#define CHOLSIM_UNALIGNED_VECTOR(name, scalar, count, ...)                 \
  CHOLSIM_UNALIGNED_VECTOR_DECLARATION(name, scalar, count, __VA_ARGS__); \
  static_assert(alignof(name) == alignof(scalar), #name " must be aligned like one " #scalar)

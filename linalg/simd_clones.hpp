#pragma once
// CHOLSIM_SIMD_CLONES before a function compiles it three times — AVX-512, AVX2 with FMA, and
// baseline x86-64 — and picks one when the library is loaded: the library is built without
// -march=native so that one binary runs on every machine, and the memory-bound loops that
// are not BLAS calls still get the machine's vector width. Functions the clone calls should
// be inline so that they are compiled for its target too. GCC on x86-64 only (target_clones
// needs ifunc); elsewhere a plain function.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define CHOLSIM_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CHOLSIM_SIMD_CLONES
#endif

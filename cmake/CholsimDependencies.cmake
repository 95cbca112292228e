# Locates the Debian-packaged dependencies (scripts/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

# OpenBLAS gives BLAS, LAPACK and the thread-count control owned by linalg/blas_threads.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)

# oneTBB: the parallel loops and assembly-tree tasks (linalg/parallel_loops.hpp).
find_package(TBB REQUIRED)

# METIS (nested dissection orderings).
find_path(METIS_INCLUDE_DIR metis.h REQUIRED)
find_library(METIS_LIBRARY metis REQUIRED)
# IMPORTED so that the exported package refers to it by name (cholsimConfig recreates it).
add_library(cholsim_metis INTERFACE IMPORTED GLOBAL)
target_include_directories(cholsim_metis SYSTEM INTERFACE ${METIS_INCLUDE_DIR})
target_link_libraries(cholsim_metis INTERFACE ${METIS_LIBRARY})

if(CHOLSIM_BUILD_APPS OR CHOLSIM_BUILD_BENCHMARKS)
  # JSON: the apps' reports and scenes, the benchmarks' child processes and --json files.
  find_package(nlohmann_json REQUIRED)
endif()

if(CHOLSIM_BUILD_APPS)
  find_package(CLI11 REQUIRED)
  # VTK writes the simulation apps' .vtu/.pvd frames (apps/ only, DESIGN.md "Layers").
  find_package(VTK REQUIRED COMPONENTS CommonCore CommonDataModel IOXML)
endif()

if(CHOLSIM_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

if(CHOLSIM_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# CHOLMOD is a reference oracle only: tests/ and bench/ link it, libraries never do. So is
# SuiteSparse AMD (amd.h, same package), the reference of factor/analysis/minimum_degree.
if(CHOLSIM_BUILD_TESTS OR CHOLSIM_BUILD_BENCHMARKS)
  find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse REQUIRED)
  find_library(CHOLMOD_LIBRARY cholmod REQUIRED)
  find_library(SUITESPARSE_AMD_LIBRARY amd REQUIRED)
  find_library(SUITESPARSE_CONFIG_LIBRARY suitesparseconfig REQUIRED)
  add_library(cholsim_cholmod INTERFACE IMPORTED GLOBAL)
  target_include_directories(cholsim_cholmod SYSTEM INTERFACE ${CHOLMOD_INCLUDE_DIR})
  target_link_libraries(cholsim_cholmod INTERFACE ${CHOLMOD_LIBRARY} ${SUITESPARSE_AMD_LIBRARY}
    ${SUITESPARSE_CONFIG_LIBRARY})
endif()

# Ipopt (Debian coinor-libipopt-dev) is the reference of the QP back ends (tests/solvers/qp):
# tests/ and bench/ only, like CHOLMOD. Found through its pkg-config module `ipopt`.
if(CHOLSIM_BUILD_TESTS OR CHOLSIM_BUILD_BENCHMARKS)
  pkg_check_modules(IPOPT QUIET IMPORTED_TARGET ipopt)
  if(NOT IPOPT_FOUND)
    message(FATAL_ERROR "Ipopt (pkg-config module ipopt) not found: the QP tests compare against "
      "it. Run scripts/install-deps.sh (coinor-libipopt-dev) or configure with "
      "-DCHOLSIM_BUILD_TESTS=OFF -DCHOLSIM_BUILD_BENCHMARKS=OFF.")
  endif()
  add_library(cholsim_ipopt INTERFACE IMPORTED GLOBAL)
  target_link_libraries(cholsim_ipopt INTERFACE PkgConfig::IPOPT)
endif()

# MUMPS, sequential build (Debian libmumps-seq-dev), is the second reference peer, like CHOLMOD:
# tests/ and bench/ only. Its BLAS is the system libblas.so.3 — OpenBLAS here, the same library
# (and thread count) as ours. The benchmarks need it; the tests skip their MUMPS comparisons
# without it (CHOLSIM_HAVE_MUMPS undefined).
if(CHOLSIM_BUILD_TESTS OR CHOLSIM_BUILD_BENCHMARKS)
  find_path(MUMPS_INCLUDE_DIR dmumps_c.h)
  find_library(MUMPS_DMUMPS_LIBRARY dmumps_seq)
  find_library(MUMPS_COMMON_LIBRARY mumps_common_seq)
  find_library(MUMPS_PORD_LIBRARY pord_seq)
  find_library(MUMPS_MPISEQ_LIBRARY mpiseq_seq)
  if(MUMPS_INCLUDE_DIR AND MUMPS_DMUMPS_LIBRARY AND MUMPS_COMMON_LIBRARY AND MUMPS_PORD_LIBRARY
     AND MUMPS_MPISEQ_LIBRARY)
    add_library(cholsim_mumps INTERFACE IMPORTED GLOBAL)
    target_include_directories(cholsim_mumps SYSTEM INTERFACE ${MUMPS_INCLUDE_DIR})
    target_link_libraries(cholsim_mumps INTERFACE ${MUMPS_DMUMPS_LIBRARY} ${MUMPS_COMMON_LIBRARY}
      ${MUMPS_PORD_LIBRARY} ${MUMPS_MPISEQ_LIBRARY})
    target_compile_definitions(cholsim_mumps INTERFACE CHOLSIM_HAVE_MUMPS)
    message(STATUS "MUMPS (sequential): ${MUMPS_DMUMPS_LIBRARY} — tests and benchmarks compare against it")
  elseif(CHOLSIM_BUILD_BENCHMARKS)
    message(FATAL_ERROR "MUMPS (sequential) not found: the benchmarks compare against it. Install "
      "libmumps-seq-dev (scripts/install-deps.sh) or configure with -DCHOLSIM_BUILD_BENCHMARKS=OFF.")
  else()
    message(WARNING "MUMPS (sequential) not found: the tests' MUMPS comparisons will be skipped. "
      "Install libmumps-seq-dev (scripts/install-deps.sh).")
  endif()
endif()

# hypre (Debian libhypre-dev) is the algebraic multigrid baseline of bench_octree (issue 24):
# bench/ only. Debian builds it with MPI, so MPI (Open MPI, already a dependency of VTK's HDF5)
# comes with it.
if(CHOLSIM_BUILD_BENCHMARKS)
  find_path(HYPRE_INCLUDE_DIR HYPRE.h PATH_SUFFIXES hypre)
  find_library(HYPRE_LIBRARY HYPRE)
  find_package(MPI COMPONENTS CXX)
  if(NOT HYPRE_INCLUDE_DIR OR NOT HYPRE_LIBRARY OR NOT MPI_CXX_FOUND)
    message(FATAL_ERROR "hypre and MPI not found: bench_octree compares against BoomerAMG. Install "
      "libhypre-dev (scripts/install-deps.sh) or configure with -DCHOLSIM_BUILD_BENCHMARKS=OFF.")
  endif()
  add_library(cholsim_hypre INTERFACE IMPORTED GLOBAL)
  target_include_directories(cholsim_hypre SYSTEM INTERFACE ${HYPRE_INCLUDE_DIR})
  target_link_libraries(cholsim_hypre INTERFACE ${HYPRE_LIBRARY} MPI::MPI_CXX)
endif()

# cuSOLVER / cuBLAS for the GPU Schur system (factor/schur/schur_dense_backend_cusolver.cpp): host
# library calls only, so the toolkit's libraries suffice (no CUDA language needed).
set(CHOLSIM_HAVE_CUSOLVER OFF)
if(CHOLSIM_CUDA)
  find_package(CUDAToolkit)
  if(TARGET CUDA::cusolver AND TARGET CUDA::cublas AND TARGET CUDA::cudart)
    set(CHOLSIM_HAVE_CUSOLVER ON)
  endif()
endif()

# The GPU factorization (factor/gpu/, issue 22) has kernels of its own, so it needs nvcc: the
# CUDA language. Not in the fuzzing build (clang instruments everything; nvcc would not).
# Hopper (sm_90, the H100/H200 it is measured on) and Ampere by default.
set(CHOLSIM_HAVE_CUDA_KERNELS OFF)
if(CHOLSIM_HAVE_CUSOLVER AND CHOLSIM_NVCC AND NOT CHOLSIM_FUZZ)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  set(CMAKE_CUDA_COMPILER ${CHOLSIM_NVCC})
  enable_language(CUDA)
  set(CHOLSIM_HAVE_CUDA_KERNELS ON)
endif()

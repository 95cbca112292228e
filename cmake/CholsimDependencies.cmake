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

if(CHOLSIM_BUILD_APPS)
  find_package(CLI11 REQUIRED)
  find_package(nlohmann_json REQUIRED)
  # VTK writes the simulation apps' .vtu/.pvd frames (apps/ only, DESIGN.md "Layers").
  find_package(VTK REQUIRED COMPONENTS CommonCore CommonDataModel IOXML)
endif()

if(CHOLSIM_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

if(CHOLSIM_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# CHOLMOD is a reference oracle only: tests/ and bench/ link it, libraries never do.
if(CHOLSIM_BUILD_TESTS OR CHOLSIM_BUILD_BENCHMARKS)
  find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse REQUIRED)
  find_library(CHOLMOD_LIBRARY cholmod REQUIRED)
  find_library(SUITESPARSE_CONFIG_LIBRARY suitesparseconfig REQUIRED)
  add_library(cholsim_cholmod INTERFACE IMPORTED GLOBAL)
  target_include_directories(cholsim_cholmod SYSTEM INTERFACE ${CHOLMOD_INCLUDE_DIR})
  target_link_libraries(cholsim_cholmod INTERFACE ${CHOLMOD_LIBRARY} ${SUITESPARSE_CONFIG_LIBRARY})
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

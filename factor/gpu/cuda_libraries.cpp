#if CHOLSIM_HAVE_CUSOLVER
#include "factor/gpu/cuda_libraries.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace cholsim::factor::gpu {
namespace {

// The names the build linked against (CMake: the libraries' sonames), so that the versions
// opened are the ones whose headers were compiled here. The search is the loader's: the
// executable's run path (it holds CUDA's library folder, cudart being linked), LD_LIBRARY_PATH,
// the system's cache.
void* open_library(const char* soname) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* reason = dlerror();
    throw std::runtime_error(std::string("cannot open ") + soname + " (" + (reason ? reason : "no reason given") +
                             ")");
  }
  return handle;
}

template <typename Function>
void find(void* library, const char* soname, const char* symbol, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  if (!function) throw std::runtime_error(std::string(soname) + " has no function " + symbol);
}

// A member's symbol: its name after the headers' macros (cublasDgemm → "cublasDgemm_v2").
#define CHOLSIM_SYMBOL_NAME(name) CHOLSIM_STRINGIFY(name)
#define CHOLSIM_STRINGIFY(text) #text
#define CHOLSIM_FIND(library, soname, table, name) find(library, soname, CHOLSIM_SYMBOL_NAME(name), table.name)

CudaLibraries open_libraries() {
  CudaLibraries table;
  void* blas = open_library(CHOLSIM_CUBLAS_SONAME);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasCreate);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasDestroy);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasSetStream);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasDgemm);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasDsyrk);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasDsyrkx);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasDtrsm);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasDgeam);
  CHOLSIM_FIND(blas, CHOLSIM_CUBLAS_SONAME, table, cublasDdgmm);
  void* solver = open_library(CHOLSIM_CUSOLVER_SONAME);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnCreate);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnDestroy);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnSetStream);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnDpotrf_bufferSize);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnDpotrf);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnDpotrs);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnXtrtri_bufferSize);
  CHOLSIM_FIND(solver, CHOLSIM_CUSOLVER_SONAME, table, cusolverDnXtrtri);
  return table;  // the libraries stay open for the process's life
}

}  // namespace

const CudaLibraries& cuda_libraries() {
  // A failure is not cached as a table: the static's initialization throws, and C++ retries it
  // on the next call, which then reports the same reason.
  static const CudaLibraries table = open_libraries();
  return table;
}

}  // namespace cholsim::factor::gpu
#endif

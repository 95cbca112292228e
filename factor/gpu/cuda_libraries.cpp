#if CHOLSIM_HAVE_CUSOLVER
#include "factor/gpu/cuda_libraries.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace cholsim::factor::gpu {
namespace {

// By soname, the one of the libraries whose headers were compiled here (CMake reads it from the
// toolkit's files). The search is the loader's: the executable's run path (it holds CUDA's
// library folder, cudart being linked), LD_LIBRARY_PATH, the system's cache.
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

// A member's symbol: its name after the headers' macros (cublasDgemm → "cublasDgemm_v2"); the
// lists' X(name) hands the name on already expanded.
#define CHOLSIM_STRINGIFY(text) #text
#define CHOLSIM_SYMBOL_NAME(name) CHOLSIM_STRINGIFY(name)
#define CHOLSIM_FIND(name) find(library, soname, CHOLSIM_SYMBOL_NAME(name), table.name);

CudaLibraries open_libraries() {
  CudaLibraries table;
  {
    const char* soname = CHOLSIM_CUBLAS_SONAME;
    void* library = open_library(soname);
    CHOLSIM_CUBLAS_FUNCTIONS(CHOLSIM_FIND)
  }
  {
    const char* soname = CHOLSIM_CUSOLVER_SONAME;
    void* library = open_library(soname);
    CHOLSIM_CUSOLVER_FUNCTIONS(CHOLSIM_FIND)
  }
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

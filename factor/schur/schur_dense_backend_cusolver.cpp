// The GPU backend of SchurSystem, as in seed 004 §4.4: S is moved to device memory once ("at
// the start of simulation"); every iteration copies it device to device, adds ΔS there
// (cuBLAS geam for dense updates, dgmm + syrkx for W·C·Wᵀ), refactors with cuSOLVER potrf
// and solves with potrs. Host-side library calls only — no device code — so the build needs
// the CUDA toolkit's libraries, not nvcc (CHOLSIM_HAVE_CUSOLVER, set by CMake).
#include "factor/schur/schur_dense_backend.hpp"

#if CHOLSIM_HAVE_CUSOLVER
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "factor/gpu/cuda_libraries.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>
#endif

namespace cholsim::factor {

#if CHOLSIM_HAVE_CUSOLVER
namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("SchurSystem (GPU): ") + call + ": " + cudaGetErrorString(status));
  }
}
void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("SchurSystem (GPU): ") + call + " failed with status " +
                             std::to_string(static_cast<int>(status)));
  }
}
void check(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("SchurSystem (GPU): ") + call + " failed with status " +
                             std::to_string(static_cast<int>(status)));
  }
}

// cuBLAS and cuSOLVER, opened on first use (factor/gpu/cuda_libraries.hpp).
const gpu::CudaLibraries& libraries() {
  try {
    return gpu::cuda_libraries();
  } catch (const std::runtime_error& failure) {
    throw std::runtime_error(std::string("SchurSystem (GPU): ") + failure.what());
  }
}

/// Device memory that grows on demand and is freed with its owner.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  T* reserve(std::size_t count) {
    if (count > capacity_) {
      check(cudaFree(data_), "cudaFree");
      data_ = nullptr;
      check(cudaMalloc(reinterpret_cast<void**>(&data_), std::max<std::size_t>(count, 1) * sizeof(T)), "cudaMalloc");
      capacity_ = count;
    }
    return data_;
  }
  [[nodiscard]] T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class GpuSchurBackend final : public SchurDenseBackend {
 public:
  explicit GpuSchurBackend(linalg::ConstDenseView s) : m_(s.rows), ld_(std::max<Index>(1, s.rows)) {
    check(cuda_.cublasCreate(&blas_), "cublasCreate");
    check(cuda_.cusolverDnCreate(&solver_), "cusolverDnCreate");
    const auto entries = static_cast<std::size_t>(ld_) * static_cast<std::size_t>(m_);
    base_.reserve(entries);
    work_.reserve(entries);
    info_.reserve(1);
    upload(s, base_.get());
    int scratch = 0;
    check(cuda_.cusolverDnDpotrf_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, m_, work_.get(), ld_, &scratch),
          "cusolverDnDpotrf_bufferSize");
    scratch_entries_ = scratch;
    scratch_.reserve(static_cast<std::size_t>(scratch));
  }
  ~GpuSchurBackend() override {
    cuda_.cusolverDnDestroy(solver_);
    cuda_.cublasDestroy(blas_);
  }
  GpuSchurBackend(const GpuSchurBackend&) = delete;
  GpuSchurBackend& operator=(const GpuSchurBackend&) = delete;

  void reset() override {
    check(cudaMemcpy(work_.get(), base_.get(), static_cast<std::size_t>(ld_) * m_ * sizeof(double),
                     cudaMemcpyDeviceToDevice),
          "cudaMemcpy (S)");
  }

  void add_dense(linalg::ConstDenseView delta) override {
    double* staged = staging_.reserve(static_cast<std::size_t>(ld_) * m_);
    upload(delta, staged);
    const double one = 1.0;
    check(cuda_.cublasDgeam(blas_, CUBLAS_OP_N, CUBLAS_OP_N, m_, m_, &one, work_.get(), ld_, &one, staged, ld_,
                            work_.get(), ld_),
          "cublasDgeam");
  }

  void add_sparse(const linalg::SymmetricCscMatrix& delta) override {
    linalg::DenseMatrix dense(m_, m_);
    const linalg::CscMatrix& l = delta.lower;
    for (Index c = 0; c < l.cols; ++c) {
      for (linalg::Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) dense(l.row_idx[p], c) += l.values[p];
    }
    add_dense(dense.view());
  }

  void add_low_rank(const linalg::CscMatrix& w, std::span<const double> c) override {
    const Index p = w.cols;
    if (p == 0 || m_ == 0) return;
    linalg::DenseMatrix dense_w(m_, p);
    for (Index q = 0; q < p; ++q) {
      for (linalg::Offset e = w.col_ptr[q]; e < w.col_ptr[q + 1]; ++e) dense_w(w.row_idx[e], q) += w.values[e];
    }
    double* device_w = low_rank_.reserve(static_cast<std::size_t>(m_) * p);
    double* device_cw = scaled_.reserve(static_cast<std::size_t>(m_) * p);
    double* device_c = weights_.reserve(static_cast<std::size_t>(p));
    check(cudaMemcpy(device_w, dense_w.data(), static_cast<std::size_t>(m_) * p * sizeof(double),
                     cudaMemcpyHostToDevice),
          "cudaMemcpy (W)");
    check(cudaMemcpy(device_c, c.data(), static_cast<std::size_t>(p) * sizeof(double), cudaMemcpyHostToDevice),
          "cudaMemcpy (C)");
    // W·C·Wᵀ = W·(W·C)ᵀ: syrkx writes the lower triangle of a product known to be symmetric.
    check(cuda_.cublasDdgmm(blas_, CUBLAS_SIDE_RIGHT, m_, p, device_w, m_, device_c, 1, device_cw, m_), "cublasDdgmm");
    const double one = 1.0;
    check(cuda_.cublasDsyrkx(blas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m_, p, &one, device_w, m_, device_cw, m_,
                             &one, work_.get(), ld_),
          "cublasDsyrkx");
  }

  int factor() override {
    check(cuda_.cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, m_, work_.get(), ld_, scratch_.get(),
                                 scratch_entries_, info_.get()),
          "cusolverDnDpotrf");
    int info = 0;
    check(cudaMemcpy(&info, info_.get(), sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy (info)");
    return info;
  }

  Index first_non_finite_pivot() override {
    std::vector<double> pivots(static_cast<std::size_t>(m_));
    if (m_ > 0) {
      check(cudaMemcpy2D(pivots.data(), sizeof(double), work_.get(), (ld_ + 1) * sizeof(double), sizeof(double),
                         m_, cudaMemcpyDeviceToHost),
            "cudaMemcpy2D (pivots)");
    }
    for (Index i = 0; i < m_; ++i) {
      if (!std::isfinite(pivots[i])) return i;
    }
    return -1;
  }

  void solve(linalg::DenseView b) override {
    if (m_ == 0 || b.cols == 0) return;
    double* rhs = rhs_.reserve(static_cast<std::size_t>(m_) * b.cols);
    check(cudaMemcpy2D(rhs, m_ * sizeof(double), b.data, b.ld * sizeof(double), m_ * sizeof(double), b.cols,
                       cudaMemcpyHostToDevice),
          "cudaMemcpy2D (B)");
    check(cuda_.cusolverDnDpotrs(solver_, CUBLAS_FILL_MODE_LOWER, m_, b.cols, work_.get(), ld_, rhs, m_, info_.get()),
          "cusolverDnDpotrs");
    check(cudaMemcpy2D(b.data, b.ld * sizeof(double), rhs, m_ * sizeof(double), m_ * sizeof(double), b.cols,
                       cudaMemcpyDeviceToHost),
          "cudaMemcpy2D (X)");
  }

 private:
  // A host m×m block with leading dimension src.ld into device memory with leading dimension ld_.
  void upload(linalg::ConstDenseView source, double* target) const {
    if (m_ == 0) return;
    check(cudaMemcpy2D(target, ld_ * sizeof(double), source.data, source.ld * sizeof(double), m_ * sizeof(double),
                       m_, cudaMemcpyHostToDevice),
          "cudaMemcpy2D (S)");
  }

  const gpu::CudaLibraries& cuda_ = libraries();
  Index m_;
  Index ld_;
  cublasHandle_t blas_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  DeviceBuffer<double> base_;      ///< S
  DeviceBuffer<double> work_;      ///< S + ΔS, after factor() its Cholesky factor
  DeviceBuffer<double> staging_;   ///< a dense update on its way in
  DeviceBuffer<double> low_rank_;  ///< W
  DeviceBuffer<double> scaled_;    ///< W·C
  DeviceBuffer<double> weights_;   ///< diag(C)
  DeviceBuffer<double> rhs_;
  DeviceBuffer<double> scratch_;
  DeviceBuffer<int> info_;
  int scratch_entries_ = 0;
};

}  // namespace

std::unique_ptr<SchurDenseBackend> make_gpu_schur_backend(linalg::ConstDenseView schur_complement,
                                                          std::string& why_not) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    why_not = std::string("no CUDA device (") +
              (status != cudaSuccess ? cudaGetErrorString(status) : "none found") + "); using the CPU";
    (void)cudaGetLastError();  // clear the error so later CUDA users do not inherit it
    return nullptr;
  }
  return std::make_unique<GpuSchurBackend>(schur_complement);
}

#else

std::unique_ptr<SchurDenseBackend> make_gpu_schur_backend(linalg::ConstDenseView /*schur_complement*/,
                                                          std::string& why_not) {
  why_not = "GPU Schur solves are not available in this build (built without cuSOLVER: CHOLSIM_CUDA off "
            "or no CUDA toolkit); using the CPU";
  return nullptr;
}

#endif

}  // namespace cholsim::factor

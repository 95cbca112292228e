#include "factor/schur/schur_system.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "factor/schur/schur_dense_backend.hpp"
#include "linalg/blas_threads.hpp"

namespace cholsim::factor {
namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("SchurSystem: " + message);
}

}  // namespace

std::string_view to_string(SchurDevice device) { return device == SchurDevice::gpu ? "gpu" : "cpu"; }

SchurDevice parse_schur_device(std::string_view name) {
  if (name == "cpu") return SchurDevice::cpu;
  if (name == "gpu") return SchurDevice::gpu;
  throw std::invalid_argument("unknown Schur device '" + std::string(name) + "'; expected cpu or gpu");
}

SchurSystem::SchurSystem(linalg::ConstDenseView schur_complement, std::span<const Index> user_indices,
                         SchurSystemOptions options)
    : size_(schur_complement.rows), user_indices_(user_indices.begin(), user_indices.end()), options_(options) {
  require(schur_complement.cols == size_, "the Schur complement must be square");
  require(user_indices_.empty() || static_cast<Index>(user_indices_.size()) == size_,
          "user_indices must be empty or hold one index per row of S");
  if (options_.device == SchurDevice::gpu) {
    backend_ = make_gpu_schur_backend(schur_complement, device_note_);
    if (backend_) device_ = SchurDevice::gpu;
  }
  if (!backend_) backend_ = make_cpu_schur_backend(schur_complement, options_.precision);
  clear_updates();
}

SchurSystem::~SchurSystem() = default;
SchurSystem::SchurSystem(SchurSystem&&) noexcept = default;
SchurSystem& SchurSystem::operator=(SchurSystem&&) noexcept = default;

void SchurSystem::clear_updates() {
  backend_->reset();
  holds_factor_ = false;
  status_ = {};
}

void SchurSystem::require_assembled(const char* operation) const {
  if (holds_factor_) {
    throw std::logic_error(std::string("SchurSystem::") + operation +
                           ": the system holds a factorization; call clear_updates() first");
  }
}

void SchurSystem::add(linalg::ConstDenseView delta) {
  require_assembled("add");
  const Index m = size();
  require(delta.rows == m && delta.cols == m, "dense update is " + std::to_string(delta.rows) + "x" +
                                                  std::to_string(delta.cols) + ", S is " + std::to_string(m) +
                                                  "x" + std::to_string(m));
  backend_->add_dense(delta);
}

void SchurSystem::add(const linalg::SymmetricCscMatrix& delta) {
  require_assembled("add");
  require(delta.size() == size(), "sparse update has size " + std::to_string(delta.size()) + ", S has " +
                                      std::to_string(size()));
  linalg::check_valid(delta);
  require(delta.lower.has_values(), "sparse update has no values");
  backend_->add_sparse(delta);
}

void SchurSystem::add_low_rank(const linalg::CscMatrix& w, std::span<const double> c) {
  require_assembled("add_low_rank");
  require(w.rows == size(), "W has " + std::to_string(w.rows) + " rows, S has " + std::to_string(size()));
  require(static_cast<Index>(c.size()) == w.cols,
          "C has " + std::to_string(c.size()) + " entries, W has " + std::to_string(w.cols) + " columns");
  linalg::check_valid(w);
  require(w.has_values(), "W has no values");
  backend_->add_low_rank(w, c);
}

const FactorStatus& SchurSystem::refactor() {
  require_assembled("refactor");
  std::optional<linalg::ScopedBlasThreads> threads;
  if (options_.threads > 0) threads.emplace(options_.threads);
  holds_factor_ = true;
  const int info = backend_->factor();
  const Index non_finite = info == 0 ? backend_->first_non_finite_pivot() : -1;
  if (info == 0 && non_finite == -1) {
    status_ = {FactorStatusCode::ok, -1, -1, 0.0, {}};
    return status_;
  }
  const Index row = info != 0 ? info - 1 : non_finite;
  status_ = {};
  status_.code = info != 0 ? FactorStatusCode::not_positive_definite : FactorStatusCode::non_finite_value;
  status_.column = user_indices_.empty() ? row : user_indices_[row];
  if (info == 0) status_.row = status_.column;  // the row whose pivot the NaN or Inf reached
  status_.message = "Schur system S + dS: pivot of Schur row " + std::to_string(row) +
                    (user_indices_.empty() ? std::string() : " (column " + std::to_string(status_.column) + ")") +
                    (info != 0 ? " is not positive (not positive definite)" : " is not finite (NaN or Inf in S + dS)");
  return status_;
}

void SchurSystem::solve(linalg::DenseView b) const {
  if (!status_.ok()) {
    throw std::logic_error("SchurSystem::solve: no successful refactor() (" +
                           (status_.message.empty() ? std::string("not factored") : status_.message) + ")");
  }
  require(b.rows == size(), "right-hand side has " + std::to_string(b.rows) + " rows, S has " +
                                std::to_string(size()));
  std::optional<linalg::ScopedBlasThreads> threads;
  if (options_.threads > 0) threads.emplace(options_.threads);
  backend_->solve(b);
}

void SchurSystem::solve(std::span<double> b) const {
  const auto rows = static_cast<Index>(b.size());
  solve(linalg::DenseView{b.data(), rows, 1, std::max<Index>(1, rows)});
}

}  // namespace cholsim::factor

#include "factor/schur/schur_complement.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cholsim::factor {

SchurComplementFactor::SchurComplementFactor(std::shared_ptr<const Symbolic> symbolic)
    : factor_(std::move(symbolic)) {}

const FactorStatus& SchurComplementFactor::factorize(const linalg::SymmetricCscMatrix& a,
                                                     const FactorOptions& options) {
  // The multifrontal step stops at the Schur supernode by itself (multifrontal.cpp).
  return factor_.factorize(a, options);
}

const FactorStatus& SchurComplementFactor::refactorize(const ChangedEntries& changed,
                                                       const linalg::SymmetricCscMatrix& a,
                                                       const FactorOptions& options) {
  return factor_.refactorize(changed, a, options);
}

std::span<const Index> SchurComplementFactor::schur_set() const {
  return symbolic().permutation().subspan(static_cast<std::size_t>(eliminated_size()));
}

linalg::ConstDenseView SchurComplementFactor::schur_complement() const {
  factor_.require_factored("schur_complement");
  const Index m = schur_size();
  if (m == 0) return {nullptr, 0, 0, 1};
  const Index s = symbolic().supernode_count() - 1;  // the Schur supernode: k = m = rows
  return {factor_.values_.data() + symbolic().value_offset(s), m, m, m};
}

linalg::DenseMatrix SchurComplementFactor::schur_complement_symmetric() const {
  const linalg::ConstDenseView s = schur_complement();
  linalg::DenseMatrix full(s.rows, s.cols);
  for (Index j = 0; j < s.cols; ++j) {
    for (Index i = j; i < s.rows; ++i) full(i, j) = full(j, i) = s(i, j);
  }
  return full;
}

void SchurComplementFactor::require_shape(const char* operation, linalg::ConstDenseView v,
                                          const char* name) const {
  if (v.rows != size()) {
    throw std::invalid_argument(std::string("SchurComplementFactor::") + operation + ": " + name + " has " +
                                std::to_string(v.rows) + " rows, the matrix has " + std::to_string(size()));
  }
}

void SchurComplementFactor::forward(linalg::ConstDenseView b, linalg::DenseView y, int threads) const {
  factor_.require_factored("forward");
  require_shape("forward", b, "B");
  require_shape("forward", y, "Y");
  if (y.cols != b.cols) throw std::invalid_argument("SchurComplementFactor::forward: B and Y differ in columns");
  factor_.forward_substitution(b, y, threads);
}

void SchurComplementFactor::backward(linalg::DenseView y, linalg::DenseView x, int threads) const {
  factor_.require_factored("backward");
  require_shape("backward", y, "Y");
  require_shape("backward", x, "X");
  if (y.cols != x.cols) throw std::invalid_argument("SchurComplementFactor::backward: Y and X differ in columns");
  factor_.backward_substitution(y, x, threads);
}

void SchurComplementFactor::backward_from_schur(linalg::ConstDenseView x2, linalg::DenseView x, int threads) const {
  factor_.require_factored("backward_from_schur");
  require_shape("backward_from_schur", x, "X");
  if (x2.rows != schur_size() || x2.cols != x.cols) {
    throw std::invalid_argument("SchurComplementFactor::backward_from_schur: X2 is " + std::to_string(x2.rows) + "x" +
                                std::to_string(x2.cols) + ", expected " + std::to_string(schur_size()) + "x" +
                                std::to_string(x.cols));
  }
  factor_.backward_substitution_from_schur(x2, x, threads);
}

void SchurComplementFactor::solve(const SchurSystem& schur, linalg::DenseView b) const {
  if (schur.size() != schur_size()) {
    throw std::invalid_argument("SchurComplementFactor::solve: the Schur system has size " +
                                std::to_string(schur.size()) + ", the Schur set " + std::to_string(schur_size()));
  }
  linalg::DenseMatrix y(size(), b.cols);
  forward(b, y.view());
  schur.solve(schur_rows(y.view()));
  backward(y.view(), b);
}

void SchurComplementFactor::solve(const SchurSystem& schur, std::span<double> b) const {
  const auto rows = static_cast<Index>(b.size());
  solve(schur, linalg::DenseView{b.data(), rows, 1, std::max<Index>(1, rows)});
}

}  // namespace cholsim::factor

#pragma once
// Column-major dense matrices and non-owning views, the operands of the BLAS wrappers.
#include <cassert>
#include <cstddef>
#include <vector>

#include "linalg/index_types.hpp"

namespace cholsim::linalg {

/// Non-owning view of a column-major block: element (i, j) lives at data[i + j·ld].
template <typename T>
struct BasicDenseView {
  T* data = nullptr;
  Index rows = 0;
  Index cols = 0;
  Index ld = 1;  ///< leading dimension, ≥ max(1, rows)

  T& operator()(Index i, Index j) const {
    assert(i >= 0 && i < rows && j >= 0 && j < cols);
    return data[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * static_cast<std::size_t>(ld)];
  }
  /// The sub-block of `r` rows and `c` columns starting at (i, j).
  BasicDenseView block(Index i, Index j, Index r, Index c) const {
    assert(i >= 0 && j >= 0 && i + r <= rows && j + c <= cols);
    // An empty matrix has no storage: its blocks are empty too, and an offset from a null
    // pointer is undefined even when nothing is read through it.
    if (data == nullptr) return {nullptr, r, c, ld};
    return {data + static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * static_cast<std::size_t>(ld),
            r, c, ld};
  }
  operator BasicDenseView<const T>() const { return {data, rows, cols, ld}; }  // NOLINT
};

using DenseView = BasicDenseView<double>;
using ConstDenseView = BasicDenseView<const double>;

/// Owning column-major dense matrix.
class DenseMatrix {
 public:
  DenseMatrix() = default;
  DenseMatrix(Index rows, Index cols, double fill = 0.0)
      : rows_(rows), cols_(cols),
        data_(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), fill) {}

  [[nodiscard]] Index rows() const { return rows_; }
  [[nodiscard]] Index cols() const { return cols_; }
  double& operator()(Index i, Index j) { return view()(i, j); }
  double operator()(Index i, Index j) const { return view()(i, j); }
  [[nodiscard]] double* data() { return data_.data(); }
  [[nodiscard]] const double* data() const { return data_.data(); }
  [[nodiscard]] DenseView view() { return {data_.data(), rows_, cols_, rows_ > 0 ? rows_ : 1}; }
  [[nodiscard]] ConstDenseView view() const {
    return {data_.data(), rows_, cols_, rows_ > 0 ? rows_ : 1};
  }
  [[nodiscard]] std::vector<double>& storage() { return data_; }
  [[nodiscard]] const std::vector<double>& storage() const { return data_; }

 private:
  Index rows_ = 0;
  Index cols_ = 0;
  std::vector<double> data_;
};

}  // namespace cholsim::linalg

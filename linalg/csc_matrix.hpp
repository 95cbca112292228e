#pragma once
// Compressed sparse column matrices: general, and symmetric stored as the lower triangle.
//
// Conventions used throughout cholsim:
//  * row indices within a column are strictly increasing (sorted, no duplicates);
//  * a SymmetricCscMatrix stores only entries with row >= column;
//  * a permutation `perm` maps new positions to old ones: perm[new] = old
//    (the convention of CHOLMOD and METIS), and inverse_perm[old] = new.
#include <span>
#include <string>
#include <vector>

#include "linalg/dense_matrix.hpp"
#include "linalg/index_types.hpp"

namespace cholsim::linalg {

/// Entries (row, col, value) in any order; duplicates are allowed and are summed on conversion.
struct Triplets {
  std::vector<Index> rows;
  std::vector<Index> cols;
  std::vector<double> values;

  void add(Index row, Index col, double value) {
    rows.push_back(row);
    cols.push_back(col);
    values.push_back(value);
  }
  void reserve(std::size_t count) {
    rows.reserve(count);
    cols.reserve(count);
    values.reserve(count);
  }
  [[nodiscard]] std::size_t size() const { return values.size(); }
};

/// General sparse matrix in compressed sparse column form.
struct CscMatrix {
  Index rows = 0;
  Index cols = 0;
  std::vector<Offset> col_ptr{0};  ///< size cols + 1
  std::vector<Index> row_idx;      ///< size nnz, sorted within each column
  std::vector<double> values;      ///< size nnz (may be empty for a pattern-only matrix)

  [[nodiscard]] Offset nnz() const { return col_ptr.empty() ? 0 : col_ptr.back(); }
  [[nodiscard]] bool has_values() const { return values.size() == row_idx.size(); }
};

/// Symmetric matrix stored as its lower triangle (row >= col) in CSC form.
struct SymmetricCscMatrix {
  CscMatrix lower;

  [[nodiscard]] Index size() const { return lower.cols; }
  [[nodiscard]] Offset nnz_lower() const { return lower.nnz(); }
};

/// What to do with an entry above the diagonal when building a lower-triangle matrix.
enum class UpperEntries {
  reject,     ///< throw std::invalid_argument naming the entry
  transpose,  ///< treat (i, j) with i < j as (j, i) — for inputs that give either triangle
  drop,       ///< ignore — for inputs that give both triangles of a symmetric matrix
};

/// Builds a CSC matrix from triplets, summing duplicates; throws on out-of-range indices.
CscMatrix csc_from_triplets(Index rows, Index cols, const Triplets& triplets);

/// Builds the lower triangle of a symmetric matrix from triplets, summing duplicates.
SymmetricCscMatrix symmetric_from_triplets(Index n, const Triplets& triplets,
                                           UpperEntries upper = UpperEntries::reject);

/// Returns Aᵀ (pattern and values).
CscMatrix transpose(const CscMatrix& a);

/// Expands lower storage into a general matrix holding both triangles.
CscMatrix to_full(const SymmetricCscMatrix& a);

/// The dense (column-major) copy of `a`, duplicates summed — for checking small problems
/// against dense LAPACK; its rows × cols doubles are allocated, so keep it to small matrices.
DenseMatrix to_dense(const CscMatrix& a);
/// The dense copy of the symmetric matrix, both triangles filled.
DenseMatrix to_dense(const SymmetricCscMatrix& a);

/// Checks the structural invariants above; throws std::invalid_argument describing the
/// first violation (column, position) when `a` is malformed.
void check_valid(const CscMatrix& a);
void check_valid(const SymmetricCscMatrix& a);

/// y = A·x for a general matrix.
void multiply(const CscMatrix& a, std::span<const double> x, std::span<double> y);

/// y = A·x with A symmetric in lower storage: both triangles are applied.
void symmetric_multiply(const SymmetricCscMatrix& a, std::span<const double> x,
                        std::span<double> y);

/// Y = A·X for `count` column-major vectors (leading dimension n) at once.
void symmetric_multiply(const SymmetricCscMatrix& a, std::span<const double> x,
                        std::span<double> y, Index count);

/// Returns P·A·Pᵀ in lower storage where perm[new] = old; values follow when present.
SymmetricCscMatrix permute_symmetric(const SymmetricCscMatrix& a, std::span<const Index> perm);

/// Returns the inverse of a permutation; throws if `perm` is not a permutation of 0..n-1.
std::vector<Index> invert_permutation(std::span<const Index> perm);

/// Throws std::invalid_argument with `what` in the message if perm is not a permutation of 0..n-1.
void check_permutation(std::span<const Index> perm, Index n, const std::string& what);

}  // namespace cholsim::linalg

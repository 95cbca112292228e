#include "linalg/csc_matrix.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace cholsim::linalg {
namespace {

std::string entry_name(Index row, Index col) {
  return "(" + std::to_string(row) + ", " + std::to_string(col) + ")";
}

void check_triplet_sizes(const Triplets& t) {
  if (t.rows.size() != t.cols.size() || t.rows.size() != t.values.size()) {
    throw std::invalid_argument("triplets: rows, cols and values have different lengths");
  }
}

// Two-pass counting sort into columns followed by an in-column sort and duplicate merge.
// Works for any entry order; cost O(nnz + n) plus the in-column sorts.
CscMatrix compress(Index rows, Index cols, std::span<const Index> row_of,
                   std::span<const Index> col_of, std::span<const double> value_of) {
  CscMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.col_ptr.assign(static_cast<std::size_t>(cols) + 1, 0);
  for (Index c : col_of) ++a.col_ptr[static_cast<std::size_t>(c) + 1];
  std::partial_sum(a.col_ptr.begin(), a.col_ptr.end(), a.col_ptr.begin());

  const auto count = row_of.size();
  std::vector<std::pair<Index, double>> slots(count);
  std::vector<Offset> next(a.col_ptr.begin(), a.col_ptr.end() - 1);
  for (std::size_t k = 0; k < count; ++k) {
    slots[static_cast<std::size_t>(next[static_cast<std::size_t>(col_of[k])]++)] = {row_of[k],
                                                                                      value_of[k]};
  }

  a.row_idx.reserve(count);
  a.values.reserve(count);
  Offset write = 0;
  for (Index c = 0; c < cols; ++c) {
    const auto begin = slots.begin() + a.col_ptr[static_cast<std::size_t>(c)];
    const auto end = slots.begin() + a.col_ptr[static_cast<std::size_t>(c) + 1];
    std::sort(begin, end, [](const auto& x, const auto& y) { return x.first < y.first; });
    a.col_ptr[static_cast<std::size_t>(c)] = write;
    for (auto it = begin; it != end; ++it) {
      if (write > a.col_ptr[static_cast<std::size_t>(c)] && a.row_idx.back() == it->first) {
        a.values.back() += it->second;
      } else {
        a.row_idx.push_back(it->first);
        a.values.push_back(it->second);
        ++write;
      }
    }
  }
  a.col_ptr[static_cast<std::size_t>(cols)] = write;
  return a;
}

}  // namespace

CscMatrix csc_from_triplets(Index rows, Index cols, const Triplets& t) {
  check_triplet_sizes(t);
  if (rows < 0 || cols < 0) throw std::invalid_argument("csc_from_triplets: negative size");
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t.rows[k] < 0 || t.rows[k] >= rows || t.cols[k] < 0 || t.cols[k] >= cols) {
      throw std::invalid_argument("csc_from_triplets: entry " + std::to_string(k) + " at " +
                                  entry_name(t.rows[k], t.cols[k]) + " is outside a " +
                                  std::to_string(rows) + "x" + std::to_string(cols) + " matrix");
    }
  }
  return compress(rows, cols, t.rows, t.cols, t.values);
}

SymmetricCscMatrix symmetric_from_triplets(Index n, const Triplets& t, UpperEntries upper) {
  check_triplet_sizes(t);
  if (n < 0) throw std::invalid_argument("symmetric_from_triplets: negative size");
  std::vector<Index> rows;
  std::vector<Index> cols;
  std::vector<double> values;
  rows.reserve(t.size());
  cols.reserve(t.size());
  values.reserve(t.size());
  for (std::size_t k = 0; k < t.size(); ++k) {
    Index i = t.rows[k];
    Index j = t.cols[k];
    if (i < 0 || i >= n || j < 0 || j >= n) {
      throw std::invalid_argument("symmetric_from_triplets: entry " + std::to_string(k) + " at " +
                                  entry_name(i, j) + " is outside a " + std::to_string(n) + "x" +
                                  std::to_string(n) + " matrix");
    }
    if (i < j) {
      switch (upper) {
        case UpperEntries::reject:
          throw std::invalid_argument("symmetric_from_triplets: entry " + std::to_string(k) +
                                      " at " + entry_name(i, j) +
                                      " is above the diagonal; lower triangle expected");
        case UpperEntries::drop:
          continue;
        case UpperEntries::transpose:
          std::swap(i, j);
          break;
      }
    }
    rows.push_back(i);
    cols.push_back(j);
    values.push_back(t.values[k]);
  }
  return SymmetricCscMatrix{compress(n, n, rows, cols, values)};
}

CscMatrix transpose(const CscMatrix& a) {
  CscMatrix t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.col_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  for (Index r : a.row_idx) ++t.col_ptr[static_cast<std::size_t>(r) + 1];
  std::partial_sum(t.col_ptr.begin(), t.col_ptr.end(), t.col_ptr.begin());
  t.row_idx.resize(a.row_idx.size());
  const bool with_values = a.has_values() && !a.values.empty();
  if (with_values) t.values.resize(a.values.size());
  std::vector<Offset> next(t.col_ptr.begin(), t.col_ptr.end() - 1);
  // Visiting columns in increasing order keeps the rows of Aᵀ sorted.
  for (Index c = 0; c < a.cols; ++c) {
    for (Offset p = a.col_ptr[static_cast<std::size_t>(c)];
         p < a.col_ptr[static_cast<std::size_t>(c) + 1]; ++p) {
      const Offset q = next[static_cast<std::size_t>(a.row_idx[static_cast<std::size_t>(p)])]++;
      t.row_idx[static_cast<std::size_t>(q)] = c;
      if (with_values) t.values[static_cast<std::size_t>(q)] = a.values[static_cast<std::size_t>(p)];
    }
  }
  return t;
}

CscMatrix to_full(const SymmetricCscMatrix& a) {
  const CscMatrix& l = a.lower;
  Triplets t;
  t.reserve(static_cast<std::size_t>(2 * l.nnz()));
  const bool with_values = l.has_values() && !l.values.empty();
  for (Index c = 0; c < l.cols; ++c) {
    for (Offset p = l.col_ptr[static_cast<std::size_t>(c)];
         p < l.col_ptr[static_cast<std::size_t>(c) + 1]; ++p) {
      const Index r = l.row_idx[static_cast<std::size_t>(p)];
      const double v = with_values ? l.values[static_cast<std::size_t>(p)] : 0.0;
      t.add(r, c, v);
      if (r != c) t.add(c, r, v);
    }
  }
  CscMatrix full = csc_from_triplets(l.rows, l.cols, t);
  if (!with_values) full.values.clear();
  return full;
}

DenseMatrix to_dense(const CscMatrix& a) {
  if (!a.has_values()) throw std::invalid_argument("to_dense: the matrix has a pattern but no values");
  DenseMatrix result(a.rows, a.cols);
  for (Index c = 0; c < a.cols; ++c) {
    for (Offset p = a.col_ptr[static_cast<std::size_t>(c)]; p < a.col_ptr[static_cast<std::size_t>(c) + 1]; ++p) {
      result(a.row_idx[static_cast<std::size_t>(p)], c) += a.values[static_cast<std::size_t>(p)];
    }
  }
  return result;
}

DenseMatrix to_dense(const SymmetricCscMatrix& a) { return to_dense(to_full(a)); }

void check_valid(const CscMatrix& a) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("invalid CSC matrix: " + what); };
  if (a.rows < 0 || a.cols < 0) fail("negative dimensions");
  if (a.col_ptr.size() != static_cast<std::size_t>(a.cols) + 1) fail("col_ptr has wrong length");
  if (a.col_ptr.front() != 0) fail("col_ptr[0] != 0");
  if (static_cast<std::size_t>(a.col_ptr.back()) != a.row_idx.size()) {
    fail("col_ptr[cols] != number of row indices");
  }
  if (!a.values.empty() && a.values.size() != a.row_idx.size()) fail("values has wrong length");
  for (Index c = 0; c < a.cols; ++c) {
    const Offset begin = a.col_ptr[static_cast<std::size_t>(c)];
    const Offset end = a.col_ptr[static_cast<std::size_t>(c) + 1];
    if (end < begin) fail("col_ptr decreases at column " + std::to_string(c));
    for (Offset p = begin; p < end; ++p) {
      const Index r = a.row_idx[static_cast<std::size_t>(p)];
      if (r < 0 || r >= a.rows) {
        fail("row index " + std::to_string(r) + " out of range in column " + std::to_string(c));
      }
      if (p > begin && r <= a.row_idx[static_cast<std::size_t>(p) - 1]) {
        fail("row indices not strictly increasing in column " + std::to_string(c));
      }
    }
  }
}

void check_valid(const SymmetricCscMatrix& a) {
  check_valid(a.lower);
  if (a.lower.rows != a.lower.cols) throw std::invalid_argument("symmetric matrix is not square");
  for (Index c = 0; c < a.lower.cols; ++c) {
    const Offset begin = a.lower.col_ptr[static_cast<std::size_t>(c)];
    if (begin < a.lower.col_ptr[static_cast<std::size_t>(c) + 1] &&
        a.lower.row_idx[static_cast<std::size_t>(begin)] < c) {
      throw std::invalid_argument("symmetric matrix has an entry above the diagonal in column " +
                                  std::to_string(c));
    }
  }
}

void multiply(const CscMatrix& a, std::span<const double> x, std::span<double> y) {
  if (x.size() != static_cast<std::size_t>(a.cols) || y.size() != static_cast<std::size_t>(a.rows)) {
    throw std::invalid_argument("multiply: vector sizes do not match the matrix");
  }
  std::fill(y.begin(), y.end(), 0.0);
  for (Index c = 0; c < a.cols; ++c) {
    const double xc = x[static_cast<std::size_t>(c)];
    for (Offset p = a.col_ptr[static_cast<std::size_t>(c)];
         p < a.col_ptr[static_cast<std::size_t>(c) + 1]; ++p) {
      y[static_cast<std::size_t>(a.row_idx[static_cast<std::size_t>(p)])] +=
          a.values[static_cast<std::size_t>(p)] * xc;
    }
  }
}

void symmetric_multiply(const SymmetricCscMatrix& a, std::span<const double> x,
                        std::span<double> y) {
  symmetric_multiply(a, x, y, 1);
}

void symmetric_multiply(const SymmetricCscMatrix& a, std::span<const double> x,
                        std::span<double> y, Index count) {
  const auto n = static_cast<std::size_t>(a.size());
  if (count < 0 || x.size() != n * static_cast<std::size_t>(count) || y.size() != x.size()) {
    throw std::invalid_argument("symmetric_multiply: vector sizes do not match the matrix");
  }
  const CscMatrix& l = a.lower;
  std::fill(y.begin(), y.end(), 0.0);
  for (Index v = 0; v < count; ++v) {
    const double* xv = x.data() + n * static_cast<std::size_t>(v);
    double* yv = y.data() + n * static_cast<std::size_t>(v);
    for (std::size_t c = 0; c < n; ++c) {
      const double xc = xv[c];
      double dot = 0.0;  // the transposed (upper) contribution to y[c]
      for (Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) {
        const auto r = static_cast<std::size_t>(l.row_idx[static_cast<std::size_t>(p)]);
        const double value = l.values[static_cast<std::size_t>(p)];
        yv[r] += value * xc;
        if (r != c) dot += value * xv[r];
      }
      yv[c] += dot;
    }
  }
}

void check_permutation(std::span<const Index> perm, Index n, const std::string& what) {
  if (perm.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument(what + ": permutation has length " + std::to_string(perm.size()) +
                                ", expected " + std::to_string(n));
  }
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (std::size_t k = 0; k < perm.size(); ++k) {
    const Index p = perm[k];
    if (p < 0 || p >= n) {
      throw std::invalid_argument(what + ": permutation entry " + std::to_string(k) + " = " +
                                  std::to_string(p) + " is out of range");
    }
    if (seen[static_cast<std::size_t>(p)]++) {
      throw std::invalid_argument(what + ": permutation repeats " + std::to_string(p));
    }
  }
}

std::vector<Index> invert_permutation(std::span<const Index> perm) {
  check_permutation(perm, static_cast<Index>(perm.size()), "invert_permutation");
  std::vector<Index> inverse(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) inverse[static_cast<std::size_t>(perm[k])] = static_cast<Index>(k);
  return inverse;
}

SymmetricCscMatrix permute_symmetric(const SymmetricCscMatrix& a, std::span<const Index> perm) {
  const Index n = a.size();
  check_permutation(perm, n, "permute_symmetric");
  const std::vector<Index> inverse = invert_permutation(perm);
  const CscMatrix& l = a.lower;
  const bool with_values = l.has_values() && !l.values.empty();
  // Entry (r, c) moves to (max, min) of (inverse[r], inverse[c]): count, place, sort columns.
  SymmetricCscMatrix result;
  CscMatrix& out = result.lower;
  out.rows = out.cols = n;
  out.col_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (Index c = 0; c < n; ++c) {
    for (Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) {
      ++out.col_ptr[std::min(inverse[l.row_idx[p]], inverse[c]) + 1];
    }
  }
  std::partial_sum(out.col_ptr.begin(), out.col_ptr.end(), out.col_ptr.begin());
  out.row_idx.resize(l.row_idx.size());
  if (with_values) out.values.resize(l.row_idx.size());
  std::vector<Offset> next(out.col_ptr.begin(), out.col_ptr.end() - 1);
  for (Index c = 0; c < n; ++c) {
    for (Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) {
      const Index i = inverse[l.row_idx[p]];
      const Index j = inverse[c];
      const Offset q = next[std::min(i, j)]++;
      out.row_idx[q] = std::max(i, j);
      if (with_values) out.values[q] = l.values[p];
    }
  }
  // Rows within a column arrive unsorted; sort them (with their values) column by column.
  std::vector<std::pair<Index, double>> column;
  for (Index c = 0; c < n; ++c) {
    const Offset begin = out.col_ptr[c];
    const Offset end = out.col_ptr[c + 1];
    if (!with_values) {
      std::sort(out.row_idx.begin() + begin, out.row_idx.begin() + end);
      continue;
    }
    column.clear();
    for (Offset p = begin; p < end; ++p) column.emplace_back(out.row_idx[p], out.values[p]);
    std::sort(column.begin(), column.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (Offset p = begin; p < end; ++p) {
      out.row_idx[p] = column[static_cast<std::size_t>(p - begin)].first;
      out.values[p] = column[static_cast<std::size_t>(p - begin)].second;
    }
  }
  return result;
}

}  // namespace cholsim::linalg

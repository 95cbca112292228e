#pragma once
// CHOLMOD as the reference oracle, shared by tests/ and bench/ (the only places CHOLMOD may
// be used): an RAII cholmod_common and a zero-copy wrap of cholsim's lower CSC storage in
// CHOLMOD's 64-bit form (cholmod_l_* API).
#include <cholmod.h>

#include <cstddef>
#include <vector>

#include "linalg/csc_matrix.hpp"

namespace cholsim::reference {

/// cholmod_common started on construction and finished on every exit path.
class CholmodCommon {
 public:
  CholmodCommon() { cholmod_l_start(&common_); }
  ~CholmodCommon() { cholmod_l_finish(&common_); }
  CholmodCommon(const CholmodCommon&) = delete;
  CholmodCommon& operator=(const CholmodCommon&) = delete;
  cholmod_common* get() { return &common_; }

 private:
  cholmod_common common_{};
};

/// A (lower triangle stored) as a cholmod_sparse: index arrays widened to 64 bits and owned
/// here, values borrowed from `a`, which must outlive this object.
struct CholmodMatrix {
  std::vector<SuiteSparse_long> col_ptr;
  std::vector<SuiteSparse_long> row_idx;
  cholmod_sparse sparse{};

  explicit CholmodMatrix(const linalg::SymmetricCscMatrix& a)
      : col_ptr(a.lower.col_ptr.begin(), a.lower.col_ptr.end()),
        row_idx(a.lower.row_idx.begin(), a.lower.row_idx.end()) {
    sparse.nrow = static_cast<std::size_t>(a.size());
    sparse.ncol = static_cast<std::size_t>(a.size());
    sparse.nzmax = row_idx.size();
    sparse.p = col_ptr.data();
    sparse.i = row_idx.data();
    sparse.x = const_cast<double*>(a.lower.values.data());  // CHOLMOD only reads A
    sparse.stype = -1;  // lower triangle stored
    sparse.itype = CHOLMOD_LONG;
    sparse.xtype = CHOLMOD_REAL;
    sparse.dtype = CHOLMOD_DOUBLE;
    sparse.sorted = 1;
    sparse.packed = 1;
  }
};

}  // namespace cholsim::reference

#pragma once
// MUMPS (the sequential build, Debian libmumps-seq-dev) as the second reference peer, shared
// by tests/ and bench/ — the only places it may be used, like CHOLMOD (DESIGN.md "Layers").
// Only compiled where CMake found MUMPS (CHOLSIM_HAVE_MUMPS, target cholsim_mumps).
//
// MUMPS runs in its SPD mode (SYM = 1: LDLᵀ without pivoting — it accepts negative pivots,
// so it is a reference for SPD input only, not a definiteness check) on the centralized
// assembled lower triangle of A, either with OUR permutation (ICNTL(7) = 1, so both libraries factor the
// same P·A·Pᵀ) or with an ordering of its own choice (ICNTL(7) = 7). With a Schur set it stops
// before those unknowns and hands back the dense Schur complement (ICNTL(19)). Its BLAS is
// the system OpenBLAS — the very library cholsim calls — so linalg::set_blas_threads sets
// MUMPS's thread count too; the sequential build has no OpenMP, so BLAS is its only
// parallelism.
//
// MUMPS is Fortran underneath: indices are 1-based, an instance lives from JOB = −1 to
// JOB = −2, and the sequential build's communicator is the placeholder −987654.
#include <dmumps_c.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::reference {

/// What MUMPS is asked to do in MumpsSolver::analyze.
struct MumpsOptions {
  /// perm[new] = old, cholsim's convention (Symbolic::permutation()); empty: MUMPS chooses
  /// its own ordering (ICNTL(7) = 7, automatic; this build has SCOTCH, PORD and the AMD family,
  /// not METIS).
  std::span<const linalg::Index> permutation{};
  /// Unknowns kept out of the elimination, in the order of S's rows; empty: full factorization.
  std::span<const linalg::Index> schur_set{};
};

/// What the last phases reported.
struct MumpsStats {
  double analyze_seconds = 0.0;  ///< wall clock of JOB = 1
  double factor_seconds = 0.0;   ///< wall clock of JOB = 2 (with a Schur set: the partial one)
  double solve_seconds = 0.0;    ///< wall clock of JOB = 3
  double factor_entries = 0.0;   ///< INFOG(29): entries of the factor, after JOB = 2
  double flops = 0.0;            ///< RINFOG(3): flops of the elimination, after JOB = 2
  double peak_bytes = 0.0;       ///< INFOG(22): memory the factorization effectively used
  int ordering = -1;             ///< INFOG(7): the ordering used (1 = given, 3 = SCOTCH, 4 = PORD, …)
};

class MumpsSolver {
 public:
  /// Starts a MUMPS instance for the SPD matrix `a` (lower triangle stored). The values are
  /// borrowed: `a` must outlive this object and keep its values until factorize() returns.
  explicit MumpsSolver(const linalg::SymmetricCscMatrix& a) : n_(a.size()) {
    mumps_.sym = 1;                   // symmetric positive definite
    mumps_.par = 1;                   // the host works too (there is only the host)
    mumps_.comm_fortran = -987654;    // the sequential build's stand-in for MPI_COMM_WORLD
    run(-1, "initialization");
    mumps_.icntl[0] = -1;  // ICNTL(1..3): error, diagnostic and global output streams off
    mumps_.icntl[1] = -1;
    mumps_.icntl[2] = -1;
    mumps_.icntl[3] = 0;   // ICNTL(4): print level none
    // ICNTL(8) = 0: no scaling — an SPD matrix needs none, and cholsim and CHOLMOD do none,
    // so the timed factorizations do the same work.
    mumps_.icntl[7] = 0;
    const linalg::CscMatrix& lower = a.lower;
    rows_.reserve(static_cast<std::size_t>(lower.nnz()));
    columns_.reserve(static_cast<std::size_t>(lower.nnz()));
    for (linalg::Index column = 0; column < lower.cols; ++column) {
      for (linalg::Offset p = lower.col_ptr[column]; p < lower.col_ptr[column + 1]; ++p) {
        rows_.push_back(lower.row_idx[p] + 1);
        columns_.push_back(column + 1);
      }
    }
    mumps_.n = n_;
    mumps_.nnz = static_cast<MUMPS_INT8>(rows_.size());
    mumps_.irn = rows_.data();
    mumps_.jcn = columns_.data();
    mumps_.a = const_cast<double*>(lower.values.data());  // MUMPS only reads A
  }
  ~MumpsSolver() {
    mumps_.job = -2;
    dmumps_c(&mumps_);  // frees MUMPS's own memory; a failure here has no one left to tell
  }
  MumpsSolver(const MumpsSolver&) = delete;
  MumpsSolver& operator=(const MumpsSolver&) = delete;

  /// JOB = 1: ordering (given or MUMPS's) and symbolic analysis.
  void analyze(const MumpsOptions& options) {
    if (!options.permutation.empty()) {
      require_size(options.permutation.size(), "permutation");
      // PERM_IN(old) = position of `old` in the elimination order, 1-based.
      position_of_.assign(static_cast<std::size_t>(n_), 0);
      for (std::size_t position = 0; position < options.permutation.size(); ++position) {
        position_of_[static_cast<std::size_t>(options.permutation[position])] = static_cast<MUMPS_INT>(position + 1);
      }
      mumps_.perm_in = position_of_.data();
      mumps_.icntl[6] = 1;  // ICNTL(7) = 1: the ordering given in PERM_IN
    } else {
      mumps_.perm_in = nullptr;
      mumps_.icntl[6] = 7;  // ICNTL(7) = 7: MUMPS chooses
    }
    set_schur_set(options.schur_set);
    stats_.analyze_seconds = timed_run(1, "analysis");
    stats_.ordering = mumps_.infog[6];
  }

  /// JOB = 2: the numerical factorization — with a Schur set, the partial one that leaves S.
  void factorize() {
    stats_.factor_seconds = timed_run(2, "factorization");
    stats_.factor_entries = count_of(mumps_.infog[28]);
    stats_.flops = mumps_.rinfog[2];
    stats_.peak_bytes = 1e6 * mumps_.infog[21];  // MUMPS counts in millions of bytes
  }

  /// JOB = 3: solves A·x = b in place (user numbering) after a full factorization.
  void solve(std::span<double> b) {
    if (!schur_list_.empty()) throw std::logic_error("MumpsSolver::solve: the factorization was partial (Schur set)");
    require_size(b.size(), "right-hand side");
    mumps_.rhs = b.data();
    mumps_.nrhs = 1;
    mumps_.lrhs = n_;
    stats_.solve_seconds = timed_run(3, "solve");
    mumps_.rhs = nullptr;
  }

  /// S = A22 − A21·A11⁻¹·A12 after factorize() with a Schur set, rows and columns in the
  /// order of MumpsOptions::schur_set, both triangles filled.
  [[nodiscard]] linalg::DenseMatrix schur_complement() const {
    const auto m = static_cast<linalg::Index>(schur_list_.size());
    linalg::DenseMatrix s(m, m);
    // For SYM ≠ 0 MUMPS is only bound to fill the lower triangle (by columns, ld = m).
    for (linalg::Index j = 0; j < m; ++j) {
      for (linalg::Index i = j; i < m; ++i) {
        s(i, j) = s(j, i) = schur_[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * static_cast<std::size_t>(m)];
      }
    }
    return s;
  }

  [[nodiscard]] const MumpsStats& stats() const { return stats_; }

 private:
  /// ICNTL(19) = 3 on a 1×1 process grid: S centralized on the host, column-major with
  /// leading dimension m — the layout the MUMPS user's guide recommends for a sequential run.
  void set_schur_set(std::span<const linalg::Index> schur_set) {
    schur_list_.clear();
    for (const linalg::Index unknown : schur_set) {
      if (unknown < 0 || unknown >= n_) {
        throw std::invalid_argument("MumpsSolver: Schur unknown " + std::to_string(unknown) + " is outside [0, " +
                                    std::to_string(n_) + ")");
      }
      schur_list_.push_back(unknown + 1);
    }
    const auto m = static_cast<MUMPS_INT>(schur_list_.size());
    mumps_.icntl[18] = m > 0 ? 3 : 0;
    mumps_.size_schur = m;
    mumps_.listvar_schur = m > 0 ? schur_list_.data() : nullptr;
    mumps_.nprow = mumps_.npcol = 1;
    mumps_.mblock = mumps_.nblock = 100;
    mumps_.schur_lld = m;
    schur_.assign(static_cast<std::size_t>(m) * static_cast<std::size_t>(m), 0.0);
    mumps_.schur = m > 0 ? schur_.data() : nullptr;
  }

  void require_size(std::size_t size, const char* what) const {
    if (size != static_cast<std::size_t>(n_)) {
      throw std::invalid_argument(std::string("MumpsSolver: the ") + what + " has " + std::to_string(size) +
                                  " entries, the matrix " + std::to_string(n_) + " rows");
    }
  }

  double timed_run(int job, const char* phase) {
    const auto start = std::chrono::steady_clock::now();
    run(job, phase);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  /// Runs one phase; INFOG(1) < 0 is an error (INFOG(2) its detail), > 0 only a warning.
  void run(int job, const char* phase) {
    mumps_.job = job;
    dmumps_c(&mumps_);
    if (mumps_.infog[0] < 0) {
      throw std::runtime_error(std::string("MUMPS ") + phase + " (JOB = " + std::to_string(job) +
                               ") failed: INFOG(1) = " + std::to_string(mumps_.infog[0]) +
                               ", INFOG(2) = " + std::to_string(mumps_.infog[1]) +
                               " (MUMPS user's guide, \"Error diagnostics\")");
    }
  }

  /// MUMPS's large counts: a negative value v means −v millions.
  static double count_of(MUMPS_INT value) { return value >= 0 ? value : -1e6 * static_cast<double>(value); }

  linalg::Index n_;
  DMUMPS_STRUC_C mumps_{};
  std::vector<MUMPS_INT> rows_, columns_;  // A's lower triangle, 1-based coordinates
  std::vector<MUMPS_INT> position_of_;      // PERM_IN
  std::vector<MUMPS_INT> schur_list_;       // LISTVAR_SCHUR, 1-based
  std::vector<double> schur_;               // S, m×m column-major
  MumpsStats stats_;
};

}  // namespace cholsim::reference

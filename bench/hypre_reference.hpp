#pragma once
// hypre's BoomerAMG as CG's preconditioner: the algebraic multigrid baseline of issue 24, on the
// same assembled system as our geometric MGPCG and our Cholesky (bench/ only, like CHOLMOD).
// Debian's hypre is built with MPI and without OpenMP, so it runs here as one rank on one
// thread; MPI is started once for the process (hypre needs it even on one rank).
#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <_hypre_parcsr_ls.h>  // the hierarchy's levels, for its memory and complexity
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/csc_matrix.hpp"

namespace cholsim::reference {

/// MPI and hypre started on the first call, finished when the program exits.
inline void start_hypre_once() {
  struct Session {
    Session() {
      int started = 0;
      MPI_Initialized(&started);
      if (!started) MPI_Init(nullptr, nullptr);
      HYPRE_Init();
    }
    ~Session() {
      HYPRE_Finalize();
      MPI_Finalize();
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
  };
  static Session session;
}

/// BoomerAMG's settings for 3D elasticity: the unknown-based systems approach (interleaved
/// x, y, z per node), HMIS coarsening, extended+i interpolation truncated to 4 entries a row,
/// l1 hybrid symmetric Gauss–Seidel (a symmetric preconditioner, as CG needs), one V-cycle per
/// CG iteration. The threshold and the aggressive first level are the fastest setup + solve of
/// those tried on the armadillo at 64 cells (docs/benchmarks.md, issue 24, "Algebraic
/// multigrid"): threshold 0.5 without aggressive coarsening took 2.1× as long, for 20
/// iterations instead of 25, with twice the memory.
struct BoomerAmgOptions {
  int dofs_per_node = 3;
  double strong_threshold = 0.7;
  int aggressive_levels = 1;
  double relative_tolerance = 1e-6;
  int max_iterations = 500;
};

struct BoomerAmgResult {
  double setup_seconds = 0;
  double solve_seconds = 0;
  int iterations = 0;
  double relative_residual = 0;     ///< as hypre's PCG reports it (2-norm, relative to b)
  int levels = 0;
  double operator_complexity = 0;   ///< Σ nnz(A_l) / nnz(A_0)
  double hierarchy_bytes = 0;       ///< CSR storage of every level's A and P (8 + 4 bytes an entry)
};

namespace hypre_detail {

inline void check(HYPRE_Int code, const char* what) {
  if (code != 0) throw std::runtime_error(std::string("hypre: ") + what + " failed (error " + std::to_string(code) + ")");
}

inline double nonzeros(hypre_ParCSRMatrix* m) {
  return static_cast<double>(hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixDiag(m))) +
         static_cast<double>(hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixOffd(m)));
}

/// A CSR matrix's storage: 8-byte values and 4-byte column indices, 4-byte row pointers.
inline double csr_bytes(hypre_ParCSRMatrix* m) {
  if (m == nullptr) return 0.0;
  return 12.0 * nonzeros(m) + 4.0 * (static_cast<double>(hypre_ParCSRMatrixGlobalNumRows(m)) + 1.0);
}

/// Full rows (both triangles) of a symmetric matrix stored as its lower CSC, as hypre's IJ
/// interface takes them.
struct FullRows {
  std::vector<HYPRE_Int> row_sizes;
  std::vector<HYPRE_BigInt> rows;
  std::vector<HYPRE_BigInt> columns;
  std::vector<double> values;

  explicit FullRows(const linalg::SymmetricCscMatrix& a) {
    const auto n = static_cast<std::size_t>(a.size());
    const auto& lower = a.lower;
    row_sizes.assign(n, 0);
    for (std::size_t c = 0; c < n; ++c) {
      for (auto k = lower.col_ptr[c]; k < lower.col_ptr[c + 1]; ++k) {
        const auto r = static_cast<std::size_t>(lower.row_idx[static_cast<std::size_t>(k)]);
        ++row_sizes[r];
        if (r != c) ++row_sizes[c];
      }
    }
    std::vector<std::size_t> next(n + 1, 0);
    for (std::size_t r = 0; r < n; ++r) next[r + 1] = next[r] + static_cast<std::size_t>(row_sizes[r]);
    columns.resize(next[n]);
    values.resize(next[n]);
    const auto put = [&](std::size_t r, std::size_t c, double v) {
      columns[next[r]] = static_cast<HYPRE_BigInt>(c);
      values[next[r]++] = v;
    };
    for (std::size_t c = 0; c < n; ++c) {
      for (auto k = lower.col_ptr[c]; k < lower.col_ptr[c + 1]; ++k) {
        const auto r = static_cast<std::size_t>(lower.row_idx[static_cast<std::size_t>(k)]);
        const double v = lower.values[static_cast<std::size_t>(k)];
        put(r, c, v);
        if (r != c) put(c, r, v);
      }
    }
    rows.resize(n);
    for (std::size_t r = 0; r < n; ++r) rows[r] = static_cast<HYPRE_BigInt>(r);
  }
};

}  // namespace hypre_detail

/// Solves A x = b (x's input the initial guess) by CG preconditioned with one BoomerAMG V-cycle,
/// timing the AMG setup (per matrix, so per Newton step) and the solve separately. The copy of
/// A into hypre's storage is not timed (it stands for assembly, which our MGPCG does not need).
inline BoomerAmgResult boomeramg_pcg_solve(const linalg::SymmetricCscMatrix& a, std::span<const double> b,
                                           std::span<double> x, const BoomerAmgOptions& options = {}) {
  using hypre_detail::check;
  using Clock = std::chrono::steady_clock;
  start_hypre_once();
  const HYPRE_BigInt last = static_cast<HYPRE_BigInt>(a.size()) - 1;
  hypre_detail::FullRows full(a);

  HYPRE_IJMatrix ij_matrix = nullptr;
  check(HYPRE_IJMatrixCreate(MPI_COMM_WORLD, 0, last, 0, last, &ij_matrix), "IJMatrixCreate");
  HYPRE_IJMatrixSetObjectType(ij_matrix, HYPRE_PARCSR);
  HYPRE_IJMatrixSetRowSizes(ij_matrix, full.row_sizes.data());
  HYPRE_IJMatrixInitialize(ij_matrix);
  check(HYPRE_IJMatrixSetValues(ij_matrix, static_cast<HYPRE_Int>(a.size()), full.row_sizes.data(), full.rows.data(),
                                full.columns.data(), full.values.data()),
        "IJMatrixSetValues");
  check(HYPRE_IJMatrixAssemble(ij_matrix), "IJMatrixAssemble");
  HYPRE_ParCSRMatrix matrix = nullptr;
  HYPRE_IJMatrixGetObject(ij_matrix, reinterpret_cast<void**>(&matrix));

  const auto make_vector = [&](std::span<const double> values, HYPRE_IJVector& ij, HYPRE_ParVector& vector) {
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, last, &ij);
    HYPRE_IJVectorSetObjectType(ij, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(ij);
    HYPRE_IJVectorSetValues(ij, static_cast<HYPRE_Int>(values.size()), full.rows.data(), values.data());
    HYPRE_IJVectorAssemble(ij);
    HYPRE_IJVectorGetObject(ij, reinterpret_cast<void**>(&vector));
  };
  HYPRE_IJVector ij_b = nullptr, ij_x = nullptr;
  HYPRE_ParVector vector_b = nullptr, vector_x = nullptr;
  make_vector(b, ij_b, vector_b);
  make_vector(x, ij_x, vector_x);

  HYPRE_Solver amg = nullptr;
  HYPRE_BoomerAMGCreate(&amg);
  HYPRE_BoomerAMGSetNumFunctions(amg, options.dofs_per_node);
  HYPRE_BoomerAMGSetCoarsenType(amg, 10);  // HMIS
  HYPRE_BoomerAMGSetInterpType(amg, 6);    // extended+i
  HYPRE_BoomerAMGSetPMaxElmts(amg, 4);
  HYPRE_BoomerAMGSetStrongThreshold(amg, options.strong_threshold);
  HYPRE_BoomerAMGSetAggNumLevels(amg, options.aggressive_levels);
  HYPRE_BoomerAMGSetRelaxType(amg, 8);     // l1 hybrid symmetric Gauss–Seidel
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);

  HYPRE_Solver pcg = nullptr;
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_PCGSetTol(pcg, options.relative_tolerance);
  HYPRE_PCGSetMaxIter(pcg, options.max_iterations);
  HYPRE_PCGSetTwoNorm(pcg, 1);
  HYPRE_PCGSetLogging(pcg, 1);
  HYPRE_PCGSetPrecond(pcg, reinterpret_cast<HYPRE_PtrToSolverFcn>(HYPRE_BoomerAMGSolve),
                      reinterpret_cast<HYPRE_PtrToSolverFcn>(HYPRE_BoomerAMGSetup), amg);

  BoomerAmgResult result;
  Clock::time_point start = Clock::now();
  check(HYPRE_ParCSRPCGSetup(pcg, matrix, vector_b, vector_x), "PCGSetup");
  result.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  start = Clock::now();
  HYPRE_ParCSRPCGSolve(pcg, matrix, vector_b, vector_x);  // nonzero also when not converged
  result.solve_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  HYPRE_PCGGetNumIterations(pcg, &result.iterations);
  HYPRE_PCGGetFinalRelativeResidualNorm(pcg, &result.relative_residual);

  auto* data = reinterpret_cast<hypre_ParAMGData*>(amg);
  result.levels = hypre_ParAMGDataNumLevels(data);
  hypre_ParCSRMatrix** operators = hypre_ParAMGDataAArray(data);
  hypre_ParCSRMatrix** prolongations = hypre_ParAMGDataPArray(data);
  double operator_nonzeros = 0.0;
  for (int level = 0; level < result.levels; ++level) {
    operator_nonzeros += hypre_detail::nonzeros(operators[level]);
    result.hierarchy_bytes += hypre_detail::csr_bytes(operators[level]);
    if (level + 1 < result.levels) result.hierarchy_bytes += hypre_detail::csr_bytes(prolongations[level]);
  }
  result.operator_complexity = operator_nonzeros / hypre_detail::nonzeros(operators[0]);

  HYPRE_IJVectorGetValues(ij_x, static_cast<HYPRE_Int>(x.size()), full.rows.data(), x.data());
  HYPRE_ParCSRPCGDestroy(pcg);
  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_IJVectorDestroy(ij_x);
  HYPRE_IJVectorDestroy(ij_b);
  HYPRE_IJMatrixDestroy(ij_matrix);
  return result;
}

}  // namespace cholsim::reference

#pragma once
// The geometric multigrid V-cycle of seed 001 §7, written against MultigridLevel callbacks:
// one pre- and one post-smoothing damped-Jacobi sweep per level, restriction = prolongationᵀ,
// re-discretized coarse operators (supplied by the caller), and the coarsest level solved by
// damped-Jacobi sweeps (§10.4: 16) or by an installed exact solver (DirectCoarseSolver).
// VCycleOptions::shape makes the same class run W- or K-cycles (the octree flesh uses a K-cycle).
//
//   VCycle cycle(std::move(levels), {.damping = 0.857});
//   DirectCoarseSolver coarse(coarsest_matrix);           // optional
//   cycle.set_coarse_solver([&](auto b, auto x) { coarse.solve(b, x); });
//   multigrid_pcg(cycle, b, x, {});                        // multigrid_solve.hpp
//
// Symmetry (§7, Tatebe 1993): with pre_sweeps == post_sweeps, a symmetric smoother, R = Pᵀ
// and a symmetric coarse solve, z = M⁻¹·r from z = 0 is a symmetric linear operator; it is
// positive definite when the smoother converges in the A-norm (damping·λmax(B⁻¹A) < 2), and
// then it preconditions CG.
#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "solvers/cg/conjugate_gradient.hpp"
#include "solvers/multigrid/jacobi_smoother.hpp"
#include "solvers/multigrid/multigrid_level.hpp"

namespace cholsim::solvers {

struct VCycleOptions {
  Smoother smoother = Smoother::damped_jacobi;
  /// ω of x ← x + ω·B⁻¹(b − A·x). Seed 001 §7 uses 0.3 for its elasticity; §10.4's cube test
  /// 0.857 (≈ 6/7, the classical optimum of the 7-point Laplacian's Jacobi smoothing).
  double damping = 0.3;
  /// Sweeps before and after the coarse correction (§7: one each). Equal counts keep the
  /// cycle symmetric; as_preconditioner() and multigrid_pcg refuse unequal ones.
  int pre_sweeps = 1;
  int post_sweeps = 1;
  /// Smoother sweeps from zero on the coarsest level when no coarse solver is installed
  /// (§10.4: 16).
  int coarse_jacobi_sweeps = 16;
  /// Chebyshev smoothing instead of damped sweeps on every level but the coarsest: the
  /// pre_sweeps (= post_sweeps) products with A become the Chebyshev polynomial of that degree
  /// in B⁻¹A that is smallest over [chebyshev_lower·λ, 1.1·λ], λ the largest eigenvalue of
  /// B⁻¹A estimated per level by power iteration (again after a level is changed through
  /// level()). Damping is then unused. The same polynomial before and after keeps the cycle
  /// symmetric. The lower end 0.2 was the best of 0.05…0.5 for Q1 elasticity (V-cycle factor
  /// 0.14 at degree 2 against 0.26 for two damped sweeps; 0.1, PETSc's default, gave 0.28).
  bool chebyshev = false;
  double chebyshev_lower = 0.2;
  /// How each level's coarse problem is solved (every level but the coarsest, which is solved
  /// once, exactly or by its sweeps):
  ///  * v: one cycle of the next level (§7);
  ///  * w: two, the second on the first's residual — a linear, symmetric operator, positive
  ///    definite only while the coarser cycle converges as a stationary iteration (its M⁻¹A
  ///    within (0, 2)); the §10.4 cube's coarse corrections overshoot beyond that and break it;
  ///  * k: the K-cycle (Notay & Vassilevski 2008): the first cycle's correction scaled to
  ///    minimize the coarse energy error and, unless it already reduced the coarse residual to
  ///    a quarter, a second cycle combined with it by one flexible-CG step. It cannot overshoot,
  ///    but it is not linear: CG preconditioned by it needs the flexible β (multigrid_pcg uses it).
  /// Re-discretized levels lose the low end of M⁻¹A's spectrum level by level (issue 24: on the
  /// octree armadillo λmin falls from 0.08 with two levels to 0.02 with five); w and k keep it.
  enum class Shape { v, w, k };
  Shape shape = Shape::v;
  /// Threads of the smoothing and vector loops (linalg::parallel_chunks; 0: all hardware
  /// threads). The levels' callbacks choose their own.
  int threads = 0;
};

/// "v", "w" or "k" for a cycle shape, and back (case-insensitive; std::invalid_argument listing
/// the names for any other).
std::string_view cycle_shape_name(VCycleOptions::Shape shape);
VCycleOptions::Shape parse_cycle_shape(std::string_view name);

/// z = coarse A⁻¹·b (or an approximation that is symmetric positive definite).
using CoarseSolver = std::function<void(std::span<const double> b, std::span<double> x)>;

class VCycle {
 public:
  /// Takes the hierarchy, finest first. Throws std::invalid_argument naming the level when
  /// a level lacks an operator, its transfers (all but the coarsest) or the smoother's data,
  /// or the data is not positive. The coarsest level may omit the smoother's data when a
  /// coarse solver will be set; apply() throws std::logic_error if neither is there.
  VCycle(std::vector<MultigridLevel> levels, VCycleOptions options);

  /// Installs the coarsest level's solver (e.g. DirectCoarseSolver::solve); an empty function
  /// restores the default, options().coarse_jacobi_sweeps smoother sweeps from zero.
  void set_coarse_solver(CoarseSolver solve);
  [[nodiscard]] bool has_coarse_solver() const { return static_cast<bool>(coarse_solver_); }

  /// z = M⁻¹·r: one V-cycle for A·z = r from z = 0. Allocates nothing (the coarse solver's
  /// own work aside). r and z must not overlap.
  void apply(std::span<const double> r, std::span<double> z);
  /// One V-cycle as a stationary iteration, x ← x + M⁻¹·(b − A·x): seed 001 §10.4's "MG".
  void iterate(std::span<const double> b, std::span<double> x);
  /// apply() as a CG preconditioner. The function refers to this cycle, which must outlive
  /// it and not move. Throws std::logic_error when pre_sweeps != post_sweeps (not symmetric).
  Preconditioner as_preconditioner();

  /// A level, for updating values in place between cycles (a Newton step's new diagonal or
  /// operator). Sizes must stay; call check_levels() after changing them.
  MultigridLevel& level(int l);
  [[nodiscard]] const MultigridLevel& level(int l) const;
  [[nodiscard]] int level_count() const { return static_cast<int>(levels_.size()); }
  [[nodiscard]] const VCycleOptions& options() const { return options_; }
  /// A new smoother damping ω (> 0, else std::invalid_argument), e.g. halved after
  /// multigrid_pcg found the cycle indefinite.
  void set_damping(double damping);

  /// The constructor's checks, again: after the levels were changed in place.
  void check_levels() const;

  /// Vector `index` of the finest level's size for the solver driving this cycle (iterate()
  /// uses 0–1, multigrid_pcg 0–3, multigrid_iterations 0–1; the cycle itself none): made on
  /// first use and kept, so a Newton loop's solves allocate nothing and memory_bytes() counts them.
  std::span<double> finest_vector(int index);

  /// Bytes held by the work vectors and the levels' smoother arrays (not by the callbacks).
  [[nodiscard]] std::size_t memory_bytes() const;

 private:
  // The work vectors of one level. On level 0 the right-hand side and solution are the
  // caller's spans; coarser levels own theirs.
  struct LevelWork {
    std::vector<double> rhs;
    std::vector<double> solution;
    std::vector<double> scratch;  // A·x, then the residual, then the prolonged correction
    std::vector<double> direction;       // Chebyshev: the last step (power iteration: the iterate)
    std::vector<double> preconditioned;  // Chebyshev: B⁻¹ times the residual
    double largest_eigenvalue = 0.0;     // Chebyshev: λmax(B⁻¹A) estimate; 0: to be estimated
    // W- and K-cycles on a coarse level: the residual after the first cycle, the second
    // cycle's correction, and (K) the operator times the first correction.
    std::vector<double> second_residual;
    std::vector<double> second_correction;
    std::vector<double> operator_times_first;
  };

  void cycle(int l, std::span<const double> b, std::span<double> x);
  void solve_coarsest(std::span<const double> b, std::span<double> x);
  /// x ≈ A_l⁻¹·b for a coarse level l, by the cycles options().shape says.
  void solve_coarse_problem(int l, std::span<const double> b, std::span<double> x);
  void krylov_cycles(int l, std::span<const double> b, std::span<double> x);
  [[nodiscard]] bool repeats_cycles_on(int l) const;
  void smooth_from_zero(int l, std::span<const double> b, std::span<double> x, int sweeps);
  void smooth(int l, std::span<const double> b, std::span<double> x, int sweeps);
  [[nodiscard]] bool smooths_by_chebyshev(int l, int sweeps) const;
  void chebyshev_smooth(int l, std::span<const double> b, std::span<double> x, int degree, bool from_zero);
  double estimate_largest_eigenvalue(int l);
  void require_size(std::span<const double> v, const char* name) const;

  std::vector<MultigridLevel> levels_;
  VCycleOptions options_;
  CoarseSolver coarse_solver_;
  std::vector<LevelWork> work_;
  std::vector<std::vector<double>> finest_vectors_;  // finest_vector()'s
};

}  // namespace cholsim::solvers

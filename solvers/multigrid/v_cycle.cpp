#include "solvers/multigrid/v_cycle.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "linalg/parallel_loops.hpp"
#include "linalg/vector_norms.hpp"
#include "solvers/nonlinear/named_choices.hpp"

namespace cholsim::solvers {

namespace {

using linalg::Index;

[[noreturn]] void bad_level(int level_index, const std::string& what) {
  throw std::invalid_argument("multigrid level " + std::to_string(level_index) + ": " + what);
}

std::size_t size_of(Index unknowns) { return static_cast<std::size_t>(unknowns); }

// y ← b − y (y held A·x): the residual in place of the product.
void residual_in_place(std::span<const double> b, std::span<double> y, int threads) {
  linalg::parallel_chunks(static_cast<Index>(y.size()), threads, [&](Index begin, Index end) {
    for (auto i = size_of(begin); i < size_of(end); ++i) y[i] = b[i] - y[i];
  });
}

// x ← x + correction.
void add_to(std::span<double> x, std::span<const double> correction, int threads) {
  linalg::parallel_chunks(static_cast<Index>(x.size()), threads, [&](Index begin, Index end) {
    for (auto i = size_of(begin); i < size_of(end); ++i) x[i] += correction[i];
  });
}

constexpr NameTable<VCycleOptions::Shape, 3> cycle_shape_names{{
    {VCycleOptions::Shape::v, "v"}, {VCycleOptions::Shape::w, "w"}, {VCycleOptions::Shape::k, "k"}}};

}  // namespace

std::string_view cycle_shape_name(VCycleOptions::Shape shape) {
  return choice_name(cycle_shape_names, shape, "cycle_shape_name");
}

VCycleOptions::Shape parse_cycle_shape(std::string_view name) {
  return parse_choice(cycle_shape_names, name, "multigrid cycle");
}

VCycle::VCycle(std::vector<MultigridLevel> levels, VCycleOptions options)
    : levels_(std::move(levels)), options_(options) {
  if (levels_.empty()) throw std::invalid_argument("VCycle: no levels");
  if (options_.pre_sweeps < 0 || options_.post_sweeps < 0 || options_.coarse_jacobi_sweeps < 1) {
    throw std::invalid_argument("VCycle: sweeps must be ≥ 0 (≥ 1 on the coarsest level)");
  }
  if (!(options_.damping > 0.0)) throw std::invalid_argument("VCycle: damping must be positive");
  if (options_.chebyshev && !(options_.chebyshev_lower > 0.0 && options_.chebyshev_lower < 1.0)) {
    throw std::invalid_argument("VCycle: chebyshev_lower must lie in (0, 1)");
  }
  check_levels();
  work_.resize(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const std::size_t n = size_of(levels_[l].unknowns);
    work_[l].scratch.assign(n, 0.0);
    if (l > 0) {
      work_[l].rhs.assign(n, 0.0);
      work_[l].solution.assign(n, 0.0);
    }
    if (options_.chebyshev) {
      work_[l].direction.assign(n, 0.0);
      work_[l].preconditioned.assign(n, 0.0);
    }
    if (repeats_cycles_on(static_cast<int>(l))) {
      work_[l].second_residual.assign(n, 0.0);
      work_[l].second_correction.assign(n, 0.0);
      if (options_.shape == VCycleOptions::Shape::k) work_[l].operator_times_first.assign(n, 0.0);
    }
  }
}

void VCycle::check_levels() const {
  for (int l = 0; l < level_count(); ++l) {
    const MultigridLevel& level = levels_[static_cast<std::size_t>(l)];
    const bool coarsest = l + 1 == level_count();
    if (level.unknowns <= 0) bad_level(l, "has no unknowns");
    if (!level.apply) bad_level(l, "has no operator (apply)");
    if (!coarsest && (!level.restrict_to_coarser || !level.prolong_from_coarser)) {
      bad_level(l, "lacks restrict_to_coarser or prolong_from_coarser (every level but the coarsest needs both)");
    }
    if (!coarsest) check_smoother_data(options_.smoother, level, l);
  }
  // The coarsest level's smoother data is needed only for its Jacobi sweeps: a hierarchy
  // meant for a direct coarse solve may leave it out (solve_coarsest checks before sweeping).
  const MultigridLevel& coarsest = levels_.back();
  if (!coarse_solver_ && has_smoother_data(options_.smoother, coarsest)) {
    check_smoother_data(options_.smoother, coarsest, level_count() - 1);
  }
}

void VCycle::set_coarse_solver(CoarseSolver solve) {
  coarse_solver_ = std::move(solve);
  if (!coarse_solver_) check_smoother_data(options_.smoother, levels_.back(), level_count() - 1);
}

MultigridLevel& VCycle::level(int l) {
  work_.at(static_cast<std::size_t>(l)).largest_eigenvalue = 0.0;  // the level may change: estimate again
  return levels_.at(static_cast<std::size_t>(l));
}
const MultigridLevel& VCycle::level(int l) const { return levels_.at(static_cast<std::size_t>(l)); }

void VCycle::require_size(std::span<const double> v, const char* name) const {
  if (v.size() != size_of(levels_[0].unknowns)) {
    throw std::invalid_argument(std::string("VCycle: ") + name + " has " + std::to_string(v.size()) +
                                " entries, the finest level " + std::to_string(levels_[0].unknowns));
  }
}

void VCycle::apply(std::span<const double> r, std::span<double> z) {
  require_size(r, "r");
  require_size(z, "z");
  cycle(0, r, z);
}

void VCycle::iterate(std::span<const double> b, std::span<double> x) {
  require_size(b, "b");
  require_size(x, "x");
  const std::span<double> residual = finest_vector(0), correction = finest_vector(1);
  levels_[0].apply(x, residual);
  residual_in_place(b, residual, options_.threads);
  cycle(0, residual, correction);
  add_to(x, correction, options_.threads);
}

void VCycle::set_damping(double damping) {
  if (!(damping > 0.0)) throw std::invalid_argument("VCycle: damping must be positive");
  options_.damping = damping;
}

std::span<double> VCycle::finest_vector(int index) {
  if (index < 0) throw std::invalid_argument("VCycle::finest_vector: negative index");
  if (finest_vectors_.size() <= static_cast<std::size_t>(index)) finest_vectors_.resize(static_cast<std::size_t>(index) + 1);
  std::vector<double>& vector = finest_vectors_[static_cast<std::size_t>(index)];
  if (vector.empty()) vector.assign(size_of(levels_[0].unknowns), 0.0);
  return vector;
}

Preconditioner VCycle::as_preconditioner() {
  if (options_.pre_sweeps != options_.post_sweeps) {
    throw std::logic_error("VCycle: pre_sweeps (" + std::to_string(options_.pre_sweeps) + ") != post_sweeps (" +
                           std::to_string(options_.post_sweeps) +
                           "): the cycle is not symmetric and cannot precondition CG (seed 001 §7)");
  }
  return [this](std::span<const double> r, std::span<double> z) { apply(r, z); };
}

// x = M_l⁻¹·b from x = 0. The post-smoother repeats the pre-smoother's sweeps in reverse
// order; Jacobi sweeps are all alike (B symmetric), so the reverse order is the same loop and
// the cycle is its own adjoint (seed 001 §7, Tatebe 1993).
void VCycle::cycle(int l, std::span<const double> b, std::span<double> x) {
  if (l + 1 == level_count()) {
    solve_coarsest(b, x);
    return;
  }
  MultigridLevel& level = levels_[static_cast<std::size_t>(l)];
  LevelWork& coarse = work_[static_cast<std::size_t>(l) + 1];
  const std::span<double> scratch = work_[static_cast<std::size_t>(l)].scratch;
  smooth_from_zero(l, b, x, options_.pre_sweeps);
  if (options_.pre_sweeps > 0) {
    level.apply(x, scratch);
    residual_in_place(b, scratch, options_.threads);
    level.restrict_to_coarser(scratch, coarse.rhs);
  } else {
    level.restrict_to_coarser(b, coarse.rhs);  // x = 0: the residual is b
  }
  solve_coarse_problem(l + 1, coarse.rhs, coarse.solution);
  level.prolong_from_coarser(coarse.solution, scratch);
  add_to(x, scratch, options_.threads);
  smooth(l, b, x, options_.post_sweeps);
}

// The coarsest level is solved once: exactly by a coarse solver, and its Jacobi sweeps are
// already a fixed iteration count (§10.4).
bool VCycle::repeats_cycles_on(int l) const {
  return l > 0 && l + 1 < level_count() && options_.shape != VCycleOptions::Shape::v;
}

void VCycle::solve_coarse_problem(int l, std::span<const double> b, std::span<double> x) {
  if (!repeats_cycles_on(l)) {
    cycle(l, b, x);
    return;
  }
  if (options_.shape == VCycleOptions::Shape::k) {
    krylov_cycles(l, b, x);
    return;
  }
  // W: x ← c₁ + M_l⁻¹(b − A_l·c₁).
  LevelWork& work = work_[static_cast<std::size_t>(l)];
  cycle(l, b, x);
  levels_[static_cast<std::size_t>(l)].apply(x, work.second_residual);
  residual_in_place(b, work.second_residual, options_.threads);
  cycle(l, work.second_residual, work.second_correction);
  add_to(x, work.second_correction, options_.threads);
}

// Notay & Vassilevski 2008, the K-cycle with two inner iterations: c₁ = M⁻¹b scaled by
// α₁ = c₁ᵀb / c₁ᵀAc₁ (the A-norm error's minimum along c₁); if ‖b − α₁Ac₁‖ > ¼‖b‖, c₂ = M⁻¹ of that
// residual, A-orthogonalized against c₁ (d = c₂ − β c₁, β = c₂ᵀAc₁ / c₁ᵀAc₁) and added with its own
// optimal step. Two products with A_l per visit (one when the first step suffices); the W-cycle's
// second cycle needs one, for its residual.
void VCycle::krylov_cycles(int l, std::span<const double> b, std::span<double> x) {
  constexpr double kEnoughReduction = 0.25;  // Notay & Vassilevski's t
  const MultigridLevel& level = levels_[static_cast<std::size_t>(l)];
  LevelWork& work = work_[static_cast<std::size_t>(l)];
  const int threads = options_.threads;
  cycle(l, b, x);  // c₁
  const std::span<double> a_first = work.operator_times_first;
  level.apply(x, a_first);
  const double first_energy = linalg::dot(x, a_first);
  if (!(first_energy > 0.0)) return;  // c₁ = 0 (b = 0): nothing to scale
  const double first_step = linalg::dot(x, b) / first_energy;
  const std::span<double> r = work.second_residual;
  linalg::parallel_chunks(level.unknowns, threads, [&](Index begin, Index end) {
    for (auto i = size_of(begin); i < size_of(end); ++i) r[i] = b[i] - first_step * a_first[i];
  });
  if (linalg::norm2(r) <= kEnoughReduction * linalg::norm2(b)) {
    linalg::parallel_chunks(level.unknowns, threads, [&](Index begin, Index end) {
      for (auto i = size_of(begin); i < size_of(end); ++i) x[i] *= first_step;
    });
    return;
  }
  const std::span<double> second = work.second_correction;
  cycle(l, r, second);  // c₂
  const std::span<double> a_second = work.scratch;  // free again once the cycle returned
  level.apply(second, a_second);
  const double coupling = linalg::dot(second, a_first);             // c₂ᵀAc₁
  const double beta = coupling / first_energy;
  const double direction_energy = linalg::dot(second, a_second) - beta * coupling;  // dᵀAd
  // dᵀr = c₂ᵀr, since c₁ᵀr = 0 after the first step.
  const double second_step = direction_energy > 0.0 ? linalg::dot(second, r) / direction_energy : 0.0;
  const double first_weight = first_step - second_step * beta;
  linalg::parallel_chunks(level.unknowns, threads, [&](Index begin, Index end) {
    for (auto i = size_of(begin); i < size_of(end); ++i) x[i] = first_weight * x[i] + second_step * second[i];
  });
}

void VCycle::solve_coarsest(std::span<const double> b, std::span<double> x) {
  if (coarse_solver_) {
    coarse_solver_(b, x);
    return;
  }
  if (!has_smoother_data(options_.smoother, levels_.back())) {
    throw std::logic_error("VCycle: the coarsest level (" + std::to_string(level_count() - 1) +
                           ") has no smoother data for its Jacobi sweeps and no coarse solver is set");
  }
  smooth_from_zero(level_count() - 1, b, x, options_.coarse_jacobi_sweeps);  // §10.4
}

// The coarsest level keeps its sweeps (or its coarse solver): Chebyshev needs a level below.
bool VCycle::smooths_by_chebyshev(int l, int sweeps) const {
  return options_.chebyshev && sweeps > 0 && l + 1 < level_count();
}

void VCycle::smooth_from_zero(int l, std::span<const double> b, std::span<double> x, int sweeps) {
  const MultigridLevel& level = levels_[static_cast<std::size_t>(l)];
  if (smooths_by_chebyshev(l, sweeps)) {
    chebyshev_smooth(l, b, x, sweeps, true);
    return;
  }
  if (sweeps == 0) {
    linalg::parallel_chunks(level.unknowns, options_.threads, [&](Index begin, Index end) {
      for (auto i = size_of(begin); i < size_of(end); ++i) x[i] = 0.0;
    });
    return;
  }
  jacobi_from_zero(options_.smoother, level, options_.damping, b, x, options_.threads);
  smooth(l, b, x, sweeps - 1);
}

void VCycle::smooth(int l, std::span<const double> b, std::span<double> x, int sweeps) {
  if (smooths_by_chebyshev(l, sweeps)) {
    chebyshev_smooth(l, b, x, sweeps, false);
    return;
  }
  const MultigridLevel& level = levels_[static_cast<std::size_t>(l)];
  const std::span<double> a_times_x = work_[static_cast<std::size_t>(l)].scratch;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    level.apply(x, a_times_x);
    jacobi_correction(options_.smoother, level, options_.damping, b, a_times_x, x, options_.threads);
  }
}

// λmax(B⁻¹A) by 20 power iterations from a fixed start with every mode present (the ratio of
// successive norms; under-estimates converge from below, hence the 1.1 margin where it is used).
double VCycle::estimate_largest_eigenvalue(int l) {
  const MultigridLevel& level = levels_[static_cast<std::size_t>(l)];
  LevelWork& work = work_[static_cast<std::size_t>(l)];
  std::vector<double>& v = work.direction;
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0 + 0.5 * std::sin(0.618034 * static_cast<double>(i) * static_cast<double>(i));
  double estimate = 0.0;
  for (int iteration = 0; iteration < 20; ++iteration) {
    const double length = linalg::norm2(v);
    if (length == 0.0) break;
    level.apply(v, work.scratch);
    jacobi_from_zero(options_.smoother, level, 1.0, work.scratch, work.preconditioned, options_.threads);
    estimate = linalg::norm2(work.preconditioned) / length;
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = work.preconditioned[i] / (estimate * length);
  }
  if (!(estimate > 0.0) || !std::isfinite(estimate)) {
    throw std::runtime_error("VCycle: the largest eigenvalue of level " + std::to_string(l) +
                             "'s B⁻¹A could not be estimated (" + std::to_string(estimate) + ")");
  }
  return estimate;
}

// Chebyshev smoothing (Saad, Iterative Methods §12.3, with B as the preconditioner): the error
// is multiplied by the degree-`degree` polynomial in B⁻¹A that is 1 at 0 and smallest on
// [a, b] = [chebyshev_lower·λ, 1.1·λ] — the upper part of the spectrum, which the coarse level
// cannot represent — instead of by (I − ωB⁻¹A)^degree.
void VCycle::chebyshev_smooth(int l, std::span<const double> b, std::span<double> x, int degree, bool from_zero) {
  const MultigridLevel& level = levels_[static_cast<std::size_t>(l)];
  LevelWork& work = work_[static_cast<std::size_t>(l)];
  if (work.largest_eigenvalue == 0.0) work.largest_eigenvalue = estimate_largest_eigenvalue(l);
  const double upper = 1.1 * work.largest_eigenvalue;
  const double lower = options_.chebyshev_lower * work.largest_eigenvalue;
  const double centre = 0.5 * (upper + lower);
  const double half_width = 0.5 * (upper - lower);
  const double sigma = centre / half_width;
  double rho = 1.0 / sigma;
  const std::span<double> d = work.direction;
  const std::span<double> z = work.preconditioned;
  const std::span<double> r = work.scratch;
  const int threads = options_.threads;
  for (int step = 0; step < degree; ++step) {
    if (step == 0 && from_zero) {
      jacobi_from_zero(options_.smoother, level, 1.0, b, z, threads);  // r = b
    } else {
      level.apply(x, r);
      residual_in_place(b, r, threads);
      jacobi_from_zero(options_.smoother, level, 1.0, r, z, threads);
    }
    double keep = 0.0;
    double take = 1.0 / centre;
    if (step > 0) {
      const double next_rho = 1.0 / (2.0 * sigma - rho);
      keep = next_rho * rho;
      take = 2.0 * next_rho / half_width;
      rho = next_rho;
    }
    linalg::parallel_chunks(level.unknowns, threads, [&](Index begin, Index end) {
      for (auto i = size_of(begin); i < size_of(end); ++i) {
        d[i] = keep * d[i] + take * z[i];
        x[i] = (step == 0 && from_zero ? 0.0 : x[i]) + d[i];
      }
    });
  }
}

std::size_t VCycle::memory_bytes() const {
  std::size_t values = 0;
  for (const std::vector<double>& vector : finest_vectors_) values += vector.capacity();
  for (const LevelWork& work : work_) {
    values += work.rhs.capacity() + work.solution.capacity() + work.scratch.capacity() + work.direction.capacity() +
              work.preconditioned.capacity() + work.second_residual.capacity() + work.second_correction.capacity() +
              work.operator_times_first.capacity();
  }
  for (const MultigridLevel& level : levels_) values += level.diagonal.capacity() + level.block_diagonal.capacity();
  return values * sizeof(double);
}

}  // namespace cholsim::solvers

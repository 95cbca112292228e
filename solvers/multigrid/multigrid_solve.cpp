#include "solvers/multigrid/multigrid_solve.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/parallel_loops.hpp"

namespace cholsim::solvers {

namespace {

// The solve's dots and axpys run on the cycle's threads too: on 2 threads they were 20 % of an
// MGPCG iteration serial (measured on the octree armadillo at 128 cells: 10 iterations 277 ms,
// of which cycles and operator 223 ms). The dot products sum fixed chunks in a fixed order, so
// the result does not depend on the thread count.
// At most kMaxChunks chunks of at least kMinChunkLength entries: the partial sums live on the
// stack (no allocation per dot product) and their count depends on n alone.
constexpr std::size_t kMinChunkLength = 8192;
constexpr std::size_t kMaxChunks = 256;

std::size_t chunk_length(std::size_t n) { return std::max(kMinChunkLength, (n + kMaxChunks - 1) / kMaxChunks); }

template <typename Body>
void for_each_chunk(std::size_t n, int threads, Body&& body) {
  const std::size_t length = chunk_length(n);
  const auto chunks = static_cast<linalg::Index>((n + length - 1) / length);
  linalg::parallel_chunks(chunks, threads, [&](linalg::Index first, linalg::Index last) {
    for (linalg::Index c = first; c < last; ++c) {
      const std::size_t begin = static_cast<std::size_t>(c) * length;
      body(static_cast<std::size_t>(c), begin, std::min(n, begin + length));
    }
  }, 2);
}

double dot(std::span<const double> a, std::span<const double> b, int threads = 1) {
  std::array<double, kMaxChunks> partial{};
  for_each_chunk(a.size(), threads, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    double sum = 0.0;
    for (std::size_t i = begin; i < end; ++i) sum += a[i] * b[i];
    partial[chunk] = sum;
  });
  double sum = 0.0;
  for (const double value : partial) sum += value;
  return sum;
}

double norm(std::span<const double> a, int threads = 1) { return std::sqrt(dot(a, a, threads)); }

void require_sizes(const VCycle& cycle, std::span<const double> b, std::span<double> x, const char* solver) {
  const auto n = static_cast<std::size_t>(cycle.level(0).unknowns);
  if (b.size() != n || x.size() != n) {
    throw std::invalid_argument(std::string(solver) + ": b has " + std::to_string(b.size()) + ", x " +
                                std::to_string(x.size()) + " entries for a finest level of " + std::to_string(n));
  }
}

[[noreturn]] void indefinite_cycle(int iteration, double value) {
  throw IndefiniteCycle("multigrid_pcg: rᵀM⁻¹r = " + std::to_string(value) + " at iteration " + std::to_string(iteration) +
                        "; the cycle must be SPD (R = Pᵀ, damping·λmax(B⁻¹A) < 2)");
}

[[noreturn]] void indefinite_operator(int iteration, double value) {
  throw std::runtime_error("multigrid_pcg: pᵀAp = " + std::to_string(value) + " at iteration " + std::to_string(iteration) +
                           "; the operator must be SPD");
}

// r = b − A·x into `r`; returns ‖r‖.
double residual(const LinearOperator& a, std::span<const double> b, std::span<const double> x, std::span<double> r) {
  a(x, r);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = b[i] - r[i];
  return norm(r);
}

// b = 0 is solved by x = 0 exactly; the relative residual would divide by zero.
bool solved_by_zero(std::span<const double> b, std::span<double> x, MultigridSolveResult& result) {
  if (norm(b) > 0.0) return false;
  std::fill(x.begin(), x.end(), 0.0);
  result.converged = true;
  result.residual_history.push_back(0.0);
  return true;
}

// Records the relative residual of the iteration just finished; true when converged.
bool record(MultigridSolveResult& result, double relative_residual, double tolerance) {
  result.relative_residual = relative_residual;
  result.residual_history.push_back(relative_residual);
  result.converged = relative_residual <= tolerance;
  return result.converged;
}

// The PCG loop is written here rather than calling solvers::conjugate_gradient because §10.4's
// comparison needs the residual after every iteration, which conjugate_gradient does not
// report, and a K-cycle needs the flexible β; otherwise the recurrence is Saad's Alg. 9.1 with
// the cycle as M⁻¹.
MultigridSolveResult pcg_with_cycle(VCycle& cycle, std::span<const double> b, std::span<double> x,
                                    const MultigridSolveOptions& options) {
  const Preconditioner precondition = cycle.as_preconditioner();  // throws if unsymmetric
  const LinearOperator& a = cycle.level(0).apply;
  MultigridSolveResult result;
  if (solved_by_zero(b, x, result)) return result;
  const std::size_t n = b.size();
  const std::span<double> r = cycle.finest_vector(0), z = cycle.finest_vector(1), p = cycle.finest_vector(2),
                          ap = cycle.finest_vector(3);
  const int threads = cycle.options().threads;
  const double b_norm = norm(b, threads);
  if (record(result, residual(a, b, x, r) / b_norm, options.relative_tolerance)) return result;
  precondition(r, z);
  std::copy(z.begin(), z.end(), p.begin());
  double rz = dot(r, z, threads);
  CgSpectrumEstimate spectrum;
  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    if (!(rz > 0.0)) indefinite_cycle(iteration, rz);
    a(p, ap);
    const double curvature = dot(p, ap, threads);
    if (!(curvature > 0.0)) indefinite_operator(iteration, curvature);
    const double step = rz / curvature;
    spectrum.add_step(step);
    for_each_chunk(n, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        x[i] += step * p[i];
        r[i] -= step * ap[i];
      }
    });
    result.iterations = iteration;
    if (record(result, norm(r, threads) / b_norm, options.relative_tolerance)) break;
    precondition(r, z);
    const double rz_next = dot(r, z, threads);
    // The flexible (Polak–Ribière) update β = −zₖ₊₁ᵀApₖ / pₖᵀApₖ keeps the next direction
    // A-orthogonal to the last one even when M⁻¹ varies from call to call (a K-cycle is not a
    // linear operator; Notay 2000). For a fixed symmetric M⁻¹ it equals rₖ₊₁ᵀzₖ₊₁ / rₖᵀzₖ, the
    // classical β, which the Lanczos estimate keeps (for a K-cycle the spectrum is approximate).
    const double beta = -dot(z, ap, threads) / curvature;
    spectrum.add_direction_update(rz_next / rz);
    rz = rz_next;
    for_each_chunk(n, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) p[i] = z[i] + beta * p[i];
    });
  }
  result.spectrum = spectrum.bounds();
  return result;
}

}  // namespace

MultigridSolveResult multigrid_pcg(VCycle& cycle, std::span<const double> b, std::span<double> x,
                                   const MultigridSolveOptions& options) {
  require_sizes(cycle, b, x, "multigrid_pcg");
  for (int halvings = 0;; ++halvings) {
    try {
      MultigridSolveResult result = pcg_with_cycle(cycle, b, x, options);
      result.damping_halvings = halvings;
      return result;
    } catch (const IndefiniteCycle&) {
      if (halvings >= options.max_damping_halvings) throw;
      cycle.set_damping(0.5 * cycle.options().damping);
      std::fill(x.begin(), x.end(), 0.0);
    }
  }
}

// Not VCycle::iterate: the residual b − A·x this loop needs for its stopping test is the one
// the V-cycle corrects, so computing it here and applying the cycle to it costs one operator
// application per iteration instead of two.
MultigridSolveResult multigrid_iterations(VCycle& cycle, std::span<const double> b, std::span<double> x,
                                          const MultigridSolveOptions& options) {
  require_sizes(cycle, b, x, "multigrid_iterations");
  const LinearOperator& a = cycle.level(0).apply;
  MultigridSolveResult result;
  if (solved_by_zero(b, x, result)) return result;
  const std::span<double> r = cycle.finest_vector(0), correction = cycle.finest_vector(1);
  const double b_norm = norm(b);
  for (int iteration = 0;; ++iteration) {
    if (record(result, residual(a, b, x, r) / b_norm, options.relative_tolerance)) break;
    if (iteration == options.max_iterations) break;
    cycle.apply(r, correction);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += correction[i];
    result.iterations = iteration + 1;
  }
  return result;
}

double vcycle_convergence_factor(VCycle& cycle, int iterations, unsigned seed) {
  if (iterations < 1) throw std::invalid_argument("vcycle_convergence_factor: iterations must be ≥ 1");
  const LinearOperator& a = cycle.level(0).apply;
  const auto n = static_cast<std::size_t>(cycle.level(0).unknowns);
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> error(n), a_error(n), zero(n, 0.0);
  for (double& value : error) value = uniform(generator);
  const auto energy_norm = [&] {
    a(error, a_error);
    return std::sqrt(std::max(dot(error, a_error), 0.0));
  };
  const int averaged = std::max(1, iterations / 4);
  double log_sum = 0.0;
  double previous = energy_norm();
  for (int k = 0; k < iterations; ++k) {
    // The error of A·x = 0 from x = error: one V-cycle iteration maps it to E·error.
    for (double& value : error) value /= previous;  // keep it O(1): no under/overflow
    cycle.iterate(zero, error);
    const double current = energy_norm();
    if (current == 0.0) return 0.0;  // an exact cycle (direct solve on a single level)
    if (k >= iterations - averaged) log_sum += std::log(current);
    previous = current;
  }
  return std::exp(log_sum / averaged);
}

}  // namespace cholsim::solvers

// The factor's time derivative (issue 6, seed 002 ch. 5): L and L̇ together against L alone and
// against the finite-difference routes, on elasticity boxes.
//
// For every box (NX = NY = NZ cells, 3·(NX+1)³ DOF) the matrix is A = M + Δt²K of
// linalg::elasticity_element_matrix on the box's tets, and Ȧ is the finite difference of the
// assembled matrix along a velocity field of the nodes, as the thesis does for K̇ (eq. 5.5–5.7):
// Ȧ = (A(x + h·v) − A(x))/h with v a rigid rotation plus a volume-preserving stretch about the
// box's centre and h = 1e-6 s. One METIS analysis is shared by every factorization; then,
// --repeat times and interleaved, it times
//   factor:      Factor::factorize(A);
//   derivative:  FactorDerivative::factorize_with_derivative(A, Ȧ)   (L and L̇ together);
//   forward:     finite_difference_derivative(forward)  = factorize(A + εȦ) + factorize(A);
//   central:     finite_difference_derivative(central)  = factorize(A + εȦ) + factorize(A − εȦ);
// and prints medians, the ratios derivative/factor and derivative/forward, the flops of L and
// L̇, the identity residual ‖L̇Lᵀ + LL̇ᵀ − Ȧ‖/‖Ȧ‖ on Ȧ's pattern, and the relative distance of
// the forward and central differences (default steps) to the analytic L̇, as a Markdown table.
//
// With --refactor-fraction F (issue 6 with seed 000 §5.2), a second table: the element blocks
// of the F·tets tets nearest a point a quarter along the box's diagonal change (A by a
// corotation turn of each block, Ȧ by another), and, --repeat times interleaved, it times
//   full:        factorize_with_derivative(A, Ȧ) with retained update blocks (U and U̇);
//   refactor:    refactorize_with_derivative(changed elements, A', Ȧ') after that full call;
// with the recomputed supernodes and flop fraction, the retained bytes, and the distance of the
// refactorized L̇ to a fresh factorize_with_derivative(A', Ȧ').
//
// Options: bench_factor_derivative --help (kUsage below).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_statistics.hpp"
#include "factor/derivative/factor_derivative.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/element_changes.hpp"
#include "linalg/generators.hpp"
#include "linalg/parallel_loops.hpp"

namespace {

using cholsim::linalg::Index;
using cholsim::linalg::SymmetricCscMatrix;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;
namespace bench = cholsim::bench;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: bench_factor_derivative [options]

The factor's time derivative (issue 6, seed 002 ch. 5) on elasticity boxes: L and L-dot
together (factorize_with_derivative) against L alone and against forward and central finite
differences, with flops, the identity residual and the finite differences' distance to the
analytic L-dot, as a Markdown table on stdout, progress on stderr.

  --boxes LIST             box sizes in cells per side, 3*(N+1)^3 DOF each (default 20,32,46:
                           27,783 / 107,811 / 311,469 DOF)
  --threads T              factorization threads (default 0 = all hardware threads)
  --repeat R               repetitions, interleaved, the median is reported (default 3)
  --refactor-fraction F    add a second table: the F*tets tets nearest a point a quarter along
                           the box's diagonal change, and refactorize_with_derivative is timed
                           against a full factorize_with_derivative; F in (0, 1] (default: no
                           second table)
  --help, -h               this text
)";

struct Options {
  std::vector<Index> boxes{20, 32, 46};  // 27,783 / 107,811 / 311,469 DOF
  int threads = 0;                        // 0: all hardware threads
  int repeat = 3;
  double refactor_fraction = 0.0;         // 0: no refactorization table
};

using bench::parse_list;

Options parse_options(int argc, char** argv) {
  Options options;
  for (bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& flag = arguments.flag();
    if (bench::is_help_flag(flag)) {
      bench::exit_with_usage(kUsage);
    } else if (flag == "--boxes") {
      options.boxes = parse_list<Index>(arguments.value());
    } else if (flag == "--threads") {
      options.threads = static_cast<int>(bench::parse_number(flag, arguments.value()));
    } else if (flag == "--repeat") {
      options.repeat = bench::parse_positive(flag, arguments.value());
    } else if (flag == "--refactor-fraction") {
      const std::string value = arguments.value();
      options.refactor_fraction = bench::parse_number(flag, value);
      if (!(options.refactor_fraction > 0.0 && options.refactor_fraction <= 1.0)) {
        throw std::invalid_argument("--refactor-fraction must be in (0, 1], got " + value);
      }
    } else {
      throw bench::unknown_option(flag);
    }
  }
  return options;
}

// A and Ȧ on an n³-cell box: Ȧ by a forward difference of the assembly along the velocity
// field (seed 002 eq. 5.7), on the same pattern as A. The mesh and assembly pattern stay for
// element changes.
struct BoxSystem {
  linalg::ElasticityBoxOptions material;
  linalg::TetMesh mesh;
  linalg::AssemblyPattern pattern;
  SymmetricCscMatrix a;
  SymmetricCscMatrix a_dot;
};

BoxSystem box_system(Index cells) {
  const linalg::ElasticityBoxOptions material{.nx = cells, .ny = cells, .nz = cells, .cell_size = 1.0 / static_cast<double>(cells)};
  linalg::TetMesh mesh = linalg::structured_tet_box(cells, cells, cells, material.cell_size);
  linalg::AssemblyPattern pattern(mesh.node_count(), 3, 4, mesh.tets);
  auto assemble = [&](const std::vector<double>& positions) {
    SymmetricCscMatrix matrix = pattern.zero_matrix();
    const linalg::TetMesh moved{positions, mesh.tets};
    for (Index t = 0; t < mesh.tet_count(); ++t) {
      const auto element = linalg::elasticity_element_matrix(moved.tet_points(t), material);
      pattern.scatter_add(t, element.data(), matrix.lower.values);
    }
    return matrix;
  };
  // v(x) = ω × (x − c) + S·(x − c): rotation about (1, 2, 3)/|·| at 1 rad/s plus a stretch along
  // x, squeezing y and z (trace 0), at 0.5 /s.
  constexpr double h = 1e-6;
  const std::array<double, 3> omega{0.2673, 0.5345, 0.8018};
  const std::array<double, 3> stretch{0.5, -0.25, -0.25};
  std::vector<double> moved = mesh.positions;
  for (std::size_t v = 0; v < moved.size() / 3; ++v) {
    std::array<double, 3> d{};
    for (std::size_t c = 0; c < 3; ++c) d[c] = mesh.positions[3 * v + c] - 0.5;
    const std::array<double, 3> velocity{omega[1] * d[2] - omega[2] * d[1] + stretch[0] * d[0],
                                         omega[2] * d[0] - omega[0] * d[2] + stretch[1] * d[1],
                                         omega[0] * d[1] - omega[1] * d[0] + stretch[2] * d[2]};
    for (std::size_t c = 0; c < 3; ++c) moved[3 * v + c] += h * velocity[c];
  }
  SymmetricCscMatrix a = assemble(mesh.positions);
  SymmetricCscMatrix a_moved = assemble(moved);
  BoxSystem system{material, std::move(mesh), std::move(pattern), std::move(a), std::move(a_moved)};
  for (std::size_t p = 0; p < system.a.lower.values.size(); ++p) {
    system.a_dot.lower.values[p] = (system.a_dot.lower.values[p] - system.a.lower.values[p]) / h;
  }
  return system;
}

using cholsim::bench::median;

double seconds_of(const auto& call) {
  const auto start = Clock::now();
  call();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct BoxResult {
  Index cells = 0;
  Index n = 0;
  std::int64_t nnz_l = 0;
  int threads = 0;
  double factor_s = 0.0;
  double derivative_s = 0.0;
  double forward_s = 0.0;
  double central_s = 0.0;
  double factor_flops = 0.0;
  double derivative_flops = 0.0;
  double derivative_kernel_share = 0.0;  // derivative kernel time / all kernel time
  double identity_residual = 0.0;
  double forward_error = 0.0;
  double central_error = 0.0;
  double forward_epsilon = 0.0;
  double central_epsilon = 0.0;
};

void require(const factor::FactorStatus& status, const char* what) {
  if (!status.ok()) throw std::runtime_error(std::string(what) + ": " + status.message);
}

BoxResult run_box(Index cells, const BoxSystem& system, const std::shared_ptr<const factor::Symbolic>& symbolic,
                  const Options& options) {
  const int threads = linalg::resolve_thread_count(options.threads);
  const factor::FactorOptions factor_options{.threads = threads};

  BoxResult result;
  result.cells = cells;
  result.n = system.a.size();
  result.nnz_l = symbolic->stats().nnz_l;
  result.threads = threads;
  factor::Factor plain(symbolic);
  factor::FactorDerivative ldot(symbolic);
  factor::FiniteDifferenceOptions forward_options;
  forward_options.scheme = factor::FiniteDifferenceScheme::forward;
  forward_options.factor_options = factor_options;
  factor::FiniteDifferenceOptions central_options;
  central_options.factor_options = factor_options;
  std::vector<double> factor_s, derivative_s, forward_s, central_s;
  factor::FiniteDifferenceDerivative forward, central;
  for (int run = 1; run <= options.repeat; ++run) {
    std::fprintf(stderr, "box %d (n = %d): run %d/%d\n", cells, result.n, run, options.repeat);
    factor_s.push_back(seconds_of([&] { require(plain.factorize(system.a, factor_options), "factorize"); }));
    derivative_s.push_back(seconds_of([&] {
      require(ldot.factorize_with_derivative(system.a, system.a_dot, factor_options), "factorize_with_derivative");
    }));
    forward_s.push_back(seconds_of([&] {
      forward = factor::finite_difference_derivative(symbolic, system.a, system.a_dot, forward_options);
    }));
    require(forward.status, "forward difference");
    central_s.push_back(seconds_of([&] {
      central = factor::finite_difference_derivative(symbolic, system.a, system.a_dot, central_options);
    }));
    require(central.status, "central difference");
  }
  result.factor_s = median(factor_s);
  result.derivative_s = median(derivative_s);
  result.forward_s = median(forward_s);
  result.central_s = median(central_s);
  const factor::DerivativeFactorStats& stats = ldot.stats();
  result.factor_flops = stats.factor_flops;
  result.derivative_flops = stats.derivative_flops;
  result.derivative_kernel_share =
      stats.derivative_kernel_seconds / (stats.factor_kernel_seconds + stats.derivative_kernel_seconds);
  std::fprintf(stderr, "box %d: identity residual...\n", cells);
  result.identity_residual = factor::derivative_identity_residual(
      *symbolic, ldot.factor().values(), ldot.derivative_values(), system.a_dot);
  result.forward_error = factor::relative_difference(forward.values, ldot.derivative_values());
  result.central_error = factor::relative_difference(central.values, ldot.derivative_values());
  result.forward_epsilon = forward.epsilon;
  result.central_epsilon = central.epsilon;
  return result;
}

struct RefactorResult {
  Index cells = 0;
  Index n = 0;
  int threads = 0;
  Index changed_elements = 0;
  Index recomputed_supernodes = 0;
  Index supernodes = 0;
  double flop_fraction = 0.0;
  double full_s = 0.0;
  double refactor_s = 0.0;
  std::int64_t retained_bytes = 0;
  std::int64_t retained_derivative_bytes = 0;
  double factor_difference = 0.0;
  double derivative_difference = 0.0;
};

// The changed pair (A', Ȧ'): each element block of `elements` turned by a corotation in A
// (which stays SPD) and by a different one in Ȧ.
BoxSystem changed_system(const BoxSystem& system, std::span<const Index> elements) {
  BoxSystem changed = system;
  linalg::rotate_element_blocks(changed.mesh, changed.pattern, changed.material, elements, 0.3, changed.a.lower.values);
  linalg::rotate_element_blocks(changed.mesh, changed.pattern, changed.material, elements, -0.2,
                                changed.a_dot.lower.values);
  return changed;
}

RefactorResult run_refactor(const BoxSystem& system, const std::shared_ptr<const factor::Symbolic>& symbolic,
                            const Options& options) {
  const int threads = linalg::resolve_thread_count(options.threads);
  const factor::FactorOptions retain{.threads = threads, .retain_update_blocks = true};
  const auto count = std::max<Index>(
      1, static_cast<Index>(std::llround(options.refactor_fraction * static_cast<double>(system.mesh.tet_count()))));
  const std::vector<Index> elements = linalg::elements_in_ball(system.mesh, {0.25, 0.25, 0.25}, count);
  const BoxSystem changed = changed_system(system, elements);
  const factor::ChangedEntries changed_entries =
      factor::ChangedEntries::elements(linalg::element_dof_lists(system.pattern, elements), 12);

  RefactorResult result;
  result.cells = system.material.nx;
  result.n = system.a.size();
  result.threads = threads;
  result.changed_elements = count;
  result.supernodes = symbolic->supernode_count();
  factor::FactorDerivative ldot(symbolic);
  std::vector<double> full_s, refactor_s;
  for (int run = 1; run <= options.repeat; ++run) {
    std::fprintf(stderr, "box %d: refactorization run %d/%d\n", result.cells, run, options.repeat);
    full_s.push_back(seconds_of([&] {
      require(ldot.factorize_with_derivative(system.a, system.a_dot, retain), "factorize_with_derivative (retained)");
    }));
    refactor_s.push_back(seconds_of([&] {
      require(ldot.refactorize_with_derivative(changed_entries, changed.a, changed.a_dot, retain),
              "refactorize_with_derivative");
    }));
  }
  result.full_s = median(full_s);
  result.refactor_s = median(refactor_s);
  const factor::DerivativeFactorStats& stats = ldot.stats();
  result.recomputed_supernodes = stats.recomputed_supernodes;
  result.flop_fraction = stats.recomputed_flop_fraction;
  result.retained_bytes = stats.retained_update_bytes;
  result.retained_derivative_bytes = stats.retained_derivative_update_bytes;
  factor::FactorDerivative fresh(symbolic);
  require(fresh.factorize_with_derivative(changed.a, changed.a_dot, {.threads = threads}), "fresh factorize_with_derivative");
  result.factor_difference = factor::relative_difference(ldot.factor().values(), fresh.factor().values());
  result.derivative_difference = factor::relative_difference(ldot.derivative_values(), fresh.derivative_values());
  return result;
}

void print_refactor_table(const std::vector<RefactorResult>& results, double fraction) {
  std::printf("\nBall of %.3g of the tets changed in A and Ȧ:\n\n", fraction);
  std::printf("| box | n | threads | changed tets | recomputed supernodes | flop fraction | L+L̇ retained (s) | "
              "refactor L+L̇ (s) | ratio refactor / full | retained U (MB) | retained U̇ (MB) | "
              "L vs fresh | L̇ vs fresh |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const RefactorResult& r : results) {
    std::printf("| %d³ | %d | %d | %d | %d / %d | %.3f | %.3f | %.3f | %.3f | %.1f | %.1f | %.1e | %.1e |\n", r.cells,
                r.n, r.threads, r.changed_elements, r.recomputed_supernodes, r.supernodes, r.flop_fraction,
                r.full_s, r.refactor_s, r.refactor_s / r.full_s, r.retained_bytes / 1e6,
                r.retained_derivative_bytes / 1e6, r.factor_difference, r.derivative_difference);
  }
}

void print_table(const std::vector<BoxResult>& results) {
  std::printf("| box | n | nnz(L) | threads | L (s) | L+L̇ (s) | ratio L+L̇ / L | forward FD (s) | "
              "ratio L+L̇ / forward | central FD (s) | flops L̇ / L | L̇ kernel time share | "
              "identity residual | forward FD error | central FD error |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const BoxResult& r : results) {
    std::printf("| %d³ | %d | %lld | %d | %.3f | %.3f | %.2f | %.3f | %.2f | %.3f | %.2f | %.0f %% | "
                "%.1e | %.1e (ε = %.1e) | %.1e (ε = %.1e) |\n",
                r.cells, r.n, static_cast<long long>(r.nnz_l), r.threads, r.factor_s, r.derivative_s,
                r.derivative_s / r.factor_s, r.forward_s, r.derivative_s / r.forward_s, r.central_s,
                r.derivative_flops / r.factor_flops, 100.0 * r.derivative_kernel_share,
                r.identity_residual, r.forward_error, r.forward_epsilon, r.central_error,
                r.central_epsilon);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Options options =
      bench::parse_command_line("bench_factor_derivative", [&] { return parse_options(argc, argv); });
  try {
    std::vector<BoxResult> results;
    std::vector<RefactorResult> refactor_results;
    for (Index cells : options.boxes) {
      std::fprintf(stderr, "box %d: assembling A and Ȧ...\n", cells);
      const BoxSystem system = box_system(cells);
      factor::AnalyzeOptions analyze_options;
      analyze_options.dofs_per_node = 3;
      const auto symbolic = factor::analyze(system.a, analyze_options);
      results.push_back(run_box(cells, system, symbolic, options));
      if (options.refactor_fraction > 0.0) refactor_results.push_back(run_refactor(system, symbolic, options));
    }
    print_table(results);
    if (!refactor_results.empty()) print_refactor_table(refactor_results, options.refactor_fraction);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_factor_derivative: %s\n", error.what());
    return 1;
  }
}

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
//   bench_factor_derivative [--boxes 20,32,46] [--threads T] [--repeat R]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "factor/cholesky_factor.hpp"
#include "factor/factor_derivative.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/generators.hpp"

namespace {

using cholsim::linalg::Index;
using cholsim::linalg::SymmetricCscMatrix;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<Index> boxes{20, 32, 46};  // 27,783 / 107,811 / 311,469 DOF
  int threads = 0;                        // 0: all hardware threads
  int repeat = 3;
};

using cholsim::bench::parse_list;

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + flag);
    const std::string value = argv[++i];
    if (flag == "--boxes") {
      options.boxes = parse_list<Index>(value);
    } else if (flag == "--threads") {
      options.threads = std::stoi(value);
    } else if (flag == "--repeat") {
      options.repeat = std::max(1, std::stoi(value));
    } else {
      throw std::invalid_argument("unknown option " + flag +
                                  " (usage: bench_factor_derivative [--boxes 20,32,46] [--threads T] [--repeat R])");
    }
  }
  return options;
}

// A and Ȧ on an n³-cell box: Ȧ by a forward difference of the assembly along the velocity
// field (seed 002 eq. 5.7), on the same pattern as A.
struct BoxSystem {
  SymmetricCscMatrix a;
  SymmetricCscMatrix a_dot;
};

BoxSystem box_system(Index cells) {
  const linalg::ElasticityBoxOptions material{.nx = cells, .ny = cells, .nz = cells, .cell_size = 1.0 / static_cast<double>(cells)};
  const linalg::TetMesh mesh = linalg::structured_tet_box(cells, cells, cells, material.cell_size);
  const linalg::AssemblyPattern pattern(mesh.node_count(), 3, 4, mesh.tets);
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
  BoxSystem system{assemble(mesh.positions), assemble(moved)};
  for (std::size_t p = 0; p < system.a.lower.values.size(); ++p) {
    system.a_dot.lower.values[p] = (system.a_dot.lower.values[p] - system.a.lower.values[p]) / h;
  }
  return system;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

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

BoxResult run_box(Index cells, const Options& options) {
  std::fprintf(stderr, "box %d: assembling A and Ȧ...\n", cells);
  const BoxSystem system = box_system(cells);
  factor::AnalyzeOptions analyze_options;
  analyze_options.dofs_per_node = 3;
  const auto symbolic = factor::analyze(system.a, analyze_options);
  const int threads = options.threads > 0 ? options.threads : linalg::hardware_threads();
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
  try {
    const Options options = parse_options(argc, argv);
    std::vector<BoxResult> results;
    for (Index cells : options.boxes) results.push_back(run_box(cells, options));
    print_table(results);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_factor_derivative: %s\n", error.what());
    return 1;
  }
}

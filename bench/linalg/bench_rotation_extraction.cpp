// Rotation extraction throughput and accuracy, seed 003 §4 (Table 4) protocol: 800,000
// deformation gradients F = R·D_s·D_m⁻¹ with R uniform on SO(3) restricted to ≤ 10° and
// the tetrahedron's vertices displaced by ≤ 10% of the mean edge length
// (random_near_rotation). Compared:
//   * svd-polar       polar_rotation (one-sided Jacobi SVD, R = U·Vᵀ) — the reference;
//   * apd cold        analytic_polar_decomposition from the identity, to tolerance 1e-12;
//   * apd cold 1-step the paper's setting: a single Newton step from the identity;
//   * apd warm        started from the converged answer of the previous time step, modelled
//                     as F_prev = ΔR·F·(I + E), ΔR ≤ 2°, |E_ij| ≤ 0.5% (computed untimed);
//   * apd warm 1-step the same with a single step;
//   * simd apd ...    the same four settings through analytic_polar_decomposition_batch
//                     (structure of arrays, 8 lanes, AVX-512/AVX2 clones picked at load time);
//   * svd3 full       the complete one-sided Jacobi SVD (U, Σ, V) polar_rotation is built on —
//                     the "Jacobi SVD" row of seed 003 Table 4.
// Errors are d(R_apd, R_svd) = ∠(R_apdᵀ·R_svd). Single-threaded.
// The paper's accuracy bar is enforced: a method whose mean error exceeds 0.05° is marked FAIL
// and the program exits 1; "svd/method" is the speedup over the SVD-based polar decomposition
// (the issue's target: ≥ 3× for the APD at the same accuracy).
//
// Arguments: bench_rotation_extraction --help (kUsage below).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/polar_decomposition.hpp"
#include "linalg/polar_decomposition_batch.hpp"
#include "linalg/small_matrix.hpp"
#include "linalg/svd3.hpp"

namespace {

using namespace cholsim::linalg;
namespace bench = cholsim::bench;

constexpr const char* kUsage = R"(usage: bench_rotation_extraction [count [repetitions]]

Rotation extraction throughput and accuracy, seed 003 section 4 (Table 4) protocol: the
SVD-based polar decomposition against the analytic polar decomposition (cold and warm started,
converged and single-step, scalar and SIMD batch) and the full Jacobi SVD, on random
near-rotation deformation gradients, single-threaded. Prints ns per matrix, the speedup over
the SVD, mean and max errors in degrees and mean iterations; exits 1 if an accuracy-matched
method's mean error reaches 0.05 deg.

  count          deformation gradients (default 800000, the paper's count)
  repetitions    timed passes per method, the best is reported (default 3)
  --help, -h     this text
)";

struct Arguments {
  std::size_t count = 800000;
  int repetitions = 3;
};

Arguments parse_arguments(int argc, char** argv) {
  const std::vector<std::string> positional = bench::positional_arguments(argc, argv, kUsage, 2);
  Arguments arguments;
  if (!positional.empty()) arguments.count = static_cast<std::size_t>(bench::parse_positive("count", positional[0]));
  if (positional.size() > 1) arguments.repetitions = bench::parse_positive("repetitions", positional[1]);
  return arguments;
}

constexpr double kDegreesPerRadian = 180.0 / std::numbers::pi;

/// Best wall time in nanoseconds per matrix of `repetitions` runs of `pass`.
template <typename Pass>
double best_ns_per_matrix(int repetitions, std::size_t count, Pass&& pass) {
  double best = 1e300;
  for (int rep = 0; rep < repetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(count));
  }
  return best;
}

struct ApdRun {
  std::string name;
  double ns_per_matrix = 0.0;
  double mean_error_degrees = 0.0;
  double max_error_degrees = 0.0;
  double mean_iterations = 0.0;
  /// A single step from the identity: shown for seed 003's "1 iteration" claim, but not an
  /// accuracy-matched method, so it is exempt from the 0.05° bar.
  bool informational = false;
};

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Arguments arguments =
      bench::parse_command_line("bench_rotation_extraction", [&] { return parse_arguments(argc, argv); });
  const std::size_t count = arguments.count;
  const int repetitions = arguments.repetitions;

  std::mt19937_64 rng(2018);
  std::vector<Mat3> gradients(count);
  for (Mat3& f : gradients) f = random_near_rotation(rng);

  // Previous time step: a slightly different F whose converged APD is the warm start.
  std::uniform_real_distribution<double> strain(-0.005, 0.005);
  std::vector<Quaternion> previous(count);
  for (std::size_t i = 0; i < count; ++i) {
    Mat3 perturbation = Mat3::identity();
    for (double& e : perturbation.entries) e += strain(rng);
    const Mat3 f_previous = to_rotation_matrix(random_rotation(rng, 2.0 / kDegreesPerRadian)) * gradients[i] * perturbation;
    previous[i] = analytic_polar_decomposition(f_previous, Quaternion{});
  }

  std::vector<Mat3> reference(count);
  const double svd_ns = best_ns_per_matrix(repetitions, count, [&] {
    for (std::size_t i = 0; i < count; ++i) reference[i] = polar_rotation(gradients[i]);
  });

  ApdOptions converged_options;  // tolerance 1e-12, the library default
  ApdOptions one_step_options;
  one_step_options.max_iterations = 1;

  std::vector<Quaternion> result(count);
  std::vector<ApdRun> runs;
  const auto run_apd = [&](const std::string& name, bool warm, const ApdOptions& options) {
    ApdRun run;
    run.name = name;
    run.informational = !warm && options.max_iterations == 1;
    run.ns_per_matrix = best_ns_per_matrix(repetitions, count, [&] {
      for (std::size_t i = 0; i < count; ++i) {
        result[i] = analytic_polar_decomposition(gradients[i], warm ? previous[i] : Quaternion{}, options);
      }
    });
    // Accuracy and iteration counts in an untimed pass (stats cost a store per call).
    for (std::size_t i = 0; i < count; ++i) {
      ApdStats stats;
      (void)analytic_polar_decomposition(gradients[i], warm ? previous[i] : Quaternion{}, options, &stats);
      run.mean_iterations += static_cast<double>(stats.iterations) / static_cast<double>(count);
      const double error = rotation_distance(to_rotation_matrix(result[i]), reference[i]) * kDegreesPerRadian;
      run.mean_error_degrees += error / static_cast<double>(count);
      run.max_error_degrees = std::max(run.max_error_degrees, error);
    }
    runs.push_back(run);
  };
  run_apd("apd cold", false, converged_options);
  run_apd("apd cold 1-step", false, one_step_options);
  run_apd("apd warm", true, converged_options);
  run_apd("apd warm 1-step", true, one_step_options);

  // The same through the batch routine: gradients as nine arrays, quaternions as four.
  std::array<std::vector<double>, 9> f_arrays;
  for (std::size_t k = 0; k < 9; ++k) {
    f_arrays[k].resize(count);
    for (std::size_t i = 0; i < count; ++i) f_arrays[k][i] = gradients[i].entries[k];
  }
  Mat3Arrays batch_gradients;
  for (std::size_t k = 0; k < 9; ++k) batch_gradients.entries[k] = f_arrays[k];
  std::array<std::vector<double>, 4> q_arrays;
  for (auto& a : q_arrays) a.resize(count);
  const QuaternionArrays batch_rotations{q_arrays[0], q_arrays[1], q_arrays[2], q_arrays[3]};
  const auto load_starts = [&](bool warm) {
    for (std::size_t i = 0; i < count; ++i) batch_rotations.set(static_cast<Index>(i), warm ? previous[i] : Quaternion{});
  };
  const auto run_batch = [&](const std::string& name, bool warm, const ApdOptions& options) {
    ApdRun run;
    run.name = name;
    run.informational = !warm && options.max_iterations == 1;
    ApdBatchStats stats;
    double best = 1e300;
    for (int rep = 0; rep < repetitions; ++rep) {
      load_starts(warm);  // untimed: the warm starts are the previous step's state
      const auto start = std::chrono::steady_clock::now();
      stats = analytic_polar_decomposition_batch(batch_gradients, batch_rotations, options);
      const auto stop = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(count));
    }
    run.ns_per_matrix = best;
    run.mean_iterations = static_cast<double>(stats.vector_iterations) * static_cast<double>(kApdBatchLanes) /
                          static_cast<double>(count);
    for (std::size_t i = 0; i < count; ++i) {
      const double error =
          rotation_distance(to_rotation_matrix(batch_rotations.get(static_cast<Index>(i))), reference[i]) * kDegreesPerRadian;
      run.mean_error_degrees += error / static_cast<double>(count);
      run.max_error_degrees = std::max(run.max_error_degrees, error);
    }
    runs.push_back(run);
  };
  ApdOptions simulation_options;  // the operator-splitting default: τ = 1e-3 rad
  simulation_options.tolerance = 1e-3;
  run_batch("simd apd cold", false, converged_options);
  run_batch("simd apd cold 1-step", false, one_step_options);
  run_batch("simd apd warm", true, converged_options);
  run_batch("simd apd warm 1e-3", true, simulation_options);
  run_batch("simd apd warm 1-step", true, one_step_options);

  std::vector<Svd3> decompositions(count);
  const double svd3_ns = best_ns_per_matrix(repetitions, count, [&] {
    for (std::size_t i = 0; i < count; ++i) decompositions[i] = svd3(gradients[i]);
  });

  std::printf("rotation extraction, %zu seed-003 near-rotations (<=10 deg, <=10%% vertex displacement), "
              "best of %d, single thread\n",
              count, repetitions);
  std::printf("%-22s %10s %12s %14s %14s %10s\n", "method", "ns/matrix", "svd/method", "mean err [deg]",
              "max err [deg]", "mean iter");
  std::printf("%-22s %10.1f %12.2f %14s %14s %10s\n", "svd-polar", svd_ns, 1.0, "(reference)", "", "");
  std::printf("%-22s %10.1f %12.2f %14s %14s %10s\n", "svd3 full (Jacobi)", svd3_ns, svd_ns / svd3_ns, "(same U,V)", "", "");
  constexpr double kMaxMeanErrorDegrees = 0.05;  // seed 003 §4
  bool all_accurate = true;
  for (const ApdRun& run : runs) {
    const bool accurate = run.mean_error_degrees < kMaxMeanErrorDegrees;
    if (!run.informational) all_accurate = all_accurate && accurate;
    const char* note = accurate ? "" : run.informational ? "  (above 0.05 deg: not accuracy-matched, informational)"
                                                         : "  FAIL (mean error >= 0.05 deg)";
    std::printf("%-22s %10.1f %12.2f %14.3e %14.3e %10.2f%s\n", run.name.c_str(), run.ns_per_matrix,
                svd_ns / run.ns_per_matrix, run.mean_error_degrees, run.max_error_degrees, run.mean_iterations, note);
  }
  return all_accurate ? 0 : 1;
}

// Seed 002 §5.5 (Fig. 5.4, 5.5, 5.9, 5.13 in shape): every Newton-type solver on the scene
// variants of Table 5.2, wall-clock time as a ratio to NEWTON-D measured in the same process,
// with nonlinear / PCG iteration counts, factorizations, the refactorized share of the flops
// (…-R), and the split of the time between factorizations (L̇ included), solves, Hessian
// assembly and energy/gradient evaluation. Every solver runs the same steps from the same
// state; the final positions are compared with NEWTON-D's (the issue's "same state" target:
// max deviation ≤ 1e-6 of the model size).
// Output: one Markdown table per variant on stdout, progress on stderr. Options: --help.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "fem/dynamics/dynamics_scenes.hpp"
#include "linalg/blas_kernels.hpp"
#include "solvers/integrators/time_integrator.hpp"
#include "solvers/nonlinear/newton_solver.hpp"

namespace {

namespace fem = cholsim::fem;
namespace bench = cholsim::bench;
namespace solvers = cholsim::solvers;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: bench_dynamics [options]

Newton / quasi-Newton solvers with fresh, frozen, extrapolated (L + h Ldot) and incrementally
refactorized Cholesky factors on the scenes of seed 002 Table 5.2. Markdown tables on stdout,
progress on stderr.

  --variants LIST   of bar, bar-e6e3, bar-e5e4, bar-e1e5, bar-nu042, bar-hetero, bar-aniso,
                    armadillo, armadillo-damped, armadillo-stvk, armadillo-corot, armadillo-bdf1,
                    armadillo-baraff, armadillo-h5e-3, armadillo-h2e-2, bunny, bodies50,
                    bodies100 (default bar,armadillo,bunny)
  --solvers LIST    of newton-d, newton-i, newton-l0, newton-l1, hybrid-l0, hybrid-l1, newton-r,
                    hybrid-r (default all; newton-d always runs first: it is the reference)
  --resolution R    mesh size relative to the thesis' Table 5.1 (default 1)
  --steps N         steps per run (default: bar 100 = its whole 5 s; armadillo 50; bunny 100;
                    bodies 100)
  --refactor-tolerance T   for newton-r / hybrid-r (default 0.05)
  --tolerance T     the Newton solves' relative tolerance on ‖∇E‖ (default 1e-6, thesis §5.5;
                    the absolute one stays 1e-6)
  --direct-probe-every N   newton-r / hybrid-r try NEWTON-D's way every N solves and keep the
                    faster (solvers::NewtonOptions::direct_probe_every; default 8, 0: never)
  --threads T       threads (default 2)
  --help, -h        this text
)";

struct Arguments {
  std::vector<std::string> variants{"bar", "armadillo", "bunny"};
  std::vector<std::string> solvers{"newton-d", "newton-i", "newton-l0", "newton-l1",
                                   "hybrid-l0", "hybrid-l1", "newton-r", "hybrid-r"};
  double resolution = 1.0;
  int steps = 0;
  double refactor_tolerance = 0.05;
  double relative_tolerance = solvers::NewtonOptions{}.relative_tolerance;
  int direct_probe_every = solvers::NewtonOptions{}.direct_probe_every;
  int threads = 2;
};

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  for (bench::ArgumentCursor cursor(argc, argv); cursor.next();) {
    const std::string& flag = cursor.flag();
    if (bench::is_help_flag(flag)) bench::exit_with_usage(kUsage);
    if (flag == "--variants") {
      arguments.variants = bench::parse_list<std::string>(cursor.value());
    } else if (flag == "--solvers") {
      arguments.solvers = bench::parse_list<std::string>(cursor.value());
      for (const std::string& name : arguments.solvers) (void)solvers::parse_method(name);
    } else if (flag == "--resolution") {
      arguments.resolution = bench::parse_number(flag, cursor.value());
    } else if (flag == "--steps") {
      arguments.steps = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--refactor-tolerance") {
      arguments.refactor_tolerance = bench::parse_number(flag, cursor.value());
    } else if (flag == "--tolerance") {
      arguments.relative_tolerance = bench::parse_number(flag, cursor.value());
    } else if (flag == "--direct-probe-every") {
      arguments.direct_probe_every = static_cast<int>(bench::parse_number(flag, cursor.value()));
    } else if (flag == "--threads") {
      arguments.threads = bench::parse_positive(flag, cursor.value());
    } else {
      throw bench::unknown_option(flag);
    }
  }
  // NEWTON-D first: every other solver is reported relative to it.
  std::erase(arguments.solvers, std::string("newton-d"));
  arguments.solvers.insert(arguments.solvers.begin(), "newton-d");
  return arguments;
}

/// A variant name as scene options (Table 5.2's rows) and its default step count.
struct Variant {
  fem::DynamicsSceneOptions options;
  int steps = 0;
};

Variant make_variant(const std::string& name, const Arguments& arguments) {
  Variant variant;
  fem::DynamicsSceneOptions& o = variant.options;
  o.resolution = arguments.resolution;
  o.threads = arguments.threads;
  o.mesh_directory = std::filesystem::path(CHOLSIM_SOURCE_DIR) / "data" / "meshes";
  const std::string scene = name.starts_with("bodies") ? "bodies" : name.substr(0, name.find('-'));
  o.kind = fem::parse_scene(scene);
  variant.steps = scene == "bar" ? 100 : (scene == "armadillo" ? 50 : 100);
  const std::map<std::string, std::function<void(fem::DynamicsSceneOptions&)>> tweaks = {
      {"bar", [](auto&) {}},
      {"bar-e6e3", [](auto& s) { s.youngs_modulus = 6e3; }},
      {"bar-e5e4", [](auto& s) { s.youngs_modulus = 5e4; }},
      {"bar-e1e5", [](auto& s) { s.youngs_modulus = 1e5; }},
      {"bar-nu042", [](auto& s) { s.poisson_ratio = 0.42; }},
      {"bar-hetero", [](auto& s) { s.heterogeneous = true; }},
      {"bar-aniso", [](auto& s) { s.anisotropic = true; }},
      {"armadillo", [](auto&) {}},
      {"armadillo-damped", [](auto& s) { s.damping = 1e-6; }},
      {"armadillo-stvk", [](auto& s) { s.model = fem::HyperelasticModel::stvk; }},
      {"armadillo-corot", [](auto& s) { s.model = fem::HyperelasticModel::corotated; }},
      {"armadillo-bdf1", [](auto& s) { s.integrator = solvers::IntegratorKind::bdf1; }},
      {"armadillo-baraff", [](auto& s) { s.integrator = solvers::IntegratorKind::baraff; }},
      {"armadillo-h5e-3", [](auto& s) { s.time_step = 5e-3; }},
      {"armadillo-h2e-2", [](auto& s) { s.time_step = 2e-2; }},
      {"bunny", [](auto&) {}},
      {"bodies50", [](auto& s) { s.body_count = 50; }},
      {"bodies100", [](auto& s) { s.body_count = 100; }},
  };
  const auto tweak = tweaks.find(name);
  if (tweak == tweaks.end()) throw std::invalid_argument("unknown variant '" + name + "' (see --help)");
  tweak->second(o);
  if (arguments.steps > 0) variant.steps = arguments.steps;
  return variant;
}

struct RunResult {
  double seconds = 0.0;
  solvers::NewtonStatistics sum;
  double refactorized_fraction = 0.0;  ///< mean over refactorizations
  int unconverged = 0;
  std::vector<double> final_positions;
};

RunResult run(const fem::DynamicsScene& scene, const std::string& solver_name, int steps, const Arguments& arguments) {
  std::unique_ptr<fem::ElasticSystem> system = fem::make_scene_system(scene);
  solvers::NewtonOptions options;
  options.threads = arguments.threads;
  options.refactor_tolerance = arguments.refactor_tolerance;
  options.relative_tolerance = arguments.relative_tolerance;
  options.direct_probe_every = arguments.direct_probe_every;
  options.dofs_per_node = 3;
  // Thesis §5.5.2.3: with the Baraff integrator the frozen / extrapolated factors were kept
  // for two steps.
  if (scene.integrator == solvers::IntegratorKind::baraff) options.refactor_every = 2;
  solvers::NewtonSolver solver(solvers::parse_method(solver_name), options);
  solvers::TimeIntegrator integrator(*system, solver, scene.integrator, scene.time_step);
  const std::vector<double> start = system->free_values(scene.mesh.positions);
  integrator.set_state(start, std::vector<double>(start.size(), 0.0));
  RunResult result;
  double fraction_sum = 0.0;
  const Clock::time_point begin = Clock::now();
  for (int step = 0; step < steps; ++step) {
    const solvers::IntegratorStepStatistics s = integrator.step();
    for (const solvers::NewtonStatistics& solve : s.solves) {
      result.sum.iterations += solve.iterations;
      result.sum.pcg_iterations += solve.pcg_iterations;
      result.sum.factorizations += solve.factorizations;
      result.sum.refactorizations += solve.refactorizations;
      result.sum.factor_seconds += solve.factor_seconds;
      result.sum.solve_seconds += solve.solve_seconds;
      result.sum.assembly_seconds += solve.assembly_seconds;
      result.sum.evaluation_seconds += solve.evaluation_seconds;
      result.sum.failed_line_searches += solve.failed_line_searches;
      fraction_sum += solve.refactorized_flop_fraction * solve.refactorizations;
      if (!solve.converged) ++result.unconverged;
    }
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  result.refactorized_fraction = result.sum.refactorizations > 0 ? fraction_sum / result.sum.refactorizations : 0.0;
  result.final_positions.assign(integrator.positions().begin(), integrator.positions().end());
  return result;
}

double model_size(const fem::DynamicsScene& scene) {
  const std::array<double, 6> box = fem::bounding_box(scene.mesh.positions);
  return std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
}

double max_deviation(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

void print_variant(const std::string& name, const fem::DynamicsScene& scene, int steps, const Arguments& arguments) {
  std::printf("\n### %s — %s, %d steps\n\n", name.c_str(), scene.description.c_str(), steps);
  std::printf("| solver | time (s) | vs NEWTON-D | iterations | PCG | factorizations | refactorizations (share) | "
              "factor | solve | assembly | evaluation | unconverged | max deviation / size |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  RunResult reference;
  const double size = model_size(scene);
  for (const std::string& solver : arguments.solvers) {
    std::fprintf(stderr, "bench_dynamics: %s, %s...\n", name.c_str(), solver.c_str());
    const RunResult r = run(scene, solver, steps, arguments);
    if (solver == "newton-d") reference = r;
    const auto share = [&](double seconds) { return 100.0 * seconds / r.seconds; };
    std::printf("| %s | %.2f | %.2f× | %d | %lld | %d | %d (%.2f) | %.0f %% | %.0f %% | %.0f %% | %.0f %% | %d | %.1e |\n",
                solver.c_str(), r.seconds, reference.seconds / r.seconds, r.sum.iterations,
                static_cast<long long>(r.sum.pcg_iterations), r.sum.factorizations, r.sum.refactorizations,
                r.refactorized_fraction, share(r.sum.factor_seconds), share(r.sum.solve_seconds),
                share(r.sum.assembly_seconds), share(r.sum.evaluation_seconds), r.unconverged,
                max_deviation(r.final_positions, reference.final_positions) / size);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Arguments arguments = bench::parse_command_line("bench_dynamics", [&] { return parse(argc, argv); });
  for (const std::string& name : arguments.variants) {
    const Variant variant = bench::parse_command_line("bench_dynamics", [&] { return make_variant(name, arguments); });
    const fem::DynamicsScene scene = fem::make_dynamics_scene(variant.options);
    print_variant(name, scene, variant.steps, arguments);
  }
  return 0;
}

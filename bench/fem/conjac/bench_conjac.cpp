// CONJAC against the full model per step (seed 002 §4.5, Fig. 4.3; issue 21): the DRAGON
// stand-in (fem/conjac/conjac_scenes.hpp) with 0–10 dynamic nodes and the full model
// (linearly implicit Euler) at the same h, and at h = 2e-3 for the cost per simulated second.
// Each configuration starts from rest, runs --warm-up steps, then --steps timed steps, in
// --rounds rounds that run the configurations in turn; the table gives the median step and
// the medians of its phases (fill: f and K; factor; solves; other) over all timed steps. Output: Markdown on stdout, progress on stderr, --json FILE.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_arguments.hpp"
#include "bench/bench_statistics.hpp"
#include "fem/conjac/adaptive_conjac.hpp"
#include "fem/conjac/conjac_scenes.hpp"
#include "fem/conjac/conjac_stepper.hpp"
#include "fem/conjac/dynamic_nodes.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/parallel_loops.hpp"

namespace {

using cholsim::linalg::Index;
namespace fem = cholsim::fem;

constexpr const char* kUsage = R"(bench_conjac — CONJAC against the full model per step (seed 002 Fig. 4.3, issue 21)
  --scene NAME       dragon (default), twist, or armadillo (adaptive: no dynamic node, the five
                     representatives never active, and switched by the liveliness metric)
  --dynamic LIST     dynamic-node counts (default 0,2,4,6,8,10)
  --steps N          timed steps per configuration (default 10)
  --warm-up N        untimed steps first (default 2)
  --rounds N         times every configuration runs, in turn (default 3); medians over all
  --threads N        factorization threads (default 0: all)
  --resolution R     mesh size relative to Table 4.1's (default 1)
  --json FILE        the numbers as JSON
)";

struct Options {
  std::string scene = "dragon";
  std::vector<Index> dynamic{0, 2, 4, 6, 8, 10};
  int steps = 10;
  int warm_up = 2;
  int rounds = 3;
  int threads = 0;
  double resolution = 1.0;
  std::string json;
};

Options parse_options(int argc, char** argv) {
  namespace bench = cholsim::bench;
  Options o;
  for (bench::ArgumentCursor cursor(argc, argv); cursor.next();) {
    const std::string& flag = cursor.flag();
    if (bench::is_help_flag(flag)) bench::exit_with_usage(kUsage);
    if (flag == "--scene") {
      o.scene = cursor.value();
    } else if (flag == "--dynamic") {
      o.dynamic = bench::parse_list<Index>(cursor.value());
    } else if (flag == "--steps") {
      o.steps = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--rounds") {
      o.rounds = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--warm-up") {
      o.warm_up = static_cast<int>(bench::parse_number(flag, cursor.value()));
    } else if (flag == "--threads") {
      o.threads = static_cast<int>(bench::parse_number(flag, cursor.value()));
    } else if (flag == "--resolution") {
      o.resolution = bench::parse_number(flag, cursor.value());
    } else if (flag == "--json") {
      o.json = cursor.value();
    } else {
      throw bench::unknown_option(flag);
    }
  }
  return o;
}

struct Row {
  std::string method;
  Index dynamic = 0;
  double time_step = 0.0;
  double beta = 0.0;
  double step = 0.0, fill = 0.0, factor = 0.0, solves = 0.0, other = 0.0;
  double max_displacement = 0.0;  ///< at the end, m (that the runs moved alike)
  double mean_active = 0.0;       ///< adaptive: mean dynamic representatives per step
};

/// The step and phase times of one configuration, pooled over the rounds.
struct Samples {
  std::vector<double> step, fill, factor, solves, other;
  double max_displacement = 0.0;
  double active_sum = 0.0;  ///< adaptive runs: active representatives summed over timed steps

  [[nodiscard]] Row row() const {
    Row r;
    r.step = cholsim::bench::median(step);
    r.fill = cholsim::bench::median(fill);
    r.factor = cholsim::bench::median(factor);
    r.solves = cholsim::bench::median(solves);
    r.other = cholsim::bench::median(other);
    r.max_displacement = max_displacement;
    r.mean_active = step.empty() ? 0.0 : active_sum / static_cast<double>(step.size());
    return r;
  }
};

// One run from the rest shape (and the scene's initial velocity): `warm_up` steps, then
// `steps` timed into `samples`.
template <typename Stepper>
void run(Stepper& stepper, fem::ElasticSystem& system, const fem::ConjacScene& scene, const Options& o, double time_step,
         Samples& samples) {
  std::vector<double> x = system.free_values(system.body().rest.positions);
  const std::vector<double> rest = x;
  std::vector<double> v = fem::initial_velocity(scene, system);
  double time = 0.0;
  for (int s = 0; s < o.warm_up + o.steps; ++s) {
    stepper.step(time, x, v);
    time += time_step;
    if (s < o.warm_up) continue;
    const fem::StepPhases& phases = stepper.last_phases();
    samples.step.push_back(phases.total());
    samples.fill.push_back(phases.fill);
    samples.factor.push_back(phases.factor);
    samples.solves.push_back(phases.solves);
    samples.other.push_back(phases.other);
    if constexpr (requires { stepper.active_count(); }) samples.active_sum += stepper.active_count();
  }
  samples.max_displacement = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) samples.max_displacement = std::max(samples.max_displacement, std::abs(x[i] - rest[i]));
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  try {
    const Options o = parse_options(argc, argv);
    const Index most = o.dynamic.empty() ? 0 : *std::max_element(o.dynamic.begin(), o.dynamic.end());
    fem::ConjacSceneOptions scene_options;
    scene_options.kind = fem::parse_conjac_scene(o.scene);
    scene_options.dynamic_nodes = most;
    scene_options.resolution = o.resolution;
    scene_options.mesh_directory = std::string(CHOLSIM_SOURCE_DIR) + "/data/meshes";
    scene_options.threads = cholsim::linalg::resolve_thread_count(o.threads);
    std::cerr << "[bench_conjac] building the " << o.scene << " scene...\n";
    const fem::ConjacScene scene = fem::make_conjac_scene(scene_options);
    auto system = fem::make_scene_system(scene.scene);
    std::printf("## CONJAC vs the full model per step: %s\n\n%s; %d free DOFs; %d threads; medians of %d rounds x %d steps after %d\n\n",
                o.scene.c_str(), scene.scene.description.c_str(), system->size(), scene_options.threads, o.rounds, o.steps,
                o.warm_up);
    // Configurations: the full model at the scene's h, CONJAC for each n_d, the full model at
    // h = 2e-3; every round runs them all in turn (machine drift hits all alike), --rounds times.
    constexpr double kSmallStep = 2e-3;
    struct Config {
      std::string method;
      Index dynamic;
      double time_step;
      double beta;
    };
    std::vector<Config> configs{{"full model", 0, scene.time_step, scene.full_beta}};
    if (scene.adaptive) {
      // §4.4: no dynamic node against the representatives switched by the metric, and against
      // them never switched on (every region inactive: the cost of adaptivity alone).
      const auto representatives = static_cast<Index>(scene.dynamic_nodes.size());
      configs.push_back({"CONJAC", 0, scene.time_step, scene.beta});
      configs.push_back({"adaptive, never active", representatives, scene.time_step, scene.beta});
      configs.push_back({"adaptive", representatives, scene.time_step, scene.beta});
    } else {
      for (const Index count : o.dynamic) configs.push_back({"CONJAC", count, scene.time_step, scene.beta});
      configs.push_back({"full model", 0, kSmallStep, scene.full_beta});
    }
    std::vector<Samples> samples(configs.size());
    for (int round = 1; round <= o.rounds; ++round) {
      for (std::size_t c = 0; c < configs.size(); ++c) {
        const Config& config = configs[c];
        std::cerr << "[bench_conjac] round " << round << "/" << o.rounds << ": " << config.method << ", n_d = " << config.dynamic
                  << ", h = " << config.time_step << "...\n";
        const fem::ConjacOptions options{config.time_step, config.beta, scene.gamma, o.threads};
        if (config.method.starts_with("adaptive")) {
          fem::LivelinessOptions liveliness;
          liveliness.threads = scene_options.threads;
          const bool never = config.method != "adaptive";
          if (never) liveliness.activate = std::numeric_limits<double>::infinity();
          fem::AdaptiveConjac adaptive(*system, scene.dynamic_nodes, options, liveliness, !never);
          run(adaptive, *system, scene, o, config.time_step, samples[c]);
        } else if (config.method == "CONJAC") {
          const std::vector<Index> nodes(scene.dynamic_nodes.begin(), scene.dynamic_nodes.begin() + config.dynamic);
          fem::ConjacStepper conjac(*system, fem::free_dofs_of_nodes(*system, nodes), options);
          run(conjac, *system, scene, o, config.time_step, samples[c]);
        } else {
          fem::LinearlyImplicitStepper full(*system, options);
          run(full, *system, scene, o, config.time_step, samples[c]);
        }
      }
    }
    std::vector<Row> rows;
    for (std::size_t c = 0; c < configs.size(); ++c) {
      Row row = samples[c].row();
      row.method = configs[c].method;
      row.dynamic = configs[c].dynamic;
      row.time_step = configs[c].time_step;
      row.beta = configs[c].beta;
      rows.push_back(row);
    }
    const double full_step = rows.front().step;
    std::printf("| method | n_d | h | beta | step ms | fill | factor | solves | other | / full model (same h) | per simulated s | max displacement | mean active |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    nlohmann::ordered_json json{{"scene", o.scene}, {"description", scene.scene.description}, {"free_dofs", system->size()},
                                {"rows", nlohmann::ordered_json::array()}};
    for (const Row& row : rows) {
      std::printf("| %s | %d | %.0e | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f | %.2f s | %.2e m | %.2f |\n",
                  row.method.c_str(), row.dynamic, row.time_step, row.beta, 1e3 * row.step, 1e3 * row.fill,
                  1e3 * row.factor, 1e3 * row.solves, 1e3 * row.other,
                  row.time_step == scene.time_step ? row.step / full_step : 0.0, row.step / row.time_step,
                  row.max_displacement, row.mean_active);
      json["rows"].push_back({{"method", row.method}, {"dynamic_nodes", row.dynamic}, {"time_step", row.time_step},
                              {"beta", row.beta}, {"step_seconds", row.step}, {"fill", row.fill}, {"factor", row.factor},
                              {"solves", row.solves}, {"other", row.other}, {"max_displacement", row.max_displacement},
                              {"mean_active", row.mean_active}});
    }
    // Targets of issue 21 (seed 002 §4.3.4: 1.20 at 4 nodes, 1.40 at 10; §4.5: > 2).
    if (scene.adaptive) {
      std::printf("\nadaptive with every region inactive / CONJAC without dynamic nodes: %.3f (target <= 1.05)\n",
                  rows[2].step / rows[1].step);
    }
    for (const Row& row : rows) {
      if (row.method != "CONJAC") continue;
      if (row.dynamic == 4) std::printf("\nCONJAC(4) / full: %.3f (target <= 1.08)\n", row.step / full_step);
      if (row.dynamic == 10) std::printf("CONJAC(10) / full: %.3f (target <= 1.20)\n", row.step / full_step);
      if (row.dynamic == 6) {
        const double full_small = rows.back().step / rows.back().time_step;
        std::printf("full model at h = 2e-3 / CONJAC(6) at h = %.0e, per simulated second: %.2f (target >= 2.5)\n",
                    scene.time_step, full_small / (row.step / row.time_step));
      }
    }
    if (!o.json.empty()) std::ofstream(o.json) << json.dump(2) << '\n';
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_conjac: error: " << e.what() << '\n';
    return 1;
  }
}

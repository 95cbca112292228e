// Seed 002 Table 2.1 in shape: every cloth scene and method with faces (#F), EOL-vertex share
// (%E), the phase shares of a step (%CD collision detection, %RM remeshing, %MF matrix fill,
// %VI the velocity QP) and ms per step, with the EOL step as a ratio to the conformal
// Lagrangian step measured in the same process. Then the QP alone: the QPs of a scene's steps
// are kept and replayed with the Schur-reduced interior point method, the full sparse one, the
// primal–dual active set method from an empty guess, the augmented Lagrangian method (polished)
// and the dual active-set method (small problems only), same problems, medians of repetitions.
// Output: Markdown tables on stdout, progress on stderr. Options: --help.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_statistics.hpp"
#include "fem/cloth/cloth_scenes.hpp"
#include "linalg/blas_kernels.hpp"
#include "solvers/qp/active_set.hpp"
#include "solvers/qp/augmented_lagrangian.hpp"
#include "solvers/qp/interior_point.hpp"
#include "solvers/qp/primal_dual_active_set.hpp"

namespace {

namespace cloth = cholsim::fem::cloth;
namespace qp = cholsim::solvers::qp;
namespace bench = cholsim::bench;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: bench_cloth [options]

EOL and Lagrangian cloth on the scenes of seed 002 §2.7 (Table 2.1's columns), then the velocity
QPs of those runs replayed with each QP back end. One thread (as the thesis). Markdown on stdout.

  --scenes LIST    of edge, wire, nails, jaws, push, throw, lo-res, friction (default edge,wire)
  --methods LIST   of lagrangian-regular, lagrangian-conformal, eol (default all three)
  --cells N        cells along each side of the cloth (default: the scene's, 39 = 3,042 faces)
  --steps N        steps per run (default: the scene's duration)
  --qp-every K     keep every K-th step's QP of the EOL runs for the replay (default 25)
  --repeat R       replays of each kept QP per back end (default 3)
  --active-set-limit N   replay with the active-set method only up to N unknowns (default 2500)
  --no-qp          skip the QP replay
  --interior-point-only  step with the interior point method alone (no active set method first)
  --lagrangian-first     where the active set method fails, the augmented Lagrangian method before
                         the interior point method (default: after it, as the last resort)
  --help, -h       this text
)";

struct Arguments {
  std::vector<std::string> scenes{"edge", "wire"};
  std::vector<std::string> methods{"lagrangian-regular", "lagrangian-conformal", "eol"};
  int cells = 0;
  int steps = 0;
  int qp_every = 25;
  int repeat = 3;
  int active_set_limit = 2500;
  bool replay = true;
  bool interior_point_only = false;
  bool lagrangian_first = false;
};

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  for (bench::ArgumentCursor cursor(argc, argv); cursor.next();) {
    const std::string& flag = cursor.flag();
    if (bench::is_help_flag(flag)) bench::exit_with_usage(kUsage);
    if (flag == "--scenes") {
      arguments.scenes = bench::parse_list<std::string>(cursor.value());
      for (const std::string& name : arguments.scenes) (void)cloth::parse_cloth_scene(name);
    } else if (flag == "--methods") {
      arguments.methods = bench::parse_list<std::string>(cursor.value());
      for (const std::string& name : arguments.methods) (void)cloth::parse_cloth_method(name);
    } else if (flag == "--cells") {
      arguments.cells = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--steps") {
      arguments.steps = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--qp-every") {
      arguments.qp_every = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--repeat") {
      arguments.repeat = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--active-set-limit") {
      arguments.active_set_limit = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--no-qp") {
      arguments.replay = false;
    } else if (flag == "--lagrangian-first") {
      arguments.lagrangian_first = true;
    } else if (flag == "--interior-point-only") {
      arguments.interior_point_only = true;
    } else {
      throw bench::unknown_option(flag);
    }
  }
  return arguments;
}

/// One run's Table 2.1 row.
struct RunRow {
  std::string scene, method;
  long max_faces = 0;
  double eol_share = 0.0;
  double collision = 0.0, remesh = 0.0, fill = 0.0, qp_time = 0.0, total = 0.0;
  int steps = 0;
  int failed_steps = 0;
  int active_set_solves = 0, interior_point_solves = 0, augmented_lagrangian_solves = 0;
  double min_gap = 1e300;
  [[nodiscard]] double ms_per_step() const { return steps > 0 ? 1e3 * total / steps : 0.0; }
  [[nodiscard]] double percent(double part) const { return total > 0.0 ? 100.0 * part / total : 0.0; }
};

RunRow run_scene(const Arguments& arguments, const std::string& scene_name, const std::string& method,
                 std::vector<qp::QpProblem>* kept) {
  cloth::ClothSceneOptions options;
  options.kind = cloth::parse_cloth_scene(scene_name);
  options.method = cloth::parse_cloth_method(method);
  options.cells = arguments.cells;
  cloth::ClothScene scene = cloth::make_cloth_scene(options);
  scene.options.qp.threads = 1;
  scene.options.active_set.threads = 1;
  scene.options.augmented_lagrangian.threads = 1;
  scene.options.active_set_first = !arguments.interior_point_only;
  scene.options.lagrangian_before_interior_point = arguments.lagrangian_first;
  cloth::ClothSimulation simulation(scene.cloth, scene.obstacles, scene.scripted, scene.options);
  const int steps =
      arguments.steps > 0 ? arguments.steps : static_cast<int>(scene.duration / scene.options.time_step + 0.5);
  RunRow row{scene_name, method};
  for (int step = 1; step <= steps; ++step) {
    const cloth::ClothStepStats s = simulation.step();
    row.max_faces = std::max<long>(row.max_faces, s.faces);
    row.eol_share = std::max(row.eol_share, s.vertices > 0 ? double(s.eol_vertices) / double(s.vertices) : 0.0);
    row.collision += s.collision_seconds;
    row.remesh += s.remesh_seconds;
    row.fill += s.fill_seconds;
    row.qp_time += s.qp_seconds;
    row.total += s.total_seconds;
    row.min_gap = std::min(row.min_gap, s.min_gap);
    row.active_set_solves += s.active_set_solves;
    row.interior_point_solves += s.interior_point_solves;
    row.augmented_lagrangian_solves += s.augmented_lagrangian_solves;
    ++row.steps;
    if (!s.ok) {
      ++row.failed_steps;
      std::fprintf(stderr, "  %s %s step %d: QP %s\n", scene_name.c_str(), method.c_str(), step, s.qp_status.c_str());
      break;
    }
    if (kept != nullptr && step % arguments.qp_every == 0) kept->push_back(simulation.last_problem());
  }
  std::fprintf(stderr, "  %s / %s: %d steps, %.2f ms a step\n", scene_name.c_str(), method.c_str(), row.steps,
               row.ms_per_step());
  return row;
}

void print_table(const std::vector<RunRow>& rows) {
  std::printf("\n| scene | method | #F | %%E | %%CD | %%RM | %%MF | %%VI | T (ms) | / conformal | least gap (m) | "
              "QPs by active set / augmented Lagrangian / interior point |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::map<std::string, double> conformal;
  for (const RunRow& r : rows) {
    if (r.method == "lagrangian-conformal") conformal[r.scene] = r.ms_per_step();
  }
  for (const RunRow& r : rows) {
    const auto c = conformal.find(r.scene);
    std::string ratio = "—";
    if (c != conformal.end() && c->second > 0.0) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2f", r.ms_per_step() / c->second);
      ratio = text;
    }
    std::printf("| %s | %s%s | %ld | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %s | %.1e | %d / %d / %d |\n", r.scene.c_str(),
                r.method.c_str(), r.failed_steps > 0 ? " (QP failed)" : "", r.max_faces, 100.0 * r.eol_share,
                r.percent(r.collision), r.percent(r.remesh), r.percent(r.fill), r.percent(r.qp_time), r.ms_per_step(),
                ratio.c_str(), r.min_gap, r.active_set_solves, r.augmented_lagrangian_solves, r.interior_point_solves);
  }
}

double time_solve(const std::function<bool()>& solve, int repeat, bool& ok) {
  std::vector<double> seconds;
  ok = true;
  for (int r = 0; r < repeat; ++r) {
    const Clock::time_point start = Clock::now();
    ok = solve() && ok;
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return bench::median(seconds);
}

void replay(const Arguments& arguments, const std::string& scene, const std::vector<qp::QpProblem>& problems) {
  std::printf("\n#### %s-EOL velocity QPs replayed (one thread, median of %d)\n\n", scene.c_str(), arguments.repeat);
  std::printf("| QP | n | m constrained | rows (eq + ineq) | Schur IPM (ms) | it. | sparse IPM (ms) | it. | "
              "sparse / Schur | primal-dual active set, empty guess (ms) | it. | augmented Lagrangian, polished (ms) | "
              "Newton + polish guesses | dual active set (ms) | max |x diff| |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int index = 0;
  for (const qp::QpProblem& problem : problems) {
    qp::InteriorPointOptions schur_options;
    schur_options.backend = qp::QpBackend::schur_reduced;
    schur_options.threads = 1;
    qp::InteriorPointOptions sparse_options = schur_options;
    sparse_options.backend = qp::QpBackend::sparse;
    qp::InteriorPointResult schur, sparse;
    bool schur_ok = false, sparse_ok = false;
    const double schur_s = time_solve(
        [&] {
          schur = qp::solve_interior_point(problem, schur_options);
          return schur.solution.status == qp::QpStatus::optimal;
        },
        arguments.repeat, schur_ok);
    const double sparse_s = time_solve(
        [&] {
          sparse = qp::solve_interior_point(problem, sparse_options);
          return sparse.solution.status == qp::QpStatus::optimal;
        },
        arguments.repeat, sparse_ok);
    // The solvers that return a QpSolution, timed alike.
    const auto time_qp_solution = [&](const auto& solve, qp::QpSolution& solution, bool& ok) {
      return time_solve(
          [&] {
            solution = solve();
            return solution.status == qp::QpStatus::optimal;
          },
          arguments.repeat, ok);
    };
    qp::QpSolution primal_dual;
    bool primal_dual_ok = false;
    const double primal_dual_s = time_qp_solution(
        [&] { return qp::solve_primal_dual_active_set(problem, {.threads = 1}); }, primal_dual, primal_dual_ok);
    qp::QpSolution lagrangian;
    bool lagrangian_ok = false;
    const double lagrangian_s = time_qp_solution(
        [&] { return qp::solve_augmented_lagrangian(problem, {.threads = 1}); }, lagrangian, lagrangian_ok);
    double difference = 0.0;
    for (std::size_t i = 0; i < schur.solution.x.size() && i < sparse.solution.x.size(); ++i) {
      difference = std::max(difference, std::abs(schur.solution.x[i] - sparse.solution.x[i]));
    }
    std::string active_set = "—";
    if (problem.variable_count() <= arguments.active_set_limit) {
      bool ok = false;
      const double s = time_solve(
          [&] { return qp::solve_active_set(problem).status == qp::QpStatus::optimal; }, arguments.repeat, ok);
      char text[32];
      std::snprintf(text, sizeof text, ok ? "%.2f" : "%.2f (failed)", 1e3 * s);
      active_set = text;
    }
    std::printf("| %d | %d | %d | %d + %d | %.2f%s | %d | %.2f%s | %d | %.2f | %.2f%s | %d | %.2f%s | %d | %s | %.1e |\n",
                ++index,
                static_cast<int>(problem.variable_count()), static_cast<int>(qp::constrained_columns(problem).size()),
                static_cast<int>(problem.equality_count()), static_cast<int>(problem.inequality_count()), 1e3 * schur_s,
                schur_ok ? "" : " (failed)", schur.solution.iterations, 1e3 * sparse_s, sparse_ok ? "" : " (failed)",
                sparse.solution.iterations, sparse_s / schur_s, 1e3 * primal_dual_s, primal_dual_ok ? "" : " (failed)",
                primal_dual.iterations, 1e3 * lagrangian_s, lagrangian_ok ? "" : " (failed)", lagrangian.iterations,
                active_set.c_str(), difference);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Arguments arguments = bench::parse_command_line("bench_cloth", [&] { return parse(argc, argv); });
  std::vector<RunRow> rows;
  std::map<std::string, std::vector<qp::QpProblem>> kept;
  for (const std::string& scene : arguments.scenes) {
    for (const std::string& method : arguments.methods) {
      const bool keep = arguments.replay && method == "eol";
      rows.push_back(run_scene(arguments, scene, method, keep ? &kept[scene] : nullptr));
    }
  }
  std::printf("### Table 2.1 in shape (one thread)\n");
  print_table(rows);
  for (const auto& [scene, problems] : kept) replay(arguments, scene, problems);
  return 0;
}

// Joint friction by bilateral staggered projections against staggered projections (seed 002
// §3.4, issue 21): time per step and staggered iterations on CHAIN (several lengths) and the
// KLANN walker, the crank torque against joint friction (Fig. 3.3b), and REDMAX's regression
// energies for the scenes we rebuild. Each configuration runs --rounds times, the methods in
// turn; times are medians over every timed step of every round. Markdown on stdout, progress on
// stderr, --json FILE.
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_arguments.hpp"
#include "bench/bench_statistics.hpp"
#include "fem/articulated/joint_simulation.hpp"
#include "linalg/blas_kernels.hpp"

namespace {

namespace art = cholsim::fem::articulated;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(bench_joints — BISP against staggered projections (seed 002 §3.4, issue 21)
  --experiment LIST   chain, klann, torque, redmax (default all)
  --links LIST        CHAIN lengths (default 5,10,20)
  --friction MU       joint μ for CHAIN and the KLANN timing (default 0.6)
  --time-step H       both methods' step (default 1e-3: staggered projections in maximal
                      coordinates are explicit in the forces and drift at larger steps)
  --duration T        simulated seconds per CHAIN and KLANN timing run (default 0.5)
  --torque-duration T simulated seconds per KLANN torque run (default 2)
  --rounds N          runs per configuration, methods in turn (default 3)
  --json FILE         the numbers as JSON
)";

struct Options {
  std::vector<std::string> experiments{"chain", "klann", "torque", "redmax"};
  std::vector<int> links{5, 10, 20};
  double friction = 0.6;
  double time_step = 1e-3;
  double duration = 0.5;
  double torque_duration = 2.0;
  int rounds = 3;
  std::string json;
};

Options parse_options(int argc, char** argv) {
  namespace bench = cholsim::bench;
  Options o;
  for (bench::ArgumentCursor cursor(argc, argv); cursor.next();) {
    const std::string& flag = cursor.flag();
    if (bench::is_help_flag(flag)) bench::exit_with_usage(kUsage);
    if (flag == "--experiment") {
      o.experiments = bench::parse_list<std::string>(cursor.value());
    } else if (flag == "--links") {
      o.links = bench::parse_list<int>(cursor.value());
    } else if (flag == "--friction") {
      o.friction = bench::parse_number(flag, cursor.value());
    } else if (flag == "--time-step") {
      o.time_step = bench::parse_number(flag, cursor.value());
    } else if (flag == "--duration") {
      o.duration = bench::parse_number(flag, cursor.value());
    } else if (flag == "--torque-duration") {
      o.torque_duration = bench::parse_number(flag, cursor.value());
    } else if (flag == "--rounds") {
      o.rounds = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--json") {
      o.json = cursor.value();
    } else {
      throw bench::unknown_option(flag);
    }
  }
  for (int l : o.links) {
    if (l < 1) throw std::invalid_argument("--links: every length must be ≥ 1");
  }
  if (!(o.time_step > 0.0) || !(o.duration >= o.time_step) || !(o.torque_duration >= o.time_step) || !(o.friction >= 0.0)) {
    throw std::invalid_argument("--time-step > 0, durations ≥ one step, --friction ≥ 0");
  }
  return o;
}

bool wants(const Options& o, const std::string& experiment) {
  for (const std::string& e : o.experiments) {
    if (e == experiment) return true;
  }
  return false;
}

/// One run's per-step seconds and staggered iterations.
struct Run {
  std::vector<double> step_seconds;
  double iterations = 0.0;  ///< mean per step
  int unconverged = 0;
  double mean_abs_torque = 0.0;
  double motor_work = 0.0;
  double chassis_travel = 0.0;
};

Run run(art::ArticulatedScene scene, art::JointMethod method, double friction,
        art::FrictionRows maximal_rows = art::FrictionRows::per_tangent) {
  const double h = scene.time_step;
  const auto steps = std::lround(scene.duration / h);
  const std::vector<art::DrivenJoint> drivers = scene.constraints.drivers;
  art::JointSimulation simulation(std::move(scene), method, {.friction = friction}, maximal_rows);
  const double start_x = simulation.body_to_world(0).translation.x;
  Run r;
  for (long k = 0; k < steps; ++k) {
    const Clock::time_point start = Clock::now();
    const art::JointFrictionStepStats stats = simulation.step();
    r.step_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    r.iterations += stats.iterations;
    r.unconverged += stats.converged ? 0 : 1;
    const std::vector<double> torques = simulation.driver_torques();
    for (std::size_t d = 0; d < torques.size(); ++d) {
      r.mean_abs_torque += std::abs(torques[d]) / static_cast<double>(torques.size());
      r.motor_work += torques[d] * drivers[d].rate * h;
    }
  }
  r.iterations /= static_cast<double>(steps);
  r.mean_abs_torque /= static_cast<double>(steps);
  r.chassis_travel = simulation.body_to_world(0).translation.x - start_x;
  return r;
}

/// BISP and staggered projections (a friction row per contact tangent, as the thesis' SP, and
/// one per joint, BISP's QP size) on one scene, in turn, --rounds times.
nlohmann::ordered_json compare(const std::string& label, const auto& make_scene, double friction, const Options& o) {
  std::vector<double> bisp_seconds, sp_seconds, sp_joint_seconds;
  double bisp_iterations = 0.0, sp_iterations = 0.0;
  int sp_unconverged = 0, bisp_unconverged = 0;
  for (int round = 1; round <= o.rounds; ++round) {
    std::cerr << "[bench_joints] " << label << ", round " << round << "/" << o.rounds << "\n";
    const Run b = run(make_scene(), art::JointMethod::bisp, friction);
    const Run s = run(make_scene(), art::JointMethod::staggered_projections, friction);
    const Run j = run(make_scene(), art::JointMethod::staggered_projections, friction, art::FrictionRows::per_dof);
    sp_joint_seconds.insert(sp_joint_seconds.end(), j.step_seconds.begin(), j.step_seconds.end());
    bisp_seconds.insert(bisp_seconds.end(), b.step_seconds.begin(), b.step_seconds.end());
    sp_seconds.insert(sp_seconds.end(), s.step_seconds.begin(), s.step_seconds.end());
    bisp_iterations += b.iterations / o.rounds;
    sp_iterations += s.iterations / o.rounds;
    bisp_unconverged += b.unconverged;
    sp_unconverged += s.unconverged;
  }
  const double bisp = cholsim::bench::median(bisp_seconds), sp = cholsim::bench::median(sp_seconds),
               sp_joint = cholsim::bench::median(sp_joint_seconds);
  std::printf("| %s | %.3f | %.2f | %.3f | %.2f | %.1f× | %.3f | %.1f× |\n", label.c_str(), 1e3 * bisp, bisp_iterations,
              1e3 * sp, sp_iterations, sp / bisp, 1e3 * sp_joint, sp_joint / bisp);
  if (bisp_unconverged + sp_unconverged > 0) {
    std::printf("|  (steps at the iteration cap: BISP %d, SP %d) | | | | | | | |\n", bisp_unconverged, sp_unconverged);
  }
  return {{"scene", label},
          {"bisp_ms_per_step", 1e3 * bisp},
          {"bisp_iterations", bisp_iterations},
          {"bisp_steps_at_cap", bisp_unconverged},
          {"sp_ms_per_step", 1e3 * sp},
          {"sp_iterations", sp_iterations},
          {"sp_over_bisp", sp / bisp},
          {"sp_per_joint_ms_per_step", 1e3 * sp_joint},
          {"sp_per_joint_over_bisp", sp_joint / bisp}};
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Options o = cholsim::bench::parse_command_line("bench_joints", [&] { return parse_options(argc, argv); });
  nlohmann::ordered_json json;
  if (wants(o, "chain") || wants(o, "klann")) {
    std::printf("## BISP vs staggered projections (h = %g s, %g s simulated, μ = %g, %d rounds)\n\n", o.time_step,
                o.duration, o.friction, o.rounds);
    std::printf("| scene | BISP ms/step | BISP iterations | SP ms/step | SP iterations | SP / BISP | SP, a friction row per joint, ms/step | ratio |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  if (wants(o, "chain")) {
    for (int links : o.links) {
      auto make = [&] {
        art::ChainOptions chain;
        chain.links = links;
        chain.friction = o.friction;
        chain.time_step = o.time_step;
        chain.duration = o.duration;
        return art::make_chain_scene(chain);
      };
      json["chain"].push_back(compare("CHAIN " + std::to_string(links), make, o.friction, o));
    }
  }
  if (wants(o, "klann")) {
    auto make = [&] {
      art::KlannOptions klann;
      klann.joint_friction = o.friction;
      klann.time_step = o.time_step;
      klann.duration = o.duration;
      return art::make_klann_scene(klann);
    };
    json["klann"] = compare("KLANN", make, o.friction, o);
  }
  if (wants(o, "torque")) {
    std::printf("\n## KLANN: crank torque against joint friction (BISP, h = 5e-3 s, %g s, floor μ 0.8)\n\n",
                o.torque_duration);
    std::printf("| joint μ | mean \\|torque\\| per crank (g cm²/s²) | motor work (g cm²/s²) | chassis travel (cm) | ms/step |\n");
    std::printf("|---:|---:|---:|---:|---:|\n");
    for (double mu : {0.0, 0.2, 0.4, 0.6, 0.8}) {
      std::cerr << "[bench_joints] KLANN torque, joint mu " << mu << "\n";
      art::KlannOptions klann;
      klann.joint_friction = mu;
      klann.duration = o.torque_duration;
      const Run r = run(art::make_klann_scene(klann), art::JointMethod::bisp, mu);
      std::printf("| %.1f | %.4g | %.4g | %.2f | %.2f |\n", mu, r.mean_abs_torque, r.motor_work, r.chassis_travel,
                  1e3 * cholsim::bench::median(r.step_seconds));
      json["torque"].push_back({{"joint_friction", mu},
                                {"mean_abs_torque", r.mean_abs_torque},
                                {"motor_work", r.motor_work},
                                {"chassis_travel_cm", r.chassis_travel}});
    }
  }
  if (wants(o, "redmax")) {
    std::printf("\n## REDMAX regression energies (testRedMaxScenes.m, REDMAX_EULER)\n\n");
    std::printf("| scene | ours | REDMAX | difference |\n|---|---:|---:|---:|\n");
    struct Reference {
      int id;
      double energy;
      art::JointMethod method;
      double friction;  ///< REDMAX's scene.mu
    };
    for (const Reference& ref : {Reference{-1, -3697.4545694454454861, art::JointMethod::frictionless, 0.6},
                                 Reference{0, -5930.8171118834870867, art::JointMethod::frictionless, 0.6},
                                 Reference{27, -137371.1285153437056579, art::JointMethod::bisp, 0.6},
                                 Reference{33, 19598.8605086512579874, art::JointMethod::bisp, 0.8}}) {
      art::ArticulatedScene scene = art::make_redmax_scene(ref.id);
      const auto steps = std::lround(scene.duration / scene.time_step);
      art::JointSimulation simulation(std::move(scene), ref.method, {.friction = ref.friction, .redmax_compatible = true});
      for (long k = 0; k < steps; ++k) simulation.step();
      const art::Energies e = simulation.energies();
      const double h = e.kinetic + e.potential;
      std::printf("| %d | %.6f | %.6f | %.2e |\n", ref.id, h, ref.energy, h - ref.energy);
      json["redmax"].push_back({{"scene", ref.id}, {"energy", h}, {"reference", ref.energy}});
    }
  }
  if (!o.json.empty()) std::ofstream(o.json) << json.dump(2) << "\n";
  return 0;
}

// `cholsim joints`: articulated rigid bodies with friction inside their joints (seed 002 ch. 3)
// — the thesis' CHAIN (§3.4, Fig. 3.2) or one of REDMAX's regression scenes — stepped by BISP
// (Algorithm 3.2, reduced coordinates), staggered projections (Algorithm 3.1, maximal
// coordinates) or REDMAX's frictionless step (fem/articulated/joint_simulation.hpp). Writes the
// links as cuboids and the joints as points per frame for ParaView, a CSV of each step's energy
// and solver work, and a summary with each joint's final state and whether it has stopped
// (Fig. 3.2: the CHAIN stops root-first, sooner with wider joints).
#include "joints_command.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <iostream>
#include <memory>
#include <numbers>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "fem/articulated/joint_simulation.hpp"
#include "interrupt_signals.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "run_monitor.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace joints_command {
namespace {

namespace art = fem::articulated;
using linalg::Index;
using linalg::Vec3;

void progress(const std::string& line) { std::cerr << "cholsim joints: " << line << std::endl; }

/// The scenes by their --scene name; each is one branch of build_scene().
const std::vector<std::string> scene_names{"chain", "klann", "redmax-1", "redmax0", "redmax27", "redmax33"};

struct JointsCommandOptions {
  std::string scene = "chain";
  std::string method = "bisp";
  int links = art::ChainOptions{}.links;                 ///< CHAIN only
  double joint_radius = art::ChainOptions{}.joint_radius;  ///< CHAIN only: R of Fig. 3.2
  double friction = -1.0;   ///< μ in the joints; < 0: the scene's (0 for a scene without joint friction)
  bool redmax_compatible = false;  ///< BISP as REDMAX's MATLAB code (JointFrictionOptions::redmax_compatible)
  double time_step = 0.0;   ///< 0: the scene's
  double duration = 0.0;    ///< 0: the scene's
  int frame_every = 0;      ///< 0: about frames_per_second frames per simulated second
  std::string out = "joints-out";
  bool json = false;
  std::string max_output = "2G";
  bool chain_flags_given = false;  ///< --links or --joint-radius was on the command line
};

/// The default --frame-every aims at this many frames per simulated second (video rate).
constexpr double frames_per_second = 30.0;
/// A joint has stopped when each |q̇ₖ| of it stayed below stopped_speed (rad/s, cm/s) over the
/// last stopped_share of the run.
constexpr double stopped_speed = 1e-3;
constexpr double stopped_share = 0.1;

constexpr const char* summary_file_name = "summary.json";
constexpr const char* steps_file_name = "steps.csv";

art::ArticulatedScene build_scene(const JointsCommandOptions& flags) {
  if (flags.chain_flags_given && flags.scene != "chain") {
    throw BadInputError("--links and --joint-radius apply to --scene chain only, not " + flags.scene);
  }
  art::ArticulatedScene scene;
  if (flags.scene == "chain") {
    art::ChainOptions chain;
    chain.links = flags.links;
    chain.joint_radius = flags.joint_radius;
    scene = art::make_chain_scene(chain);
  } else if (flags.scene == "klann") {
    art::KlannOptions klann;
    klann.joint_friction = std::max(flags.friction, 0.0);
    scene = art::make_klann_scene(klann);
  } else if (flags.scene == "redmax-1") {
    scene = art::make_redmax_scene(-1);
  } else if (flags.scene == "redmax0") {
    scene = art::make_redmax_scene(0);
  } else if (flags.scene == "redmax27") {
    scene = art::make_redmax_scene(27);
  } else if (flags.scene == "redmax33") {
    scene = art::make_redmax_scene(33);
  } else {
    throw BadInputError("unknown --scene '" + flags.scene + "'");
  }
  if (flags.time_step > 0.0) scene.time_step = flags.time_step;
  if (flags.duration > 0.0) scene.duration = flags.duration;
  if (flags.friction >= 0.0) {
    scene.joint_friction = true;
    scene.joint_friction_coefficient = flags.friction;
  }
  return scene;
}

/// μ the joints get: a scene without joint friction (REDMAX's −1 and 0) keeps its frictionless
/// joints under every method unless --friction says otherwise.
double joint_friction_coefficient(const art::ArticulatedScene& scene) {
  return scene.joint_friction ? scene.joint_friction_coefficient : 0.0;
}

struct RunPlan {
  int steps = 0;
  int frame_every = 1;
};

RunPlan plan_run(const art::ArticulatedScene& scene, const JointsCommandOptions& flags) {
  const double steps = std::round(scene.duration / scene.time_step);
  if (!(steps >= 1.0)) {
    throw BadInputError("--duration " + format_scientific(scene.duration) + " s is shorter than one time step (" +
                        format_scientific(scene.time_step) + " s)");
  }
  if (steps > static_cast<double>(INT_MAX)) {
    throw BadInputError("--duration / --time-step asks for " + format_scientific(steps) + " steps; at most " +
                        std::to_string(INT_MAX));
  }
  RunPlan plan;
  plan.steps = static_cast<int>(steps);
  plan.frame_every = flags.frame_every > 0
                         ? flags.frame_every
                         : std::max(1, static_cast<int>(std::lround(1.0 / (frames_per_second * scene.time_step))));
  return plan;
}

const char* kind_name(art::JointKind kind) {
  switch (kind) {
    case art::JointKind::fixed: return "fixed";
    case art::JointKind::revolute: return "revolute";
    case art::JointKind::prismatic: return "prismatic";
    case art::JointKind::spherical: return "spherical";
    case art::JointKind::free: return "free";
  }
  return "?";
}

/// E_wj, the joint's frame in the world, from the frame of the body it moves: E_wi = E_wj E_ji.
art::RigidTransform joint_to_world(const art::JointSimulation& simulation, int link) {
  return simulation.body_to_world(link) * art::inverse(simulation.scene().system.body(link).in_joint);
}

/// Each joint's coordinates q and rates q̇, for the summary and the stop test. The reduced
/// methods keep them in the scene's system. Staggered projections moves free bodies and leaves
/// that system at its start, so there a 1-DOF joint's coordinate is measured from the frames
/// of the two bodies it joins (the angle unwrapped from step to step) and its rate by
/// differences; other joints are not measured in maximal coordinates (known() is false).
class JointReadout {
 public:
  explicit JointReadout(const art::JointSimulation& simulation)
      : simulation_(simulation),
        maximal_(simulation.method() == art::JointMethod::staggered_projections),
        positions_(simulation.scene().system.positions()),
        velocities_(simulation.scene().system.velocities()) {}

  /// After each step of `time_step`.
  void update(double time_step) {
    if (!maximal_) return;
    for (int link = 0; link < system().link_count(); ++link) {
      if (system().link_dof_count(link) != 1) continue;
      const auto k = static_cast<std::size_t>(system().dof_offset(link));
      const double position = measured_coordinate(link, positions_[k]);
      velocities_[k] = (position - positions_[k]) / time_step;
      positions_[k] = position;
    }
  }

  [[nodiscard]] bool known(int link) const { return !maximal_ || system().link_dof_count(link) <= 1; }
  [[nodiscard]] std::span<const double> positions(int link) const {
    return slice(maximal_ ? positions_ : system().positions(), link);
  }
  [[nodiscard]] std::span<const double> velocities(int link) const {
    return slice(maximal_ ? velocities_ : system().velocities(), link);
  }

 private:
  [[nodiscard]] const art::ArticulatedSystem& system() const { return simulation_.scene().system; }
  [[nodiscard]] std::span<const double> slice(const std::vector<double>& values, int link) const {
    return std::span<const double>(values).subspan(static_cast<std::size_t>(system().dof_offset(link)),
                                                   static_cast<std::size_t>(system().link_dof_count(link)));
  }

  /// A revolute joint's angle (nearest `previous`) or a prismatic joint's slide, from E_pj =
  /// E_pj0 Q(q): Q is the joint's motion from its rest placement in the parent joint's frame.
  [[nodiscard]] double measured_coordinate(int link, double previous) const {
    const art::JointSpec& joint = system().joint(link);
    const art::RigidTransform parent_joint =
        joint.parent < 0 ? art::RigidTransform{} : joint_to_world(simulation_, joint.parent);
    const art::RigidTransform motion =
        art::inverse(joint.in_parent) * art::inverse(parent_joint) * joint_to_world(simulation_, link);
    if (joint.kind == art::JointKind::prismatic) return linalg::dot(joint.axis, motion.translation);
    const double angle = std::atan2(2.0 * linalg::dot(joint.axis, linalg::axial_vector(motion.rotation)),
                                    linalg::trace(motion.rotation) - 1.0);
    return previous + std::remainder(angle - previous, 2.0 * std::numbers::pi);
  }

  const art::JointSimulation& simulation_;
  bool maximal_;
  std::vector<double> positions_;   ///< maximal coordinates only: the measured q
  std::vector<double> velocities_;  ///< maximal coordinates only: the differenced q̇
};

/// The joints' friction per link from JointSimulation::joint_friction(), where it is one value
/// per reduced DOF (BISP; zero for frictionless runs and before the first step). Staggered
/// projections reports it per tangent row of the joints' contact points, which has no per-joint
/// torque: known() is false there.
class JointFrictionReadout {
 public:
  explicit JointFrictionReadout(const art::JointSimulation& simulation)
      : simulation_(simulation),
        known_(simulation.method() != art::JointMethod::staggered_projections),
        zeros_(static_cast<std::size_t>(simulation.scene().system.reduced_dof_count()), 0.0) {}

  [[nodiscard]] bool known() const { return known_; }
  /// The generalized friction forces on the link's joint coordinates (torques for revolute joints).
  [[nodiscard]] std::span<const double> of(int link) const {
    const art::ArticulatedSystem& system = simulation_.scene().system;
    const std::vector<double>& all = simulation_.joint_friction();
    const std::vector<double>& source = all.size() == zeros_.size() ? all : zeros_;
    return std::span<const double>(source).subspan(static_cast<std::size_t>(system.dof_offset(link)),
                                                   static_cast<std::size_t>(system.link_dof_count(link)));
  }
  [[nodiscard]] double magnitude(int link) const {
    double sum = 0.0;
    for (const double value : of(link)) sum += value * value;
    return std::sqrt(sum);
  }

 private:
  const art::JointSimulation& simulation_;
  bool known_;
  std::vector<double> zeros_;
};

/// The two series of a frame: bodies.pvd (one hexahedron per link, cell data link and
/// joint_friction) and joints.pvd (one vertex per joint at its frame, point data link, axis and,
/// where known, friction and friction_vector — the 1-DOF joints' friction along their axis).
class JointsFrames {
 public:
  JointsFrames(OutputFolder& folder, const art::JointSimulation& simulation, const JointFrictionReadout& friction)
      : simulation_(simulation),
        friction_(friction),
        bodies_(folder, "bodies", VtkCellShape::hexahedron),
        joints_(folder, "joints", VtkCellShape::vertex) {
    const int links = simulation.link_count();
    for (int link = 0; link < links; ++link) {
      link_index_.push_back(link);
      vertices_.push_back(link);
      for (Index corner = 0; corner < 8; ++corner) hexahedra_.push_back(8 * link + corner);
    }
    corners_.resize(24 * static_cast<std::size_t>(links));
    joint_points_.resize(3 * static_cast<std::size_t>(links));
    axes_.resize(3 * static_cast<std::size_t>(links));
    friction_vectors_.resize(3 * static_cast<std::size_t>(links));
    link_friction_.resize(static_cast<std::size_t>(links));
  }

  /// Both series at `time`; false when the byte limit refused a frame.
  bool write(double time) {
    // VTK's hexahedron: the bottom face (−z) counter-clockwise, then the top face.
    constexpr double corner_signs[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                           {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
    const art::ArticulatedSystem& system = simulation_.scene().system;
    for (int link = 0; link < simulation_.link_count(); ++link) {
      const auto l = static_cast<std::size_t>(link);
      const art::RigidTransform body = simulation_.body_to_world(link);
      const Vec3 half = 0.5 * system.body(link).sides;
      for (std::size_t c = 0; c < 8; ++c) {
        const Vec3 local{corner_signs[c][0] * half.x, corner_signs[c][1] * half.y, corner_signs[c][2] * half.z};
        set_vec3(corners_, 8 * l + c, art::transform_point(body, local));
      }
      const art::RigidTransform joint = joint_to_world(simulation_, link);
      const bool one_dof = system.link_dof_count(link) == 1;
      const Vec3 axis = one_dof ? joint.rotation * system.joint(link).axis : Vec3{};
      set_vec3(joint_points_, l, joint.translation);
      set_vec3(axes_, l, axis);
      if (friction_.known()) {
        link_friction_[l] = friction_.magnitude(link);
        set_vec3(friction_vectors_, l, one_dof ? friction_.of(link)[0] * axis : Vec3{});
      }
    }
    std::vector<VtkField> cell_fields{{"link", 1, link_index_}};
    std::vector<VtkField> point_fields{{"link", 1, link_index_}, {"axis", 3, axes_}};
    if (friction_.known()) {
      cell_fields.push_back({"joint_friction", 1, link_friction_});
      point_fields.push_back({"friction", 1, link_friction_});
      point_fields.push_back({"friction_vector", 3, friction_vectors_});
    }
    return bodies_.write_frame(time, corners_, hexahedra_, {}, cell_fields) &&
           joints_.write_frame(time, joint_points_, vertices_, point_fields, {});
  }

  [[nodiscard]] const VtuSeriesWriter& bodies() const { return bodies_; }
  [[nodiscard]] const VtuSeriesWriter& joints() const { return joints_; }

 private:
  static void set_vec3(std::vector<double>& values, std::size_t index, const Vec3& v) {
    values[3 * index] = v.x;
    values[3 * index + 1] = v.y;
    values[3 * index + 2] = v.z;
  }

  const art::JointSimulation& simulation_;
  const JointFrictionReadout& friction_;
  VtuSeriesWriter bodies_, joints_;
  std::vector<Index> hexahedra_, vertices_;
  std::vector<double> link_index_, corners_, joint_points_, axes_, friction_vectors_, link_friction_;
};

/// When each joint last moved (some |q̇ₖ| ≥ stopped_speed), for the stop test.
class StopTracker {
 public:
  explicit StopTracker(int links) : last_moving_(static_cast<std::size_t>(links), 0.0) {}

  void observe(double time, const JointReadout& readout) {
    for (std::size_t link = 0; link < last_moving_.size(); ++link) {
      for (const double rate : readout.velocities(static_cast<int>(link))) {
        if (!(std::abs(rate) < stopped_speed)) last_moving_[link] = time;
      }
    }
  }
  /// Whether the joint stayed below stopped_speed over the last stopped_share of a run that
  /// reached `end_time`; joints without coordinates (fixed) or not measured never count.
  [[nodiscard]] bool stopped(int link, double end_time, const art::ArticulatedSystem& system,
                             const JointReadout& readout) const {
    return end_time > 0.0 && system.link_dof_count(link) > 0 && readout.known(link) &&
           last_moving_[static_cast<std::size_t>(link)] <= (1.0 - stopped_share) * end_time;
  }
  /// The time after which the joint stayed below stopped_speed.
  [[nodiscard]] double stopped_since(int link) const { return last_moving_[static_cast<std::size_t>(link)]; }

 private:
  std::vector<double> last_moving_;
};

/// The steps' CSV and their statistics.
struct StepLog {
  std::ostringstream csv;
  std::vector<double> seconds;
  long long iterations = 0;
  int max_iterations = 0;
  long long active_tangents = 0;
  long long friction_qp_iterations = 0;
  int unconverged = 0;
  double output_seconds = 0.0;
  double motor_torque_sum = 0.0;  ///< Σ over steps of Σ|τ| over the drivers
  double motor_work = 0.0;        ///< Σ τ·rate·h: the work the motors did

  StepLog() {
    csv.precision(17);
    csv << "step,time,kinetic,potential,H,iterations,active_tangents,friction_qp_iterations,converged,seconds,"
           "motor_torque,motor_power\n";
  }
  /// `torques` and `rates`: the drivers' (empty for a scene without).
  void add(int step, double time, const art::Energies& energies, const art::JointFrictionStepStats& stats,
           double step_seconds, const std::vector<double>& torques, const std::vector<art::DrivenJoint>& drivers,
           double time_step) {
    double torque = 0.0, power = 0.0;
    for (std::size_t d = 0; d < torques.size() && d < drivers.size(); ++d) {
      torque += torques[d];
      power += torques[d] * drivers[d].rate;
      motor_torque_sum += std::abs(torques[d]);
    }
    motor_work += power * time_step;
    csv << step << ',' << time << ',' << energies.kinetic << ',' << energies.potential << ','
        << energies.kinetic + energies.potential << ',' << stats.iterations << ',' << stats.active_tangents << ','
        << stats.friction_qp_iterations << ',' << (stats.converged ? 1 : 0) << ',' << step_seconds << ',' << torque
        << ',' << power << '\n';
    seconds.push_back(step_seconds);
    iterations += stats.iterations;
    max_iterations = std::max(max_iterations, stats.iterations);
    active_tangents += stats.active_tangents;
    friction_qp_iterations += stats.friction_qp_iterations;
    unconverged += stats.converged ? 0 : 1;
  }
  [[nodiscard]] int steps() const { return static_cast<int>(seconds.size()); }
  [[nodiscard]] double mean(double sum) const { return seconds.empty() ? 0.0 : sum / static_cast<double>(seconds.size()); }
};

/// Whether the state can still be written: finite energies and body frames.
bool state_is_finite(const art::JointSimulation& simulation, const art::Energies& energies) {
  if (!std::isfinite(energies.kinetic) || !std::isfinite(energies.potential)) return false;
  for (int link = 0; link < simulation.link_count(); ++link) {
    const art::RigidTransform frame = simulation.body_to_world(link);
    for (int i = 0; i < 3; ++i) {
      if (!std::isfinite(frame.translation[i])) return false;
      for (int j = 0; j < 3; ++j) {
        if (!std::isfinite(frame.rotation(i, j))) return false;
      }
    }
  }
  return true;
}

nlohmann::ordered_json to_json_array(std::span<const double> values) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const double value : values) array.push_back(value);
  return array;
}

std::string format_values(std::span<const double> values) {
  std::string text;
  for (std::size_t k = 0; k < values.size(); ++k) text += (k ? ", " : "") + format_scientific(values[k]);
  return values.size() == 1 ? text : "(" + text + ")";
}

/// The "joints" section: each joint's final coordinates, rates and friction and whether it has
/// stopped, the stopped joints in the order they stopped, and whether they stopped root-first
/// (every stopped joint's nearest movable ancestor stopped too, and no later; null when none
/// stopped).
void add_joints_section(Report& report, const art::JointSimulation& simulation, const JointReadout& readout,
                        const JointFrictionReadout& friction, const StopTracker& stops) {
  const art::ArticulatedSystem& system = simulation.scene().system;
  const double end_time = simulation.time();
  report.section("joints (stopped: |dq/dt| < " + format_scientific(stopped_speed) + " over the last " +
                 format_fixed(100.0 * stopped_share, 0) + " % of the run)");
  nlohmann::ordered_json joints = nlohmann::ordered_json::array();
  std::vector<int> stopped;
  bool root_first = true;
  for (int link = 0; link < simulation.link_count(); ++link) {
    const art::JointSpec& joint = system.joint(link);
    const bool known = readout.known(link);
    const bool has_stopped = stops.stopped(link, end_time, system, readout);
    nlohmann::ordered_json entry{{"link", link}, {"parent", joint.parent}, {"kind", kind_name(joint.kind)}};
    entry["q"] = known ? to_json_array(readout.positions(link)) : nlohmann::ordered_json();
    entry["q_dot"] = known ? to_json_array(readout.velocities(link)) : nlohmann::ordered_json();
    entry["friction"] = friction.known() ? to_json_array(friction.of(link)) : nlohmann::ordered_json();
    entry["stopped"] = has_stopped;
    entry["stopped_since_s"] = has_stopped ? nlohmann::ordered_json(stops.stopped_since(link)) : nlohmann::ordered_json();
    joints.push_back(std::move(entry));
    if (has_stopped) {
      stopped.push_back(link);
      int ancestor = joint.parent;  // the nearest one that can move (fixed joints skipped)
      while (ancestor >= 0 && system.link_dof_count(ancestor) == 0) ancestor = system.parent(ancestor);
      if (ancestor >= 0 && !(stops.stopped(ancestor, end_time, system, readout) &&
                             stops.stopped_since(ancestor) <= stops.stopped_since(link))) {
        root_first = false;
      }
    }
    std::string text = std::string(kind_name(joint.kind));
    if (system.link_dof_count(link) > 0 && !known) text += ", q not measured in maximal coordinates";
    if (system.link_dof_count(link) > 0 && known) {
      text += ", q = " + format_values(readout.positions(link)) + ", dq/dt = " + format_values(readout.velocities(link));
      if (friction.known()) text += ", friction " + format_values(friction.of(link));
      text += has_stopped ? ", stopped since " + format_fixed(stops.stopped_since(link), 3) + " s" : ", moving";
    }
    report.add("", "joint " + std::to_string(link), nullptr, text);
  }
  report.add("joints", "", joints, "");
  std::vector<int> order = stopped;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return stops.stopped_since(a) < stops.stopped_since(b); });
  std::string order_text;
  for (const int link : order) order_text += (order_text.empty() ? "" : ", ") + std::to_string(link);
  report.add("stopped_joints", "", stopped, "");
  report.add("stop_order", "stopped joints, first to stop first", order, order_text.empty() ? "none" : order_text);
  if (stopped.empty()) {
    report.add("stopped_root_first", "stopped root-first", nullptr, "no joint stopped");
  } else {
    report.add("stopped_root_first", "stopped root-first", root_first, root_first ? "yes" : "no");
  }
}

int run_joints(const JointsCommandOptions& flags) {
  const InterruptSignals signals;
  const std::uint64_t byte_limit = parse_byte_size(flags.max_output, "--max-output");
  const art::JointMethod method = art::parse_joint_method(flags.method);
  if (flags.redmax_compatible && method != art::JointMethod::bisp) {
    throw BadInputError("--redmax-compatible applies to --method bisp only, not " + flags.method);
  }
  art::ArticulatedScene scene = build_scene(flags);
  const RunPlan plan = plan_run(scene, flags);
  art::JointFrictionOptions friction_options;
  friction_options.friction = joint_friction_coefficient(scene);
  friction_options.redmax_compatible = flags.redmax_compatible;
  art::JointSimulation simulation(std::move(scene), method, friction_options);
  const art::ArticulatedSystem& system = simulation.scene().system;
  const double time_step = simulation.scene().time_step;
  progress(simulation.scene().name + ", " + std::to_string(simulation.link_count()) + " links, " +
           std::to_string(system.reduced_dof_count()) + " reduced DOFs, method " + std::string(art::to_string(method)) +
           ", mu = " + format_fixed(friction_options.friction, 3) + ", " + std::to_string(plan.steps) + " steps of " +
           format_scientific(time_step) + " s");

  OutputFolder folder(flags.out, byte_limit);  // after the input is known good: no folder on bad input
  const JointFrictionReadout friction(simulation);
  JointReadout readout(simulation);
  JointsFrames frames(folder, simulation, friction);
  StopTracker stops(simulation.link_count());
  RunEndOptions run_end;
  run_end.max_output = flags.max_output;
  RunMonitor monitor("cholsim joints", run_end, signals);
  StepLog log;
  if (!frames.write(0.0)) monitor.stop_at_output_limit(byte_limit, frames.bodies().frames_written());

  Clock::time_point last_progress = Clock::now();
  for (int step = 1; step <= plan.steps && monitor.keep_going(); ++step) {
    art::JointFrictionStepStats stats;
    const Clock::time_point step_start = Clock::now();
    try {
      stats = simulation.step();
    } catch (const std::runtime_error& error) {
      monitor.stop_on_failure(step, error.what());
      break;
    }
    const double step_seconds = seconds_since(step_start);
    const art::Energies energies = simulation.energies();
    log.add(step, simulation.time(), energies, stats, step_seconds, simulation.driver_torques(),
            simulation.scene().constraints.drivers, time_step);
    if (!state_is_finite(simulation, energies)) {
      monitor.stop_on_failure(step, "the state is not finite (energy H = " +
                                        format_scientific(energies.kinetic + energies.potential) + ")");
      break;
    }
    readout.update(time_step);
    stops.observe(simulation.time(), readout);
    if (step % plan.frame_every == 0 || step == plan.steps) {
      const Clock::time_point output_start = Clock::now();
      const bool written = frames.write(simulation.time());
      log.output_seconds += seconds_since(output_start);
      if (!written) {
        monitor.stop_at_output_limit(byte_limit, frames.bodies().frames_written());
        break;
      }
    }
    if (step == plan.steps || seconds_since(last_progress) >= 1.0) {
      last_progress = Clock::now();
      progress("step " + std::to_string(step) + "/" + std::to_string(plan.steps) + "  t = " +
               format_fixed(simulation.time(), 3) + " s  H = " + format_scientific(energies.kinetic + energies.potential) +
               "  " + std::to_string(stats.iterations) + " iterations  " + format_fixed(1e3 * step_seconds, 2) + " ms");
    }
  }
  folder.write(steps_file_name, log.csv.str());

  Report report;
  report.section("scene");
  report.add_text("scene", "scene", flags.scene);
  report.add_text("description", "description", simulation.scene().name);
  report.add_text("method", "method", std::string(art::to_string(method)));
  report.add_count("links", "links", simulation.link_count());
  report.add_count("reduced_dofs", "reduced DOFs", system.reduced_dof_count());
  report.add_count("maximal_dofs", "maximal DOFs", system.maximal_dof_count());
  report.add_real("friction", "joint friction mu", friction_options.friction);
  report.add("redmax_compatible", "REDMAX-compatible BISP", flags.redmax_compatible,
             flags.redmax_compatible ? "yes" : "no");
  report.add_real("dt", "time step (s)", time_step);
  report.add_real("duration", "duration (s)", simulation.scene().duration);

  report.section("steps");
  report.add_count("steps", "steps", log.steps());
  report.add_seconds("median_step_s", "median time per step", median(log.seconds));
  double total_seconds = 0.0;
  for (const double seconds : log.seconds) total_seconds += seconds;
  report.add_seconds("mean_step_s", "mean time per step", log.mean(total_seconds));
  report.add_seconds("total_step_s", "stepping", total_seconds);
  const double mean_iterations = log.mean(static_cast<double>(log.iterations));
  report.add("mean_iterations", "mean iterations", mean_iterations, format_fixed(mean_iterations, 2));
  report.add_count("max_iterations", "most iterations", log.max_iterations);
  report.add_count("unconverged_steps", "steps not converged", log.unconverged);
  const double mean_tangents = log.mean(static_cast<double>(log.active_tangents));
  report.add("mean_active_tangents", "mean active tangents", mean_tangents, format_fixed(mean_tangents, 2));
  const double mean_qp = log.mean(static_cast<double>(log.friction_qp_iterations));
  report.add("mean_friction_qp_iterations", "mean friction QP iterations", mean_qp, format_fixed(mean_qp, 2));
  report.add_seconds("output_s", "output (VTK)", log.output_seconds);
  if (!simulation.scene().constraints.drivers.empty()) {
    const double mean_torque =
        log.mean(log.motor_torque_sum) / static_cast<double>(simulation.scene().constraints.drivers.size());
    report.add_real("mean_abs_motor_torque", "mean |motor torque| per driver", mean_torque);
    report.add_real("motor_work", "work done by the motors", log.motor_work);
  }

  report.section("final state");
  const art::Energies energies = simulation.energies();
  report.add_real("time_s", "time (s)", simulation.time());
  report.add_real("kinetic_energy", "kinetic energy", energies.kinetic);
  report.add_real("potential_energy", "potential energy (from the start)", energies.potential);
  report.add_real("total_energy", "energy H (kinetic + potential)", energies.kinetic + energies.potential);

  add_joints_section(report, simulation, readout, friction, stops);

  report.section("output");
  report.add_text("bodies_pvd", "links (cuboids)", frames.bodies().pvd_path().string());
  report.add_text("joints_pvd", "joints (points)", frames.joints().pvd_path().string());
  report.add_count("frames", "frames written", frames.bodies().frames_written());
  report.add_count("frame_every", "a frame every (steps)", plan.frame_every);
  report.add_text("steps_csv", "per-step CSV", (folder.path() / steps_file_name).string());
  report.add_text("summary_json", "summary", (folder.path() / summary_file_name).string());
  monitor.add_section(report);
  publish_summary(report, folder, summary_file_name, flags.json);
  return monitor.exit_code();
}

/// A flag value that must be a finite number above (or, with `zero_allowed`, at least) 0.
/// CLI11's PositiveNumber would answer "0 not in range 0.000000 to 1797693134862315...".
CLI::Validator finite_number(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        double value = 0.0;
        const bool number = CLI::detail::lexical_cast(text, value) && std::isfinite(value);
        if (number && (value > 0.0 || (zero_allowed && value == 0.0))) return {};
        return "expected a finite number " + std::string(zero_allowed ? ">= 0" : "> 0") + ", not " + text;
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}

}  // namespace
}  // namespace joints_command

void add_joints_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<joints_command::JointsCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "joints", "Articulated rigid bodies with joint friction (seed 002 ch. 3): the CHAIN of Fig. 3.2 or REDMAX's "
                "scenes, by bilateral staggered projections (BISP), staggered projections or frictionless");
  command->footer(
      "Without arguments: the thesis' CHAIN (seed 002 §3.4, Fig. 3.2): 10 links of 10 x 1 x 1 cm, revolute joints\n"
      "of radius 0.5 cm whose axes are 45 degrees from gravity, mu = 0.6, released horizontal, 2 s in steps of\n"
      "0.01 s, stepped by BISP (Algorithm 3.2). --joint-radius 1 is Fig. 3.2's 2R: the chain stops sooner.\n"
      "Scenes: chain, klann (the six-legged Klann walker of Fig. 3.3: loop closures, driven cranks, floor\n"
      "friction 0.8; --friction sets the joints' μ, 0 by default), redmax-1 (two links), redmax0 (five links, revolute and fixed joints), redmax27 (two\n"
      "links with frictional joints) and redmax33 (a driven four-bar on a free base standing on four spheres,\n"
      "friction 0.8 in the joints and on the floor). A scene without joint friction (redmax-1, redmax0) stays frictionless\n"
      "under every method unless --friction is given.\n"
      "--redmax-compatible steps BISP as REDMAX's MATLAB code does (a friction row per contact tangent, the joint\n"
      "reaction added in the final velocity update) and reproduces its regression energy: H = -137371.128 after\n"
      "1 s of redmax27; on redmax33 H = 19599.72 against REDMAX's 19598.86 (that scene's H depends on where each\n"
      "step's iterations stop; docs/benchmarks.md). Without it, one friction row per joint DOF and only the\n"
      "friction added.\n"
      "Methods: bisp (reduced coordinates), sp (staggered projections, Algorithm 3.1: free bodies in maximal\n"
      "coordinates), frictionless (REDMAX's linearly implicit step). Units: cm, g, s.\n"
      "Output in --out: bodies.pvd + bodies_NNNN.vtu (a hexahedron per link; cell data link, joint_friction),\n"
      "joints.pvd + joints_NNNN.vtu (a point per joint; point data link, axis, friction, friction_vector; the\n"
      "friction fields are left out for sp, whose friction is per contact row), steps.csv (each step's time,\n"
      "kinetic, potential and total energy H, iterations, active tangents, friction QP iterations, converged,\n"
      "seconds), summary.json (per joint: q, dq/dt, friction, and whether it stopped: |dq/dt| < 1e-3 over the\n"
      "last 10 % of the run).\n"
      "Exit codes: 0 ok, 2 bad input or unwritable output (no folder is made for bad input), 3 numerical failure\n"
      "(a step failed or the state is not finite). SIGINT/SIGTERM: the current step is finished, the .pvd files\n"
      "and summary.json are written, exit 130/143. At --max-output the run stops with a warning, exit 0.");
  command->add_option("--scene", flags->scene, "chain, klann, redmax-1, redmax0, redmax27 or redmax33")
      ->check(CLI::IsMember(joints_command::scene_names))
      ->capture_default_str();
  command->add_option("--method", flags->method, "bisp, sp (staggered projections) or frictionless")
      ->check(CLI::IsMember({"bisp", "sp", "frictionless"}))
      ->capture_default_str();
  CLI::Option* links = command->add_option("--links", flags->links, "CHAIN: links")
                           ->check(CLI::Range(1, INT_MAX))
                           ->capture_default_str();
  CLI::Option* radius = command->add_option("--joint-radius", flags->joint_radius, "CHAIN: joint radius R in cm")
                            ->check(joints_command::finite_number(false))
                            ->capture_default_str();
  command->add_option("--friction", flags->friction, "Friction coefficient mu in the joints (default: the scene's)")
      ->check(joints_command::finite_number(true));
  command->add_flag("--redmax-compatible", flags->redmax_compatible,
                    "BISP as REDMAX's MATLAB code (reproduces its regression energies)");
  command->add_option("--time-step", flags->time_step, "Time step in s (default: the scene's, 0.01)")
      ->check(joints_command::finite_number(false));
  command->add_option("--duration", flags->duration, "Simulated time in s (default: the scene's)")
      ->check(joints_command::finite_number(false));
  command->add_option("--frame-every", flags->frame_every,
                      "Write a frame every K steps (default: about 30 frames per simulated second)")
      ->check(CLI::Range(1, INT_MAX));
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  add_max_output_option(*command, flags->max_output);
  command->callback([flags, links, radius, &action] {
    flags->chain_flags_given = links->count() > 0 || radius->count() > 0;
    action = [flags] { return run_reporting_errors("joints", [&] { return joints_command::run_joints(*flags); }); };
  });
}

}  // namespace cholsim::apps

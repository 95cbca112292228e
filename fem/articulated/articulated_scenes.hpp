#pragma once
// Scenes of articulated rigid bodies: the public REDMAX regression scenes we rebuild (their
// reference energies are tests), the thesis' CHAIN (seed 002 §3.4, Fig. 3.2) and KLANN walker
// (Fig. 3.3).
#include <string>

#include "fem/articulated/articulated_system.hpp"
#include "fem/articulated/external_constraints.hpp"

namespace cholsim::fem::articulated {

struct ArticulatedScene {
  std::string name;
  ArticulatedSystem system;
  Vec3 gravity{0.0, 0.0, -980.0};  ///< REDMAX's units: cm, g, s
  double time_step = 1e-2;
  double duration = 2.0;
  bool joint_friction = false;
  double joint_friction_coefficient = 0.6;  ///< μ inside the joints
  ExternalConstraints constraints;          ///< loops, drivers, floor (none for a tree)
};

/// REDMAX's MATLAB scenes (testRedMaxScenes.m) by their number: −1 (two-link chain), 0 (five
/// links, alternating revolute and fixed joints), 27 (two links with frictional revolute joints,
/// the axis 45° from gravity), 33 (a driven four-bar linkage on a free bar standing on three
/// spheres, friction in the joints and on the floor). Throws std::invalid_argument for another
/// number.
ArticulatedScene make_redmax_scene(int id);

struct ChainOptions {
  int links = 10;
  double link_length = 10.0;    ///< cm
  double link_width = 1.0;      ///< cm
  double joint_radius = 0.5;    ///< R of Fig. 3.2 (2R stops the chain sooner: our test at μ 0.2)
  double joint_height = 1.0;
  double friction = 0.6;        ///< μ in the joints
  double time_step = 1e-2;
  double duration = 2.0;
};

/// CHAIN (§3.4): revolute joints whose axes are 45° from gravity, the chain horizontal at rest.
ArticulatedScene make_chain_scene(const ChainOptions& options = {});

struct KlannOptions {
  double joint_friction = 0.0;   ///< μ in the joints and loop closures (Fig. 3.3b sweeps 0–0.8)
  double floor_friction = 0.8;
  double crank_rate = 3.141592653589793;  ///< rad/s, both cranks
  double time_step = 5e-3;
  double duration = 2.0;
};

/// KLANN (§3.4, Fig. 3.3): a walker on six Klann legs, three per side on one crank each (crank
/// pins 120° apart, the sides 60° apart). Each leg is a Klann six-bar — crank, coupler, two
/// rockers grounded on the chassis, the leg — as 4 revolute joints of the tree plus 2 loop
/// closures; the chassis hangs on a free joint and stands on the feet (floor μ 0.8); the cranks
/// turn at a prescribed rate. 26 joint DOFs (+ 6 of the chassis), 24 loop rows, up to 6 feet on
/// the floor — the thesis' counts. Link lengths: an optimized Klann geometry (B. Olson's
/// Walkin8r notes, mm, scaled to cm).
ArticulatedScene make_klann_scene(const KlannOptions& options = {});

}  // namespace cholsim::fem::articulated

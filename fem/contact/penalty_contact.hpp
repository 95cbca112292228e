#pragma once
// Explicit penalty contact against rigid obstacles (seed 000 §5: bodies dropped on a ground
// plane, a bear squashed by a piston), evaluated at the start of a step and added to f_ext of
// the implicit Euler system (eq. 2).
#include <span>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "linalg/index_types.hpp"

namespace cholsim::fem {

struct PenaltyContact;

/// The default contact stiffness for a body with `node_masses` at time step Δt:
/// k = m_column/Δt² with m_column = (total mass)/n^(2/3), the mass of one column of nodes of a
/// compact n-node body — the load one contact node carries when the body rests on a face.
/// That column then sinks g·Δt² (2.7 mm at 60 Hz) at rest, independent of resolution.
/// The spring is integrated explicitly (positions of the step's start) while velocities are
/// implicit: symplectic Euler for the spring, stable while k·Δt² stays below about four times
/// the mass that moves with the node. Elastic coupling makes that mass the column's (Δt²·Kᵢᵢ
/// ≫ mᵢ for the materials of seed 000, E ≥ 10⁶ Pa at cm-sized elements), so k·Δt²/m_column = 1
/// has a wide margin; very soft bodies at coarse steps may need a smaller `stiffness`.
double default_contact_stiffness(std::span<const double> node_masses, double time_step);

/// A node inside an obstacle, and where it stands against the nearest one (distance < 0).
struct NodeContact {
  linalg::Index node;
  ObstacleProximity proximity;
};

/// The nodes of `positions` (3 per node) inside an obstacle at `time`, in node order, into
/// `contacts` (cleared first; its capacity is kept, so a time step allocates nothing once the
/// largest contact set has been seen). One search per step serves both the penalty forces and
/// the implicit springs' matrix blocks.
void find_contacts(const std::vector<Obstacle>& obstacles, double time, std::span<const double> positions,
                   std::vector<NodeContact>& contacts);

/// Adds the penalty forces of `contacts` to `forces` (3·nodes): a node at depth d > 0 inside
/// its nearest obstacle gets k·d along the outward normal, minus ζ·2√(k·m) times its normal
/// approach speed (never pulling), and a tangential friction force opposing its sliding
/// velocity relative to the obstacle, bounded by μ·(normal force) and by the force that would
/// stop the sliding within this step (so friction never reverses the motion).
void add_penalty_contact_forces(std::span<const NodeContact> contacts, const PenaltyContact& contact,
                                double stiffness, double time_step, std::span<const double> node_masses,
                                std::span<const double> velocities, std::span<double> forces);

}  // namespace cholsim::fem

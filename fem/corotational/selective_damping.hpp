#pragma once
// Selective damping of elements whose matrix is left stale with a large error (seed 000
// §4.4): "multiplying the nodal velocities of the offending elements by a scale factor less
// than one, which becomes smaller for larger errors", or — smoother to the eye — damping
// offending supernodes toward a local rigid-body motion [Müller et al. 2005].
#include <span>

#include "linalg/index_types.hpp"

namespace cholsim::fem {

using linalg::Index;

/// Multiplies the velocity of every node i (3·nodes values) by node_factors[i] ∈ [0, 1].
void scale_node_velocities(std::span<const double> node_factors, std::span<double> velocities);

/// Moves the velocities of the group `nodes` toward the group's rigid motion by `strength`
/// ∈ [0, 1]: v_i ← v_i + strength·(v_c + ω × (x_i − x_c) − v_i), where x_c, v_c are the
/// group's centre of mass and its velocity and ω = I⁻¹·L its angular velocity from the
/// angular momentum L and inertia tensor I about x_c — the rigid mode of shape matching
/// (Müller et al. 2005) at the velocity level. Linear and angular momentum of the group are
/// preserved; only its deformation velocity is damped. A degenerate group (collinear nodes,
/// singular I) is damped toward its linear motion.
void damp_toward_rigid_motion(std::span<const Index> nodes, double strength, std::span<const double> masses,
                              std::span<const double> positions, std::span<double> velocities);

}  // namespace cholsim::fem

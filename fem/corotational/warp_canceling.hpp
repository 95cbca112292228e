#pragma once
// The pieces of warp-canceling corotation (seed 000 §4) that do not depend on the time
// stepper: the per-element error of a stale matrix (§4.2), the supernode an element's
// entries are charged to, supernode badness, and the update schedule (§4.4).
#include <span>
#include <vector>

#include "factor/update/changed_supernodes.hpp"
#include "factor/update/update_scheduling.hpp"
#include "fem/elements/corotational_element.hpp"

namespace cholsim::fem {

struct WarpCancelingOptions;

/// §4.2: ‖f_e,cor − f_e,apx‖ with f = R_n·(M_e + Δt·C̃_e + Δt²·K̃_e)·R_nᵀ·ẋ_e. The mass term
/// and the αM part of C cancel, leaving stiffness_scale = Δt² + β·Δt (Rayleigh β) times
///   f_cor = Rₑ·Kₑ·Rₑᵀ·ẋₑ                (eq. 5 with current node rotations: they cancel)
///   f_apx = P·Kₑ·Pᵀ·ẋₑ,  P_a = R_a·Q_a  (Q the eq. 5 frame assembled in A, R_a current).
/// The result has units of momentum (kg·m/s), the unit τ is given in.
double stale_element_error(const IsotropicTet& tet, double stiffness_scale, const Mat3& element_rotation,
                           const ElementFrame& assembled_frame, const std::array<Mat3, 4>& node_rotations,
                           const ElementVector& velocity);

/// The home supernode of every element: the first (in postorder) of the supernodes its
/// entries land in. Every other supernode it lands in is an ancestor of its home, because
/// the element's DOFs are mutually coupled, so recomputing the home (which the schedulers
/// always do together with its ancestors) covers all of the element's entries. Seed 000
/// §4.4 "when we update a single element in a supernode we also update all the other
/// elements in that supernode": the elements of supernode s are those homed in s.
std::vector<Index> element_home_supernodes(const factor::ElementSupernodeMap& map);

/// badness[s] = max error over the elements homed in s (0 where none is).
std::vector<double> home_supernode_badness(std::span<const Index> home, std::span<const double> element_error,
                                           Index supernode_count);

/// The §4.4 schedule for `options`: target-quality with τ, or — with a budget — target-time
/// over the supernodes with badness above τ (the hybrid when must_update_tau is finite). `cost[s]` is the
/// predicted seconds of recomputing s (the factor's SupernodeCostModel); a budget fraction
/// is taken of Σ cost.
factor::UpdateSchedule schedule_updates(std::span<const Index> parent, std::span<const double> badness,
                                        std::span<const double> cost, const WarpCancelingOptions& options);

}  // namespace cholsim::fem

#pragma once
// Contact as a smooth potential for implicit, Newton-type time stepping: each step minimizes
// E(x) = inertia + h²·(elastic + gravity + contact) on the mesh's fixed node-block pattern,
// so contact must be an energy with a gradient and a Hessian, and that Hessian may touch only
// each contact vertex's own 3×3 diagonal block (always inside the pattern).
//
//  * Normal contact: a C² penalty on the signed distance d of every boundary vertex, in the
//    spirit of ADD (Geilinger et al. 2020: a smooth penalty active within a margin),
//    ψ(d) = 0 for d ≥ δ, k·(δ − d)³/(6δ) for 0 ≤ d < δ and its C²-continuous quadratic
//    continuation k·d²/2 − k·δ·d/2 + k·δ²/6 below 0 (smooth_penalty below).
//      - Obstacles (fem/contact/obstacles.hpp) are analytic, so their distance is evaluated at
//        the current positions and the solve's time: that contact is exact within a solve.
//      - Bodies (several bodies in one mesh, or one body touching itself) use planes frozen
//        at the solve's start: a boundary vertex found inside a tet of another part is mapped
//        to rest space through that tet, projected onto the rest boundary with the rest-pose
//        distance field (seed 004 §5.1, McAdams et al. 2011; as fem/pd/pd_collisions does),
//        mapped back, and gets the plane through that point with the deformed surface normal.
//        The penalty acts on n·(p − q), so its Hessian stays the vertex's own block.
//  * Friction: smoothed Coulomb friction lagged as in IPC (Li et al. 2020): the normal
//    force magnitude λ, the tangent basis T and the obstacle's motion are frozen at the solve's
//    start, and u = Tᵀ·(p − p_start − h·v_obstacle) enters D = μ·λ·f₀(‖u‖), f₀ IPC's mollifier
//    with ε_u = ε_v·h — Coulomb's μ·λ when sliding faster than ε_v, a stiff spring below it.
//
// Hessians: the penalty's is ψ''(d)·n·nᵀ, the curvature term ψ'(d)·∂n/∂p = ψ'(d)·∇²d dropped.
// A convex obstacle's (half-space, sphere, cylinder, capsule, box) signed distance is convex,
// inside and out, and ψ' ≤ 0, so that term is negative semi-definite and dropping it is exactly
// the PSD projection; elsewhere (the inner side of the half torus) it loses a little
// stiffness, never definiteness. Frozen planes have no curvature. The friction Hessian is
// PSD as it stands (its 2×2 tangential block has eigenvalues 2(ε−y)/ε², 2/ε − y/ε² while
// sticking and 0, 1/y while sliding). So every block is PSD without an eigen-decomposition.
#include <array>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem {

class TetBvh;
class RestDistanceField;

struct ContactOptions {
  /// k, N/m: the penalty's stiffness (ψ'' = k once penetrating). No usable default exists —
  /// it scales with the masses and the step (penalty_contact.hpp's default_contact_stiffness
  /// is one choice) — so 0 is rejected and the caller must set it.
  double stiffness = 0.0;
  /// δ > 0, m: the penalty starts at this distance from the surface (a C² ramp up to d = 0).
  /// Also rejected when left 0.
  double activation_distance = 0.0;
  /// μ ≥ 0: Coulomb's coefficient; 0 turns friction off.
  double friction_coefficient = 0.0;
  /// ε_v > 0, m/s: slower tangential motion is smoothed static friction (IPC's f₀ mollifier
  /// with ε_u = ε_v·h), a spring of stiffness 2·μ·λ/ε_u; 1 mm/s is slow next to the cm/s to m/s
  /// motions of our scenes.
  double friction_velocity = 1e-3;
  /// Vertex–tet contact between the bodies of the mesh and of a body with itself.
  bool body_contact = false;
  /// With body_contact: also a body's contact with itself (the bunny's ears on its back);
  /// false keeps only contact between different bodies (balls in a bowl).
  bool self_contact = true;
  /// Body contact: grid spacing of each body's rest distance field, in that body's mean edge
  /// lengths. Half fem/pd/pd_collisions' 0.5, because here the field's gradient becomes a
  /// plane's normal for a whole solve: in a prong two cells thick, 0.5 tilted the normals of
  /// vertices 3 cm deep near its edges by up to 56°, 0.25 by under 8° (the self-contact test).
  double distance_field_spacing_edges = 0.25;
  /// Body contact: a vertex whose rest-surface target lies within this many mean edge lengths
  /// of its own rest position sees its own surface folded onto itself, not a contact
  /// (fem/pd/pd_collisions' rule). Must stay below the narrowest rest gap meant to close.
  double self_exclusion_edges = 1.0;
  int threads = 2;
};

/// ψ(d) and its first two derivatives (see the file comment).
struct PenaltyValue {
  double value = 0.0;
  double first = 0.0;   ///< ψ'(d) ≤ 0
  double second = 0.0;  ///< ψ''(d) ≥ 0
};

/// The C² penalty ψ of `distance` for `stiffness` k and `activation_distance` δ.
PenaltyValue smooth_penalty(double distance, double stiffness, double activation_distance);

/// Contact of a tet mesh's boundary vertices with obstacles and, optionally, between its
/// bodies, as an energy (J) with gradient and per-vertex Hessian blocks. The bodies are the
/// connected components of the mesh's tets.
///
/// Use: begin_solve() once per nonlinear solve, then any number of energy / add_gradient /
/// hessian_blocks / statistics calls. Those are const and allocate nothing but their output,
/// but share a scratch buffer: do not call them concurrently on one object. Before the first
/// begin_solve they see the obstacles at time 0 and nothing frozen (no planes, no friction).
class ContactPotential {
 public:
  /// `rest`: the whole (possibly multi-body) mesh in its rest configuration; the contact
  /// vertices are its boundary vertices. With options.body_contact this builds a BVH over the
  /// tets and a rest distance field per body. Throws std::invalid_argument naming the field
  /// for k ≤ 0, δ ≤ 0, μ < 0, ε_v ≤ 0 (any non-finite too), a non-positive field spacing or a
  /// negative self-exclusion, and for a mesh whose tets index outside its nodes.
  ContactPotential(const TetMesh& rest, std::vector<Obstacle> obstacles, ContactOptions options);
  ~ContactPotential();
  ContactPotential(ContactPotential&&) noexcept;
  ContactPotential& operator=(ContactPotential&&) noexcept;

  /// Freezes, for the coming solve: the obstacles' time `time` (the time the solve's positions
  /// belong to: t + h for backward Euler); with body_contact the planes (point q, normal n) of
  /// the vertices found penetrating another part at `positions`, each moved by h·(the partner
  /// surface point's velocity) to where it will be at `time`; and for friction every active
  /// contact's normal force λ = −ψ'(d) at `positions`, tangent basis and obstacle (or partner)
  /// velocity. `positions`, `velocities`: the state the solve starts from (3 per node),
  /// `time_step` h > 0. Throws std::invalid_argument for wrong sizes or h ≤ 0.
  void begin_solve(std::span<const double> positions, std::span<const double> velocities, double time,
                   double time_step);

  /// The contact energy at `positions` (all nodes, 3 per node).
  [[nodiscard]] double energy(std::span<const double> positions) const;
  /// Adds ∇energy at `positions` to `gradient` (3 per node).
  void add_gradient(std::span<const double> positions, std::span<double> gradient) const;
  /// The PSD 3×3 Hessian block (row-major) of every contact vertex with a nonzero one, in node
  /// order, into `blocks` (cleared first; its capacity is kept).
  void hessian_blocks(std::span<const double> positions,
                      std::vector<std::pair<Index, std::array<double, 9>>>& blocks) const;

  struct Statistics {
    Index active_obstacle_contacts = 0;  ///< (vertex, obstacle) pairs closer than δ
    Index active_body_contacts = 0;      ///< frozen planes the vertex is closer to than δ
    double deepest_penetration = 0.0;    ///< largest −d over both, m (0 when none penetrates)
    Index frozen_planes = 0;             ///< body-contact planes of this solve
    Index friction_contacts = 0;         ///< lagged friction contacts of this solve
  };
  [[nodiscard]] Statistics statistics(std::span<const double> positions) const;

  /// The contact vertices (the rest mesh's boundary nodes), ascending.
  [[nodiscard]] std::span<const Index> contact_nodes() const { return contact_nodes_; }
  [[nodiscard]] const ContactOptions& options() const { return options_; }

 private:
  /// A frozen plane: the vertex should stay on the side `normal` points to from `point`.
  struct FrozenPlane {
    Vec3 point;
    Vec3 normal;
    Vec3 velocity;  ///< the partner surface point's, for friction
  };
  /// One lagged friction contact of a vertex: u = (t₁, t₂)ᵀ·(p − anchor).
  struct LaggedFriction {
    double normal_force = 0.0;  ///< λ
    Vec3 anchor;                ///< p_start + h·v_obstacle
    Vec3 tangent_first;
    Vec3 tangent_second;
  };
  /// A vertex's energy, gradient and Hessian block.
  struct VertexTerms {
    double energy = 0.0;
    Vec3 gradient;
    linalg::Mat3 hessian;
    bool active = false;
  };
  struct Body;  ///< a connected component's rest distance field and length scale

  [[nodiscard]] VertexTerms vertex_terms(std::size_t slot, const Vec3& point) const;
  void add_penalty(double distance, const Vec3& normal, VertexTerms& terms) const;
  void add_friction(const LaggedFriction& friction, const Vec3& point, VertexTerms& terms) const;
  template <typename Visit>
  void for_each_vertex(std::span<const double> positions, const Visit& visit) const;
  void check_positions(std::span<const double> positions, const char* caller) const;

  void freeze_planes(std::span<const double> positions, std::span<const double> velocities, double time_step);
  [[nodiscard]] bool find_plane(std::size_t slot, std::span<const double> positions,
                                std::span<const double> velocities, FrozenPlane& plane) const;
  void freeze_friction(std::span<const double> positions, double time_step);
  /// Calls visit(proximity, against_obstacle) for every obstacle and the vertex's frozen plane
  /// (if any), as seen from `point`.
  template <typename Visit>
  void for_each_side(std::size_t slot, const Vec3& point, const Visit& visit) const;

  Index node_count_ = 0;
  std::vector<Obstacle> obstacles_;
  ContactOptions options_;
  std::vector<Index> contact_nodes_;

  // Body contact (empty without it).
  TetMesh rest_;
  std::vector<Index> body_of_node_;
  std::vector<Body> bodies_;
  std::vector<Index> ring_offsets_;  ///< per contact vertex: its 1-ring nodes at [offsets[s], offsets[s+1])
  std::vector<Index> ring_nodes_;    ///< sorted within each vertex
  std::unique_ptr<TetBvh> deformed_tets_;  ///< every tet, refit at each begin_solve
  std::unique_ptr<TetBvh> rest_tets_;      ///< every tet at rest: embeds projected rest points

  // Frozen at begin_solve.
  double time_ = 0.0;
  double smoothing_displacement_ = 0.0;  ///< ε_u = ε_v·h
  std::vector<FrozenPlane> planes_;      ///< per contact vertex; a zero normal: none
  std::vector<Index> friction_offsets_;  ///< per contact vertex: [offsets[s], offsets[s+1]) of friction_
  std::vector<LaggedFriction> friction_;

  mutable std::vector<VertexTerms> scratch_;  ///< per contact vertex, reused by every evaluation
};

}  // namespace cholsim::fem

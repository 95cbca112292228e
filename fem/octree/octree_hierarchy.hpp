#pragma once
// The multigrid hierarchy of seed 001 §7 on an octree: level l is the mesh of the balanced tree
// coarsened to elements of at least 2^l finest cells (§7.1, the domain grows), with transfers
// whose restriction is exactly the prolongation's transpose (§7.2), re-discretized operators
// from averaged Lamé parameters, restricted masses and averaged deformation gradients (§7.3),
// matrix-free diagonals (§7.4) for the Jacobi smoother, and — cholsim's own twist — the
// coarsest level solved exactly by the supernodal Cholesky factorization, analysed once and
// refactorized at every Newton step, instead of 16 Jacobi sweeps.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fem/octree/octree_elastic_operator.hpp"
#include "solvers/multigrid/direct_coarse_solver.hpp"
#include "solvers/multigrid/multigrid_solve.hpp"
#include "solvers/multigrid/v_cycle.hpp"

namespace cholsim::fem::octree {

struct OctreeLevelsOptions {
  int max_levels = 7;                ///< §10.4 uses 7
  linalg::Index coarsest_nodes = 3000;  ///< stop coarsening once a level has no more nodes than this
  bool direct_coarsest = true;       ///< false: the paper's damped-Jacobi sweeps on the coarsest level
  /// The cycle: §7's V-cycle with damping 0.8 (not §7's 0.3). Measured at the armadillo's floor
  /// contacts (issue 24, stop 47): with the l1 spring rows (OctreeElasticOperator::
  /// smoother_diagonal) every level's λmax(D⁻¹A) is 2.03–2.04 (2.27 on a 16-cell sphere, most
  /// elements with hanging nodes), so 0.8 keeps ω·λmax ≤ 1.8. MGPCG to 1e-6 takes 35 / 35 / 41
  /// iterations at 64 / 128 / 256 cells with the V-cycle, 31 / 25 / 23 with the K-cycle
  /// (Shape::k), but under §10.2's caps the V-cycle's frames are 1.24–1.36× faster at the same
  /// Newton residuals (`cholsim octree --cycle v|k`, 128 and 256 cells). Stop 46 had made the
  /// K-cycle the default after a V-cycle "breakdown" at contact, which was the benchmark solving
  /// with a mismatched hierarchy (OctreeFlesh::prepare_hierarchy); a cycle found indefinite is
  /// handled by the flesh, which halves the damping.
  solvers::VCycleOptions cycle = {.damping = 0.8, .shape = solvers::VCycleOptions::Shape::v};
  /// Coarse elements merged from finer ones as their children's Galerkin operator (merged
  /// hexahedra, stabilized_hex.hpp) instead of §7.3's one-point re-discretization. To a
  /// tolerance they win: MGPCG to 1e-6 on the armadillo at 64 / 128 / 256 cells takes 32 / 25 /
  /// 29 iterations against 35 / 35 / 41, 3.6 s against 5.8 s at 256 cells. Under §10.2's caps
  /// (10 Newton steps × 3 iterations a frame) the frame costs the same iterations and each is
  /// dearer: frames 5–9 % slower at 256 cells at similar Newton residuals (docs/benchmarks.md,
  /// issue 24, stop 56) — so the flesh keeps the paper's.
  bool merged_coarse_elements = false;
  /// How coarse levels treat the finest level's held nodes (OctreeHierarchy::hold_nodes):
  ///  * cut: a coarse function is prolonged with the held nodes' values zeroed and the coarse
  ///    elements around them are that cut's Galerkin operator; a coarse node is held only where
  ///    every fine node it reaches is held;
  ///  * covered: every coarse node that reaches a held fine node is held too — the coarse
  ///    elements covering a held node are pinned, as a plain re-discretization (or a stiff
  ///    spring seen on every level) does. §10.4's cube as the paper configures it.
  enum class HeldCoarseNodes { cut, covered };
  HeldCoarseNodes held_coarse_nodes = HeldCoarseNodes::cut;
  int threads = 0;
};

class OctreeHierarchy {
 public:
  /// Builds the levels of `tree` for a homogeneous body of the given Lamé parameters and
  /// density (coarse levels average them with zeros for missing children, §7.3).
  OctreeHierarchy(const BalancedOctree& tree, const Lame& lame, double density, const OctreeLevelsOptions& options);
  ~OctreeHierarchy();
  OctreeHierarchy(const OctreeHierarchy&) = delete;
  OctreeHierarchy& operator=(const OctreeHierarchy&) = delete;

  [[nodiscard]] int level_count() const { return static_cast<int>(levels_.size()); }
  [[nodiscard]] const OctreeMesh& mesh(int level) const;
  [[nodiscard]] OctreeElasticOperator& op(int level);
  [[nodiscard]] const OctreeElasticOperator& op(int level) const;

  /// Embeds points given at rest (world) in the finest level, once per run; springs refer to
  /// them by index. Throws std::invalid_argument naming the first point outside the body.
  /// Only the element and ξ of each point are kept (32 bytes): a coarser level places a
  /// step's springs when prepare() runs — a render surface has far more points than are ever
  /// in contact, and their weights on every level were a fifth of the armadillo's memory at
  /// 128 cells (docs/benchmarks.md, issue 24, stop 47).
  void embed_points(std::span<const linalg::Vec3> rest_points);
  [[nodiscard]] linalg::Index embedded_point_count() const { return static_cast<linalg::Index>(points_.size()); }
  /// Embedded point p in the mesh of `level`: the coarser elements hold the finer ones, so it
  /// is found by following them down from the finest, no search.
  [[nodiscard]] EmbeddedPoint embedded_point(linalg::Index p, int level) const;
  /// The position of embedded point p for nodal values x of the finest level.
  [[nodiscard]] linalg::Vec3 point_position(linalg::Index p, std::span<const double> x) const;
  /// Holds nodes of the finest level in place (Dirichlet rows: OctreeElasticOperator::
  /// set_held_nodes; empty: none), from the next prepare() on. By default (HeldCoarseNodes::cut)
  /// the coarse levels do not pin what covers them: a coarse function is prolonged with the held
  /// nodes' values zeroed (P̃ = D·P, and R = P̃ᵀ), a coarse node is held only where every fine
  /// node it reaches is, and each coarse element over a fine element the cut changes (one with a
  /// held node, or one made Galerkin itself one level down) is made Galerkin, Σ P̃ᵀ(K_e + C_e)P̃
  /// over its children — stored as ElementCorrection G_c − K_c; a sum of semi-definite terms, so
  /// the level stays definite however its re-discretized elements differ from PᵀAP (springs and
  /// the lumped masses stay as each level places them). Pinning the coarse elements that cover
  /// a held node instead (HeldCoarseNodes::covered, or stiff springs seen on every level) leaves
  /// the modes that move a region 2^l cells wide beside it out of level l's space: on §10.4's
  /// cube (corner elements held) MGPCG's smallest Ritz value is 0.001–0.01 that way and
  /// 0.15–0.20 this way, 41 → 16 iterations at 64 cells, 51 → 18 at 256 (docs/benchmarks.md,
  /// issue 24, stop 57). Throws std::invalid_argument for a node out of range.
  void hold_nodes(std::span<const linalg::Index> finest_nodes);
  /// Gives the finest level the springs of a step (what the residual and a direct or CG solve need).
  void set_finest_springs(std::span<const EmbeddedSpring> springs);
  /// Readies every level for one Newton step once the finest level is linearized (op(0).
  /// linearize or linearize_at): its deformation gradients averaged down and every coarser
  /// level linearized (§7.3), the same springs and mass scale everywhere, the smoother
  /// diagonals recomputed (§7.4) and the coarsest level refactorized.
  void prepare(std::span<const EmbeddedSpring> springs, double mass_scale);
  [[nodiscard]] solvers::VCycle& cycle() { return *cycle_; }

  [[nodiscard]] std::size_t memory_bytes() const;
  /// Bytes of the coarsest level's Cholesky factor (0 when it is smoothed instead).
  [[nodiscard]] std::size_t coarsest_factor_bytes() const;

 private:
  struct Level;
  void build_cycle(const OctreeLevelsOptions& options);
  /// The smoother's data of one level (the §7.4 diagonal, or the 3×3 node blocks).
  void set_smoother_data(solvers::MultigridLevel& level, const OctreeElasticOperator& op) const;
  /// The finest-level element and ξ of embedded point p; throws std::invalid_argument for an unknown point.
  [[nodiscard]] const ElementPoint& located(linalg::Index p) const;
  /// spring_where_ = the finest-level element and ξ of each spring's point.
  void locate_springs(std::span<const EmbeddedSpring> springs);
  /// Gives level `level` the springs, at spring_where_ (located in that level's mesh).
  void place_springs(int level, std::span<const EmbeddedSpring> springs);
  /// Level `level`'s corrections for the held nodes of the levels finer than it (hold_nodes).
  void correct_for_held_nodes(int level);
  /// `where`, located in level `level`'s mesh, moved to the next coarser level's.
  void move_to_coarser(int level, std::span<ElementPoint> where) const;

  std::vector<std::unique_ptr<Level>> levels_;
  std::vector<ElementPoint> points_;  ///< embedded points, in the finest level
  /// A step's springs where they lie and with their weights, on the level being prepared: kept
  /// so that a Newton step allocates nothing for them.
  std::vector<ElementPoint> spring_where_;
  std::vector<EmbeddedPoint> spring_at_;
  std::unique_ptr<solvers::VCycle> cycle_;
  std::unique_ptr<solvers::DirectCoarseSolver> coarse_solver_;
  bool direct_coarsest_ = true;
  OctreeLevelsOptions::HeldCoarseNodes held_coarse_nodes_ = OctreeLevelsOptions::HeldCoarseNodes::cut;
  solvers::Smoother smoother_ = solvers::Smoother::damped_jacobi;
  int threads_ = 0;
};

/// Lamé parameters of a coarse level (§7.3): each coarse element gets the volume-weighted sum
/// of the fine elements it contains, a missing child counting as zero.
/// Per coarse element, which of its 2×2×2 children `fine` holds (bit q = bit0 x | bit1 y | bit2
/// z of the child's position); 0 where the coarse element is a fine element unchanged.
std::vector<std::uint8_t> merged_children(const OctreeMesh& fine, const OctreeMesh& coarse,
                                          std::span<const linalg::Index> coarse_element_of);

std::vector<Lame> coarsen_lame(const OctreeMesh& fine, std::span<const Lame> fine_lame, const OctreeMesh& coarse,
                               std::span<const linalg::Index> coarse_element_of);
/// Deformation gradients of a coarse level (§7.3, Algorithm 4): the average over the fine
/// elements present in each coarse element (volume-weighted where their sizes differ).
/// `coarse_element_of` is non-decreasing (Morton order), as coarse_elements_of gives it.
std::vector<linalg::Mat3> coarsen_deformation_gradients(const OctreeMesh& fine, std::span<const linalg::Mat3> fine_f,
                                                        const OctreeMesh& coarse,
                                                        std::span<const linalg::Index> coarse_element_of, int threads);

}  // namespace cholsim::fem::octree

#pragma once
// Conformal remeshing of an EOL cloth (seed 002 §2.6.1, the preprocessing the thesis runs
// before ARCSim): makes the cloth mesh conform to the sharp obstacle features the collision
// detector reports — box edges and wires as chains of conformal edges, box corners and nail
// tips as conformal vertices — and keeps its triangles well shaped near them:
//   1. insert a conformal vertex at each new feature crossing (snap to a close vertex, split
//      the edge the point is on, or split the face);
//   2. join consecutive conformal vertices of each edge feature by mesh edges (flip the edge
//      that blocks the last hop, else split the edges the material segment crosses);
//   3. repeat until nothing changes (or an iteration cap): collapse short edges, toward the
//      conformal end; split the ill-conditioned triangles around conformal vertices so that
//      the next collapse removes them.
// Velocities of created, converted and released vertices follow §2.6.2 (velocity_transfer).
// Conformal edges touching the cloth border at a shallow angle are not made (§2.6.1).
#include <span>
#include <vector>

#include "fem/cloth/cloth_mesh.hpp"

namespace cholsim::fem::cloth {

/// Where an obstacle feature meets the cloth, as the collision detector reports it.
struct FeatureCrossing {
  FeatureAttachment attachment;  ///< the feature (edge or corner) that meets the cloth
  Index triangle = -1;           ///< the cloth triangle it meets (numbered as on entry to the remesher)
  double barycentric[3] = {};    ///< the point in that triangle (one coordinate 0: on an edge of it)
  Vec3 world_position;           ///< the point on the feature: the new vertex is placed there
  double feature_parameter = 0;  ///< position along an edge feature, to order its crossings
};

struct RemeshOptions {
  /// New conformal vertices get Eulerian DOFs (EOL cloth); false for conformal Lagrangian
  /// cloth. Cloth corners never do (seed 002 §2.3).
  bool make_eulerian = true;
  /// Edges shorter than this fraction of the cloth length max(width, height) are collapsed
  /// (seed 002 §2.6.1 uses 1 %).
  double collapse_length_fraction = 0.01;
  /// A crossing closer than this fraction of the collapse length to a vertex (in material
  /// space) snaps to it; one this close to an edge splits the edge.
  double snap_fraction = 0.5;
  /// Triangles near conformal vertices with a smaller material-space angle are
  /// ill-conditioned (degrees).
  double min_angle_degrees = 15.0;
  /// A conformal edge that touches the cloth border must make at least this angle with it
  /// (degrees, seed 002 §2.6.1).
  double min_border_angle_degrees = 20.0;
  /// Consecutive conformal vertices of a feature are joined only when their material distance
  /// is at most this multiple of their world distance (otherwise the feature left the cloth
  /// between them, e.g. across a fold).
  double max_connection_stretch = 3.0;
  /// Cap on the collapse/split rounds of step 3.
  int max_iterations = 20;
};

struct RemeshStats {
  Index vertices_inserted = 0;  ///< conformal vertices created at crossings and along features
  Index vertices_snapped = 0;   ///< existing vertices made conformal by a crossing close to them
  Index crossings_tracked = 0;  ///< crossings at a conformal vertex of their feature already
  Index crossings_skipped = 0;  ///< shallow at the border, on another feature, or degenerate
  Index vertices_released = 0;  ///< conformal vertices made free again
  Index edges_split = 0;
  Index faces_split = 0;
  Index edges_flipped = 0;
  Index edges_collapsed = 0;
  Index connections_skipped = 0;        ///< consecutive conformal vertices left unjoined
  Index ill_conditioned_triangles = 0;  ///< left after the loop, among those at conformal vertices
  int iterations = 0;                   ///< rounds of step 3, the last one changing nothing
  bool converged = true;                ///< false when the iteration cap stopped step 3
  double seconds = 0.0;
  /// For each vertex number on entry, the vertex's number on return (-1: collapsed away).
  std::vector<Index> new_vertex_numbers;
};

/// Remeshes `cloth` to conform to `crossings` (new or already tracked; existing conformal
/// vertices are kept), first releasing `released_vertices` (conformal vertices the detector
/// no longer reports). Vertices are renumbered (see RemeshStats::new_vertex_numbers).
/// Throws InvalidClothError on an invalid cloth and std::invalid_argument on a crossing with
/// no attachment, a triangle out of range or barycentric coordinates that are not a point
/// of the triangle.
RemeshStats remesh_conformal(ClothMesh& cloth, std::span<const FeatureCrossing> crossings,
                             std::span<const Index> released_vertices, const RemeshOptions& options = {});
RemeshStats remesh_conformal(ClothMesh& cloth, std::span<const FeatureCrossing> crossings,
                             const RemeshOptions& options = {});

/// Makes conformal vertex v free again: no attachment and, if it was EOL, Lagrangian with
/// its world velocity (seed 002 §2.6.2, lift-off). A free vertex is left as it is.
void release_conformal(ClothMesh& cloth, Index v);

}  // namespace cholsim::fem::cloth

#include "fem/mesh/tet_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace cholsim::fem {
namespace {

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

/// The four faces of a positively oriented tet (v₀..v₃), each counter-clockwise seen from
/// outside: the normal (x_b − x_a) × (x_c − x_a) points away from the opposite vertex.
constexpr std::array<std::array<int, 3>, 4> outward_faces = {{{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}}};

/// One face of one tet, keyed by its sorted node triple so that the copies of a shared face
/// sort next to each other; `odd` records whether sorting reversed the winding, so two tets on
/// opposite sides of a face (the conforming case) have different `odd`.
struct FaceUse {
  std::array<Index, 3> sorted_nodes;
  Index tet;
  std::uint8_t local_face;
  bool odd;
};

FaceUse make_face_use(const TetMesh& mesh, Index tet, int local_face) {
  std::array<Index, 3> nodes{};
  for (int s = 0; s < 3; ++s) nodes[at(s)] = mesh.tets[4 * at(tet) + at(outward_faces[at(local_face)][at(s)])];
  // Sort three items by a fixed network, counting swaps for the parity of the winding.
  bool odd = false;
  auto order = [&](std::size_t a, std::size_t b) {
    if (nodes[a] > nodes[b]) {
      std::swap(nodes[a], nodes[b]);
      odd = !odd;
    }
  };
  order(0, 1);
  order(1, 2);
  order(0, 1);
  return {nodes, tet, static_cast<std::uint8_t>(local_face), odd};
}

/// Every face of every tet, sorted so that uses of one face are adjacent. Sorting (rather than
/// a hash map) keeps the result deterministic and the memory one flat array for 300K tets.
std::vector<FaceUse> sorted_face_uses(const TetMesh& mesh) {
  std::vector<FaceUse> faces;
  faces.reserve(4 * at(mesh.tet_count()));
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    for (int f = 0; f < 4; ++f) faces.push_back(make_face_use(mesh, tet, f));
  }
  std::sort(faces.begin(), faces.end(), [](const FaceUse& a, const FaceUse& b) {
    return a.sorted_nodes != b.sorted_nodes ? a.sorted_nodes < b.sorted_nodes : a.tet < b.tet;
  });
  return faces;
}

/// Calls visit(first, count) for every run of uses of the same face.
template <typename Visit>
void for_each_face(const std::vector<FaceUse>& faces, Visit&& visit) {
  std::size_t begin = 0;
  while (begin < faces.size()) {
    std::size_t end = begin + 1;
    while (end < faces.size() && faces[end].sorted_nodes == faces[begin].sorted_nodes) ++end;
    visit(begin, end - begin);
    begin = end;
  }
}

std::string face_name(const std::array<Index, 3>& nodes) {
  return "face (" + std::to_string(nodes[0]) + ", " + std::to_string(nodes[1]) + ", " +
         std::to_string(nodes[2]) + ")";
}

std::string tet_name(Index tet) { return "tet " + std::to_string(tet); }

/// %g-style: std::to_string prints 1e-9 as "0.000000", useless for tiny volumes.
std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

[[noreturn]] void fail(std::string_view source, const std::string& problem) {
  throw InvalidMeshError(std::string(source) + ": " + problem);
}

void check_array_shapes(const TetMesh& mesh, std::string_view source) {
  if (mesh.positions.size() % 3 != 0) {
    fail(source, std::to_string(mesh.positions.size()) +
                     " position values, not a multiple of 3; expected x, y, z per node");
  }
  if (mesh.tets.size() % 4 != 0) {
    fail(source, std::to_string(mesh.tets.size()) +
                     " tet indices, not a multiple of 4; expected 4 nodes per tet");
  }
  if (mesh.tet_count() == 0) fail(source, "no tetrahedra; expected at least one tet");
}

void check_coordinates(const TetMesh& mesh, std::string_view source) {
  for (std::size_t value = 0; value < mesh.positions.size(); ++value) {
    if (!std::isfinite(mesh.positions[value])) {
      fail(source, "node " + std::to_string(value / 3) + " coordinate " + "xyz"[value % 3] + " is " +
                       number(mesh.positions[value]) + "; expected a finite number");
    }
  }
}

void check_indices(const TetMesh& mesh, std::string_view source) {
  const Index nodes = mesh.node_count();
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    const Index* vertex = &mesh.tets[4 * at(tet)];
    for (int s = 0; s < 4; ++s) {
      if (vertex[s] < 0 || vertex[s] >= nodes) {
        fail(source, tet_name(tet) + " vertex " + std::to_string(s) + " is node " + std::to_string(vertex[s]) +
                         "; expected a node index in 0.." + std::to_string(nodes - 1));
      }
      for (int r = 0; r < s; ++r) {
        if (vertex[r] == vertex[s]) {
          fail(source, tet_name(tet) + " uses node " + std::to_string(vertex[s]) +
                           " twice; expected four distinct nodes");
        }
      }
    }
  }
}

/// Volume statistics; throws for inverted or (relative to the mean) zero-volume tets.
void check_volumes(const TetMesh& mesh, std::string_view source, MeshCheck& check) {
  std::vector<double> volumes(at(mesh.tet_count()));
  double total_magnitude = 0.0;
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    volumes[at(tet)] = linalg::linear_tet::signed_volume(mesh.tet_points(tet));
    total_magnitude += std::abs(volumes[at(tet)]);
  }
  const double mean_magnitude = total_magnitude / mesh.tet_count();
  // A tet this much smaller than the average is numerically flat: its gradients (and so its
  // stiffness) would be dominated by rounding. Thin sheets (seed 000 §5.1, aspect 10⁴) stay
  // far above this because every tet in them is equally thin.
  constexpr double zero_volume_ratio = 1e-12;
  const double zero_volume = zero_volume_ratio * mean_magnitude;
  check.min_volume = std::numeric_limits<double>::infinity();
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    const double volume = volumes[at(tet)];
    if (!(std::abs(volume) > zero_volume)) {
      fail(source, tet_name(tet) + " has zero volume (" + number(volume) + ", mean " + number(mean_magnitude) +
                       "); expected a non-degenerate tet");
    }
    if (volume < 0.0) {
      fail(source, tet_name(tet) + " is inverted (signed volume " + number(volume) +
                       "); expected det[x1-x0, x2-x0, x3-x0] > 0 (swap two vertices)");
    }
    check.min_volume = std::min(check.min_volume, volume);
  }
  check.total_volume = total_magnitude;
  check.mean_volume = mean_magnitude;
  // Slivers are legal but slow down CG and warp the stiffness; worth a line to the user.
  constexpr double sliver_ratio = 1e-3;
  if (check.min_volume < sliver_ratio * mean_magnitude) {
    check.warnings.push_back(std::string(source) + ": smallest tet volume is " +
                             number(check.min_volume / mean_magnitude) +
                             " of the mean (slivers)");
  }
}

/// A face may be used by one tet (boundary) or by two tets on opposite sides (interior).
void check_faces(const TetMesh& mesh, std::string_view source, MeshCheck& check) {
  const std::vector<FaceUse> faces = sorted_face_uses(mesh);
  for_each_face(faces, [&](std::size_t first, std::size_t count) {
    const FaceUse& face = faces[first];
    if (count > 2) {
      fail(source, face_name(face.sorted_nodes) + " is shared by " + std::to_string(count) + " tets (" +
                       tet_name(face.tet) + ", " + tet_name(faces[first + 1].tet) + ", " +
                       tet_name(faces[first + 2].tet) + "); expected at most 2 (non-manifold mesh)");
    }
    if (count == 2 && face.odd == faces[first + 1].odd) {
      fail(source, face_name(face.sorted_nodes) + " has " + tet_name(face.tet) + " and " +
                       tet_name(faces[first + 1].tet) +
                       " on the same side (overlapping tets); expected one tet on each side");
    }
    if (count == 1) ++check.boundary_triangles;
  });
}

void count_unused_nodes(const TetMesh& mesh, std::string_view source, MeshCheck& check) {
  std::vector<bool> used(at(mesh.node_count()), false);
  for (const Index node : mesh.tets) used[at(node)] = true;
  Index first_unused = -1;
  for (Index node = mesh.node_count() - 1; node >= 0; --node) {
    if (!used[at(node)]) {
      ++check.unused_nodes;
      first_unused = node;
    }
  }
  if (check.unused_nodes > 0) {
    check.warnings.push_back(std::string(source) + ": " + std::to_string(check.unused_nodes) +
                             " nodes are used by no tet (first: node " + std::to_string(first_unused) +
                             "); they get no mass — remove them with remove_unused_nodes");
  }
}

}  // namespace

MeshCheck validate_tet_mesh(const TetMesh& mesh, std::string_view source) {
  check_array_shapes(mesh, source);
  check_coordinates(mesh, source);
  check_indices(mesh, source);
  MeshCheck check;
  check.node_count = mesh.node_count();
  check.tet_count = mesh.tet_count();
  check_volumes(mesh, source, check);
  check_faces(mesh, source, check);
  count_unused_nodes(mesh, source, check);
  return check;
}

SurfaceMesh boundary_surface(const TetMesh& mesh) {
  SurfaceMesh surface;
  surface.positions = mesh.positions;
  const std::vector<FaceUse> faces = sorted_face_uses(mesh);
  for_each_face(faces, [&](std::size_t first, std::size_t count) {
    if (count != 1) return;
    const FaceUse& face = faces[first];
    for (int s = 0; s < 3; ++s) {
      surface.triangles.push_back(mesh.tets[4 * at(face.tet) + at(outward_faces[face.local_face][at(s)])]);
    }
  });
  return surface;
}

TetMesh remove_unused_nodes(const TetMesh& mesh, std::vector<Index>* kept_nodes) {
  constexpr Index unused = -1;
  std::vector<Index> new_index(at(mesh.node_count()), unused);
  for (const Index node : mesh.tets) {
    if (node < 0 || node >= mesh.node_count()) {
      throw std::invalid_argument("remove_unused_nodes: tet index " + std::to_string(node) +
                                  " outside 0.." + std::to_string(mesh.node_count() - 1));
    }
    new_index[at(node)] = 0;
  }
  TetMesh result;
  std::vector<Index> old_index;
  for (Index node = 0; node < mesh.node_count(); ++node) {
    if (new_index[at(node)] == unused) continue;
    new_index[at(node)] = static_cast<Index>(old_index.size());
    old_index.push_back(node);
    result.positions.insert(result.positions.end(), mesh.positions.begin() + 3 * node,
                            mesh.positions.begin() + 3 * node + 3);
  }
  result.tets.reserve(mesh.tets.size());
  for (const Index node : mesh.tets) result.tets.push_back(new_index[at(node)]);
  if (kept_nodes != nullptr) *kept_nodes = std::move(old_index);
  return result;
}

std::array<double, 6> bounding_box(const std::vector<double>& positions) {
  if (positions.size() < 3 || positions.size() % 3 != 0) {
    throw std::invalid_argument("bounding_box: " + std::to_string(positions.size()) +
                                " coordinates; expected a positive multiple of 3");
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::array<double, 6> box{inf, inf, inf, -inf, -inf, -inf};
  for (std::size_t value = 0; value < positions.size(); ++value) {
    const std::size_t axis = value % 3;
    box[axis] = std::min(box[axis], positions[value]);
    box[axis + 3] = std::max(box[axis + 3], positions[value]);
  }
  return box;
}

}  // namespace cholsim::fem

#include "fem/pd/pd_collisions.hpp"

#include <algorithm>
#include <cmath>

#include "fem/contact/rest_distance_field.hpp"
#include "fem/contact/tet_bvh.hpp"
#include "fem/contact/tet_grid.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {

PdCollisionDetector::PdCollisionDetector(const PdScene& scene, std::span<const Index> prone_elements,
                                         double mean_edge_length, PdCollisionOptions options)
    : scene_(&scene), options_(options), mean_edge_length_(mean_edge_length) {
  const TetMesh& mesh = scene.mesh;
  prone_.assign(static_cast<std::size_t>(mesh.tet_count()), 0);
  for (Index tet : prone_elements) {
    prone_[static_cast<std::size_t>(tet)] = 1;
  }
  if (!scene.self_contact || scene.proxies.empty()) return;
  deformed_prone_ = std::make_unique<TetGrid>(
      mesh.tets, std::vector<Index>(prone_elements.begin(), prone_elements.end()), mesh.positions);
  std::vector<Index> all(static_cast<std::size_t>(mesh.tet_count()));
  std::vector<Index> safe;
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    all[static_cast<std::size_t>(tet)] = tet;
    if (prone_[static_cast<std::size_t>(tet)] == 0) safe.push_back(tet);
  }
  deformed_safe_ = std::make_unique<TetBvh>(mesh.tets, std::move(safe), mesh.positions);
  rest_all_ = std::make_unique<TetBvh>(mesh.tets, std::move(all), mesh.positions);
  rest_field_ = std::make_unique<RestDistanceField>(mesh, options.distance_field_spacing_edges * mean_edge_length);
}

void PdCollisionDetector::update_safe_positions(std::span<const double> positions) {
  if (!deformed_safe_) return;
  deformed_safe_->refit(positions, options_.threads);
}

PdCollisionDetector::~PdCollisionDetector() = default;
PdCollisionDetector::PdCollisionDetector(PdCollisionDetector&&) noexcept = default;
PdCollisionDetector& PdCollisionDetector::operator=(PdCollisionDetector&&) noexcept = default;

std::optional<SpringRow> PdCollisionDetector::self_contact_spring(std::size_t proxy, const Vec3& point,
                                                                  std::span<const double> positions,
                                                                  PdDetectionScope scope, double* depth,
                                                                  bool* deep) const {
  const TetMesh& mesh = scene_->mesh;
  // A surface proxy always lies in its own tet and, to rounding, in the tets around it:
  // those that share a vertex with its tet are its own neighbourhood, not a contact.
  const auto own = std::span<const Index>(mesh.tets).subspan(static_cast<std::size_t>(4 * scene_->proxies[proxy].tet), 4);
  const auto skip_own_neighbourhood = [&](Index tet) {
    for (std::size_t i = 0; i < 4; ++i) {
      if (std::find(own.begin(), own.end(), mesh.tets[static_cast<std::size_t>(4 * tet) + i]) != own.end()) return true;
    }
    return false;
  };
  auto inside = deformed_prone_->locate(point, skip_own_neighbourhood);
  // Deeper than the collision-prone layer (a body bent with collisions off, Fig. 4): the
  // proxy sits in a collision-safe tet, at the positions of the last outer iteration.
  if (!inside && scope == PdDetectionScope::all) {
    inside = deformed_safe_->locate(point, skip_own_neighbourhood);
    *deep = inside.has_value();
  }
  if (!inside) return std::nullopt;
  // The rest point the proxy sits at, its depth below the rest surface, and the surface
  // point it is pushed to (McAdams et al. 2011's rest-pose level set).
  Vec3 rest_point;
  for (std::size_t i = 0; i < 4; ++i) {
    rest_point += inside->weights[i] * node_position(mesh.positions, mesh.tets[static_cast<std::size_t>(4 * inside->tet) + i]);
  }
  const DistanceSample sample = rest_field_->sample(rest_point);
  if (sample.distance >= 0.0) return std::nullopt;
  const Vec3 surface = rest_field_->project_to_surface(rest_point);
  // A surface point next to the proxy's own rest position is its own surface, folded or
  // squashed onto itself, not another part of the body: pulling the two together would crumple
  // the flesh around the proxy.
  const Vec3 home = embedded_position(mesh, scene_->proxies[proxy], mesh.positions);
  if (linalg::squared_norm(surface - home) < options_.self_exclusion_edges * options_.self_exclusion_edges *
                                                   mean_edge_length_ * mean_edge_length_) {
    return std::nullopt;
  }
  // Embed the surface point a hair inside, so that it has a containing rest tet.
  const Vec3 embedded_at = surface - (1e-3 * mean_edge_length_) * rest_field_->sample(surface).gradient;
  const auto partner = rest_all_->locate(embedded_at);
  if (!partner) return std::nullopt;
  const EmbeddedPoint other{partner->tet, partner->weights};
  const Vec3 target = embedded_position(mesh, other, positions);
  *depth = linalg::norm(target - point);
  if (prone_[static_cast<std::size_t>(partner->tet)] != 0) {
    SpringRow row = spring_between(mesh, scene_->proxies[proxy], other, scene_->proxy_stiffness);
    row.proxy = static_cast<Index>(proxy);
    return row;
  }
  SpringRow row = spring_to_target(mesh, scene_->proxies[proxy], target, scene_->proxy_stiffness);
  row.proxy = static_cast<Index>(proxy);
  return row;
}

std::vector<SpringRow> PdCollisionDetector::detect(std::span<const double> positions, PdDetectionStats* stats,
                                                   std::span<double> depths, PdDetectionScope scope) {
  const TetMesh& mesh = scene_->mesh;
  const auto proxies = static_cast<Index>(scene_->proxies.size());
  if (deformed_prone_) deformed_prone_->refit(positions, options_.threads);
  // One slot per proxy so the parallel loop writes without conflicts; compacted afterwards
  // in proxy order, so the springs do not depend on the thread count.
  std::vector<std::optional<SpringRow>> found(static_cast<std::size_t>(proxies));
  std::vector<double> depth(static_cast<std::size_t>(proxies), 0.0);
  std::vector<char> against_obstacle(static_cast<std::size_t>(proxies), 0);
  deep_springs_.resize(static_cast<std::size_t>(proxies));
  deep_depths_.resize(static_cast<std::size_t>(proxies), 0.0);
  // A query walks two BVHs and may project onto the rest surface: microseconds, so even a
  // few hundred proxies are worth both threads.
  constexpr Index kMinParallelProxies = 64;
  linalg::parallel_chunks(proxies, options_.threads, [&](Index begin, Index end) {
    for (Index p = begin; p < end; ++p) {
      const auto k = static_cast<std::size_t>(p);
      const Vec3 point = embedded_position(mesh, scene_->proxies[k], positions);
      const ObstacleProximity near = nearest_obstacle(scene_->obstacles, point, 0.0);
      if (near.distance < 0.0) {
        SpringRow row = spring_to_target(mesh, scene_->proxies[k], point - near.distance * near.normal,
                                         scene_->proxy_stiffness);
        row.proxy = p;
        found[k] = row;
        depth[k] = -near.distance;
        against_obstacle[k] = 1;
      } else if (deformed_prone_) {
        bool found_deep = false;
        found[k] = self_contact_spring(k, point, positions, scope, &depth[k], &found_deep);
        if (scope == PdDetectionScope::all) {
          deep_springs_[k] = found_deep ? found[k] : std::nullopt;
          deep_depths_[k] = found_deep ? depth[k] : 0.0;
        } else if (!found[k] && deep_springs_[k]) {
          found[k] = deep_springs_[k];
          depth[k] = deep_depths_[k];
        }
      }
    }
  }, kMinParallelProxies);
  std::vector<SpringRow> springs;
  PdDetectionStats counts;
  for (Index p = 0; p < proxies; ++p) {
    const auto k = static_cast<std::size_t>(p);
    if (!found[k]) continue;
    springs.push_back(*found[k]);
    if (against_obstacle[k] != 0) {
      ++counts.obstacle_contacts;
    } else {
      ++counts.self_contacts;
      if (found[k]->terms == 8) ++counts.bilateral_contacts;
    }
    counts.deepest_penetration = std::max(counts.deepest_penetration, depth[k]);
  }
  if (!depths.empty()) std::copy(depth.begin(), depth.end(), depths.begin());
  if (stats != nullptr) *stats = counts;
  return springs;
}

}  // namespace cholsim::fem

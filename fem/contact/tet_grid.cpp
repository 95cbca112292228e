#include "fem/contact/tet_grid.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fem/mesh/tet_mesh.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {

using linalg::Index;
using linalg::Vec3;

namespace {

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

double largest_component(const Vec3& v) { return std::max({v.x, v.y, v.z}); }

bool all_finite(const std::array<Vec3, 4>& vertices) {
  for (const Vec3& v : vertices) {
    if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) return false;
  }
  return true;
}

// Cells per tet at most, over the whole grid: a few far-flung tets (a body torn apart) make
// the cells coarser instead of the grid larger than its tets.
constexpr double kMaxCellsPerTet = 8.0;

// Fewer tets than this are taken on the calling thread: waking a worker costs more.
constexpr Index kMinParallelTets = 1024;

}  // namespace

TetGrid::TetGrid(std::span<const Index> tet_connectivity, std::vector<Index> tet_ids, std::span<const double> positions)
    : tet_ids_(std::move(tet_ids)) {
  tet_corners_ = checked_tet_corners(tet_connectivity, tet_ids_, positions, "TetGrid");
  Index largest_node = -1;
  for (const auto& nodes : tet_corners_) largest_node = std::max({largest_node, nodes[0], nodes[1], nodes[2], nodes[3]});
  required_position_count_ = 3 * at(largest_node + 1);
  refit(positions);
}

void TetGrid::take_vertices(std::size_t entry, std::span<const double> positions) {
  std::array<Vec3, 4>& vertices = vertices_[entry];
  for (std::size_t corner = 0; corner < 4; ++corner) vertices[corner] = node_position(positions, tet_corners_[entry][corner]);
  if (!all_finite(vertices)) return;
  finite_[entry] = 1;
  maps_[entry] = TetAffineMap::of(vertices);
  Vec3 lower = vertices[0];
  Vec3 upper = vertices[0];
  for (const Vec3& v : vertices) {
    lower = {std::min(lower.x, v.x), std::min(lower.y, v.y), std::min(lower.z, v.z)};
    upper = {std::max(upper.x, v.x), std::max(upper.y, v.y), std::max(upper.z, v.z)};
  }
  // As the tree's leaves: grown as far as the weight tolerance lets an accepted point stray.
  const double padding = 4.0 * kTetWeightTolerance * largest_component(upper - lower);
  lower_[entry] = lower - Vec3{padding, padding, padding};
  upper_[entry] = upper + Vec3{padding, padding, padding};
}

void TetGrid::refit(std::span<const double> positions, int threads) {
  if (positions.size() < required_position_count_) {
    throw std::invalid_argument("TetGrid::refit: " + std::to_string(positions.size()) +
                                " coordinates given, the grid's tets need " + std::to_string(required_position_count_));
  }
  const std::size_t entries = tet_ids_.size();
  vertices_.resize(entries);
  maps_.resize(entries);
  lower_.resize(entries);
  upper_.resize(entries);
  finite_.assign(entries, 0);
  linalg::parallel_chunks(static_cast<Index>(entries), threads, [&](Index first, Index last) {
    for (auto entry = at(first); entry < at(last); ++entry) take_vertices(entry, positions);
  }, kMinParallelTets);
  size_cells();
  // Counting sort of the entries by cell, in entry order within a cell, without scratch: the
  // counts summed into each cell's end, then the entries placed from the back, last entry
  // first, each cell's end moving down to its start.
  const std::size_t cell_total = at(cells_[0]) * at(cells_[1]) * at(cells_[2]);
  cell_start_.assign(cell_total + 1, 0);
  const auto for_each_cell = [&](std::size_t entry, auto&& visit) {
    const std::array<Index, 6> range = cell_range(entry);
    for (Index z = range[2]; z <= range[5]; ++z) {
      for (Index y = range[1]; y <= range[4]; ++y) {
        for (Index x = range[0]; x <= range[3]; ++x) visit(cell_index(x, y, z));
      }
    }
  };
  for (std::size_t entry = 0; entry < entries; ++entry) {
    if (finite_[entry] != 0) for_each_cell(entry, [&](std::size_t cell) { ++cell_start_[cell]; });
  }
  for (std::size_t cell = 1; cell <= cell_total; ++cell) cell_start_[cell] += cell_start_[cell - 1];
  cell_entries_.resize(cell_start_[cell_total]);
  for (std::size_t entry = entries; entry-- > 0;) {
    if (finite_[entry] == 0) continue;
    for_each_cell(entry, [&](std::size_t cell) { cell_entries_[--cell_start_[cell]] = static_cast<Index>(entry); });
  }
}

void TetGrid::size_cells() {
  Vec3 lower;
  Vec3 upper;
  double extent_sum = 0.0;
  std::size_t finite_count = 0;
  for (std::size_t entry = 0; entry < tet_ids_.size(); ++entry) {
    if (finite_[entry] == 0) continue;
    lower = finite_count == 0 ? lower_[entry]
                              : Vec3{std::min(lower.x, lower_[entry].x), std::min(lower.y, lower_[entry].y),
                                     std::min(lower.z, lower_[entry].z)};
    upper = finite_count == 0 ? upper_[entry]
                              : Vec3{std::max(upper.x, upper_[entry].x), std::max(upper.y, upper_[entry].y),
                                     std::max(upper.z, upper_[entry].z)};
    extent_sum += largest_component(upper_[entry] - lower_[entry]);
    ++finite_count;
  }
  if (finite_count == 0) {
    cells_ = {0, 0, 0};
    return;
  }
  origin_ = lower;
  const Vec3 extent = upper - lower;
  // Cells about a tet's size: a tet's box then reaches two cells along an axis, a cell holds a
  // handful of tets.
  cell_size_ = extent_sum / static_cast<double>(finite_count);
  if (!(cell_size_ > 0.0)) cell_size_ = std::max(largest_component(extent), 1.0);
  const double max_cells = std::max(1.0, kMaxCellsPerTet * static_cast<double>(finite_count));
  for (;;) {
    double total = 1.0;
    for (int axis = 0; axis < 3; ++axis) total *= std::max(1.0, std::ceil(extent[axis] / cell_size_));
    if (total <= max_cells) break;
    cell_size_ *= std::cbrt(total / max_cells) * 1.01;
  }
  for (int axis = 0; axis < 3; ++axis) {
    cells_[static_cast<std::size_t>(axis)] = static_cast<Index>(std::max(1.0, std::ceil(extent[axis] / cell_size_)));
  }
}

std::array<Index, 6> TetGrid::cell_range(std::size_t entry) const {
  std::array<Index, 6> range{};
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const auto clamp_cell = [&](double coordinate) {
      const double t = std::floor((coordinate - origin_[static_cast<int>(axis)]) / cell_size_);
      return static_cast<Index>(std::clamp(t, 0.0, static_cast<double>(cells_[axis] - 1)));
    };
    range[axis] = clamp_cell(lower_[entry][static_cast<int>(axis)]);
    range[axis + 3] = clamp_cell(upper_[entry][static_cast<int>(axis)]);
  }
  return range;
}

std::size_t TetGrid::cell_index(Index x, Index y, Index z) const {
  return (at(z) * at(cells_[1]) + at(y)) * at(cells_[0]) + at(x);
}

std::optional<std::array<Index, 3>> TetGrid::cell_of(const Vec3& point) const {
  if (cells_[0] == 0) return std::nullopt;
  std::array<Index, 3> cell{};
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const double t = (point[static_cast<int>(axis)] - origin_[static_cast<int>(axis)]) / cell_size_;
    const auto count = static_cast<double>(cells_[axis]);
    // Written so that NaN falls outside; a point on the grid's far face belongs to its last cell.
    if (!(t >= 0.0 && t <= count)) return std::nullopt;
    cell[axis] = static_cast<Index>(std::min(std::floor(t), count - 1.0));
  }
  return cell;
}

std::optional<TetLocation> TetGrid::locate(const Vec3& point, const std::function<bool(Index tet)>& skip) const {
  const auto cell = cell_of(point);
  if (!cell) return std::nullopt;
  const std::size_t index = cell_index((*cell)[0], (*cell)[1], (*cell)[2]);
  BestTetLocation best;
  for (std::size_t k = cell_start_[index]; k < cell_start_[index + 1]; ++k) {
    const auto entry = at(cell_entries_[k]);
    if (!maps_[entry].may_contain(point)) continue;
    const Index tet = tet_ids_[entry];
    if (skip && skip(tet)) continue;
    best.consider(tet, vertices_[entry], point);
  }
  return best.result();
}

}  // namespace cholsim::fem

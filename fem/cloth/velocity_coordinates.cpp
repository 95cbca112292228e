#include "fem/cloth/velocity_coordinates.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::fem::cloth {

namespace {

using linalg::CscMatrix;
using linalg::Offset;
using solvers::qp::QpProblem;
using Vector3 = std::array<double, 3>;

/// A row whose part orthogonal to the earlier rows of its block is below this (relative to the
/// row) adds no direction; dropping that part changes the row by at most this much.
constexpr double kDependentRow = 1e-12;
/// A dependent equality row must agree with the earlier ones to this (relative) accuracy.
constexpr double kConsistentRow = 1e-10;

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

double dot(const Vector3& a, const Vector3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vector3& a) { return std::sqrt(dot(a, a)); }

/// Which vertex block a DOF belongs to: blocks 0..n−1 are the vertices' ẋ (3 DOFs each),
/// blocks n.. the EOL vertices' Ẋ (2 each), in the order of cloth_dofs.hpp.
struct BlockLayout {
  Index vertex_count = 0;
  Index block_count = 0;

  explicit BlockLayout(const ClothDofs& dofs)
      : vertex_count(dofs.vertex_count), block_count(dofs.vertex_count + dofs.eulerian_vertex_count()) {}
  [[nodiscard]] Index block_of(Index column) const {
    const Index lagrangian = 3 * vertex_count;
    return column < lagrangian ? column / 3 : vertex_count + (column - lagrangian) / 2;
  }
  [[nodiscard]] Index first(Index block) const {
    return block < vertex_count ? 3 * block : 3 * vertex_count + 2 * (block - vertex_count);
  }
  [[nodiscard]] int size(Index block) const { return block < vertex_count ? 3 : 2; }
};

/// The rows of a constraint matrix, stored as the columns of its transpose (so a row's entries
/// are contiguous and sorted by column).
struct RowMajor {
  CscMatrix transposed;  ///< n × rows

  explicit RowMajor(const CscMatrix& a) {
    if (a.rows > 0) transposed = linalg::transpose(a);
  }
  [[nodiscard]] Index row_count() const { return transposed.cols; }
  [[nodiscard]] Offset begin(Index row) const { return transposed.col_ptr[at(row)]; }
  [[nodiscard]] Offset end(Index row) const { return transposed.col_ptr[at(row) + 1]; }
  [[nodiscard]] Index column(Offset p) const { return transposed.row_idx[static_cast<std::size_t>(p)]; }
  [[nodiscard]] double value(Offset p) const { return transposed.values[static_cast<std::size_t>(p)]; }

  /// The one block the row touches, or −1 when it touches several or none.
  [[nodiscard]] Index single_block(Index row, const BlockLayout& layout) const {
    if (begin(row) == end(row)) return -1;
    const Index block = layout.block_of(column(begin(row)));
    return layout.block_of(column(end(row) - 1)) == block ? block : -1;
  }
  /// The row's entries in the block starting at DOF `first` (the row touches no other).
  [[nodiscard]] Vector3 block_vector(Index row, Index first) const {
    Vector3 a{};
    for (Offset p = begin(row); p < end(row); ++p) a[at(column(p) - first)] = value(p);
    return a;
  }
};

/// An orthonormal set of directions in a block's 2- or 3-space, grown by Gram–Schmidt.
struct Frame {
  int size = 3;
  int count = 0;
  std::array<Vector3, 3> axes{};

  /// a minus its components along the axes; `along` receives them. Modified Gram–Schmidt run
  /// twice, so that even a nearly dependent row leaves an orthonormal frame.
  [[nodiscard]] Vector3 project_out(Vector3 a, Vector3& along) const {
    along = {};
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < count; ++i) {
        const double c = dot(a, axes[at(i)]);
        along[at(i)] += c;
        for (std::size_t k = 0; k < 3; ++k) a[k] -= c * axes[at(i)][k];
      }
    }
    return a;
  }
  /// Adds a's direction when it is not (nearly) in the span; reports whether it did.
  bool add_independent(const Vector3& a) {
    Vector3 along;
    const Vector3 rest = project_out(a, along);
    const double length = norm(rest);
    if (length <= kDependentRow * norm(a)) return false;
    axes[at(count++)] = {rest[0] / length, rest[1] / length, rest[2] / length};
    return true;
  }
  /// Completes the basis with the unit axes farthest from the span (each leaves at least
  /// 1/√3 after projection, so the completion is well conditioned).
  void complete() {
    while (count < size) {
      Vector3 best{};
      double best_length = -1.0;
      for (int k = 0; k < size; ++k) {
        Vector3 unit{}, along;
        unit[at(k)] = 1.0;
        const Vector3 rest = project_out(unit, along);
        if (norm(rest) > best_length) {
          best = rest;
          best_length = norm(rest);
        }
      }
      axes[at(count++)] = {best[0] / best_length, best[1] / best_length, best[2] / best_length};
    }
  }
};

/// Everything the rows of one block decide.
struct BlockFrame {
  Frame frame;
  int equality_axes = 0;  ///< the first axes: the eliminated directions
  Vector3 offset{};       ///< the block's part of q̇₀
  std::array<double, 3> offset_along{};  ///< the eliminated rows' values along the equality axes
};

/// Eliminates equality row a·q̇_v = e of the block (seed 002 §2.5: scripted axes, the Eulerian
/// equality of Algorithm 2.2): a new direction of the frame with its value, or — when a is in
/// the span of the earlier rows — a check that e agrees with them.
void add_equality(BlockFrame& block, const Vector3& a, double e, Index row, Index vertex_block) {
  Frame& frame = block.frame;
  Vector3 along;
  const Vector3 rest = frame.project_out(a, along);
  double value = e;
  for (int i = 0; i < frame.count; ++i) value -= along[at(i)] * block.offset_along[at(i)];
  const double length = norm(rest);
  if (length <= kDependentRow * norm(a)) {
    if (std::abs(value) > kConsistentRow * (std::abs(e) + norm(a) * norm(block.offset))) {
      throw std::invalid_argument("reduce_velocity_qp: equality row " + std::to_string(row) + " contradicts the earlier equality rows of vertex block " +
                                  std::to_string(vertex_block) + " (a dependent row must have a consistent right-hand side)");
    }
    return;
  }
  const Vector3 axis{rest[0] / length, rest[1] / length, rest[2] / length};
  block.offset_along[at(frame.count)] = value / length;
  for (std::size_t k = 0; k < 3; ++k) block.offset[k] += (value / length) * axis[k];
  frame.axes[at(frame.count++)] = axis;
  ++block.equality_axes;
}

/// The rows of the constraint matrices that touch one block only, grouped by block in row
/// order (a counting sort).
struct RowsByBlock {
  std::vector<Index> start;  ///< block b's rows: rows[start[b] .. start[b+1])
  std::vector<Index> rows;

  RowsByBlock(const RowMajor& a, const BlockLayout& layout) : start(at(layout.block_count) + 1, 0) {
    std::vector<Index> block_of_row(at(a.row_count()));
    for (Index i = 0; i < a.row_count(); ++i) {
      block_of_row[at(i)] = a.single_block(i, layout);
      if (block_of_row[at(i)] >= 0) ++start[at(block_of_row[at(i)]) + 1];
    }
    for (std::size_t b = 0; b < at(layout.block_count); ++b) start[b + 1] += start[b];
    rows.resize(at(start.back()));
    std::vector<Index> next(start.begin(), start.end() - 1);
    for (Index i = 0; i < a.row_count(); ++i) {
      if (block_of_row[at(i)] >= 0) rows[at(next[at(block_of_row[at(i)])]++)] = i;
    }
  }
  [[nodiscard]] std::span<const Index> of(Index block) const {
    return std::span(rows).subspan(at(start[at(block)]), at(start[at(block) + 1] - start[at(block)]));
  }
};

/// The change of variables and what the row transformation needs from the frames.
struct Frames {
  std::vector<VelocityBlock> blocks;
  std::vector<double> offset;
  std::vector<unsigned char> eliminated;  ///< per equality row
  /// Per inequality row: its leading columns in its block's y that may be nonzero (the
  /// Gram–Schmidt order makes the rest vanish); 3 (no limit) for rows over several blocks.
  std::vector<int> inequality_limit;
};

void finish_block(const BlockFrame& built, Index b, const BlockLayout& layout, Frames& out) {
  VelocityBlock& block = out.blocks[at(b)];
  block.reduced_size = block.size - built.equality_axes;
  block.identity = built.equality_axes == 0;
  for (int c = 0; c < block.reduced_size; ++c) {
    for (int k = 0; k < block.size; ++k) {
      const double entry = built.frame.axes[at(built.equality_axes + c)][at(k)];
      block.basis[at(k + 3 * c)] = entry;
      if (entry != (k == c ? 1.0 : 0.0)) block.identity = false;
    }
  }
  for (int k = 0; k < block.size; ++k) out.offset[at(layout.first(b) + k)] = built.offset[at(k)];
}

/// Builds every block's frame from its single-block rows (the file comment of the header).
Frames build_frames(const RowMajor& equality, std::span<const double> equality_rhs, const RowMajor& inequality,
                    const BlockLayout& layout, Index n) {
  Frames out;
  out.blocks.resize(at(layout.block_count));
  out.offset.assign(at(n), 0.0);
  out.eliminated.assign(at(equality.row_count()), 0);
  out.inequality_limit.assign(at(inequality.row_count()), 3);
  const RowsByBlock equality_rows(equality, layout), inequality_rows(inequality, layout);
  for (Index b = 0; b < layout.block_count; ++b) {
    VelocityBlock& block = out.blocks[at(b)];
    block.first = layout.first(b);
    block.size = layout.size(b);
    block.reduced_size = block.size;
    if (equality_rows.of(b).empty() && inequality_rows.of(b).empty()) continue;
    BlockFrame built;
    built.frame.size = block.size;
    for (Index row : equality_rows.of(b)) {
      add_equality(built, equality.block_vector(row, block.first), equality_rhs[at(row)], row, b);
      out.eliminated[at(row)] = 1;
    }
    for (Index row : inequality_rows.of(b)) {
      built.frame.add_independent(inequality.block_vector(row, block.first));
      out.inequality_limit[at(row)] = built.frame.count - built.equality_axes;
    }
    built.frame.complete();
    finish_block(built, b, layout, out);
  }
  Index reduced = 0;
  for (VelocityBlock& block : out.blocks) {
    block.reduced_first = reduced;
    reduced += block.reduced_size;
  }
  return out;
}

/// Rows `rows` of A (given row-major) times T: a rows.size() × reduced matrix. Within a block a
/// row keeps its first `limit[row]` columns at most (the others are zero up to rounding by the
/// Gram–Schmidt order); exact zeros are dropped so that they do not count as constrained.
CscMatrix transform_rows(const RowMajor& a, std::span<const Index> rows, std::span<const int> limit,
                         const std::vector<VelocityBlock>& blocks, const BlockLayout& layout, Index reduced) {
  CscMatrix by_row;  // (T ᵀAᵀ): reduced × rows, one column per output row
  by_row.rows = reduced;
  by_row.cols = static_cast<Index>(rows.size());
  by_row.col_ptr.reserve(rows.size() + 1);
  const auto emit = [&by_row](Index column, double value) {
    if (value == 0.0) return;
    by_row.row_idx.push_back(column);
    by_row.values.push_back(value);
  };
  for (Index row : rows) {
    for (Offset p = a.begin(row); p < a.end(row);) {
      const VelocityBlock& block = blocks[at(layout.block_of(a.column(p)))];
      Vector3 entries{};
      for (; p < a.end(row) && a.column(p) < block.first + block.size; ++p) entries[at(a.column(p) - block.first)] = a.value(p);
      const int columns = limit.empty() ? block.reduced_size : std::min(block.reduced_size, limit[at(row)]);
      for (int c = 0; c < columns; ++c) {
        double value = entries[at(c)];
        if (!block.identity) {
          value = 0.0;
          for (int k = 0; k < block.size; ++k) value += entries[at(k)] * block.basis[at(k + 3 * c)];
        }
        emit(block.reduced_first + c, value);
      }
    }
    by_row.col_ptr.push_back(static_cast<Offset>(by_row.row_idx.size()));
  }
  return linalg::transpose(by_row);
}

/// A dense block pair, column-major with leading dimension 3.
using Dense3 = std::array<double, 9>;

/// G = T_Iᵀ B T_J for one block pair (B is d_I × d_J, column-major, leading dimension 3).
Dense3 transform_pair(const Dense3& b, const VelocityBlock& row_block, const VelocityBlock& column_block) {
  Dense3 right{};  // B T_J
  for (int c = 0; c < column_block.reduced_size; ++c) {
    for (int i = 0; i < row_block.size; ++i) {
      double sum = b[at(i + 3 * c)];
      if (!column_block.identity) {
        sum = 0.0;
        for (int k = 0; k < column_block.size; ++k) sum += b[at(i + 3 * k)] * column_block.basis[at(k + 3 * c)];
      }
      right[at(i + 3 * c)] = sum;
    }
  }
  if (row_block.identity) return right;
  Dense3 g{};
  for (int c = 0; c < column_block.reduced_size; ++c) {
    for (int r = 0; r < row_block.reduced_size; ++r) {
      double sum = 0.0;
      for (int i = 0; i < row_block.size; ++i) sum += row_block.basis[at(i + 3 * r)] * right[at(i + 3 * c)];
      g[at(r + 3 * c)] = sum;
    }
  }
  return g;
}

/// TᵀHT in lower storage, one block column at a time: H's entries of the column's block pairs
/// are gathered into dense blocks, transformed, and written out. A pair of two identity blocks
/// keeps H's own pattern; a transformed pair is dense (its r_I × r_J entries).
class HessianTransform {
 public:
  HessianTransform(const std::vector<VelocityBlock>& blocks, const BlockLayout& layout)
      : blocks_(blocks), layout_(layout), slot_(at(layout.block_count), -1) {}

  linalg::SymmetricCscMatrix operator()(const linalg::SymmetricCscMatrix& h, Index reduced) {
    linalg::SymmetricCscMatrix out;
    CscMatrix& lower = out.lower;
    lower.rows = lower.cols = reduced;
    lower.col_ptr.reserve(at(reduced) + 1);
    lower.row_idx.reserve(at(h.nnz_lower()));
    lower.values.reserve(at(h.nnz_lower()));
    for (Index j = 0; j < layout_.block_count; ++j) {
      gather(h.lower, j);
      write_block_column(j, lower);
    }
    return out;
  }

 private:
  struct Pair {
    Index row_block = 0;
    Dense3 values{};
    unsigned pattern = 0;  ///< bit i + 3k: H stores entry (i, k) of the pair
  };

  void gather(const CscMatrix& h, Index j) {
    pairs_.clear();
    const VelocityBlock& column_block = blocks_[at(j)];
    for (int k = 0; k < column_block.size; ++k) {
      const Index column = column_block.first + k;
      for (Offset p = h.col_ptr[at(column)]; p < h.col_ptr[at(column) + 1]; ++p) {
        const Index row = h.row_idx[static_cast<std::size_t>(p)];
        const Index i = layout_.block_of(row);
        if (slot_[at(i)] < 0) {
          slot_[at(i)] = static_cast<Index>(pairs_.size());
          pairs_.push_back({i, {}, 0});
        }
        Pair& pair = pairs_[at(slot_[at(i)])];
        const auto position = at(row - blocks_[at(i)].first + 3 * k);
        pair.values[position] = h.values[static_cast<std::size_t>(p)];
        pair.pattern |= 1U << position;
      }
    }
    for (const Pair& pair : pairs_) slot_[at(pair.row_block)] = -1;
    std::sort(pairs_.begin(), pairs_.end(), [](const Pair& a, const Pair& b) { return a.row_block < b.row_block; });
  }

  void write_block_column(Index j, CscMatrix& lower) {
    const VelocityBlock& column_block = blocks_[at(j)];
    for (Pair& pair : pairs_) {
      const VelocityBlock& row_block = blocks_[at(pair.row_block)];
      if (row_block.identity && column_block.identity) continue;
      if (pair.row_block == j) symmetrize(pair.values, column_block.size);
      pair.values = transform_pair(pair.values, row_block, column_block);
      pair.pattern = ~0U;
    }
    for (int c = 0; c < column_block.reduced_size; ++c) {
      for (const Pair& pair : pairs_) {
        const VelocityBlock& row_block = blocks_[at(pair.row_block)];
        for (int r = pair.row_block == j ? c : 0; r < row_block.reduced_size; ++r) {
          if ((pair.pattern >> (r + 3 * c) & 1U) == 0) continue;
          lower.row_idx.push_back(row_block.reduced_first + r);
          lower.values.push_back(pair.values[at(r + 3 * c)]);
        }
      }
      lower.col_ptr.push_back(static_cast<Offset>(lower.row_idx.size()));
    }
  }

  /// A diagonal block holds its lower triangle only; T_vᵀ B T_v needs all of B.
  static void symmetrize(Dense3& b, int size) {
    for (int c = 0; c < size; ++c) {
      for (int r = 0; r < c; ++r) b[at(r + 3 * c)] = b[at(c + 3 * r)];
    }
  }

  const std::vector<VelocityBlock>& blocks_;
  const BlockLayout& layout_;
  std::vector<Index> slot_;  ///< per block: its pair in pairs_, −1 when none
  std::vector<Pair> pairs_;
};

void check_dofs(const QpProblem& problem, const ClothDofs& dofs) {
  const Index lagrangian = 3 * dofs.vertex_count;
  if (dofs.vertex_count < 0 || dofs.size < lagrangian || (dofs.size - lagrangian) % 2 != 0) {
    throw std::invalid_argument("reduce_velocity_qp: the DOF numbering has " + std::to_string(dofs.size) + " DOFs for " +
                                std::to_string(dofs.vertex_count) + " vertices, expected 3 per vertex plus 2 per EOL vertex");
  }
  if (problem.variable_count() != dofs.size) {
    throw std::invalid_argument("reduce_velocity_qp: the problem has " + std::to_string(problem.variable_count()) +
                                " variables, the DOF numbering " + std::to_string(dofs.size));
  }
}

/// Tᵀ v for a vector over q̇.
std::vector<double> transpose_times(const std::vector<VelocityBlock>& blocks, std::span<const double> v, Index reduced) {
  std::vector<double> out(at(reduced));
  for (const VelocityBlock& block : blocks) {
    for (int c = 0; c < block.reduced_size; ++c) {
      double sum = v[at(block.first + c)];
      if (!block.identity) {
        sum = 0.0;
        for (int k = 0; k < block.size; ++k) sum += block.basis[at(k + 3 * c)] * v[at(block.first + k)];
      }
      out[at(block.reduced_first + c)] = sum;
    }
  }
  return out;
}

/// c − A q̇₀ for the rows `rows` of A.
std::vector<double> shifted_rhs(const CscMatrix& a, std::span<const double> rhs, std::span<const Index> rows,
                                std::span<const double> offset) {
  std::vector<double> a_offset(rhs.size());
  solvers::qp::constraint_multiply(a, offset, a_offset);
  std::vector<double> out;
  out.reserve(rows.size());
  for (Index row : rows) out.push_back(rhs[at(row)] - a_offset[at(row)]);
  return out;
}

}  // namespace

VelocityCoordinates::VelocityCoordinates(std::vector<VelocityBlock> blocks, std::vector<double> offset,
                                         std::vector<Index> kept_equality_rows)
    : blocks_(std::move(blocks)), offset_(std::move(offset)), kept_equality_rows_(std::move(kept_equality_rows)) {}

Index VelocityCoordinates::reduced_size() const {
  return blocks_.empty() ? 0 : blocks_.back().reduced_first + blocks_.back().reduced_size;
}

std::vector<double> VelocityCoordinates::velocities(std::span<const double> y) const {
  if (static_cast<Index>(y.size()) != reduced_size()) {
    throw std::invalid_argument("VelocityCoordinates::velocities: y has " + std::to_string(y.size()) + " entries, expected " +
                                std::to_string(reduced_size()));
  }
  std::vector<double> qdot = offset_;
  for (const VelocityBlock& block : blocks_) {
    for (int c = 0; c < block.reduced_size; ++c) {
      const double coordinate = y[at(block.reduced_first + c)];
      if (block.identity) {
        qdot[at(block.first + c)] += coordinate;
        continue;
      }
      for (int k = 0; k < block.size; ++k) qdot[at(block.first + k)] += block.basis[at(k + 3 * c)] * coordinate;
    }
  }
  return qdot;
}

std::vector<double> VelocityCoordinates::reduced_velocities(std::span<const double> qdot) const {
  if (static_cast<Index>(qdot.size()) != size()) {
    throw std::invalid_argument("VelocityCoordinates::reduced_velocities: q̇ has " + std::to_string(qdot.size()) +
                                " entries, expected " + std::to_string(size()));
  }
  std::vector<double> shifted(qdot.begin(), qdot.end());
  for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] -= offset_[i];
  return transpose_times(blocks_, shifted, reduced_size());
}

ReducedVelocityQp reduce_velocity_qp(const QpProblem& problem, const ClothDofs& dofs) {
  solvers::qp::check_problem(problem);
  check_dofs(problem, dofs);
  const BlockLayout layout(dofs);
  const RowMajor equality(problem.equality), inequality(problem.inequality);
  Frames frames = build_frames(equality, problem.equality_rhs, inequality, layout, dofs.size);

  std::vector<Index> kept, all_inequality(at(problem.inequality_count()));
  for (Index row = 0; row < problem.equality_count(); ++row) {
    if (!frames.eliminated[at(row)]) kept.push_back(row);
  }
  for (Index row = 0; row < problem.inequality_count(); ++row) all_inequality[at(row)] = row;

  VelocityCoordinates coordinates(std::move(frames.blocks), std::move(frames.offset), std::move(kept));
  const std::vector<VelocityBlock>& blocks = coordinates.blocks();
  const std::vector<double>& offset = coordinates.offset();
  const Index reduced = coordinates.reduced_size();

  ReducedVelocityQp out;
  out.problem.hessian = HessianTransform(blocks, layout)(problem.hessian, reduced);
  std::vector<double> shifted_linear = problem.linear;  // b − H q̇₀
  if (std::any_of(offset.begin(), offset.end(), [](double v) { return v != 0.0; })) {
    std::vector<double> h_offset(offset.size());
    linalg::symmetric_multiply(problem.hessian, offset, h_offset);
    for (std::size_t i = 0; i < shifted_linear.size(); ++i) shifted_linear[i] -= h_offset[i];
  }
  out.problem.linear = transpose_times(blocks, shifted_linear, reduced);
  const std::vector<Index>& kept_rows = coordinates.kept_equality_rows();
  out.problem.equality = transform_rows(equality, kept_rows, {}, blocks, layout, reduced);
  out.problem.equality_rhs = shifted_rhs(problem.equality, problem.equality_rhs, kept_rows, offset);
  out.problem.inequality = transform_rows(inequality, all_inequality, frames.inequality_limit, blocks, layout, reduced);
  out.problem.inequality_rhs = shifted_rhs(problem.inequality, problem.inequality_rhs, all_inequality, offset);
  out.coordinates = std::move(coordinates);
  return out;
}

}  // namespace cholsim::fem::cloth

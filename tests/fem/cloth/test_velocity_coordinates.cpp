// fem/cloth/velocity_coordinates: the change of variables q̇ = T y + q̇₀ of the step QP (seed 002
// eq. 2.12) on real step QPs (ClothStepAssembler + build_constraints: tilted face contacts,
// scripted vertices, EOL vertices on a box edge and a box corner, a domain-corner EOL vertex):
// the reduced problem against dense TᵀHT, Tᵀ(b − Hq̇₀), CT, c − Cq̇₀; the reduced QP's solution
// mapped back against the original QP's (velocities, multipliers, equalities); row sparsity and
// constrained columns; orthonormal blocks; kept multi-vertex equalities; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "fem/cloth/cloth_constraints.hpp"
#include "fem/cloth/cloth_step_system.hpp"
#include "fem/cloth/velocity_coordinates.hpp"
#include "linalg/vector_norms.hpp"
#include "solvers/qp/interior_point.hpp"

namespace cholsim::fem::cloth {
namespace {

using linalg::max_abs;
using linalg::max_abs_difference;

namespace qp = solvers::qp;
using Kind = FeatureAttachment::Kind;
using linalg::Offset;

constexpr double kStep = 5e-3;
constexpr int kCells = 10;  // 0.1 m spacing on a 1 × 1 m sheet

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

Index vertex_at(const ClothMesh& cloth, double u, double v) {
  for (Index w = 0; w < cloth.vertex_count(); ++w) {
    if (std::abs(cloth.material[2 * at(w)] - u) < 1e-9 && std::abs(cloth.material[2 * at(w) + 1] - v) < 1e-9) return w;
  }
  throw std::logic_error("no vertex at the material point");
}

/// A step QP as ClothSimulation::step builds it, and what the test expects of its reduction.
struct StepQp {
  ClothMesh cloth;
  ClothDofs dofs;
  ClothConstraints rows;
  qp::QpProblem problem;
  std::vector<Index> contact_rows;  ///< the face-contact rows of free vertices
  Index expected_columns = 0;       ///< constrained columns after the reduction
};

/// A 1 × 1 m sheet folded over the top edge of a box, as in EDGE: the box spans x ∈ [−½, ½],
/// y ∈ [0, 1], z ∈ [−½, 0] and moves (so that every row has a right-hand side); the sheet lies
/// on the top face, x = (u, v, 0) for u ≤ ½, and hangs down the side face, x = (½, v, ½ − u),
/// slightly wrinkled off the faces so that every triangle has its own F.
///  * The line u = ½ is EOL on the top edge x = ½ (edge 7: normals +z, +x), its vertices on the
///    edge; their material u is jittered so that the Eulerian directions t̄ are tilted, and
///    vertex (½, 0.1) is moved to v = 0.04, within 5 % of the border (a material-domain row).
///    The fold makes the motion ẋ = FẊ that moves no material (§2.5.2) cost inertia, so the QP
///    has one solution. With `box_corner`, the line's end (½, 1) sits on the box corner 7
///    instead: three normals and no Eulerian equality — but then its sliding along the edge
///    costs almost nothing, so this variant is for the structure, not for solving.
///  * The cloth corner (1, 0) is EOL on the bottom edge of the side face (edge 6): a domain
///    corner, two Eulerian equalities, no Ẋ left.
///  * Tilted face contacts on free vertices of the top face, one on a vertex scripted along x,
///    one on the fixed corner (0, 1).
///  * The corners (1, 1) and (0, 1) are scripted on all axes, (0, 0) moves on x and z.
StepQp edge_step_qp(unsigned seed, bool box_corner = false) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> jitter(-0.003, 0.003), wrinkle(-0.005, 0.005), tilt(-0.4, 0.4),
      speed(-0.05, 0.05);
  StepQp s;
  s.cloth = make_rectangle_cloth(1.0, 1.0, kCells, kCells, {0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  ClothMesh& cloth = s.cloth;
  for (double& v : cloth.velocities) v = speed(random);
  ClothObstacles obstacles;
  obstacles.boxes.push_back({{0.0, 0.5, -0.25}, {0.5, 0.5, 0.25}, {0.02, 0.0, -0.01}, 0.0, 1e300});

  for (Index v = 0; v < cloth.vertex_count(); ++v) {  // the fold, wrinkled along the faces' normals
    const double u = cloth.material[2 * at(v)], w = wrinkle(random);
    const Vec3 x{u <= 0.5 ? u : 0.5 + w, cloth.material[2 * at(v) + 1], u <= 0.5 ? w : 0.5 - u};
    for (int k = 0; k < 3; ++k) cloth.positions[3 * at(v) + at(k)] = x[k];
  }
  Index expected = 0;
  const auto make_eol = [&cloth, &random, &speed](Index v, Kind kind, int feature) {
    cloth.eulerian[at(v)] = 1;
    cloth.attachments[at(v)] = {kind, 0, feature};
    cloth.material_velocities[2 * at(v)] = speed(random);
  };
  const Index near_border = vertex_at(cloth, 0.5, 0.1), line_end = vertex_at(cloth, 0.5, 1.0);
  for (int j = 0; j <= kCells; ++j) {
    const Index v = vertex_at(cloth, 0.5, 0.1 * j);
    const bool on_corner = box_corner && v == line_end;
    make_eol(v, on_corner ? Kind::corner : Kind::edge, 7);
    cloth.material[2 * at(v)] += jitter(random);
    cloth.positions[3 * at(v) + 2] = 0.0;  // on the edge
    // edge: two normals on ẋ, Ẋ along its one free direction (area rows); corner: 3 + 2
    expected += on_corner ? 5 : 3;
  }
  cloth.material[2 * at(near_border) + 1] = 0.04;
  cloth.positions[3 * at(near_border) + 1] = 0.04;
  const Index domain_corner = vertex_at(cloth, 1.0, 0.0);
  make_eol(domain_corner, Kind::edge, 6);
  cloth.positions[3 * at(domain_corner)] = 0.5;  // on the edge
  expected += 2;  // two normals; both Eulerian DOFs fixed

  std::vector<ScriptedVertex> scripted{{vertex_at(cloth, 1.0, 1.0), {0.01, 0.0, 0.0}, {true, true, true}},
                                       {vertex_at(cloth, 0.0, 1.0), {0.0, 0.0, 0.0}, {true, true, true}},
                                       {vertex_at(cloth, 0.0, 0.0), {0.02, 0.0, -0.01}, {true, false, true}},
                                       {vertex_at(cloth, 0.3, 0.2), {0.01, 0.0, 0.0}, {true, false, false}}};
  std::vector<VertexContact> contacts;
  for (const auto& [u, v] : {std::pair{0.3, 0.4}, {0.1, 0.2}, {0.3, 0.8}, {0.4, 0.5}, {0.3, 0.2}, {0.0, 1.0}}) {
    const Index w = vertex_at(cloth, u, v);
    contacts.push_back({w, 0, normalized(Vec3{tilt(random), tilt(random), 1.0}), 2e-4});
    cloth.velocities[3 * at(w) + 2] = -0.5;  // into the box: the contact pushes
  }
  // one column each (x is scripted at (0.3, 0.2)); none at the fixed corner (0, 1), whose row
  // becomes 0 ≥ c − nᵀq̇₀ (feasible: the corner rests above the moving box)
  expected += static_cast<Index>(contacts.size()) - 1;

  const ClothStepSystem system = assemble_cloth_step(cloth, {}, {kStep, {0.0, 0.0, -9.81}, {}});
  s.dofs = system.dofs;
  s.rows = build_constraints(cloth, s.dofs, obstacles, contacts, scripted, 0.0, kStep, {});
  for (Index i = 0; i < static_cast<Index>(s.rows.inequality_kind.size()); ++i) {
    if (s.rows.inequality_kind[at(i)] == RowKind::face_contact) s.contact_rows.push_back(i);
  }
  s.problem.hessian = system.matrix;
  s.problem.linear = system.rhs;
  s.problem.equality = s.rows.equality;
  s.problem.equality_rhs = s.rows.equality_rhs;
  s.problem.inequality = s.rows.inequality;
  s.problem.inequality_rhs = s.rows.inequality_rhs;
  s.expected_columns = expected;
  return s;
}

using Dense = std::vector<double>;  // column-major

/// T as a dense n × n_y matrix, from the blocks.
Dense dense_t(const VelocityCoordinates& c) {
  const auto n = at(c.size()), r = at(c.reduced_size());
  Dense t(n * r, 0.0);
  for (const VelocityBlock& b : c.blocks()) {
    for (int col = 0; col < b.reduced_size; ++col) {
      for (int k = 0; k < b.size; ++k) {
        const double entry = b.identity ? (k == col ? 1.0 : 0.0) : b.basis[at(k + 3 * col)];
        t[at(b.first + k) + n * at(b.reduced_first + col)] = entry;
      }
    }
  }
  return t;
}

/// C = op(A)·B with op(A) = A or Aᵀ; A is ra × ca.
Dense product(const Dense& a, Index ra, Index ca, bool transpose_a, const Dense& b, Index cb) {
  const Index rows = transpose_a ? ca : ra, inner = transpose_a ? ra : ca;
  Dense c(at(rows) * at(cb), 0.0);
  for (Index j = 0; j < cb; ++j) {
    for (Index k = 0; k < inner; ++k) {
      const double bkj = b[at(k) + at(inner) * at(j)];
      if (bkj == 0.0) continue;
      for (Index i = 0; i < rows; ++i) {
        c[at(i) + at(rows) * at(j)] += (transpose_a ? a[at(k) + at(ra) * at(i)] : a[at(i) + at(ra) * at(k)]) * bkj;
      }
    }
  }
  return c;
}

/// `problem` with the equality row Σ value·q̇_column = rhs appended.
qp::QpProblem with_equality_row(qp::QpProblem problem, std::initializer_list<std::pair<Index, double>> entries, double rhs) {
  linalg::Triplets t;
  const linalg::CscMatrix& e = problem.equality;
  for (Index j = 0; j < e.cols; ++j) {
    for (auto p = e.col_ptr[at(j)]; p < e.col_ptr[at(j) + 1]; ++p) t.add(e.row_idx[at(p)], j, e.values[at(p)]);
  }
  for (const auto& [column, value] : entries) t.add(problem.equality_count(), column, value);
  problem.equality = linalg::csc_from_triplets(problem.equality_count() + 1, problem.variable_count(), t);
  problem.equality_rhs.push_back(rhs);
  return problem;
}

qp::InteriorPointResult solve(const qp::QpProblem& problem) {
  qp::InteriorPointOptions options;
  options.tolerance = 1e-13;
  options.threads = 1;
  qp::InteriorPointResult result = qp::solve_interior_point(problem, options);
  EXPECT_EQ(result.solution.status, qp::QpStatus::optimal) << result.solution.message;
  return result;
}

TEST(VelocityCoordinates, ReducedProblemIsTheDenseTransformation) {
  const StepQp s = edge_step_qp(1, true);
  const ReducedVelocityQp reduced = reduce_velocity_qp(s.problem, s.dofs);
  const VelocityCoordinates& c = reduced.coordinates;
  const Index n = c.size(), r = c.reduced_size();
  ASSERT_EQ(n, s.dofs.size);
  ASSERT_EQ(reduced.problem.variable_count(), r);
  const Dense t = dense_t(c);
  const Dense h = linalg::to_dense(s.problem.hessian).storage();
  const Dense hy = product(t, n, r, true, product(h, n, n, false, t, r), r);
  const Dense hy_reduced = linalg::to_dense(reduced.problem.hessian).storage();
  EXPECT_LE(max_abs_difference(hy, hy_reduced), 1e-13 * max_abs(h));

  Dense shifted = s.problem.linear;  // b − H q̇₀
  const Dense h_offset = product(h, n, n, false, c.offset(), 1);
  for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] -= h_offset[i];
  EXPECT_LE(max_abs_difference(product(t, n, r, true, shifted, 1), reduced.problem.linear), 1e-13 * max_abs(shifted));

  const Index q = s.problem.inequality_count();
  ASSERT_EQ(reduced.problem.inequality_count(), q);
  const Dense cy = product(linalg::to_dense(s.problem.inequality).storage(), q, n, false, t, r);
  EXPECT_LE(max_abs_difference(cy, linalg::to_dense(reduced.problem.inequality).storage()), 1e-14);
  const Dense c_offset = product(linalg::to_dense(s.problem.inequality).storage(), q, n, false, c.offset(), 1);
  for (Index i = 0; i < q; ++i) {
    EXPECT_NEAR(reduced.problem.inequality_rhs[at(i)], s.problem.inequality_rhs[at(i)] - c_offset[at(i)], 1e-14);
  }
  EXPECT_EQ(reduced.problem.equality_count(), 0);  // every equality row touches one vertex
  EXPECT_TRUE(c.kept_equality_rows().empty());
  EXPECT_EQ(r, n - s.problem.equality_count());  // the rows are independent: one DOF each
}

TEST(VelocityCoordinates, BlocksAreOrthonormalAndEulerianBlocksFollowTheEqualities) {
  const StepQp s = edge_step_qp(2, true);
  const ReducedVelocityQp reduced = reduce_velocity_qp(s.problem, s.dofs);
  int transformed = 0;
  for (const VelocityBlock& b : reduced.coordinates.blocks()) {
    for (int i = 0; i < b.reduced_size; ++i) {
      for (int j = 0; j < b.reduced_size; ++j) {
        double product = 0.0;
        for (int k = 0; k < b.size; ++k) {
          product += b.identity ? (k == i) * (k == j) : b.basis[at(k + 3 * i)] * b.basis[at(k + 3 * j)];
        }
        EXPECT_NEAR(product, i == j ? 1.0 : 0.0, 1e-15);
      }
    }
    transformed += b.identity ? 0 : 1;
  }
  EXPECT_GT(transformed, 10);
  for (Index v = 0; v < s.cloth.vertex_count(); ++v) {
    if (!s.cloth.is_eulerian(v)) continue;
    const auto& blocks = reduced.coordinates.blocks();
    const auto block = std::find_if(blocks.begin(), blocks.end(),
                                    [&](const VelocityBlock& b) { return b.first == s.dofs.eulerian_offset[at(v)]; });
    ASSERT_NE(block, blocks.end());
    const VelocityBlock& b = *block;
    const FeatureAttachment& a = s.cloth.attachments[at(v)];
    const bool domain_corner = s.cloth.material[2 * at(v)] == 1.0 && s.cloth.material[2 * at(v) + 1] == 0.0;
    const int expected = a.kind == Kind::corner ? 2 : (domain_corner ? 0 : 1);
    EXPECT_EQ(b.reduced_size, expected) << "EOL vertex " << v;
    if (expected == 1) {  // T_v = ±d⊥: orthogonal to the equality direction d
      const auto d = eulerian_constraint_direction(s.cloth, v);
      EXPECT_NEAR(d[0] * b.basis[0] + d[1] * b.basis[1], 0.0, 1e-15);
    }
  }
}

TEST(VelocityCoordinates, ReducedQpGivesTheOriginalSolutionAndMultipliers) {
  for (unsigned seed : {3U, 4U}) {
    const StepQp s = edge_step_qp(seed);
    const ReducedVelocityQp reduced = reduce_velocity_qp(s.problem, s.dofs);
    const qp::QpSolution original = solve(s.problem).solution;
    const qp::QpSolution y = solve(reduced.problem).solution;
    const std::vector<double> qdot = reduced.coordinates.velocities(y.x);
    EXPECT_LE(max_abs_difference(qdot, original.x), 1e-9 * max_abs(original.x)) << "seed " << seed;
    ASSERT_EQ(y.inequality_multipliers.size(), original.inequality_multipliers.size());
    EXPECT_LE(max_abs_difference(y.inequality_multipliers, original.inequality_multipliers),
              1e-7 * max_abs(original.inequality_multipliers))
        << "seed " << seed;
    int active_contacts = 0;
    for (Index row : s.contact_rows) {
      active_contacts += original.inequality_multipliers[at(row)] > 1e-3 * max_abs(original.inequality_multipliers) ? 1 : 0;
    }
    EXPECT_GT(active_contacts, 0) << "the contacts should push";

    std::vector<double> eq(s.problem.equality_rhs.size());  // every eliminated equality holds exactly
    qp::constraint_multiply(s.problem.equality, qdot, eq);
    for (std::size_t i = 0; i < eq.size(); ++i) {
      EXPECT_LE(std::abs(eq[i] - s.problem.equality_rhs[i]), 1e-12 * (1.0 + std::abs(s.problem.equality_rhs[i])))
          << "equality row " << i;
    }
    const std::vector<double> back = reduced.coordinates.reduced_velocities(qdot);  // Tᵀ(T y) = y
    EXPECT_LE(max_abs_difference(back, y.x), 1e-14 * (1.0 + max_abs(y.x)));
  }
}

TEST(VelocityCoordinates, ContactRowsTouchOneColumnAndTheSchurSetShrinks) {
  const StepQp s = edge_step_qp(5, true);
  const ReducedVelocityQp reduced = reduce_velocity_qp(s.problem, s.dofs);
  const linalg::CscMatrix rows = linalg::transpose(reduced.problem.inequality);
  const linalg::CscMatrix original_rows = linalg::transpose(s.problem.inequality);
  ASSERT_EQ(s.contact_rows.size(), 6U);
  const Index fixed_corner = vertex_at(s.cloth, 0.0, 1.0);
  for (Index row : s.contact_rows) {
    EXPECT_EQ(original_rows.col_ptr[at(row) + 1] - original_rows.col_ptr[at(row)], 3);  // tilted normals
    const Offset expected = s.rows.inequality_vertex[at(row)] == fixed_corner ? 0 : 1;
    EXPECT_EQ(rows.col_ptr[at(row) + 1] - rows.col_ptr[at(row)], expected) << "contact row " << row;
  }
  for (Index row = 0; row < rows.cols; ++row) {  // a feature normal of an edge touches ≤ 2 columns
    if (s.rows.inequality_kind[at(row)] != RowKind::feature_normal) continue;
    const bool corner = s.cloth.attachments[at(s.rows.inequality_vertex[at(row)])].kind == Kind::corner;
    EXPECT_LE(rows.col_ptr[at(row) + 1] - rows.col_ptr[at(row)], corner ? 3 : 2);
  }
  const auto before = qp::constrained_columns(s.problem).size();
  const auto after = qp::constrained_columns(reduced.problem).size();
  EXPECT_EQ(static_cast<Index>(after), s.expected_columns);
  EXPECT_LT(after, before);
}

TEST(VelocityCoordinates, KeepsEqualityRowsOverSeveralVertices) {
  const StepQp s = edge_step_qp(6);
  // ẋ_{a,z} − ẋ_{b,z} = 0.05 joins two free vertices.
  const Index a = vertex_at(s.cloth, 0.6, 0.6), b = vertex_at(s.cloth, 0.7, 0.6);
  const qp::QpProblem problem = with_equality_row(s.problem, {{3 * a + 2, 1.0}, {3 * b + 2, -1.0}}, 0.05);
  const Index joined = s.problem.equality_count();
  const ReducedVelocityQp reduced = reduce_velocity_qp(problem, s.dofs);
  ASSERT_EQ(reduced.coordinates.kept_equality_rows(), std::vector<Index>{joined});
  ASSERT_EQ(reduced.problem.equality_count(), 1);
  const qp::QpSolution original = solve(problem).solution;
  const qp::QpSolution y = solve(reduced.problem).solution;
  const std::vector<double> qdot = reduced.coordinates.velocities(y.x);
  EXPECT_LE(max_abs_difference(qdot, original.x), 1e-9 * max_abs(original.x));
  EXPECT_NEAR(qdot[at(3 * a + 2)] - qdot[at(3 * b + 2)], 0.05, 1e-12);
  const double multiplier = original.equality_multipliers[at(joined)];
  EXPECT_NEAR(y.equality_multipliers[0], multiplier, 1e-7 * std::abs(multiplier));
}

TEST(VelocityCoordinates, RejectsMalformedInput) {
  StepQp s = edge_step_qp(7);
  ClothDofs wrong = s.dofs;
  wrong.size += 2;
  EXPECT_THROW((void)reduce_velocity_qp(s.problem, wrong), std::invalid_argument);
  wrong = s.dofs;
  wrong.size += 1;
  EXPECT_THROW((void)reduce_velocity_qp(s.problem, wrong), std::invalid_argument);
  qp::QpProblem bad = s.problem;
  bad.linear.pop_back();
  EXPECT_THROW((void)reduce_velocity_qp(bad, s.dofs), std::invalid_argument);
  EXPECT_THROW((void)reduce_velocity_qp(s.problem, s.dofs).coordinates.velocities(std::vector<double>(3)), std::invalid_argument);

  // Scripting the x of corner (1, 1) twice: a consistent row is dropped, a contradicting one rejected.
  const auto with_duplicate_script = [&s](double value) {
    return with_equality_row(s.problem, {{3 * vertex_at(s.cloth, 1.0, 1.0), 2.0}}, value);
  };
  const ReducedVelocityQp consistent = reduce_velocity_qp(with_duplicate_script(0.02), s.dofs);  // 2·0.01
  EXPECT_EQ(consistent.problem.equality_count(), 0);
  EXPECT_EQ(consistent.coordinates.reduced_size(), s.dofs.size - s.problem.equality_count());
  EXPECT_THROW((void)reduce_velocity_qp(with_duplicate_script(0.03), s.dofs), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem::cloth

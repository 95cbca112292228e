// Stabilized one-point-quadrature hexahedron (seed 001 §4, Algorithm 1, §7.4, §8).
// Conventions and notation: stabilized_hex.hpp.
#include "fem/elements/stabilized_hex.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <utility>

#include "linalg/simd_clones.hpp"
#include "linalg/svd3.hpp"

namespace cholsim::fem {
namespace {

using linalg::Mat3;
using linalg::Vec3;

/// s_a = 2ξ_a − (1,1,1): at the centre ∂N_a/∂ξ_k = ±½·½, so g_a = s_a / (4h) (§4.1.1).
constexpr Vec3 corner_sign(int corner) {
  return {(corner & 1) != 0 ? 1.0 : -1.0, (corner & 2) != 0 ? 1.0 : -1.0, (corner & 4) != 0 ? 1.0 : -1.0};
}

/// An edge of the cube along direction k, from the corner with ξ_k = 0 to the one with ξ_k = 1.
struct HexEdge {
  int from = 0;
  int to = 0;
  int direction = 0;
};

/// The 12 edges, 4 per direction: the quadrature points of the Laplacian part (§4.1.2, §7.4.2).
constexpr std::array<HexEdge, 12> make_edges() {
  std::array<HexEdge, 12> edges{};
  std::size_t next = 0;
  for (int k = 0; k < 3; ++k) {
    for (int a = 0; a < 8; ++a) {
      if ((a & (1 << k)) == 0) edges[next++] = {a, a | (1 << k), k};
    }
  }
  return edges;
}
constexpr std::array<HexEdge, 12> kEdges = make_edges();
// center_gradient sums edges 0–3, 4–7, 8–11 as the x, y, z directions.
static_assert(kEdges[3].direction == 0 && kEdges[4].direction == 1 && kEdges[7].direction == 1 &&
              kEdges[8].direction == 2);
static_assert(kEdges[5].from == 1 && kEdges[5].to == 3);

/// 2μV / 4h² = μh/2: the weight of the edge Laplacian (eq. 5 with the 4-edge rule, each
/// quadrature point weighted ¼).
double laplacian_weight(double h, const Lame& lame) { return 0.5 * lame.mu * h; }

/// v_to − v_from on the 12 edges, in kEdges order: both the centre gradient and the edge
/// Laplacian are sums of these, so a stiffness product forms them once.
using EdgeDifferences = std::array<Vec3, 12>;

template <std::size_t... E>
EdgeDifferences edge_differences(const HexNodes& v, std::index_sequence<E...>) {
  // Expanded at compile time so every corner index is a constant (no gathers in the hot loop).
  return {(v[static_cast<std::size_t>(kEdges[E].to)] - v[static_cast<std::size_t>(kEdges[E].from)])...};
}
EdgeDifferences edge_differences(const HexNodes& v) { return edge_differences(v, std::make_index_sequence<12>{}); }

/// Σ_a v_a g_aᵀ: column k is the mean over the 4 edges along k of (v_to − v_from) / h.
Mat3 center_gradient(const EdgeDifferences& d, double h) {
  const Vec3 along_x = (d[0] + d[1]) + (d[2] + d[3]);
  const Vec3 along_y = (d[4] + d[5]) + (d[6] + d[7]);
  const Vec3 along_z = (d[8] + d[9]) + (d[10] + d[11]);
  return Mat3::from_columns(along_x, along_y, along_z) * (0.25 / h);
}
Mat3 center_gradient(const HexNodes& v, double h) { return center_gradient(edge_differences(v), h); }

template <std::size_t... E>
void add_edge_laplacian(const EdgeDifferences& d, double weight, HexNodes& out, std::index_sequence<E...>) {
  ((out[static_cast<std::size_t>(kEdges[E].from)] -= weight * d[E],
    out[static_cast<std::size_t>(kEdges[E].to)] += weight * d[E]),
   ...);
}
/// out += weight · (graph Laplacian of the cube edges) · v, per component (eq. 4): each edge
/// pulls its ends together, (L v)_from gains v_from − v_to = −d.
void add_edge_laplacian(const EdgeDifferences& d, double weight, HexNodes& out) {
  add_edge_laplacian(d, weight, out, std::make_index_sequence<12>{});
}

/// out_a += scale · M · s_a, i.e. (scale·4h)·[M G]_a: the nodal forces of a constant stress
/// sampled at the centre (eq. 3 and its differential). Written out over the sign patterns
/// s_a = (±1, ±1, ±1) because this runs once per element per CG iteration.
void add_stress_times_gradients(const Mat3& stress, double scale, HexNodes& out) {
  const Vec3 m0 = scale * stress.col(0), m1 = scale * stress.col(1), m2 = scale * stress.col(2);
  const Vec3 sum01 = m0 + m1, difference01 = m0 - m1;
  out[0] -= sum01 + m2;
  out[1] += difference01 - m2;
  out[2] -= difference01 + m2;
  out[3] += sum01 - m2;
  out[4] += m2 - sum01;
  out[5] += difference01 + m2;
  out[6] += m2 - difference01;
  out[7] += sum01 + m2;
}

/// δP_aux = R·δP̂ for a gradient differential δF at the linearization (Algorithm 1
/// DPAUXDEFINITEFIX in axial-vector form): with a = axial(RᵀδF), ε{L_aux(ε : skew(RᵀδF))} =
/// [2 L_aux a]×, and the symmetric part contributes λ tr(RᵀδF) I.
Mat3 aux_stress_differential(const HexLinearization& lin, const Lame& lame, const Mat3& gradient_differential) {
  const Mat3 rotated = transpose_times(lin.rotation, gradient_differential);
  Mat3 stress = skew(2.0 * (lin.skew_stiffness * axial_vector(rotated)));
  const double volumetric = lame.lambda * trace(rotated);
  for (int i = 0; i < 3; ++i) stress(i, i) += volumetric;
  return lin.rotation * stress;
}

/// Ψ_aux = −2μ tr S + μ‖I‖² + (λ/2) tr²(S − I) from tr S = σ1 + σ2 + σ3 (§4.1).
double auxiliary_energy_density(double trace_s, const Lame& lame) {
  const double trace_strain = trace_s - 3.0;
  return -2.0 * lame.mu * trace_s + 3.0 * lame.mu + 0.5 * lame.lambda * trace_strain * trace_strain;
}

/// κ = λ tr(S − I) − 2μ, the factor of P_aux = κ R.
double auxiliary_stress_scale(double trace_s, const Lame& lame) {
  return lame.lambda * (trace_s - 3.0) - 2.0 * lame.mu;
}

double sum(const Vec3& v) { return v.x + v.y + v.z; }

/// R = U Vᵀ and tr S = Σσ of F from the rotation-variant SVD: for an inverted F the signed
/// σ3 keeps R a rotation and makes P_aux the gradient of the same Ψ_aux.
struct PolarParts {
  Mat3 rotation;
  double trace_s = 0.0;
};
PolarParts polar_parts(const Mat3& f) {
  const linalg::Svd3 svd = linalg::svd3(f);
  return {svd.u * transpose(svd.v), sum(svd.singular_values)};
}

/// V·(λ (rᵀg)² + (g × r)ᵀ L_aux (g × r)) for every row r of R: the aux part of the diagonal
/// block of a node whose centre gradient is g (§7.4.1).
Vec3 auxiliary_diagonal_block(const HexLinearization& lin, const Vec3& gradient, double volume, double lambda) {
  const auto entry = [&](int i) {
    const Vec3 r = lin.rotation.row(i);
    const double stretch = dot(r, gradient);
    const Vec3 twist = cross(gradient, r);
    return volume * (lambda * stretch * stretch + dot(twist, lin.skew_stiffness * twist));
  };
  return {entry(0), entry(1), entry(2)};
}

/// §7.4.2: ∂Ñ_b/∂ξ_k is constant along an edge along k and equals W_a1b − W_a0b there.
double edge_slope(const HangingNodeWeights& w, const HexEdge& edge, std::size_t b) {
  return w[static_cast<std::size_t>(edge.to)][b] - w[static_cast<std::size_t>(edge.from)][b];
}

template <std::size_t... E>
double modified_laplacian_diagonal(const HangingNodeWeights& w, std::size_t b, std::index_sequence<E...>) {
  const auto squared_slope = [&](const HexEdge& edge) {
    const double slope = edge_slope(w, edge, b);
    return slope * slope;
  };
  return (squared_slope(kEdges[E]) + ...);
}

}  // namespace

Vec3 hex_center_shape_gradient(int corner, double h) { return corner_sign(corner) * (0.25 / h); }

Mat3 hex_center_deformation_gradient(const HexNodes& x, double h) { return center_gradient(x, h); }

HexLinearization linearize_hex(const Mat3& f, const Lame& lame, bool definite) {
  const linalg::Svd3 svd = linalg::svd3(f);
  const Vec3& sigma = svd.singular_values;
  HexLinearization lin;
  lin.rotation = svd.u * transpose(svd.v);
  lin.singular_values = sigma;
  lin.aux_stress_scale = auxiliary_stress_scale(sum(sigma), lame);
  // σ_j + σ_k ≥ 0 by svd3's convention (|σ3| ≤ σ2 ≤ σ1), but it vanishes when F is collapsed
  // or inverted with σ3 = −σ2, where the exact ∂R/∂F is unbounded. Clamping the denominator
  // keeps L_aux finite there (huge but finite for κ > 0; the definite clamp then caps a
  // negative ℓ at −μ anyway).
  const double denominator_floor = 1e-12 * std::max(1.0, sigma.x);
  Vec3 eigenvalues;
  for (int i = 0; i < 3; ++i) {
    const double pair_sum = sigma[(i + 1) % 3] + sigma[(i + 2) % 3];  // tr Σ − σ_i without cancellation
    eigenvalues[i] = lin.aux_stress_scale / std::max(pair_sum, denominator_floor);
    // Algorithm 1 line 3: Ψ_Δ adds at least μ to every rotational eigenvalue (its quadrature
    // dominates 2μV‖δF‖², whose skew part is 4μV‖axial‖²), so −μ is the most negative value
    // that keeps the element matrix positive semidefinite.
    if (definite) eigenvalues[i] = std::max(eigenvalues[i], -lame.mu);
  }
  lin.skew_stiffness = linalg::SymmetricMat3::symmetric_part(svd.v * Mat3::diagonal(eigenvalues) * transpose(svd.v));
  return lin;
}

double hex_energy(const HexNodes& x, double h, const Lame& lame) {
  const double volume = h * h * h;
  const EdgeDifferences edges = edge_differences(x);
  const double trace_s = polar_parts(center_gradient(edges, h)).trace_s;
  double edge_sum = 0.0;
  for (const Vec3& d : edges) edge_sum += squared_norm(d);
  // E_Δ = V Σ_k ¼ Σ_{edges k} μ‖(x_to − x_from)/h‖² (§4.1.2).
  return volume * auxiliary_energy_density(trace_s, lame) + lame.mu * volume / (4.0 * h * h) * edge_sum;
}

namespace {

void add_forces(const EdgeDifferences& edges, const Mat3& rotation, double kappa, double h, const Lame& lame,
                HexNodes& forces) {
  const double volume = h * h * h;
  // eq. 3: f_aux,a = −V P_aux g_a = −V κ R s_a / (4h).
  add_stress_times_gradients(rotation, -volume * kappa * 0.25 / h, forces);
  // eq. 4: f_Δ = −K̊_Δ x, K̊_Δ the scaled edge Laplacian.
  add_edge_laplacian(edges, -laplacian_weight(h, lame), forces);
}

}  // namespace

void add_hex_forces(const HexNodes& x, double h, const Lame& lame, HexNodes& forces) {
  const EdgeDifferences edges = edge_differences(x);
  const PolarParts polar = polar_parts(center_gradient(edges, h));
  add_forces(edges, polar.rotation, auxiliary_stress_scale(polar.trace_s, lame), h, lame, forces);
}

void add_hex_forces(const HexNodes& x, const HexLinearization& lin, double h, const Lame& lame, HexNodes& forces) {
  add_forces(edge_differences(x), lin.rotation, lin.aux_stress_scale, h, lame, forces);
}

void add_hex_stiffness_product(const HexLinearization& lin, const HexNodes& dx, double h, const Lame& lame,
                               HexNodes& product) {
  const double volume = h * h * h;
  const EdgeDifferences edges = edge_differences(dx);
  // −δf_aux,a = V δP_aux g_a.
  add_stress_times_gradients(aux_stress_differential(lin, lame, center_gradient(edges, h)), volume * 0.25 / h, product);
  add_edge_laplacian(edges, laplacian_weight(h, lame), product);
}

namespace {

/// g̃_b = Σ_a W_ab g_a, the modified shape function's centre gradient (§7.4.1).
Vec3 modified_center_gradient(const HangingNodeWeights& w, std::size_t b, double h) {
  Vec3 gradient;
  for (std::size_t a = 0; a < 8; ++a) gradient += w[a][b] * corner_sign(static_cast<int>(a));
  return (0.25 / h) * gradient;
}

/// The aux part of conforming node b's 3×3 block: V(λ p̃p̃ᵀ + Q̃ᵀ L_aux Q̃) with p̃_i = r_iᵀg̃,
/// q̃_i = g̃ × r_i — the §7.4.1 diagonal's terms with their off-diagonal partners.
Mat3 auxiliary_block(const HexLinearization& lin, const Vec3& gradient, double volume, double lambda) {
  std::array<double, 3> stretch{};
  std::array<Vec3, 3> twist{};
  for (int i = 0; i < 3; ++i) {
    const Vec3 r = lin.rotation.row(i);
    stretch[static_cast<std::size_t>(i)] = dot(r, gradient);
    twist[static_cast<std::size_t>(i)] = cross(gradient, r);
  }
  Mat3 block;
  for (std::size_t i = 0; i < 3; ++i) {
    const Vec3 stiff_twist = lin.skew_stiffness * twist[i];
    for (std::size_t j = 0; j < 3; ++j) {
      block(static_cast<int>(i), static_cast<int>(j)) = volume * (lambda * stretch[i] * stretch[j] + dot(twist[j], stiff_twist));
    }
  }
  return block;
}

}  // namespace

void add_hex_stiffness_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                const Lame& lame, HexNodes& diagonal) {
  const double volume = h * h * h;
  const double edge_weight = laplacian_weight(h, lame);
  for (std::size_t b = 0; b < 8; ++b) {
    const double laplacian = modified_laplacian_diagonal(w, b, std::make_index_sequence<12>{});
    const Vec3 block = auxiliary_diagonal_block(lin, modified_center_gradient(w, b, h), volume, lame.lambda);
    diagonal[b] += block + Vec3{1.0, 1.0, 1.0} * (edge_weight * laplacian);
  }
}

void add_hex_stiffness_block_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                      const Lame& lame, std::array<Mat3, 8>& blocks) {
  const double volume = h * h * h;
  const double edge_weight = laplacian_weight(h, lame);
  for (std::size_t b = 0; b < 8; ++b) {
    const double laplacian = modified_laplacian_diagonal(w, b, std::make_index_sequence<12>{});
    blocks[b] += auxiliary_block(lin, modified_center_gradient(w, b, h), volume, lame.lambda) +
                 (edge_weight * laplacian) * Mat3::identity();
  }
}

HexMatrix hex_stiffness_matrix(const HexLinearization& lin, double h, const Lame& lame) {
  const double volume = h * h * h;
  // p_ai = r_iᵀ g_a (stretch of δF = e_i g_aᵀ seen through R), q_ai = g_a × r_i (twice its axial vector).
  std::array<double, 24> stretch{};
  std::array<Vec3, 24> twist{};
  std::array<Vec3, 24> twist_stiffness{};  // L_aux q_ai
  for (int a = 0; a < 8; ++a) {
    const Vec3 g = hex_center_shape_gradient(a, h);
    for (int i = 0; i < 3; ++i) {
      const auto row = static_cast<std::size_t>(3 * a + i);
      const Vec3 r = lin.rotation.row(i);
      stretch[row] = dot(r, g);
      twist[row] = cross(g, r);
      twist_stiffness[row] = lin.skew_stiffness * twist[row];
    }
  }
  HexMatrix k{};
  for (std::size_t row = 0; row < 24; ++row) {
    for (std::size_t col = 0; col < 24; ++col) {
      k[24 * row + col] = volume * (lame.lambda * stretch[row] * stretch[col] + dot(twist[row], twist_stiffness[col]));
    }
  }
  // The Laplacian part (2μV / 4h²)·Lap ⊗ I₃: +w on both ends' diagonals, −w between them.
  const double edge_weight = laplacian_weight(h, lame);
  for (const HexEdge& edge : kEdges) {
    for (std::size_t i = 0; i < 3; ++i) {
      const std::size_t from = 3 * static_cast<std::size_t>(edge.from) + i;
      const std::size_t to = 3 * static_cast<std::size_t>(edge.to) + i;
      k[24 * from + from] += edge_weight;
      k[24 * to + to] += edge_weight;
      k[24 * from + to] -= edge_weight;
      k[24 * to + from] -= edge_weight;
    }
  }
  return k;
}

namespace {

// A merged element's edges: edge 4k + m runs along axis k at the corners whose bits on the other
// two axes (ascending) are m & 1 and m >> 1 (kEdges' order).
constexpr int other_axis(int k, int which) { return which == 0 ? (k == 0 ? 1 : 0) : (k == 2 ? 1 : 2); }

/// Weight of the coarse edges whose other-axis bit is `bit` at parameter ξ: linear interpolation.
constexpr double edge_weight_at(double xi, int bit) { return bit != 0 ? xi : 1.0 - xi; }

/// β_qkm: the weight of edge 4k + m in column k of the gradient at child q's centre (ξ = ¼ or ¾
/// on the other axes) — bilinear interpolation of the four edge differences along k.
double child_gradient_weight(int child, int k, int m) {
  const double xi1 = 0.25 + 0.5 * (child >> other_axis(k, 0) & 1);
  const double xi2 = 0.25 + 0.5 * (child >> other_axis(k, 1) & 1);
  return edge_weight_at(xi1, m & 1) * edge_weight_at(xi2, m >> 1);
}

/// The present children's edge rules as one quadratic form per axis on the element's edge
/// differences: E_Δ = ½·(2μh/n)·Σ_k Σ_mn M^k_mn d_4k+m·d_4k+n. A child's edge along k at other-axis
/// parameters (ξ1, ξ2) spans half the element, so its difference is ½·Σ_m γ_m(ξ1, ξ2)·d_4k+m.
using EdgeForms = std::array<std::array<std::array<double, 4>, 4>, 3>;

EdgeForms children_edge_forms(std::uint8_t children) {
  EdgeForms forms{};
  for (int q = 0; q < 8; ++q) {
    if ((children >> q & 1) == 0) continue;
    for (int k = 0; k < 3; ++k) {
      for (int e1 = 0; e1 < 2; ++e1) {
        for (int e2 = 0; e2 < 2; ++e2) {
          const double xi1 = 0.5 * ((q >> other_axis(k, 0) & 1) + e1);
          const double xi2 = 0.5 * ((q >> other_axis(k, 1) & 1) + e2);
          std::array<double, 4> gamma{};
          for (int m = 0; m < 4; ++m) gamma[static_cast<std::size_t>(m)] = 0.5 * edge_weight_at(xi1, m & 1) * edge_weight_at(xi2, m >> 1);
          for (std::size_t m = 0; m < 4; ++m) {
            for (std::size_t n = 0; n < 4; ++n) forms[static_cast<std::size_t>(k)][m][n] += gamma[m] * gamma[n];
          }
        }
      }
    }
  }
  return forms;
}

/// children_edge_forms for every child set, made once (98 KB, read by every coarse product).
const EdgeForms& edge_forms(std::uint8_t children) {
  static const std::array<EdgeForms, 256> table = [] {
    std::array<EdgeForms, 256> forms{};
    for (int mask = 0; mask < 256; ++mask) forms[static_cast<std::size_t>(mask)] = children_edge_forms(static_cast<std::uint8_t>(mask));
    return forms;
  }();
  return table[children];
}

/// β by edge, the children in the inner index (lane q = child q): the merged product's
/// per-child work runs with the eight children as the lanes of one vector.
using ChildLanes = std::array<double, 8>;
const std::array<ChildLanes, 12>& child_weights_by_edge() {
  static const std::array<ChildLanes, 12> weights = [] {
    std::array<ChildLanes, 12> w{};
    for (int k = 0; k < 3; ++k) {
      for (int m = 0; m < 4; ++m) {
        for (int q = 0; q < 8; ++q) w[static_cast<std::size_t>(4 * k + m)][static_cast<std::size_t>(q)] = child_gradient_weight(q, k, m);
      }
    }
    return w;
  }();
  return weights;
}

/// Edge vectors as 36 numbers, component c of edge e at 3e + c.
using EdgeComponents = std::array<double, 36>;

/// Ψ_aux at the children's centres in the element's rotated frame: `rotated` holds Rᵀd_e, the
/// rotated gradient at child q is G'_q = Σ_m β_qkm·Rᵀd_4k+m / h by columns, its stress
/// differential S'_q = λ tr(G'_q) I + [2 L_aux axial(G'_q)]× (Algorithm 1 as
/// aux_stress_differential, before the rotation back), and forces'_4k+m += Σ_q
/// child_scale_q·β_qkm·S'_q e_k with child_scale_q = h/n for a present child (V/n and the two
/// 1/h of G and of its differential), 0 for an absent one. Cloned for the vector width: at
/// AVX-512 the eight children are one register.
CHOLSIM_SIMD_CLONES void add_children_aux_forces(const EdgeComponents& rotated, const ChildLanes& child_scale,
                                                 double lambda, const linalg::SymmetricMat3& l, EdgeComponents& forces) {
  const std::array<ChildLanes, 12>& beta = child_weights_by_edge();
  double gradient[3][3][8];  // [column k][component c][child]
  for (int k = 0; k < 3; ++k) {
    for (int c = 0; c < 3; ++c) {
      for (int q = 0; q < 8; ++q) {
        double sum = 0.0;
        for (int m = 0; m < 4; ++m) sum += beta[static_cast<std::size_t>(4 * k + m)][static_cast<std::size_t>(q)] * rotated[static_cast<std::size_t>(3 * (4 * k + m) + c)];
        gradient[k][c][q] = sum;
      }
    }
  }
  double stress[3][3][8];  // S'_q's column k, component c, times the child's scale
  for (int q = 0; q < 8; ++q) {
    const double trace = gradient[0][0][q] + gradient[1][1][q] + gradient[2][2][q];
    const double ax = 0.5 * (gradient[1][2][q] - gradient[2][1][q]);
    const double ay = 0.5 * (gradient[2][0][q] - gradient[0][2][q]);
    const double az = 0.5 * (gradient[0][1][q] - gradient[1][0][q]);
    const double scale = child_scale[static_cast<std::size_t>(q)];
    const double bx = 2.0 * scale * (l.xx * ax + l.xy * ay + l.xz * az);
    const double by = 2.0 * scale * (l.xy * ax + l.yy * ay + l.yz * az);
    const double bz = 2.0 * scale * (l.xz * ax + l.yz * ay + l.zz * az);
    const double volumetric = scale * lambda * trace;
    // Column k of [b]× is b × e_k.
    stress[0][0][q] = volumetric, stress[0][1][q] = bz, stress[0][2][q] = -by;
    stress[1][0][q] = -bz, stress[1][1][q] = volumetric, stress[1][2][q] = bx;
    stress[2][0][q] = by, stress[2][1][q] = -bx, stress[2][2][q] = volumetric;
  }
  for (int k = 0; k < 3; ++k) {
    for (int m = 0; m < 4; ++m) {
      const ChildLanes& weights = beta[static_cast<std::size_t>(4 * k + m)];
      for (int c = 0; c < 3; ++c) {
        double sum = 0.0;
        for (int q = 0; q < 8; ++q) sum += weights[static_cast<std::size_t>(q)] * stress[k][c][q];
        forces[static_cast<std::size_t>(3 * (4 * k + m) + c)] += sum;
      }
    }
  }
}

/// ∂E/∂d_e of the merged element for edge differences d (the product's edge-space form),
/// computed in the element's rotated frame (the edge rules' part is rotation-invariant) and
/// rotated back once.
EdgeDifferences merged_edge_forces(const HexLinearization& lin, const EdgeDifferences& d, double h, const Lame& lame,
                                   std::uint8_t children) {
  const double count = std::popcount(children);
  const Mat3 inverse_rotation = transpose(lin.rotation);
  EdgeComponents rotated;
  for (std::size_t e = 0; e < 12; ++e) {
    const Vec3 r = inverse_rotation * d[e];
    rotated[3 * e] = r.x, rotated[3 * e + 1] = r.y, rotated[3 * e + 2] = r.z;
  }
  ChildLanes child_scale{};
  for (int q = 0; q < 8; ++q) child_scale[static_cast<std::size_t>(q)] = (children >> q & 1) != 0 ? h / count : 0.0;
  EdgeComponents forces{};
  add_children_aux_forces(rotated, child_scale, lame.lambda, lin.skew_stiffness, forces);
  // Ψ_Δ by the children's edge rules, each weighted μ(h/2)/2 at 8/n times the averaged μ.
  const double edge_scale = 2.0 * lame.mu * h / count;
  const EdgeForms& forms = edge_forms(children);
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t m = 0; m < 4; ++m) {
      for (std::size_t n = 0; n < 4; ++n) {
        const double weight = edge_scale * forms[k][m][n];
        for (std::size_t c = 0; c < 3; ++c) forces[3 * (4 * k + m) + c] += weight * rotated[3 * (4 * k + n) + c];
      }
    }
  }
  EdgeDifferences world;
  for (std::size_t e = 0; e < 12; ++e) world[e] = lin.rotation * Vec3{forces[3 * e], forces[3 * e + 1], forces[3 * e + 2]};
  return world;
}

template <std::size_t... E>
void scatter_edge_forces(const EdgeDifferences& forces, HexNodes& out, std::index_sequence<E...>) {
  ((out[static_cast<std::size_t>(kEdges[E].from)] -= forces[E], out[static_cast<std::size_t>(kEdges[E].to)] += forces[E]), ...);
}

}  // namespace

void add_merged_hex_stiffness_product(const HexLinearization& lin, const HexNodes& dx, double h, const Lame& lame,
                                      std::uint8_t children, HexNodes& product) {
  const EdgeDifferences forces = merged_edge_forces(lin, edge_differences(dx), h, lame, children);
  scatter_edge_forces(forces, product, std::make_index_sequence<12>{});
}

namespace {

/// Per conforming node b of a merged element, the present children's Σ_q g_q g_qᵀ with g_q =
/// ∇Ñ_b at child q's centre, and the children's edge rules' diagonal entry (the same for the
/// three components). The aux part of the node's block is then (V/n)·C_ij : Σ g gᵀ
/// (aux_block_coefficients): a few flops a node instead of a block per child.
struct MergedNodeMoments {
  std::array<Mat3, 8> gradient_moment{};
  std::array<double, 8> laplacian{};
};

MergedNodeMoments merged_node_moments(const HangingNodeWeights& w, double h, const Lame& lame, std::uint8_t children) {
  const double count = std::popcount(children);
  const std::array<ChildLanes, 12>& beta = child_weights_by_edge();
  const EdgeForms& forms = edge_forms(children);
  MergedNodeMoments moments;
  for (std::size_t b = 0; b < 8; ++b) {
    std::array<double, 12> slope{};
    for (std::size_t e = 0; e < 12; ++e) slope[e] = edge_slope(w, kEdges[e], b);
    for (int q = 0; q < 8; ++q) {
      if ((children >> q & 1) == 0) continue;
      Vec3 gradient;
      for (std::size_t k = 0; k < 3; ++k) {
        double sum = 0.0;
        for (std::size_t m = 0; m < 4; ++m) sum += beta[4 * k + m][static_cast<std::size_t>(q)] * slope[4 * k + m];
        gradient[static_cast<int>(k)] = sum / h;
      }
      moments.gradient_moment[b] += outer(gradient, gradient);
    }
    double laplacian = 0.0;
    for (std::size_t k = 0; k < 3; ++k) {
      for (std::size_t m = 0; m < 4; ++m) {
        for (std::size_t n = 0; n < 4; ++n) laplacian += forms[k][m][n] * slope[4 * k + m] * slope[4 * k + n];
      }
    }
    moments.laplacian[b] = 2.0 * lame.mu * h / count * laplacian;
  }
  return moments;
}

double contract(const Mat3& a, const Mat3& b) {
  double sum = 0.0;
  for (std::size_t k = 0; k < 9; ++k) sum += a.entries[k] * b.entries[k];
  return sum;
}

/// C_ij = λ r_i r_jᵀ + [r_j]×ᵀ L_aux [r_i]× (r_i row i of R): auxiliary_block's entry (i, j)
/// for a gradient g is V·C_ij : g gᵀ.
Mat3 aux_block_coefficients(const HexLinearization& lin, double lambda, int i, int j) {
  const linalg::SymmetricMat3& l = lin.skew_stiffness;
  const Mat3 skew_stiffness{{l.xx, l.xy, l.xz, l.xy, l.yy, l.yz, l.xz, l.yz, l.zz}};
  const Vec3 ri = lin.rotation.row(i), rj = lin.rotation.row(j);
  return lambda * outer(ri, rj) + transpose(skew(rj)) * skew_stiffness * skew(ri);
}

}  // namespace

void add_merged_hex_stiffness_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                       const Lame& lame, std::uint8_t children, HexNodes& diagonal) {
  const MergedNodeMoments moments = merged_node_moments(w, h, lame, children);
  const double volume = h * h * h / std::popcount(children);
  for (int i = 0; i < 3; ++i) {
    const Mat3 c = aux_block_coefficients(lin, lame.lambda, i, i);
    for (std::size_t b = 0; b < 8; ++b) diagonal[b][i] += volume * contract(c, moments.gradient_moment[b]) + moments.laplacian[b];
  }
}

void add_merged_hex_stiffness_block_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                             const Lame& lame, std::uint8_t children, std::array<Mat3, 8>& blocks) {
  const MergedNodeMoments moments = merged_node_moments(w, h, lame, children);
  const double volume = h * h * h / std::popcount(children);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const Mat3 c = aux_block_coefficients(lin, lame.lambda, i, j);
      for (std::size_t b = 0; b < 8; ++b) {
        blocks[b](i, j) += volume * contract(c, moments.gradient_moment[b]) + (i == j ? moments.laplacian[b] : 0.0);
      }
    }
  }
}

HexMatrix merged_hex_stiffness_matrix(const HexLinearization& lin, double h, const Lame& lame, std::uint8_t children) {
  HexMatrix k{};
  for (std::size_t column = 0; column < 24; ++column) {
    HexNodes unit{};
    unit[column / 3][static_cast<int>(column % 3)] = 1.0;
    HexNodes product{};
    add_merged_hex_stiffness_product(lin, unit, h, lame, children, product);
    for (std::size_t row = 0; row < 24; ++row) k[24 * row + column] = product[row / 3][static_cast<int>(row % 3)];
  }
  return k;
}

std::array<double, 8> trilinear_weights(const Vec3& xi) {
  std::array<double, 8> weights{};
  for (int a = 0; a < 8; ++a) {
    double weight = 1.0;
    for (int k = 0; k < 3; ++k) weight *= (a & (1 << k)) != 0 ? xi[k] : 1.0 - xi[k];
    weights[static_cast<std::size_t>(a)] = weight;
  }
  return weights;
}

}  // namespace cholsim::fem

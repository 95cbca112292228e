#pragma once
// Vector norms that neither overflow nor underflow where the norm itself is representable.
//
// A plain Σ v_i² overflows to +Inf once |v_i| ≳ 1.3e154 and underflows to 0 once |v_i| ≲
// 1.5e-154, so a residual of a matrix scaled by 1e300 printed -nan (Inf/Inf) although the
// solve was exact (issue 23, D4). Scaling by the largest magnitude first, as LAPACK's dnrm2
// does, keeps every squared term in [0, 1].
#include <span>

namespace cholsim::linalg {

/// ‖v‖₂, computed as max|v_i| · sqrt(Σ (v_i / max|v_i|)²). NaN if any entry is NaN; +Inf if
/// an entry is infinite.
[[nodiscard]] double norm2(std::span<const double> v);

/// aᵀb (sizes must match), summed in index order.
[[nodiscard]] double dot(std::span<const double> a, std::span<const double> b);

/// ‖r‖₂ / ‖b‖₂, or ‖r‖₂ when b = 0 (an absolute residual is the only meaningful figure then).
[[nodiscard]] double relative_norm2(std::span<const double> r, std::span<const double> b);

/// ‖v‖∞ = max|v_i| (0 for an empty v). NaN if any entry is NaN — a plain std::max loop skips
/// a NaN that is not the first entry, and a check "‖x − y‖∞ < tol" would then pass on garbage.
[[nodiscard]] double max_abs(std::span<const double> v);

/// ‖a − b‖∞ (sizes must match); NaN if any difference is NaN.
[[nodiscard]] double max_abs_difference(std::span<const double> a, std::span<const double> b);

}  // namespace cholsim::linalg

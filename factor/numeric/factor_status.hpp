#pragma once
// Outcomes of a numeric factorization, reported as values (CHOLMOD's status + minor).
#include <string>
#include <utility>

#include "linalg/index_types.hpp"

namespace cholsim::factor {

enum class FactorStatusCode {
  not_factored,           ///< no factorization attempted yet
  ok,
  not_positive_definite,  ///< a pivot was ≤ 0: `column` is the failing column (user numbering)
  non_finite_value,       ///< NaN or Inf in the values: `row`, `column` locate the first one
  pattern_mismatch,       ///< the matrix's pattern differs from the analysed one
  size_mismatch,          ///< the matrix's size differs from the analysed one
  device_unavailable,     ///< FactorDevice::gpu asked for and no usable GPU (message says why)
  device_out_of_memory,   ///< the GPU ran out of memory and gpu_fallback_to_cpu was false
  device_error,           ///< a CUDA call failed (message says which)
};

struct FactorStatus {
  FactorStatusCode code = FactorStatusCode::not_factored;
  linalg::Index column = -1;  ///< user numbering
  linalg::Index row = -1;     ///< user numbering (non_finite_value only)
  double value = 0.0;         ///< the offending value (non_finite_value)
  std::string message;        ///< human-readable explanation

  [[nodiscard]] bool ok() const { return code == FactorStatusCode::ok; }
};

/// A status with `code` and `message` and nothing located.
inline FactorStatus failed_status(FactorStatusCode code, std::string message) {
  FactorStatus status;
  status.code = code;
  status.message = std::move(message);
  return status;
}

}  // namespace cholsim::factor

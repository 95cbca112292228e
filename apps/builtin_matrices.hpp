#pragma once
// The matrices a command can build without an input file: `--builtin KIND:NX,NY,NZ`.
//
//   elasticity:NX,NY,NZ  implicit-elasticity system M + Δt²K on an NX×NY×NZ-cell tet box
//                        (linalg::elasticity_matrix, 3 DOF per node, 3·(NX+1)(NY+1)(NZ+1) DOF)
//   laplacian:NX,NY,NZ   7-point Laplacian on an NX×NY×NZ grid (linalg::laplacian_3d, NX·NY·NZ DOF)
#include <stdexcept>
#include <string>
#include <string_view>

#include "linalg/csc_matrix.hpp"
#include "linalg/index_types.hpp"

namespace cholsim::apps {

/// A `--builtin` spec that does not parse; what() names what was given and what was expected.
class BuiltinSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class BuiltinKind { elasticity, laplacian };

struct BuiltinMatrixSpec {
  BuiltinKind kind = BuiltinKind::elasticity;
  linalg::Index nx = 0;  ///< cells (elasticity) or grid points (laplacian) along x, ≥ 1
  linalg::Index ny = 0;
  linalg::Index nz = 0;
};

/// Parses "elasticity:NX,NY,NZ" or "laplacian:NX,NY,NZ" (positive integers).
/// Throws BuiltinSpecError naming the accepted forms for anything else.
BuiltinMatrixSpec parse_builtin_spec(std::string_view spec);

/// The canonical spelling of a spec, e.g. "elasticity:32,32,32".
std::string to_string(const BuiltinMatrixSpec& spec);

/// DOFs per mesh node of the builtin's unknowns: 3 for elasticity, 1 for the Laplacian.
linalg::Index dofs_per_node(const BuiltinMatrixSpec& spec);

/// Bytes of the matrix the spec builds (lower storage: column pointers, row indices, values),
/// predicted before building it so that memory admission can refuse an impossible size.
/// Exact for the Laplacian; for elasticity from 23 stored entries per DOF, the interior value
/// of the tet box (its boundary nodes have fewer).
std::int64_t predicted_matrix_bytes(const BuiltinMatrixSpec& spec);

/// Builds the matrix (lower storage, values). Throws std::invalid_argument when the
/// generator rejects the size (e.g. an Index overflow).
linalg::SymmetricCscMatrix build_builtin_matrix(const BuiltinMatrixSpec& spec);

}  // namespace cholsim::apps

#include "builtin_matrices.hpp"

#include <array>
#include <charconv>

#include "linalg/generators.hpp"

namespace cholsim::apps {
namespace {

constexpr std::string_view expected_forms =
    "expected elasticity:NX,NY,NZ or laplacian:NX,NY,NZ with positive integers, "
    "e.g. elasticity:32,32,32";

[[noreturn]] void reject(std::string_view spec, std::string_view problem) {
  throw BuiltinSpecError("bad --builtin '" + std::string(spec) + "': " + std::string(problem) +
                         "; " + std::string(expected_forms));
}

}  // namespace

BuiltinMatrixSpec parse_builtin_spec(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos) reject(spec, "no ':' after the kind");

  BuiltinMatrixSpec result;
  const std::string_view kind = spec.substr(0, colon);
  if (kind == "elasticity") {
    result.kind = BuiltinKind::elasticity;
  } else if (kind == "laplacian") {
    result.kind = BuiltinKind::laplacian;
  } else {
    reject(spec, "unknown kind '" + std::string(kind) + "'");
  }

  std::array<linalg::Index, 3> sizes{};
  const char* cursor = spec.data() + colon + 1;
  const char* const end = spec.data() + spec.size();
  for (std::size_t axis = 0; axis < sizes.size(); ++axis) {
    if (axis > 0) {
      if (cursor == end || *cursor != ',') reject(spec, "expected three sizes separated by ','");
      ++cursor;
    }
    const auto [next, error] = std::from_chars(cursor, end, sizes[axis]);
    if (error == std::errc::result_out_of_range) reject(spec, "a size is out of range");
    if (error != std::errc() || sizes[axis] < 1) reject(spec, "a size is not a positive integer");
    cursor = next;
  }
  if (cursor != end) reject(spec, "trailing characters after the third size");
  result.nx = sizes[0];
  result.ny = sizes[1];
  result.nz = sizes[2];
  return result;
}

std::string to_string(const BuiltinMatrixSpec& spec) {
  const char* kind = spec.kind == BuiltinKind::elasticity ? "elasticity" : "laplacian";
  return std::string(kind) + ":" + std::to_string(spec.nx) + "," + std::to_string(spec.ny) + "," +
         std::to_string(spec.nz);
}

linalg::Index dofs_per_node(const BuiltinMatrixSpec& spec) {
  return spec.kind == BuiltinKind::elasticity ? 3 : 1;
}

std::int64_t predicted_matrix_bytes(const BuiltinMatrixSpec& spec) {
  const std::int64_t nx = spec.nx;
  const std::int64_t ny = spec.ny;
  const std::int64_t nz = spec.nz;
  std::int64_t columns = 0;
  std::int64_t entries = 0;
  if (spec.kind == BuiltinKind::elasticity) {
    columns = 3 * (nx + 1) * (ny + 1) * (nz + 1);
    entries = 23 * columns;
  } else {
    columns = nx * ny * nz;
    entries = columns + (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1);
  }
  constexpr std::int64_t bytes_per_entry = sizeof(linalg::Index) + sizeof(double);
  return static_cast<std::int64_t>(sizeof(linalg::Offset)) * (columns + 1) + bytes_per_entry * entries;
}

linalg::SymmetricCscMatrix build_builtin_matrix(const BuiltinMatrixSpec& spec) {
  switch (spec.kind) {
    case BuiltinKind::elasticity:
    {
      linalg::ElasticityBoxOptions box;  // default material and time step, the spec's cells
      box.nx = spec.nx;
      box.ny = spec.ny;
      box.nz = spec.nz;
      return linalg::elasticity_matrix(box);
    }
    case BuiltinKind::laplacian:
      return linalg::laplacian_3d(spec.nx, spec.ny, spec.nz);
  }
  throw BuiltinSpecError("unknown builtin kind");
}

}  // namespace cholsim::apps

#pragma once
// The bench matrices shared by the benchmark programs (issue 23's list): 2D 5-point
// Laplacians, 3D 27-point and 7-point stencils, 3-DOF shell-like sheets, arrowheads (a 2D
// grid plus dense rows), elasticity boxes, tetgen'd surface models and Matrix Market files.
//
// Each matrix also has a short text name, its *spec* ("5-point:500", "shell:150x75x2", …),
// from which build_bench_matrix builds it again: a benchmark that runs every library in a
// child process of its own passes the spec instead of the matrix, and every child builds the
// same matrix (all generators are deterministic; tetgen is too, for the same switches).
#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_models.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/generators.hpp"
#include "linalg/matrix_market.hpp"

namespace cholsim::bench {

/// A matrix, the name the tables print and the DOFs per node its ordering compresses.
struct BenchMatrix {
  std::string name;
  linalg::SymmetricCscMatrix matrix;
  linalg::Index dofs_per_node = 1;
};

/// 27-point stencil on an n×n×n grid (every grid neighbour within distance √3), SPD by
/// diagonal dominance: the 3D pattern of trilinear hexahedral elements.
inline linalg::SymmetricCscMatrix laplacian_27_point(linalg::Index side) {
  using linalg::Index;
  linalg::Triplets triplets;
  auto id = [side](Index x, Index y, Index z) { return x + side * (y + side * z); };
  for (Index z = 0; z < side; ++z) {
    for (Index y = 0; y < side; ++y) {
      for (Index x = 0; x < side; ++x) {
        triplets.add(id(x, y, z), id(x, y, z), 27.0);
        for (Index dz = -1; dz <= 1; ++dz) {
          for (Index dy = -1; dy <= 1; ++dy) {
            for (Index dx = -1; dx <= 1; ++dx) {
              const Index nx = x + dx, ny = y + dy, nz = z + dz;
              if (nx < 0 || ny < 0 || nz < 0 || nx >= side || ny >= side || nz >= side) continue;
              if (id(nx, ny, nz) < id(x, y, z)) triplets.add(id(x, y, z), id(nx, ny, nz), -1.0);
            }
          }
        }
      }
    }
  }
  return linalg::symmetric_from_triplets(side * side * side, triplets);
}

/// A 2D grid with `hubs` rows coupled to every unknown (constraints, Lagrange-style couplings):
/// the arrowhead shape whose dense rows AMD must take out.
inline linalg::SymmetricCscMatrix grid_with_dense_rows(linalg::Index side, linalg::Index hubs) {
  using linalg::Index;
  const linalg::SymmetricCscMatrix grid = linalg::laplacian_2d(side, side);
  const Index n = grid.size() + hubs;
  linalg::Triplets triplets;
  for (Index c = 0; c < grid.size(); ++c) {
    for (linalg::Offset p = grid.lower.col_ptr[c]; p < grid.lower.col_ptr[c + 1]; ++p) {
      triplets.add(grid.lower.row_idx[p], c, grid.lower.values[p] + (grid.lower.row_idx[p] == c ? hubs : 0.0));
    }
  }
  for (Index hub = grid.size(); hub < n; ++hub) {
    triplets.add(hub, hub, static_cast<double>(n));
    for (Index v = 0; v < hub; ++v) triplets.add(hub, v, -0.5 / n);
  }
  return linalg::symmetric_from_triplets(n, triplets);
}

/// The elasticity system M + Δt²K (default material) on a box of nx×ny×nz cells.
inline linalg::SymmetricCscMatrix elasticity_cells(linalg::Index nx, linalg::Index ny, linalg::Index nz) {
  linalg::ElasticityBoxOptions box;
  box.nx = nx;
  box.ny = ny;
  box.nz = nz;
  return linalg::elasticity_matrix(box);
}

// The named bench matrices, each with the name the tables print.

inline BenchMatrix grid_5_point(linalg::Index side) {
  return {"2D 5-point " + std::to_string(side) + "²", linalg::laplacian_2d(side, side), 1};
}

inline BenchMatrix grid_27_point(linalg::Index side) {
  return {"3D 27-point " + std::to_string(side) + "³", laplacian_27_point(side), 1};
}

inline BenchMatrix grid_7_point(linalg::Index side) {
  return {"3D 7-point " + std::to_string(side) + "³", linalg::laplacian_3d(side, side, side), 1};
}

/// A thin elasticity sheet (`layers` cells thick): the 3-DOF pattern of shells and cloth.
inline BenchMatrix shell(linalg::Index nx, linalg::Index ny, linalg::Index layers) {
  return {"shell " + std::to_string(nx) + "×" + std::to_string(ny) + "×" + std::to_string(layers) + " (3 DOF)",
          elasticity_cells(nx, ny, layers), 3};
}

inline BenchMatrix arrowhead(linalg::Index side, linalg::Index dense_rows) {
  return {"arrowhead: 2D " + std::to_string(side) + "² + " + std::to_string(dense_rows) +
              (dense_rows == 1 ? " dense row" : " dense rows"),
          grid_with_dense_rows(side, dense_rows), 1};
}

inline BenchMatrix elasticity_box(linalg::Index cells) {
  return {"elasticity box " + std::to_string(cells) + "³ (3 DOF)", elasticity_cells(cells, cells, cells), 3};
}

/// The elasticity system on `model` tetrahedralized near `tets` tets (tetgen runs here).
inline BenchMatrix model_matrix(const SurfaceModel& model, linalg::Index tets) {
  std::fprintf(stderr, "tetrahedralizing %s near %d tets...\n", model.name, tets);
  const ModelMesh mesh = tetrahedralize_model(model, tets);
  return {std::string("model ") + model.name + " " + std::to_string(mesh.mesh.tet_count()) + " tets (3 DOF)",
          linalg::elasticity_matrix(mesh.mesh, linalg::ElasticityBoxOptions{}), 3};
}

/// The grammar of build_bench_matrix's specs, for the programs' --help.
inline constexpr const char* kMatrixSpecHelp = R"(      5-point:S          2D 5-point Laplacian, S×S grid
      27-point:S         3D 27-point stencil, S×S×S grid
      7-point:S          3D 7-point Laplacian, S×S×S grid
      shell:NXxNYxNZ     elasticity sheet of NX×NY×NZ cells, 3 DOF a node (shell:150x75x2)
      arrowhead:S+H      2D S×S 5-point grid plus H dense rows (arrowhead:300+20)
      box:N              elasticity box of N×N×N cells, 3 DOF a node
      model:NAME:TETS    surface model NAME (bunny, knot) tetgen'd near TETS tets, 3 DOF a node
      mtx:K:PATH         a Matrix Market file, K DOFs a node for the ordering
)";

namespace detail {

/// `text` split at `separator` into exactly `count` positive integers, else
/// std::invalid_argument quoting `spec`.
inline std::vector<linalg::Index> spec_integers(const std::string& spec, const std::string& text, char separator,
                                                std::size_t count) {
  std::vector<linalg::Index> values;
  for (std::size_t begin = 0;;) {
    const std::size_t end = text.find(separator, begin);
    values.push_back(parse_positive("matrix spec '" + spec + "'", text.substr(begin, end - begin)));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (values.size() != count) {
    throw std::invalid_argument("matrix spec '" + spec + "' needs " +
                                (count == 1 ? std::string("one number")
                                            : std::to_string(count) + " numbers separated by '" + separator + "'") +
                                " after the colon");
  }
  return values;
}

}  // namespace detail

/// Checks `spec` (kMatrixSpecHelp) and returns what builds its matrix, so that a program can
/// reject a bad spec with its other usage errors, before it builds anything. Throws
/// std::invalid_argument for a spec that is not one, linalg::MatrixMarketError for a file that
/// cannot be opened or whose header rules out an SPD matrix; the builder throws the reader's
/// errors for the rest of the file, and tetgen's.
inline std::function<BenchMatrix()> parse_matrix_spec(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  const std::string what = "matrix spec '" + spec + "'";
  const auto numbers = [&](char separator, std::size_t count) {
    return detail::spec_integers(spec, rest, separator, count);
  };
  // model:NAME:TETS and mtx:K:PATH: the first field ends at the next colon (a path may hold more).
  const std::size_t second = rest.find(':');
  const std::string first_field = rest.substr(0, second);
  const std::string last_field = second == std::string::npos ? std::string() : rest.substr(second + 1);
  if (rest.empty()) {
    // no sizes: not a spec (the error below)
  } else if (kind == "5-point") {
    return [side = numbers(',', 1)[0]] { return grid_5_point(side); };
  } else if (kind == "27-point") {
    return [side = numbers(',', 1)[0]] { return grid_27_point(side); };
  } else if (kind == "7-point") {
    return [side = numbers(',', 1)[0]] { return grid_7_point(side); };
  } else if (kind == "box") {
    return [cells = numbers(',', 1)[0]] { return elasticity_box(cells); };
  } else if (kind == "shell") {
    return [cells = numbers('x', 3)] { return shell(cells[0], cells[1], cells[2]); };
  } else if (kind == "arrowhead") {
    return [sizes = numbers('+', 2)] { return arrowhead(sizes[0], sizes[1]); };
  } else if (kind == "model") {
    const SurfaceModel* model = find_surface_model(first_field);
    if (model == nullptr || last_field.empty()) {
      throw std::invalid_argument(what + ": expected model:NAME:TETS with NAME bunny or knot");
    }
    return [model, tets = parse_positive(what, last_field)] { return model_matrix(*model, tets); };
  } else if (kind == "mtx") {
    if (last_field.empty()) throw std::invalid_argument(what + ": expected mtx:K:PATH");
    // The banner and size line now (cheap even for a huge file): a missing or wrong file is
    // then a usage error, not a failure after the other matrices have been measured.
    linalg::require_header_allows_spd(last_field, linalg::read_matrix_market_info(last_field));
    return [path = last_field, dofs_per_node = parse_positive(what, first_field)]() -> BenchMatrix {
      std::fprintf(stderr, "reading %s...\n", path.c_str());
      return {std::filesystem::path(path).stem().string(), linalg::read_symmetric_matrix_market(path), dofs_per_node};
    };
  }
  std::string grammar(kMatrixSpecHelp);
  grammar.pop_back();  // the final newline: the caller ends the message
  throw std::invalid_argument("unknown " + what + "; the specs are:\n" + grammar);
}

/// The matrix that `spec` names (parse_matrix_spec).
inline BenchMatrix build_bench_matrix(const std::string& spec) { return parse_matrix_spec(spec)(); }

}  // namespace cholsim::bench

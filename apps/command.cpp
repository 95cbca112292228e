#include "command.hpp"

#include <iostream>
#include <new>
#include <string>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "fem/mesh/tetgen.hpp"
#include "fem/octree/surface_checks.hpp"
#include "linalg/matrix_market.hpp"

namespace cholsim::apps {

int run_reporting_errors(std::string_view command, const CommandAction& work) {
  const auto fail = [&](const std::string& message, int code) {
    std::cerr << "cholsim " << command << ": error: " << message << '\n';
    return code;
  };
  try {
    return work();
  } catch (const BadInputError& error) {
    return fail(error.what(), exit_bad_input);
  } catch (const std::invalid_argument& error) {
    // The libraries reject a malformed matrix, an impossible material or option with context.
    return fail(error.what(), exit_bad_input);
  } catch (const linalg::MatrixMarketError& error) {
    return fail(error.what(), exit_bad_input);
  } catch (const fem::MeshFormatError& error) {
    return fail(error.what(), exit_bad_input);
  } catch (const fem::InvalidMeshError& error) {
    return fail(error.what(), exit_bad_input);
  } catch (const fem::octree::OctreeInputError& error) {
    return fail(error.what(), exit_bad_input);
  } catch (const fem::TetgenError& error) {
    // tetgen rejects surfaces that are open, self-intersecting or non-manifold.
    return fail(error.what(), exit_bad_input);
  } catch (const NumericalFailure& error) {
    return fail(error.what(), exit_numerical);
  } catch (const std::bad_alloc&) {
    // Memory admission (memory_admission.hpp) refuses what it predicts will not fit; this is
    // what it did not foresee, still a request too large for this machine.
    return fail("out of memory: an allocation failed that memory admission did not predict (other processes "
                "may hold the memory); use a smaller problem",
                exit_bad_input);
  } catch (const std::exception& error) {
    return fail(error.what(), exit_failure);
  }
}

}  // namespace cholsim::apps

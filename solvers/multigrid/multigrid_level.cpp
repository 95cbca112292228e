#include "solvers/multigrid/multigrid_level.hpp"

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "linalg/vector_norms.hpp"

namespace cholsim::solvers {

using linalg::dot;

namespace {

std::vector<double> random_vector(linalg::Index size, std::mt19937& generator) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(size));
  for (double& value : v) value = uniform(generator);
  return v;
}

}  // namespace

double restriction_transpose_defect(const MultigridLevel& fine, linalg::Index coarse_unknowns, unsigned seed) {
  if (!fine.restrict_to_coarser || !fine.prolong_from_coarser) {
    throw std::invalid_argument("restriction_transpose_defect: the level has no transfers");
  }
  std::mt19937 generator(seed);
  const std::vector<double> u = random_vector(fine.unknowns, generator);
  const std::vector<double> v = random_vector(coarse_unknowns, generator);
  std::vector<double> restricted_u(v.size()), prolonged_v(u.size());
  fine.restrict_to_coarser(u, restricted_u);
  fine.prolong_from_coarser(v, prolonged_v);
  const double scale = std::sqrt(dot(u, u) * dot(prolonged_v, prolonged_v)) +
                       std::sqrt(dot(restricted_u, restricted_u) * dot(v, v));
  const double defect = std::abs(dot(restricted_u, v) - dot(u, prolonged_v));
  return scale > 0.0 ? defect / scale : defect;
}

}  // namespace cholsim::solvers

#include "fem/articulated/redmax_step.hpp"

#include <stdexcept>
#include <string>

#include "linalg/blas.hpp"

namespace cholsim::fem::articulated {

void assemble_redmax_step(const ArticulatedSystem& system, double h, const Vec3& gravity, RedmaxStepTerms& terms) {
  if (!(h > 0.0)) throw std::invalid_argument("REDMAX step: the time step must be positive");
  const Index nm = system.maximal_dof_count(), nr = system.reduced_dof_count();
  const auto unm = static_cast<std::size_t>(nm), unr = static_cast<std::size_t>(nr);
  terms.time_step = h;
  linalg::DenseMatrix jacobian_rate;
  system.jacobian(terms.jacobian, &jacobian_rate);

  std::vector<double> mass(unm), forces(unm), reduced_forces(unr);
  system.mass_diagonal(mass);
  system.maximal_forces(gravity, forces);
  system.reduced_forces(reduced_forces);
  terms.maximal_matrix.assign(unm, 0.0);
  for (int link = 0; link < system.link_count(); ++link) {
    for (std::size_t r = 0; r < 6; ++r) {
      const std::size_t k = 6 * static_cast<std::size_t>(link) + r;
      terms.maximal_matrix[k] = mass[k] + h * system.body(link).damping;
    }
  }
  // φ₀ = J q̇₀ and the velocity-product term J̇ q̇₀.
  std::vector<double> twist(unm), twist_rate(unm, 0.0);
  jacobian_times(terms, system.velocities(), twist);
  linalg::blas::gemv(linalg::blas::Transpose::no, 1.0, jacobian_rate.view(), system.velocities().data(), 0.0, twist_rate.data());

  terms.maximal_rhs.assign(unm, 0.0);
  std::vector<double> maximal_part(unm);
  for (std::size_t k = 0; k < unm; ++k) {
    terms.maximal_rhs[k] = mass[k] * twist[k] + h * forces[k];
    maximal_part[k] = mass[k] * twist[k] + h * (forces[k] - mass[k] * twist_rate[k]);
  }
  terms.reduced_rhs.assign(unr, 0.0);
  jacobian_transpose_times(terms, maximal_part, terms.reduced_rhs);
  for (std::size_t k = 0; k < unr; ++k) terms.reduced_rhs[k] += h * reduced_forces[k];

  // M̃_r = Jᵀ M̃_m J + hD_r + h²k (lower triangle).
  linalg::DenseMatrix scaled = terms.jacobian;
  for (Index c = 0; c < nr; ++c) {
    for (Index r = 0; r < nm; ++r) scaled(r, c) *= std::sqrt(terms.maximal_matrix[static_cast<std::size_t>(r)]);
  }
  terms.reduced_factor = linalg::DenseMatrix(nr, nr);
  linalg::blas::syrk(linalg::blas::Transpose::yes, 1.0, scaled.view(), 0.0, terms.reduced_factor.view());
  for (int link = 0; link < system.link_count(); ++link) {
    const JointSpec& joint = system.joint(link);
    for (int c = 0; c < system.link_dof_count(link); ++c) {
      const Index k = system.dof_offset(link) + c;
      terms.reduced_factor(k, k) += h * joint.damping + h * h * joint.stiffness;
    }
  }
  terms.reduced_matrix = terms.reduced_factor;
  if (nr > 0) {
    const int info = linalg::blas::potrf(terms.reduced_factor.view());
    if (info != 0) {
      throw std::runtime_error("REDMAX step: the reduced matrix is not positive definite at reduced DOF " +
                               std::to_string(info - 1));
    }
  }
}

void solve_reduced(const RedmaxStepTerms& terms, std::span<double> x) {
  const Index n = terms.reduced_factor.rows();
  if (n == 0) return;
  linalg::blas::potrs(terms.reduced_factor.view(), linalg::DenseView{x.data(), n, 1, n});
}

void jacobian_times(const RedmaxStepTerms& terms, std::span<const double> reduced, std::span<double> maximal) {
  if (terms.jacobian.cols() == 0) {
    std::fill(maximal.begin(), maximal.end(), 0.0);
    return;
  }
  linalg::blas::gemv(linalg::blas::Transpose::no, 1.0, terms.jacobian.view(), reduced.data(), 0.0, maximal.data());
}

void jacobian_transpose_times(const RedmaxStepTerms& terms, std::span<const double> maximal, std::span<double> reduced) {
  if (terms.jacobian.cols() == 0) return;
  linalg::blas::gemv(linalg::blas::Transpose::yes, 1.0, terms.jacobian.view(), maximal.data(), 0.0, reduced.data());
}

void advance_positions(ArticulatedSystem& system, double h, std::span<const double> new_velocities) {
  auto& q = system.positions();
  auto& qdot = system.velocities();
  for (std::size_t k = 0; k < q.size(); ++k) {
    qdot[k] = new_velocities[k];
    q[k] += h * new_velocities[k];
  }
  system.update();
}

void redmax_step(ArticulatedSystem& system, double h, const Vec3& gravity, RedmaxStepTerms& terms) {
  system.reparameterize();
  assemble_redmax_step(system, h, gravity, terms);
  std::vector<double> velocities = terms.reduced_rhs;
  solve_reduced(terms, velocities);
  advance_positions(system, h, velocities);
}

}  // namespace cholsim::fem::articulated

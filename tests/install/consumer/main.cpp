// A program outside the cholsim tree, built against the installed package.
#include <cmath>
#include <cstdio>
#include <vector>

#include "linalg/csc_matrix.hpp"
#ifdef CONSUMER_HAS_FACTOR
// An installed header from a module's idea subfolder (include/cholsim/factor/numeric/).
#include "factor/numeric/cholesky_factor.hpp"
#endif

int main() {
  using namespace cholsim::linalg;
  Triplets t;
  t.add(0, 0, 4.0);
  t.add(1, 0, -1.0);
  t.add(1, 1, 4.0);
  const SymmetricCscMatrix a = symmetric_from_triplets(2, t);
  std::vector<double> x{1.0, 1.0};
  std::vector<double> y(2);
  symmetric_multiply(a, x, y);
  bool ok = std::abs(y[0] - 3.0) < 1e-15 && std::abs(y[1] - 3.0) < 1e-15;
  std::printf("consumer: A*1 = (%g, %g) %s\n", y[0], y[1], ok ? "ok" : "WRONG");
#ifdef CONSUMER_HAS_FACTOR
  // Solving A·x = A·1 through the installed factorization gives x = 1 back.
  cholsim::factor::Factor factor(cholsim::factor::analyze(a));
  ok = ok && factor.factorize(a).ok();
  factor.solve(y);
  const bool solved = ok && std::abs(y[0] - 1.0) < 1e-14 && std::abs(y[1] - 1.0) < 1e-14;
  std::printf("consumer: A\\(A*1) = (%g, %g) %s\n", y[0], y[1], solved ? "ok" : "WRONG");
  ok = solved;
#endif
  return ok ? 0 : 1;
}

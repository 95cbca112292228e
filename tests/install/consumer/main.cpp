// A program outside the cholsim tree, built against the installed package.
#include <cmath>
#include <cstdio>
#include <vector>

#include "linalg/csc_matrix.hpp"

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
  const bool ok = std::abs(y[0] - 3.0) < 1e-15 && std::abs(y[1] - 3.0) < 1e-15;
  std::printf("consumer: A*1 = (%g, %g) %s\n", y[0], y[1], ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}

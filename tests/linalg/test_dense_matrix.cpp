#include <gtest/gtest.h>

#include "linalg/dense_matrix.hpp"

namespace cholsim::linalg {
namespace {

TEST(DenseView, BlockStartsAtItsFirstEntryAndKeepsTheLeadingDimension) {
  DenseMatrix a(4, 3);
  for (Index j = 0; j < 3; ++j) {
    for (Index i = 0; i < 4; ++i) a(i, j) = 10.0 * i + j;
  }
  const DenseView block = a.view().block(1, 1, 2, 2);
  EXPECT_EQ(block.rows, 2);
  EXPECT_EQ(block.cols, 2);
  EXPECT_EQ(block.ld, 4);
  EXPECT_EQ(block(0, 0), 11.0);
  EXPECT_EQ(block(1, 1), 22.0);
}

// An empty matrix has no storage; its blocks must not be formed by offsetting the null pointer
// (undefined behaviour, which Clang's UBSan reports: a CONJAC step with no active dynamic DOF
// took such a block).
TEST(DenseView, BlocksOfAMatrixWithoutStorageHaveNoStorage) {
  const DenseView no_columns{nullptr, 5, 0, 5};
  const DenseView block = no_columns.block(2, 0, 3, 0);
  EXPECT_EQ(block.data, nullptr);
  EXPECT_EQ(block.rows, 3);
  EXPECT_EQ(block.cols, 0);
  EXPECT_EQ(block.ld, 5);
}

}  // namespace
}  // namespace cholsim::linalg

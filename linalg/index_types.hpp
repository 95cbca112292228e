#pragma once
// Index types shared by every sparse structure in cholsim.
//
// Row indices are 32-bit (n < 2^31 unknowns is far beyond a 2-core machine's memory for a
// factor), column pointers are 64-bit because nnz(L) of a 1M-DOF 3D problem exceeds 2^31.
#include <cstdint>

namespace cholsim::linalg {

using Index = std::int32_t;   ///< a row or column number
using Offset = std::int64_t;  ///< a position in a column-pointer array (nnz can exceed 2^31)

}  // namespace cholsim::linalg

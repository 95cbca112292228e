#pragma once
// Matrix Market (.mtx) reading and writing for sparse (coordinate) and dense (array) matrices.
//
// Format reference: NIST, "The Matrix Market Exchange Formats: Initial Design" (Boisvert,
// Pozo, Remington, 1996), §§2-4. What cholsim accepts:
//  * banner `%%MatrixMarket matrix <format> <field> <symmetry>`, case-insensitive (spec §2);
//  * format `coordinate` (sparse) or `array` (dense, column-major);
//  * field `real`, `integer` or `pattern` (`pattern` is coordinate-only, as in the spec);
//  * symmetry `general` or `symmetric`;
//  * `%` comment lines and blank lines between the banner and the size line, blank lines
//    anywhere after it; '\r' is treated as white space, so CRLF files read fine.
// Rejected with a MatrixMarketError: `complex` values (cholsim matrices are real),
// `hermitian` (complex only) and `skew-symmetric` (a skew-symmetric matrix has a zero
// diagonal and xᵀAx = 0, so it is never SPD material for a Cholesky toolkit).
//
// Coordinate entries that repeat a position are summed, as csc_from_triplets does; for a
// `pattern` file the resulting values are all 1.0 whatever the repetitions.
//
// Sizes on the size line are checked before they size anything: rows and columns must fit
// Index (< 2^31), and the announced entries must fit the bytes after the size line (at least
// 2 bytes a line), otherwise "the file ends early" at the size line. The CSC result still
// holds cols + 1 column pointers, a valid sparse matrix may have empty columns; callers that
// need more (an SPD matrix) check the header first with require_header_allows_spd.
//
// Reading loads the whole file into memory and parses it with std::from_chars, so it runs
// at several hundred MB/s (bench/linalg/bench_matrix_market.cpp measures it); writing goes to a
// temporary file in the target directory that is renamed over the target when complete.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::linalg {

/// A malformed, unsupported or unreadable Matrix Market file, or a failed write.
/// what() reads "<file>:<line>: <what was wrong>; expected <what was expected>".
class MatrixMarketError : public std::runtime_error {
 public:
  MatrixMarketError(std::string file, std::int64_t line, const std::string& problem,
                    const std::string& expected);

  /// The path as given to the reader or writer.
  [[nodiscard]] const std::string& file() const { return file_; }
  /// 1-based line of the problem; 0 when it concerns the file as a whole (open, write).
  [[nodiscard]] std::int64_t line() const { return line_; }

 private:
  std::string file_;
  std::int64_t line_;
};

enum class MatrixMarketFormat { coordinate, array };
enum class MatrixMarketField { real, integer, pattern };
enum class MatrixMarketSymmetry { general, symmetric };

/// The banner and size line of a Matrix Market file.
struct MatrixMarketHeader {
  MatrixMarketFormat format = MatrixMarketFormat::coordinate;
  MatrixMarketField field = MatrixMarketField::real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
  Index rows = 0;
  Index cols = 0;
  /// Entries announced on the size line (coordinate), or values stored (array:
  /// rows·cols for general, n(n+1)/2 for symmetric).
  std::int64_t entries = 0;
  /// 1-based line of the size line (after the banner and comments), for messages.
  std::int64_t size_line = 0;

  /// False for `pattern` files: the values the readers return are then placeholders (1.0).
  [[nodiscard]] bool has_values() const { return field != MatrixMarketField::pattern; }
};

/// Reads only the banner and the size line of `path` (cheap on huge files).
/// Throws MatrixMarketError for any of the header problems the readers below report.
MatrixMarketHeader read_matrix_market_info(const std::string& path);

/// Throws MatrixMarketError naming the size line when the header alone rules out a symmetric
/// positive definite matrix: not square, or fewer stored entries than rows (each of the n
/// diagonal entries of an SPD matrix is positive, hence stored). Needs only the header, so a
/// caller about to factor can reject a file announcing n = 10⁸ with one entry before the
/// readers below allocate the O(n) column pointers of its CSC form.
void require_header_allows_spd(const std::string& path, const MatrixMarketHeader& header);

/// Reads a coordinate file into a general CSC matrix of the announced size.
/// `symmetric` files are expanded to both triangles (either stored triangle is accepted).
/// Values of a `pattern` file are 1.0; pass `header` to learn the field (and the rest of the
/// header) without a second read. `array` files are rejected: use read_dense_matrix_market.
/// Throws MatrixMarketError naming file:line for every malformed input.
CscMatrix read_matrix_market(const std::string& path, MatrixMarketHeader* header = nullptr);

/// Reads a coordinate file holding a symmetric matrix and returns its lower triangle.
///  * `symmetric` files may store the lower OR the upper triangle (the spec says lower; many
///    writers emit upper): upper entries are transposed. Diagonal entries fit either. A file
///    mixing entries from both strict triangles is an error naming the line of the first
///    entry that contradicts the triangle chosen by the earlier entries.
///  * `general` files are accepted only if square and numerically symmetric — A(i,j) and
///    A(j,i) equal bit for bit after summing duplicates, a missing entry counting as 0 — and
///    their lower triangle is kept. Otherwise the error names a line holding an offending
///    entry and both values. Symmetrise matrices that are symmetric only up to rounding
///    before writing them.
/// Pattern files give values 1.0, as in read_matrix_market.
SymmetricCscMatrix read_symmetric_matrix_market(const std::string& path,
                                                MatrixMarketHeader* header = nullptr);

/// Reads an `array` file (values column by column). A `symmetric` array stores the lower
/// triangle column by column (n(n+1)/2 values, spec §3) and is expanded to the full matrix.
/// Coordinate files are rejected: use read_matrix_market.
DenseMatrix read_dense_matrix_market(const std::string& path, MatrixMarketHeader* header = nullptr);

/// Writes `a` as `coordinate real general`, or `coordinate pattern general` when `a` holds
/// no values (values empty, nnz > 0). Values are written in shortest round-trip form
/// (std::to_chars), so reading the file back gives bit-identical doubles.
/// Throws std::invalid_argument if `a` fails check_valid or holds a NaN/Inf value, and
/// MatrixMarketError (line 0) naming `path` if the file cannot be written; the target is
/// then untouched and no temporary file is left behind.
void write_matrix_market(const std::string& path, const CscMatrix& a);

/// Writes the lower triangle of `a` as `coordinate real symmetric` (or `pattern symmetric`).
void write_matrix_market(const std::string& path, const SymmetricCscMatrix& a);

/// Writes `a` as `array real general`, column by column.
void write_matrix_market(const std::string& path, const DenseMatrix& a);

}  // namespace cholsim::linalg

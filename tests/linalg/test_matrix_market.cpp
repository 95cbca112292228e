// Matrix Market I/O: round trips are bit-exact, both stored triangles of a symmetric file
// give the same matrix, every malformed input names its file:line and what was wrong, and
// writes are atomic (no temporary left behind, nothing created on failure).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "linalg/matrix_market.hpp"

namespace cholsim::linalg {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test (tests may run as parallel processes: the pid keeps them apart).
class MatrixMarketFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("cholsim_mm_") + info->test_suite_name() + "_" + info->name() +
                       "_" + std::to_string(::getpid());
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = fs::temp_directory_path() / name;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  [[nodiscard]] std::string path(const std::string& file) const { return (dir_ / file).string(); }

  std::string write_text(const std::string& file, const std::string& content) const {
    const std::string p = path(file);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

  [[nodiscard]] std::vector<std::string> directory_listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

void expect_same(const CscMatrix& a, const CscMatrix& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.col_ptr, b.col_ptr);
  EXPECT_EQ(a.row_idx, b.row_idx);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    // Bit-exact, so -0.0 and 0.0 are told apart too.
    EXPECT_EQ(std::signbit(a.values[k]), std::signbit(b.values[k])) << "value " << k;
    EXPECT_EQ(a.values[k], b.values[k]) << "value " << k;
  }
}

// Values chosen to break a writer that loses digits: thirds, tenths, extremes, subnormals.
const std::vector<double> kAwkwardValues = {1.0 / 3.0,
                                            0.1,
                                            -2.0 / 7.0,
                                            1e-300,
                                            -4.9406564584124654e-324,
                                            std::numeric_limits<double>::max(),
                                            -0.0,
                                            123456789.123456789,
                                            -1.0};

CscMatrix general_example() {
  Triplets t;
  t.add(0, 0, kAwkwardValues[0]);
  t.add(2, 0, kAwkwardValues[1]);
  t.add(1, 1, kAwkwardValues[2]);
  t.add(3, 1, kAwkwardValues[3]);
  t.add(0, 2, kAwkwardValues[4]);
  t.add(4, 2, kAwkwardValues[5]);
  t.add(2, 3, kAwkwardValues[6]);
  t.add(4, 3, kAwkwardValues[7]);
  return csc_from_triplets(5, 4, t);
}

SymmetricCscMatrix symmetric_example() {
  Triplets t;
  for (Index i = 0; i < 5; ++i) t.add(i, i, 4.0 + kAwkwardValues[static_cast<std::size_t>(i)]);
  t.add(1, 0, kAwkwardValues[1]);
  t.add(3, 0, kAwkwardValues[3]);
  t.add(4, 2, kAwkwardValues[8]);
  t.add(4, 3, kAwkwardValues[0]);
  return symmetric_from_triplets(5, t);
}

// --- Round trips ------------------------------------------------------------------------

using MatrixMarketRoundTrip = MatrixMarketFiles;

TEST_F(MatrixMarketRoundTrip, GeneralIsBitExact) {
  const CscMatrix a = general_example();
  write_matrix_market(path("a.mtx"), a);
  MatrixMarketHeader header;
  expect_same(read_matrix_market(path("a.mtx"), &header), a);
  EXPECT_EQ(header.format, MatrixMarketFormat::coordinate);
  EXPECT_EQ(header.field, MatrixMarketField::real);
  EXPECT_EQ(header.symmetry, MatrixMarketSymmetry::general);
  EXPECT_EQ(header.rows, 5);
  EXPECT_EQ(header.cols, 4);
  EXPECT_EQ(header.entries, a.nnz());
}

TEST_F(MatrixMarketRoundTrip, SymmetricKeepsLowerTriangleAndExpandsForGeneralRead) {
  const SymmetricCscMatrix a = symmetric_example();
  write_matrix_market(path("s.mtx"), a);
  MatrixMarketHeader header;
  expect_same(read_symmetric_matrix_market(path("s.mtx"), &header).lower, a.lower);
  EXPECT_EQ(header.symmetry, MatrixMarketSymmetry::symmetric);
  EXPECT_EQ(header.entries, a.nnz_lower());
  expect_same(read_matrix_market(path("s.mtx")), to_full(a));
}

TEST_F(MatrixMarketRoundTrip, DenseIsBitExact) {
  DenseMatrix a(3, 2);
  for (Index j = 0; j < 2; ++j) {
    for (Index i = 0; i < 3; ++i) a(i, j) = kAwkwardValues[static_cast<std::size_t>(i + 3 * j)];
  }
  write_matrix_market(path("d.mtx"), a);
  MatrixMarketHeader header;
  const DenseMatrix b = read_dense_matrix_market(path("d.mtx"), &header);
  EXPECT_EQ(header.format, MatrixMarketFormat::array);
  ASSERT_EQ(b.rows(), 3);
  ASSERT_EQ(b.cols(), 2);
  for (std::size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(b.storage()[k], a.storage()[k]);
    EXPECT_EQ(std::signbit(b.storage()[k]), std::signbit(a.storage()[k]));
  }
}

TEST_F(MatrixMarketRoundTrip, PatternWritesPatternAndReadsOnes) {
  CscMatrix a = general_example();
  a.values.clear();  // a pattern-only matrix
  write_matrix_market(path("p.mtx"), a);
  EXPECT_FALSE(read_matrix_market_info(path("p.mtx")).has_values());
  MatrixMarketHeader header;
  const CscMatrix b = read_matrix_market(path("p.mtx"), &header);
  EXPECT_EQ(header.field, MatrixMarketField::pattern);
  EXPECT_FALSE(header.has_values());
  EXPECT_EQ(b.col_ptr, a.col_ptr);
  EXPECT_EQ(b.row_idx, a.row_idx);
  EXPECT_EQ(b.values, std::vector<double>(a.row_idx.size(), 1.0));
}

TEST_F(MatrixMarketRoundTrip, PatternDuplicatesStayOne) {
  const std::string p = write_text("p.mtx",
                                   "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                   "2 2 3\n1 1\n2 1\n2 1\n");
  const SymmetricCscMatrix a = read_symmetric_matrix_market(p);
  EXPECT_EQ(a.lower.row_idx, (std::vector<Index>{0, 1}));
  EXPECT_EQ(a.lower.values, (std::vector<double>{1.0, 1.0}));
}

TEST_F(MatrixMarketRoundTrip, IntegerFieldReadsAndRoundTripsAsReal) {
  const std::string p = write_text("i.mtx",
                                   "%%MatrixMarket matrix coordinate integer general\n"
                                   "2 3 3\n1 1 7\n2 3 -12\n1 2 +5\n");
  MatrixMarketHeader header;
  const CscMatrix a = read_matrix_market(p, &header);
  EXPECT_EQ(header.field, MatrixMarketField::integer);
  EXPECT_EQ(a.col_ptr, (std::vector<Offset>{0, 1, 2, 3}));
  EXPECT_EQ(a.row_idx, (std::vector<Index>{0, 0, 1}));
  EXPECT_EQ(a.values, (std::vector<double>{7.0, 5.0, -12.0}));
  write_matrix_market(path("again.mtx"), a);
  expect_same(read_matrix_market(path("again.mtx")), a);
}

TEST_F(MatrixMarketRoundTrip, EmptyMatrices) {
  const CscMatrix empty = csc_from_triplets(3, 2, Triplets{});
  write_matrix_market(path("e.mtx"), empty);
  expect_same(read_matrix_market(path("e.mtx")), empty);
  write_matrix_market(path("z.mtx"), DenseMatrix(0, 0));
  EXPECT_EQ(read_dense_matrix_market(path("z.mtx")).rows(), 0);
}

// --- Reading conventions -----------------------------------------------------------------

using MatrixMarketRead = MatrixMarketFiles;

TEST_F(MatrixMarketRead, SymmetricLowerAndUpperFilesGiveTheSameMatrix) {
  const std::string lower = write_text("lower.mtx",
                                       "%%MatrixMarket matrix coordinate real symmetric\n"
                                       "3 3 5\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1.5\n3 3 4\n");
  const std::string upper = write_text("upper.mtx",
                                       "%%MatrixMarket matrix coordinate real symmetric\n"
                                       "3 3 5\n1 1 4\n1 2 -1\n2 2 4\n2 3 -1.5\n3 3 4\n");
  const std::string general = write_text("general.mtx",
                                         "%%MatrixMarket matrix coordinate real general\n"
                                         "3 3 7\n1 1 4\n2 1 -1\n1 2 -1\n2 2 4\n3 2 -1.5\n"
                                         "2 3 -1.5\n3 3 4\n");
  const SymmetricCscMatrix from_lower = read_symmetric_matrix_market(lower);
  check_valid(from_lower);
  EXPECT_EQ(from_lower.lower.row_idx, (std::vector<Index>{0, 1, 1, 2, 2}));
  EXPECT_EQ(from_lower.lower.values, (std::vector<double>{4, -1, 4, -1.5, 4}));
  expect_same(read_symmetric_matrix_market(upper).lower, from_lower.lower);
  expect_same(read_symmetric_matrix_market(general).lower, from_lower.lower);
  expect_same(read_matrix_market(upper), read_matrix_market(general));
}

TEST_F(MatrixMarketRead, CommentsBlankLinesCaseAndCrlfAreAccepted) {
  const std::string p = write_text("c.mtx",
                                   "%%matrixmarket MATRIX Coordinate REAL General\r\n"
                                   "% a comment\r\n"
                                   "\r\n"
                                   "   % an indented comment\n"
                                   "\t\n"
                                   "  2 2 2  \r\n"
                                   "\n"
                                   " 1\t1   1.5e0 \r\n"
                                   "\n"
                                   "2 2 -.25\n"
                                   "\n");
  const CscMatrix a = read_matrix_market(p);
  EXPECT_EQ(a.row_idx, (std::vector<Index>{0, 1}));
  EXPECT_EQ(a.values, (std::vector<double>{1.5, -0.25}));
}

TEST_F(MatrixMarketRead, DuplicateEntriesAreSummed) {
  const std::string p = write_text("dup.mtx",
                                   "%%MatrixMarket matrix coordinate real general\n"
                                   "2 2 3\n1 1 1\n2 1 2\n1 1 0.5\n");
  EXPECT_EQ(read_matrix_market(p).values, (std::vector<double>{1.5, 2.0}));
}

TEST_F(MatrixMarketRead, EntriesInAnyOrderMatchCscFromTriplets) {
  // Columns out of order, rows out of order within a column, a duplicate, no final newline.
  const std::string p = write_text("order.mtx",
                                   "%%MatrixMarket matrix coordinate real general\n"
                                   "4 3 7\n3 2 1\n1 3 2\n4 1 3\n2 1 4\n1 2 5\n3 2 0.5\n"
                                   "1 1 +7");
  Triplets t;
  t.add(2, 1, 1);
  t.add(0, 2, 2);
  t.add(3, 0, 3);
  t.add(1, 0, 4);
  t.add(0, 1, 5);
  t.add(2, 1, 0.5);
  t.add(0, 0, 7);
  const CscMatrix a = read_matrix_market(p);
  check_valid(a);
  expect_same(a, csc_from_triplets(4, 3, t));
}

TEST_F(MatrixMarketRead, SymmetricArrayIsExpanded) {
  const std::string p = write_text("sa.mtx",
                                   "%%MatrixMarket matrix array integer symmetric\n"
                                   "3 3\n1\n2\n3\n4\n5\n6\n");
  const DenseMatrix a = read_dense_matrix_market(p);
  // Lower triangle column by column: (1,1)=1 (2,1)=2 (3,1)=3 (2,2)=4 (3,2)=5 (3,3)=6.
  const double expected[3][3] = {{1, 2, 3}, {2, 4, 5}, {3, 5, 6}};
  for (Index i = 0; i < 3; ++i) {
    for (Index j = 0; j < 3; ++j) EXPECT_EQ(a(i, j), expected[i][j]) << i << "," << j;
  }
}

TEST_F(MatrixMarketRead, InfoReadsOnlyTheHeader) {
  // The body is broken: info must not look at it.
  const std::string p = write_text("h.mtx",
                                   "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                   "% comment\n7 7 100\nnot an entry\n");
  const MatrixMarketHeader h = read_matrix_market_info(p);
  EXPECT_EQ(h.field, MatrixMarketField::pattern);
  EXPECT_EQ(h.symmetry, MatrixMarketSymmetry::symmetric);
  EXPECT_EQ(h.rows, 7);
  EXPECT_EQ(h.entries, 100);
}

// --- Malformed inputs --------------------------------------------------------------------

enum class Reader { general, symmetric, dense, info };

struct MalformedCase {
  std::string name;
  Reader reader;
  std::string content;
  std::int64_t line;                   ///< the line the error must name
  std::vector<std::string> fragments;  ///< explanation fragments the message must contain
};

// Shown by GoogleTest instead of a byte dump when a case fails.
void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

void read_with(Reader reader, const std::string& p) {
  switch (reader) {
    case Reader::general: (void)read_matrix_market(p); break;
    case Reader::symmetric: (void)read_symmetric_matrix_market(p); break;
    case Reader::dense: (void)read_dense_matrix_market(p); break;
    case Reader::info: (void)read_matrix_market_info(p); break;
  }
}

// Checks the exception type, file(), line() and that what() is "<file>:<line>: ..." holding
// every fragment.
void expect_error(const std::function<void()>& action, const std::string& file, std::int64_t line,
                  const std::vector<std::string>& fragments) {
  try {
    action();
    ADD_FAILURE() << "no MatrixMarketError thrown";
  } catch (const MatrixMarketError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), line) << message;
    EXPECT_EQ(message.rfind(file + ":" + std::to_string(line) + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("; expected "), std::string::npos) << message;
    for (const auto& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << message;
    }
  }
}

const std::string kRealGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kRealSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";

const std::vector<MalformedCase> kMalformed = {
    {"EmptyFile", Reader::general, "", 1, {"missing banner", "file is empty", "%%MatrixMarket"}},
    {"NoBanner", Reader::general, "3 3 1\n1 1 1\n", 1, {"missing banner", "'3 3 1'"}},
    {"BannerTooShort", Reader::general, "%%MatrixMarket matrix coordinate real\n1 1 0\n", 1,
     {"malformed banner", "4 words"}},
    {"UnknownObject", Reader::general, "%%MatrixMarket vector coordinate real general\n", 1,
     {"unknown object 'vector'", "'matrix'"}},
    {"UnknownFormat", Reader::general, "%%MatrixMarket matrix sparse real general\n", 1,
     {"unknown format 'sparse'", "'coordinate' or 'array'"}},
    {"UnknownField", Reader::general, "%%MatrixMarket matrix coordinate quaternion general\n", 1,
     {"unknown field 'quaternion'", "'real', 'integer' or 'pattern'"}},
    {"ComplexRejected", Reader::general, "%%MatrixMarket matrix coordinate complex general\n", 1,
     {"'complex' is not supported"}},
    {"SkewSymmetricRejected", Reader::symmetric,
     "%%MatrixMarket matrix coordinate real skew-symmetric\n", 1, {"skew-symmetric", "never SPD"}},
    {"HermitianRejected", Reader::general, "%%MatrixMarket matrix coordinate real hermitian\n", 1,
     {"'hermitian' is not supported"}},
    {"UnknownSymmetry", Reader::general, "%%MatrixMarket matrix coordinate real diagonal\n", 1,
     {"unknown symmetry 'diagonal'", "'general' or 'symmetric'"}},
    {"PatternArray", Reader::dense, "%%MatrixMarket matrix array pattern general\n", 1,
     {"'pattern' is not allowed with format 'array'"}},
    {"MissingSizeLine", Reader::general, kRealGeneral + "% only comments\n%\n", 3,
     {"missing size line", "rows columns entries"}},
    {"SizeLineWordCount", Reader::general, kRealGeneral + "% c\n3 3\n1 1 1\n", 3,
     {"malformed size line '3 3' with 2 words", "3 non-negative integers"}},
    {"SizeLineNotInteger", Reader::general, kRealGeneral + "3 3.5 1\n", 2,
     {"'3.5' is not an integer"}},
    {"NegativeSize", Reader::general, kRealGeneral + "3 -3 1\n", 2, {"negative size -3"}},
    {"SizeBeyondIndex", Reader::general, kRealGeneral + "3000000000 1 0\n", 2,
     {"row count 3000000000", "at most 2147483647"}},
    {"SymmetricNotSquare", Reader::general, kRealSymmetric + "3 4 1\n1 1 1\n", 2,
     {"symmetric matrix is 3x4", "a square matrix"}},
    {"TooFewEntries", Reader::general, kRealGeneral + "3 3 4\n1 1 1\n2 2 1\n\n3 3 1\n", 6,
     {"ends after 3 entries", "(line 2) announced 4", "expected 4 entries"}},
    {"TooManyEntries", Reader::general, kRealGeneral + "3 3 2\n1 1 1\n2 2 1\n3 3 1\n", 5,
     {"more entries than the 2 announced", "line 2"}},
    {"TooFewTokens", Reader::general, kRealGeneral + "3 3 2\n1 1 1\n2 2\n", 4,
     {"too few tokens: the line has 2", "3 tokens (row column value)"}},
    {"TooManyTokens", Reader::general, kRealGeneral + "3 3 2\n1 1 1 9\n2 2 1\n", 3,
     {"too many tokens: the line has 4"}},
    {"PatternWithValue", Reader::general,
     "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1.0\n", 3,
     {"too many tokens", "2 tokens (row column)"}},
    {"NonNumericValue", Reader::general, kRealGeneral + "3 3 1\n1 1 abc\n", 3,
     {"value 'abc' is not a number"}},
    {"NonNumericIndex", Reader::general, kRealGeneral + "3 3 1\nx 1 1.0\n", 3,
     {"row index 'x' is not an integer"}},
    {"FractionalIndex", Reader::general, kRealGeneral + "3 3 1\n1 2.0 1.0\n", 3,
     {"column index '2.0' is not an integer"}},
    {"IndexZero", Reader::general, kRealGeneral + "3 3 1\n0 1 1.0\n", 3,
     {"row index 0 is out of range", "1..3"}},
    {"IndexTooLarge", Reader::symmetric, kRealSymmetric + "% c\n3 3 2\n1 1 1\n1 4 1.0\n", 5,
     {"column index 4 is out of range", "1..3"}},
    {"NaNValue", Reader::general, kRealGeneral + "3 3 1\n1 1 nan\n", 3, {"'nan' is NaN or infinite"}},
    {"InfValue", Reader::symmetric, kRealSymmetric + "3 3 2\n1 1 1\n2 1 -inf\n", 4,
     {"'-inf' is NaN or infinite", "a finite real value"}},
    {"ValueOverflow", Reader::general, kRealGeneral + "3 3 1\n1 1 1e999\n", 3,
     {"outside the range of double"}},
    {"IntegerFieldFraction", Reader::general,
     "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
     {"'1.5' is not an integer", "the banner says 'integer'"}},
    {"MixedTriangles", Reader::symmetric,
     kRealSymmetric + "3 3 4\n1 1 2\n3 1 -1\n2 2 2\n1 2 -1\n", 6,
     {"entry (1, 2) lies in the upper triangle", "line 4 chose the lower"}},
    {"MixedTrianglesUpperFirst", Reader::general,
     kRealSymmetric + "3 3 3\n1 3 -1\n\n2 1 -1\n3 3 1\n", 5,
     {"entry (2, 1) lies in the lower triangle", "line 3 chose the upper"}},
    {"GeneralNotSymmetric", Reader::symmetric,
     kRealGeneral + "2 2 3\n1 1 4\n1 2 3\n2 1 2.5\n", 4,
     {"not symmetric", "A(2, 1) = 2.5 but A(1, 2) = 3"}},
    {"GeneralMissingMirror", Reader::symmetric,
     kRealGeneral + "3 3 3\n1 1 4\n2 2 4\n3 2 1\n", 5, {"A(3, 2) = 1 but A(2, 3) = 0"}},
    {"GeneralNotSquare", Reader::symmetric, kRealGeneral + "% c\n2 3 0\n", 3,
     {"the matrix is 2x3", "a square matrix"}},
    {"ArrayForSparseReader", Reader::general, "%%MatrixMarket matrix array real general\n1 1\n1\n",
     1, {"'array'", "read_dense_matrix_market"}},
    {"CoordinateForDenseReader", Reader::dense, kRealGeneral + "1 1 0\n", 1,
     {"'coordinate'", "read_matrix_market"}},
    {"ArrayTooFewValues", Reader::dense, "%%MatrixMarket matrix array real symmetric\n3 3\n1.5\n2.5\n3.5\n",
     5, {"ends after 3 entries", "announced 6"}},
    // D2: a size line announcing more entries than the bytes after it can hold (2 bytes a line)
    // fails at the size line, before anything is reserved for them.
    {"EntriesBeyondTheFile", Reader::general, kRealGeneral + "4 4 1000000000\n1 1 1.0\n", 2,
     {"the file ends early", "announces 1000000000 entries", "the 8 bytes after it hold at most 4 lines",
      "1000000000 entry lines"}},
    {"EntriesJustBeyondTheFile", Reader::symmetric, kRealSymmetric + "3 3 4\n1\n2\n3\n", 2,
     {"the file ends early", "6 bytes after it hold at most 3 lines"}},
    {"ArrayBeyondTheFile", Reader::dense, "%%MatrixMarket matrix array real general\n100000 100000\n1\n", 2,
     {"the file ends early", "announces 10000000000 entries", "2 bytes after it hold at most 1 lines"}},
    {"SizeJustBeyondIndex", Reader::symmetric, kRealSymmetric + "2147483648 2147483648 1\n1 1 1\n", 2,
     {"row count 2147483648 does not fit cholsim's 32-bit Index", "at most 2147483647"}},
    {"ArrayTwoValuesOnALine", Reader::dense,
     "%%MatrixMarket matrix array real general\n2 1\n1 2\n", 3, {"too many tokens", "1 token (value)"}},
    {"InfoSeesBadBanner", Reader::info, "%%MatrixMarket matrix coordinate real general extra\n", 1,
     {"6 words"}},
};

class MatrixMarketMalformed : public MatrixMarketFiles,
                              public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(MatrixMarketMalformed, NamesFileLineAndProblem) {
  const MalformedCase& c = GetParam();
  const std::string p = write_text(c.name + ".mtx", c.content);
  expect_error([&] { read_with(c.reader, p); }, p, c.line, c.fragments);
}

INSTANTIATE_TEST_SUITE_P(Inputs, MatrixMarketMalformed, ::testing::ValuesIn(kMalformed),
                         [](const auto& info) { return info.param.name; });

// --- The header check `cholsim factor` runs before reading a body -------------------------

using MatrixMarketSpdHeader = MatrixMarketFiles;

TEST_F(MatrixMarketSpdHeader, FewerEntriesThanRowsCannotHoldTheDiagonal) {
  // D2: n = 10^8 with one entry used to cost 6.9 GB before "out of memory".
  for (const char* n : {"100000000", "2000000000"}) {
    const std::string p = write_text(std::string("n") + n + ".mtx",
                                     kRealSymmetric + "% one entry\n" + n + " " + n + " 1\n1 1 1.0\n");
    expect_error([&] { require_header_allows_spd(p, read_matrix_market_info(p)); }, p, 3,
                 {std::string(n) + "x" + n + " matrix with only 1 stored entries",
                  std::string("fewer than its ") + n + " diagonal entries", "not positive definite",
                  std::string("at least ") + n + " entries"});
  }
}

TEST_F(MatrixMarketSpdHeader, RectangularIsRejected) {
  const std::string p = write_text("rect.mtx", kRealGeneral + "2 3 6\n");
  expect_error([&] { require_header_allows_spd(p, read_matrix_market_info(p)); }, p, 2,
               {"the matrix is 2x3", "only a square matrix can be positive definite"});
}

TEST_F(MatrixMarketSpdHeader, AsManyEntriesAsRowsPass) {
  // The check is necessary, not sufficient: n entries may still miss a diagonal entry, which
  // the factorization then reports as not positive definite.
  const std::string p = write_text("diag.mtx", kRealSymmetric + "3 3 3\n1 1 1\n2 1 1\n3 3 1\n");
  const MatrixMarketHeader header = read_matrix_market_info(p);
  EXPECT_EQ(header.size_line, 2);
  EXPECT_NO_THROW(require_header_allows_spd(p, header));
  const std::string dense = write_text("dense.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n");
  EXPECT_NO_THROW(require_header_allows_spd(dense, read_matrix_market_info(dense)));
}

using MatrixMarketOpen = MatrixMarketFiles;

TEST_F(MatrixMarketOpen, MissingFileIsLineZero) {
  const std::string p = path("does_not_exist.mtx");
  for (Reader reader : {Reader::general, Reader::symmetric, Reader::dense, Reader::info}) {
    expect_error([&] { read_with(reader, p); }, p, 0, {"cannot open the file", "No such file"});
  }
}

// --- Atomic writes -----------------------------------------------------------------------

using MatrixMarketWrite = MatrixMarketFiles;

TEST_F(MatrixMarketWrite, LeavesOnlyTheTargetAndReplacesAtomically) {
  write_matrix_market(path("a.mtx"), general_example());
  write_matrix_market(path("s.mtx"), symmetric_example());
  DenseMatrix d(2, 2, 1.5);
  write_matrix_market(path("d.mtx"), d);
  EXPECT_EQ(directory_listing(), (std::vector<std::string>{"a.mtx", "d.mtx", "s.mtx"}));
  // Overwriting an existing file replaces it whole.
  write_matrix_market(path("a.mtx"), symmetric_example());
  EXPECT_EQ(read_matrix_market_info(path("a.mtx")).symmetry, MatrixMarketSymmetry::symmetric);
  EXPECT_EQ(directory_listing(), (std::vector<std::string>{"a.mtx", "d.mtx", "s.mtx"}));
}

TEST_F(MatrixMarketWrite, MissingDirectoryThrowsNamingThePathAndCreatesNothing) {
  const std::string target = (dir_ / "no" / "such" / "dir" / "a.mtx").string();
  expect_error([&] { write_matrix_market(target, general_example()); }, target, 0,
               {"cannot create a temporary file", "No such file or directory"});
  expect_error([&] { write_matrix_market(target, DenseMatrix(1, 1)); }, target, 0,
               {"cannot create a temporary file"});
  EXPECT_FALSE(fs::exists(dir_ / "no"));
  EXPECT_TRUE(directory_listing().empty());
}

TEST_F(MatrixMarketWrite, NonFiniteValuesAreRefusedBeforeAnyFileExists) {
  CscMatrix a = general_example();
  a.values[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(write_matrix_market(path("a.mtx"), a), std::invalid_argument);
  DenseMatrix d(1, 1, std::numeric_limits<double>::infinity());
  EXPECT_THROW(write_matrix_market(path("d.mtx"), d), std::invalid_argument);
  EXPECT_TRUE(directory_listing().empty());
}

TEST_F(MatrixMarketWrite, InvalidMatrixIsRefused) {
  CscMatrix a = general_example();
  a.row_idx[0] = 99;
  EXPECT_THROW(write_matrix_market(path("a.mtx"), a), std::invalid_argument);
  SymmetricCscMatrix upper{csc_from_triplets(2, 2, [] {
    Triplets t;
    t.add(0, 1, 1.0);
    return t;
  }())};
  EXPECT_THROW(write_matrix_market(path("s.mtx"), upper), std::invalid_argument);
  EXPECT_TRUE(directory_listing().empty());
}

}  // namespace
}  // namespace cholsim::linalg

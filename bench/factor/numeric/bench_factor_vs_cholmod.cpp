// cholsim's supernodal factorization against CHOLMOD and MUMPS: same matrix, same permutation,
// same thread count, the three libraries alternating.
//
// Matrices: elasticity boxes (--box, --large), issue 23's bench shapes (--shapes, --shape:
// 2D 5-point, 3D 27- and 7-point, 3-DOF shells, arrowheads, tetgen'd models; every default
// shape ≥ 30K DOF, bench/bench_matrices.hpp), --mtx files and every *.mtx under
// shared/data/matrices/ when that folder exists. For each matrix cholsim computes ONE ordering
// and all three libraries factor with that permutation: cholsim's default, `automatic` (AMD, or
// METIS where AMD's predicted flops are high), since issue 23's targets are about what cholsim
// does by default. On the elasticity boxes `automatic` keeps METIS, so their rows are those of
// the earlier runs of this program, which forced METIS (docs/benchmarks.md; checked: the same
// nnz(L) on the 20³, 32³ and 46³ boxes). --ordering forces one method for every matrix. The
// tables say which ordering each matrix got.
//
// For each thread count the program runs, --repeat times and alternating the libraries:
//   analyze:  cholsim analyze(ordering = given) vs cholmod_l_analyze_p(CHOLMOD_GIVEN) vs MUMPS
//             JOB = 1 with ICNTL(7) = 1 (the same permutation);
//   factor:   Factor::factorize vs cholmod_l_factorize (supernodal) vs MUMPS JOB = 2 (SPD mode);
//   solve:    one right-hand side, Factor::solve vs cholmod_l_solve(CHOLMOD_A) vs MUMPS JOB = 3.
// It prints the medians, the cholsim/CHOLMOD and cholsim/MUMPS ratios and issue 23's targets as
// Markdown tables (stdout), progress on stderr, and with --json FILE the same numbers as JSON.
//
// --separate-processes: one library's factorization of the 69³ box (1.03M DOF) takes 16–20 GB,
// so two libraries in one process do not fit in a 24 GB machine. In this mode the program builds
// nothing big itself: per matrix one child process (this program, /proc/self/exe, with the
// hidden --child-* flags) builds the matrix from its spec and computes the ordering, writing the
// permutation to a temporary file; then every repetition of every library is a child of its own,
// which builds the matrix again, reads that permutation, runs one analyze/factor/solve and
// writes its numbers as JSON. The children alternate (cholsim, CHOLMOD, MUMPS, cholsim, …) like
// the libraries in one process, so machine drift hits all alike. A child's peak resident memory
// (ru_maxrss, from wait4) is reported; a child that dies (the OOM killer's SIGKILL, a non-zero
// exit) is a failed entry with the reason, not the end of the run. Every child checks that it
// built the very matrix the ordering child ordered (a fingerprint of pattern and values), and
// factors a tiny matrix untimed first, so that its thread pools are running as they are in a
// process that has factored before. What stays different from one process: every repetition
// touches its memory for the first time, which on small matrices (milliseconds) shows; the mode
// is meant for the large ones, where one process cannot hold the three libraries.
//
// What is measured, exactly:
//  * times are wall-clock around the single library call (steady_clock);
//  * GFLOP/s of all libraries use the same numerator, the exact flop count Σⱼ cⱼ² of the
//    permuted pattern (cⱼ: column counts of L; CHOLMOD's Common->fl, which the sizes table lists
//    beside it), so rate ratios are time ratios; cholsim's own count (supernodal, amalgamation
//    zeros included) and MUMPS's RINFOG(3) are listed separately;
//  * % of dgemm = that GFLOP/s over OpenBLAS dgemm's (2000×2000, measured here at the same thread
//    count, in the parent process) — issue 23: "≥ 85 % of 2-thread dgemm GFLOP/s";
//  * residual = ‖b − A·x‖₂ / ‖b‖₂ with b = A·(1, 2, …, n);
//  * memory, each library's own count: cholsim = FactorStats::factor_bytes + the update blocks'
//    bytes (the arena they were placed in, update_arena_bytes, or without one the most bytes
//    held in blocks at once, peak_update_bytes; symbolic structure not counted); CHOLMOD = peak
//    of Common->memory_usage during cholmod_l_factorize, after resetting it to memory_inuse (L's
//    values and integer structure, workspace and its update buffer; A is wrapped, not allocated
//    by CHOLMOD, so it is not counted); MUMPS = INFOG(22) (MB effectively used by the
//    factorization). With --separate-processes also the whole child's peak RSS.
// CHOLMOD calls OpenBLAS with however many threads OpenBLAS has; all libraries are given the
// same count through linalg::set_blas_threads. MUMPS is the sequential build (no OpenMP): its
// only threads are those of the same OpenBLAS (bench/mumps_reference.hpp).
#include <cholmod.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <concepts>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_matrices.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/cholmod_reference.hpp"
#include "bench/mumps_reference.hpp"
#include "factor/analysis/column_counts.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/blas.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/matrix_market.hpp"

extern char** environ;

namespace {

using cholsim::linalg::Index;
using cholsim::linalg::SymmetricCscMatrix;
using nlohmann::json;
namespace bench = cholsim::bench;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;

constexpr const char* kProgram = "bench_factor_vs_cholmod";

constexpr const char* kUsage = R"(usage: bench_factor_vs_cholmod [options]

Factorizes each matrix with cholsim, CHOLMOD and MUMPS (one permutation, computed by cholsim and
given to all three; same thread count) and prints median analyze / factor / solve times, their
ratios, issue 23's targets (factor <= 0.8x CHOLMOD and <= 0.8x MUMPS at 2 threads on every
matrix >= 30K DOF; factor GFLOP/s as % of the dgemm ceiling), nnz(L), flops, residuals and peak
memory as Markdown tables.

Matrices (default: elasticity boxes of 20^3, 32^3, 46^3 cells = 27,783 / 107,811 / 311,469
DOF, plus every *.mtx in shared/data/matrices/ if that folder exists). Each is ordered once by
cholsim's default, auto (AMD, or METIS where AMD's predicted flops are high: METIS on the boxes),
and that permutation is given to all three libraries.
  --box N             an N^3-cell elasticity box instead of the default boxes (repeatable)
  --large             also the 69^3-cell box (1,029,000 DOF); one library's factorization
                      takes 16-20 GB, so on a 24 GB machine use --separate-processes
  --shapes            issue 23's bench shapes instead of the default boxes, each >= 30K DOF:
{default shapes}
  --small             with --shapes: small versions of the shapes (a smoke run of seconds)
  --shape SPEC        one matrix by its spec instead of the default boxes (repeatable); the
                      specs:
{spec grammar}  --mtx FILE          a Matrix Market file (repeatable)
  --mtx-dofs-per-node K  DOFs per node for ordering --mtx files (default 1)
  --no-shared-data    skip shared/data/matrices/
  --ordering METHOD   order every matrix with METHOD instead: auto, amd, metis or natural
Runs:
  --threads LIST      thread counts, comma separated or repeated (default 1,2)
  --repeat R          repetitions per measurement, the median is reported (default 5)
  --separate-processes  every library's every repetition in a child process of its own (the
                      matrix rebuilt there from its spec, the permutation computed once and
                      shared through a temporary file); reports each child's peak RSS, and a
                      child killed or failing as a failed entry
  --json FILE         also write the results as JSON
  --help              this text
(--child-task, --child-matrix, --child-ordering, --child-permutation, --child-threads and
--child-result are internal: how --separate-processes starts its children.)
)";

// ---------------------------------------------------------------------------------------------
// The command line

/// A matrix to measure: its spec (bench/bench_matrices.hpp) and the ordering cholsim computes.
struct MatrixSource {
  std::string spec;
  factor::OrderingMethod ordering = factor::OrderingMethod::automatic;
};

/// What a child process is asked to do (--child-* flags): `task` = "ordering" or a library.
struct ChildTask {
  std::string task;
  std::string matrix_spec;
  factor::OrderingMethod ordering = factor::OrderingMethod::automatic;
  std::string permutation_file;
  int threads = 1;
  std::string result_file;
};

struct Options {
  std::vector<MatrixSource> matrices;
  std::vector<int> threads;
  int repeat = 5;
  bool separate_processes = false;
  std::string json_file;
  std::optional<ChildTask> child;
};

/// The default shapes of --shapes, at full size (each ≥ 30K DOF; chosen to take roughly 0.3–5 s
/// to factor at 2 threads) and for --small (a smoke run).
struct DefaultShape {
  const char* spec;
  const char* small_spec;
};
constexpr DefaultShape kDefaultShapes[] = {
    {"5-point:700", "5-point:100"},
    {"27-point:40", "27-point:12"},
    {"7-point:50", "7-point:15"},
    {"shell:150x150x1", "shell:30x30x1"},
    {"shell:150x75x2", "shell:30x15x2"},
    {"arrowhead:700+1", "arrowhead:60+1"},
    {"arrowhead:700+20", "arrowhead:60+20"},
    {"model:bunny:100000", "model:bunny:5000"},
    {"model:knot:100000", "model:knot:5000"},
};

constexpr Index kDefaultBoxes[] = {20, 32, 46};
constexpr Index kLargeBox = 69;

enum class Library { cholsim, cholmod, mumps };
constexpr std::array<Library, 3> kLibraries = {Library::cholsim, Library::cholmod, Library::mumps};

/// Indexed by Library: the --child-task names, and the names the tables print.
constexpr const char* kLibraryTasks[] = {"cholsim", "cholmod", "mumps"};
constexpr const char* kLibraryNames[] = {"cholsim", "CHOLMOD", "MUMPS"};

const char* task_name(Library library) { return kLibraryTasks[static_cast<int>(library)]; }
const char* display_name(Library library) { return kLibraryNames[static_cast<int>(library)]; }

/// The usage text with the default shapes and the spec grammar filled in.
std::string usage_text() {
  const std::string indent(22, ' ');
  std::string shapes, line;
  for (const DefaultShape& shape : kDefaultShapes) {
    if (line.size() + std::strlen(shape.spec) > 72) {
      shapes += indent + line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += shape.spec;
  }
  shapes += indent + line;
  std::string text(kUsage);
  const auto fill = [&text](const std::string& slot, const std::string& content) {
    text.replace(text.find(slot), slot.size(), content);
  };
  fill("{default shapes}", shapes);
  fill("{spec grammar}", bench::kMatrixSpecHelp);
  return text;
}

/// The options of the command line; --help prints the usage and exits; anything else that is
/// wrong throws std::invalid_argument (exit 2 through parse_command_line).
Options parse_options(int argc, char** argv) {
  Options options;
  std::vector<Index> boxes;
  std::vector<std::string> shapes, mtx_files;
  bool default_shapes = false, small = false, large = false, shared_data = true;
  Index mtx_dofs_per_node = 1;
  std::optional<factor::OrderingMethod> forced_ordering;
  ChildTask child;
  bool is_child = false;
  for (bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& flag = arguments.flag();
    const auto value = [&arguments] { return arguments.value(); };
    if (bench::is_help_flag(flag)) {
      const std::string usage = usage_text();
      bench::exit_with_usage(usage.c_str());
    } else if (flag == "--box") {
      boxes.push_back(bench::parse_positive(flag, value()));
    } else if (flag == "--large") {
      large = true;
    } else if (flag == "--shapes") {
      default_shapes = true;
    } else if (flag == "--small") {
      small = true;
    } else if (flag == "--shape") {
      shapes.push_back(value());
    } else if (flag == "--mtx") {
      mtx_files.push_back(value());
    } else if (flag == "--mtx-dofs-per-node") {
      mtx_dofs_per_node = bench::parse_positive(flag, value());
    } else if (flag == "--no-shared-data") {
      shared_data = false;
    } else if (flag == "--ordering") {
      forced_ordering = factor::parse_ordering_method(value());
      if (*forced_ordering == factor::OrderingMethod::given) {
        throw std::invalid_argument("--ordering given: the program computes the permutation; choose auto, amd, "
                                    "metis or natural");
      }
    } else if (flag == "--threads") {
      for (const std::string& item : bench::parse_list<std::string>(value())) {
        options.threads.push_back(bench::parse_positive(flag, item));
      }
    } else if (flag == "--repeat") {
      options.repeat = bench::parse_positive(flag, value());
    } else if (flag == "--separate-processes") {
      options.separate_processes = true;
    } else if (flag == "--json") {
      options.json_file = value();
    } else if (flag == "--child-task") {
      child.task = value();
      is_child = true;
    } else if (flag == "--child-matrix") {
      child.matrix_spec = value();
    } else if (flag == "--child-ordering") {
      child.ordering = factor::parse_ordering_method(value());
    } else if (flag == "--child-permutation") {
      child.permutation_file = value();
    } else if (flag == "--child-threads") {
      child.threads = bench::parse_positive(flag, value());
    } else if (flag == "--child-result") {
      child.result_file = value();
    } else {
      throw bench::unknown_option(flag);
    }
  }
  if (small && !default_shapes) throw std::invalid_argument("--small goes with --shapes");
  if (large && !options.separate_processes) {
    std::fprintf(stderr, "%s: note: --large without --separate-processes holds two or three factorizations of "
                 "16-20 GB each at once\n", kProgram);
  }
  if (is_child) {
    const bool known = child.task == "ordering" || std::ranges::find(kLibraryTasks, child.task) != std::end(kLibraryTasks);
    if (!known) throw std::invalid_argument("--child-task expects ordering, cholsim, cholmod or mumps");
    if (child.matrix_spec.empty() || child.permutation_file.empty() || child.result_file.empty()) {
      throw std::invalid_argument("--child-task needs --child-matrix, --child-permutation and --child-result");
    }
    bench::parse_matrix_spec(child.matrix_spec);  // a bad spec is a usage error here too
    options.child = child;
    return options;
  }

  // Which matrices, each spec checked now so that a typo fails before anything is measured.
  const auto add = [&](const std::string& spec) {
    bench::parse_matrix_spec(spec);
    options.matrices.push_back({spec, forced_ordering.value_or(factor::OrderingMethod::automatic)});
  };
  if (boxes.empty() && shapes.empty() && !default_shapes) boxes.assign(std::begin(kDefaultBoxes), std::end(kDefaultBoxes));
  if (large) boxes.push_back(kLargeBox);
  for (const Index cells : boxes) add("box:" + std::to_string(cells));
  if (default_shapes) {
    for (const DefaultShape& shape : kDefaultShapes) add(small ? shape.small_spec : shape.spec);
  }
  for (const std::string& spec : shapes) add(spec);
  const std::filesystem::path shared = std::filesystem::path(CHOLSIM_SHARED_DATA_DIR) / "matrices";
  if (shared_data && std::filesystem::is_directory(shared)) {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(shared)) {
      if (entry.is_regular_file() && entry.path().extension() == ".mtx") found.push_back(entry.path().string());
    }
    std::sort(found.begin(), found.end());
    mtx_files.insert(mtx_files.end(), found.begin(), found.end());
  }
  for (const std::string& file : mtx_files) add("mtx:" + std::to_string(mtx_dofs_per_node) + ":" + file);
  if (options.threads.empty()) options.threads = {1, 2};
  return options;
}

// ---------------------------------------------------------------------------------------------
// What is measured, and its JSON form (the children's results, --json)

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// One library's numbers for one matrix and thread count: one repetition's, or (summarize) the
/// medians over the repetitions. NaN where the library does not report a quantity.
struct LibraryNumbers {
  bool ok = true;
  std::string failure;
  double analyze_seconds = kNaN;
  double factor_seconds = kNaN;
  double solve_seconds = kNaN;
  double residual = kNaN;
  double peak_bytes = kNaN;     ///< the library's own count (header comment)
  double max_rss_bytes = kNaN;  ///< the child's ru_maxrss (--separate-processes only)
  double nnz_l = kNaN;          ///< structural nnz(L): cholsim's exact count, CHOLMOD's lnz
  double stored_entries = kNaN;  ///< factor entries stored: cholsim's supernodal values, L->xsize, INFOG(29)
  double flops = kNaN;           ///< own count: cholsim supernodal, CHOLMOD fl, MUMPS RINFOG(3)
  double parallel_subtrees = kNaN;  ///< cholsim: subtrees run tree-parallel
  double top_supernodes = kNaN;     ///< cholsim: supernodes of the top phase
};

/// Calls visit(name, field) for every field: one list for both directions of the JSON form
/// (Numbers is LibraryNumbers, const or not).
template <typename Numbers, typename Visit>
  requires std::same_as<std::remove_const_t<Numbers>, LibraryNumbers>
void for_each_field(Numbers& numbers, Visit&& visit) {
  visit("ok", numbers.ok);
  visit("failure", numbers.failure);
  visit("analyze_seconds", numbers.analyze_seconds);
  visit("factor_seconds", numbers.factor_seconds);
  visit("solve_seconds", numbers.solve_seconds);
  visit("residual", numbers.residual);
  visit("peak_bytes", numbers.peak_bytes);
  visit("max_rss_bytes", numbers.max_rss_bytes);
  visit("nnz_l", numbers.nnz_l);
  visit("stored_entries", numbers.stored_entries);
  visit("flops", numbers.flops);
  visit("parallel_subtrees", numbers.parallel_subtrees);
  visit("top_supernodes", numbers.top_supernodes);
}

/// What cholsim's analysis of a matrix says, shared by the three libraries' runs.
struct MatrixInfo {
  std::string spec;
  std::string name;
  Index n = 0;
  std::int64_t nnz_a_lower = 0;
  std::string ordering;  ///< the method used ("metis", "amd", …), with "auto → " where chosen
  double ordering_seconds = kNaN;
  double exact_nnz_l = kNaN;  ///< Σⱼ cⱼ of the permuted pattern
  double exact_flops = kNaN;  ///< Σⱼ cⱼ², the GFLOP/s numerator of all three libraries
  std::uint64_t fingerprint = 0;  ///< of A's pattern and values (matrix_fingerprint)
};

template <typename Info, typename Visit>
  requires std::same_as<std::remove_const_t<Info>, MatrixInfo>
void for_each_field(Info& info, Visit&& visit) {
  visit("spec", info.spec);
  visit("name", info.name);
  visit("n", info.n);
  visit("nnz_a_lower", info.nnz_a_lower);
  visit("ordering", info.ordering);
  visit("ordering_seconds", info.ordering_seconds);
  visit("exact_nnz_l", info.exact_nnz_l);
  visit("exact_flops", info.exact_flops);
  visit("fingerprint", info.fingerprint);
}

/// The object's fields as JSON (NaN becomes null).
template <typename Object>
json to_json_object(const Object& object) {
  json out = json::object();
  for_each_field(object, [&out](const char* name, const auto& field) { out[name] = field; });
  return out;
}

/// The fields back from JSON: null (a NaN written) becomes NaN; a missing field throws.
template <typename Object>
Object from_json_object(const json& in) {
  Object object;
  for_each_field(object, [&in](const char* name, auto& field) {
    const json& value = in.at(name);
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(field)>, double>) {
      field = value.is_null() ? kNaN : value.get<double>();
    } else {
      value.get_to(field);
    }
  });
  return object;
}

void write_json_file(const std::string& path, const json& value) {
  std::ofstream out(path);
  out << value.dump(1) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path);
}

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("no result file " + path);
  return json::parse(in);
}

// ---------------------------------------------------------------------------------------------
// One repetition of one library

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// ‖b − A·x‖₂ / ‖b‖₂.
double relative_residual(const SymmetricCscMatrix& a, std::span<const double> x, std::span<const double> b) {
  std::vector<double> ax(b.size());
  linalg::symmetric_multiply(a, x, ax);
  double residual = 0.0;
  double norm_b = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    residual += (b[i] - ax[i]) * (b[i] - ax[i]);
    norm_b += b[i] * b[i];
  }
  return std::sqrt(residual / norm_b);
}

LibraryNumbers failed(LibraryNumbers numbers, std::string why) {
  numbers.ok = false;
  numbers.failure = std::move(why);
  return numbers;
}

LibraryNumbers run_cholsim_once(const SymmetricCscMatrix& a, std::span<const Index> permutation,
                                std::span<const double> b, int threads) {
  LibraryNumbers numbers;
  factor::AnalyzeOptions analyze_options;
  analyze_options.ordering = factor::OrderingMethod::given;
  analyze_options.given_permutation.assign(permutation.begin(), permutation.end());
  auto start = std::chrono::steady_clock::now();
  const auto symbolic = factor::analyze(a, analyze_options);
  numbers.analyze_seconds = seconds_since(start);
  numbers.nnz_l = static_cast<double>(symbolic->stats().nnz_l_exact);
  numbers.stored_entries = static_cast<double>(symbolic->factor_value_count());
  numbers.flops = symbolic->stats().flops;
  factor::Factor l(symbolic);
  start = std::chrono::steady_clock::now();
  const factor::FactorStatus& status = l.factorize(a, {.threads = threads});
  numbers.factor_seconds = seconds_since(start);
  if (!status.ok()) return failed(numbers, status.message);
  const factor::FactorStats& stats = l.stats();
  numbers.peak_bytes = static_cast<double>(stats.factor_bytes + std::max(stats.peak_update_bytes, stats.update_arena_bytes));
  numbers.parallel_subtrees = stats.parallel_subtrees;
  numbers.top_supernodes = stats.top_supernodes;
  linalg::set_blas_threads(threads);  // the solve's BLAS gets the same count as the others'
  std::vector<double> x(b.begin(), b.end());
  start = std::chrono::steady_clock::now();
  l.solve(std::span<double>(x));
  numbers.solve_seconds = seconds_since(start);
  numbers.residual = relative_residual(a, x, b);
  return numbers;
}

/// A cholmod_common per repetition, so that memory counters start from zero, set up for a
/// supernodal factorization with the permutation given.
struct GivenOrderingCholmod : cholsim::reference::CholmodCommon {
  GivenOrderingCholmod() {
    cholmod_common* common = get();
    common->nmethods = 1;
    common->method[0].ordering = CHOLMOD_GIVEN;
    common->postorder = 1;
    common->supernodal = CHOLMOD_SUPERNODAL;
  }
};

/// Frees a cholmod_factor on every exit path.
struct CholmodFactorOwner {
  cholmod_factor* factor = nullptr;
  cholmod_common* common = nullptr;
  ~CholmodFactorOwner() { cholmod_l_free_factor(&factor, common); }
};

LibraryNumbers run_cholmod_once(const SymmetricCscMatrix& a, std::span<const Index> permutation,
                                std::span<const double> b) {
  LibraryNumbers numbers;
  cholsim::reference::CholmodMatrix matrix(a);
  std::vector<SuiteSparse_long> cholmod_permutation(permutation.begin(), permutation.end());
  GivenOrderingCholmod common;
  cholmod_common* c = common.get();
  auto start = std::chrono::steady_clock::now();
  CholmodFactorOwner l{cholmod_l_analyze_p(&matrix.sparse, cholmod_permutation.data(), nullptr, 0, c), c};
  numbers.analyze_seconds = seconds_since(start);
  if (l.factor == nullptr) return failed(numbers, "cholmod_l_analyze_p failed, status " + std::to_string(c->status));
  numbers.nnz_l = c->lnz;
  numbers.flops = c->fl;
  c->memory_usage = c->memory_inuse;
  start = std::chrono::steady_clock::now();
  const int factored = cholmod_l_factorize(&matrix.sparse, l.factor, c);
  numbers.factor_seconds = seconds_since(start);
  numbers.peak_bytes = static_cast<double>(c->memory_usage);
  numbers.stored_entries = static_cast<double>(l.factor->xsize);
  if (!factored || c->status != CHOLMOD_OK || l.factor->minor < l.factor->n) {
    return failed(numbers, "cholmod_l_factorize: status " + std::to_string(c->status) + ", minor " +
                               std::to_string(l.factor->minor));
  }
  cholmod_dense rhs{};
  rhs.nrow = b.size();
  rhs.ncol = 1;
  rhs.nzmax = b.size();
  rhs.d = b.size();
  rhs.x = const_cast<double*>(b.data());  // cholmod_l_solve only reads B
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  start = std::chrono::steady_clock::now();
  cholmod_dense* x = cholmod_l_solve(CHOLMOD_A, l.factor, &rhs, c);
  numbers.solve_seconds = seconds_since(start);
  if (x == nullptr) return failed(numbers, "cholmod_l_solve failed, status " + std::to_string(c->status));
  numbers.residual = relative_residual(a, {static_cast<const double*>(x->x), b.size()}, b);
  cholmod_l_free_dense(&x, c);
  return numbers;
}

LibraryNumbers run_mumps_once(const SymmetricCscMatrix& a, std::span<const Index> permutation,
                              std::span<const double> b) {
  cholsim::reference::MumpsSolver mumps(a);
  mumps.analyze({.permutation = permutation});
  mumps.factorize();
  std::vector<double> x(b.begin(), b.end());
  mumps.solve(x);
  const cholsim::reference::MumpsStats& stats = mumps.stats();
  LibraryNumbers numbers;
  numbers.analyze_seconds = stats.analyze_seconds;
  numbers.factor_seconds = stats.factor_seconds;
  numbers.solve_seconds = stats.solve_seconds;
  numbers.stored_entries = stats.factor_entries;
  numbers.flops = stats.flops;
  numbers.peak_bytes = stats.peak_bytes;
  numbers.residual = relative_residual(a, x, b);
  return numbers;
}

/// One analyze/factor/solve of `library` with the given permutation and thread count; what it
/// throws (MUMPS's errors, bad_alloc) becomes a failed entry.
LibraryNumbers run_library_once(Library library, const SymmetricCscMatrix& a, std::span<const Index> permutation,
                                std::span<const double> b, int threads) {
  try {
    linalg::set_blas_threads(threads);
    switch (library) {
      case Library::cholsim: return run_cholsim_once(a, permutation, b, threads);
      case Library::cholmod: return run_cholmod_once(a, permutation, b);
      case Library::mumps: return run_mumps_once(a, permutation, b);
    }
    throw std::logic_error("unknown library");
  } catch (const std::exception& error) {
    return failed({}, error.what());
  }
}

// ---------------------------------------------------------------------------------------------
// The ordering, computed once per matrix

/// FNV-1a over A's size, pattern and value bits: two processes that built the same matrix
/// agree on it, and any difference in the generators would show.
std::uint64_t matrix_fingerprint(const SymmetricCscMatrix& a) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto mix = [&hash](std::uint64_t word) {
    hash ^= word;
    hash *= 1099511628211ull;
  };
  mix(static_cast<std::uint64_t>(a.size()));
  for (const auto p : a.lower.col_ptr) mix(static_cast<std::uint64_t>(p));
  for (const Index i : a.lower.row_idx) mix(static_cast<std::uint64_t>(i));
  for (const double value : a.lower.values) mix(std::bit_cast<std::uint64_t>(value));
  return hash;
}

struct OrderedMatrix {
  bench::BenchMatrix bench;
  std::vector<Index> permutation;  ///< perm[new] = old, what all three libraries are given
  MatrixInfo info;
};

/// Builds the matrix of `source` and orders it: cholsim's analysis with the source's method
/// (its final, postordered permutation is what the three libraries get).
OrderedMatrix order_matrix(const MatrixSource& source) {
  OrderedMatrix ordered{bench::build_bench_matrix(source.spec), {}, {}};
  const SymmetricCscMatrix& a = ordered.bench.matrix;
  MatrixInfo& info = ordered.info;
  info.spec = source.spec;
  info.name = ordered.bench.name;
  info.n = a.size();
  info.nnz_a_lower = a.nnz_lower();
  std::fprintf(stderr, "%s: n = %d, nnz(A lower) = %lld, ordering (%s)...\n", info.name.c_str(), info.n,
               static_cast<long long>(info.nnz_a_lower), std::string(factor::to_string(source.ordering)).c_str());
  factor::AnalyzeOptions options;
  options.ordering = source.ordering;
  options.dofs_per_node = ordered.bench.dofs_per_node;
  const auto symbolic = factor::analyze(a, options);
  ordered.permutation.assign(symbolic->permutation().begin(), symbolic->permutation().end());
  const std::string used(factor::to_string(symbolic->stats().ordering_used));
  info.ordering = source.ordering == factor::OrderingMethod::automatic ? "auto → " + used : used;
  info.ordering_seconds = symbolic->stats().ordering_seconds;
  info.exact_nnz_l = 0.0;
  info.exact_flops = 0.0;
  for (const Index count : factor::ordered_column_counts(a, ordered.permutation)) {
    info.exact_nnz_l += count;
    info.exact_flops += static_cast<double>(count) * count;
  }
  info.fingerprint = matrix_fingerprint(a);
  return ordered;
}

// ---------------------------------------------------------------------------------------------
// The repetitions, alternating the libraries (in this process or in children)

struct ThreadRun {
  int threads = 1;
  std::array<LibraryNumbers, kLibraries.size()> libraries;
  [[nodiscard]] const LibraryNumbers& of(Library library) const { return libraries[static_cast<int>(library)]; }
};

/// Everything measured for one matrix.
struct MatrixResult {
  MatrixInfo info;
  std::vector<ThreadRun> runs;
};

/// The repetitions' summary: median times over the successful ones, the largest memory peaks,
/// the last repetition's residual, counts and outcome (a library that failed is not run again).
LibraryNumbers summarize(const std::vector<LibraryNumbers>& repetitions) {
  if (repetitions.empty()) return {};
  LibraryNumbers summary = repetitions.back();
  std::vector<double> analyze, factorize, solve;
  for (const LibraryNumbers& repetition : repetitions) {
    if (repetition.ok) {
      analyze.push_back(repetition.analyze_seconds);
      factorize.push_back(repetition.factor_seconds);
      solve.push_back(repetition.solve_seconds);
    }
    // fmax skips NaN: a failed child may have no library peak but still an RSS.
    summary.peak_bytes = std::fmax(summary.peak_bytes, repetition.peak_bytes);
    summary.max_rss_bytes = std::fmax(summary.max_rss_bytes, repetition.max_rss_bytes);
  }
  summary.analyze_seconds = bench::median(analyze);
  summary.factor_seconds = bench::median(factorize);
  summary.solve_seconds = bench::median(solve);
  return summary;
}

/// Runs one repetition of a library at a thread count, wherever that happens.
using RunRepetition = std::function<LibraryNumbers(Library, int threads)>;

/// For each thread count, --repeat rounds of cholsim, CHOLMOD, MUMPS in turn, so that drift of
/// the machine's speed hits all three alike.
MatrixResult measure(const MatrixInfo& info, const Options& options, const RunRepetition& run_repetition) {
  MatrixResult result{info, {}};
  for (const int threads : options.threads) {
    std::array<std::vector<LibraryNumbers>, kLibraries.size()> repetitions;
    for (int r = 0; r < options.repeat; ++r) {
      std::fprintf(stderr, "  %s threads=%d repetition %d/%d\n", info.name.c_str(), threads, r + 1, options.repeat);
      for (const Library library : kLibraries) {
        std::vector<LibraryNumbers>& done = repetitions[static_cast<int>(library)];
        if (done.empty() || done.back().ok) done.push_back(run_repetition(library, threads));
      }
    }
    ThreadRun run;
    run.threads = threads;
    for (const Library library : kLibraries) {
      run.libraries[static_cast<int>(library)] = summarize(repetitions[static_cast<int>(library)]);
      if (!run.of(library).ok) {
        std::fprintf(stderr, "  FAILED: %s: %s\n", display_name(library), run.of(library).failure.c_str());
      }
    }
    result.runs.push_back(run);
  }
  return result;
}

/// A matrix that could not be built or ordered; the run goes on with the others, and ends with
/// exit_status(): 2 for bad input (a malformed Matrix Market file; a child reports one by
/// exiting with 2), else 1.
class MatrixUnavailable : public std::runtime_error {
 public:
  MatrixUnavailable(const std::string& why, int exit_status) : std::runtime_error(why), exit_status_(exit_status) {}
  [[nodiscard]] int exit_status() const { return exit_status_; }

 private:
  int exit_status_;
};

MatrixResult measure_in_this_process(const MatrixSource& source, const Options& options) {
  const OrderedMatrix ordered = [&source] {
    try {
      return order_matrix(source);
    } catch (const linalg::MatrixMarketError& error) {
      throw MatrixUnavailable(error.what(), bench::kUsageErrorStatus);
    } catch (const std::exception& error) {
      throw MatrixUnavailable(error.what(), 1);
    }
  }();
  const SymmetricCscMatrix& a = ordered.bench.matrix;
  const std::vector<double> b = linalg::ramp_right_hand_side(a);
  return measure(ordered.info, options, [&](Library library, int threads) {
    return run_library_once(library, a, ordered.permutation, b, threads);
  });
}

// ---------------------------------------------------------------------------------------------
// Child processes (--separate-processes)

/// A folder of its own under the system's temporary directory, removed with its files.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "bench_factor_vs_cholmod.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary folder " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// How a child ended.
struct ChildOutcome {
  bool ok = false;       ///< exited with status 0
  int exit_code = -1;    ///< when it exited (-1: killed by a signal, or never started)
  std::string failure;   ///< when not ok: the signal or the exit code
  double max_rss_bytes = kNaN;
};

/// Runs this program again (/proc/self/exe) with `arguments` and waits for it. Its stdout goes
/// to our stderr, so that only the parent writes the tables.
ChildOutcome run_child(const std::vector<std::string>& arguments) {
  std::vector<char*> argv{const_cast<char*>(kProgram)};
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t child = 0;
  const int spawn_error = ::posix_spawn(&child, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) return {false, -1, std::string("cannot start a child process: ") + std::strerror(spawn_error)};
  int status = 0;
  rusage usage{};
  while (::wait4(child, &status, 0, &usage) < 0) {
    if (errno != EINTR) return {false, -1, std::string("waiting for a child process failed: ") + std::strerror(errno)};
  }
  ChildOutcome outcome;
  outcome.max_rss_bytes = 1024.0 * static_cast<double>(usage.ru_maxrss);  // Linux counts KiB
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (outcome.exit_code == 0) {
    outcome.ok = true;
  } else if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    outcome.failure = "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")" +
                      (signal == SIGKILL ? ", likely the OOM killer (see dmesg)" : "");
  } else {
    outcome.failure = "exit code " + std::to_string(WEXITSTATUS(status)) + " (its message is on stderr above)";
  }
  return outcome;
}

/// The permutation as raw Index values: written by the ordering child, read by the others.
void write_permutation(const std::string& path, std::span<const Index> permutation) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(permutation.data()),
            static_cast<std::streamsize>(permutation.size_bytes()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<Index> read_permutation(const std::string& path, Index n) {
  std::vector<Index> permutation(static_cast<std::size_t>(n));
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(permutation.data()), static_cast<std::streamsize>(permutation.size() * sizeof(Index)));
  if (!in || in.peek() != std::char_traits<char>::eof()) {
    throw std::runtime_error(path + " does not hold a permutation of " + std::to_string(n) + " entries");
  }
  return permutation;
}

/// The child's side: --child-task ordering writes the permutation and the MatrixInfo; a
/// library task runs one repetition and writes its numbers with the matrix's fingerprint.
void run_child_task(const ChildTask& task) {
  if (task.task == "ordering") {
    const OrderedMatrix ordered = order_matrix({task.matrix_spec, task.ordering});
    write_permutation(task.permutation_file, ordered.permutation);
    write_json_file(task.result_file, to_json_object(ordered.info));
    return;
  }
  const auto library = static_cast<Library>(std::ranges::find(kLibraryTasks, task.task) - std::begin(kLibraryTasks));
  {
    // Untimed, on a tiny matrix: starts the thread pools (TBB's workers, OpenBLAS's) the way a
    // process that has factored before has them, so that a child's repetition does not also
    // time their start-up, which the parent's in-process repetitions pay only once.
    const bench::BenchMatrix tiny = bench::elasticity_box(3);
    std::vector<Index> natural(static_cast<std::size_t>(tiny.matrix.size()));
    std::iota(natural.begin(), natural.end(), 0);
    run_library_once(library, tiny.matrix, natural, linalg::ramp_right_hand_side(tiny.matrix), task.threads);
  }
  const bench::BenchMatrix bench_matrix = bench::build_bench_matrix(task.matrix_spec);
  const SymmetricCscMatrix& a = bench_matrix.matrix;
  const std::vector<Index> permutation = read_permutation(task.permutation_file, a.size());
  LibraryNumbers numbers = run_library_once(library, a, permutation, linalg::ramp_right_hand_side(a), task.threads);
  // The parent reports wait4's figure, the same number, which it has even for a child that dies;
  // this one is for whoever reads the result file.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  numbers.max_rss_bytes = 1024.0 * static_cast<double>(usage.ru_maxrss);
  write_json_file(task.result_file,
                  {{"numbers", to_json_object(numbers)}, {"fingerprint", matrix_fingerprint(a)}});
}

/// The parent's side: an ordering child, then a child per library and repetition.
MatrixResult measure_in_children(const MatrixSource& source, const Options& options, const TemporaryFolder& folder) {
  const std::string permutation_file = folder.file("permutation.bin");
  const std::string result_file = folder.file("result.json");
  std::filesystem::remove(result_file);
  const ChildOutcome ordering =
      run_child({"--child-task", "ordering", "--child-matrix", source.spec, "--child-ordering",
                 std::string(factor::to_string(source.ordering)), "--child-permutation", permutation_file,
                 "--child-result", result_file});
  if (!ordering.ok) {
    throw MatrixUnavailable("the child building and ordering it failed: " + ordering.failure,
                            ordering.exit_code == bench::kUsageErrorStatus ? bench::kUsageErrorStatus : 1);
  }
  const MatrixInfo info = from_json_object<MatrixInfo>(read_json_file(result_file));
  return measure(info, options, [&](Library library, int threads) {
    std::filesystem::remove(result_file);  // a child that dies must not leave us an older result
    const ChildOutcome outcome =
        run_child({"--child-task", task_name(library), "--child-matrix", source.spec,
                   "--child-permutation", permutation_file, "--child-threads", std::to_string(threads),
                   "--child-result", result_file});
    LibraryNumbers numbers;
    try {
      if (!outcome.ok) throw std::runtime_error(outcome.failure);
      const json result = read_json_file(result_file);
      numbers = from_json_object<LibraryNumbers>(result.at("numbers"));
      if (result.at("fingerprint").get<std::uint64_t>() != info.fingerprint) {
        numbers = failed(numbers, "the child built a different matrix than the ordering child (fingerprints differ)");
      }
    } catch (const std::exception& error) {
      numbers = failed(numbers, error.what());
    }
    numbers.max_rss_bytes = outcome.max_rss_bytes;
    return numbers;
  });
}

// ---------------------------------------------------------------------------------------------
// The dgemm ceiling

double dgemm_gflops(int threads) {
  constexpr Index size = 2000;
  linalg::ScopedBlasThreads scoped(threads);
  linalg::DenseMatrix a(size, size), b(size, size), c(size, size);
  for (Index j = 0; j < size; ++j) {
    for (Index i = 0; i < size; ++i) {
      a(i, j) = 1.0 / (1.0 + i + j);
      b(i, j) = 1.0 / (2.0 + i + 2 * j);
    }
  }
  using linalg::blas::Transpose;
  linalg::blas::gemm(Transpose::no, Transpose::no, 1.0, a.view(), b.view(), 0.0, c.view());  // warm-up
  std::vector<double> seconds;
  for (int r = 0; r < 3; ++r) {
    const auto start = std::chrono::steady_clock::now();
    linalg::blas::gemm(Transpose::no, Transpose::no, 1.0, a.view(), b.view(), 0.0, c.view());
    seconds.push_back(seconds_since(start));
  }
  return 2.0 * size * size * static_cast<double>(size) / bench::median(seconds) / 1e9;
}

// ---------------------------------------------------------------------------------------------
// The tables

std::string format(const char* pattern, double value) {
  if (!std::isfinite(value)) return "–";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

double factor_ratio(const ThreadRun& run, Library reference) {
  return run.of(Library::cholsim).factor_seconds / run.of(reference).factor_seconds;
}

std::string residual_cell(const LibraryNumbers& numbers) {
  return numbers.ok ? format("%.1e", numbers.residual) : "FAILED";
}

std::string megabytes(double bytes) { return format("%.0f", bytes / 1e6); }

/// Issue 23's factor target: at 2 threads on a matrix of ≥ 30K DOF, cholsim ≤ 0.8× both peers.
constexpr int kTargetThreads = 2;
constexpr Index kTargetMinimumSize = 30'000;
constexpr double kTargetRatio = 0.8;

std::string target_verdict(const MatrixResult& m, const ThreadRun& run) {
  if (run.threads != kTargetThreads || m.info.n < kTargetMinimumSize) return "–";
  for (const Library library : kLibraries) {
    if (!run.of(library).ok) return std::string(display_name(library)) + " failed";
  }
  const bool holds = factor_ratio(run, Library::cholmod) <= kTargetRatio && factor_ratio(run, Library::mumps) <= kTargetRatio;
  return holds ? "holds" : "**misses**";
}

using DgemmCeilings = std::map<int, double>;  ///< GFLOP/s by thread count

/// The library's factor rate (exact flops) as a percentage of dgemm's at the run's thread count.
double dgemm_percent(const MatrixResult& m, const ThreadRun& run, Library library, const DgemmCeilings& dgemm) {
  return 100.0 * m.info.exact_flops / run.of(library).factor_seconds / 1e9 / dgemm.at(run.threads);
}

void print_target_table(const std::vector<MatrixResult>& results, const DgemmCeilings& dgemm) {
  std::printf("\nIssue 23's targets: factor ≤ %.1f× CHOLMOD and ≤ %.1f× MUMPS at %d threads on every matrix of "
              "≥ %d DOF (verdict only there); factor GFLOP/s (exact flops Σcⱼ² for all) as %% of OpenBLAS dgemm at "
              "the same thread count (target ≥ 85 %% on the 1.03M-DOF box). Peak RSS: the whole child process, with "
              "--separate-processes only.\n\n",
              kTargetRatio, kTargetRatio, kTargetThreads, kTargetMinimumSize);
  std::printf("| matrix | n | ordering | thr | factor s cholsim | CHOLMOD | MUMPS | cholsim / CHOLMOD | cholsim / MUMPS "
              "| ≤ %.1f× both | %% dgemm cholsim | CHOLMOD | MUMPS | peak RSS MB cholsim | CHOLMOD | MUMPS |\n",
              kTargetRatio);
  std::printf("|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (const MatrixResult& m : results) {
    for (const ThreadRun& run : m.runs) {
      std::vector<std::string> cells{m.info.name, std::to_string(m.info.n), m.info.ordering, std::to_string(run.threads)};
      for (const Library library : kLibraries) cells.push_back(format("%.3f", run.of(library).factor_seconds));
      cells.push_back(format("%.2f", factor_ratio(run, Library::cholmod)));
      cells.push_back(format("%.2f", factor_ratio(run, Library::mumps)));
      cells.push_back(target_verdict(m, run));
      for (const Library library : kLibraries) cells.push_back(format("%.0f", dgemm_percent(m, run, library, dgemm)));
      for (const Library library : kLibraries) cells.push_back(megabytes(run.of(library).max_rss_bytes));
      for (const std::string& cell : cells) std::printf("| %s ", cell.c_str());
      std::printf("|\n");
    }
  }
}

void print_cholmod_table(const std::vector<MatrixResult>& results) {
  std::printf("\nMedian times (analyze = symbolic with the given permutation; ratio = cholsim / "
              "CHOLMOD, < 1 means cholsim is faster):\n\n");
  std::printf("| matrix | n | thr | analyze ms cholsim | CHOLMOD | ratio | factor s cholsim | CHOLMOD | "
              "ratio | solve ms cholsim | CHOLMOD | ratio | GFLOP/s cholsim | CHOLMOD | residual "
              "cholsim | CHOLMOD | peak MB cholsim | CHOLMOD |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const MatrixResult& m : results) {
    for (const ThreadRun& run : m.runs) {
      const LibraryNumbers& ours = run.of(Library::cholsim);
      const LibraryNumbers& theirs = run.of(Library::cholmod);
      std::printf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                  m.info.name.c_str(), m.info.n, run.threads, format("%.1f", 1e3 * ours.analyze_seconds).c_str(),
                  format("%.1f", 1e3 * theirs.analyze_seconds).c_str(),
                  format("%.2f", ours.analyze_seconds / theirs.analyze_seconds).c_str(),
                  format("%.3f", ours.factor_seconds).c_str(), format("%.3f", theirs.factor_seconds).c_str(),
                  format("%.2f", factor_ratio(run, Library::cholmod)).c_str(),
                  format("%.2f", 1e3 * ours.solve_seconds).c_str(), format("%.2f", 1e3 * theirs.solve_seconds).c_str(),
                  format("%.2f", ours.solve_seconds / theirs.solve_seconds).c_str(),
                  format("%.1f", m.info.exact_flops / ours.factor_seconds / 1e9).c_str(),
                  format("%.1f", m.info.exact_flops / theirs.factor_seconds / 1e9).c_str(), residual_cell(ours).c_str(),
                  residual_cell(theirs).c_str(), megabytes(ours.peak_bytes).c_str(),
                  megabytes(theirs.peak_bytes).c_str());
    }
  }
}

/// MUMPS beside cholsim (same permutation, same BLAS threads), with MUMPS's own counts: its
/// factor holds its amalgamation's zeros, and RINFOG(3) counts the flops of what it did.
void print_mumps_table(const std::vector<MatrixResult>& results) {
  std::printf("\nMUMPS (sequential build, SPD mode, the same permutation; its threads are OpenBLAS's; ratio = "
              "cholsim / MUMPS, < 1 means cholsim is faster):\n\n");
  std::printf("| matrix | n | thr | analyze ms MUMPS | factor s cholsim | MUMPS | ratio | solve ms cholsim | MUMPS | "
              "ratio | residual MUMPS | peak MB MUMPS | factor entries MUMPS | GFlop MUMPS |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const MatrixResult& m : results) {
    for (const ThreadRun& run : m.runs) {
      const LibraryNumbers& ours = run.of(Library::cholsim);
      const LibraryNumbers& mumps = run.of(Library::mumps);
      std::printf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m.info.name.c_str(),
                  m.info.n, run.threads, format("%.1f", 1e3 * mumps.analyze_seconds).c_str(),
                  format("%.3f", ours.factor_seconds).c_str(), format("%.3f", mumps.factor_seconds).c_str(),
                  format("%.2f", factor_ratio(run, Library::mumps)).c_str(),
                  format("%.2f", 1e3 * ours.solve_seconds).c_str(), format("%.2f", 1e3 * mumps.solve_seconds).c_str(),
                  format("%.2f", ours.solve_seconds / mumps.solve_seconds).c_str(), residual_cell(mumps).c_str(),
                  megabytes(mumps.peak_bytes).c_str(), format("%.0f", mumps.stored_entries).c_str(),
                  format("%.1f", 1e-9 * mumps.flops).c_str());
    }
  }
}

void print_sizes_table(const std::vector<MatrixResult>& results) {
  std::printf("\nSizes (same permutation; stored = supernodal values incl. amalgamation zeros; "
              "GFLOP/s above use the exact flops Σcⱼ² for all libraries):\n\n");
  std::printf("| matrix | spec | n | nnz(A) lower | ordering | ordering s | nnz(L) cholsim | CHOLMOD lnz | stored L "
              "cholsim | CHOLMOD xsize | flops exact Σcⱼ² | CHOLMOD fl | cholsim supernodal flops |\n");
  std::printf("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const MatrixResult& m : results) {
    // The counts do not depend on the thread count: the first run's.
    const LibraryNumbers& ours = m.runs.front().of(Library::cholsim);
    const LibraryNumbers& theirs = m.runs.front().of(Library::cholmod);
    std::printf("| %s | `%s` | %d | %lld | %s | %.2f | %s | %s | %s | %s | %s | %s | %s |\n", m.info.name.c_str(),
                m.info.spec.c_str(), m.info.n, static_cast<long long>(m.info.nnz_a_lower), m.info.ordering.c_str(),
                m.info.ordering_seconds, format("%.0f", ours.nnz_l).c_str(), format("%.0f", theirs.nnz_l).c_str(),
                format("%.0f", ours.stored_entries).c_str(), format("%.0f", theirs.stored_entries).c_str(),
                format("%.3g", m.info.exact_flops).c_str(), format("%.3g", theirs.flops).c_str(),
                format("%.3g", ours.flops).c_str());
  }
}

/// Every failed library run (and matrix), with its reason.
void print_failures(const std::vector<MatrixResult>& results, std::vector<std::string> failures) {
  for (const MatrixResult& m : results) {
    for (const ThreadRun& run : m.runs) {
      for (const Library library : kLibraries) {
        const LibraryNumbers& numbers = run.of(library);
        if (numbers.ok) continue;
        failures.push_back(m.info.name + ", " + std::to_string(run.threads) + " thread(s), " + display_name(library) +
                           ": " + numbers.failure +
                           (std::isfinite(numbers.max_rss_bytes) ? " (peak RSS " + megabytes(numbers.max_rss_bytes) + " MB)" : ""));
      }
    }
  }
  if (failures.empty()) return;
  std::printf("\nFailures:\n\n");
  for (const std::string& failure : failures) std::printf("- %s\n", failure.c_str());
}

void print_tables(const std::vector<MatrixResult>& results, const DgemmCeilings& dgemm,
                  const std::vector<std::string>& failures) {
  std::printf("\nOpenBLAS dgemm ceiling (2000×2000, median of 3):");
  for (const auto& [threads, gflops] : dgemm) std::printf(" %d thread(s) %.1f GFLOP/s;", threads, gflops);
  std::printf("\n");
  print_target_table(results, dgemm);
  print_cholmod_table(results);
  print_mumps_table(results);
  print_sizes_table(results);
  print_failures(results, failures);
}

void write_results_json(const std::string& path, const Options& options, const std::vector<MatrixResult>& results,
                        const DgemmCeilings& dgemm, const std::vector<std::string>& failures) {
  json out = {{"repeat", options.repeat}, {"separate_processes", options.separate_processes}, {"failures", failures}};
  for (const auto& [threads, gflops] : dgemm) out["dgemm_gflops"][std::to_string(threads)] = gflops;
  out["matrices"] = json::array();
  for (const MatrixResult& m : results) {
    json matrix = to_json_object(m.info);
    matrix.erase("fingerprint");
    matrix["runs"] = json::array();
    for (const ThreadRun& run : m.runs) {
      json entry = {{"threads", run.threads},
                    {"factor_ratio", factor_ratio(run, Library::cholmod)},
                    {"factor_ratio_mumps", factor_ratio(run, Library::mumps)},
                    {"target", target_verdict(m, run)}};
      for (const Library library : kLibraries) {
        json numbers = to_json_object(run.of(library));
        numbers["dgemm_percent"] = dgemm_percent(m, run, library, dgemm);
        entry[task_name(library)] = numbers;
      }
      matrix["runs"].push_back(entry);
    }
    out["matrices"].push_back(matrix);
  }
  write_json_file(path, out);
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Options options = bench::parse_command_line(kProgram, [&] { return parse_options(argc, argv); });
  try {
    if (options.child) {
      run_child_task(*options.child);
      return 0;
    }
    DgemmCeilings dgemm;
    for (const int threads : options.threads) {
      std::fprintf(stderr, "dgemm ceiling, %d thread(s)...\n", threads);
      dgemm[threads] = dgemm_gflops(threads);
    }
    std::vector<MatrixResult> results;
    std::vector<std::string> failures;
    int exit_status = 0;
    const std::optional<TemporaryFolder> folder =
        options.separate_processes ? std::make_optional<TemporaryFolder>() : std::nullopt;
    for (const MatrixSource& source : options.matrices) {
      try {
        results.push_back(folder ? measure_in_children(source, options, *folder)
                                 : measure_in_this_process(source, options));
      } catch (const MatrixUnavailable& error) {
        failures.push_back(source.spec + ": " + error.what());
        std::fprintf(stderr, "  FAILED: %s\n", failures.back().c_str());
        exit_status = std::max(exit_status, error.exit_status());
      }
    }
    print_tables(results, dgemm, failures);
    if (!options.json_file.empty()) write_results_json(options.json_file, options, results, dgemm, failures);
    return exit_status;
  } catch (const linalg::MatrixMarketError& error) {
    std::fprintf(stderr, "%s: %s\n", kProgram, error.what());
    return bench::kUsageErrorStatus;  // a malformed input file is bad input, like a bad flag
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", kProgram, error.what());
    return 1;
  }
}

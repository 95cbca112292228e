// Incremental refactorization (seed 000 §4.3, §5.2) on elasticity boxes and model meshes: time refactorize
// against a full factorize when the element blocks in a ball, or as many scattered at random,
// change; and CHOLMOD's cholmod_updown applying the same change as a low-rank modification.
//
// For every box (default 32³ and 46³ cells = 107,811 / 311,469 DOF) and thread count:
//   full:       Factor::factorize with retained update blocks (median of --repeat, after one
//               untimed warm-up run);
//   per case:   the elements of the case turn by a fixed rotation each (corotation's change
//               R·Kₑ·Rᵀ − Kₑ, linalg/element_changes.hpp); Factor::refactorize to the new A and
//               back to the old one, --repeat times each: the median of those 2·repeat times,
//               the recomputed flop fraction, the cost model's prediction, and the target
//               bound 1.2 × fraction × full + 5 ms;
//   CHOLMOD:    (threads = 1 only; cholmod_updown is sequential) for the 1% ball and the tiny
//               ball: L of the old A (same permutation, converted to simplicial LDLᵀ before
//               timing), then each element change split by its 12×12 eigendecomposition into
//               C₊C₊ᵀ − C₋C₋ᵀ and applied by cholmod_l_updown (update, then downdate, a few
//               elements at a time). When that runs past --cholmod-seconds, the time is
//               extrapolated linearly from the elements done and marked so.
// Output: Markdown tables on stdout, progress on stderr.
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_models.hpp"
#include "bench/bench_statistics.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "factor/update/update_scheduling.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/element_changes.hpp"
#include "linalg/generators.hpp"

extern "C" void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                       double* work, const int* lwork, int* info);

namespace {

using cholsim::linalg::Index;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: bench_refactorize [options]
  --box N              an N^3-cell elasticity box (repeatable; default 32 and 46 unless
                       --model is given)
  --model NAME:TETS    a surface model (bunny, knot) tetrahedralized by tetgen near TETS tets,
                       scaled to a 1 m longest side (repeatable)
  --threads LIST       thread counts (default 1,2)
  --repeat R           repetitions, medians reported (default 3)
  --fractions LIST     element fractions of the ball/scattered cases (default 0.01,0.05,0.2,0.5)
  --tiny N             elements of the tiny case (default 30)
  --cholmod-seconds S  time cap of one cholmod_updown case before extrapolating (default 60)
  --no-cholmod         skip the CHOLMOD comparison
)";

constexpr double rotation_angle = 0.5;

struct ModelRequest {
  std::string name;
  Index tets = 0;
};

struct Options {
  std::vector<int> boxes;
  std::vector<ModelRequest> models;
  std::vector<int> threads;
  int repeat = 3;
  std::vector<double> fractions;
  int tiny = 30;
  double cholmod_seconds = 60.0;
  bool cholmod = true;
};

using cholsim::bench::parse_list;

Options parse_options(int argc, char** argv) {
  Options options;
  for (cholsim::bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& flag = arguments.flag();
    const auto value = [&arguments] { return arguments.value(); };
    if (cholsim::bench::is_help_flag(flag)) {
      cholsim::bench::exit_with_usage(kUsage);
    } else if (flag == "--box") {
      options.boxes.push_back(cholsim::bench::parse_positive(flag, value()));
    } else if (flag == "--model") {
      const std::string text = value();
      const auto colon = text.find(':');
      ModelRequest request{text.substr(0, colon), colon == std::string::npos ? 100'000 : cholsim::bench::parse_positive(flag, text.substr(colon + 1))};
      if (cholsim::bench::find_surface_model(request.name) == nullptr) {
        throw std::invalid_argument("--model: unknown model '" + request.name + "' (bunny, knot)");
      }
      options.models.push_back(request);
    } else if (flag == "--threads") {
      options.threads = parse_list<int>(value());
    } else if (flag == "--repeat") {
      options.repeat = cholsim::bench::parse_positive(flag, value());
    } else if (flag == "--fractions") {
      options.fractions = parse_list<double>(value());
    } else if (flag == "--tiny") {
      options.tiny = cholsim::bench::parse_positive(flag, value());
    } else if (flag == "--cholmod-seconds") {
      options.cholmod_seconds = cholsim::bench::parse_number(flag, value());
    } else if (flag == "--no-cholmod") {
      options.cholmod = false;
    } else {
      throw std::invalid_argument("unknown option '" + flag + "' (see --help)");
    }
  }
  if (options.boxes.empty() && options.models.empty()) options.boxes = {32, 46};
  if (options.threads.empty()) options.threads = {1, 2};
  if (options.fractions.empty()) options.fractions = {0.01, 0.05, 0.2, 0.5};
  return options;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

using cholsim::bench::median;

void progress(const std::string& line) { std::fprintf(stderr, "bench_refactorize: %s\n", line.c_str()); }

// The problem: a mesh (elasticity box or model), its assembly pattern (so element blocks can
// change), A = M + Δt²K with the default material of linalg::ElasticityBoxOptions, the
// analysis, and where a ball of changed elements is centred (a quarter along the bounding
// box's diagonal, as `cholsim factor --refactor-shape ball` does on boxes).
struct Problem {
  std::string title;
  linalg::ElasticityBoxOptions options;
  linalg::TetMesh mesh;
  linalg::AssemblyPattern pattern;
  linalg::SymmetricCscMatrix a;
  std::shared_ptr<const factor::Symbolic> symbolic;
  linalg::Vec3 ball_centre{};

  Problem(std::string problem_title, linalg::TetMesh problem_mesh) : title(std::move(problem_title)), mesh(std::move(problem_mesh)) {
    pattern = linalg::AssemblyPattern(mesh.node_count(), 3, 4, mesh.tets);
    a = linalg::elasticity_matrix(mesh, options);
    factor::AnalyzeOptions analyze_options;
    analyze_options.dofs_per_node = 3;
    symbolic = factor::analyze(a, analyze_options);
    const auto box = cholsim::fem::bounding_box(mesh.positions);
    for (int axis = 0; axis < 3; ++axis) ball_centre[axis] = box[axis] + 0.25 * (box[axis + 3] - box[axis]);
  }
};

Problem make_box(int cells) {
  linalg::ElasticityBoxOptions box;
  return Problem("Elasticity box " + std::to_string(cells) + "^3 cells",
                 linalg::structured_tet_box(cells, cells, cells, box.cell_size));
}

// A model scaled to a 1 m longest side, like the 1 m default box.
Problem make_model(const ModelRequest& request) {
  cholsim::bench::ModelMesh model =
      cholsim::bench::tetrahedralize_model(*cholsim::bench::find_surface_model(request.name), request.tets);
  const auto box = cholsim::fem::bounding_box(model.mesh.positions);
  const double scale = 1.0 / std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
  for (double& x : model.mesh.positions) x *= scale;
  return Problem("Model: " + model.description, std::move(model.mesh));
}

struct Case {
  std::string shape;   ///< "ball" or "scattered"
  double fraction = 0.0;
  std::vector<Index> elements;
};

// The ball is centred a quarter along the box's diagonal, as in `cholsim factor
// --refactor-shape ball`.
std::vector<Case> make_cases(const Problem& box, const Options& options) {
  const Index tets = box.mesh.tet_count();
  std::vector<Case> cases;
  for (const char* shape : {"ball", "scattered"}) {
    std::vector<Index> counts = {std::min<Index>(options.tiny, tets)};
    for (double f : options.fractions) counts.push_back(std::max<Index>(1, static_cast<Index>(std::llround(f * tets))));
    for (Index count : counts) {
      Case c{shape, static_cast<double>(count) / static_cast<double>(tets), {}};
      c.elements = std::string(shape) == "ball" ? linalg::elements_in_ball(box.mesh, box.ball_centre, count)
                                                : linalg::random_subset(tets, count, 1);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

struct CaseResult {
  double refactor_seconds = 0.0;
  double flop_fraction = 0.0;
  double predicted_seconds = 0.0;
  double max_difference = 0.0;  ///< vs a fresh factorization of the changed matrix
};

CaseResult run_case(const Problem& box, factor::Factor& l, const Case& c, int threads, int repeat, bool check) {
  linalg::SymmetricCscMatrix changed = box.a;
  linalg::rotate_element_blocks(box.mesh, box.pattern, box.options, c.elements, rotation_angle, changed.lower.values);
  const auto entries = factor::ChangedEntries::elements(linalg::element_dof_lists(box.pattern, c.elements), 12);
  CaseResult result;
  result.predicted_seconds = factor::update_cost(factor::supernode_parents(*box.symbolic), l.cost_model().costs(),
                                                 l.supernodes_to_recompute(entries));
  const factor::FactorOptions factor_options{.threads = threads};
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    for (const linalg::SymmetricCscMatrix* target : {static_cast<const linalg::SymmetricCscMatrix*>(&changed), &box.a}) {
      if (!l.refactorize(entries, *target, factor_options).ok()) throw std::runtime_error(l.status().message);
      times.push_back(l.stats().seconds);
      result.flop_fraction = l.stats().recomputed_flops / box.symbolic->stats().flops;
      if (check && target == &changed && r == 0) {
        factor::Factor fresh(box.symbolic);
        if (!fresh.factorize(changed, factor_options).ok()) throw std::runtime_error(fresh.status().message);
        result.max_difference = cholsim::bench::max_relative_difference(l.values(), fresh.values());
      }
    }
  }
  result.refactor_seconds = median(times);
  return result;
}

// ---- CHOLMOD's update/downdate of the same change -------------------------------------

struct CholmodUpdown {
  double seconds = 0.0;       ///< measured, or extrapolated when `extrapolated`
  bool extrapolated = false;
  Index elements_done = 0;
  Index rank = 0;             ///< columns of C₊ and C₋ together for the elements done
  double residual = -1.0;     ///< ‖b − A_new·x‖/‖b‖ with CHOLMOD's updated factor (full runs)
};

// Columns √|λ|·v of the positive (sign > 0) or negative eigenpairs of one element change,
// rows in CHOLMOD's permuted numbering.
struct LowRankColumns {
  std::vector<std::vector<std::pair<Index, double>>> positive;
  std::vector<std::vector<std::pair<Index, double>>> negative;
};

void split_element_change(const Problem& box, Index element, std::span<const Index> inverse, LowRankColumns& out) {
  auto change = linalg::rotation_change(linalg::elasticity_element_matrix(box.mesh.tet_points(element), box.options),
                                        linalg::element_rotation(element, rotation_angle));
  const int n = 12;
  std::vector<double> eigenvalues(12);
  std::vector<double> work(256);
  const int lwork = 256;
  int info = 0;
  dsyev_("V", "L", &n, change.data(), &n, eigenvalues.data(), work.data(), &lwork, &info);
  if (info != 0) throw std::runtime_error("dsyev failed");
  const double largest = std::max(std::abs(eigenvalues.front()), std::abs(eigenvalues.back()));
  std::vector<Index> rows;
  for (Index node : box.pattern.element_nodes(element)) {
    for (Index k = 0; k < 3; ++k) rows.push_back(inverse[3 * node + k]);
  }
  for (int j = 0; j < n; ++j) {
    if (std::abs(eigenvalues[j]) <= 1e-12 * largest) continue;
    std::vector<std::pair<Index, double>> column;
    const double scale = std::sqrt(std::abs(eigenvalues[j]));
    for (int i = 0; i < n; ++i) column.emplace_back(rows[i], scale * change[static_cast<std::size_t>(i + n * j)]);
    std::sort(column.begin(), column.end());
    (eigenvalues[j] > 0 ? out.positive : out.negative).push_back(std::move(column));
  }
}

cholmod_sparse* to_cholmod(Index n, const std::vector<std::vector<std::pair<Index, double>>>& columns, cholmod_common* c) {
  std::size_t nnz = 0;
  for (const auto& column : columns) nnz += column.size();
  cholmod_sparse* s = cholmod_l_allocate_sparse(static_cast<std::size_t>(n), columns.size(), nnz, 1, 1, 0, CHOLMOD_REAL, c);
  auto* p = static_cast<SuiteSparse_long*>(s->p);
  auto* i = static_cast<SuiteSparse_long*>(s->i);
  auto* x = static_cast<double*>(s->x);
  std::size_t k = 0;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    p[j] = static_cast<SuiteSparse_long>(k);
    for (const auto& [row, value] : columns[j]) {
      i[k] = row;
      x[k++] = value;
    }
  }
  p[columns.size()] = static_cast<SuiteSparse_long>(k);
  return s;
}

CholmodUpdown run_cholmod_updown(const Problem& box, const Case& c, double cap_seconds) {
  cholmod_common common;
  cholmod_l_start(&common);
  const linalg::SymmetricCscMatrix& a = box.a;
  std::vector<SuiteSparse_long> col_ptr(a.lower.col_ptr.begin(), a.lower.col_ptr.end());
  std::vector<SuiteSparse_long> row_idx(a.lower.row_idx.begin(), a.lower.row_idx.end());
  cholmod_sparse matrix{};
  matrix.nrow = matrix.ncol = static_cast<std::size_t>(a.size());
  matrix.nzmax = row_idx.size();
  matrix.p = col_ptr.data();
  matrix.i = row_idx.data();
  matrix.x = const_cast<double*>(a.lower.values.data());  // CHOLMOD only reads A
  matrix.stype = -1;
  matrix.itype = CHOLMOD_LONG;
  matrix.xtype = CHOLMOD_REAL;
  matrix.dtype = CHOLMOD_DOUBLE;
  matrix.sorted = matrix.packed = 1;
  std::vector<SuiteSparse_long> permutation(box.symbolic->permutation().begin(), box.symbolic->permutation().end());
  cholmod_factor* l = cholmod_l_analyze_p(&matrix, permutation.data(), nullptr, 0, &common);
  cholmod_l_factorize(&matrix, l, &common);
  // cholmod_updown works on a simplicial LDLᵀ factor: convert outside the timing.
  cholmod_l_change_factor(CHOLMOD_REAL, 0, 0, 1, 1, l, &common);

  CholmodUpdown result;
  const auto inverse = box.symbolic->inverse_permutation();
  constexpr std::size_t elements_per_call = 8;
  const auto start = Clock::now();
  for (std::size_t first = 0; first < c.elements.size(); first += elements_per_call) {
    LowRankColumns columns;
    const std::size_t last = std::min(c.elements.size(), first + elements_per_call);
    for (std::size_t e = first; e < last; ++e) split_element_change(box, c.elements[e], inverse, columns);
    cholmod_sparse* plus = to_cholmod(a.size(), columns.positive, &common);
    cholmod_sparse* minus = to_cholmod(a.size(), columns.negative, &common);
    const auto call_start = Clock::now();
    cholmod_l_updown(1, plus, l, &common);   // update first: every partial state stays SPD
    cholmod_l_updown(0, minus, l, &common);
    result.seconds += seconds_since(call_start);
    result.rank += static_cast<Index>(columns.positive.size() + columns.negative.size());
    result.elements_done = static_cast<Index>(last);
    cholmod_l_free_sparse(&plus, &common);
    cholmod_l_free_sparse(&minus, &common);
    if (seconds_since(start) > cap_seconds && last < c.elements.size()) {
      result.extrapolated = true;
      result.seconds *= static_cast<double>(c.elements.size()) / static_cast<double>(last);
      result.rank = static_cast<Index>(std::llround(result.rank * static_cast<double>(c.elements.size()) / static_cast<double>(last)));
      break;
    }
  }
  if (!result.extrapolated) {  // check: CHOLMOD's factor now solves the changed system
    linalg::SymmetricCscMatrix changed = a;
    linalg::rotate_element_blocks(box.mesh, box.pattern, box.options, c.elements, rotation_angle, changed.lower.values);
    std::vector<double> ones(static_cast<std::size_t>(a.size()), 1.0);
    std::vector<double> b(ones.size());
    linalg::symmetric_multiply(changed, ones, b);
    cholmod_dense rhs{};
    rhs.nrow = rhs.d = rhs.nzmax = b.size();
    rhs.ncol = 1;
    rhs.x = b.data();
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    cholmod_dense* x = cholmod_l_solve(CHOLMOD_A, l, &rhs, &common);
    std::vector<double> ax(b.size());
    linalg::symmetric_multiply(changed, std::span<const double>(static_cast<double*>(x->x), b.size()), ax);
    double r = 0.0;
    double nb = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      r += (b[i] - ax[i]) * (b[i] - ax[i]);
      nb += b[i] * b[i];
    }
    result.residual = std::sqrt(r / nb);
    cholmod_l_free_dense(&x, &common);
  }
  cholmod_l_free_factor(&l, &common);
  cholmod_l_finish(&common);
  return result;
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

void run_problem(const Problem& box, const Options& options) {
  const auto& analysis = box.symbolic->stats();
  const std::vector<Case> cases = make_cases(box, options);
  std::printf("\n### %s: %d DOF, %d tets, nnz(L) %lld, %.3g flops\n\n", box.title.c_str(), box.a.size(), box.mesh.tet_count(), static_cast<long long>(analysis.nnz_l), analysis.flops);
  std::vector<double> our_time_one_thread(cases.size(), 0.0);
  for (int threads : options.threads) {
    factor::Factor l(box.symbolic);
    std::vector<double> full;
    // One untimed run first: the timed ones reuse the factor's and the retained blocks'
    // memory, as refactorize does (a cold run is dominated by first-touch page faults).
    for (int r = -1; r < options.repeat; ++r) {
      progress("full factorization, " + std::to_string(threads) + " threads...");
      if (!l.factorize(box.a, {.threads = threads, .retain_update_blocks = true}).ok()) {
        throw std::runtime_error(l.status().message);
      }
      if (r >= 0) full.push_back(l.stats().seconds);
    }
    const double full_seconds = median(full);
    const auto& stats = l.stats();
    std::printf("**%d thread(s)**: full factorization %.3f s; factor %.1f MiB, retained update blocks %.1f MiB "
                "(%.2f× the factor)\n\n",
                threads, full_seconds, stats.factor_bytes / 1048576.0, stats.retained_update_bytes / 1048576.0,
                static_cast<double>(stats.retained_update_bytes) / static_cast<double>(stats.factor_bytes));
    std::printf("| shape | elements | fraction | refactor s | refactor / full | flop fraction | target s | "
                "within target | predicted s | max rel diff |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      progress(c.shape + " " + std::to_string(c.elements.size()) + " elements, " + std::to_string(threads) + " threads...");
      const CaseResult r = run_case(box, l, c, threads, options.repeat, threads == options.threads.front());
      const double target = 1.2 * r.flop_fraction * full_seconds + 0.005;
      if (threads == 1) our_time_one_thread[i] = r.refactor_seconds;
      std::printf("| %s | %zu | %.4f | %.3f | %.3f | %.3f | %.3f | %s | %.3f | %s |\n", c.shape.c_str(), c.elements.size(),
                  c.fraction, r.refactor_seconds, r.refactor_seconds / full_seconds, r.flop_fraction, target,
                  r.refactor_seconds <= target ? "yes" : "no", r.predicted_seconds,
                  threads == options.threads.front() ? format("%.1e", r.max_difference).c_str() : "—");
    }
    std::printf("\n");
  }
  if (!options.cholmod) return;
  std::printf("CHOLMOD cholmod_updown (sequential) vs refactorize at 1 thread:\n\n"
              "| case | elements | rank | cholmod_updown s | refactorize s | updown / refactorize | CHOLMOD residual |\n"
              "|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const bool tiny = static_cast<int>(c.elements.size()) == options.tiny;
    const bool one_percent = !tiny && std::abs(c.fraction - 0.01) < 0.001;
    if (c.shape != "ball" || !(tiny || one_percent)) continue;
    progress("cholmod_updown, ball of " + std::to_string(c.elements.size()) + " elements...");
    const CholmodUpdown u = run_cholmod_updown(box, c, options.cholmod_seconds);
    const double ours = our_time_one_thread[i];
    std::printf("| ball %s | %zu | %d | %.2f%s | %s | %s | %s |\n", tiny ? "tiny" : "1%", c.elements.size(), u.rank,
                u.seconds, u.extrapolated ? (" (extrapolated from " + std::to_string(u.elements_done) + " elements)").c_str() : "",
                ours > 0 ? format("%.3f", ours).c_str() : "—", ours > 0 ? format("%.1f×", u.seconds / ours).c_str() : "—",
                u.residual >= 0 ? format("%.1e", u.residual).c_str() : "—");
  }
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Options options = cholsim::bench::parse_command_line("bench_refactorize", [&] { return parse_options(argc, argv); });
  try {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows appear as they are measured
    std::printf("## bench_refactorize\n");
    for (int cells : options.boxes) {
      progress("building the " + std::to_string(cells) + "^3 box...");
      run_problem(make_box(cells), options);
    }
    for (const ModelRequest& model : options.models) {
      progress("meshing " + model.name + " near " + std::to_string(model.tets) + " tets...");
      run_problem(make_model(model), options);
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_refactorize: %s\n", error.what());
    return 1;
  }
}

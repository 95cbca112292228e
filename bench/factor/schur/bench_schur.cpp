// Wang et al.'s scenario (seed 004 §4.2–4.4, §5): partial factorization onto a small
// collision-prone surface patch, then inner iterations that only touch the dense Schur system.
//
// Matrix: the per-coordinate (scalar, one unknown per node) matrix M + Δt²·2μ·Σ VₑGₑᵀGₑ of a
// structured tet box (linalg::scalar_elasticity_matrix), ~100K nodes by default. Schur set:
// one connected patch of the box surface, grown breadth-first over surface nodes from the
// centre of the face z = 0, of each requested fraction of the nodes.
//
// For each fraction, with --threads threads (tree tasks + BLAS) and --repeat repetitions
// (medians reported):
//  (i)   partial factorization (constrained METIS ordering) vs a full factorization
//        (unconstrained METIS ordering): times, exact nnz(L) of both, stored entries;
//  (ii)  one inner iteration: ΔS = W·C·Wᵀ with one collision proxy per colliding node
//        (--colliding of the Schur nodes; barycentric weights over three Schur nodes), added
//        to S, dense potrf of S + ΔS, potrs of one right-hand side;
//  (iii) the forward and backward phases (sparse triangular solves with L11, L21);
//  (iv)  the alternative: a full sparse factorization plus solve.
// The residual ‖b − (A + [0 0; 0 ΔS])·x‖₂/‖b‖₂ of the three-phase solve checks the result.
//  (v)   the peer: MUMPS's Schur factorization (ICNTL(19), bench/mumps_reference.hpp) on the
//        same matrix and Schur set, in our constrained order (ICNTL(7) = 1) and in its own;
//        JOB = 2 timed in runs alternating with our partial factorization (medians), its
//        factor entries (INFOG(29)) and flops (RINFOG(3)), and S compared with ours.
// GPU: (ii) is also run with SchurSystemOptions::device = gpu; where this build has no cuSOLVER
// path or no device is present, its fallback note is printed instead.
//  (vi)  with --woodbury M,...: only the two routes of an inner iteration with p springs on a
//        dense m×m S (random, diagonally dominant; springs of 4 or 8 weights on random rows, as
//        a proxy's tet or a bilateral pair): seed 004's dense refactorization of S + W·C·Wᵀ
//        against the Woodbury route (factor/schur/schur_low_rank), each refactor + a 3-RHS
//        solve, alternating, medians; the crossover behind SchurLowRankSolver::prefer_low_rank.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/mumps_reference.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/schur/schur_complement.hpp"
#include "factor/schur/schur_low_rank.hpp"
#include "factor/schur/schur_ordering.hpp"
#include "factor/schur/schur_system.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/generators.hpp"

namespace {

using cholsim::linalg::Index;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: bench_schur [options]

  --cells N          cells per box side; (N+1)^3 nodes (default 46: 103,823 nodes)
  --fractions LIST   Schur set sizes as fractions of the nodes (default 0.01,0.015,0.02,0.03)
  --colliding F      fraction of the Schur nodes with a collision proxy in ΔS (default 0.2)
  --threads T        threads for factorizations and dense kernels (default 2)
  --repeat R         repetitions, medians reported (default 3)
  --woodbury LIST    only table (vi): Schur sizes m, e.g. 1000,4000 — dense refactorization of
                     S + W C W^T against the Woodbury route, p/m from --spring-ratios
  --spring-ratios L  springs per Schur row for --woodbury (default 0.05,0.1,0.25,0.4,0.5,0.6,0.8)
  --help, -h         this text
)";

struct Options {
  Index cells = 46;
  std::vector<double> fractions = {0.01, 0.015, 0.02, 0.03};
  double colliding = 0.2;
  int threads = 2;
  int repeat = 3;
  std::vector<Index> woodbury_sizes;  // (vi) only, when not empty
  std::vector<double> spring_ratios = {0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.8};
};

Options parse_options(int argc, char** argv) {
  namespace bench = cholsim::bench;
  Options options;
  for (bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& flag = arguments.flag();
    if (bench::is_help_flag(flag)) {
      bench::exit_with_usage(kUsage);
    } else if (flag == "--cells") {
      options.cells = bench::parse_positive(flag, arguments.value());
    } else if (flag == "--fractions") {
      options.fractions = bench::parse_list<double>(arguments.value());
    } else if (flag == "--colliding") {
      options.colliding = bench::parse_number(flag, arguments.value());
    } else if (flag == "--threads") {
      options.threads = bench::parse_positive(flag, arguments.value());
    } else if (flag == "--repeat") {
      options.repeat = bench::parse_positive(flag, arguments.value());
    } else if (flag == "--woodbury") {
      options.woodbury_sizes = bench::parse_list<Index>(arguments.value());
    } else if (flag == "--spring-ratios") {
      options.spring_ratios = bench::parse_list<double>(arguments.value());
    } else {
      throw bench::unknown_option(flag);
    }
  }
  for (const double fraction : options.fractions) {
    if (!(fraction > 0.0 && fraction < 1.0)) throw std::invalid_argument("--fractions must lie in (0, 1)");
  }
  for (const Index m : options.woodbury_sizes) {
    if (m < 8 || m > 20000) throw std::invalid_argument("--woodbury sizes must lie in [8, 20000]");
  }
  for (const double ratio : options.spring_ratios) {
    if (!(ratio > 0.0 && ratio <= 4.0)) throw std::invalid_argument("--spring-ratios must lie in (0, 4]");
  }
  if (!(options.colliding >= 0.0 && options.colliding <= 1.0)) throw std::invalid_argument("--colliding must lie in [0, 1]");
  return options;
}

using cholsim::bench::median;

// Median seconds of `repeat` runs of `body`.
double timed(int repeat, const std::function<void()>& body) {
  std::vector<double> seconds;
  for (int r = 0; r < repeat; ++r) {
    const auto start = Clock::now();
    body();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(seconds);
}

void require_ok(const factor::FactorStatus& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "bench_schur: %s failed: %s\n", what, status.message.c_str());
    std::exit(1);
  }
}

// Medians of `repeat` runs of each body, the bodies taking turns within every round, so that
// a slow spell of a busy machine hits all of them alike.
std::vector<double> alternating_medians(int repeat, const std::vector<std::function<void()>>& bodies) {
  std::vector<std::vector<double>> seconds(bodies.size());
  for (int r = 0; r < repeat; ++r) {
    for (std::size_t k = 0; k < bodies.size(); ++k) {
      const auto start = Clock::now();
      bodies[k]();
      seconds[k].push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  std::vector<double> medians;
  for (const std::vector<double>& runs : seconds) medians.push_back(median(runs));
  return medians;
}

// Surface nodes of the structured box (any coordinate on its boundary).
std::vector<char> surface_nodes(Index cells) {
  const Index side = cells + 1;
  std::vector<char> surface(static_cast<std::size_t>(side) * side * side, 0);
  auto boundary = [cells](Index c) { return c == 0 || c == cells; };
  for (Index k = 0; k < side; ++k) {
    for (Index j = 0; j < side; ++j) {
      for (Index i = 0; i < side; ++i) {
        surface[i + side * (j + side * k)] = boundary(i) || boundary(j) || boundary(k);
      }
    }
  }
  return surface;
}

// ΔS = W·C·Wᵀ: one proxy per colliding Schur node, embedded with weights 0.5/0.3/0.2 over
// the node and the next two of the patch (breadth-first neighbours), stiffness of the order
// of the matrix diagonal (seed 004 eq. 19's penalty springs).
struct CollisionTerm {
  linalg::CscMatrix w;
  std::vector<double> stiffness;
};

CollisionTerm collision_term(Index schur_size, double colliding, double stiffness) {
  CollisionTerm term;
  const Index proxies = std::max<Index>(1, static_cast<Index>(colliding * static_cast<double>(schur_size)));
  const Index stride = std::max<Index>(1, schur_size / proxies);
  linalg::Triplets t;
  for (Index q = 0; q < proxies; ++q) {
    const Index node = (q * stride) % schur_size;
    const double weights[3] = {0.5, 0.3, 0.2};
    for (Index d = 0; d < std::min<Index>(3, schur_size); ++d) t.add((node + d) % schur_size, q, weights[d]);
    term.stiffness.push_back(stiffness);
  }
  term.w = linalg::csc_from_triplets(schur_size, proxies, t);
  return term;
}

double norm2(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x * x;
  return std::sqrt(sum);
}

// ‖b − (A + [0 0; 0 W·C·Wᵀ])·x‖₂ / ‖b‖₂.
double residual(const linalg::SymmetricCscMatrix& a, std::span<const Index> schur, const CollisionTerm& term,
                const std::vector<double>& x, const std::vector<double>& b) {
  std::vector<double> ax(x.size());
  linalg::symmetric_multiply(a, x, ax);
  const linalg::CscMatrix& w = term.w;
  for (Index q = 0; q < w.cols; ++q) {
    double projected = 0.0;
    for (linalg::Offset p = w.col_ptr[q]; p < w.col_ptr[q + 1]; ++p) projected += w.values[p] * x[schur[w.row_idx[p]]];
    for (linalg::Offset p = w.col_ptr[q]; p < w.col_ptr[q + 1]; ++p) {
      ax[schur[w.row_idx[p]]] += term.stiffness[q] * w.values[p] * projected;
    }
  }
  for (std::size_t i = 0; i < ax.size(); ++i) ax[i] = b[i] - ax[i];
  return norm2(ax) / norm2(b);
}

// Median seconds of one inner iteration's parts on `system`, --repeat times (at least 5):
// clear + ΔS update, dense refactorization, Schur solve of `reduced` (b̃₂) into `x2`.
struct InnerTimes {
  double update = 0.0, refactor = 0.0, solve = 0.0, total = 0.0;
};

InnerTimes time_inner_iteration(factor::SchurSystem& system, const CollisionTerm& term,
                                const std::vector<double>& reduced, linalg::DenseView x2, int repeat) {
  std::vector<double> update_s, refactor_s, solve_s, total_s;
  for (int r = 0; r < std::max(repeat, 5); ++r) {
    std::copy(reduced.begin(), reduced.end(), x2.data);
    const auto t0 = Clock::now();
    system.clear_updates();
    system.add_low_rank(term.w, term.stiffness);
    const auto t1 = Clock::now();
    require_ok(system.refactor(), "dense refactor");  // waits for the device: reads potrf's info
    const auto t2 = Clock::now();
    system.solve(x2);
    const auto t3 = Clock::now();
    update_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    refactor_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    solve_s.push_back(std::chrono::duration<double>(t3 - t2).count());
    total_s.push_back(std::chrono::duration<double>(t3 - t0).count());
  }
  return {median(update_s), median(refactor_s), median(solve_s), median(total_s)};
}

struct Row {
  double fraction = 0.0;
  Index schur_size = 0;
  std::int64_t nnz_full = 0, nnz_partial = 0;        // exact nnz(L), both orderings
  std::int64_t stored_full = 0, stored_partial = 0;  // supernodal stored entries (S included)
  double fill_increase = 0.0;
  double flops_full = 0.0, flops_partial = 0.0;      // factorization flops (partial: no potrf of S)
  double full_factor = 0.0, partial_factor = 0.0;
  InnerTimes cpu, gpu;  // gpu.total = 0: not measured
  double forward = 0.0, backward = 0.0;
  double full_refactor_solve = 0.0;
  double residual = 0.0;
  // (v) MUMPS's Schur factorization, in our order and in its own.
  cholsim::reference::MumpsStats mumps_ours, mumps_own;
  double schur_difference = 0.0;  // max |S − S_MUMPS| / max |S|, our order
};

// max |x − y| / max |y| over the entries of two m×m matrices.
double relative_max_difference(const linalg::DenseMatrix& x, const linalg::DenseMatrix& y) {
  double difference = 0.0, largest = 0.0;
  for (std::size_t i = 0; i < y.storage().size(); ++i) {
    difference = std::max(difference, std::abs(x.storage()[i] - y.storage()[i]));
    largest = std::max(largest, std::abs(y.storage()[i]));
  }
  return difference / largest;
}

// (v): one MUMPS instance per ordering, analysed once; each JOB = 2 takes its turn after our
// partial factorization. Fills the MUMPS fields of `row` and our partial_factor.
void measure_against_mumps(const linalg::SymmetricCscMatrix& a, factor::SchurComplementFactor& partial,
                           std::span<const Index> schur, const Options& options, Row& row) {
  namespace reference = cholsim::reference;
  reference::MumpsSolver ours_order(a), own_order(a);
  ours_order.analyze({.permutation = partial.symbolic().permutation(), .schur_set = schur});
  own_order.analyze({.schur_set = schur});
  const auto mumps_body = [&options](reference::MumpsSolver& mumps) {
    return [&options, &mumps] {
      linalg::set_blas_threads(options.threads);
      mumps.factorize();
    };
  };
  const factor::FactorOptions factor_options{.threads = options.threads};
  const std::vector<double> medians = alternating_medians(
      options.repeat, {[&] { require_ok(partial.factorize(a, factor_options), "partial"); }, mumps_body(ours_order),
                       mumps_body(own_order)});
  row.partial_factor = medians[0];
  row.mumps_ours = ours_order.stats();
  row.mumps_ours.factor_seconds = medians[1];
  row.mumps_own = own_order.stats();
  row.mumps_own.factor_seconds = medians[2];
  row.schur_difference = relative_max_difference(ours_order.schur_complement(), partial.schur_complement_symmetric());
}

// (vi) p springs of 4 or 8 weights on random rows, stiffness of the order of S's diagonal.
CollisionTerm random_springs(Index m, Index p, std::mt19937& random) {
  std::uniform_real_distribution<double> uniform(0.05, 1.0);
  CollisionTerm term;
  linalg::Triplets t;
  for (Index q = 0; q < p; ++q) {
    const int entries = q % 2 == 0 ? 4 : 8;
    for (int k = 0; k < entries; ++k) t.add(static_cast<Index>(random() % static_cast<unsigned>(m)), q, (k < 4 ? 1.0 : -1.0) * uniform(random));
    term.stiffness.push_back(static_cast<double>(m) * (1.0 + uniform(random)));
  }
  term.w = linalg::csc_from_triplets(m, p, t);
  return term;
}

// (vi) The dense route against the Woodbury route for each m and p/m.
void run_woodbury_table(const Options& options) {
  std::printf("### Inner iteration: dense refactorization of S + W·C·Wᵀ (seed 004 §4.4) against the Woodbury route, "
              "3 right-hand sides, %d thread(s), medians of %d alternating runs\n\n",
              options.threads, std::max(options.repeat, 5));
  std::printf("| m | p | p/m | dense refactor + solve ms | Woodbury refactor, then solve ms | Woodbury/dense | "
              "Woodbury fused ms | fused/dense | max rel. difference |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::mt19937 random(2020);
  for (const Index m : options.woodbury_sizes) {
    const linalg::DenseMatrix s = linalg::random_dominant_spd_matrix(m, random());
    factor::SchurSystem dense(s.view(), {}, {.threads = options.threads});
    factor::SchurLowRankSolver woodbury(s.view(), options.threads);  // S⁻¹ once, as in the simulation
    linalg::DenseMatrix b(m, 3);
    for (Index j = 0; j < 3; ++j) {
      for (Index i = 0; i < m; ++i) b(i, j) = std::uniform_real_distribution<double>(-1.0, 1.0)(random);
    }
    for (const double ratio : options.spring_ratios) {
      const auto p = std::max<Index>(1, static_cast<Index>(std::lround(ratio * static_cast<double>(m))));
      const CollisionTerm term = random_springs(m, p, random);
      linalg::DenseMatrix x_dense = b, x_woodbury = b, x_fused = b;
      const std::vector<double> medians = alternating_medians(std::max(options.repeat, 5), {
          [&] {
            x_dense = b;
            dense.clear_updates();
            dense.add_low_rank(term.w, term.stiffness);
            require_ok(dense.refactor(), "dense refactor");
            dense.solve(x_dense.view());
          },
          [&] {
            x_woodbury = b;
            require_ok(woodbury.refactor(term.w, term.stiffness), "Woodbury refactor");
            woodbury.solve(x_woodbury.view());
          },
          [&] {  // the simulation's route: S⁻¹B formed in S⁻¹W's pass
            x_fused = b;
            require_ok(woodbury.refactor_and_solve(term.w, term.stiffness, x_fused.view()), "Woodbury fused");
          }});
      std::printf("| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e |\n", static_cast<int>(m),
                  static_cast<int>(p), static_cast<double>(p) / static_cast<double>(m), 1e3 * medians[0],
                  1e3 * medians[1], medians[1] / medians[0], 1e3 * medians[2], medians[2] / medians[0],
                  std::max(relative_max_difference(x_woodbury, x_dense), relative_max_difference(x_fused, x_dense)));
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Options options = cholsim::bench::parse_command_line("bench_schur", [&] { return parse_options(argc, argv); });
  linalg::set_blas_threads(options.threads);
  if (!options.woodbury_sizes.empty()) {
    run_woodbury_table(options);
    return 0;
  }
  linalg::ElasticityBoxOptions box;
  box.nx = box.ny = box.nz = options.cells;
  std::fprintf(stderr, "building the scalar matrix of a %d^3-cell tet box...\n", static_cast<int>(options.cells));
  const linalg::SymmetricCscMatrix a = linalg::scalar_elasticity_matrix(box);
  const Index n = a.size();
  double diagonal = 0.0;
  for (Index c = 0; c < n; ++c) diagonal = std::max(diagonal, a.lower.values[a.lower.col_ptr[c]]);
  const std::vector<char> surface = surface_nodes(options.cells);
  const Index side = options.cells + 1;
  const Index seed = side / 2 + side * (side / 2);  // centre of the face z = 0
  std::vector<double> b(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) b[i] = 1.0 + static_cast<double>(i % 7);
  const factor::FactorOptions factor_options{.threads = options.threads};

  // (iv) and the reference of (i): the unconstrained analysis and full factorization.
  std::fprintf(stderr, "full factorization (n = %d)...\n", static_cast<int>(n));
  const auto full_symbolic = factor::analyze(a);
  factor::Factor full(full_symbolic);
  require_ok(full.factorize(a, factor_options), "factorize");  // warm-up: first-touch allocation
  const double full_factor = timed(options.repeat, [&] { require_ok(full.factorize(a, factor_options), "factorize"); });
  const double full_refactor_solve = timed(options.repeat, [&] {
    require_ok(full.factorize(a, factor_options), "factorize");
    std::vector<double> x = b;
    full.solve(x);
  });

  std::string gpu_note;
  std::vector<Row> rows;
  for (const double fraction : options.fractions) {
    Row row;
    row.fraction = fraction;
    const auto patch_nodes = static_cast<Index>(std::lround(fraction * static_cast<double>(n)));
    const std::vector<Index> schur = factor::connected_patch(a, 1, seed, patch_nodes, surface);
    row.schur_size = static_cast<Index>(schur.size());
    std::fprintf(stderr, "Schur set %.1f%% (%d nodes)...\n", 100 * fraction, static_cast<int>(row.schur_size));
    factor::AnalyzeOptions analyze_options;
    analyze_options.schur_set = schur;
    const auto symbolic = factor::analyze(a, analyze_options);
    row.nnz_full = full_symbolic->stats().nnz_l_exact;
    row.nnz_partial = symbolic->stats().nnz_l_exact;
    row.fill_increase = symbolic->stats().fill_increase;
    row.stored_full = full_symbolic->factor_value_count();
    row.stored_partial = symbolic->factor_value_count();
    row.flops_full = full_symbolic->stats().flops;
    row.flops_partial = symbolic->stats().flops;
    row.full_factor = full_factor;
    row.full_refactor_solve = full_refactor_solve;

    factor::SchurComplementFactor partial(symbolic);
    require_ok(partial.factorize(a, factor_options), "partial");  // warm-up, as for the full one
    measure_against_mumps(a, partial, schur, options, row);

    const CollisionTerm term = collision_term(row.schur_size, options.colliding, diagonal);
    factor::SchurSystem system(partial.schur_complement(), schur, {.threads = options.threads});
    linalg::DenseMatrix y(n, 1);
    std::vector<double> x(static_cast<std::size_t>(n));
    const linalg::ConstDenseView b_view{b.data(), n, 1, n};
    row.forward = timed(options.repeat, [&] { partial.forward(b_view, y.view()); });
    const std::vector<double> reduced(y.data() + partial.eliminated_size(), y.data() + n);
    factor::SchurSystem gpu_system(partial.schur_complement(), schur,
                                   {.device = factor::SchurDevice::gpu, .threads = options.threads});
    gpu_note = gpu_system.device() == factor::SchurDevice::gpu ? "measured on the GPU" : gpu_system.device_note();
    if (gpu_system.device() == factor::SchurDevice::gpu) {
      row.gpu = time_inner_iteration(gpu_system, term, reduced, partial.schur_rows(y.view()), options.repeat);
    }
    row.cpu = time_inner_iteration(system, term, reduced, partial.schur_rows(y.view()), options.repeat);
    const std::vector<double> y_solved(y.data(), y.data() + n);
    row.backward = timed(options.repeat, [&] {
      std::copy(y_solved.begin(), y_solved.end(), y.data());
      partial.backward(y.view(), linalg::DenseView{x.data(), n, 1, n});
    });
    row.residual = residual(a, schur, term, x, b);
    rows.push_back(row);
  }

  std::printf("### n = %d nodes (%d^3-cell tet box, scalar matrix), %d thread(s), median of %d\n\n",
              static_cast<int>(n), static_cast<int>(options.cells), options.threads, options.repeat);
  std::printf("| Schur set | m | nnz(L) full | nnz(L) constrained | fill increase | stored full | stored partial (S incl.) | GFlop full | GFlop partial | full factor ms | partial factor ms | partial/full |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %.1f%% | %d | %lld | %lld | %+.2f%% | %lld | %lld | %.1f | %.1f | %.1f | %.1f | %.2f |\n", 100 * r.fraction,
                static_cast<int>(r.schur_size), static_cast<long long>(r.nnz_full), static_cast<long long>(r.nnz_partial),
                100 * r.fill_increase, static_cast<long long>(r.stored_full), static_cast<long long>(r.stored_partial),
                1e-9 * r.flops_full, 1e-9 * r.flops_partial, 1e3 * r.full_factor, 1e3 * r.partial_factor, r.partial_factor / r.full_factor);
  }
  std::printf("\n| Schur set | m | ΔS update ms | dense potrf ms | potrs ms | inner iteration ms | GPU inner iteration ms | full refactor + solve ms | inner/full | forward ms | backward ms | residual |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    const std::string gpu = r.gpu.total > 0.0 ? std::to_string(1e3 * r.gpu.total).substr(0, 6) : "—";
    std::printf("| %.1f%% | %d | %.2f | %.1f | %.2f | %.1f | %s | %.1f | %.3f | %.1f | %.1f | %.1e |\n", 100 * r.fraction,
                static_cast<int>(r.schur_size), 1e3 * r.cpu.update, 1e3 * r.cpu.refactor, 1e3 * r.cpu.solve,
                1e3 * r.cpu.total, gpu.c_str(), 1e3 * r.full_refactor_solve, r.cpu.total / r.full_refactor_solve,
                1e3 * r.forward, 1e3 * r.backward, r.residual);
  }
  std::printf("\nPeer: MUMPS's Schur factorization (sequential build, SPD mode, ICNTL(19) = 3; same matrix and Schur set; "
              "its threads are OpenBLAS's, %d here), JOB = 2 alternating with our partial factorization; ratio = cholsim / "
              "MUMPS, < 1 means cholsim is faster; own ordering = INFOG(7), its automatic choice (0 AMD, 2 AMF, 3 SCOTCH, 4 PORD, 6 QAMD)\n\n",
              options.threads);
  std::printf("| Schur set | m | partial factor ms cholsim | MUMPS our order | ratio | MUMPS own order | ratio | own ordering | "
              "nnz(L) constrained cholsim | stored partial cholsim | factor entries MUMPS our order | MUMPS own order | "
              "GFlop cholsim | MUMPS our order | MUMPS own order | max abs(S − S_MUMPS) / max abs(S) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %.1f%% | %d | %.1f | %.1f | %.2f | %.1f | %.2f | %d | %lld | %lld | %.0f | %.0f | %.1f | %.1f | %.1f | %.1e |\n",
                100 * r.fraction, static_cast<int>(r.schur_size), 1e3 * r.partial_factor, 1e3 * r.mumps_ours.factor_seconds,
                r.partial_factor / r.mumps_ours.factor_seconds, 1e3 * r.mumps_own.factor_seconds,
                r.partial_factor / r.mumps_own.factor_seconds, r.mumps_own.ordering, static_cast<long long>(r.nnz_partial),
                static_cast<long long>(r.stored_partial), r.mumps_ours.factor_entries, r.mumps_own.factor_entries,
                1e-9 * r.flops_partial, 1e-9 * r.mumps_ours.flops, 1e-9 * r.mumps_own.flops, r.schur_difference);
  }
  std::printf("\nGPU Schur system: %s\n", gpu_note.c_str());
  return 0;
}

// Fill-reducing orderings against SuiteSparse: our approximate minimum degree (AMD) and the
// automatic choice against SuiteSparse AMD and CHOLMOD's own choice, per bench matrix.
//
// For every matrix the program reports nnz(L) and the predicted flops Σⱼ cⱼ² (exact column
// counts of the permuted pattern; CHOLMOD's measure) of
//   ours-AMD      minimum_degree_ordering on the node graph (k DOFs a node, as analyze uses it);
//   SS-AMD        SuiteSparse amd_order on the DOF graph, default controls;
//   METIS         nested_dissection_ordering on the node graph (METIS_NodeND);
//   ND-CAMD       dissection_minimum_degree_ordering on the node graph (METIS's separators,
//                 our constrained AMD inside them);
//   auto          fill_reducing_ordering(automatic), the analysis default (AMD or ND-CAMD);
//   CHOLMOD       cholmod_l_analyze with a default Common (AMD, then METIS when AMD's
//                 fl/lnz ≥ 500 and lnz/anz ≥ 5; the better kept), and with nmethods = 1 each
//                 of CHOLMOD_AMD and CHOLMOD_METIS alone: "the better of CHOLMOD's choices"
//                 is the smaller of those two lnz;
// and the ordering time of ours-AMD against SS-AMD on the same DOF graph, both starting from
// the lower-triangle CSC (ours builds its adjacency, amd_order its A + Aᵀ), alternating the
// two --repeat times, medians of thread CPU time; ours on the node graph is listed as well.
// Ratios are checked against issue 23's targets: nnz(L) ours-AMD ≤ 1.02 × SS-AMD, time ≤ 1.2 ×,
// auto nnz(L) ≤ 1.0 × the better of CHOLMOD's AMD and METIS. The time of ND-CAMD is listed
// against METIS_NodeND's, both on the node graph, alternating as well.
#include <amd.h>
#include <cholmod.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_matrices.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/cholmod_reference.hpp"
#include "bench/suitesparse_amd_reference.hpp"
#include "factor/analysis/column_counts.hpp"
#include "factor/analysis/dissection_ordering.hpp"
#include "factor/analysis/minimum_degree.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/generators.hpp"

namespace {

using cholsim::linalg::Index;
using cholsim::linalg::SymmetricCscMatrix;
namespace bench = cholsim::bench;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;
namespace reference = cholsim::reference;
using cholsim::bench::BenchMatrix;

constexpr const char* kUsage = R"(usage: bench_ordering [--repeat R] [--small] [--no-models]

Fill (nnz(L)), predicted flops and ordering time of cholsim's AMD, SuiteSparse AMD, METIS,
cholsim's automatic choice and CHOLMOD's default choice on the bench matrices (2D 5-point,
3D 27-point, 3-DOF shell sheets, arrowheads, elasticity boxes, tetgen model meshes).

  --repeat R    timed runs of each AMD, alternating (default 7); medians of thread CPU time
  --small       smaller matrices (a smoke run of a few seconds)
  --no-models   skip the tetgen model meshes
)";

struct Options {
  int repeat = 7;
  bool small = false;
  bool models = true;
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (bench::ArgumentCursor cursor(argc, argv); cursor.next();) {
    const std::string& flag = cursor.flag();
    if (bench::is_help_flag(flag)) bench::exit_with_usage(kUsage);
    if (flag == "--repeat") {
      options.repeat = bench::parse_positive(flag, cursor.value());
    } else if (flag == "--small") {
      options.small = true;
    } else if (flag == "--no-models") {
      options.models = false;
    } else {
      throw bench::unknown_option(flag);
    }
  }
  return options;
}

std::vector<BenchMatrix> bench_matrices(const Options& options) {
  const Index scale = options.small ? 1 : 2;
  std::vector<BenchMatrix> matrices;
  const Index side_2d = 200 * scale;
  matrices.push_back(bench::grid_5_point(side_2d));
  const Index side_27 = 20 * scale;
  matrices.push_back(bench::grid_27_point(side_27));
  matrices.push_back(bench::grid_7_point(side_27));
  const Index shell = 60 * scale;
  matrices.push_back(bench::shell(shell, shell, 1));
  matrices.push_back(bench::shell(shell, shell / 2, 2));
  const Index arrow = 100 * scale;
  matrices.push_back(bench::arrowhead(arrow, 1));
  matrices.push_back(bench::arrowhead(arrow, 20));
  matrices.push_back(bench::elasticity_box(10 * scale));
  if (options.models) {
    for (const bench::SurfaceModel& model : bench::surface_models) {
      matrices.push_back(bench::model_matrix(model, options.small ? 5'000 : 30'000));
    }
  }
  return matrices;
}

struct Fill {
  double nnz_l = 0.0;
  double flops = 0.0;
};

Fill fill_of(const SymmetricCscMatrix& a, std::span<const Index> perm) {
  Fill fill;
  for (const Index c : factor::ordered_column_counts(a, perm)) {
    fill.nnz_l += c;
    fill.flops += static_cast<double>(c) * c;
  }
  return fill;
}

struct CholmodChoice {
  double lnz = 0.0;
  const char* method = "";
};

// cholmod_l_analyze's fill with `nmethods` (0: its default strategy) and, for nmethods = 1,
// the one method `ordering`.
CholmodChoice cholmod_choice(const SymmetricCscMatrix& a, int nmethods, int ordering) {
  reference::CholmodCommon common;
  cholmod_common* c = common.get();
  c->supernodal = CHOLMOD_SIMPLICIAL;  // only the ordering and its counts are wanted
  c->nmethods = nmethods;
  if (nmethods == 1) c->method[0].ordering = ordering;
  reference::CholmodMatrix wrapped(a);
  cholmod_factor* l = cholmod_l_analyze(&wrapped.sparse, c);
  if (l == nullptr) throw std::runtime_error("cholmod_l_analyze failed");
  const int selected = c->method[c->selected].ordering;
  cholmod_l_free_factor(&l, c);
  return {c->lnz, selected == CHOLMOD_METIS ? "METIS" : selected == CHOLMOD_AMD ? "AMD" : "other"};
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// CPU time of this thread, not wall-clock: both orderings are sequential, and on a shared
// machine the wall clock also counts the time other processes hold the core.
double seconds_of(const std::function<void()>& run) {
  const double start = thread_cpu_seconds();
  run();
  return thread_cpu_seconds() - start;
}

struct Timing {
  double ours_dof_graph = 0.0;
  double suitesparse = 0.0;
  double ours_node_graph = 0.0;
  double metis = 0.0;       // METIS_NodeND, node graph
  double dissection = 0.0;  // ND-CAMD, node graph
};

// Medians of alternating runs: the machine is shared, so neither side gets a quiet stretch
// the other does not.
Timing time_orderings(const BenchMatrix& bench_matrix, int repeat) {
  const SymmetricCscMatrix& a = bench_matrix.matrix;
  const std::vector<int> col_ptr(a.lower.col_ptr.begin(), a.lower.col_ptr.end());
  std::vector<int> perm(static_cast<std::size_t>(a.size()));
  double control[AMD_CONTROL];
  double info[AMD_INFO];
  amd_defaults(control);
  std::vector<double> ours, suitesparse, ours_nodes, metis, dissection;
  const Index k = bench_matrix.dofs_per_node;
  for (int r = 0; r < repeat; ++r) {
    ours.push_back(seconds_of([&] { factor::minimum_degree_ordering(a, 1); }));
    suitesparse.push_back(seconds_of([&] {
      if (amd_order(a.size(), col_ptr.data(), a.lower.row_idx.data(), perm.data(), control, info) != AMD_OK) {
        throw std::runtime_error("amd_order failed");
      }
    }));
    ours_nodes.push_back(seconds_of([&] { factor::minimum_degree_ordering(a, k); }));
    metis.push_back(seconds_of([&] { factor::nested_dissection_ordering(a, k); }));
    dissection.push_back(seconds_of([&] { factor::dissection_minimum_degree_ordering(a, k); }));
  }
  return {bench::median(ours), bench::median(suitesparse), bench::median(ours_nodes), bench::median(metis),
          bench::median(dissection)};
}

struct Row {
  std::string name;
  Index n = 0;
  double nnz_a = 0.0;
  Fill ours, suitesparse, metis, dissection, automatic;
  const char* automatic_method = "";
  CholmodChoice cholmod_default, cholmod_amd, cholmod_metis;
  Timing timing;
};

Row measure(const BenchMatrix& bench_matrix, const Options& options) {
  const SymmetricCscMatrix& a = bench_matrix.matrix;
  const Index k = bench_matrix.dofs_per_node;
  std::fprintf(stderr, "%s: n = %d...\n", bench_matrix.name.c_str(), a.size());
  Row row;
  row.name = bench_matrix.name;
  row.n = a.size();
  row.nnz_a = static_cast<double>(a.nnz_lower());
  row.ours = fill_of(a, factor::minimum_degree_ordering(a, k));
  row.suitesparse = fill_of(a, reference::suitesparse_amd(factor::adjacency_graph(a, 1)));
  row.metis = fill_of(a, factor::nested_dissection_ordering(a, k));
  row.dissection = fill_of(a, factor::dissection_minimum_degree_ordering(a, k));
  const factor::FillReducingOrdering automatic = factor::fill_reducing_ordering(a, factor::OrderingMethod::automatic, k);
  row.automatic = fill_of(a, automatic.permutation);
  row.automatic_method = automatic.method == factor::OrderingMethod::dissection_minimum_degree ? "ND-CAMD" : "AMD";
  row.cholmod_default = cholmod_choice(a, 0, CHOLMOD_AMD);
  row.cholmod_amd = cholmod_choice(a, 1, CHOLMOD_AMD);
  row.cholmod_metis = cholmod_choice(a, 1, CHOLMOD_METIS);
  row.timing = time_orderings(bench_matrix, options.repeat);
  return row;
}

const char* verdict(bool holds) { return holds ? "holds" : "**misses**"; }

void print_tables(const std::vector<Row>& rows, const Options& options) {
  std::printf("### nnz(L) (millions) and predicted flops Σcⱼ² (GFlop)\n\n");
  std::printf("| matrix | n | nnz(A) lower | ours-AMD | SS-AMD | METIS | ND-CAMD | auto (kept) | CHOLMOD default (kept) | "
              "CHOLMOD AMD | CHOLMOD METIS | flops ours-AMD | SS-AMD | METIS | ND-CAMD | auto |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %d | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f (%s) | %.3f (%s) | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f | "
                "%.2f |\n",
                r.name.c_str(), r.n, r.nnz_a, r.ours.nnz_l / 1e6, r.suitesparse.nnz_l / 1e6, r.metis.nnz_l / 1e6,
                r.dissection.nnz_l / 1e6, r.automatic.nnz_l / 1e6, r.automatic_method, r.cholmod_default.lnz / 1e6,
                r.cholmod_default.method, r.cholmod_amd.lnz / 1e6, r.cholmod_metis.lnz / 1e6, r.ours.flops / 1e9,
                r.suitesparse.flops / 1e9, r.metis.flops / 1e9, r.dissection.flops / 1e9, r.automatic.flops / 1e9);
  }
  std::printf("\n### Targets (issue 23): ours-AMD nnz(L) ≤ 1.02× SS-AMD, ordering time ≤ 1.2× SS-AMD, "
              "auto nnz(L) ≤ 1.0× min(CHOLMOD AMD, CHOLMOD METIS)\n\n");
  std::printf("Times: medians of %d alternating runs, thread CPU ms; ours and SS-AMD on the DOF graph from the lower CSC, "
              "ours on the node graph alongside.\n\n", options.repeat);
  std::printf("| matrix | nnz ours/SS | | time ours ms | SS ms | ours/SS | | ours node graph ms | "
              "auto nnz / best CHOLMOD | | METIS ms | ND-CAMD ms | ND-CAMD / METIS time | nnz | flops |\n");
  std::printf("|---|---:|---|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double fill_ratio = r.ours.nnz_l / r.suitesparse.nnz_l;
    const double time_ratio = r.timing.ours_dof_graph / r.timing.suitesparse;
    const double auto_ratio = r.automatic.nnz_l / std::min(r.cholmod_amd.lnz, r.cholmod_metis.lnz);
    std::printf("| %s | %.3f | %s | %.2f | %.2f | %.2f | %s | %.2f | %.3f | %s | %.1f | %.1f | %.2f | %.3f | %.3f |\n",
                r.name.c_str(), fill_ratio, verdict(fill_ratio <= 1.02), 1e3 * r.timing.ours_dof_graph,
                1e3 * r.timing.suitesparse, time_ratio, verdict(time_ratio <= 1.2), 1e3 * r.timing.ours_node_graph,
                auto_ratio, verdict(auto_ratio <= 1.0), 1e3 * r.timing.metis, 1e3 * r.timing.dissection,
                r.timing.dissection / r.timing.metis, r.dissection.nnz_l / r.metis.nnz_l, r.dissection.flops / r.metis.flops);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Options options = bench::parse_command_line("bench_ordering", [&] { return parse_options(argc, argv); });
  try {
    std::vector<Row> rows;
    for (const BenchMatrix& bench_matrix : bench_matrices(options)) rows.push_back(measure(bench_matrix, options));
    print_tables(rows, options);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_ordering: %s\n", error.what());
    return 1;
  }
}

// The GPU factorization (issue 22) against cholsim on the host's CPU cores, CHOLMOD (CPU,
// same permutation, same threads) and cuSOLVER's sparse Cholesky, on elasticity boxes and
// tetgen'd models. Run on the device machine (an H100 for the issue's targets).
//
// Per problem (the analysis is cholsim's default, METIS on these, shared by every run):
//   cpu:      Factor::factorize on --threads threads (median of --repeat after one warm-up);
//   cholmod:  cholmod_l_factorize, supernodal, the same permutation (median of --repeat);
//   gpu:      Factor::factorize with FactorDevice::gpu for each --gpu-min-flops split: the first
//             call (device set-up included) and the median of --repeat more, the device part's
//             time, TFLOP/s, bytes each way, peak device memory, and max |L_gpu − L_cpu| / max |L_cpu|;
//   refactor: with retained blocks, the element blocks of a ball of --refactor-fraction of the
//             tets turned (linalg/element_changes.hpp) and back, --repeat times each: median
//             time, recomputed flop fraction and the target 1.2 × fraction × full + 5 ms;
//   cusolver: cusolverSpDcsrlsvchol (METIS reordering, analysis + factor + one solve on the
//             device, the only interface it has) on the boxes of --cusolver-boxes.
// Also cuBLAS dgemm (8192³) TFLOP/s, the roof the GPU part is measured against.
// Output: Markdown on stdout, progress on stderr, --json FILE for the numbers.
#include <cholmod.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#if CHOLSIM_BENCH_CUSOLVER
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverSp.h>
#include <cusparse.h>
#endif

#include "bench/bench_arguments.hpp"
#include "bench/bench_models.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/cholmod_reference.hpp"
#include "factor/analysis/symbolic.hpp"
#include "factor/gpu/gpu_factorization.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/element_changes.hpp"
#include "linalg/generators.hpp"

namespace {

using cholsim::linalg::Index;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(bench_gpu_factor — the GPU factorization against the CPU, CHOLMOD and cuSOLVER (issue 22)
  --box LIST            elasticity boxes, cells per side (default 32,46: 107,811 and 311,469 DOF)
  --model NAME:TETS     also a tetgen'd surface model (bunny, knot); repeatable
  --threads N           CPU threads for cholsim and CHOLMOD (default 0: all)
  --repeat N            timed runs per measurement (default 3)
  --gpu-min-flops LIST  device splits to measure (default 2e7)
  --refactor-fraction F ball of this fraction of the tets for the refactorization (default 0.05; 0: none)
  --cusolver-boxes LIST boxes also factored by cusolverSpDcsrlsvchol (default none)
  --no-cholmod          skip CHOLMOD
  --no-cpu              skip cholsim on the CPU (the GPU's difference is then not checked)
  --json FILE           the numbers as JSON
)";

struct Options {
  std::vector<Index> boxes{32, 46};
  std::vector<std::string> models;
  int threads = 0;
  int repeat = 3;
  std::vector<double> gpu_min_flops{2e7};
  double refactor_fraction = 0.05;
  std::vector<Index> cusolver_boxes;
  bool cholmod = true;
  bool cpu = true;
  std::string json;
};

Options parse_options(int argc, char** argv) {
  namespace bench = cholsim::bench;
  Options o;
  for (bench::ArgumentCursor cursor(argc, argv); cursor.next();) {
    const std::string& flag = cursor.flag();
    if (bench::is_help_flag(flag)) bench::exit_with_usage(kUsage);
    if (flag == "--box") o.boxes = bench::parse_list<Index>(cursor.value());
    else if (flag == "--model") o.models.push_back(cursor.value());
    else if (flag == "--threads") o.threads = static_cast<int>(bench::parse_number(flag, cursor.value()));
    else if (flag == "--repeat") o.repeat = bench::parse_positive(flag, cursor.value());
    else if (flag == "--gpu-min-flops") o.gpu_min_flops = bench::parse_list<double>(cursor.value());
    else if (flag == "--refactor-fraction") o.refactor_fraction = bench::parse_number(flag, cursor.value());
    else if (flag == "--cusolver-boxes") o.cusolver_boxes = bench::parse_list<Index>(cursor.value());
    else if (flag == "--no-cholmod") o.cholmod = false;
    else if (flag == "--no-cpu") o.cpu = false;
    else if (flag == "--json") o.json = cursor.value();
    else throw bench::unknown_option(flag);
  }
  return o;
}

void progress(const std::string& text) { std::cerr << "[bench_gpu_factor] " << text << std::endl; }

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Problem {
  std::string title;
  Index cells = 0;  // 0 for a model
  linalg::ElasticityBoxOptions material;
  linalg::TetMesh mesh;
  linalg::AssemblyPattern pattern;
  linalg::SymmetricCscMatrix a;
  std::shared_ptr<const factor::Symbolic> symbolic;
};

Problem make_problem(std::string title, linalg::TetMesh mesh, Index cells) {
  Problem p;
  p.title = std::move(title);
  p.cells = cells;
  p.mesh = std::move(mesh);
  p.pattern = linalg::AssemblyPattern(p.mesh.node_count(), 3, 4, p.mesh.tets);
  p.a = linalg::elasticity_matrix(p.mesh, p.material);
  factor::AnalyzeOptions analyze_options;
  analyze_options.dofs_per_node = 3;
  p.symbolic = factor::analyze(p.a, analyze_options);
  return p;
}

double timed_factorize(factor::Factor& l, const linalg::SymmetricCscMatrix& a, const factor::FactorOptions& options) {
  if (!l.factorize(a, options).ok()) throw std::runtime_error("factorize: " + l.status().message);
  return l.stats().seconds;
}

// CHOLMOD calls OpenBLAS with the threads OpenBLAS has for the whole process.
double cholmod_factor_seconds(const Problem& p) {
  cholsim::reference::CholmodMatrix matrix(p.a);
  const auto permutation = p.symbolic->permutation();
  std::vector<SuiteSparse_long> given(permutation.begin(), permutation.end());
  cholsim::reference::CholmodCommon common;
  cholmod_common* c = common.get();
  c->nmethods = 1;
  c->method[0].ordering = CHOLMOD_GIVEN;
  c->postorder = 1;
  c->supernodal = CHOLMOD_SUPERNODAL;
  cholmod_factor* l = cholmod_l_analyze_p(&matrix.sparse, given.data(), nullptr, 0, c);
  if (l == nullptr) throw std::runtime_error("cholmod_l_analyze_p failed");
  const auto start = Clock::now();
  const int ok = cholmod_l_factorize(&matrix.sparse, l, c);
  const double seconds = seconds_since(start);
  const bool failed = !ok || c->status != CHOLMOD_OK || l->minor < l->n;
  cholmod_l_free_factor(&l, c);
  if (failed) throw std::runtime_error("cholmod_l_factorize failed");
  return seconds;
}

#if CHOLSIM_BENCH_CUSOLVER
// cuSOLVER's sparse interface is deprecated in CUDA 13 in favour of cuDSS; issue 22 names it as
// the reference, so its deprecation warnings are silenced here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// cusolverSpDcsrlsvchol on the full CSR of A (symmetric: the CSC of the lower triangle is the
// CSR of the upper; both are given), METIS reordering, b = A·1. Returns seconds of the call.
double cusolver_sp_seconds(const Problem& p, double& error) {
  const linalg::CscMatrix full = linalg::to_full(p.a);
  const Index n = full.rows;
  std::vector<int> row_ptr(full.col_ptr.begin(), full.col_ptr.end());
  std::vector<int> col(full.row_idx.begin(), full.row_idx.end());
  std::vector<double> ones(static_cast<std::size_t>(n), 1.0);
  std::vector<double> b(static_cast<std::size_t>(n), 0.0);
  for (Index j = 0; j < n; ++j) {
    for (auto q = full.col_ptr[j]; q < full.col_ptr[j + 1]; ++q) b[full.row_idx[q]] += full.values[q];
  }
  int *d_ptr = nullptr, *d_col = nullptr;
  double *d_val = nullptr, *d_b = nullptr, *d_x = nullptr;
  cudaMalloc(&d_ptr, row_ptr.size() * sizeof(int));
  cudaMalloc(&d_col, col.size() * sizeof(int));
  cudaMalloc(&d_val, full.values.size() * sizeof(double));
  cudaMalloc(&d_b, b.size() * sizeof(double));
  cudaMalloc(&d_x, b.size() * sizeof(double));
  cudaMemcpy(d_ptr, row_ptr.data(), row_ptr.size() * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_col, col.data(), col.size() * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_val, full.values.data(), full.values.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(d_b, b.data(), b.size() * sizeof(double), cudaMemcpyHostToDevice);
  cusolverSpHandle_t handle = nullptr;
  cusolverSpCreate(&handle);
  cusparseMatDescr_t descr = nullptr;
  cusparseCreateMatDescr(&descr);
  cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL);
  cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO);
  int singularity = 0;
  cudaDeviceSynchronize();
  const auto start = Clock::now();
  const cusolverStatus_t status = cusolverSpDcsrlsvchol(handle, n, static_cast<int>(col.size()), descr, d_val, d_ptr,
                                                        d_col, d_b, 1e-14, 3, d_x, &singularity);
  cudaDeviceSynchronize();
  const double seconds = seconds_since(start);
  std::vector<double> x(b.size());
  cudaMemcpy(x.data(), d_x, x.size() * sizeof(double), cudaMemcpyDeviceToHost);
  error = status == CUSOLVER_STATUS_SUCCESS && singularity < 0 ? cholsim::bench::max_relative_difference(x, ones) : -1.0;
  cusparseDestroyMatDescr(descr);
  cusolverSpDestroy(handle);
  cudaFree(d_ptr);
  cudaFree(d_col);
  cudaFree(d_val);
  cudaFree(d_b);
  cudaFree(d_x);
  return seconds;
}
#pragma GCC diagnostic pop

// cuBLAS dgemm on 8192² operands: the FP64 roof the factorization's rate is compared with.
double dgemm_tflops() {
  constexpr int n = 8192;
  double *a = nullptr, *c = nullptr;
  cudaMalloc(&a, sizeof(double) * n * n);
  cudaMalloc(&c, sizeof(double) * n * n);
  cudaMemset(a, 0, sizeof(double) * n * n);
  cublasHandle_t blas = nullptr;
  cublasCreate(&blas);
  const double one = 1.0;
  const double zero = 0.0;
  cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, a, n, &zero, c, n);
  cudaDeviceSynchronize();
  constexpr int runs = 5;
  const auto start = Clock::now();
  for (int r = 0; r < runs; ++r) cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, a, n, &zero, c, n);
  cudaDeviceSynchronize();
  const double seconds = seconds_since(start) / runs;
  cublasDestroy(blas);
  cudaFree(a);
  cudaFree(c);
  return 2.0 * n * static_cast<double>(n) * n / seconds * 1e-12;
}
#endif

struct GpuRow {
  double min_flops = 0.0;
  double first_seconds = 0.0;
  double seconds = 0.0;
  factor::FactorStats stats;
  double max_difference = -1.0;
};

nlohmann::ordered_json run_problem(const Problem& p, const Options& o) {
  const double flops = p.symbolic->stats().flops;
  nlohmann::ordered_json out{{"problem", p.title}, {"n", p.a.size()}, {"flops", flops},
                             {"factor_bytes", p.symbolic->stats().factor_bytes}};
  std::printf("\n### %s: n = %d, %.3g flops, L %.2f GB\n\n", p.title.c_str(), p.a.size(), flops,
              static_cast<double>(p.symbolic->stats().factor_bytes) * 1e-9);
  factor::FactorOptions cpu_options;
  cpu_options.threads = o.threads;
  factor::Factor cpu(p.symbolic);
  double cpu_seconds = 0.0;
  if (o.cpu) {
    progress(p.title + ": cholsim on the CPU...");
    timed_factorize(cpu, p.a, cpu_options);
    std::vector<double> t;
    for (int r = 0; r < o.repeat; ++r) t.push_back(timed_factorize(cpu, p.a, cpu_options));
    cpu_seconds = cholsim::bench::median(t);
    out["cpu_seconds"] = cpu_seconds;
    out["cpu_threads"] = cpu.stats().threads;
  }
  double cholmod_seconds = 0.0;
  if (o.cholmod) {
    progress(p.title + ": CHOLMOD...");
    std::vector<double> t;
    for (int r = 0; r < o.repeat; ++r) t.push_back(cholmod_factor_seconds(p));
    cholmod_seconds = cholsim::bench::median(t);
    out["cholmod_seconds"] = cholmod_seconds;
  }
  std::printf("| split (min flops) | GPU s (first) | GPU s | GPU part s | CPU part s | TFLOP/s whole | TFLOP/s GPU part | "
              "GPU share of flops | vs cholsim CPU | vs CHOLMOD | to GPU | from GPU | peak GPU mem | max diff |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const double min_flops : o.gpu_min_flops) {
    progress(p.title + ": GPU, split at " + std::to_string(min_flops) + " flops...");
    factor::FactorOptions options = cpu_options;
    options.device = factor::FactorDevice::gpu;
    options.gpu_min_supernode_flops = min_flops;
    options.gpu_fallback_to_cpu = false;
    factor::Factor gpu(p.symbolic);
    GpuRow row;
    row.min_flops = min_flops;
    row.first_seconds = timed_factorize(gpu, p.a, options);
    std::vector<double> t;
    for (int r = 0; r < o.repeat; ++r) t.push_back(timed_factorize(gpu, p.a, options));
    row.seconds = cholsim::bench::median(t);
    row.stats = gpu.stats();
    if (o.cpu) row.max_difference = cholsim::bench::max_relative_difference(gpu.values(), cpu.values());
    const factor::GpuRunStats& g = row.stats.gpu;
    std::printf("| %.0e | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.1f %% | %.1fx | %.1fx | %.2f GB | %.2f GB | %.2f GB | %.1e |\n",
                min_flops, row.first_seconds, row.seconds, g.seconds, row.stats.cpu_seconds, flops / row.seconds * 1e-12,
                g.seconds > 0 ? g.flops / g.seconds * 1e-12 : 0.0, 100.0 * g.flops / flops,
                cpu_seconds / row.seconds, cholmod_seconds / row.seconds, g.bytes_to_device * 1e-9,
                g.bytes_from_device * 1e-9, g.peak_device_bytes * 1e-9, row.max_difference);
    out["gpu"].push_back({{"min_supernode_flops", min_flops}, {"first_seconds", row.first_seconds},
                          {"seconds", row.seconds}, {"runs", t}, {"gpu_part_seconds", g.seconds},
                          {"cpu_part_seconds", row.stats.cpu_seconds}, {"gpu_flops", g.flops},
                          {"gpu_supernodes", g.supernodes}, {"bytes_to_device", g.bytes_to_device},
                          {"bytes_from_device", g.bytes_from_device}, {"peak_device_bytes", g.peak_device_bytes},
                          {"max_difference", row.max_difference}, {"device", row.stats.device}});
  }
  std::printf("\ncholsim CPU (%d threads): %.3f s (%.2f TFLOP/s); CHOLMOD: %.3f s\n", cpu.stats().threads, cpu_seconds,
              cpu_seconds > 0 ? flops / cpu_seconds * 1e-12 : 0.0, cholmod_seconds);

  if (o.refactor_fraction > 0.0) {
    progress(p.title + ": GPU refactorization of a ball...");
    factor::FactorOptions options = cpu_options;
    options.device = factor::FactorDevice::gpu;
    options.gpu_min_supernode_flops = o.gpu_min_flops.front();
    options.gpu_fallback_to_cpu = false;
    options.retain_update_blocks = true;
    factor::Factor l(p.symbolic);
    timed_factorize(l, p.a, options);
    std::vector<double> full;
    for (int r = 0; r < o.repeat; ++r) full.push_back(timed_factorize(l, p.a, options));
    const double full_seconds = cholsim::bench::median(full);
    const auto box = cholsim::fem::bounding_box(p.mesh.positions);
    linalg::Vec3 centre{};
    for (int axis = 0; axis < 3; ++axis) centre[axis] = box[axis] + 0.25 * (box[axis + 3] - box[axis]);
    const auto count = std::max<Index>(1, static_cast<Index>(o.refactor_fraction * p.mesh.tet_count()));
    const auto elements = linalg::elements_in_ball(p.mesh, centre, count);
    linalg::SymmetricCscMatrix changed = p.a;
    linalg::rotate_element_blocks(p.mesh, p.pattern, p.material, elements, 0.3, changed.lower.values);
    const auto entries = factor::ChangedEntries::elements(linalg::element_dof_lists(p.pattern, elements), 12);
    std::vector<double> t;
    double fraction = 0.0;
    double difference = -1.0;
    for (int r = 0; r < o.repeat; ++r) {
      for (const linalg::SymmetricCscMatrix* target : {static_cast<const linalg::SymmetricCscMatrix*>(&changed), &p.a}) {
        if (!l.refactorize(entries, *target, options).ok()) throw std::runtime_error(l.status().message);
        t.push_back(l.stats().seconds);
        fraction = l.stats().recomputed_flops / flops;
        if (r == 0 && target == &changed) {
          factor::Factor fresh(p.symbolic);
          timed_factorize(fresh, changed, cpu_options);
          difference = cholsim::bench::max_relative_difference(l.values(), fresh.values());
        }
      }
    }
    const double seconds = cholsim::bench::median(t);
    const double bound = 1.2 * fraction * full_seconds + 0.005;
    std::printf("\nGPU refactorize, ball of %.1f %% of the tets: %.4f s (median of %zu), recomputed flop fraction %.3f, "
                "full GPU factorize with retention %.3f s, target <= %.4f s: %s; max diff vs fresh %.1e\n",
                100.0 * o.refactor_fraction, seconds, t.size(), fraction, full_seconds, bound,
                seconds <= bound ? "holds" : "misses", difference);
    out["refactor"] = {{"fraction_of_tets", o.refactor_fraction}, {"seconds", seconds}, {"runs", t},
                       {"flop_fraction", fraction}, {"full_seconds", full_seconds}, {"bound", bound},
                       {"max_difference", difference}};
  }
#if CHOLSIM_BENCH_CUSOLVER
  if (std::find(o.cusolver_boxes.begin(), o.cusolver_boxes.end(), p.cells) != o.cusolver_boxes.end() && p.cells > 0) {
    progress(p.title + ": cusolverSpDcsrlsvchol...");
    double error = 0.0;
    const double seconds = cusolver_sp_seconds(p, error);
    const double ours = out.contains("gpu") ? out["gpu"][0]["seconds"].get<double>() : 0.0;
    std::printf("\ncusolverSpDcsrlsvchol (METIS, analysis + factor + solve): %.3f s, max |x - 1| %.1e; cholsim GPU factor "
                "is %.1fx faster\n",
                seconds, error, ours > 0 ? seconds / ours : 0.0);
    out["cusolver_sp"] = {{"seconds", seconds}, {"max_error", error}};
  }
#endif
  std::fflush(stdout);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  try {
    const Options o = parse_options(argc, argv);
    std::string why_not;
    if (!factor::gpu_available(&why_not)) {
      std::cerr << "bench_gpu_factor: no GPU: " << why_not << '\n';
      return 1;
    }
    nlohmann::ordered_json json{{"problems", nlohmann::ordered_json::array()}};
    std::printf("## GPU factorization (issue 22)\n");
#if CHOLSIM_BENCH_CUSOLVER
    const double roof = dgemm_tflops();
    std::printf("\ncuBLAS dgemm 8192^3: %.2f TFLOP/s\n", roof);
    json["dgemm_tflops"] = roof;
#endif
    for (const Index cells : o.boxes) {
      progress("building the " + std::to_string(cells) + "^3 box...");
      linalg::ElasticityBoxOptions box;
      const Problem p = make_problem("Elasticity box " + std::to_string(cells) + "^3 cells",
                                     linalg::structured_tet_box(cells, cells, cells, box.cell_size), cells);
      json["problems"].push_back(run_problem(p, o));
    }
    for (const std::string& spec : o.models) {
      const std::size_t colon = spec.find(':');
      const std::string name = spec.substr(0, colon);
      const auto tets = static_cast<Index>(cholsim::bench::parse_number("--model", spec.substr(colon + 1)));
      const auto* model = cholsim::bench::find_surface_model(name);
      if (!model) throw std::invalid_argument("--model: unknown model " + name);
      progress("tetrahedralizing " + name + "...");
      auto mesh = cholsim::bench::tetrahedralize_model(*model, tets);
      const auto bounds = cholsim::fem::bounding_box(mesh.mesh.positions);
      const double scale = 1.0 / std::max({bounds[3] - bounds[0], bounds[4] - bounds[1], bounds[5] - bounds[2]});
      for (double& x : mesh.mesh.positions) x *= scale;
      json["problems"].push_back(run_problem(make_problem("Model: " + mesh.description, std::move(mesh.mesh), 0), o));
    }
    if (!o.json.empty()) std::ofstream(o.json) << json.dump(2) << '\n';
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_gpu_factor: error: " << e.what() << '\n';
    return 1;
  }
}

// Matrix Market read throughput on a ≥ 100 MB symmetric coordinate file (arguments: see
// --help, kUsage below).
//
// The file was just written, so reads come from the page cache: this measures the parser,
// not the disk. CPU seconds (process CPU time) are printed beside wall seconds because on a
// shared machine the wall time also counts waiting for a core.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/matrix_market.hpp"

namespace {

using cholsim::linalg::Index;
using cholsim::linalg::SymmetricCscMatrix;
using cholsim::linalg::Triplets;
namespace bench = cholsim::bench;

constexpr const char* kUsage = R"(usage: bench_matrix_market [grid_side [directory]]

Matrix Market read throughput: writes the lower triangle of a 7-point 3D Laplacian-like matrix
on a grid_side^3 grid, with randomly permuted node numbers and random full-precision values,
reads it back with read_symmetric_matrix_market three times, prints the file size and the
median read time (wall and CPU seconds, MB/s), then deletes the file. Exits 1 if a read
differs from the matrix written.

  grid_side    nodes per side of the grid (default 104: n = 1,124,864, about 4.5M stored
               entries, about 160 MB)
  directory    where the temporary file is written (default: the system's temporary
               directory, $TMPDIR or /tmp)
  --help, -h   this text
)";

struct Arguments {
  Index side = 104;
  std::filesystem::path directory;  ///< empty: the system's temporary directory
};

Arguments parse_arguments(int argc, char** argv) {
  const std::vector<std::string> positional = bench::positional_arguments(argc, argv, kUsage, 2);
  Arguments arguments;
  if (!positional.empty()) arguments.side = bench::parse_positive("grid_side", positional[0]);
  if (positional.size() > 1) arguments.directory = positional[1];
  return arguments;
}

SymmetricCscMatrix laplacian_like(Index side, std::mt19937_64& random) {
  const Index n = side * side * side;
  std::vector<Index> number(static_cast<std::size_t>(n));  // grid node → matrix row
  std::iota(number.begin(), number.end(), 0);
  std::shuffle(number.begin(), number.end(), random);
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  Triplets t;
  t.reserve(static_cast<std::size_t>(n) * 4);
  const auto node = [side](Index x, Index y, Index z) { return x + side * (y + side * z); };
  for (Index z = 0; z < side; ++z) {
    for (Index y = 0; y < side; ++y) {
      for (Index x = 0; x < side; ++x) {
        const Index here = number[static_cast<std::size_t>(node(x, y, z))];
        t.add(here, here, 6.0 + jitter(random));
        const Index neighbours[3] = {x > 0 ? node(x - 1, y, z) : -1, y > 0 ? node(x, y - 1, z) : -1,
                                     z > 0 ? node(x, y, z - 1) : -1};
        for (const Index neighbour : neighbours) {
          if (neighbour < 0) continue;
          const Index there = number[static_cast<std::size_t>(neighbour)];
          t.add(std::max(here, there), std::min(here, there), -1.0 - jitter(random));
        }
      }
    }
  }
  return cholsim::linalg::symmetric_from_triplets(n, t);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double process_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  namespace fs = std::filesystem;
  const Arguments arguments =
      bench::parse_command_line("bench_matrix_market", [&] { return parse_arguments(argc, argv); });
  const Index side = arguments.side;
  const fs::path directory = arguments.directory.empty() ? fs::temp_directory_path() : arguments.directory;
  const std::string path =
      (directory / ("cholsim_bench_mm_" + std::to_string(::getpid()) + ".mtx")).string();

  std::mt19937_64 random(20240601);
  const SymmetricCscMatrix a = laplacian_like(side, random);
  auto start = std::chrono::steady_clock::now();
  cholsim::linalg::write_matrix_market(path, a);
  const double write_seconds = seconds_since(start);
  const double megabytes = static_cast<double>(fs::file_size(path)) / 1e6;
  std::printf("file: %s\nn = %d, stored entries = %lld, size = %.1f MB, write %.3f s (%.0f MB/s)\n",
              path.c_str(), a.size(), static_cast<long long>(a.nnz_lower()), megabytes,
              write_seconds, megabytes / write_seconds);

  std::vector<double> wall_times;
  std::vector<double> cpu_times;
  int status = 0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    const double cpu_start = process_cpu_seconds();
    start = std::chrono::steady_clock::now();
    const SymmetricCscMatrix b = cholsim::linalg::read_symmetric_matrix_market(path);
    wall_times.push_back(seconds_since(start));
    cpu_times.push_back(process_cpu_seconds() - cpu_start);
    if (b.lower.col_ptr != a.lower.col_ptr || b.lower.row_idx != a.lower.row_idx ||
        b.lower.values != a.lower.values) {
      std::fprintf(stderr, "read %d differs from the matrix written\n", repeat);
      status = 1;
    }
    std::printf("read %d: %.3f s wall, %.3f s CPU\n", repeat, wall_times.back(), cpu_times.back());
  }
  std::sort(wall_times.begin(), wall_times.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  std::printf("read_symmetric_matrix_market: median %.3f s wall (%.0f MB/s), %.3f s CPU (%.0f MB/s)\n",
              wall_times[1], megabytes / wall_times[1], cpu_times[1], megabytes / cpu_times[1]);
  fs::remove(path);
  return status;
}

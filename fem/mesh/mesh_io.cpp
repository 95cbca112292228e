// Format dispatch by extension, and the OFF writer (the surface format Debian's tetgen reads
// most reliably; ../shared/data/README.md).
#include "fem/mesh/mesh_io.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <system_error>

#include "fem/mesh/mesh_io_text.hpp"

namespace cholsim::fem {
namespace {

std::string format_message(const std::string& file, std::int64_t line, const std::string& problem,
                           const std::string& expected) {
  std::string message = file;
  if (line > 0) {
    message += ':';
    message += std::to_string(line);
  }
  message += ": ";
  message += problem;
  message += "; expected ";
  message += expected;
  return message;
}

}  // namespace

MeshFormatError::MeshFormatError(std::string file, std::int64_t line, const std::string& problem,
                                 const std::string& expected)
    : std::runtime_error(format_message(file, line, problem, expected)),
      file_(std::move(file)),
      line_(line) {}

namespace {

std::string extension_of(const std::filesystem::path& path) { return mesh_text::lower_case(path.extension().string()); }

void append_number(std::string& out, double value) {
  char buffer[32];
  // Shortest round-trip form: the surface tetgen reads is bit-identical to ours.
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  (void)error;  // 32 characters always hold a double
  out.append(buffer, end);
}

std::string off_text(const SurfaceMesh& surface) {
  std::string out = "OFF\n" + std::to_string(surface.node_count()) + " " + std::to_string(surface.triangle_count()) + " 0\n";
  out.reserve(out.size() + 60 * surface.positions.size() / 3 + 30 * surface.triangles.size() / 3);
  for (std::size_t node = 0; node < surface.positions.size(); node += 3) {
    for (std::size_t axis = 0; axis < 3; ++axis) {
      append_number(out, surface.positions[node + axis]);
      out += axis < 2 ? ' ' : '\n';
    }
  }
  for (std::size_t corner = 0; corner < surface.triangles.size(); corner += 3) {
    out += "3 " + std::to_string(surface.triangles[corner]) + " " + std::to_string(surface.triangles[corner + 1]) + " " +
           std::to_string(surface.triangles[corner + 2]) + "\n";
  }
  return out;
}

void check_writable(const SurfaceMesh& surface, const std::filesystem::path& path) {
  if (surface.positions.size() % 3 != 0 || surface.triangles.size() % 3 != 0) {
    throw std::invalid_argument("write_off " + path.string() + ": position or triangle array not a multiple of 3");
  }
  for (const double value : surface.positions) {
    if (!std::isfinite(value)) throw std::invalid_argument("write_off " + path.string() + ": non-finite coordinate");
  }
  for (const Index node : surface.triangles) {
    if (node < 0 || node >= surface.node_count()) {
      throw std::invalid_argument("write_off " + path.string() + ": triangle node " + std::to_string(node) +
                                  " outside 0.." + std::to_string(surface.node_count() - 1));
    }
  }
}

}  // namespace

TetMesh read_tet_mesh(const std::filesystem::path& path) {
  const std::string extension = extension_of(path);
  if (extension == ".node" || extension == ".ele") return read_tetgen_mesh(path);
  if (extension == ".msh") return read_gmsh_mesh(path);
  if (extension == ".mesh") return read_medit_mesh(path);
  throw MeshFormatError(path.string(), 0, "unknown tet mesh extension '" + path.extension().string() + "'",
                        ".node/.ele (TetGen), .msh (Gmsh) or .mesh (Medit)");
}

SurfaceMesh read_surface_mesh(const std::filesystem::path& path) {
  const std::string extension = extension_of(path);
  if (extension == ".obj") return read_obj(path);
  if (extension == ".off") return read_off(path);
  if (extension == ".stl") return read_stl(path);
  throw MeshFormatError(path.string(), 0, "unknown surface mesh extension '" + path.extension().string() + "'",
                        ".obj, .off or .stl");
}

SurfaceMesh read_closed_surface(const std::filesystem::path& path) {
  const std::string extension = extension_of(path);
  if (extension == ".obj" || extension == ".off" || extension == ".stl") return read_surface_mesh(path);
  return boundary_surface(read_tet_mesh(path));
}

void write_off(const SurfaceMesh& surface, const std::filesystem::path& path) {
  check_writable(surface, path);
  const std::string text = off_text(surface);
  // Readers (tetgen, ParaView, a second process) must never see a half-written file.
  std::filesystem::path temporary = path;
  temporary += ".tmp" + std::to_string(::getpid());
  {
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(temporary.c_str(), "wb"), &std::fclose);
    if (!out) throw std::runtime_error("write_off: cannot create " + temporary.string());
    const bool written = std::fwrite(text.data(), 1, text.size(), out.get()) == text.size() && std::fflush(out.get()) == 0;
    if (!written) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw std::runtime_error("write_off: writing " + temporary.string() + " failed");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw std::runtime_error("write_off: cannot rename " + temporary.string() + " to " + path.string() + ": " +
                             error.message());
  }
}

}  // namespace cholsim::fem

#include "fem/mesh/tetgen.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "fem/mesh/mesh_io.hpp"

extern char** environ;

namespace cholsim::fem {
namespace {

constexpr const char* input_name = "surface.off";
constexpr const char* output_base = "surface.1";  // tetgen's name for the first output
constexpr const char* log_name = "tetgen.log";

void check_switches(const std::string& switches) {
  // Numbers may carry exponents ("a1.6e-8"), so '-' and '+' are fine after the first character;
  // a leading dash is the caller adding one of its own.
  for (std::size_t i = 0; i < switches.size(); ++i) {
    const char c = switches[i];
    const bool sign_in_number = i > 0 && (c == '-' || c == '+');
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && !sign_in_number) {
      throw std::invalid_argument("tetrahedralize: switch character '" + std::string(1, c) + "' in \"" + switches +
                                  "\"; expected letters, digits, '.' and exponent signs only (no leading dash, no spaces)");
    }
  }
  if (switches.find('p') == std::string::npos) {
    throw std::invalid_argument("tetrahedralize: switches \"" + switches +
                                "\" lack 'p'; expected 'p' (tetrahedralize a piecewise linear surface)");
  }
  for (const char forbidden : {'N', 'E', 'r'}) {
    if (switches.find(forbidden) != std::string::npos) {
      throw std::invalid_argument("tetrahedralize: switch '" + std::string(1, forbidden) + "' in \"" + switches +
                                  "\" would suppress or change the .node/.ele output that is read back");
    }
  }
}

/// A fresh folder under the system temporary directory, removed with everything in it when the
/// object goes out of scope.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cholsim-tetgen-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw TetgenError("tetrahedralize: cannot create a temporary folder " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string output_tail(const std::filesystem::path& log) {
  std::ifstream in(log, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::size_t tail = 1500;
  return text.size() > tail ? "..." + text.substr(text.size() - tail) : text;
}

/// Runs argv in `folder` with stdout and stderr sent to `log`; returns the wait status.
int run_in_folder(const std::vector<std::string>& arguments, const std::filesystem::path& folder,
                  const std::filesystem::path& log, const std::string& command) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // glibc ≥ 2.29: chdir in the child, so no shell and no fork-time hazards.
  posix_spawn_file_actions_addchdir_np(&actions, folder.c_str());
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawn_error = ::posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) throw TetgenError("cannot start `" + command + "`: " + std::strerror(spawn_error));
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw TetgenError("waiting for `" + command + "` failed: " + std::strerror(errno));
  }
  return status;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

}  // namespace

bool tetgen_available(const std::filesystem::path& executable) {
  return ::access(executable.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(executable);
}

TetgenResult tetrahedralize(const SurfaceMesh& surface, const TetgenOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_switches(options.switches);
  if (surface.triangle_count() == 0) throw std::invalid_argument("tetrahedralize: the surface has no triangles");
  if (!tetgen_available(options.executable)) {
    throw TetgenError("tetrahedralize: " + options.executable.string() +
                      " is not an executable program (Debian: apt-get install tetgen)");
  }
  const std::vector<std::string> arguments{options.executable.string(), "-" + options.switches, input_name};
  TetgenResult result;
  result.command = arguments[0] + " " + arguments[1] + " " + arguments[2];

  const TemporaryFolder folder;
  write_off(surface, folder.path() / input_name);
  const std::filesystem::path log = folder.path() / log_name;
  const int status = run_in_folder(arguments, folder.path(), log, result.command);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // Debian's tetgen 1.5 aborts (uncaught exception, stdout buffer lost) on self-intersecting
    // input; say so, since its output then explains nothing.
    const std::string hint = WIFSIGNALED(status) ? " — tetgen aborts like this on self-intersecting or open "
                                                   "surfaces; check the surface with `tetgen -d FILE.off`"
                                                 : "";
    throw TetgenError("`" + result.command + "` failed (" + describe_status(status) + hint + "); its output ends:\n" +
                      output_tail(log));
  }
  const std::filesystem::path node_file = folder.path() / (std::string(output_base) + ".node");
  if (!std::filesystem::is_regular_file(node_file)) {
    throw TetgenError("`" + result.command + "` wrote no " + node_file.filename().string() + "; its output ends:\n" +
                      output_tail(log));
  }
  result.mesh = read_tetgen_mesh(node_file);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace cholsim::fem

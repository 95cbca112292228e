// fastcorot_peer — our headless driver for the official code of seed paper 003 (Kugelstadt,
// Koschier, Bender 2018, "Fast Corotated FEM using Operator Splitting";
// github.com/InteractiveComputerGraphics/FastCorotatedFEM, MIT licence, theirs).
//
// Why this file exists: their repository ships only an OpenGL/GLUT demo. To benchmark our
// fem/ operator-splitting solver against the authors' own implementation we link their
// FastCorotFEM class (built from the fetched snapshot by build_fastcorot_peer.sh into the
// git-ignored build folder; none of their code lives in our tree) and drive it from here:
// read a TetGen mesh, fix some nodes, step, time, print JSON. See README.md next to this file.
//
// Only their public members are used. Their FastCorotFEM::step() hard-codes two Gauss-Seidel
// sweeps over the volume constraints (seed 003 §5, Alg. 2); step_body() below repeats its exact
// sequence with the sweep count as an option, so "--sweeps 2" is their demo's step.
//
// Index spaces: the mesh files and --fixed/--positions-out use ORIGINAL node indices; their
// solver needs the fixed nodes at the front of the arrays (their TetModel::fixVertices swaps
// them there), so everything handed to FastCorotFEM is in SIMULATED order. The two
// permutations below are the only place where the spaces meet.
//
// Exit status: 0 success, 2 bad arguments or input files (message "file:line: ..." on stderr),
// 1 when the solver refuses the mesh (initialize() returns false for an inverted rest tet).

#include "FastCorotFEM.h"  // theirs, from the exported snapshot (-isystem, so their warnings stay quiet)

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Thrown for anything the user can fix (arguments, files); main() turns it into exit status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every option with its default; the defaults are their demo's material and time step
// (main.cpp: E = 1e6, nu = 0.33, rho = 1000, dt = 10 ms).
struct Options {
  std::string mesh_prefix;    // PREFIX.node / PREFIX.ele (required)
  std::string fixed_file;     // original node indices held fixed; empty: nothing fixed
  double dt = 0.01;           // time step [s]
  double youngs = 1e6;        // Young's modulus E [Pa]
  double poisson = 0.33;      // Poisson's ratio nu, in (-1, 0.5)
  double density = 1000.0;    // rho [kg/m^3]
  int sweeps = 1;             // Gauss-Seidel sweeps over the volume constraints per step (theirs: 2)
  int steps = 100;            // timed steps
  int warmup = 1;             // untimed steps before timing (first-touch of their buffers)
  int bodies = 1;             // independent copies of the mesh; one timed step steps all of them
  std::string positions_out;  // final positions of body 0 in original order; empty: not written
};

const char* const usage_text =
    "usage: fastcorot_peer --mesh PREFIX [--fixed FILE] [--dt 0.01] [--youngs 1e6]\n"
    "                      [--poisson 0.33] [--density 1000] [--sweeps 1] [--steps 100]\n"
    "                      [--warmup 1] [--bodies 1] [--positions-out FILE] [--help]\n"
    "Steps the FastCorotatedFEM solver (Kugelstadt et al. 2018) headless and prints one JSON\n"
    "object with the per-step wall times. PREFIX.node/.ele are 0-based TetGen files; FILE for\n"
    "--fixed lists 0-based node indices; --positions-out writes body 0's final positions,\n"
    "one \"x y z\" line per node in the original order.\n";

// ---------------------------------------------------------------------------------------------
// Command line

double parse_double(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value))
    throw InputError(flag + ": '" + text + "' is not a finite number");
  return value;
}

int parse_int(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < -2147483647L || value > 2147483647L)
    throw InputError(flag + ": '" + text + "' is not an integer");
  return static_cast<int>(value);
}

// Returns false when --help was asked for (usage already printed).
bool parse_arguments(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(usage_text, stdout);
      return false;
    }
    if (i + 1 >= argc) throw InputError("'" + flag + "' needs a value or is unknown (see --help)");
    const std::string value = argv[++i];
    if (flag == "--mesh") options.mesh_prefix = value;
    else if (flag == "--fixed") options.fixed_file = value;
    else if (flag == "--dt") options.dt = parse_double(flag, value);
    else if (flag == "--youngs") options.youngs = parse_double(flag, value);
    else if (flag == "--poisson") options.poisson = parse_double(flag, value);
    else if (flag == "--density") options.density = parse_double(flag, value);
    else if (flag == "--sweeps") options.sweeps = parse_int(flag, value);
    else if (flag == "--steps") options.steps = parse_int(flag, value);
    else if (flag == "--warmup") options.warmup = parse_int(flag, value);
    else if (flag == "--bodies") options.bodies = parse_int(flag, value);
    else if (flag == "--positions-out") options.positions_out = value;
    else throw InputError("unknown flag '" + flag + "' (see --help)");
  }
  if (options.mesh_prefix.empty()) throw InputError("--mesh PREFIX is required (see --help)");
  if (!(options.dt > 0.0)) throw InputError("--dt must be positive");
  if (!(options.youngs > 0.0)) throw InputError("--youngs must be positive");
  // nu = 0.5 makes lambda infinite and nu <= -1 makes mu non-positive.
  if (!(options.poisson > -1.0 && options.poisson < 0.5)) throw InputError("--poisson must lie in (-1, 0.5)");
  if (!(options.density > 0.0)) throw InputError("--density must be positive");
  if (options.sweeps < 0) throw InputError("--sweeps must be >= 0");
  if (options.steps < 1) throw InputError("--steps must be >= 1");
  if (options.warmup < 0) throw InputError("--warmup must be >= 0");
  if (options.bodies < 1) throw InputError("--bodies must be >= 1");
  return true;
}

// ---------------------------------------------------------------------------------------------
// TetGen input. Our own small reader (theirs prints to stdout and ignores malformed lines):
// '#' starts a comment, blank lines are skipped, every record must have exactly the number of
// fields its header announces, and node indices must run 0, 1, 2, ... in order.

// Reads the next non-blank, comment-stripped line as tokens; false at end of file.
bool next_record(std::ifstream& in, const std::string& path, int& line_number, std::vector<std::string>& tokens) {
  std::string line;
  while (std::getline(in, line)) {
    ++line_number;
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    std::istringstream fields(line);
    tokens.clear();
    for (std::string token; fields >> token;) tokens.push_back(token);
    if (!tokens.empty()) return true;
  }
  if (in.bad()) throw InputError(path + ": read error");
  return false;
}

[[noreturn]] void malformed(const std::string& path, int line_number, const std::string& what) {
  throw InputError(path + ":" + std::to_string(line_number) + ": " + what);
}

long record_integer(const std::string& path, int line_number, const std::string& token, const char* what) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(token.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) malformed(path, line_number, std::string(what) + " '" + token + "' is not an integer");
  return value;
}

double record_double(const std::string& path, int line_number, const std::string& token, const char* what) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(value))
    malformed(path, line_number, std::string(what) + " '" + token + "' is not a finite number");
  return value;
}

std::ifstream open_input(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open for reading");
  return in;
}

// Header "n 3 attributes markers"; record "i x y z [attributes] [marker]".
std::vector<Vector3r> read_node_file(const std::string& path) {
  std::ifstream in = open_input(path);
  int line_number = 0;
  std::vector<std::string> tokens;
  if (!next_record(in, path, line_number, tokens)) malformed(path, line_number + 1, "missing header 'count 3 attributes markers'");
  if (tokens.size() < 2 || tokens.size() > 4) malformed(path, line_number, "header must be 'count 3 [attributes [markers]]'");
  const long count = record_integer(path, line_number, tokens[0], "node count");
  const long dimension = record_integer(path, line_number, tokens[1], "dimension");
  const long attributes = tokens.size() > 2 ? record_integer(path, line_number, tokens[2], "attribute count") : 0;
  const long markers = tokens.size() > 3 ? record_integer(path, line_number, tokens[3], "marker flag") : 0;
  if (count < 1 || count > 100000000) malformed(path, line_number, "node count " + std::to_string(count) + " out of range");
  if (dimension != 3) malformed(path, line_number, "dimension must be 3, not " + std::to_string(dimension));
  if (attributes < 0 || markers < 0 || markers > 1) malformed(path, line_number, "bad attribute count or marker flag");
  const std::size_t fields = static_cast<std::size_t>(4 + attributes + markers);

  std::vector<Vector3r> nodes(static_cast<std::size_t>(count));
  for (long node = 0; node < count; ++node) {
    if (!next_record(in, path, line_number, tokens))
      malformed(path, line_number + 1, "file ends after " + std::to_string(node) + " of " + std::to_string(count) + " nodes");
    if (tokens.size() != fields)
      malformed(path, line_number, "expected " + std::to_string(fields) + " fields, found " + std::to_string(tokens.size()));
    if (record_integer(path, line_number, tokens[0], "node index") != node)
      malformed(path, line_number, "node index " + tokens[0] + " where " + std::to_string(node) + " was expected (0-based, in order)");
    for (int axis = 0; axis < 3; ++axis)
      nodes[static_cast<std::size_t>(node)][axis] = record_double(path, line_number, tokens[1 + axis], "coordinate");
  }
  if (next_record(in, path, line_number, tokens)) malformed(path, line_number, "extra record after the announced nodes");
  return nodes;
}

// Header "m 4 attributes"; record "i a b c d [attributes]", 0-based node indices.
std::vector<std::vector<int>> read_ele_file(const std::string& path, std::size_t node_count) {
  std::ifstream in = open_input(path);
  int line_number = 0;
  std::vector<std::string> tokens;
  if (!next_record(in, path, line_number, tokens)) malformed(path, line_number + 1, "missing header 'count 4 attributes'");
  if (tokens.size() < 2 || tokens.size() > 3) malformed(path, line_number, "header must be 'count 4 [attributes]'");
  const long count = record_integer(path, line_number, tokens[0], "tet count");
  const long corners = record_integer(path, line_number, tokens[1], "nodes per tet");
  const long attributes = tokens.size() > 2 ? record_integer(path, line_number, tokens[2], "attribute count") : 0;
  if (count < 1 || count > 400000000) malformed(path, line_number, "tet count " + std::to_string(count) + " out of range");
  if (corners != 4) malformed(path, line_number, "only linear tets (4 nodes) are supported, not " + std::to_string(corners));
  if (attributes < 0) malformed(path, line_number, "bad attribute count");
  const std::size_t fields = static_cast<std::size_t>(5 + attributes);

  std::vector<std::vector<int>> tets(static_cast<std::size_t>(count), std::vector<int>(4));
  for (long tet = 0; tet < count; ++tet) {
    if (!next_record(in, path, line_number, tokens))
      malformed(path, line_number + 1, "file ends after " + std::to_string(tet) + " of " + std::to_string(count) + " tets");
    if (tokens.size() != fields)
      malformed(path, line_number, "expected " + std::to_string(fields) + " fields, found " + std::to_string(tokens.size()));
    if (record_integer(path, line_number, tokens[0], "tet index") != tet)
      malformed(path, line_number, "tet index " + tokens[0] + " where " + std::to_string(tet) + " was expected (0-based, in order)");
    for (int corner = 0; corner < 4; ++corner) {
      const long node = record_integer(path, line_number, tokens[1 + corner], "node index");
      if (node < 0 || static_cast<std::size_t>(node) >= node_count)
        malformed(path, line_number, "node index " + std::to_string(node) + " outside [0, " + std::to_string(node_count) + ")");
      tets[static_cast<std::size_t>(tet)][static_cast<std::size_t>(corner)] = static_cast<int>(node);
    }
  }
  if (next_record(in, path, line_number, tokens)) malformed(path, line_number, "extra record after the announced tets");
  return tets;
}

// Whitespace-separated original node indices; '#' comments allowed.
std::vector<int> read_fixed_file(const std::string& path, std::size_t node_count) {
  std::ifstream in = open_input(path);
  int line_number = 0;
  std::vector<std::string> tokens;
  std::vector<int> fixed;
  std::vector<char> seen(node_count, 0);
  while (next_record(in, path, line_number, tokens)) {
    for (const std::string& token : tokens) {
      const long node = record_integer(path, line_number, token, "node index");
      if (node < 0 || static_cast<std::size_t>(node) >= node_count)
        malformed(path, line_number, "node index " + std::to_string(node) + " outside [0, " + std::to_string(node_count) + ")");
      if (seen[static_cast<std::size_t>(node)]) malformed(path, line_number, "node " + std::to_string(node) + " listed twice");
      seen[static_cast<std::size_t>(node)] = 1;
      fixed.push_back(static_cast<int>(node));
    }
  }
  return fixed;
}

// ---------------------------------------------------------------------------------------------
// The scene in their index space

struct SimulatedMesh {
  std::vector<Vector3r> rest_positions;   // simulated order: the fixed nodes first
  std::vector<std::vector<int>> tets;     // simulated node indices, tet order unchanged
  std::vector<int> original_of_simulated; // simulated node -> original node
  int fixed_count = 0;
};

// Their solver treats nodes [0, nFixedVertices) as fixed, so the fixed nodes move to the front
// (in the order the --fixed file lists them) and the free ones follow in original order.
SimulatedMesh permute_fixed_first(const std::vector<Vector3r>& original_positions,
                                  const std::vector<std::vector<int>>& original_tets,
                                  const std::vector<int>& fixed_original) {
  const std::size_t node_count = original_positions.size();
  SimulatedMesh mesh;
  mesh.fixed_count = static_cast<int>(fixed_original.size());
  std::vector<char> is_fixed(node_count, 0);
  for (int node : fixed_original) is_fixed[static_cast<std::size_t>(node)] = 1;
  mesh.original_of_simulated = fixed_original;
  for (std::size_t node = 0; node < node_count; ++node)
    if (!is_fixed[node]) mesh.original_of_simulated.push_back(static_cast<int>(node));

  std::vector<int> simulated_of_original(node_count);
  mesh.rest_positions.resize(node_count);
  for (std::size_t simulated = 0; simulated < node_count; ++simulated) {
    const auto original = static_cast<std::size_t>(mesh.original_of_simulated[simulated]);
    simulated_of_original[original] = static_cast<int>(simulated);
    mesh.rest_positions[simulated] = original_positions[original];
  }
  mesh.tets = original_tets;
  for (std::vector<int>& tet : mesh.tets)
    for (int& node : tet) node = simulated_of_original[static_cast<std::size_t>(node)];
  return mesh;
}

// A free node in no tet gets zero mass, which makes their system matrix singular; their
// initialize() does not check the Cholesky status, so we refuse such meshes up front.
void check_free_nodes_are_used(const std::vector<std::vector<int>>& original_tets, const std::vector<int>& fixed_original,
                               std::size_t node_count, const std::string& ele_path) {
  std::vector<char> used(node_count, 0);
  for (int node : fixed_original) used[static_cast<std::size_t>(node)] = 1;
  for (const std::vector<int>& tet : original_tets)
    for (int node : tet) used[static_cast<std::size_t>(node)] = 1;
  for (std::size_t node = 0; node < node_count; ++node)
    if (!used[node])
      throw InputError(ele_path + ": free node " + std::to_string(node) + " belongs to no tet (its mass would be zero)");
}

// Signed rest volume of a tet, same convention as their initialize() (det(Dm)/6 > 0 required).
double signed_volume(const std::vector<Vector3r>& positions, const std::vector<int>& tet) {
  const Vector3r e1 = positions[static_cast<std::size_t>(tet[1])] - positions[static_cast<std::size_t>(tet[0])];
  const Vector3r e2 = positions[static_cast<std::size_t>(tet[2])] - positions[static_cast<std::size_t>(tet[0])];
  const Vector3r e3 = positions[static_cast<std::size_t>(tet[3])] - positions[static_cast<std::size_t>(tet[0])];
  return e1.cross(e2).dot(e3) / 6.0;
}

// One body: their solver object plus the state their step() receives by reference.
struct Body {
  FastCorotFEM solver;
  std::vector<Vector3r> positions;   // simulated order
  std::vector<Vector3r> velocities;  // simulated order
};

// Their FastCorotFEM::step() (seed 003 Alg. 2) with the number of volume-constraint sweeps as a
// parameter instead of their hard-coded 2; the order of operations is theirs, line for line.
void step_body(Body& body, const std::vector<std::vector<int>>& tets, double dt, int sweeps) {
  FastCorotFEM& solver = body.solver;
  std::vector<Vector3r>& x = body.positions;
  std::vector<Vector3r>& v = body.velocities;
  // Explicit Euler prediction with gravity along -y (their constant 9.81).
  for (int i = solver.nFixedVertices; i < solver.nVerts; ++i) {
    v[static_cast<std::size_t>(i)].y() -= dt * 9.81;
    solver.x_old[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(i)];
    x[static_cast<std::size_t>(i)] += dt * v[static_cast<std::size_t>(i)];
  }
  // Corotated elastic part: local rotation fit + prefactored global solve (seed 003 §4).
  solver.solveOptimizationProblem(x, tets);
  // Volume part: XPBD-style constraints whose Lagrange multipliers restart at zero every step.
  for (auto& phase : solver.kappa_phases)
    for (auto& kappa : phase) kappa = Scalarf8(0.0f);
  for (int sweep = 0; sweep < sweeps; ++sweep) solver.solveVolumeConstraints(x, tets);
  for (int i = solver.nFixedVertices; i < solver.nVerts; ++i)
    v[static_cast<std::size_t>(i)] = (x[static_cast<std::size_t>(i)] - solver.x_old[static_cast<std::size_t>(i)]) / dt;
  solver.time += dt;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// Written to PATH.tmp and renamed, so a reader never sees a half-written file.
void write_positions(const std::string& path, const Body& body, const std::vector<int>& original_of_simulated) {
  std::vector<const Vector3r*> by_original(body.positions.size());
  for (std::size_t simulated = 0; simulated < body.positions.size(); ++simulated)
    by_original[static_cast<std::size_t>(original_of_simulated[simulated])] = &body.positions[simulated];
  const std::string temporary = path + ".tmp";
  std::FILE* out = std::fopen(temporary.c_str(), "w");
  if (out == nullptr) throw InputError(temporary + ": cannot open for writing");
  for (const Vector3r* position : by_original)
    std::fprintf(out, "%.17g %.17g %.17g\n", (*position)[0], (*position)[1], (*position)[2]);
  const bool written = std::ferror(out) == 0;
  if (std::fclose(out) != 0 || !written) {
    std::remove(temporary.c_str());
    throw InputError(temporary + ": write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw InputError(path + ": cannot rename " + temporary + " onto it");
}

int run(const Options& options) {
  const std::string node_path = options.mesh_prefix + ".node";
  const std::string ele_path = options.mesh_prefix + ".ele";
  const std::vector<Vector3r> original_positions = read_node_file(node_path);
  const std::vector<std::vector<int>> original_tets = read_ele_file(ele_path, original_positions.size());
  const std::vector<int> fixed_original =
      options.fixed_file.empty() ? std::vector<int>() : read_fixed_file(options.fixed_file, original_positions.size());
  if (fixed_original.size() == original_positions.size())
    throw InputError(options.fixed_file + ": every node is fixed; nothing to simulate");
  check_free_nodes_are_used(original_tets, fixed_original, original_positions.size(), ele_path);

  // Zero-volume tets pass their `rest_volume < 0` test and then divide by zero; report them
  // (and inverted ones, for a useful message) with the tet index before calling initialize().
  for (std::size_t tet = 0; tet < original_tets.size(); ++tet) {
    const double volume = signed_volume(original_positions, original_tets[tet]);
    if (!(volume > 0.0)) {
      std::fprintf(stderr, "fastcorot_peer: %s: tet %zu has rest volume %.6g (%s); their solver needs positive volumes\n",
                   ele_path.c_str(), tet, volume, volume < 0.0 ? "inverted" : "degenerate");
      return 1;
    }
  }

  const SimulatedMesh mesh = permute_fixed_first(original_positions, original_tets, fixed_original);
  const double mu = options.youngs / (2.0 * (1.0 + options.poisson));
  const double lambda = options.youngs * options.poisson / ((1.0 + options.poisson) * (1.0 - 2.0 * options.poisson));

  // K independent instances, each initialized on its own (own factorization and buffers), as a
  // scene with K separate objects would be.
  std::vector<Body> bodies(static_cast<std::size_t>(options.bodies));
  for (Body& body : bodies) {
    body.positions = mesh.rest_positions;
    body.velocities.assign(mesh.rest_positions.size(), Vector3r::Zero());
    if (!body.solver.initialize(body.positions, mesh.tets, Quaternionr::Identity(), mesh.fixed_count, options.density, mu,
                                lambda, options.dt)) {
      std::fprintf(stderr, "fastcorot_peer: FastCorotFEM::initialize failed (inverted rest tet)\n");
      return 1;
    }
  }

  auto step_all = [&] {
    for (Body& body : bodies) step_body(body, mesh.tets, options.dt, options.sweeps);
  };
  for (int step = 0; step < options.warmup; ++step) step_all();
  std::vector<double> step_seconds(static_cast<std::size_t>(options.steps));
  for (double& seconds : step_seconds) {
    const auto start = std::chrono::steady_clock::now();
    step_all();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // Their solver works in float internally; a blow-up shows as NaN/inf. Say so rather than
  // report timings of garbage silently (stdout stays the JSON object).
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    const bool finite = std::all_of(bodies[b].positions.begin(), bodies[b].positions.end(),
                                    [](const Vector3r& p) { return p.allFinite(); });
    if (!finite) std::fprintf(stderr, "fastcorot_peer: warning: body %zu has non-finite positions after the run\n", b);
  }
  if (!options.positions_out.empty()) write_positions(options.positions_out, bodies.front(), mesh.original_of_simulated);

  std::printf("{\"tets\":%zu, \"nodes\":%zu, \"fixed\":%d, \"bodies\":%d, \"sweeps\":%d, \"steps\":%d, \"step_seconds\":[",
              mesh.tets.size(), mesh.rest_positions.size(), mesh.fixed_count, options.bodies, options.sweeps, options.steps);
  for (std::size_t i = 0; i < step_seconds.size(); ++i) std::printf("%s%.9g", i == 0 ? "" : ",", step_seconds[i]);
  std::printf("], \"median_step_seconds\":%.9g}\n", median_of(step_seconds));
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options;
    if (!parse_arguments(argc, argv, options)) return 0;
    return run(options);
  } catch (const InputError& error) {
    std::fprintf(stderr, "fastcorot_peer: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fastcorot_peer: %s\n", error.what());
    return 1;
  }
}

// Runs every file of a fuzz corpus folder through its target's entry function, so that the
// seeds and every former fuzzer finding stay regression tests in CTest with any compiler.
//   replay_fuzz_corpus <target> <folder>
// Exits 1 naming the file when an input makes the entry function throw (a crash or a
// sanitizer report ends the process by itself), 2 for a bad command line.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: replay_fuzz_corpus <target> <corpus folder>\n";
    return 2;
  }
  const cholsim::fuzz::FuzzTarget* target = cholsim::fuzz::find_fuzz_target(argv[1]);
  if (target == nullptr || !std::filesystem::is_directory(argv[2])) {
    std::cerr << "replay_fuzz_corpus: unknown target '" << argv[1] << "' or no folder " << argv[2] << '\n';
    return 2;
  }
  std::vector<std::filesystem::path> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(argv[2])) {
    if (entry.is_regular_file()) inputs.push_back(entry.path());
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::cerr << "replay_fuzz_corpus: " << argv[2] << " holds no inputs\n";
    return 2;
  }
  for (const auto& input : inputs) {
    std::ifstream in(input, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      target->run(bytes);
    } catch (const std::exception& error) {
      std::cerr << input.string() << ": escaped the reader's own errors: " << error.what() << '\n';
      return 1;
    }
  }
  std::cout << argv[1] << ": " << inputs.size() << " inputs replayed\n";
  return 0;
}

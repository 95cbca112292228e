#pragma once
// The entry functions of the reader fuzzers (issue 23, item 4). Each takes one input as bytes,
// hands it to a cholsim reader the way a command would, and returns normally when the reader
// accepts it or rejects it with its own error type (a MatrixMarketError, MeshFormatError,
// InvalidMeshError or SceneError: the errors the CLI turns into exit 2). Anything else that
// escapes — std::bad_alloc, a library exception, a crash, a sanitizer report — is a finding.
//
// The libFuzzer programs (fuzz_<target>, built with clang and -DCHOLSIM_FUZZ=ON) and the
// corpus replay test (replay_fuzz_corpus, built by every compiler) call these same functions.
#include <span>
#include <string_view>

namespace cholsim::fuzz {

struct FuzzTarget {
  std::string_view name;                 ///< also the folder tests/fuzz/corpus/<name>
  void (*run)(std::string_view input);
};

/// Every target: matrix_market, tetgen, gmsh, medit, off, obj, stl, scene.
std::span<const FuzzTarget> fuzz_targets();

/// The target called `name`; nullptr if there is none.
const FuzzTarget* find_fuzz_target(std::string_view name);

}  // namespace cholsim::fuzz

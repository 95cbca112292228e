// One libFuzzer program per target: CHOLSIM_FUZZ_TARGET names the entry function
// (fuzz_targets.hpp) this build of the file drives.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cholsim::fuzz::FuzzTarget* const target = cholsim::fuzz::find_fuzz_target(CHOLSIM_FUZZ_TARGET);
  if (target == nullptr) std::abort();
  target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

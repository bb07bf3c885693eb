// libFuzzer target: the policy reader and validator. The properties checked
// on each input are in policy_check.h; a violated one aborts, so libFuzzer
// reports it like a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "policy_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem =
      cordon::fuzz::check_policy_input(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "property violated: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}

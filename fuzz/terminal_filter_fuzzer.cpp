// libFuzzer target: the terminal output filter (src/core/terminal_filter.h).
// The input format and the properties checked are in terminal_filter_check.h;
// a violated property aborts, so libFuzzer reports it like a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "terminal_filter_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem =
      cordon::fuzz::check_terminal_filter_input(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "property violated: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}

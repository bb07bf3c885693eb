// libFuzzer target: the network broker's request parsers and destination
// decision (src/broker/http_request.h, socks5.h, decision.h). The properties
// are in proxy_request_check.h; a violated one aborts, so libFuzzer reports
// it like a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "proxy_request_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem =
      cordon::fuzz::check_proxy_request_input(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "property violated: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}

// backend.h — the macOS Seatbelt backend on core's compile driver.
//
// read_host_facts() reads a Mac (launcher_apple.cpp) when this binary runs on
// one, and otherwise describes an imaginary Mac (example_macos_host_facts)
// whose plans can be inspected, never launched. build() is
// build_macos_plan(); launch() runs a plan through sandbox-exec on a Mac and
// refuses with unsupported_platform elsewhere.
#pragma once

#include "cordon/backend.h"

namespace cordon::macos_impl {

class macos_backend final : public sandbox_backend {
 public:
  std::string_view name() const noexcept override;
  std::uint32_t plan_format_version() const noexcept override;
  std::string_view platform() const noexcept override { return "macos"; }
  isolation_level isolation() const noexcept override { return isolation_level::os_sandbox; }
  host_facts read_host_facts(const compile_options& options, bool deep = false) const override;
  // A record of a Mac (facts_record.cpp): never `native`, so its plans do not launch.
  result<host_facts> load_host_facts(std::string_view record, const compile_options& options) const override;
  result<std::string> record_host_facts(const host_facts& facts) const override;
  result<backend_build> build(const sandbox_policy& normalized, const host_facts& facts) const override;
  result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const override;
};

// The one macOS backend of this process.
const macos_backend& the_macos_backend();

}  // namespace cordon::macos_impl

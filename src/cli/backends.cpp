// backends.cpp — the CLI's backend registry (backends.h). The one place that
// names the backends linked into this CLI besides the host's.
#include "cli/backends.h"

#include <fstream>
#include <sstream>

#include "cordon/windows/compile.h"
#include "macos/backend.h"

namespace cordon::cli {
namespace {

struct linked_backend {
  std::string_view platform;
  const sandbox_backend& (*get)();
};

const sandbox_backend& macos_backend() { return macos_impl::the_macos_backend(); }
const sandbox_backend& windows_backend() { return windows::the_windows_backend(); }

// The backends of other platforms (a backend of this host's platform is never
// taken from here: make_host_backend() chooses it).
constexpr linked_backend kLinked[] = {{"macos", macos_backend}, {"windows", windows_backend}};

}  // namespace

const std::vector<std::string>& registered_platforms() {
  static const std::vector<std::string> platforms = [] {
    std::vector<std::string> out{std::string(running_platform())};
    for (const auto& b : kLinked) {
      if (b.platform != running_platform()) out.emplace_back(b.platform);
    }
    return out;
  }();
  return platforms;
}

std::shared_ptr<const sandbox_backend> backend_for_platform(std::string_view platform) {
  if (platform == running_platform()) return make_host_backend();
  for (const auto& b : kLinked) {
    if (b.platform == platform) return std::shared_ptr<const sandbox_backend>(&b.get(), [](const sandbox_backend*) {});
  }
  return nullptr;
}

result<platform_facts> facts_for(const sandbox_backend& backend, const std::string& facts_file,
                                 const compile_options& options, bool deep) {
  if (facts_file.empty()) {
    const bool here = backend.platform() == running_platform();
    return platform_facts{backend.read_host_facts(options, deep), here ? facts_source::this_host : facts_source::reference};
  }
  std::ifstream in(facts_file, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) {
    return make_error(error_code::io_error, "cannot read the host facts file " + facts_file, facts_file);
  }
  auto loaded = backend.load_host_facts(text.str(), options);
  if (!loaded) return std::move(loaded).error_value();
  return platform_facts{std::move(*loaded), facts_source::recorded};
}

std::string describe_source(facts_source source, const std::string& facts_file) {
  switch (source) {
    case facts_source::this_host: return "this host";
    case facts_source::reference: return "reference facts (not this host)";
    case facts_source::recorded: return "recorded facts " + facts_file + " (not this host)";
  }
  return "";
}

}  // namespace cordon::cli

// backends.h — the backend registry of the CLI: which backend compiles for
// each platform `--platform` names, and the host facts it compiles on (this
// host's, its reference facts, or a recorded facts file: docs/host-facts.md).
// Every platform goes through the one driver (cordon/backend.h); nothing in
// the CLI knows what a platform's facts or plans contain.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/backend.h"
#include "cordon/result.h"

namespace cordon::cli {

// The platforms --platform accepts: this host's first, then the others whose
// backends this CLI links (their plans compile here and launch only there).
const std::vector<std::string>& registered_platforms();

// The backend for `platform` (this host's: make_host_backend()), or nullptr
// when this CLI has none.
std::shared_ptr<const sandbox_backend> backend_for_platform(std::string_view platform);

// Where the facts a command compiles on came from.
enum class facts_source { this_host, reference, recorded };

struct platform_facts {
  host_facts facts;
  facts_source source = facts_source::this_host;
};

// The facts `backend` compiles on: read from this host when it is this host's
// platform and no file is given (`deep` as read_host_facts takes it), the
// backend's reference facts for another platform, or `facts_file` loaded by
// the backend (load_host_facts). Errors: io_error (the file cannot be read),
// and load_host_facts' (parse_error, unsupported_platform).
result<platform_facts> facts_for(const sandbox_backend& backend, const std::string& facts_file,
                                 const compile_options& options, bool deep);

// "this host", "reference facts (not this host)", "recorded facts FILE (not this host)".
std::string describe_source(facts_source source, const std::string& facts_file);

}  // namespace cordon::cli

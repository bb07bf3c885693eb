// host_facts.h — what the macOS plan compiler needs to know about a Mac.
//
// The compiler is ordinary portable C++: it never asks the running host
// anything. On a Mac the launcher fills these facts from the system
// (read_macos_host_facts() in launcher_apple.cpp); on any other host a caller
// that wants to show "what a macOS plan would be" uses example_macos_host_facts()
// and every Seatbelt-backed level is then reported `unverified`
// (docs/macos-backend.md, "What is verified where").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cordon::macos_impl {

// One top-level symlink into /private ("/var" -> "/private/var"). Seatbelt
// checks the resolved path, so rules name the target; the link spelling is
// emitted as well so that a rule never depends on which spelling a path takes.
struct path_alias {
  std::string link;    // e.g. "/var"
  std::string target;  // e.g. "/private/var"
};

struct macos_host_facts {
  // True only when these facts were read on a Mac by the launcher. When false,
  // the plan is for inspection: every Seatbelt-backed level is `unverified`.
  bool native = false;
  std::string os_version;  // "14.5"; informational (SBPL vocabulary changes between versions)
  std::string home;        // absolute, canonical; resolves "{home}"
  std::string workspace;   // absolute, canonical; resolves "{workspace}"; may be empty
  // The per-user temporary directory (confstr _CS_DARWIN_USER_TEMP_DIR), canonical
  // (/private/var/folders/..). The per-run directory "{run_tmp}" is created under
  // it by the launcher.
  std::string user_temp_dir;
  std::vector<path_alias> aliases;  // /var, /tmp, /etc -> /private/...
  // Homebrew's program directories that exist on this Mac (/opt/homebrew/bin
  // and sbin on Apple silicon; /usr/local/bin is on the built-in PATH
  // already). The plan puts them first on a PATH the policy sets.
  std::vector<std::string> homebrew_bin;
  std::string sandbox_exec = "/usr/bin/sandbox-exec";
  bool sandbox_exec_present = false;
  // Loopback TCP port of cordon's network broker for a `filtered` policy. The
  // broker listens before the plan is compiled (its port is in the profile
  // text); 0 = not chosen yet, which refuses a filtered policy.
  std::uint16_t broker_port = 0;
};

// The standard aliases of every macOS release cordon targets.
std::vector<path_alias> standard_macos_aliases();

// Fixed, documented facts of an imaginary Mac, for explain/probe on another
// host and for golden tests: macOS 14.5, user temp dir
// /private/var/folders/zz/cordon/T, broker port 3128, sandbox-exec assumed
// present, Homebrew in /opt/homebrew (Apple silicon), native = false. `home` and `workspace` are taken as given (empty
// workspace: "{workspace}" is then an error at compile).
macos_host_facts example_macos_host_facts(std::string home, std::string workspace);

// The spelling Seatbelt sees for an absolute path: a leading alias link is
// replaced by its target ("/tmp/x" -> "/private/tmp/x"). Other paths are
// returned unchanged. Lexical only: it does not follow other symlinks (the
// launcher on a Mac resolves policy roots with realpath(3) first).
std::string canonical_macos_path(const std::string& path, const std::vector<path_alias>& aliases);

// The link spelling of a canonical path under an alias target
// ("/private/var/x" -> "/var/x"), or empty when there is none.
std::string alias_spelling(const std::string& canonical, const std::vector<path_alias>& aliases);

// True when `path` is `root` or lies beneath it, component-wise.
bool macos_path_within(const std::string& path, const std::string& root);

}  // namespace cordon::macos_impl

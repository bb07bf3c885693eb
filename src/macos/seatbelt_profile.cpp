// seatbelt_profile.cpp — writes the deny-default profile (see seatbelt_profile.h).
#include "macos/seatbelt_profile.h"

#include <algorithm>
#include <map>
#include <set>

#include "macos/platform_defaults.h"
#include "macos/sbpl_text.h"

namespace cordon::macos_impl {
namespace {

sbpl_expr subpath(sbpl_expr arg) { return sbpl_form("subpath", {std::move(arg)}); }
sbpl_expr literal(sbpl_expr arg) { return sbpl_form("literal", {std::move(arg)}); }
sbpl_expr require_not(sbpl_expr f) { return sbpl_form("require-not", {std::move(f)}); }
// (local unix-socket PATH-FILTER) or (remote unix-socket PATH-FILTER).
sbpl_expr unix_socket(std::string_view side, sbpl_expr path_filter) {
  return sbpl_form(side, {sbpl_expr::symbol("unix-socket"), std::move(path_filter)});
}

// `any` OR'ed, minus every exclusion; a lone member needs no require-any.
sbpl_expr allowed_unless(std::vector<sbpl_expr> any, const std::vector<sbpl_expr>& exclusions) {
  sbpl_expr union_of = any.size() == 1 ? std::move(any.front()) : sbpl_form("require-any", std::move(any));
  if (exclusions.empty()) return union_of;
  std::vector<sbpl_expr> all{std::move(union_of)};
  all.insert(all.end(), exclusions.begin(), exclusions.end());
  return sbpl_form("require-all", std::move(all));
}

sbpl_expr rule(std::string_view verb, std::vector<std::string_view> operations, std::vector<sbpl_expr> filters) {
  std::vector<sbpl_expr> members;
  for (auto op : operations) members.push_back(sbpl_expr::symbol(std::string(op)));
  for (auto& f : filters) members.push_back(std::move(f));
  return sbpl_form(verb, std::move(members));
}

// A comment line's text: printable ASCII only, so a policy name cannot end
// the comment and start a rule.
std::string comment_safe(const std::string& text) {
  std::string out;
  for (const char c : text) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

class profile_writer {
 public:
  explicit profile_writer(const profile_input& in) : in_(in) {}

  result<generated_profile> write() {
    if (in_.network == network_mode::filtered && in_.broker_port == 0) {
      return make_error(error_code::invalid_policy, "filtered network needs the broker's port before the profile is written");
    }
    collect_paths();
    params_.push_back({terminal_parameter, "/dev/ttys000", true,
                       "the terminal the command inherited (/dev/null when it has none)"});
    if (in_.protect_vcs_metadata) {
      if (auto vcs = vcs_rules(); !vcs) return std::move(vcs).error_value();
    }
    return generated_profile{render(), std::move(params_)};
  }

 private:
  // The spellings Seatbelt may see for a canonical path.
  std::vector<std::string> spellings(const std::string& canonical) const {
    std::vector<std::string> out{canonical};
    if (auto link = alias_spelling(canonical, in_.aliases); !link.empty()) out.push_back(link);
    return out;
  }

  sbpl_expr param(const std::string& prefix, const std::string& value, const std::string& meaning) {
    const std::string key = prefix + "_" + std::to_string(counters_[prefix]++);
    params_.push_back({key, value, false, meaning});
    return sbpl_param(key);
  }

  void collect_paths() {
    if (in_.read == read_mode::full) {
      read_any_.push_back(subpath(sbpl_string("/")));
    } else if (in_.platform_defaults) {
      for (const auto& d : platform_read_defaults()) {
        read_any_.push_back(d.subtree ? subpath(sbpl_string(d.path)) : literal(sbpl_string(d.path)));
      }
    }
    if (in_.platform_defaults) {
      for (const auto& d : platform_write_defaults()) {
        write_any_.push_back(d.subtree ? subpath(sbpl_string(d.path)) : literal(sbpl_string(d.path)));
      }
    }
    const bool restricted = in_.read == read_mode::restricted;
    for (const auto& p : in_.readable) {
      for (const auto& s : spellings(p)) {
        if (restricted) read_any_.push_back(subpath(param("READ", s, "readable " + p)));
      }
    }
    for (const auto& p : in_.writable) {
      for (const auto& s : spellings(p)) {
        sbpl_expr key = param("WRITE", s, "writable " + p);
        if (restricted) read_any_.push_back(subpath(key));
        socket_roots_.push_back(subpath(key));
        write_any_.push_back(subpath(std::move(key)));
      }
    }
    if (in_.run_tmp) {
      params_.push_back({run_tmp_parameter, in_.run_tmp_example, true, "the per-run temporary directory {run_tmp}"});
      if (restricted) read_any_.push_back(subpath(sbpl_param(run_tmp_parameter)));
      write_any_.push_back(subpath(sbpl_param(run_tmp_parameter)));
      socket_roots_.push_back(subpath(sbpl_param(run_tmp_parameter)));
    }
    for (const auto& p : in_.unix_sockets) {
      for (const auto& s : spellings(p)) socket_listed_.push_back(literal(param("SOCKET", s, "unix socket " + p)));
    }
    for (const auto& p : in_.protected_paths) {
      for (const auto& s : spellings(p)) {
        sbpl_expr key = param("PROTECT", s, "protected read-only " + p);
        if (restricted) read_any_.push_back(subpath(key));
        // subpath and literal both: subpath alone has been reported to leave
        // the first creation of the directory itself open (docs/macos-backend.md).
        write_exclusions_.push_back(require_not(subpath(key)));
        write_exclusions_.push_back(require_not(literal(key)));
        socket_protected_.push_back(subpath(key));
        socket_protected_.push_back(literal(key));
        protect_any_.push_back(subpath(key));
        protect_any_.push_back(literal(std::move(key)));
      }
    }
    for (const auto& p : in_.denied) {
      for (const auto& s : spellings(p)) {
        sbpl_expr key = param("DENY", s, "denied " + p);
        read_exclusions_.push_back(require_not(subpath(key)));
        read_exclusions_.push_back(require_not(literal(key)));
        socket_denied_.push_back(subpath(key));
        socket_denied_.push_back(literal(key));
        deny_any_.push_back(subpath(key));
        deny_any_.push_back(literal(std::move(key)));
      }
    }
    guards();
    parents();
  }

  // Directories from a writable root down to (not including) a protected or
  // denied path below it: written only as themselves, never renamed.
  void guards() {
    std::set<std::string> seen;
    std::vector<std::string> targets = in_.protected_paths;
    targets.insert(targets.end(), in_.denied.begin(), in_.denied.end());
    for (const auto& t : targets) {
      for (const auto& w : in_.writable) {
        if (t == w || !macos_path_within(t, w)) continue;
        for (std::string dir = t.substr(0, t.rfind('/')); macos_path_within(dir, w);
             dir = dir.substr(0, std::max<std::size_t>(dir.rfind('/'), 1))) {
          if (seen.insert(dir).second) {
            for (const auto& s : spellings(dir)) {
              sbpl_expr key = param("GUARD", s, "directory above a protected or denied path: " + dir);
              write_exclusions_.push_back(require_not(literal(key)));
              protect_any_.push_back(literal(std::move(key)));
            }
          }
          if (dir == w || dir == "/") break;
        }
      }
    }
  }

  // The ancestors of every root: stat(2) of each lets realpath(3) and the
  // loader walk to the root (metadata only, never contents).
  void parents() {
    for (const auto& m : platform_metadata_literals()) metadata_any_.push_back(literal(sbpl_string(m)));
    if (in_.read == read_mode::full) return;
    std::set<std::string> seen(platform_metadata_literals().begin(), platform_metadata_literals().end());
    std::vector<std::string> roots = in_.readable;
    roots.insert(roots.end(), in_.writable.begin(), in_.writable.end());
    roots.insert(roots.end(), in_.protected_paths.begin(), in_.protected_paths.end());
    if (in_.run_tmp) roots.push_back(in_.run_tmp_example);
    for (const auto& r : roots) {
      for (std::string dir = r.substr(0, r.rfind('/')); dir.size() > 1; dir = dir.substr(0, dir.rfind('/'))) {
        if (!seen.insert(dir).second) continue;
        if (in_.run_tmp && r == in_.run_tmp_example) {
          // The per-run directory lies under the user temp dir: its parents
          // are fixed facts, written as text.
          metadata_any_.push_back(literal(sbpl_string(dir)));
          continue;
        }
        metadata_any_.push_back(literal(param("PARENT", dir, "parent of a root")));
      }
    }
  }

  result<void> vcs_rules() {
    for (const auto& w : in_.writable) {
      for (const auto& s : spellings(w)) {
        if (!regex_is_writable(s)) {
          return make_error(error_code::invalid_policy,
                            "writable root '" + comment_safe(s) + "' cannot be written into an SBPL regex");
        }
        const std::string prefix = s == "/" ? std::string() : regex_quote(s);
        // Case classes throughout: APFS is case-insensitive by default, so
        // ".GIT/hooks" names ".git/hooks" (docs/macos-backend.md, "The profile").
        const std::string re = regex_case_fold(
            "^" + prefix +
            "(/.*)?/(\\.gitmodules|\\.git|\\.git(/modules/.+)?/(hooks(/.*)?|config|config\\.worktree|commondir))$");
        write_exclusions_.push_back(require_not(sbpl_form("regex", {sbpl_raw_string(re)})));
        protect_any_.push_back(sbpl_form("regex", {sbpl_raw_string(re)}));
      }
    }
    return ok;
  }

  std::string render() const {
    std::vector<std::string> out;
    const auto emit = [&out](const sbpl_expr& e) { out.push_back(render_sbpl(e)); };
    const auto comment = [&out](const std::string& text) { out.push_back(";; " + text); };
    out.push_back("(version 1)");
    out.push_back("(deny default)");
    comment("cordon macos plan for policy \"" + comment_safe(in_.policy_name) + "\"");
    comment("every allow below carries the policy's exclusions; no verdict depends on rule order");

    std::vector<sbpl_expr> read_excl = read_exclusions_;
    std::vector<sbpl_expr> write_excl = read_exclusions_;
    write_excl.insert(write_excl.end(), write_exclusions_.begin(), write_exclusions_.end());

    comment("processes: fork; signals and process info within this sandbox only");
    emit(rule("allow", {"process-fork"}, {}));
    emit(rule("allow", {"signal"}, {sbpl_form("target", {sbpl_expr::symbol("same-sandbox")})}));
    emit(rule("allow", {"process-info*"}, {sbpl_form("target", {sbpl_expr::symbol("same-sandbox")})}));

    comment("filesystem: reads; exec and library mapping of exactly what may be read");
    if (!read_any_.empty()) {
      emit(rule("allow", {"file-read*", "process-exec", "file-map-executable"}, {allowed_unless(read_any_, read_excl)}));
    }
    emit(rule("allow", {"file-read-metadata"}, {allowed_unless(metadata_any_, read_excl)}));
    comment("filesystem: writes");
    if (!write_any_.empty()) emit(rule("allow", {"file-write*"}, {allowed_unless(write_any_, write_excl)}));
    if (!deny_any_.empty() || !protect_any_.empty()) {
      comment("filesystem: denied and protected paths (match nothing the allows above match)");
    }
    if (!deny_any_.empty()) {
      emit(rule("deny", {"file-read*", "file-write*", "process-exec", "file-map-executable"},
                {sbpl_form("require-any", deny_any_)}));
    }
    if (!protect_any_.empty()) emit(rule("deny", {"file-write*"}, {sbpl_form("require-any", protect_any_)}));

    comment("terminal: read and write the one the command inherited; no file-ioctl (no TIOCSTI)");
    emit(rule("allow", {"file-read-data", "file-write-data"},
              {allowed_unless({sbpl_form("require-all", {literal(sbpl_param(terminal_parameter)),
                                                         sbpl_form("vnode-type", {sbpl_expr::symbol("CHARACTER-DEVICE")})})},
                              write_excl)}));
    unix_socket_rules(emit, comment);
    if (in_.platform_defaults) {
      comment("ipc: named POSIX semaphores (Python multiprocessing) and preference reads (CoreFoundation tools)");
      emit(rule("allow", {"ipc-posix-sem"}, {}));
      emit(rule("allow", {"user-preference-read"}, {}));
    }

    comment("ipc: exact Mach services only, no wildcard");
    emit(rule("allow", {"ipc-posix-shm-read-data"},
              {sbpl_form("ipc-posix-name", {sbpl_string("apple.shm.notification_center")})}));
    std::vector<sbpl_expr> services;
    for (const auto& name : mach_services_for(in_.network)) services.push_back(sbpl_form("global-name", {sbpl_string(name)}));
    emit(rule("allow", {"mach-lookup"}, std::move(services)));
    std::vector<sbpl_expr> sysctls;
    for (const auto& name : sysctl_read_names()) sysctls.push_back(sbpl_form("sysctl-name", {sbpl_string(name)}));
    for (const auto& p : sysctl_read_prefixes()) sysctls.push_back(sbpl_form("sysctl-name-prefix", {sbpl_string(p)}));
    emit(rule("allow", {"sysctl-read"}, std::move(sysctls)));

    switch (in_.network) {
      case network_mode::denied:
        comment("network: denied (nothing allowed; unix sockets included)");
        break;
      case network_mode::filtered:
        comment("network: filtered; the only way out is cordon's broker on the loopback port");
        emit(rule("allow", {"network-outbound"},
                  {sbpl_form("remote", {sbpl_expr::symbol("ip"),
                                        sbpl_string("localhost:" + std::to_string(in_.broker_port))})}));
        break;
      case network_mode::unrestricted:
        comment("network: unrestricted (IP only; unix sockets stay denied)");
        emit(rule("allow", {"network-outbound"}, {sbpl_form("remote", {sbpl_expr::symbol("ip"), sbpl_string("*:*")})}));
        emit(rule("allow", {"network-inbound"}, {sbpl_form("local", {sbpl_expr::symbol("ip"), sbpl_string("*:*")})}));
        emit(rule("allow", {"network-bind"}, {sbpl_form("local", {sbpl_expr::symbol("ip"), sbpl_string("*:*")})}));
        break;
    }
    std::string text;
    for (const auto& line : out) text += line + "\n";
    return text;
  }

  // AF_UNIX: any socket may be created (a socketpair, an unbound socket
  // reach nothing); bind and accept only inside writable roots, connect
  // there and to the policy's listed sockets; denied paths excluded from
  // both, protected ones from bind.
  template <typename Emit, typename Comment>
  void unix_socket_rules(const Emit& emit, const Comment& comment) const {
    comment("unix sockets: bind inside writable roots; connect there and to the listed sockets");
    emit(rule("allow", {"system-socket"}, {sbpl_form("socket-domain", {sbpl_expr::symbol("AF_UNIX")})}));
    const auto endpoint_rule = [&](std::string_view side, std::vector<std::string_view> ops,
                                   const std::vector<sbpl_expr>& allowed, bool exclude_protected) {
      if (allowed.empty()) return;
      std::vector<sbpl_expr> any, exclusions;
      for (const auto& f : allowed) any.push_back(unix_socket(side, f));
      for (const auto& f : socket_denied_) exclusions.push_back(require_not(unix_socket(side, f)));
      if (exclude_protected) {
        for (const auto& f : socket_protected_) exclusions.push_back(require_not(unix_socket(side, f)));
      }
      emit(rule("allow", std::move(ops), {allowed_unless(std::move(any), exclusions)}));
    };
    endpoint_rule("local", {"network-bind", "network-inbound"}, socket_roots_, true);
    std::vector<sbpl_expr> reachable = socket_roots_;
    reachable.insert(reachable.end(), socket_listed_.begin(), socket_listed_.end());
    endpoint_rule("remote", {"network-outbound"}, reachable, false);
  }

  const profile_input& in_;
  std::vector<sbpl_parameter> params_;
  std::map<std::string, int> counters_;
  std::vector<sbpl_expr> read_any_, write_any_, metadata_any_, deny_any_, protect_any_;
  std::vector<sbpl_expr> read_exclusions_, write_exclusions_;
  std::vector<sbpl_expr> socket_roots_, socket_listed_, socket_denied_, socket_protected_;  // path filters
};

}  // namespace

result<generated_profile> generate_seatbelt_profile(const profile_input& input) {
  return profile_writer(input).write();
}

}  // namespace cordon::macos_impl

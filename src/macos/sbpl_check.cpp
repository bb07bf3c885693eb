// sbpl_check.cpp — the structural checker (see sbpl_check.h for the rules).
#include "macos/sbpl_check.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>

#include "macos/sbpl_reader.h"

namespace cordon::macos_impl {
namespace {

// Operations used by Chromium, Codex and sandbox-runtime profiles
// (docs/macos-backend.md, "Vocabulary").
constexpr std::array<std::string_view, 40> known_operations = {
    "default", "file*", "file-read*", "file-read-data", "file-read-metadata", "file-test-existence",
    "file-write*", "file-write-data", "file-write-unlink", "file-ioctl", "file-map-executable",
    "process-exec", "process-fork", "process-info*", "process-info-pidinfo", "process-info-setcontrol",
    "signal", "mach-priv-task-port", "mach-lookup", "mach-host*", "sysctl-read", "sysctl-write",
    "user-preference-read", "ipc-posix-sem", "ipc-posix-shm", "ipc-posix-shm-read-data",
    "ipc-posix-shm-read*", "iokit-open", "iokit-get-properties", "nvram*", "distributed-notification-post",
    "pseudo-tty", "network*", "network-outbound", "network-inbound", "network-bind", "system-socket",
    "system-mac-syscall", "system-fsctl", "syscall-unix"};

constexpr std::array<std::string_view, 6> path_filters = {"subpath", "literal", "path", "prefix",
                                                          "path-ancestors", "regex"};
constexpr std::array<std::string_view, 20> string_filters = {
    "extension", "global-name", "local-name", "sysctl-name", "sysctl-name-prefix", "sysctl-name-regex",
    "iokit-registry-entry-class", "iokit-user-client-class", "iokit-property", "ipc-posix-name",
    "control-name", "mac-policy-name", "vnode-type", "target", "socket-domain", "socket-protocol",
    "mac-syscall-number", "fsctl-command", "syscall-number", "local"};
constexpr std::array<std::string_view, 4> logic_filters = {"require-all", "require-any", "require-not",
                                                           "remote"};

// Allowed with no filter at all: none reaches a file, service or address by
// name (named semaphores and preference reads, docs/macos-backend.md).
constexpr std::array<std::string_view, 4> bare_allow_ok = {"process-fork", "pseudo-tty", "ipc-posix-sem",
                                                           "user-preference-read"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

class checker {
 public:
  explicit checker(const std::map<std::string, std::string>& params) : params_(params) {}

  void form(const sbpl_node& n, std::size_t index) {
    if (!n.is_list() || n.head().empty()) return problem(n, "a top-level form must be (allow ...), (deny ...) or (version 1)");
    const std::string_view head = n.head();
    if (head == "version") {
      if (index != 0) problem(n, "(version 1) must be the first form");
      if (n.items.size() != 2 || n.items[1].type != sbpl_node::kind::number || n.items[1].text != "1") {
        problem(n, "only (version 1) is known");
      }
      saw_version_ = true;
      return;
    }
    if (index == 0) problem(n, "the profile must start with (version 1)");
    if (head != "allow" && head != "deny") {
      return problem(n, "unknown top-level form '" + std::string(head) + "' (flat allow/deny rules only)");
    }
    rule(n, head == "allow");
  }

  void finish() {
    if (!saw_version_ && problems_.empty()) problems_.push_back({0, 0, "missing (version 1)"});
    if (!saw_deny_default_) problems_.push_back({0, 0, "missing (deny default): the profile is not deny-by-default"});
  }

  std::vector<sbpl_problem> take() { return std::move(problems_); }

 private:
  void problem(const sbpl_node& at, std::string message) { problems_.push_back({at.line, at.column, std::move(message)}); }

  void rule(const sbpl_node& n, bool allow) {
    std::vector<std::string_view> ops;
    std::size_t i = 1;
    for (; i < n.items.size() && n.items[i].type == sbpl_node::kind::symbol; ++i) {
      const std::string& op = n.items[i].text;
      if (!contains(known_operations, op)) problem(n.items[i], "unknown operation '" + op + "'");
      ops.push_back(op);
    }
    if (ops.empty()) return problem(n, "a rule names no operation");
    std::vector<const sbpl_node*> filters;
    for (; i < n.items.size(); ++i) {
      const sbpl_node& f = n.items[i];
      if (f.is_list() && f.head() == "with") {
        if (i + 1 != n.items.size()) problem(f, "(with ...) must be the rule's last item");
        continue;
      }
      if (!f.is_list()) {
        problem(f, "expected a filter form, found '" + f.text + "'");
        continue;
      }
      filters.push_back(&f);
      filter(f);
    }
    const bool has_default = std::find(ops.begin(), ops.end(), "default") != ops.end();
    if (has_default) {
      if (allow) problem(n, "(allow default) grants everything: never allowed");
      if (ops.size() != 1 || !filters.empty()) problem(n, "'default' stands alone, without filters");
      if (!allow) saw_deny_default_ = true;
    }
    if (!allow) return;
    for (const auto& op : ops) allowed_operation(n, op, filters);
  }

  void allowed_operation(const sbpl_node& n, std::string_view op, const std::vector<const sbpl_node*>& filters) {
    const std::string name(op);
    if (filters.empty() && op != "default" && !contains(bare_allow_ok, op)) {
      if (op == "mach-lookup") return problem(n, "bare (allow mach-lookup) is a global Mach-service wildcard");
      return problem(n, "(allow " + name + ") without a filter grants it everywhere");
    }
    if (op == "sysctl-write") problem(n, "sysctl-write is never allowed");
    if (op == "network*" || op == "file*") problem(n, "(allow " + name + ") is too broad: name the operations");
    if (op == "network-outbound") {
      for (const sbpl_node* f : filters) outbound_filter(*f);
    }
    if (op == "mach-lookup") {
      for (const sbpl_node* f : filters) {
        if (f->head() != "global-name" && f->head() != "local-name") {
          problem(*f, "mach-lookup is only allowed for exact global-name/local-name services");
        }
      }
    }
  }

  // network-outbound: `remote` only, or any-of/all-of remote forms; inside
  // an all-of, (require-not ...) only narrows and is accepted. A unix-socket
  // endpoint names its socket: a bare one is every socket on the host.
  void outbound_filter(const sbpl_node& f, bool inside_all = false) {
    if (f.head() == "remote") {
      if (f.items.size() == 2 && f.items[1].type == sbpl_node::kind::symbol && f.items[1].text == "unix-socket") {
        problem(f, "network-outbound to (remote unix-socket) without a path reaches every unix socket");
      }
      return;
    }
    if (inside_all && f.head() == "require-not") return;
    if (f.head() == "require-any" || f.head() == "require-all") {
      bool narrows_only = f.items.size() > 1;
      for (std::size_t i = 1; i < f.items.size(); ++i) {
        outbound_filter(f.items[i], f.head() == "require-all");
        narrows_only = narrows_only && f.items[i].head() == "require-not";
      }
      if (narrows_only) problem(f, "network-outbound allowed everywhere but the (require-not ...) paths");
      return;
    }
    problem(f, "network-outbound allowed with a '" + std::string(f.head()) +
                   "' filter: only (remote ...) filters (a local endpoint matches every connection)");
  }

  void filter(const sbpl_node& f) {
    const std::string name(f.head());
    if (name.empty()) return problem(f, "a filter must be a list starting with its name");
    if (name == "param") return problem(f, "(param ...) is an argument, not a filter");
    if (contains(path_filters, name)) return path_filter(f, name);
    if (contains(string_filters, name)) return string_filter(f, name);
    if (name == "require-all" || name == "require-any") {
      if (f.items.size() < 2) problem(f, "(" + name + ") needs at least one filter");
      for (std::size_t i = 1; i < f.items.size(); ++i) {
        if (!f.items[i].is_list()) {
          problem(f.items[i], "(" + name + ") takes filters only");
        } else {
          filter(f.items[i]);
        }
      }
      return;
    }
    if (name == "require-not") {
      if (f.items.size() != 2 || !f.items[1].is_list()) return problem(f, "(require-not) takes exactly one filter");
      return filter(f.items[1]);
    }
    if (name == "remote") return endpoint(f);
    problem(f, "unknown filter '" + name + "'");
  }

  // The argument of a path filter: an absolute path, or a supplied parameter
  // whose value is one.
  void path_filter(const sbpl_node& f, const std::string& name) {
    if (f.items.size() != 2) return problem(f, "(" + name + ") takes exactly one path");
    const sbpl_node& arg = f.items[1];
    if (name == "regex") {
      if (!arg.is_string()) return problem(arg, "(regex) takes a string");
      if (arg.text.rfind("^/", 0) != 0) problem(arg, "regex '" + arg.text + "' is not anchored at an absolute path (^/)");
      return;
    }
    std::string value;
    if (arg.is_list() && arg.head() == "param") {
      if (arg.items.size() != 2 || !arg.items[1].is_string()) return problem(arg, "(param) takes one string");
      auto it = params_.find(arg.items[1].text);
      if (it == params_.end()) return problem(arg, "parameter '" + arg.items[1].text + "' is not supplied");
      value = it->second;
    } else if (arg.type == sbpl_node::kind::string) {
      value = arg.text;
    } else {
      return problem(arg, "(" + name + ") takes a path string or (param ...)");
    }
    if (value.empty() || value.front() != '/') problem(arg, "path '" + value + "' is not absolute");
  }

  void string_filter(const sbpl_node& f, const std::string& name) {
    if (name == "local") return endpoint(f);
    if (f.items.size() != 2) return problem(f, "(" + name + ") takes exactly one argument");
    const sbpl_node& arg = f.items[1];
    const bool symbol_ok = name == "vnode-type" || name == "target" || name == "socket-domain" ||
                           name == "fsctl-command" || name == "syscall-number";
    const bool number_ok = name == "socket-protocol" || name == "mac-syscall-number";
    if (!(arg.is_string() || (symbol_ok && arg.type == sbpl_node::kind::symbol) ||
          (number_ok && arg.type == sbpl_node::kind::number))) {
      return problem(arg, "(" + name + ") has an argument of the wrong kind");
    }
    if ((name == "global-name" || name == "local-name") &&
        (arg.text.empty() || arg.text.find('*') != std::string::npos)) {
      problem(arg, "Mach service name '" + arg.text + "' is empty or a wildcard");
    }
    if (name == "target" && arg.text != "self" && arg.text != "same-sandbox") {
      problem(arg, "unknown target '" + arg.text + "'");
    }
  }

  // (remote|local ip|tcp|udp ["HOST:PORT"]) or (remote|local unix-socket [path filter]).
  void endpoint(const sbpl_node& f) {
    const std::string side(f.head());
    if (f.items.size() < 2 || f.items[1].type != sbpl_node::kind::symbol) {
      return problem(f, "(" + side + ") needs a kind: ip, tcp, udp or unix-socket");
    }
    const std::string& kind = f.items[1].text;
    if (kind == "unix-socket") {
      if (f.items.size() > 3) return problem(f, "(" + side + " unix-socket) takes at most one path filter");
      if (f.items.size() == 3) {
        if (!f.items[2].is_list() || !contains(path_filters, f.items[2].head())) {
          return problem(f.items[2], "(" + side + " unix-socket) takes a path filter");
        }
        path_filter(f.items[2], std::string(f.items[2].head()));
      }
      return;
    }
    if (kind != "ip" && kind != "tcp" && kind != "udp") return problem(f.items[1], "unknown endpoint kind '" + kind + "'");
    if (f.items.size() == 2) return;
    if (f.items.size() != 3 || f.items[2].type != sbpl_node::kind::string) {
      return problem(f, "(" + side + " " + kind + ") takes one \"HOST:PORT\" string");
    }
    address(f.items[2]);
  }

  void address(const sbpl_node& arg) {
    const std::string& text = arg.text;
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return problem(arg, "address '" + text + "' has no :PORT");
    const std::string host = text.substr(0, colon), port = text.substr(colon + 1);
    if (host != "*" && host != "localhost") {
      problem(arg, "host '" + host + "' in '" + text + "': host must be * or localhost");
    }
    if (port == "*") return;
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      problem(arg, "port '" + port + "' is not * or 1..65535");
    }
  }

  const std::map<std::string, std::string>& params_;
  std::vector<sbpl_problem> problems_;
  bool saw_version_ = false;
  bool saw_deny_default_ = false;
};

}  // namespace

bool is_known_sbpl_operation(std::string_view name) { return contains(known_operations, name); }

bool is_known_sbpl_filter(std::string_view name) {
  return contains(path_filters, name) || contains(string_filters, name) || contains(logic_filters, name);
}

std::vector<sbpl_problem> check_sbpl_profile(std::string_view profile,
                                             const std::map<std::string, std::string>& parameters) {
  auto forms = read_sbpl(profile);
  if (!forms) {
    const error& e = forms.error_value();
    int line = 0, column = 0;
    std::sscanf(e.location.c_str(), "line %d, column %d", &line, &column);
    return {{line, column, e.message}};
  }
  checker c(parameters);
  for (std::size_t i = 0; i < forms->size(); ++i) c.form((*forms)[i], i);
  c.finish();
  return c.take();
}

}  // namespace cordon::macos_impl

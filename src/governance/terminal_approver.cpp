// terminal_approver.cpp — a question on the controlling terminal.
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <string_view>

#include "cordon/governance/approval.h"
#include "posix/unique_fd.h"

namespace cordon::governance {
namespace {

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w <= 0) return;
    done += static_cast<std::size_t>(w);
  }
}

std::string read_line(int fd) {
  std::string line;
  char c = 0;
  while (line.size() < 256 && ::read(fd, &c, 1) == 1 && c != '\n') line.push_back(c);
  return line;
}

// The requester's text as the terminal must show it: control characters
// (C0, DEL and the C1 range, which some terminals also obey) as visible
// escapes, so that no "\r" or escape sequence can redraw the question.
std::string inert(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
              static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (c1) c = static_cast<unsigned char>(text[++i]);
    if (c < 0x20 || c == 0x7F || c1) {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
             : std::string(c1 ? "\\u00" : "\\x") + kHex[c >> 4] + kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string summary(const approval_request& r) {
  std::string text = "\ncordon: approval needed\n  action:  " + std::string(to_string(r.request.action)) +
                     " (risk " + std::string(to_string(r.request.risk)) + ")\n";
  if (!r.request.command.empty()) text += "  command: " + inert(r.request.command) + "\n";
  if (!r.request.argv.empty()) {
    text += "  argv:   ";
    for (const auto& a : r.request.argv) text += " [" + inert(a) + "]";
    text += "\n";
  }
  for (const auto& p : r.request.paths) text += "  path:    " + inert(p) + "\n";
  for (const auto& h : r.request.hosts) text += "  host:    " + inert(h) + "\n";
  for (const auto& v : r.request.variables) text += "  name:    " + inert(v) + "\n";
  text += "  why:     " + inert(r.policy.reason) + (r.policy.rule_id.empty() ? "" : " (rule " + inert(r.policy.rule_id) + ")") + "\n";
  text += "  digest:  " + r.request_digest + "\n  sandbox: " + r.backend + "\n";
  for (const auto& l : r.plan_levels) text += "    " + l.control + ": " + l.level + (l.mechanism.empty() ? "" : " (" + l.mechanism + ")") + "\n";
  for (const auto& w : r.plan_warnings) text += "    warning: " + inert(w) + "\n";
  text += "Approve? [once/session/workspace/manual/NO]: ";
  return text;
}

}  // namespace

approval_decision terminal_approval_service::decide(const approval_request& request) {
  int in = in_fd_, out = out_fd_;
  unique_fd owned;
  if (in < 0 || out < 0) {
    owned.reset(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
    if (!owned) return {approval_decision_kind::denied, approval_scope::once, "no terminal to ask on", {}, {}};
    in = out = owned.get();
  }
  // What was typed before the question (type-ahead, a command's leftover
  // keystrokes) is not its answer: the terminal's input queue is discarded.
  if (::isatty(in) == 1) ::tcflush(in, TCIFLUSH);
  write_all(out, summary(request));
  std::string answer = read_line(in);
  owned.reset();
  approval_decision d{approval_decision_kind::approved, approval_scope::once, "approved on the terminal", {}, {}};
  if (answer == "once" || answer == "o") return d;
  if (answer == "session" || answer == "s") {
    d.scope = approval_scope::session;
    return d;
  }
  if (answer == "workspace" || answer == "w") {
    d.scope = approval_scope::workspace;
    return d;
  }
  if (answer == "manual" || answer == "m") {
    return {approval_decision_kind::manual_review, approval_scope::once, "sent for manual review on the terminal", {}, {}};
  }
  return {approval_decision_kind::denied, approval_scope::once, "denied on the terminal", {}, {}};
}

}  // namespace cordon::governance

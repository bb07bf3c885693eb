// terminal_approver.cpp — a question on the controlling terminal.
#include <fcntl.h>
#include <unistd.h>

#include "cordon/governance/approval.h"

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

std::string summary(const approval_request& r) {
  std::string text = "\ncordon: approval needed\n  action:  " + std::string(to_string(r.request.action)) +
                     " (risk " + std::string(to_string(r.request.risk)) + ")\n";
  if (!r.request.command.empty()) text += "  command: " + r.request.command + "\n";
  if (!r.request.argv.empty()) {
    text += "  argv:   ";
    for (const auto& a : r.request.argv) text += " [" + a + "]";
    text += "\n";
  }
  for (const auto& p : r.request.paths) text += "  path:    " + p + "\n";
  for (const auto& h : r.request.hosts) text += "  host:    " + h + "\n";
  for (const auto& v : r.request.variables) text += "  name:    " + v + "\n";
  text += "  why:     " + r.policy.reason + (r.policy.rule_id.empty() ? "" : " (rule " + r.policy.rule_id + ")") + "\n";
  text += "  digest:  " + r.request_digest + "\n  sandbox: " + r.backend + "\n";
  for (const auto& l : r.plan_levels) text += "    " + l.control + ": " + l.level + (l.mechanism.empty() ? "" : " (" + l.mechanism + ")") + "\n";
  for (const auto& w : r.plan_warnings) text += "    warning: " + w + "\n";
  text += "Approve? [once/session/workspace/manual/NO]: ";
  return text;
}

}  // namespace

approval_decision terminal_approval_service::decide(const approval_request& request) {
  int in = in_fd_, out = out_fd_, owned = -1;
  if (in < 0 || out < 0) {
    owned = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (owned < 0) return {approval_decision_kind::denied, approval_scope::once, "no terminal to ask on", {}, {}};
    in = out = owned;
  }
  write_all(out, summary(request));
  std::string answer = read_line(in);
  if (owned >= 0) ::close(owned);
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

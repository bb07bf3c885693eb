// governance_bench — capability decision time against 1,000 rules and
// against the default rules for coding agents (command forms, programs that
// run commands: src/governance/default_rules.h), and audit
// events per second with fsync per event and batched. Not a test: it prints
// numbers (docs/governance.md). Usage: cordon_governance_bench [DIR] [SECONDS]
// (DIR holds the audit logs, default /tmp; SECONDS bounds each audit run,
// default 2).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cordon/governance/audit.h"
#include "cordon/governance/capability_policy.h"
#include "governance/default_rules.h"

namespace gov = cordon::governance;
using clock_type = std::chrono::steady_clock;

namespace {

gov::capability_policy thousand_rules() {
  std::vector<gov::capability_rule> rules;
  for (int i = 0; i < 1000; ++i) {
    gov::capability_rule r;
    r.id = "rule-" + std::to_string(i);
    r.reason = "generated rule " + std::to_string(i);
    switch (i % 4) {
      case 0:
        r.decision = gov::decision_kind::allow;
        r.actions = {gov::action_kind::shell, gov::action_kind::process};
        r.commands = {"tool" + std::to_string(i) + " sub*", "other" + std::to_string(i)};
        break;
      case 1:
        r.decision = gov::decision_kind::allow;
        r.actions = {gov::action_kind::filesystem_read};
        r.paths = {"/data/project" + std::to_string(i) + "/**"};
        break;
      case 2:
        r.decision = gov::decision_kind::allow;
        r.actions = {gov::action_kind::network_outbound};
        r.hosts = {"**.host" + std::to_string(i) + ".example:443"};
        break;
      default:
        r.decision = gov::decision_kind::deny;
        r.commands = {"danger" + std::to_string(i)};
        break;
    }
    rules.push_back(std::move(r));
  }
  return *gov::capability_policy::from_rules("bench", std::move(rules));
}

gov::capability_request shell_request(std::string command) {
  gov::capability_request r;
  r.action = gov::action_kind::shell;
  r.risk = gov::risk_level::low;
  r.command = std::move(command);
  return r;
}

double decisions_us(const gov::capability_policy& policy, const gov::capability_request& request) {
  int iterations = 0;
  auto start = clock_type::now();
  while (clock_type::now() - start < std::chrono::milliseconds(700)) {
    auto result = policy.evaluate(request);
    if (result.parts.empty() && result.uncertain.empty()) std::abort();
    ++iterations;
  }
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / iterations;
}

double audit_rate(const std::string& path, gov::jsonl_sink_options options, double seconds) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".head");
  auto sink = gov::jsonl_audit_sink::open(path, options);
  if (!sink) {
    std::fprintf(stderr, "%s\n", sink.error_value().describe().c_str());
    std::exit(1);
  }
  auto event = gov::make_audit_event("execution", "run.completed", "exited 0");
  event.ids = {{"run_id", "0123456789abcdef0123456789abcdef"}, {"request_digest", "sha256:" + std::string(64, 'a')}};
  event.attributes = {{"reason", "exited 0"}, {"backend", "linux-namespaces"}};
  int count = 0;
  auto start = clock_type::now();
  while (std::chrono::duration<double>(clock_type::now() - start).count() < seconds) {
    if (!(*sink)->append(event)) std::exit(1);
    ++count;
  }
  if (!(*sink)->flush()) std::exit(1);
  double took = std::chrono::duration<double>(clock_type::now() - start).count();
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".head");
  return count / took;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp";
  double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
  auto policy = thousand_rules();
  auto shell = shell_request("tool996 subcommand --flag | other500 && bash -c 'tool4 sub1; other8'");
  gov::capability_request path;
  path.action = gov::action_kind::filesystem_read;
  path.risk = gov::risk_level::low;
  path.paths = {"/data/project997/src/main.c", "/data/project1/README"};
  gov::capability_request host;
  host.action = gov::action_kind::network_outbound;
  host.risk = gov::risk_level::low;
  host.hosts = {"api.host998.example:443"};
  std::printf("capability decision, 1000 rules:\n");
  std::printf("  shell, 5 segments with a nested sh -c   %8.1f us\n", decisions_us(policy, shell));
  std::printf("  filesystem_read, 2 paths               %8.1f us\n", decisions_us(policy, path));
  std::printf("  network_outbound, 1 host               %8.1f us\n", decisions_us(policy, host));
  auto agent = gov::coding_agent_rules("/work/project");
  if (!agent) std::abort();
  auto everyday = shell_request("git status && git diff --stat | head -20");
  auto spelled = shell_request("git -C . log -p | grep -n x; find . -name '*.o' -exec rm -v {} + ; ls | xargs -0 chmod -vR 644");
  std::printf("capability decision, the default rules for coding agents:\n");
  std::printf("  git status && git diff --stat | head    %8.1f us\n", decisions_us(*agent, everyday));
  std::printf("  git -C, find -exec, xargs chmod -vR     %8.1f us\n", decisions_us(*agent, spelled));
  gov::jsonl_sink_options every;
  gov::jsonl_sink_options batched;
  batched.fsync = gov::fsync_policy::batched;
  batched.batch_events = 64;
  std::string log = dir + "/cordon-governance-bench-" + std::to_string(::getpid()) + ".jsonl";
  std::printf("audit events/s (%s):\n", dir.c_str());
  std::printf("  fsync per event                        %8.0f\n", audit_rate(log, every, seconds));
  std::printf("  batched (64 events or 200 ms)          %8.0f\n", audit_rate(log, batched, seconds));
  return 0;
}

// runtime_support.h — what the execution runtime's tests share
// (runtime_test.cpp, tool_call_test.cpp): a workspace directory, a shell
// request, a context under workspace-write, and an approver that counts.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cordon/governance/runtime.h"
#include "cordon/profiles.h"

namespace cordon::governance::test_support {

struct workspace {
  std::string path;
  workspace() {
    char t[] = "/tmp/cordon-runtime-XXXXXX";
    path = ::mkdtemp(t);
    std::filesystem::permissions(path, std::filesystem::perms::all);
  }
  ~workspace() { std::filesystem::remove_all(path); }
};

inline capability_policy load_rules(const char* text) {
  auto p = capability_policy::from_json(text);
  EXPECT_TRUE(p) << p.error_value().describe();
  return *p;
}

inline capability_request shell(const std::string& command) {
  capability_request r;
  r.action = action_kind::shell;
  r.risk = risk_level::low;
  r.command = command;
  r.trace_id = "trace-1";
  return r;
}

// workspace-write for `ws`, at boundary revision 3.
inline execution_context context_for(const workspace& ws, const std::string& session = "session-1") {
  execution_context c;
  c.session_id = session;
  c.workspace = ws.path;
  c.policy = *builtin_profile("workspace-write");
  c.boundary_revision = 3;
  return c;
}

// Counts its calls and remembers what it was shown.
class recording_approver final : public approval_service {
 public:
  explicit recording_approver(approval_decision answer) : answer_(std::move(answer)) {}
  approval_decision decide(const approval_request& request) override {
    ++calls;
    seen = request;
    return answer_;
  }
  std::string_view name() const noexcept override { return "recording"; }
  int calls = 0;
  approval_request seen;

 private:
  approval_decision answer_;
};

}  // namespace cordon::governance::test_support

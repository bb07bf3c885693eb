// Review fixes of the Linux launch (docs/linux-backend.md): a resource limit
// the plan promises that cannot be set fails the launch, naming the limit;
// the probe creates exactly the namespaces a launch creates.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon/cordon.h"
#include "linux/namespaces.h"
#include "../../host_expect.h"

namespace cordon {
namespace {

TEST(LaunchFixes, ProbeAndLaunchCreateTheSameNamespaces) {
  EXPECT_NE(linux_impl::launch_namespaces & CLONE_NEWCGROUP, 0u);
  EXPECT_EQ(linux_impl::launch_namespaces_with_network, linux_impl::launch_namespaces | CLONE_NEWNET);
}

// The command's process cannot raise a hard limit (it has no capabilities),
// so a plan's RLIMIT_CPU above the inherited hard limit cannot be set: the
// launch must fail at the rlimits step instead of running with the limit
// silently missing.
TEST(LaunchFixes, FailedSetrlimitFailsTheLaunch) {
  auto backend = make_linux_backend();
  host_facts facts = backend->read_host_facts({}, false);
  if (!facts.backend_available) CORDON_SKIP_UNLESS_DECLARED("userns", 1, "user namespaces unavailable: " << facts.backend_blocker);
  auto* lx = backend_facts_as<linux_host_facts>(facts);
  ASSERT_NE(lx, nullptr);
  lx->cgroups = {};  // no cgroup: the CPU limit becomes an rlimit
  lx->cgroups.blocker = "test: no cgroup";
  sandbox_policy policy;
  policy.filesystem.writable = {"/tmp"};
  policy.process.cpu_seconds = 100;
  policy.enforcement[control::cpu] = enforcement_level::partial;
  auto compiled = backend->compile(policy, {}, facts);
  ASSERT_TRUE(compiled) << compiled.failure().describe();
  ASSERT_EQ(compiled.plan()->contract().at(control::cpu).level, enforcement_level::partial);

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit low {50, 50};
    if (::setrlimit(RLIMIT_CPU, &low) != 0) ::_exit(2);
    launch_request request;
    request.argv = {"/bin/true"};
    auto outcome = backend->launch(compiled.plan().get(), request);
    if (outcome) ::_exit(3);  // ran although the limit was not set
    const error& err = outcome.error_value();
    const bool named = err.message.find("RLIMIT_CPU = 100") != std::string::npos;
    ::_exit(err.code == error_code::launch_failed && err.sys_errno == EPERM && named ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: could not lower the limit; 3: the launch ran; 4: wrong error";

  // The same plan with a hard limit high enough runs.
  launch_request request;
  request.argv = {"/bin/true"};
  auto ran = backend->launch(compiled.plan().get(), request);
  ASSERT_TRUE(ran) << ran.error_value().describe();
  EXPECT_TRUE(ran->exited);
}

}  // namespace
}  // namespace cordon

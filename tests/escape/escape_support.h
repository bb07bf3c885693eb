// escape_support.h — what the adversarial suite adds to the integration harness.
//
// Every escape test copies the probe (tests/escape/probe.cpp) into its
// workspace, runs it through the real `cordon run`, and compares the probe's
// output line by line: "<action> <result>", where the result is an errno name
// or "OK". Each test pairs the attempt with an allowed action next to it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "harness.h"

namespace cordon::test::escape {

// The probe and the (not yet setuid) helper: $CORDON_ESCAPE_PROBE / $CORDON_ESCAPE_HELPER,
// else the paths the build baked in.
std::string probe_binary();
std::string setuid_helper_binary();

// Copies the probe into `dir` as `dir/probe` (mode 0755).
void install_probe(const temp_dir& dir);

// Runs `./probe <args...>` in `ws` (the probe must be installed there) under
// cordon with `options` (the default profile when empty).
run_result run_probe(const temp_dir& ws, const std::vector<std::string>& args,
                     const std::vector<std::string>& options = {}, const std::vector<std::string>& extra_env = {});

// The probe's expected output: one "<line>\n" per element.
std::string lines(const std::vector<std::string>& expected);

// Writes a policy (schema 1) into `dir` and returns its path. `filesystem`,
// `network`, `process` and `enforcement` are JSON object texts; the
// environment is PATH only.
std::string write_policy(const temp_dir& dir, const std::string& filesystem,
                         const std::string& network = R"({"mode": "denied"})", const std::string& process = "{}",
                         const std::string& enforcement = "{}");

// A process on the host, outside any sandbox: `sleep` with a unique duration.
class host_process {
 public:
  host_process();
  ~host_process();
  host_process(const host_process&) = delete;
  host_process& operator=(const host_process&) = delete;
  pid_t pid() const { return pid_; }
  // Still running (not exited, not killed)?
  bool alive() const;

 private:
  pid_t pid_ = -1;
};

// `cordon run <options> -- <command>` with the CLI under test as argv[0].
std::vector<std::string> cordon_run_argv(const std::vector<std::string>& options,
                                         const std::vector<std::string>& command);

// In a forked child whose descriptors are set: chdir(cwd), execv(args).
// Exits 250 (chdir) or 251 (exec) on failure; never returns.
[[noreturn]] void exec_in(const std::string& cwd, std::vector<std::string> args);

// A unique token for command lines and names (pid, counter, random).
std::string unique_token();

// The errno name of `err`, as the probe prints it.
std::string errno_name(int err);

// The setgroups/uid the sandbox shows for this user: uid inside = uid outside.
std::string ids_line();

// Did this run use linux-os-sandbox (Landlock and seccomp, no namespaces)?
// CORDON_LINUX_BACKEND=os-sandbox forces it (the escape_os_sandbox pass,
// tests/CMakeLists.txt), and a host whose user namespaces are closed chooses
// it. Where its mechanism differs, a probe's expected outcome is the one the
// report claims for that control (docs/linux-backend.md, "Without namespaces").
bool ran_os_sandbox(const run_result& r);

// Expects the run's report to claim `level` for `control` (or one of
// "a|b"), with `words` in its mechanism or detail: the claim an os_sandbox
// expectation rests on.
void expect_claim(const run_result& r, const std::string& control, const std::string& level,
                  const std::string& words);

// What linux-os-sandbox answers to a write the policy does not grant under
// `path`: Landlock's EACCES, or EROFS where the host's own file system there
// is read-only (the kernel checks the mount before Landlock).
std::string os_sandbox_write_refusal(const std::string& path);

// Whether the report claims Landlock's signal scope (ABI 6): signals to
// processes outside the sandbox refused.
bool claims_signal_scope(const run_result& r);

}  // namespace cordon::test::escape

// Tests for the Landlock layer. Each ruleset is applied in a forked child
// (Landlock is irreversible); the child reports mismatches through a pipe and
// the parent asserts. Skips when the kernel offers no Landlock.

#include "linux/landlock.h"

#include <gtest/gtest.h>

#include "child_process.h"
#include "../../host_expect.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace cordon::linux_impl {
namespace {

using test_support::child_outcome;
using test_support::child_report;
using test_support::run_in_child;

bool applied_ok(child_report& r, const landlock_ruleset_plan& plan) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    r.fail("PR_SET_NO_NEW_PRIVS: %s", strerrorname_np(errno));
    return false;
  }
  std::string failed_path;
  failed_path.reserve(4096);
  const int rc = apply_landlock(plan, &failed_path);
  if (rc != 0) {
    r.fail("apply_landlock: %s (path '%s')", strerrorname_np(rc), failed_path.c_str());
    return false;
  }
  return true;
}

// A scratch directory under /tmp, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    char templ[] = "/tmp/cordon-landlock-XXXXXX";
    if (::mkdtemp(templ) != nullptr) path_ = templ;
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool write_file(const std::string& path, const char* text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const auto len = std::strlen(text);
  const bool ok = ::write(fd, text, len) == static_cast<ssize_t>(len);
  ::close(fd);
  return ok;
}

// open(2) the path in the child; returns the fd result and keeps errno.
long try_open(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  const int err = errno;
  if (fd >= 0) ::close(fd);
  errno = err;
  return fd;
}

TEST(Landlock, KernelAbiIsReportedWithoutFailing) {
  const int abi = landlock_kernel_abi();
  EXPECT_GE(abi, 0);
  // The host's own declaration (scripts/host-expect.py asks the kernel
  // directly): cordon's answer must be the kernel's.
  if (auto declared = cordon::test::declared_number("landlock")) {
    EXPECT_EQ(abi, *declared);
  }
  if (abi == 0) CORDON_SKIP_UNLESS_DECLARED("landlock", 1, "Landlock is not available on this kernel");
  EXPECT_GE(abi, 1);
}

TEST(Landlock, DescribeNamesAbiAndFeatureGroups) {
  landlock_ruleset_plan plan;
  EXPECT_EQ(plan.describe(), "landlock: not used");

  plan.abi = 1;
  EXPECT_EQ(plan.describe(), "landlock abi 1: fs(read,write)");
  plan.abi = 3;
  plan.restrict_tcp = true;  // no TCP before ABI 4: not claimed
  EXPECT_EQ(plan.describe(), "landlock abi 3: fs(read,write,refer,truncate)");
  plan.abi = 7;
  plan.restrict_tcp = true;
  plan.scope_signals_and_abstract_sockets = true;
  EXPECT_EQ(plan.describe(),
            "landlock abi 7: fs(read,write,refer,truncate,ioctl_dev) tcp(bind,connect) "
            "scope(signal,abstract_unix)");

  const int abi = landlock_kernel_abi();
  if (abi > 0) {
    plan.abi = abi;
    EXPECT_NE(plan.describe().find("abi " + std::to_string(abi)), std::string::npos);
  }
}

TEST(Landlock, NoAbiMeansNothingApplied) {
  // abi 0 is "not used": apply is a no-op and must not fail.
  landlock_ruleset_plan plan;
  const child_outcome outcome = run_in_child([&](child_report& r) {
    std::string failed;
    const int rc = apply_landlock(plan, &failed);
    if (rc != 0) r.fail("apply_landlock(abi 0): %s", strerrorname_np(rc));
  });
  ASSERT_TRUE(WIFEXITED(outcome.status)) << outcome.output;
  EXPECT_EQ(outcome.output, "");
}

TEST(Landlock, EnforcesReadAndReadWriteRules) {
  const int abi = landlock_kernel_abi();
  if (abi == 0) CORDON_SKIP_UNLESS_DECLARED("landlock", 1, "Landlock is not available on this kernel");

  temp_dir root;
  ASSERT_FALSE(root.path().empty()) << "mkdtemp failed";
  const std::string a = root.path() + "/a";
  const std::string b = root.path() + "/b";
  const std::string c = root.path() + "/c";  // not listed
  const std::string f = root.path() + "/f.txt";
  const std::string g = root.path() + "/g.txt";
  for (const auto& dir : {a, b, c}) ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir;
  ASSERT_TRUE(write_file(a + "/in-a.txt", "a"));
  ASSERT_TRUE(write_file(c + "/in-c.txt", "c"));
  ASSERT_TRUE(write_file(f, "f"));
  ASSERT_TRUE(write_file(g, "g"));

  landlock_ruleset_plan plan;
  plan.abi = abi;
  plan.rules = {
      {a, landlock_access::read},
      {b, landlock_access::read_write},
      {f, landlock_access::read},
      // read_write on a single file: directory-only rights must be masked
      // off or the kernel refuses the rule with EINVAL.
      {g, landlock_access::read_write},
      // device on a character device: also a non-directory.
      {"/dev/null", landlock_access::device},
      // Missing paths are skipped, not an error.
      {root.path() + "/does-not-exist", landlock_access::read_write},
  };

  const child_outcome outcome = run_in_child([&](child_report& r) {
    if (!applied_ok(r, plan)) return;

    errno = 0;
    long rc = try_open(a + "/in-a.txt", O_RDONLY);
    r.expect_ok("read a/in-a.txt", rc, errno);
    DIR* dir = ::opendir(a.c_str());
    if (dir == nullptr) r.fail("opendir(a): %s", strerrorname_np(errno));
    if (dir != nullptr) ::closedir(dir);

    errno = 0;
    rc = try_open(a + "/in-a.txt", O_WRONLY);
    r.expect_errno("write a/in-a.txt", rc, errno, EACCES);
    errno = 0;
    rc = try_open(a + "/new.txt", O_WRONLY | O_CREAT);
    r.expect_errno("create a/new.txt", rc, errno, EACCES);
    errno = 0;
    rc = ::mkdir((a + "/sub").c_str(), 0755);
    r.expect_errno("mkdir a/sub", rc, errno, EACCES);
    errno = 0;
    rc = ::unlink((a + "/in-a.txt").c_str());
    r.expect_errno("unlink a/in-a.txt", rc, errno, EACCES);

    errno = 0;
    rc = try_open(b + "/new.txt", O_WRONLY | O_CREAT | O_TRUNC);
    r.expect_ok("create b/new.txt", rc, errno);
    errno = 0;
    rc = ::mkdir((b + "/sub").c_str(), 0755);
    r.expect_ok("mkdir b/sub", rc, errno);
    errno = 0;
    rc = ::rename((b + "/new.txt").c_str(), (b + "/sub/moved.txt").c_str());
    r.expect_ok("rename within b", rc, errno);
    errno = 0;
    rc = ::unlink((b + "/sub/moved.txt").c_str());
    r.expect_ok("unlink in b", rc, errno);

    errno = 0;
    rc = try_open(f, O_RDONLY);
    r.expect_ok("read f.txt", rc, errno);
    errno = 0;
    rc = try_open(f, O_WRONLY);
    r.expect_errno("write f.txt", rc, errno, EACCES);

    errno = 0;
    rc = try_open(g, O_WRONLY | O_TRUNC);
    r.expect_ok("write+truncate g.txt", rc, errno);

    errno = 0;
    rc = try_open("/dev/null", O_WRONLY);
    r.expect_ok("write /dev/null", rc, errno);

    errno = 0;
    rc = try_open(c + "/in-c.txt", O_RDONLY);
    r.expect_errno("read c/in-c.txt (unlisted)", rc, errno, EACCES);
    errno = 0;
    dir = ::opendir(c.c_str());
    r.expect_errno("opendir c (unlisted)", dir == nullptr ? -1 : 0, errno, EACCES);
    if (dir != nullptr) ::closedir(dir);
    errno = 0;
    rc = try_open("/etc/hostname", O_RDONLY);
    r.expect_errno("read /etc/hostname (unlisted)", rc, errno, EACCES);
  });

  ASSERT_TRUE(WIFEXITED(outcome.status))
      << "child died with signal " << WTERMSIG(outcome.status) << "\n"
      << outcome.output;
  EXPECT_EQ(outcome.output, "");
  EXPECT_EQ(WEXITSTATUS(outcome.status), 0);
}

TEST(Landlock, AppliesAtEveryAbiUpToTheKernels) {
  // Older ABIs use a shorter ruleset attribute and fewer rights; each must
  // still produce a ruleset this kernel accepts and enforces.
  const int kernel_abi = landlock_kernel_abi();
  if (kernel_abi == 0) CORDON_SKIP_UNLESS_DECLARED("landlock", 1, "Landlock is not available on this kernel");

  temp_dir root;
  ASSERT_FALSE(root.path().empty());
  const std::string dir = root.path() + "/rw";
  const std::string file = root.path() + "/file.txt";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_TRUE(write_file(file, "x"));

  for (int abi = 1; abi <= kernel_abi; ++abi) {
    landlock_ruleset_plan plan;
    plan.abi = abi;
    plan.restrict_tcp = true;
    plan.scope_signals_and_abstract_sockets = true;
    plan.rules = {{dir, landlock_access::read_write},
                  {file, landlock_access::read_write},
                  {"/dev/null", landlock_access::device}};
    const child_outcome outcome = run_in_child([&](child_report& r) {
      if (!applied_ok(r, plan)) return;
      errno = 0;
      long rc = try_open(dir + "/new.txt", O_WRONLY | O_CREAT);
      r.expect_ok("create in rw", rc, errno);
      errno = 0;
      rc = try_open(file, O_RDWR);
      r.expect_ok("read-write file", rc, errno);
      errno = 0;
      rc = try_open("/dev/null", O_RDWR);
      r.expect_ok("read-write /dev/null", rc, errno);
      errno = 0;
      rc = try_open("/etc/hostname", O_RDONLY);
      r.expect_errno("read unlisted", rc, errno, EACCES);
    });
    ASSERT_TRUE(WIFEXITED(outcome.status)) << "abi " << abi << "\n" << outcome.output;
    EXPECT_EQ(outcome.output, "") << "abi " << abi;
    ::unlink((dir + "/new.txt").c_str());
  }
}

TEST(Landlock, ReportsFailedPath) {
  const int abi = landlock_kernel_abi();
  if (abi == 0) CORDON_SKIP_UNLESS_DECLARED("landlock", 1, "Landlock is not available on this kernel");
  temp_dir root;
  ASSERT_FALSE(root.path().empty());
  const std::string file = root.path() + "/file";
  ASSERT_TRUE(write_file(file, "x"));

  landlock_ruleset_plan plan;
  plan.abi = abi;
  // A path through a regular file: open fails with ENOTDIR, which is not
  // skipped (only a missing path is).
  plan.rules = {{file + "/below", landlock_access::read}};
  const child_outcome outcome = run_in_child([&](child_report& r) {
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    std::string failed;
    failed.reserve(4096);
    const int rc = apply_landlock(plan, &failed);
    if (rc != ENOTDIR) r.fail("expected ENOTDIR, got %s", rc ? strerrorname_np(rc) : "0");
    if (failed != file + "/below") r.fail("failed_path is '%s'", failed.c_str());
  });
  ASSERT_TRUE(WIFEXITED(outcome.status)) << outcome.output;
  EXPECT_EQ(outcome.output, "");
}

TEST(Landlock, RestrictTcpDeniesBindAndConnect) {
  const int abi = landlock_kernel_abi();
  if (abi < 4) CORDON_SKIP_UNLESS_DECLARED("landlock", 4, "Landlock ABI " << abi << " has no TCP rights (needs 4)");

  landlock_ruleset_plan plan;
  plan.abi = abi;
  plan.restrict_tcp = true;

  const child_outcome outcome = run_in_child([&](child_report& r) {
    // A listener made before the ruleset, to try connecting to.
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener, 1) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      r.fail("loopback listener setup: %s", strerrorname_np(errno));
      return;
    }
    if (!applied_ok(r, plan)) return;

    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    r.expect_ok("socket(AF_INET)", s, errno);  // creating is not restricted
    if (s < 0) return;
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    any.sin_port = 0;
    errno = 0;
    long rc = ::bind(s, reinterpret_cast<sockaddr*>(&any), sizeof any);
    r.expect_errno("bind 127.0.0.1:0", rc, errno, EACCES);
    errno = 0;
    rc = ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    r.expect_errno("connect 127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), rc, errno,
                   EACCES);
    ::close(s);
    ::close(listener);
  });

  ASSERT_TRUE(WIFEXITED(outcome.status)) << outcome.output;
  EXPECT_EQ(outcome.output, "");
  EXPECT_EQ(WEXITSTATUS(outcome.status), 0);
}

TEST(Landlock, ScopesSignalsAndAbstractSockets) {
  const int abi = landlock_kernel_abi();
  if (abi < 6) CORDON_SKIP_UNLESS_DECLARED("landlock", 6, "Landlock ABI " << abi << " has no scopes (needs 6)");

  landlock_ruleset_plan plan;
  plan.abi = abi;
  plan.scope_signals_and_abstract_sockets = true;

  const child_outcome outcome = run_in_child([&](child_report& r) {
    // An abstract socket bound outside the domain (before restricting).
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string name = "cordon-landlock-test-" + std::to_string(::getpid());
    std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] == '\0'
    const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0 ||
        ::listen(listener, 1) != 0) {
      r.fail("abstract listener setup: %s", strerrorname_np(errno));
      return;
    }
    const pid_t parent = ::getppid();
    if (!applied_ok(r, plan)) return;

    errno = 0;
    long rc = ::kill(parent, 0);
    r.expect_errno("kill(parent, 0)", rc, errno, EPERM);
    errno = 0;
    rc = ::kill(::getpid(), 0);  // inside the domain
    r.expect_ok("kill(self, 0)", rc, errno);

    const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    errno = 0;
    rc = ::connect(s, reinterpret_cast<sockaddr*>(&addr), addr_len);
    r.expect_errno("connect to outside abstract socket", rc, errno, EPERM);
    ::close(s);
    ::close(listener);
  });

  ASSERT_TRUE(WIFEXITED(outcome.status)) << outcome.output;
  EXPECT_EQ(outcome.output, "");
  EXPECT_EQ(WEXITSTATUS(outcome.status), 0);
}

}  // namespace
}  // namespace cordon::linux_impl

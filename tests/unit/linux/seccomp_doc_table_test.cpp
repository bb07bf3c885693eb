// The prebuilt seccomp programs against the intended errno table of
// docs/seccomp.md, "The rules" and docs/seccomp.md, "Root callers: no setuid or setgid bits",
// for every one of the 256 filter variants. The oracle is the document, read
// here at test time; the programs are run in a classic-BPF interpreter
// (bpf_interpreter.h), so a rule that gives a
// wrong errno in one variant fails here even when libseccomp builds the same
// wrong rule in both layouts.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bpf_interpreter.h"
#include "linux/protected_writes.h"
#include "linux/seccomp_filter.h"
#include "linux/seccomp_programs.h"
#include "source_dir.h"

namespace cordon::linux_impl {
namespace {

// The errno the command sees for one call (0: allowed), as the kernel and the
// supervisor together answer it: RET_ERRNO's data, or for RET_USER_NOTIF the
// errno the supervisor answers with (EPERM when the number is unknown).
std::optional<int> errno_seen(const seccomp_program& program, int nr, std::uint64_t a0 = 0, std::uint64_t a1 = 0,
                              std::uint64_t a2 = 0, std::uint64_t a3 = 0) {
  seccomp_data data{};
  data.nr = nr;
  data.arch = AUDIT_ARCH_X86_64;
  data.args[0] = a0;
  data.args[1] = a1;
  data.args[2] = a2;
  data.args[3] = a3;
  const test_bpf::bpf_verdict verdict = test_bpf::run_bpf(program.bpf, data);
  if (!verdict.ok) return std::nullopt;
  switch (verdict.action & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_ALLOW: return 0;
    case SECCOMP_RET_ERRNO: return static_cast<int>(verdict.action & SECCOMP_RET_DATA);
    case SECCOMP_RET_USER_NOTIF: {
      // An open or truncate the supervisor judges for a protected path
      // (protected_writes.h) continues for any other path, as these do.
      seccomp_notif request{};
      request.data = data;
      if (is_protected_write_check(program, request)) return 0;
      for (const auto& [number, err] : program.errno_by_syscall) {
        if (number == nr) return err;
      }
      return EPERM;
    }
    default: return -1;  // a kill: not an errno
  }
}

const std::map<std::string, int> errno_names = {
    {"EPERM", EPERM}, {"ENOSYS", ENOSYS}, {"EAFNOSUPPORT", EAFNOSUPPORT}, {"EACCES", EACCES},
    {"EOPNOTSUPP", EOPNOTSUPP}, {"ENOPROTOOPT", ENOPROTOOPT}, {"EROFS", EROFS}};

struct doc_row {
  std::string what;                // the first cell
  std::vector<std::string> calls;  // the backticked names in it that are syscalls here
  int err = 0;                     // the first errno of the last cell
  int line = 0;
};

std::string read_doc() {
  std::ifstream in(test::source_dir() + "/docs/seccomp.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of the table under "## The rules".
std::vector<doc_row> doc_rules() {
  std::istringstream doc(read_doc());
  std::vector<doc_row> rows;
  bool in_rules = false;
  int n = 0;
  for (std::string line; std::getline(doc, line);) {
    ++n;
    if (line.rfind("## ", 0) == 0) in_rules = line == "## The rules";
    if (!in_rules || line.rfind("| ", 0) != 0 || line.rfind("| ---", 0) == 0) continue;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 2; i < line.size(); ++i) {
      if (line[i] == '|') {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    if (cells.size() < 3) continue;
    doc_row row;
    row.what = cells[0];
    row.line = n;
    static const std::regex ticked("`([a-z0-9_]+)`");
    for (std::sregex_iterator it(cells[0].begin(), cells[0].end(), ticked), end; it != end; ++it) {
      if (seccomp_syscall_resolve_name((*it)[1].str().c_str()) >= 0) row.calls.push_back((*it)[1].str());
    }
    static const std::regex err("`(E[A-Z]+)`");
    std::smatch m;
    if (std::regex_search(cells.back(), m, err) && errno_names.count(m[1].str())) row.err = errno_names.at(m[1].str());
    if (!row.calls.empty()) rows.push_back(row);
  }
  return rows;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

int nr_of(const std::string& name) { return seccomp_syscall_resolve_name(name.c_str()); }

class SeccompDocTable : public ::testing::TestWithParam<unsigned> {};

TEST_P(SeccompDocTable, EveryRuleGivesTheDocumentedErrno) {
  const unsigned variant = GetParam();
  const seccomp_options options = seccomp_options_for_variant(variant);
  auto program = build_seccomp_program(options);
  ASSERT_TRUE(program.has_value()) << program.error_value().describe();
  const auto rows = doc_rules();
  ASSERT_GE(rows.size(), 30u) << "docs/seccomp.md's table of rules was not found";
  std::size_t checked = 0;
  for (const auto& row : rows) {
    SCOPED_TRACE("docs/seccomp.md:" + std::to_string(row.line) + ": " + row.what);
    ASSERT_NE(row.err, 0) << "the row names no errno";
    const std::string& w = row.what;
    if (has(w, " with ") || has(w, " — ")) {
      // Rules on an argument: the value that the row names, per call.
      if (row.calls[0] == "clone") {
        for (auto [flag, name] : {std::pair{CLONE_NEWNS, "CLONE_NEWNS"}, {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
                                  {CLONE_NEWUTS, "CLONE_NEWUTS"}, {CLONE_NEWIPC, "CLONE_NEWIPC"},
                                  {CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWPID, "CLONE_NEWPID"},
                                  {CLONE_NEWNET, "CLONE_NEWNET"}}) {
          ASSERT_TRUE(has(w, name)) << name << " is not in the row";
          EXPECT_EQ(errno_seen(*program, nr_of("clone"), static_cast<std::uint64_t>(flag) | SIGCHLD), row.err)
              << "variant " << variant << ": clone(" << name << ")";
          ++checked;
        }
        EXPECT_EQ(errno_seen(*program, nr_of("clone"), SIGCHLD), 0) << "variant " << variant << ": plain fork";
      } else if (row.calls[0] == "ioctl") {
        const std::uint64_t request = has(w, "TIOCSTI") ? TIOCSTI : TIOCLINUX;
        EXPECT_EQ(errno_seen(*program, nr_of("ioctl"), 0, request), row.err) << "variant " << variant;
        EXPECT_EQ(errno_seen(*program, nr_of("ioctl"), 0, request | 0x100000000ULL), row.err)
            << "variant " << variant << ": a high bit set";
        ++checked;
      } else if (row.calls[0] == "personality") {
        EXPECT_EQ(errno_seen(*program, nr_of("personality"), 0x0040000), row.err) << "variant " << variant;
        EXPECT_EQ(errno_seen(*program, nr_of("personality"), 0), 0) << "variant " << variant;
        EXPECT_EQ(errno_seen(*program, nr_of("personality"), 0xffffffffULL), 0) << "variant " << variant;
        ++checked;
      } else if (row.calls[0] == "socket" && has(w, "IPPROTO_TCP")) {
        // linux-os-sandbox, filtered: IPv4/IPv6 TCP streams only.
        const bool applies = options.allow_inet_sockets && options.inet_stream_only && options.notify;
        // Network denied without a namespace: the row above refuses every IP socket.
        const bool denied = options.deny_non_unix_sockets && !options.allow_inet_sockets;
        for (int family : {AF_INET, AF_INET6}) {
          if (denied) break;
          EXPECT_EQ(errno_seen(*program, nr_of("socket"), family, SOCK_DGRAM), applies ? row.err : 0)
              << "variant " << variant << ": UDP";
          EXPECT_EQ(errno_seen(*program, nr_of("socket"), family, SOCK_STREAM, IPPROTO_SCTP), applies ? row.err : 0)
              << "variant " << variant << ": SCTP";
          EXPECT_EQ(errno_seen(*program, nr_of("socket"), family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP), 0)
              << "variant " << variant << ": TCP";
          EXPECT_EQ(errno_seen(*program, nr_of("socket"), family, SOCK_STREAM, 0), 0) << "variant " << variant;
        }
        ++checked;
      } else if (row.calls[0] == "listen") {
        const bool applies = options.allow_inet_sockets && options.inet_stream_only && options.notify;
        EXPECT_EQ(errno_seen(*program, nr_of("listen"), 3, 1), applies ? row.err : 0) << "variant " << variant;
        ++checked;
      } else if (row.calls[0] == "socket" && has(w, "SOCK_DGRAM")) {
        // AF_UNIX datagrams name their peer per send: refused where unix connects are checked.
        const bool applies = options.notify_unix_connect && options.notify;
        for (const auto& call : row.calls) {
          EXPECT_EQ(errno_seen(*program, nr_of(call), AF_UNIX, SOCK_DGRAM), applies ? row.err : 0)
              << "variant " << variant << ": " << call << "(AF_UNIX, SOCK_DGRAM)";
        }
        ++checked;
      } else if (row.calls[0] == "socket" && has(w, "only when the policy denies the network")) {
        // Network denied (not filtered): every family but AF_UNIX.
        const bool applies = options.deny_non_unix_sockets && !options.allow_inet_sockets;
        for (const auto& call : row.calls) {
          EXPECT_EQ(errno_seen(*program, nr_of(call), AF_INET, SOCK_STREAM), applies ? row.err : 0)
              << "variant " << variant << ": " << call << "(AF_INET)";
          EXPECT_EQ(errno_seen(*program, nr_of(call), AF_UNIX, SOCK_STREAM), 0) << "variant " << variant;
        }
        ++checked;
      } else if (row.calls[0] == "socket" && has(w, "`filtered`")) {
        const bool applies = options.deny_non_unix_sockets && options.allow_inet_sockets;
        for (const auto& call : row.calls) {
          // Refused by this row when filtered, by the one above when denied.
          EXPECT_EQ(errno_seen(*program, nr_of(call), AF_NETLINK, SOCK_RAW), options.deny_non_unix_sockets ? row.err : 0)
              << "variant " << variant << ": " << call << "(AF_NETLINK)";
          if (applies) {
            EXPECT_EQ(errno_seen(*program, nr_of(call), AF_INET6, SOCK_STREAM), 0) << "variant " << variant;
          }
        }
        ++checked;
      }
      // connect (decided by the supervisor on the destination), the AF_UNIX
      // datagram and TCP Fast Open rows: the integration and escape suites;
      // opens for writing (decided on the path): WritesGoToTheSupervisor...
      // below, and the escape suite.
      continue;
    }
    // A rule on the call itself, whatever its arguments.
    for (const auto& call : row.calls) {
      EXPECT_EQ(errno_seen(*program, nr_of(call)), row.err) << "variant " << variant << ": " << call;
      ++checked;
    }
  }
  EXPECT_GE(checked, 60u);
}

// "Root callers: no setuid or setgid bits": only the variants for a root
// caller (deny_setuid_bits) refuse a set-id mode; the others let it through.
TEST_P(SeccompDocTable, SetIdModesAsTheRootSectionSays) {
  const unsigned variant = GetParam();
  const seccomp_options options = seccomp_options_for_variant(variant);
  auto program = build_seccomp_program(options);
  ASSERT_TRUE(program.has_value());
  const std::string doc = read_doc();
  const auto at = doc.find("## Root callers: no setuid or setgid bits");
  ASSERT_NE(at, std::string::npos);
  const std::string section = doc.substr(at, doc.find("\n## ", at + 1) - at);
  ASSERT_TRUE(has(section, "fail with `EPERM`") && has(section, "fail with `ENOSYS`"));
  const int eperm = options.deny_setuid_bits ? EPERM : 0;
  EXPECT_EQ(errno_seen(*program, nr_of("chmod"), 0, S_ISUID | 0755), eperm) << "variant " << variant;
  EXPECT_EQ(errno_seen(*program, nr_of("fchmod"), 3, S_ISGID | 0755), eperm) << "variant " << variant;
  EXPECT_EQ(errno_seen(*program, nr_of("fchmodat"), 3, 0, S_ISUID | 0755), eperm) << "variant " << variant;
  EXPECT_EQ(errno_seen(*program, nr_of("creat"), 0, S_ISUID | 0755), eperm) << "variant " << variant;
  EXPECT_EQ(errno_seen(*program, nr_of("openat"), 3, 0, O_CREAT | O_WRONLY, S_ISUID | 0755), eperm)
      << "variant " << variant;
  EXPECT_EQ(errno_seen(*program, nr_of("chmod"), 0, 0755), 0) << "variant " << variant << ": a plain mode";
  const int enosys = options.deny_setuid_bits ? ENOSYS : 0;
  EXPECT_EQ(errno_seen(*program, nr_of("openat2")), enosys) << "variant " << variant;
  if (nr_of("fchmodat2") >= 0) {
    EXPECT_EQ(errno_seen(*program, nr_of("fchmodat2")), enosys) << "variant " << variant;
  }
}

// "Renames and removals of protected paths": only the variants for a table
// with a read-only path in a writable directory (notify_mount_point_changes,
// with notify) send these calls to the supervisor; the others allow them.
TEST_P(SeccompDocTable, RenamesAndRemovalsGoToTheSupervisorOnlyWhereTheSectionSays) {
  const unsigned variant = GetParam();
  const seccomp_options options = seccomp_options_for_variant(variant);
  auto program = build_seccomp_program(options);
  ASSERT_TRUE(program.has_value());
  const std::string doc = read_doc();
  ASSERT_NE(doc.find("## Renames and removals of protected paths"), std::string::npos);
  const bool notified = options.notify && options.notify_mount_point_changes;
  EXPECT_EQ(program->mount_point_changes_checked, notified) << "variant " << variant;
  for (const char* call : {"rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir"}) {
    if (nr_of(call) < 0) continue;
    seccomp_data data{};
    data.nr = nr_of(call);
    data.arch = AUDIT_ARCH_X86_64;
    const test_bpf::bpf_verdict verdict = test_bpf::run_bpf(program->bpf, data);
    ASSERT_TRUE(verdict.ok);
    EXPECT_EQ(verdict.action & SECCOMP_RET_ACTION_FULL, notified ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW)
        << "variant " << variant << ": " << call;
  }
}

// "Writes to protected paths": only the variants for a table with a
// read-only bind in a writable directory (notify_protected_writes, with
// notify) send opens that may write, creat, openat2 and truncate to the
// supervisor; a read-only open never leaves the kernel, and the flags are
// read as the kernel reads them (an int).
TEST_P(SeccompDocTable, WritesGoToTheSupervisorOnlyWhereTheSectionSays) {
  const unsigned variant = GetParam();
  const seccomp_options options = seccomp_options_for_variant(variant);
  auto program = build_seccomp_program(options);
  ASSERT_TRUE(program.has_value());
  const std::string doc = read_doc();
  ASSERT_NE(doc.find("## Writes to protected paths"), std::string::npos);
  const bool notified = options.notify && options.notify_protected_writes;
  EXPECT_EQ(program->protected_writes_checked, notified) << "variant " << variant;
  const auto action = [&](int nr, std::uint64_t a1, std::uint64_t a2) {
    seccomp_data data{};
    data.nr = nr;
    data.arch = AUDIT_ARCH_X86_64;
    data.args[0] = 3;
    data.args[1] = a1;
    data.args[2] = a2;
    const test_bpf::bpf_verdict verdict = test_bpf::run_bpf(program->bpf, data);
    EXPECT_TRUE(verdict.ok);
    return verdict.action & SECCOMP_RET_ACTION_FULL;
  };
  const std::uint32_t write = notified ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
  for (const std::uint64_t flags : {std::uint64_t{O_WRONLY}, std::uint64_t{O_RDWR}, std::uint64_t{O_CREAT},
                                    std::uint64_t{O_TRUNC}, std::uint64_t{O_WRONLY | O_APPEND | O_CREAT},
                                    std::uint64_t{O_RDWR | O_CLOEXEC}, std::uint64_t{0xffffffff00000000ULL | O_WRONLY}}) {
    EXPECT_EQ(action(nr_of("open"), flags, 0), write) << "variant " << variant << ": open flags " << flags;
    EXPECT_EQ(action(nr_of("openat"), 0, flags), write) << "variant " << variant << ": openat flags " << flags;
  }
  for (const std::uint64_t flags : {std::uint64_t{O_RDONLY}, std::uint64_t{O_RDONLY | O_APPEND},
                                    std::uint64_t{O_RDONLY | O_CLOEXEC | O_DIRECTORY}, std::uint64_t{0xffffffff00000000ULL}}) {
    EXPECT_EQ(action(nr_of("open"), flags, 0), SECCOMP_RET_ALLOW) << "variant " << variant << ": open flags " << flags;
    EXPECT_EQ(action(nr_of("openat"), 0, flags), SECCOMP_RET_ALLOW) << "variant " << variant << ": openat " << flags;
  }
  EXPECT_EQ(action(nr_of("creat"), 0644, 0), write) << "variant " << variant;
  EXPECT_EQ(action(nr_of("truncate"), 0, 0), write) << "variant " << variant;
  EXPECT_EQ(action(nr_of("ftruncate"), 0, 0), SECCOMP_RET_ALLOW) << "variant " << variant;
  // openat2 is notified for root callers anyway (ENOSYS, the table's own answer).
  EXPECT_EQ(action(nr_of("openat2"), 0, 0),
            notified || (options.notify && options.deny_setuid_bits) ? SECCOMP_RET_USER_NOTIF
            : options.deny_setuid_bits                                ? SECCOMP_RET_ERRNO
                                                                      : SECCOMP_RET_ALLOW)
      << "variant " << variant;
}

INSTANTIATE_TEST_SUITE_P(AllVariants, SeccompDocTable, ::testing::Range(0U, seccomp_variant_count));

}  // namespace
}  // namespace cordon::linux_impl

// checker_test.cpp — the structural checker accepts cordon's profiles and
// rejects broken ones, each with the problem named.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "macos/sbpl_check.h"

namespace cordon::macos_test {
namespace {

using macos_impl::check_sbpl_profile;

const std::map<std::string, std::string> params = {{"WRITE_0", "/Users/dev/project"}};

const std::string good = R"((version 1)
(deny default)
;; a comment (with a paren
(allow process-fork)
(allow file-read* (require-all (subpath "/usr/lib") (require-not (literal (param "WRITE_0")))))
(allow file-write* (subpath (param "WRITE_0")) (regex #"^/Users/dev/project(/.*)?/\.git$"))
(allow mach-lookup (global-name "com.apple.system.logger"))
(allow sysctl-read (sysctl-name "hw.ncpu") (sysctl-name-prefix "hw.optional."))
(allow network-outbound (remote ip "localhost:3128"))
(allow signal (target same-sandbox))
(deny file-write* (literal "/dev/null") (with message "cordon"))
(allow ipc-posix-sem)
(allow user-preference-read)
(allow system-socket (socket-domain AF_UNIX))
(allow network-bind network-inbound (require-all (local unix-socket (subpath (param "WRITE_0"))) (require-not (local unix-socket (literal "/Users/dev/project/.ssh")))))
(allow network-outbound (require-all (require-any (remote unix-socket (subpath (param "WRITE_0"))) (remote unix-socket (literal "/private/var/run/docker.sock"))) (require-not (remote unix-socket (subpath "/Users/dev/.gnupg")))))
(allow file-read-data file-write-data (require-all (literal "/dev/ttys003") (vnode-type CHARACTER-DEVICE)))
)";

TEST(SbplChecker, AcceptsAWellFormedProfile) {
  auto problems = check_sbpl_profile(good, params);
  for (const auto& p : problems) ADD_FAILURE() << p.line << ":" << p.column << ": " << p.message;
}

struct broken_case {
  const char* name;
  std::string profile;
  const char* expected;  // a substring of the first problem's message
};

std::string with(const std::string& rule) { return "(version 1)\n(deny default)\n" + rule + "\n"; }

const broken_case broken[] = {
    {"unclosed_form", with("(allow file-read* (subpath \"/usr\")"), "never closed"},
    {"extra_close", with("(allow process-fork))"), "unexpected ')'"},
    {"unterminated_string", with("(allow file-read* (subpath \"/usr))"), "never terminated"},
    {"unknown_operation", with("(allow file-reed* (subpath \"/usr\"))"), "unknown operation 'file-reed*'"},
    {"unknown_filter", with("(allow file-read* (subpth \"/usr\"))"), "unknown filter 'subpth'"},
    {"relative_path", with("(allow file-read* (subpath \"usr/lib\"))"), "is not absolute"},
    {"missing_parameter", with("(allow file-write* (subpath (param \"WRITE_9\")))"), "'WRITE_9' is not supplied"},
    {"ip_address_host", with("(allow network-outbound (remote ip \"127.0.0.1:3128\"))"),
     "host must be * or localhost"},
    {"allow_default", with("(allow default)"), "(allow default) grants everything"},
    {"bare_mach_lookup", with("(allow mach-lookup)"), "global Mach-service wildcard"},
    {"mach_name_wildcard", with("(allow mach-lookup (global-name \"com.apple.*\"))"), "wildcard"},
    {"outbound_by_local_endpoint", with("(allow network-outbound (local ip \"*:*\"))"), "only (remote ...) filters"},
    {"no_deny_default", "(version 1)\n(allow process-fork)\n", "missing (deny default)"},
    {"no_version", "(deny default)\n(allow process-fork)\n", "must start with (version 1)"},
    {"unanchored_regex", with("(allow file-read* (regex #\"\\.git\"))"), "not anchored"},
    {"sysctl_write", with("(allow sysctl-write (sysctl-name \"kern.tcsm_enable\"))"), "sysctl-write is never allowed"},
    {"port_out_of_range", with("(allow network-outbound (remote ip \"localhost:70000\"))"), "not * or 1..65535"},
    {"bare_file_write", with("(allow file-write*)"), "without a filter"},
    {"network_star", with("(allow network* (remote ip \"*:*\"))"), "too broad"},
    {"relative_parameter_value", with("(allow file-write* (subpath (param \"REL\")))"), "is not absolute"},
    {"scheme_define", with("(define (f) 1)"), "unknown top-level form 'define'"},
    {"every_unix_socket", with("(allow network-outbound (remote unix-socket))"), "reaches every unix socket"},
    {"outbound_only_exclusions",
     with("(allow network-outbound (require-all (require-not (remote unix-socket (subpath \"/x\")))))"),
     "everywhere but the (require-not ...) paths"},
    {"bare_ipc_posix_shm", with("(allow ipc-posix-shm)"), "without a filter"},
};

class SbplCheckerRejects : public ::testing::TestWithParam<broken_case> {};

TEST_P(SbplCheckerRejects, NamesTheProblem) {
  const auto& c = GetParam();
  std::map<std::string, std::string> p = params;
  p["REL"] = "relative/dir";
  auto problems = check_sbpl_profile(c.profile, p);
  ASSERT_FALSE(problems.empty()) << c.name << " was accepted:\n" << c.profile;
  bool named = false;
  for (const auto& pr : problems) named = named || pr.message.find(c.expected) != std::string::npos;
  EXPECT_TRUE(named) << c.name << ": expected '" << c.expected << "', first problem: " << problems[0].message;
}

INSTANTIATE_TEST_SUITE_P(Broken, SbplCheckerRejects, ::testing::ValuesIn(broken),
                         [](const auto& i) { return std::string(i.param.name); });

// The oracle is the document, not this table: docs/macos-backend.md ("The
// structural checker") says how many broken profiles the tests feed the
// checker and names each kind; the table above must hold exactly those.
TEST(SbplChecker, TestsEveryKindOfBrokenProfileTheDocumentNames) {
  std::ifstream in(std::string(CORDON_SOURCE_DIR) + "/docs/macos-backend.md");
  ASSERT_TRUE(in) << "docs/macos-backend.md is not readable";
  std::stringstream text;
  text << in.rdbuf();
  std::string prose = text.str();
  for (char& c : prose) c = c == '\n' ? ' ' : c;
  const std::regex stated("The tests feed it ([0-9]+) broken profiles\\. It rejects each one and names the problem: "
                          "([^.]*)\\.");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(prose, m, stated)) << "the document no longer states the broken profiles";
  const std::size_t count = std::stoul(m[1].str());
  // The kinds: "a, b, ..., and c", split at commas.
  std::size_t kinds = 1;
  for (char c : m[2].str()) kinds += c == ',' ? 1 : 0;
  EXPECT_EQ(kinds, count) << "the document names " << kinds << " kinds but counts " << count;
  EXPECT_EQ(std::size(broken), count) << "docs/macos-backend.md and this table disagree";
}

TEST(SbplChecker, ReportsTheLineOfTheProblem) {
  auto problems = check_sbpl_profile(with("(allow process-fork)\n(allow file-reed* (subpath \"/x\"))"), {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].line, 4);
  EXPECT_EQ(problems[0].column, 8);
}

}  // namespace
}  // namespace cordon::macos_test

// Devices only when the policy names them (docs/policy.md,
// "filesystem.devices"). /dev/fuse stands in for a GPU: a character device
// this machine has and the private /dev does not. Named in `devices`, it is
// there and usable (as root; another user meets its 0600 mode, EACCES, as on
// the host); named only as a readable path, it shows but cannot be opened
// (the bind is nodev); not named, it is absent.
#include <sys/stat.h>

#include "escape_support.h"

namespace cordon::test::escape {
namespace {

constexpr const char* kDevice = "/dev/fuse";

bool host_has_device() {
  struct stat st {};
  return ::stat(kDevice, &st) == 0 && S_ISCHR(st.st_mode);
}

// `readable_extra`: more readable entries (each starting with a comma); `extra`: more filesystem fields.
std::string policy_with(const temp_dir& dir, const std::string& extra, const std::string& readable_extra = "") {
  return write_policy(dir, R"({"readable": ["{workspace}")" + readable_extra + R"(], "writable": ["{workspace}"])" +
                               extra + "}");
}

TEST(EscapeDevices, OnlyTheNamedDeviceIsUsable) {
  if (!host_has_device()) GTEST_SKIP() << kDevice << " is not a character device on this host";
  temp_dir ws, policy_dir;
  install_probe(ws);
  const std::vector<std::string> attempt = {"stat", kDevice, "+", "open-write", kDevice, "+", "open-write",
                                            "/dev/null"};

  auto absent = run_probe(ws, attempt, {"--policy", policy_with(policy_dir, "")});
  EXPECT_EQ(absent.exit_code, 0) << absent.all();
  EXPECT_EQ(absent.out, lines({"stat ENOENT", "open-write ENOENT", "open-write OK"})) << absent.all();

  auto shown = run_probe(ws, attempt, {"--policy", policy_with(policy_dir, "", R"(, "/dev/fuse")")});
  EXPECT_EQ(shown.exit_code, 0) << shown.all();
  EXPECT_EQ(shown.out, lines({"stat OK", "open-write EACCES", "open-write OK"})) << shown.all();

  auto named = run_probe(ws, attempt, {"--policy", policy_with(policy_dir, R"(, "devices": ["/dev/fuse"])")});
  EXPECT_EQ(named.exit_code, 0) << named.all();
  EXPECT_EQ(named.out, lines({"stat OK", running_as_root() ? "open-write OK" : "open-write EACCES", "open-write OK"}))
      << named.all();
}

// A device entry that names something else is refused before anything runs.
TEST(EscapeDevices, ANonDeviceIsRefused) {
  temp_dir ws, policy_dir;
  install_probe(ws);
  auto r = run_probe(ws, {"stat", "/dev"}, {"--policy", policy_with(policy_dir, R"(, "devices": ["/dev/shm"])")});
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_NE(r.err.find("is not a device node"), std::string::npos) << r.err;
  r = run_probe(ws, {"stat", "/dev"}, {"--policy", policy_with(policy_dir, R"(, "devices": ["/etc/passwd"])")});
  EXPECT_EQ(r.exit_code, 125) << r.all();
  EXPECT_NE(r.err.find("a device is a path under /dev/"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cordon::test::escape

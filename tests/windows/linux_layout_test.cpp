// The Linux layout in a policy's environment (the built-in profiles' POSIX
// PATH and /tmp) read as Windows can, each replacement warned; every other
// value kept as written (src/windows/linux_layout.h).
#include <gtest/gtest.h>

#include "windows/linux_layout.h"

namespace cordon::windows {
namespace {

using detail::windows_reading_of;
using set_list = std::vector<std::pair<std::string, std::string>>;

const std::optional<std::string> kRunTmp = "C:\\Users\\user\\AppData\\Local\\Temp\\cordon-run-1";

TEST(WindowsLinuxLayout, APosixPathBecomesTheSystemDirectories) {
  environment_policy p;
  p.set = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  std::vector<std::string> warnings;
  const auto out = windows_reading_of(p, kRunTmp, "C:\\Windows", warnings);
  EXPECT_EQ(out.set, (set_list{{"PATH", "C:\\Windows\\System32;C:\\Windows"}}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "environment: PATH names POSIX directories (/usr/local/bin:/usr/bin:/bin), which Windows has not; on "
            "Windows it is set to the system directories C:\\Windows\\System32;C:\\Windows");
}

TEST(WindowsLinuxLayout, APathWithADriveIsKeptAsWritten) {
  environment_policy p;
  p.set = {{"Path", "/C:/tools;C:\\bin"}, {"OTHER", "/usr/bin"}};
  std::vector<std::string> warnings;
  EXPECT_EQ(windows_reading_of(p, kRunTmp, "C:\\Windows", warnings).set, p.set);
  EXPECT_TRUE(warnings.empty());
  // Without a known system directory nothing replaces a POSIX PATH (the command search then fails typed).
  p.set = {{"PATH", "/usr/bin"}};
  EXPECT_EQ(windows_reading_of(p, kRunTmp, "", warnings).set, p.set);
  EXPECT_TRUE(warnings.empty());
}

TEST(WindowsLinuxLayout, TmpBecomesThePerRunDirectoryAndTmpdirBringsTempAndTmp) {
  environment_policy p;
  p.set = {{"HOME", "/tmp"}, {"TMPDIR", "/tmp"}, {"X", "/tmp/x"}};
  std::vector<std::string> warnings;
  const auto out = windows_reading_of(p, kRunTmp, "C:\\Windows", warnings);
  EXPECT_EQ(out.set, (set_list{{"HOME", *kRunTmp}, {"TMPDIR", *kRunTmp}, {"X", "/tmp/x"}, {"TEMP", *kRunTmp},
                               {"TMP", *kRunTmp}}));
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[0], "environment: HOME names /tmp, the private /tmp of Linux; on Windows it is set to the "
                         "per-run directory " + *kRunTmp);
  EXPECT_EQ(warnings[3], "environment: TMP (where Windows programs look for TMPDIR) is set to the per-run directory " +
                             *kRunTmp);
}

TEST(WindowsLinuxLayout, TempNamedByThePolicyIsLeftToIt) {
  environment_policy p;
  p.set = {{"TMPDIR", "/tmp"}};
  p.allow = {"temp"};
  std::vector<std::string> warnings;
  const auto out = windows_reading_of(p, kRunTmp, "C:\\Windows", warnings);
  EXPECT_EQ(out.set, (set_list{{"TMPDIR", *kRunTmp}, {"TMP", *kRunTmp}}));
  EXPECT_EQ(out.allow, p.allow);
  EXPECT_EQ(warnings.size(), 2u);
}

TEST(WindowsLinuxLayout, WithoutARunTmpTmpIsKept) {
  environment_policy p;
  p.set = {{"HOME", "/tmp"}, {"TMPDIR", "/tmp"}};
  std::vector<std::string> warnings;
  EXPECT_EQ(windows_reading_of(p, std::nullopt, "C:\\Windows", warnings).set, p.set);
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace cordon::windows

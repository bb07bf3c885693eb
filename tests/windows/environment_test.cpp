// Environment normalization: names without regard to case, UTF-8 checked,
// the UTF-16 block built from scratch in Windows' order.
#include <gtest/gtest.h>

#include "windows/environment.h"

namespace cordon::windows {
namespace {

using detail::build_environment;
using detail::utf16_to_utf8;
using detail::utf8_to_utf16;
using host_env = std::vector<std::pair<std::string, std::string>>;

TEST(WindowsEnvironment, PolicyNamesThatDifferOnlyInCaseCollide) {
  environment_policy p;
  p.set = {{"Path", "C:\\a"}, {"PATH", "C:\\b"}};
  std::vector<blocker> blockers;
  build_environment(p, {}, blockers);
  ASSERT_EQ(blockers.size(), 1u);
  EXPECT_TRUE(has_cause(blockers[0], blocker_code::environment_collision));
  EXPECT_EQ(blockers[0].object, "/environment/set/1");
  EXPECT_EQ(blockers[0].control, control::environment);
  p.set = {{"TEMP", "x"}};
  p.allow = {"temp"};
  blockers.clear();
  build_environment(p, {}, blockers);
  ASSERT_EQ(blockers.size(), 1u);
  EXPECT_TRUE(has_cause(blockers[0], blocker_code::environment_collision));
}

TEST(WindowsEnvironment, HostNamesThatDifferOnlyInCaseCollideWhenPassed) {
  const host_env host = {{"Path", "C:\\a"}, {"PATH", "C:\\b"}, {"HOME", "x"}};
  environment_policy p;
  p.allow = {"home"};
  std::vector<blocker> blockers;
  auto spec = build_environment(p, host, blockers);
  EXPECT_TRUE(blockers.empty());  // neither Path is passed
  ASSERT_EQ(spec.entries.size(), 1u);
  EXPECT_EQ(spec.entries[0], (std::pair<std::string, std::string>{"HOME", "x"}));  // the host's spelling
  p.inherit = environment_inherit::all;
  build_environment(p, host, blockers);
  ASSERT_EQ(blockers.size(), 1u);
  EXPECT_TRUE(has_cause(blockers[0], blocker_code::environment_collision));
}

TEST(WindowsEnvironment, SetReplacesAHostVariableOfAnyCase) {
  environment_policy p;
  p.inherit = environment_inherit::all;
  p.set = {{"PATH", "C:\\Windows\\System32"}};
  std::vector<blocker> blockers;
  auto spec = build_environment(p, {{"Path", "C:\\evil"}}, blockers);
  ASSERT_TRUE(blockers.empty());
  ASSERT_EQ(spec.entries.size(), 1u);
  EXPECT_EQ(spec.entries[0].first, "PATH");
  EXPECT_EQ(spec.entries[0].second, "C:\\Windows\\System32");
}

TEST(WindowsEnvironment, SystemRootIsPassedByDefaultAndSetStillReplacesIt) {
  environment_policy p;  // inherit: none, nothing allowed
  const host_env host = {{"SystemRoot", "C:\\Windows"}, {"SECRET", "x"}};
  std::vector<blocker> blockers;
  auto spec = build_environment(p, host, blockers);
  ASSERT_TRUE(blockers.empty());
  ASSERT_EQ(spec.entries.size(), 1u);  // SECRET is not passed
  EXPECT_EQ(spec.entries[0], (std::pair<std::string, std::string>{"SystemRoot", "C:\\Windows"}));
  p.set = {{"SYSTEMROOT", "D:\\Win"}};
  spec = build_environment(p, host, blockers);
  ASSERT_TRUE(blockers.empty());
  ASSERT_EQ(spec.entries.size(), 1u);
  EXPECT_EQ(spec.entries[0], (std::pair<std::string, std::string>{"SYSTEMROOT", "D:\\Win"}));
}

TEST(WindowsEnvironment, InvalidUtf8FromTheHostIsRefused) {
  environment_policy p;
  p.allow = {"BAD"};
  std::vector<blocker> blockers;
  build_environment(p, {{"BAD", std::string("\xC0\xAF")}}, blockers);  // overlong '/'
  ASSERT_EQ(blockers.size(), 1u);
  EXPECT_TRUE(has_cause(blockers[0], blocker_code::environment_not_utf8));
}

TEST(WindowsEnvironment, InvalidNamesFromTheHostAreRefused) {
  environment_policy p;
  p.inherit = environment_inherit::all;
  std::vector<blocker> blockers;
  build_environment(p, {{"A=B", "x"}}, blockers);
  ASSERT_EQ(blockers.size(), 1u);
  EXPECT_TRUE(has_cause(blockers[0], blocker_code::environment_invalid_name));
}

TEST(WindowsEnvironment, BlockIsSortedInUpperCaseOrderAndDoublyTerminated) {
  environment_policy p;
  p.set = {{"b", "2"}, {"A_", "1"}, {"Aa", "0"}, {"\xC3\xA9T\xC3\xA9", "\xF0\x9F\x98\x80"}};
  std::vector<blocker> blockers;
  auto spec = build_environment(p, {}, blockers);
  ASSERT_TRUE(blockers.empty());
  // Upper case: "AA" < "A_" ('A' 0x41 < '_' 0x5F), then "B", then non-ASCII.
  std::u16string expected = u"Aa=0";
  expected += u'\0';
  expected += u"A_=1";
  expected += u'\0';
  expected += u"b=2";
  expected += u'\0';
  expected += u"\u00e9T\u00e9=\U0001F600";
  expected += u'\0';
  expected += u'\0';
  EXPECT_EQ(spec.block, expected);
}

TEST(WindowsEnvironment, EmptyEnvironmentIsTwoNuls) {
  std::vector<blocker> blockers;
  auto spec = build_environment(environment_policy{}, {{"SECRET", "x"}}, blockers);
  EXPECT_TRUE(spec.entries.empty());
  EXPECT_EQ(spec.block, std::u16string(2, u'\0'));
}

TEST(WindowsEnvironment, Utf8ConversionIsStrict) {
  EXPECT_EQ(utf8_to_utf16("\xF0\x9F\x98\x80"), std::u16string(u"\U0001F600"));
  EXPECT_FALSE(utf8_to_utf16("\xED\xA0\x80"));      // a surrogate code point
  EXPECT_FALSE(utf8_to_utf16("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(utf8_to_utf16("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(utf8_to_utf16("\xC3"));              // truncated
  EXPECT_FALSE(utf16_to_utf8(std::u16string(1, static_cast<char16_t>(0xD800))));
  EXPECT_EQ(utf16_to_utf8(u"\u00e9\U0001F600"), std::string("\xC3\xA9\xF0\x9F\x98\x80"));
}

}  // namespace
}  // namespace cordon::windows

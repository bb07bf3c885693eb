// Windows path text: mapping from policy paths, case, ancestry; command-line quoting.
#include <gtest/gtest.h>

#include "cordon/windows/compile.h"
#include "windows/command_line.h"
#include "windows/paths.h"

namespace cordon::windows {
namespace {

using namespace detail;

TEST(WindowsPaths, PolicyPathsWithADriveMapToWindowsPaths) {
  EXPECT_EQ(to_windows_path("/C:/Users/ada"), "C:\\Users\\ada");
  EXPECT_EQ(to_windows_path("/d:"), "D:\\");
  EXPECT_EQ(to_windows_path("/C:/"), "C:\\");
  EXPECT_FALSE(to_windows_path("/etc/ssh"));
  EXPECT_FALSE(to_windows_path("/CC:/x"));
  EXPECT_FALSE(to_windows_path("/1:/x"));
  EXPECT_FALSE(to_windows_path("/C:x"));
}

TEST(WindowsPaths, ContainmentIgnoresCaseAndRespectsComponents) {
  EXPECT_TRUE(is_within("C:\\Work\\a", "c:\\work"));
  EXPECT_TRUE(is_within("C:\\work", "C:\\WORK"));
  EXPECT_TRUE(is_within("C:\\work", "C:\\"));
  EXPECT_FALSE(is_within("C:\\workshop", "C:\\work"));
  EXPECT_FALSE(is_within("C:\\wor", "C:\\work"));
  EXPECT_EQ(ancestors_and_self("C:\\a\\b"), (std::vector<std::string>{"C:\\", "C:\\a", "C:\\a\\b"}));
  EXPECT_EQ(depth("C:\\"), 0u);
  EXPECT_EQ(depth("C:\\a\\b"), 2u);
}

TEST(WindowsPaths, ComponentsThatAliasOthersAreRefused) {
  EXPECT_FALSE(component_problem("notes.txt"));
  EXPECT_TRUE(component_problem("a:b"));
  EXPECT_TRUE(component_problem("trailing."));
  EXPECT_TRUE(component_problem("trailing "));
  EXPECT_TRUE(component_problem("CON"));
  EXPECT_TRUE(component_problem("aux.txt"));
  EXPECT_FALSE(component_problem("console"));
}

// Expected strings follow CommandLineToArgvW's rules (2n backslashes + quote ->
// n backslashes and a delimiter; 2n+1 backslashes + quote -> n and a literal quote).
TEST(WindowsCommandLine, QuotingInvertsCommandLineToArgvW) {
  EXPECT_EQ(quote_argument("plain"), "plain");
  EXPECT_EQ(quote_argument(""), "\"\"");
  EXPECT_EQ(quote_argument("two words"), "\"two words\"");
  EXPECT_EQ(quote_argument("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(quote_argument("C:\\dir\\"), "C:\\dir\\");  // no quoting needed: backslashes stay literal
  EXPECT_EQ(quote_argument("C:\\my dir\\"), "\"C:\\my dir\\\\\"");
  EXPECT_EQ(quote_argument("a\\\"b"), "\"a\\\\\\\"b\"");
  EXPECT_EQ(build_command_line({"prog", "a b", ""}), "prog \"a b\" \"\"");
}

}  // namespace
}  // namespace cordon::windows

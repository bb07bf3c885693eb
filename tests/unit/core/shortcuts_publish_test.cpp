// Unit tests: the --publish shortcut (core/shortcuts.h): parse_publish() and
// what apply_shortcuts() makes of it (docs/network.md, "Published ports").
#include <gtest/gtest.h>

#include "core/shortcuts.h"

namespace cordon::core {
namespace {

TEST(ShortcutsPublish, ParsesPortAndHostPortColonPort) {
  auto same = parse_publish("8000");
  ASSERT_TRUE(same);
  EXPECT_EQ(*same, (published_port{8000, 8000}));
  auto mapped = parse_publish("18000:8000");
  ASSERT_TRUE(mapped);
  EXPECT_EQ(*mapped, (published_port{8000, 18000}));
  auto edges = parse_publish("65535:1");
  ASSERT_TRUE(edges);
  EXPECT_EQ(*edges, (published_port{1, 65535}));
}

TEST(ShortcutsPublish, RefusesWhatIsNotOneOrTwoPorts) {
  for (const char* text : {"", ":8000", "8000:", "0", "65536", "8000:0", "1:2:3", "x", "80a", "-1", "123456", " 80"}) {
    auto parsed = parse_publish(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error_value().code, error_code::usage_error) << text;
    EXPECT_NE(parsed.error_value().message.find("--publish"), std::string::npos) << text;
  }
}

TEST(ShortcutsPublish, AppendsAndSetsLocalBindingOnlyWhenFiltered) {
  policy_shortcuts flags;
  flags.publish = {"8000", "18001:8001"};
  sandbox_policy denied;
  ASSERT_TRUE(apply_shortcuts(denied, flags, "/", ""));
  EXPECT_EQ(denied.network.publish, (std::vector<published_port>{{8000, 8000}, {8001, 18001}}));
  EXPECT_FALSE(denied.network.allow_local_binding);  // the denied namespace's loopback is the command's already

  sandbox_policy filtered;
  filtered.network.mode = network_mode::filtered;
  ASSERT_TRUE(apply_shortcuts(filtered, flags, "/", ""));
  EXPECT_TRUE(filtered.network.allow_local_binding);
  EXPECT_EQ(filtered.network.publish.size(), 2U);

  flags.publish = {"nope"};
  sandbox_policy untouched;
  auto refused = apply_shortcuts(untouched, flags, "/", "");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error_value().code, error_code::usage_error);
  EXPECT_TRUE(untouched.network.publish.empty());
  EXPECT_FALSE(flags.empty());
}

}  // namespace
}  // namespace cordon::core

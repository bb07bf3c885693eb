// The environment of a filtered-network run points every proxy-aware tool at
// the broker, and what the host passes in cannot point it elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "linux/supervisor.h"

namespace cordon::linux_impl {
namespace {

std::string value_of(const std::vector<std::string>& env, const std::string& name) {
  auto it = std::find_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
  return it == env.end() ? "<unset>" : it->substr(name.size() + 1);
}

TEST(NetworkEnvironment, FilteredModeSetsEveryProxyVariable) {
  sandbox_policy policy;
  policy.network.mode = network_mode::filtered;
  policy.environment.allow = {"HTTP_PROXY", "no_proxy"};
  auto env = build_environment(policy, {"HTTP_PROXY=http://host-proxy:8080", "no_proxy=*", "HOME=/root"});
  for (const char* name : {"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"}) {
    EXPECT_EQ(value_of(env, name), "http://127.0.0.1:3128") << name;
  }
  EXPECT_EQ(value_of(env, "ALL_PROXY"), "socks5h://127.0.0.1:3128");
  EXPECT_EQ(value_of(env, "all_proxy"), "socks5h://127.0.0.1:3128");
  EXPECT_EQ(value_of(env, "NO_PROXY"), "");     // nothing goes around the broker
  EXPECT_EQ(value_of(env, "no_proxy"), "");     // the host's "*" is overridden
  EXPECT_EQ(value_of(env, "HOME"), "<unset>");  // not allowed, not passed
  // One entry per name.
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("HTTP_PROXY=", 0) == 0; }),
            1);
}

TEST(NetworkEnvironment, ExplicitSetWinsOverTheBrokerDefaults) {
  sandbox_policy policy;
  policy.network.mode = network_mode::filtered;
  policy.environment.set = {{"NO_PROXY", "localhost"}};
  auto env = build_environment(policy, {});
  EXPECT_EQ(value_of(env, "NO_PROXY"), "localhost");
  EXPECT_EQ(value_of(env, "no_proxy"), "localhost");  // one case set explicitly sets both
  policy.environment.set = {{"https_proxy", "http://elsewhere:1"}};
  env = build_environment(policy, {});
  EXPECT_EQ(value_of(env, "HTTPS_PROXY"), "http://elsewhere:1");
  EXPECT_EQ(value_of(env, "NO_PROXY"), "");
}

TEST(NetworkEnvironment, OtherModesSetNoProxyVariables) {
  for (network_mode mode : {network_mode::denied, network_mode::unrestricted}) {
    sandbox_policy policy;
    policy.network.mode = mode;
    auto env = build_environment(policy, {"HTTP_PROXY=http://host-proxy:8080"});
    EXPECT_EQ(value_of(env, "HTTP_PROXY"), "<unset>");
    EXPECT_EQ(value_of(env, "ALL_PROXY"), "<unset>");
  }
}

}  // namespace
}  // namespace cordon::linux_impl

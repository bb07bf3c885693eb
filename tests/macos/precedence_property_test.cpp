// precedence_property_test.cpp — for random path sets, the generated profile,
// evaluated with a model of SBPL's rule semantics (sbpl_model.h), gives
//   denied > protected read-only > writable > readable > platform default
// for every path, in the /private and the link spelling, whatever order the
// rules are taken in.
#include <gtest/gtest.h>

#include <random>

#include "macos/platform_defaults.h"
#include "macos_test_support.h"
#include "sbpl_model.h"

namespace cordon::macos_test {
namespace {

using macos_impl::macos_path_within;

// Three trees: the workspace, one under /private/var (spelled /var too) and
// one under /private/tmp, each with names a, b, c to depth 3.
std::vector<std::string> all_nodes() {
  std::vector<std::string> out;
  for (const std::string base : {"/Users/dev/project", "/private/var/data", "/private/tmp/t"}) {
    out.push_back(base);
    for (const char* a : {"a", "b", "c"}) {
      out.push_back(base + "/" + a);
      for (const char* b : {"a", "b", "c"}) {
        out.push_back(base + "/" + a + "/" + b);
        for (const char* c : {"a", "b", "c"}) out.push_back(base + "/" + a + "/" + b + "/" + c);
      }
    }
  }
  return out;
}

struct expectation {
  const sandbox_policy& p;  // canonical paths (as the plan holds them)
  bool within_any(const std::vector<std::string>& roots, const std::string& q) const {
    for (const auto& r : roots) {
      if (macos_path_within(q, r)) return true;
    }
    return false;
  }
  bool platform_default(const std::string& q) const {
    if (!p.filesystem.include_platform_defaults) return false;
    for (const auto& d : macos_impl::platform_read_defaults()) {
      if (d.subtree ? macos_path_within(q, d.path) : q == d.path) return true;
    }
    return false;
  }
  // A directory between a writable root and a protected or denied path.
  bool guard(const std::string& q) const {
    std::vector<std::string> targets = p.filesystem.protected_read_only;
    targets.insert(targets.end(), p.filesystem.denied.begin(), p.filesystem.denied.end());
    for (const auto& t : targets) {
      for (const auto& w : p.filesystem.writable) {
        if (t != w && macos_path_within(t, w) && q != t && macos_path_within(t, q) && macos_path_within(q, w)) return true;
      }
    }
    return false;
  }
  bool read(const std::string& q) const {
    if (within_any(p.filesystem.denied, q)) return false;
    return p.filesystem.read == read_mode::full || within_any(p.filesystem.readable, q) ||
           within_any(p.filesystem.writable, q) || within_any(p.filesystem.protected_read_only, q) ||
           platform_default(q);
  }
  bool write(const std::string& q) const {
    if (within_any(p.filesystem.denied, q) || within_any(p.filesystem.protected_read_only, q) || guard(q)) return false;
    return within_any(p.filesystem.writable, q);
  }
};

std::string link_spelling(const std::string& q) {
  return macos_impl::alias_spelling(q, macos_impl::standard_macos_aliases());
}

class PrecedenceProperty : public ::testing::TestWithParam<int> {};

TEST_P(PrecedenceProperty, RandomPathSetsKeepThePrecedenceInAnyRuleOrder) {
  const auto nodes = all_nodes();
  std::mt19937 rng(static_cast<std::mt19937::result_type>(GetParam()));
  for (int round = 0; round < 25; ++round) {
    sandbox_policy policy;
    policy.name = "random";
    policy.filesystem.read = rng() % 4 == 0 ? read_mode::full : read_mode::restricted;
    policy.filesystem.include_platform_defaults = rng() % 2 == 0;
    policy.process.tree_cleanup = false;
    // Policies name paths in either spelling; the plan holds the /private one.
    const auto pick = [&](std::vector<std::string>& list, int most) {
      const int n = static_cast<int>(rng() % static_cast<unsigned>(most + 1));
      for (int i = 0; i < n; ++i) {
        std::string path = nodes[rng() % nodes.size()];
        if (const auto l = link_spelling(path); !l.empty() && rng() % 2 == 0) path = l;
        list.push_back(path);
      }
    };
    pick(policy.filesystem.readable, 3);
    pick(policy.filesystem.writable, 3);
    pick(policy.filesystem.protected_read_only, 3);
    pick(policy.filesystem.denied, 3);
    auto plan = compile_example(policy);
    ASSERT_NE(plan, nullptr);
    sbpl_model model(plan->profile, parameter_values(*plan));
    ASSERT_TRUE(model.ok());
    const expectation expect{plan->policy};

    std::vector<std::string> queries = nodes;
    for (const auto& n : nodes) queries.push_back(n + "/new");  // first-time creation below every node
    for (const auto& q : queries) {
      const bool read = expect.read(q), write = expect.write(q);
      std::vector<std::string> spellings{q};
      if (const auto l = link_spelling(q); !l.empty()) spellings.push_back(l);
      for (const auto& s : spellings) {
        for (auto order : {match_order::last, match_order::first, match_order::reversed_last}) {
          const int o = static_cast<int>(order);
          ASSERT_EQ(model.allows("file-read-data", s, order), read) << "read " << s << " order " << o << "\n" << plan->profile;
          ASSERT_EQ(model.allows("process-exec", s, order), read) << "exec " << s << " order " << o;
          ASSERT_EQ(model.allows("file-write-create", s, order), write) << "create " << s << " order " << o << "\n" << plan->profile;
          ASSERT_EQ(model.allows("file-write-unlink", s, order), write) << "unlink " << s << " order " << o;
        }
      }
    }
  }
}

// 8 seeds x 25 random policies x ~650 paths x 2 spellings x 3 orders.
INSTANTIATE_TEST_SUITE_P(Seeds, PrecedenceProperty, ::testing::Range(1, 9));

}  // namespace
}  // namespace cordon::macos_test

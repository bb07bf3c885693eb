// host_expect.h — the host's own declaration of what it offers
// (CORDON_EXPECT, written by scripts/host-expect.py from the kernel, not by
// cordon), for tests to decide a skip or a branch by instead of asking cordon.
// A test that would skip, or take a weaker branch, because cordon says a
// facility is missing fails when the declaration says the host has it: a
// regression in cordon's detection then fails the run instead of hiding.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace cordon::test {

// The value of KEY in CORDON_EXPECT ("landlock=7,cgroup=hybrid,userns=1"),
// or nullopt when the variable or the key is absent (nothing declared).
inline std::optional<std::string> declared(const std::string& key) {
  const char* all = std::getenv("CORDON_EXPECT");
  if (all == nullptr) return std::nullopt;
  std::string text = std::string(",") + all + ",";
  const std::string needle = "," + key + "=";
  auto at = text.find(needle);
  if (at == std::string::npos) return std::nullopt;
  at += needle.size();
  return text.substr(at, text.find(',', at) - at);
}

// The declared integer value of KEY, or nullopt (absent or not a number).
inline std::optional<int> declared_number(const std::string& key) {
  auto value = declared(key);
  if (!value || value->empty() || value->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoi(*value);
}

// True when the host declares KEY as a number of at least `at_least`.
inline bool declares_at_least(const std::string& key, int at_least) {
  auto n = declared_number(key);
  return n && *n >= at_least;
}

}  // namespace cordon::test

// Skips with `why`, unless CORDON_EXPECT declares KEY at least AT_LEAST:
// then the skip contradicts the host, and the test fails.
#define CORDON_SKIP_UNLESS_DECLARED(key, at_least, why)                                                      \
  do {                                                                                                       \
    if (::cordon::test::declares_at_least(key, at_least)) {                                                  \
      FAIL() << "CORDON_EXPECT declares " << key << "=" << ::cordon::test::declared(key).value_or("")        \
             << " (at least " << (at_least) << " needed), but the test would skip: " << why;                 \
    }                                                                                                        \
    GTEST_SKIP() << why;                                                                                     \
  } while (0)

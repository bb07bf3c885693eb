// sbpl_model.h — a small model of how Seatbelt decides a file operation, for
// property tests of the generated profiles (docs/macos-backend.md, "Rule
// semantics"): (deny default) is the fallback; of the other rules whose
// operation covers the request and whose filters match the path, the last
// one decides (the order the sources describe). The model can also take the
// first match, or the rules in reverse order, to show that a profile's
// verdicts do not depend on order at all.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "macos/sbpl_reader.h"

namespace cordon::macos_test {

enum class match_order { last, first, reversed_last };

class sbpl_model {
 public:
  // Reads `profile`; ASSERT-style failures are the caller's (ok() false).
  sbpl_model(const std::string& profile, std::map<std::string, std::string> params);
  bool ok() const noexcept { return ok_; }
  // True when `operation` (e.g. "file-read-data", "file-write-create") on
  // `path` (absolute, as Seatbelt would see it) is allowed.
  bool allows(const std::string& operation, const std::string& path, match_order order = match_order::last) const;

 private:
  struct rule {
    bool allow = false;
    std::vector<std::string> operations;
    std::vector<macos_impl::sbpl_node> filters;
  };
  bool matches(const macos_impl::sbpl_node& filter, const std::string& path) const;
  std::string argument(const macos_impl::sbpl_node& arg) const;
  static bool covers(const std::string& rule_operation, const std::string& operation);

  std::vector<rule> rules_;
  std::map<std::string, std::string> params_;
  bool ok_ = false;
};

}  // namespace cordon::macos_test

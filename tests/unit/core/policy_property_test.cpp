// Property tests over generated valid policies (fixed seeds, a few thousand):
//  - JSON round trip: from_json(to_json(p)) == p, for p and for its normal form;
//  - validation accepts every generated policy and is idempotent:
//    validate(validate(p).policy).policy == validate(p).policy.
// The generator builds valid policies by construction (it does not filter),
// so a validator that refuses a valid policy fails here too. It covers every
// field, un-normalized spellings (case, trailing dots and slashes, "." and
// "..", bracketed IPv6), Unicode, control characters and extreme numbers.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>

#include "cordon/policy_json.h"
#include "cordon/validation.h"

namespace cordon {
namespace {

class generator {
 public:
  explicit generator(std::uint64_t seed) : rng_(seed) {}

  sandbox_policy policy() {
    sandbox_policy p;
    p.name = coin() ? text(12) : std::string();
    p.isolation = static_cast<isolation_level>(pick(5));
    auto& fs = p.filesystem;
    fs.read = coin() ? read_mode::full : read_mode::restricted;
    fs.include_platform_defaults = coin();
    fs.readable = paths(false);
    fs.writable = paths(true);
    fs.protected_read_only = paths(false);
    fs.denied = paths(false);
    fs.protect_vcs_metadata = coin();

    auto& net = p.network;
    net.mode = static_cast<network_mode>(pick(3));
    net.allow_local_binding = net.mode != network_mode::unrestricted && coin();
    if (net.mode == network_mode::filtered) {
      net.default_action = coin() ? rule_action::allow : rule_action::deny;
      std::map<std::pair<std::string, std::optional<int>>, rule_action> seen;
      for (std::size_t n = pick(8); n > 0; --n) {
        auto [raw, normalized] = host();
        network_rule r{raw, std::nullopt, coin() ? rule_action::allow : rule_action::deny};
        if (coin()) r.port = static_cast<int>(1 + pick(65535));
        // Same normalized host and port: keep the action (a conflict is invalid).
        const auto [it, inserted] = seen.try_emplace({normalized, r.port}, r.action);
        if (!inserted) r.action = it->second;
        net.rules.push_back(std::move(r));
      }
    }

    auto& env = p.environment;
    env.inherit = coin() ? environment_inherit::all : environment_inherit::none;
    std::set<std::string> names;
    for (std::size_t n = pick(5); n > 0; --n) {
      std::string name = env_name();
      if (names.insert(name).second) env.allow.push_back(name);
    }
    names.clear();
    for (std::size_t n = pick(5); n > 0; --n) {
      std::string name = env_name();
      if (names.insert(name).second) env.set.emplace_back(name, text(20));
    }

    auto& proc = p.process;
    proc.tree_cleanup = coin();
    if (coin()) proc.max_processes = count();
    if (coin()) proc.memory_bytes = count();
    if (coin()) proc.cpu_seconds = count();
    if (coin()) proc.timeout_ms = timeout_ms();

    for (std::size_t n = pick(4); n > 0; --n) {
      const control c = all_controls[pick(all_controls.size())];
      if (c == control::network_filter && net.mode != network_mode::filtered) continue;
      p.enforcement[c] = static_cast<enforcement_level>(pick(5));
    }
    for (std::size_t n = pick(3); n > 0; --n) p.metadata[text(6)] = text(10);
    return p;
  }

 private:
  std::mt19937_64 rng_;

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  bool coin() { return (rng_() & 1U) != 0; }

  // Valid UTF-8 of up to `max` code points: ASCII (control characters,
  // quotes and backslashes included), and 2-, 3- and 4-byte sequences.
  std::string text(std::size_t max, bool allow_nul = false) {
    std::string out;
    for (std::size_t n = pick(max + 1); n > 0; --n) {
      std::uint32_t cp = 0;
      switch (pick(6)) {
        case 0: cp = static_cast<std::uint32_t>(pick(0x20)); break;
        case 1: cp = static_cast<std::uint32_t>("\"\\/~{}=. "[pick(9)]); break;
        case 2: cp = static_cast<std::uint32_t>(0x80 + pick(0x800 - 0x80)); break;
        case 3: cp = static_cast<std::uint32_t>(0x800 + pick(0xD800 - 0x800)); break;
        case 4: cp = static_cast<std::uint32_t>(0x10000 + pick(0x110000 - 0x10000)); break;
        default: cp = static_cast<std::uint32_t>(0x20 + pick(0x5f)); break;
      }
      if (cp == 0 && !allow_nul) cp = 'x';
      append_utf8(out, cp);
    }
    return out;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    const auto byte = [&out](std::uint32_t b) { out += static_cast<char>(static_cast<unsigned char>(b)); };
    if (cp < 0x80) {
      byte(cp);
    } else if (cp < 0x800) {
      byte(0xC0 | (cp >> 6));
      byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      byte(0xE0 | (cp >> 12));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    } else {
      byte(0xF0 | (cp >> 18));
      byte(0x80 | ((cp >> 12) & 0x3F));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    }
  }

  // A path component: no '/', no NUL, no '{' (so never a root token).
  std::string component() {
    switch (pick(8)) {
      case 0: return ".";
      case 1: return "";  // a repeated slash
      default: break;
    }
    std::string c = text(8);
    std::string out;
    for (char ch : c) out += (ch == '/' || ch == '{') ? '_' : ch;
    return out.empty() ? "c" : out;
  }

  std::string path(bool run_tmp_allowed) {
    if (run_tmp_allowed && pick(6) == 0) return coin() ? "{run_tmp}" : "{run_tmp}/";
    std::string out;
    bool token = true;
    switch (pick(3)) {
      case 0: out = "{workspace}"; break;
      case 1: out = "{home}"; break;
      default: token = false; break;
    }
    int depth = 0;
    for (std::size_t n = pick(5); n > 0; --n) {
      // ".." may not climb above a token (that is invalid); above "/" it is harmless.
      if (pick(5) == 0 && (!token || depth > 0)) {
        out += "/..";
        --depth;
        continue;
      }
      std::string c = component();
      out += "/" + c;
      if (c != "." && !c.empty()) ++depth;
    }
    if (out.empty() || coin()) out += "/";
    return out;
  }

  std::vector<std::string> paths(bool writable) {
    std::vector<std::string> out;
    for (std::size_t n = pick(5); n > 0; --n) {
      out.push_back(path(writable));
      if (pick(4) == 0) out.push_back(out[pick(out.size())]);  // a duplicate
    }
    return out;
  }

  std::string label() {
    static constexpr std::string_view alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    if (pick(8) == 0) return "xn--" + std::string(1, alphabet[pick(26)]) + "bcher-kva";
    std::string out(1, alphabet[pick(alphabet.size())]);
    for (std::size_t n = pick(pick(10) == 0 ? 62 : 8); n > 0; --n) {
      out += pick(6) == 0 ? '-' : alphabet[pick(alphabet.size())];
    }
    if (out.back() == '-') out.back() = 'z';
    return out;
  }

  static std::string lower(std::string s) {
    for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
  }

  // A valid host pattern as written, and its normal form.
  std::pair<std::string, std::string> host() {
    switch (pick(6)) {
      case 0: return {"*", "*"};
      case 1: {
        std::string a = std::to_string(pick(256));
        for (int i = 0; i < 3; ++i) a += "." + std::to_string(pick(256));
        return {a, a};
      }
      case 2: {
        unsigned char bytes[16];
        for (auto& b : bytes) b = static_cast<unsigned char>(pick(4) == 0 ? rng_() : 0);
        if (pick(4) == 0) bytes[10] = bytes[11] = 0xff;  // IPv4-mapped
        char buf[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, bytes, buf, sizeof buf);
        std::string canonical = buf;
        std::string raw = coin() ? "[" + canonical + "]" : canonical;
        if (coin()) {
          for (char& c : raw) c = (c >= 'a' && c <= 'f') ? static_cast<char>(c - 'a' + 'A') : c;
        }
        return {raw, canonical};
      }
      default: break;
    }
    std::string name = label();
    for (std::size_t n = pick(4); n > 0; --n) name += "." + label();
    if (name.size() > 200) name = name.substr(name.size() - 100);
    if (name.front() == '.' || name.front() == '-') name = "a" + name;
    // The last label is never all digits: label() starts with any character, so force a letter.
    const auto dot = name.rfind('.');
    name.insert(dot == std::string::npos ? 0 : dot + 1, "t");
    const char* prefix = pick(3) == 0 ? "*." : pick(2) == 0 ? "**." : "";
    std::string raw = prefix + name + (coin() ? "." : "");
    return {raw, lower(prefix + name)};
  }

  std::string env_name() {
    std::string t = text(10);
    std::string out;
    for (char c : t) {
      if (c != '=' && c != '\0') out += c;
    }
    return out.empty() ? "N" : out;
  }

  std::uint64_t count() {
    switch (pick(4)) {
      case 0: return 1;
      case 1: return std::numeric_limits<std::uint64_t>::max() - pick(3);
      case 2: return 1 + pick(1000000);
      default: return rng_() | 1U;
    }
  }

  std::uint64_t timeout_ms() {
    switch (pick(4)) {
      case 0: return 1 + pick(999);
      case 1: return 1000 * (1 + pick(100000));
      case 2: return 1 + pick(86400000);
      default: return 1 + rng_() % max_timeout_ms;
    }
  }
};

// The first field group in which two policies differ, for failure messages.
std::string first_difference(const sandbox_policy& a, const sandbox_policy& b) {
  if (a.name != b.name) return "name";
  if (a.isolation != b.isolation) return "isolation";
  if (a.filesystem != b.filesystem) return "filesystem";
  if (a.network != b.network) return "network";
  if (a.environment != b.environment) return "environment";
  const auto ms = [](const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  if (a.process != b.process) {
    return "process (timeout_ms " + ms(a.process.timeout_ms) + " vs " + ms(b.process.timeout_ms) + ")";
  }
  if (a.enforcement != b.enforcement) return "enforcement";
  if (a.metadata != b.metadata) return "metadata";
  return a == b ? "none" : "schema_version";
}

void check_properties(const sandbox_policy& p) {
  const validation_result first = validate_sandbox_policy(p);
  ASSERT_TRUE(first.ok()) << first.errors.at(0).location << ": " << first.errors.at(0).reason << "\n"
                          << sandbox_policy_to_json(p);
  const validation_result second = validate_sandbox_policy(first.policy);
  ASSERT_TRUE(second.ok()) << second.errors.at(0).location << ": " << second.errors.at(0).reason;
  EXPECT_TRUE(second.policy == first.policy) << first_difference(second.policy, first.policy) << "\n"
                                             << sandbox_policy_to_json(first.policy);

  for (const sandbox_policy* q : {&p, &first.policy}) {
    const std::string text = sandbox_policy_to_json(*q);
    auto back = sandbox_policy_from_json(text);
    ASSERT_TRUE(back) << back.error_value().describe() << "\n" << text;
    EXPECT_TRUE(*back == *q) << first_difference(*back, *q) << "\n" << text;
  }
}

TEST(PolicyProperties, GeneratedValidPoliciesRoundTripAndValidateIdempotently) {
  for (std::uint64_t seed : {1ULL, 20240601ULL, 0xC0FFEEULL}) {
    generator gen(seed);
    for (int i = 0; i < 1000; ++i) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " policy " + std::to_string(i));
      check_properties(gen.policy());
      if (::testing::Test::HasFailure()) return;  // one counterexample is enough
    }
  }
}

}  // namespace
}  // namespace cordon

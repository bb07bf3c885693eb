// src/windows/environment.cpp — see environment.h.
#include "windows/environment.h"

#include <algorithm>
#include <map>

#include "windows/paths.h"

namespace cordon::windows::detail {
namespace {

// Windows orders a block by names compared in upper case (RtlCompareUnicodeString).
std::string upper_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool name_ok(const std::string& name, std::string& why) {
  if (name.empty()) {
    why = "empty name";
  } else if (name.find('=') != std::string::npos) {
    why = "name contains '='";
  } else if (name.find('\0') != std::string::npos) {
    why = "name contains a NUL";
  } else {
    return true;
  }
  return false;
}

blocker env_blocker(blocker_code code, std::string subject, std::string reason) {
  return make_windows_blocker(code, control::environment, std::move(subject), std::move(reason));
}

// One variable on its way into the block: the spelling that wins and where it came from.
struct entry {
  std::string name;
  std::string value;
  std::string origin;  // "host", "/environment/allow/N", "/environment/set/N"
};

}  // namespace

std::optional<std::u16string> utf8_to_utf16(std::string_view text) {
  std::u16string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    std::uint32_t cp = 0;
    std::size_t len = 0;
    if (b0 < 0x80) {
      cp = b0, len = 1;
    } else if ((b0 & 0xE0) == 0xC0) {
      cp = b0 & 0x1Fu, len = 2;
    } else if ((b0 & 0xF0) == 0xE0) {
      cp = b0 & 0x0Fu, len = 3;
    } else if ((b0 & 0xF8) == 0xF0) {
      cp = b0 & 0x07u, len = 4;
    } else {
      return std::nullopt;
    }
    if (i + len > text.size()) return std::nullopt;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3Fu);
    }
    static constexpr std::uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
    i += len;
  }
  return out;
}

std::optional<std::string> utf16_to_utf8(std::u16string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::uint32_t cp = text[i];
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (i + 1 >= text.size() || text[i + 1] < 0xDC00 || text[i + 1] > 0xDFFF) return std::nullopt;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (text[++i] - 0xDC00u);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return std::nullopt;
    }
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

environment_spec build_environment(const environment_policy& policy,
                                   const std::vector<std::pair<std::string, std::string>>& host,
                                   std::vector<blocker>& blockers) {
  const std::size_t before = blockers.size();
  // The policy's own names: two spellings of one name are ambiguous on Windows.
  std::map<std::string, std::string> spelled;  // folded -> first spelling
  const auto claim = [&](const std::string& name, const std::string& where) {
    auto [it, fresh] = spelled.emplace(fold_case(name), name);
    if (!fresh && it->second != name) {
      blockers.push_back(env_blocker(blocker_code::environment_collision, where,
                                     "\"" + name + "\" and \"" + it->second +
                                         "\" are one variable on Windows (names ignore case)"));
    }
  };
  for (std::size_t i = 0; i < policy.allow.size(); ++i) claim(policy.allow[i], "/environment/allow/" + std::to_string(i));
  for (std::size_t i = 0; i < policy.set.size(); ++i) claim(policy.set[i].first, "/environment/set/" + std::to_string(i));

  std::map<std::string, entry> chosen;  // folded name -> entry
  const auto take_host = [&](const std::string& name, const std::string& value, const std::string& origin) {
    auto [it, fresh] = chosen.emplace(fold_case(name), entry{name, value, origin});
    if (!fresh && it->second.name != name) {
      blockers.push_back(env_blocker(blocker_code::environment_collision, name,
                                     "the host has both \"" + name + "\" and \"" + it->second.name +
                                         "\"; Windows would pass only one of them"));
    }
  };
  for (const auto& variable : host) {
    const std::string& name = variable.first;  // a plain reference: lambdas capture it (clang 14)
    const bool wanted = policy.inherit == environment_inherit::all ||
                        std::any_of(policy.allow.begin(), policy.allow.end(),
                                    [&](const std::string& a) { return equals_ignoring_case(a, name); });
    if (wanted) take_host(name, variable.second, "host");
  }
  // SystemRoot by default: without it Winsock, CNG and other system DLLs
  // fail to initialize in the command (docs/windows-backend.md, "Environment").
  for (const auto& [name, value] : host) {
    if (equals_ignoring_case(name, "SystemRoot") && !chosen.contains(fold_case(name))) {
      chosen.emplace(fold_case(name), entry{name, value, "default"});
    }
  }
  for (std::size_t i = 0; i < policy.set.size(); ++i) {
    const auto& [name, value] = policy.set[i];
    chosen[fold_case(name)] = entry{name, value, "/environment/set/" + std::to_string(i)};
  }

  environment_spec spec;
  for (auto& [folded, e] : chosen) {
    std::string why;
    if (!name_ok(e.name, why)) {
      blockers.push_back(env_blocker(blocker_code::environment_invalid_name, e.origin, why));
      continue;
    }
    if (!utf8_to_utf16(e.name) || !utf8_to_utf16(e.value) || e.value.find('\0') != std::string::npos) {
      blockers.push_back(env_blocker(blocker_code::environment_not_utf8, e.origin,
                                     "variable \"" + e.name + "\": name or value is not valid UTF-8 text"));
      continue;
    }
    spec.entries.emplace_back(std::move(e.name), std::move(e.value));
  }
  if (blockers.size() != before) return {};
  std::sort(spec.entries.begin(), spec.entries.end(),
            [](const auto& a, const auto& b) { return upper_ascii(a.first) < upper_ascii(b.first); });
  for (const auto& [name, value] : spec.entries) {
    spec.block += *utf8_to_utf16(name);
    spec.block += u'=';
    spec.block += *utf8_to_utf16(value);
    spec.block += u'\0';
  }
  // An empty block is two NULs; otherwise one more ends the list.
  if (spec.block.empty()) spec.block += u'\0';
  spec.block += u'\0';
  return spec;
}

}  // namespace cordon::windows::detail

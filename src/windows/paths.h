// src/windows/paths.h — Windows path text: mapping from policy paths,
// comparison without regard to ASCII case, ancestors. Portable: no Windows
// headers, so that the compiler's precedence decisions are tested on Linux.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::windows::detail {

// ASCII lower case. NTFS compares names with its upcase table; ASCII folding
// agrees with it for every name the compiler compares (non-ASCII names are
// compared exactly, which can only miss an overlap the launcher then sees by
// file identity).
std::string fold_case(std::string_view s);

// Equal without regard to ASCII case (paths, environment names).
bool equals_ignoring_case(std::string_view a, std::string_view b);
inline bool same_path(std::string_view a, std::string_view b) { return equals_ignoring_case(a, b); }

// `path` is `root` or lies below it ("C:\a\b" is within "C:\a", "C:\ab" is not).
bool is_within(std::string_view path, std::string_view root);

// "C:\a\b" -> {"C:\", "C:\a", "C:\a\b"}.
std::vector<std::string> ancestors_and_self(const std::string& path);

// Number of components below the drive root ("C:\" is 0, "C:\a\b" is 2).
std::size_t depth(std::string_view path);

// `base` + "\" + `relative` ('/' in `relative` becomes '\').
std::string join(const std::string& base, std::string_view relative);

// Lexical normal form of an absolute path: "." and empty components dropped,
// ".." removes the previous component (never the drive root).
std::string normalize(const std::string& path);

// Why a path component cannot be used in a policy root, or nullopt: reserved
// characters (<>:"|?* and control characters; ':' would name an alternate
// data stream), a trailing dot or space (Win32 strips them, so the name would
// alias another), DOS device names (CON, NUL, COM1, ...).
std::optional<std::string> component_problem(std::string_view component);

}  // namespace cordon::windows::detail

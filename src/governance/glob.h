// glob.h — the two glob dialects of capability rules: names and shell words
// (`*`, `?` match anything), and absolute paths (`*`, `?` within one
// component, `**` across components). No brackets, no escapes: a rule means
// what it says.
#pragma once

#include <string_view>

namespace cordon::governance::detail {

bool has_glob(std::string_view pattern) noexcept;

// `*` any run of characters, `?` one character.
bool name_glob_matches(std::string_view pattern, std::string_view text) noexcept;

// A path pattern (see capability_rule::paths). `ancestor_counts`: a path that
// is an ancestor of a plain prefix pattern counts as covered (deny rules:
// writing "/" touches "/etc"), and so does a path above what a glob pattern
// matches, component by component up to its first `**` ("/home/alice" for
// "/home/*/.ssh", "/" for "/etc/**").
bool path_pattern_matches(std::string_view pattern, std::string_view path, bool ancestor_counts) noexcept;

}  // namespace cordon::governance::detail

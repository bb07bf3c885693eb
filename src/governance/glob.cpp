// glob.cpp — iterative glob matching with backtracking over the last star
// (linear for one star kind; `**` adds a second backtrack point).
#include "governance/glob.h"

namespace cordon::governance::detail {
namespace {

// Recursive on `**` only; `*` and `?` are handled by the classic
// single-backtrack loop. `slash` = whether `*`/`?` stop at '/'.
bool match(std::string_view p, std::string_view t, bool slash) noexcept {
  std::size_t pi = 0, ti = 0, star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    if (slash && pi + 1 < p.size() && p[pi] == '*' && p[pi + 1] == '*') {
      std::string_view rest = p.substr(pi + 2);
      for (std::size_t k = ti; k <= t.size(); ++k) {
        if (match(rest, t.substr(k), slash)) return true;
      }
      return false;
    }
    if (pi < p.size() && p[pi] == '*') {
      star_p = pi++;
      star_t = ti;
    } else if (pi < p.size() && (p[pi] == '?' ? !(slash && t[ti] == '/') : p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (star_p != std::string_view::npos && !(slash && t[star_t] == '/')) {
      pi = star_p + 1;
      ti = ++star_t;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// The next component of `path` at or after `i` (empty at the end).
std::string_view next_component(std::string_view path, std::size_t& i) {
  while (i < path.size() && path[i] == '/') ++i;
  std::size_t start = i;
  while (i < path.size() && path[i] != '/') ++i;
  return path.substr(start, i - start);
}

// Is `path` a directory above something the glob pattern matches? Component
// by component, up to the first `**` (below a `**` every directory could
// hold a match, so none is counted).
bool above_a_match(std::string_view pattern, std::string_view path) noexcept {
  std::size_t pi = 0, ti = 0;
  for (;;) {
    std::string_view t = next_component(path, ti);
    std::string_view p = next_component(pattern, pi);
    if (p.empty()) return false;  // the path is as deep as the pattern, or deeper
    if (t.empty()) return true;   // the path ended above the pattern's last component
    if (p == "**" || !match(p, t, true)) return false;
  }
}

}  // namespace

bool has_glob(std::string_view pattern) noexcept {
  return pattern.find_first_of("*?") != std::string_view::npos;
}

bool name_glob_matches(std::string_view pattern, std::string_view text) noexcept { return match(pattern, text, false); }

bool path_pattern_matches(std::string_view pattern, std::string_view path, bool ancestor_counts) noexcept {
  if (!has_glob(pattern)) {
    std::string_view prefix = pattern.size() > 1 && pattern.back() == '/' ? pattern.substr(0, pattern.size() - 1) : pattern;
    auto within = [](std::string_view outer, std::string_view inner) {
      if (outer == "/") return true;
      return inner.substr(0, outer.size()) == outer && (inner.size() == outer.size() || inner[outer.size()] == '/');
    };
    return within(prefix, path) || (ancestor_counts && within(path, prefix));
  }
  if (ancestor_counts && above_a_match(pattern, path)) return true;
  if (pattern.size() >= 3 && pattern.substr(pattern.size() - 3) == "/**" &&
      match(pattern.substr(0, pattern.size() - 3), path, true)) {
    return true;
  }
  return match(pattern, path, true);
}

}  // namespace cordon::governance::detail

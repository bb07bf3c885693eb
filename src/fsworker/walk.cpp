// walk.cpp — glob matching, gitignore rules and the directory walk (walk.h).
#include "fsworker/walk.h"

#include "posix/unique_fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace cordon::fsworker {
namespace {

bool class_matches(std::string_view pat, std::size_t& i, char c) {
  // pat[i] == '['; on return i is past the closing ']'.
  std::size_t j = i + 1;
  bool negate = false;
  if (j < pat.size() && (pat[j] == '!' || pat[j] == '^')) negate = true, ++j;
  bool hit = false;
  bool first = true;
  while (j < pat.size() && (pat[j] != ']' || first)) {
    first = false;
    if (j + 2 < pat.size() && pat[j + 1] == '-' && pat[j + 2] != ']') {
      if (c >= pat[j] && c <= pat[j + 2]) hit = true;
      j += 3;
    } else {
      if (c == pat[j]) hit = true;
      ++j;
    }
  }
  i = j < pat.size() ? j + 1 : j;
  return hit != negate;
}

bool segment_matches(std::string_view pat, std::string_view s) {
  std::size_t p = 0, t = 0, star_p = std::string_view::npos, star_t = 0;
  while (t < s.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star_p = ++p;
      star_t = t;
      continue;
    }
    if (p < pat.size() && pat[p] == '[') {
      std::size_t q = p;
      if (class_matches(pat, q, s[t])) {
        p = q, ++t;
        continue;
      }
    } else if (p < pat.size() && (pat[p] == '?' || pat[p] == s[t])) {
      ++p, ++t;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    auto j = s.find('/', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

struct ignore_rule {
  std::string dir;      // relative to the walk's base, "" for the base
  std::string pattern;  // relative to dir when anchored
  bool negate = false, dir_only = false, anchored = false;
};

std::vector<ignore_rule> parse_gitignore(const std::string& text, const std::string& dir) {
  std::vector<ignore_rule> rules;
  std::size_t i = 0;
  while (i < text.size()) {
    auto j = text.find('\n', i);
    if (j == std::string::npos) j = text.size();
    std::string line = text.substr(i, j - i);
    i = j + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    while (!line.empty() && line.back() == ' ' && (line.size() < 2 || line[line.size() - 2] != '\\')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    ignore_rule r;
    r.dir = dir;
    if (line[0] == '!') r.negate = true, line.erase(0, 1);
    if (!line.empty() && line[0] == '\\') line.erase(0, 1);
    if (!line.empty() && line.back() == '/') r.dir_only = true, line.pop_back();
    if (line.find('/') != std::string::npos) r.anchored = true;
    if (!line.empty() && line[0] == '/') line.erase(0, 1);
    if (line.empty()) continue;
    r.pattern = line;
    rules.push_back(std::move(r));
  }
  return rules;
}

bool ignored(const std::vector<ignore_rule>& rules, const std::string& rel, bool is_dir) {
  bool result = false;
  for (const auto& r : rules) {
    if (r.dir_only && !is_dir) continue;
    if (!r.dir.empty() && !(rel.size() > r.dir.size() && rel.compare(0, r.dir.size(), r.dir) == 0 && rel[r.dir.size()] == '/')) {
      continue;
    }
    const std::string below = r.dir.empty() ? rel : rel.substr(r.dir.size() + 1);
    const auto slash = below.rfind('/');
    const std::string_view base = slash == std::string::npos ? std::string_view(below) : std::string_view(below).substr(slash + 1);
    if (r.anchored ? glob_matches(r.pattern, below) : segment_matches(r.pattern, base)) result = !r.negate;
  }
  return result;
}

struct walker {
  op_context& ctx;
  bool gitignore;
  std::size_t max_depth;
  walk_counts& counts;
  const std::function<bool(const walk_entry&)>& visit;
  std::vector<ignore_rule> rules;
  bool stopped = false;

  fs_status dir(int fd, const std::string& rel, const std::string& abs, std::size_t depth) {
    if (ctx.expired()) return make_fs_error("deadline_exceeded", "the request's deadline passed during the walk");
    const std::size_t rules_before = rules.size();
    unique_fd dup(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!dup) return resolver::from_errno(errno, "list", abs);
    DIR* d = ::fdopendir(dup.get());
    if (d == nullptr) return resolver::from_errno(errno, "list", abs);
    dup.release();  // the DIR owns it now (closedir)
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      if (!is_valid_utf8(n)) {
        ++counts.skipped_non_utf8;
        continue;
      }
      names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    if (gitignore && std::binary_search(names.begin(), names.end(), std::string(".gitignore"))) {
      const std::string gi = (abs == "/" ? "" : abs) + "/.gitignore";
      auto f = ctx.paths->open_child(fd, ".gitignore", gi, O_RDONLY | O_NONBLOCK);
      struct stat gst {};
      if (f && ::fstat(f->get(), &gst) == 0 && S_ISREG(gst.st_mode)) {
        auto text = read_all(f->get(), 0, 1u << 20, gi);  // a larger .gitignore is not read
        if (text) {
          auto more = parse_gitignore(*text, rel);
          rules.insert(rules.end(), more.begin(), more.end());
        }
      }
    }
    fs_status status = fs_ok{};
    for (const auto& n : names) {
      if (stopped) break;
      walk_entry e;
      e.name = n;
      e.dir_fd = fd;
      e.relative = rel.empty() ? n : rel + "/" + n;
      e.absolute = (abs == "/" ? "" : abs) + "/" + n;
      if (::fstatat(fd, n.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      const bool is_dir = S_ISDIR(e.st.st_mode);
      if (gitignore && ((is_dir && n == ".git") || ignored(rules, e.relative, is_dir))) {
        ++counts.skipped_ignored;
        continue;
      }
      if (auto c = ctx.paths->check(e.absolute, access_kind::read); !c) {
        ++counts.skipped_refused;
        continue;
      }
      if (!visit(e)) {
        stopped = true;
        break;
      }
      if (is_dir && depth + 1 < max_depth) {
        auto child = ctx.paths->open_child(fd, n, e.absolute, O_RDONLY | O_DIRECTORY);
        if (!child) {
          ++counts.skipped_refused;
          continue;
        }
        status = this->dir(child->get(), e.relative, e.absolute, depth + 1);
        if (!status) break;
      }
    }
    ::closedir(d);
    rules.resize(rules_before);
    return status;
  }
};

}  // namespace

std::vector<std::string> expand_braces(const std::string& pattern) {
  const auto open = pattern.find('{');
  if (open == std::string::npos) return {pattern};
  int level = 0;
  std::size_t close = std::string::npos;
  std::vector<std::size_t> commas;
  for (std::size_t i = open; i < pattern.size(); ++i) {
    if (pattern[i] == '{') ++level;
    if (pattern[i] == '}' && --level == 0) {
      close = i;
      break;
    }
    if (pattern[i] == ',' && level == 1) commas.push_back(i);
  }
  if (close == std::string::npos) return {pattern};
  std::vector<std::string> out;
  std::size_t start = open + 1;
  commas.push_back(close);
  for (std::size_t c : commas) {
    for (auto& rest : expand_braces(pattern.substr(0, open) + pattern.substr(start, c - start) + pattern.substr(close + 1))) {
      if (out.size() >= 256) return out;
      out.push_back(std::move(rest));
    }
    start = c + 1;
  }
  return out;
}

bool glob_matches(std::string_view pattern, std::string_view path) {
  const auto p = split(pattern), t = split(path);
  // can[i][j]: pattern components from i match path components from j.
  std::vector<std::vector<char>> can(p.size() + 1, std::vector<char>(t.size() + 1, 0));
  can[p.size()][t.size()] = 1;
  for (std::size_t i = p.size(); i-- > 0;) {
    for (std::size_t j = t.size() + 1; j-- > 0;) {
      if (p[i] == "**") {
        can[i][j] = can[i + 1][j] || (j < t.size() && can[i][j + 1]);
      } else {
        can[i][j] = j < t.size() && segment_matches(p[i], t[j]) && can[i + 1][j + 1];
      }
    }
  }
  return can[0][0] != 0;
}

fs_status walk_tree(op_context& ctx, const checked_path& base, bool gitignore, std::size_t max_depth,
                    walk_counts& counts, const std::function<bool(const walk_entry&)>& visit) {
  auto fd = ctx.paths->open(base, O_RDONLY | O_DIRECTORY);
  if (!fd) return fd.error();
  walker w{ctx, gitignore, max_depth, counts, visit, {}, false};
  return w.dir(fd->get(), "", base.absolute, 0);
}

}  // namespace cordon::fsworker

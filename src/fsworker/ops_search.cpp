// ops_search.cpp — glob and grep (ops.h, docs/fs-worker.md, "Operations").
// grep uses RE2: its matching time is linear in the input, so no pattern can
// make a request outlive its deadline by backtracking.
#include <fcntl.h>
#include <re2/re2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "fsworker/ops.h"
#include "fsworker/walk.h"

namespace cordon::fsworker {
namespace {

constexpr std::size_t kMaxLineBytes = 500;

std::size_t pattern_depth(const std::vector<std::string>& patterns) {
  std::size_t depth = 0;
  for (const auto& p : patterns) {
    if (p.find("**") != std::string::npos) return static_cast<std::size_t>(-1);
    depth = std::max<std::size_t>(depth, static_cast<std::size_t>(std::count(p.begin(), p.end(), '/')) + 1);
  }
  return depth;
}

bool any_matches(const std::vector<std::string>& patterns, const std::string& rel) {
  for (const auto& p : patterns) {
    // A pattern without "/" names the file, at any depth (grep's "glob" filter).
    if (glob_matches(p, rel)) return true;
  }
  return false;
}

std::string clip_line(std::string_view line) {
  if (line.size() <= kMaxLineBytes) return std::string(line);
  std::size_t end = kMaxLineBytes;
  while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) --end;
  return std::string(line.substr(0, end));
}

nlohmann::json counts_json(const walk_counts& c) {
  return {{"non_utf8", c.skipped_non_utf8}, {"refused", c.skipped_refused}, {"ignored", c.skipped_ignored}};
}

}  // namespace

op_result op_glob(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"pattern", "path", "gitignore", "max_results"}); !k) return k.error();
  auto pattern = string_field(req, "pattern", true);
  auto path = string_field(req, "path", false, ".");
  auto gitignore = bool_field(req, "gitignore", false);
  auto cap = number_field(req, "max_results", 1000);
  if (!pattern) return pattern.error();
  if (!path) return path.error();
  if (!gitignore) return gitignore.error();
  if (!cap) return cap.error();
  if (pattern->empty() || pattern->front() == '/' || pattern->size() > 1024) {
    return make_fs_error("invalid_pattern", "a glob pattern is relative to \"path\", non-empty, at most 1024 bytes");
  }
  if (pattern->find("..") != std::string::npos) return make_fs_error("path_escape", "a glob pattern has no \"..\"", "worker: no \"..\"");
  const auto patterns = expand_braces(*pattern);
  const std::uint64_t limit = std::min<std::uint64_t>(*cap, ctx.limits->max_results);
  auto base = ctx.paths->check(*path, access_kind::read);
  if (!base) return base.error();
  nlohmann::json matches = nlohmann::json::array();
  bool truncated = false;
  std::uint64_t hard_links = 0;
  walk_counts counts;
  auto walked = walk_tree(ctx, *base, *gitignore, pattern_depth(patterns), counts, [&](const walk_entry& e) {
    if (!any_matches(patterns, e.relative)) return true;
    if (S_ISREG(e.st.st_mode) && e.st.st_nlink > 1) return ++hard_links, true;
    if (matches.size() >= limit) {
      truncated = true;
      return false;
    }
    matches.push_back(e.absolute);
    return true;
  });
  if (!walked) return walked.error();
  nlohmann::json skipped = counts_json(counts);
  skipped["hard_link"] = hard_links;
  return nlohmann::json{{"matches", matches}, {"truncated", truncated}, {"skipped", skipped}};
}

op_result op_grep(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"pattern", "path", "glob", "case_insensitive", "gitignore", "max_results"}); !k) {
    return k.error();
  }
  auto pattern = string_field(req, "pattern", true);
  auto path = string_field(req, "path", false, ".");
  auto filter = string_field(req, "glob", false, "");
  auto ci = bool_field(req, "case_insensitive", false);
  auto gitignore = bool_field(req, "gitignore", false);
  auto cap = number_field(req, "max_results", 200);
  if (!pattern) return pattern.error();
  if (!path) return path.error();
  if (!filter) return filter.error();
  if (!ci) return ci.error();
  if (!gitignore) return gitignore.error();
  if (!cap) return cap.error();
  RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(!*ci);
  options.set_max_mem(64 << 20);
  const RE2 re(*pattern, options);
  if (!re.ok()) return make_fs_error("invalid_pattern", "the regular expression is refused by RE2: " + re.error());
  // Bounded as glob's pattern is: brace expansion recurses once per level.
  if (filter->size() > 1024) return make_fs_error("invalid_pattern", "a glob filter is at most 1024 bytes");
  std::vector<std::string> globs;
  if (!filter->empty()) {
    for (auto& g : expand_braces(*filter)) globs.push_back(g.find('/') == std::string::npos ? "**/" + g : g);
  }
  const std::uint64_t limit = std::min<std::uint64_t>(*cap, ctx.limits->max_results);
  auto base = ctx.paths->check(*path, access_kind::read);
  if (!base) return base.error();
  nlohmann::json matches = nlohmann::json::array();
  bool truncated = false;
  std::uint64_t files = 0, skipped_binary = 0, skipped_large = 0, skipped_links = 0;
  fs_status failure = fs_ok{};
  auto grep_fd = [&](int fd, const std::string& abs, const struct stat& st) {
    if (st.st_nlink > 1) return ++skipped_links, true;
    if (static_cast<std::uint64_t>(st.st_size) > ctx.limits->max_file_bytes) return ++skipped_large, true;
    auto text = read_all(fd, static_cast<std::size_t>(st.st_size), ctx.limits->max_file_bytes, abs);
    if (!text) {
      if (text.error().code == "file_too_large") ++skipped_large;  // it grew since the fstat
      return true;
    }
    if (text->substr(0, 8192).find('\0') != std::string::npos) return ++skipped_binary, true;
    ++files;
    std::size_t i = 0, line = 1;
    while (i < text->size()) {
      auto j = text->find('\n', i);
      if (j == std::string::npos) j = text->size();
      const std::string_view l(text->data() + i, j - i);
      if ((line & 4095) == 0 && ctx.expired()) {
        failure = make_fs_error("deadline_exceeded", "the request's deadline passed while searching " + abs);
        return false;
      }
      if (RE2::PartialMatch(l, re)) {
        if (matches.size() >= limit) {
          truncated = true;
          return false;
        }
        std::string shown = clip_line(l);
        if (!is_valid_utf8(shown)) shown = "(line is not UTF-8)";
        matches.push_back({{"path", abs}, {"line", line}, {"text", shown}});
      }
      i = j + 1;
      ++line;
    }
    return true;
  };
  walk_counts counts;
  // A file named directly is searched (and refused as read would refuse it).
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
  auto fd = ctx.paths->open(*base, O_RDONLY | O_NONBLOCK);
  if (!fd) return fd.error();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return resolver::from_errno(errno, "stat", base->absolute);
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return make_fs_error("not_a_file", base->absolute + " is neither a regular file nor a directory");
  }
  if (S_ISREG(st.st_mode)) {
    if (st.st_nlink > 1) return hard_link_error(base->absolute, st.st_nlink);
    grep_fd(fd->get(), base->absolute, st);
  } else {
    auto walked = walk_tree(ctx, *base, *gitignore, static_cast<std::size_t>(-1), counts, [&](const walk_entry& e) {
      if (ctx.expired()) {
        failure = make_fs_error("deadline_exceeded", "the request's deadline passed during the search");
        return false;
      }
      if (!S_ISREG(e.st.st_mode)) return true;
      if (!globs.empty() && !any_matches(globs, e.relative)) return true;
      auto file = ctx.paths->open_child(e.dir_fd, e.name, e.absolute, O_RDONLY | O_NONBLOCK);
      if (!file) return ++counts.skipped_refused, true;
      // What was opened, not what the name was when the directory was read.
      struct stat opened {};
      if (::fstat(file->get(), &opened) != 0 || !S_ISREG(opened.st_mode)) return true;
      return grep_fd(file->get(), e.absolute, opened);
    });
    if (!walked) return walked.error();
  }
  if (!failure) return failure.error();
  nlohmann::json skipped = counts_json(counts);
  skipped["binary"] = skipped_binary;
  skipped["too_large"] = skipped_large;
  skipped["hard_link"] = skipped_links;
  return nlohmann::json{{"matches", matches}, {"truncated", truncated}, {"files_searched", files}, {"skipped", skipped}};
}

}  // namespace cordon::fsworker

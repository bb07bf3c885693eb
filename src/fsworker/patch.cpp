// patch.cpp — parsing unified diffs and agent patches, applying hunks, and
// the dry run's diff (patch.h).
#include "fsworker/patch.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace cordon::fsworker {
namespace {

struct lines_of {
  std::vector<std::string> lines;
  bool final_newline = true;
};

lines_of split_lines(const std::string& text) {
  lines_of out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto j = text.find('\n', i);
    if (j == std::string::npos) {
      out.lines.push_back(text.substr(i));
      out.final_newline = false;
      return out;
    }
    out.lines.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines, bool final_newline) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    if (i + 1 < lines.size() || final_newline) out += '\n';
  }
  return out;
}

std::string trim_right(const std::string& s) {
  auto end = s.find_last_not_of(" \t\r");
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

std::string trim(const std::string& s) {
  auto begin = s.find_first_not_of(" \t\r");
  return begin == std::string::npos ? std::string() : trim_right(s.substr(begin));
}

fs_error invalid(std::size_t line, const std::string& why) {
  return make_fs_error("patch_invalid", "patch line " + std::to_string(line + 1) + ": " + why);
}

std::string strip_prefix_path(std::string p) {
  if (auto tab = p.find('\t'); tab != std::string::npos) p.resize(tab);
  p = trim_right(p);
  if (p.rfind("a/", 0) == 0 || p.rfind("b/", 0) == 0) p = p.substr(2);
  return p;
}

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

fs_result<std::vector<patch_file>> parse_agent(const std::vector<std::string>& in, std::size_t first) {
  std::vector<patch_file> files;
  std::size_t i = first + 1;
  bool ended = false;
  while (i < in.size()) {
    const std::string& line = in[i];
    if (line == "*** End Patch") {
      ended = true;
      break;
    }
    if (starts_with(line, "*** Add File: ")) {
      patch_file f;
      f.what = patch_file::kind::add;
      f.path = trim(line.substr(14));
      for (++i; i < in.size() && !starts_with(in[i], "*** "); ++i) {
        if (in[i].empty() || in[i][0] != '+') return invalid(i, "a line of an added file must start with '+'");
        f.content += in[i].substr(1) + "\n";
      }
      files.push_back(std::move(f));
      continue;
    }
    if (starts_with(line, "*** Delete File: ")) {
      patch_file f;
      f.what = patch_file::kind::remove;
      f.path = trim(line.substr(17));
      files.push_back(std::move(f));
      ++i;
      continue;
    }
    if (starts_with(line, "*** Update File: ")) {
      patch_file f;
      f.path = trim(line.substr(17));
      ++i;
      if (i < in.size() && starts_with(in[i], "*** Move to: ")) f.move_to = trim(in[i++].substr(13));
      patch_hunk h;
      bool open = false;
      auto flush = [&] {
        if (open && (!h.old_lines.empty() || !h.new_lines.empty() || !h.header.empty())) f.hunks.push_back(h);
        h = patch_hunk{};
        open = false;
      };
      for (; i < in.size(); ++i) {
        const std::string& l = in[i];
        if (l == "*** End of File") {
          h.end_of_file = true;
          continue;
        }
        if (starts_with(l, "*** ")) break;
        if (starts_with(l, "@@")) {
          flush();
          h.header = trim(l.substr(2));
          open = true;
          continue;
        }
        open = true;
        if (l.empty()) {  // an empty context line whose leading space was lost
          h.old_lines.emplace_back();
          h.new_lines.emplace_back();
        } else if (l[0] == ' ') {
          h.old_lines.push_back(l.substr(1));
          h.new_lines.push_back(l.substr(1));
        } else if (l[0] == '-') {
          h.old_lines.push_back(l.substr(1));
        } else if (l[0] == '+') {
          h.new_lines.push_back(l.substr(1));
        } else {
          return invalid(i, "a hunk line must start with ' ', '-' or '+'");
        }
      }
      flush();
      if (f.hunks.empty() && f.move_to.empty()) return invalid(i, "Update File " + f.path + " has no hunk");
      files.push_back(std::move(f));
      continue;
    }
    if (trim(line).empty()) {
      ++i;
      continue;
    }
    return invalid(i, "expected *** Add File, *** Update File, *** Delete File or *** End Patch");
  }
  if (!ended) return invalid(in.size() ? in.size() - 1 : 0, "missing *** End Patch");
  if (files.empty()) return invalid(first, "the patch changes no file");
  return files;
}

// "START[,COUNT]" of a hunk header, each a line number or count no file
// of the worker's (64 MiB) can exceed: larger or negative ones are refused
// before any arithmetic on them.
bool parse_range(const std::string& s, long& start, long& count) {
  constexpr long kMaxLines = 1L << 30;
  auto number = [&](const char* from, char*& end, long& out) {
    if (*from < '0' || *from > '9') return false;  // no sign, no blank
    errno = 0;
    out = std::strtol(from, &end, 10);
    return errno == 0 && out <= kMaxLines;
  };
  char* end = nullptr;
  count = 1;
  if (!number(s.c_str(), end, start)) return false;
  if (*end == ',' && !number(end + 1, end, count)) return false;
  return *end == '\0';
}

fs_result<std::vector<patch_file>> parse_unified(const std::vector<std::string>& in) {
  std::vector<patch_file> files;
  std::size_t i = 0;
  while (i < in.size()) {
    if (!starts_with(in[i], "--- ") || i + 1 >= in.size() || !starts_with(in[i + 1], "+++ ")) {
      ++i;
      continue;
    }
    const std::string from = strip_prefix_path(in[i].substr(4));
    const std::string to = strip_prefix_path(in[i + 1].substr(4));
    patch_file f;
    if (from == "/dev/null") {
      f.what = patch_file::kind::add;
      f.path = to;
    } else if (to == "/dev/null") {
      f.what = patch_file::kind::remove;
      f.path = from;
    } else {
      f.path = from;
      if (to != from) f.move_to = to;
    }
    i += 2;
    while (i < in.size() && starts_with(in[i], "@@ ")) {
      const auto close = in[i].find(" @@", 3);
      if (close == std::string::npos) return invalid(i, "malformed hunk header");
      const std::string ranges = in[i].substr(3, close - 3);
      const auto space = ranges.find(' ');
      long os = 0, oc = 0, ns = 0, nc = 0;
      if (space == std::string::npos || ranges[0] != '-' || ranges[space + 1] != '+' ||
          !parse_range(ranges.substr(1, space - 1), os, oc) || !parse_range(ranges.substr(space + 2), ns, nc)) {
        return invalid(i, "malformed hunk header");
      }
      patch_hunk h;
      h.old_start = oc == 0 ? os + 1 : os;
      ++i;
      long seen_old = 0, seen_new = 0;
      char last = ' ';
      while (i < in.size() && (seen_old < oc || seen_new < nc || (i < in.size() && starts_with(in[i], "\\")))) {
        const std::string& l = in[i];
        if (starts_with(l, "\\")) {
          if (last == '+' || last == ' ') h.new_no_newline = true;
          ++i;
          continue;
        }
        const char tag = l.empty() ? ' ' : l[0];
        const std::string body = l.empty() ? std::string() : l.substr(1);
        if (tag == ' ') {
          h.old_lines.push_back(body), h.new_lines.push_back(body), ++seen_old, ++seen_new;
        } else if (tag == '-') {
          h.old_lines.push_back(body), ++seen_old;
        } else if (tag == '+') {
          h.new_lines.push_back(body), ++seen_new;
        } else {
          return invalid(i, "hunk ends early (its header counts more lines)");
        }
        last = tag;
        ++i;
      }
      if (seen_old != oc || seen_new != nc) return invalid(i, "hunk line counts do not match its header");
      if (f.what == patch_file::kind::add) {
        f.content = join_lines(h.new_lines, !h.new_no_newline);
      } else {
        f.hunks.push_back(std::move(h));
      }
    }
    files.push_back(std::move(f));
  }
  if (files.empty()) return make_fs_error("patch_invalid", "no file in the patch (no ---/+++ pair, no *** Begin Patch)");
  return files;
}

// Where `want` occurs in `lines` at or after `from`, nearest to `hint` when
// one is given; exact first, then ignoring trailing and then surrounding
// whitespace (as agents' patch tools do). -1 when nowhere.
long find_sequence(const std::vector<std::string>& lines, const std::vector<std::string>& want, std::size_t from,
                   long hint, bool at_end) {
  if (want.size() > lines.size()) return -1;
  const std::size_t last = lines.size() - want.size();
  for (int pass = 0; pass < 3; ++pass) {
    auto same = [&](const std::string& a, const std::string& b) {
      return pass == 0 ? a == b : pass == 1 ? trim_right(a) == trim_right(b) : trim(a) == trim(b);
    };
    auto matches_at = [&](std::size_t at) {
      for (std::size_t k = 0; k < want.size(); ++k) {
        if (!same(lines[at + k], want[k])) return false;
      }
      return true;
    };
    if (at_end) {
      if (last >= from && matches_at(last)) return static_cast<long>(last);
      continue;
    }
    if (hint >= 0) {
      // Outward from the hint: the nearest offset wins, as patch(1) does.
      for (std::size_t d = 0; d <= lines.size(); ++d) {
        const long up = hint - static_cast<long>(d), down = hint + static_cast<long>(d);
        if (down >= static_cast<long>(from) && down <= static_cast<long>(last) && matches_at(static_cast<std::size_t>(down))) return down;
        if (d > 0 && up >= static_cast<long>(from) && up <= static_cast<long>(last) && matches_at(static_cast<std::size_t>(up))) return up;
        if (up < static_cast<long>(from) && down > static_cast<long>(last)) break;
      }
      continue;
    }
    for (std::size_t at = from; at <= last; ++at) {
      if (matches_at(at)) return static_cast<long>(at);
    }
  }
  return -1;
}

}  // namespace

fs_result<std::vector<patch_file>> parse_patch(std::string_view text) {
  const auto split = split_lines(std::string(text));
  for (std::size_t i = 0; i < split.lines.size(); ++i) {
    if (trim(split.lines[i]).empty()) continue;
    if (trim(split.lines[i]) == "*** Begin Patch") return parse_agent(split.lines, i);
    break;
  }
  return parse_unified(split.lines);
}

fs_result<std::string> apply_hunks(const std::string& original, const std::vector<patch_hunk>& hunks,
                                   const std::string& path) {
  auto doc = split_lines(original);
  if (original.empty()) doc.final_newline = true;
  std::size_t cursor = 0;
  long delta = 0;  // unified: lines added minus removed by earlier hunks
  for (std::size_t n = 0; n < hunks.size(); ++n) {
    const patch_hunk& h = hunks[n];
    auto conflict = [&](const std::string& why) {
      return make_fs_error("patch_conflict", path + ": hunk " + std::to_string(n + 1) + " " + why);
    };
    if (!h.header.empty()) {
      const long at = find_sequence(doc.lines, {h.header}, cursor, -1, false);
      if (at < 0) return conflict("names a line that is not in the file: " + h.header);
      cursor = static_cast<std::size_t>(at) + 1;
      if (h.old_lines.empty() && h.new_lines.empty()) continue;
    }
    long at;
    if (h.old_lines.empty()) {
      at = h.old_start >= 0 ? std::clamp<long>(h.old_start - 1 + delta, 0, static_cast<long>(doc.lines.size()))
                            : static_cast<long>(h.end_of_file || h.header.empty() ? doc.lines.size() : cursor);
    } else {
      const long hint = h.old_start >= 0 ? h.old_start - 1 + delta : -1;
      at = find_sequence(doc.lines, h.old_lines, h.old_start >= 0 ? 0 : cursor, hint, h.end_of_file);
      if (at < 0) return conflict("does not apply: its context and removed lines are not in the file");
    }
    // A unified hunk that reaches the file's last line says how it ends: with a
    // newline unless its new side is marked "\ No newline at end of file".
    const bool reaches_end = h.old_start >= 0 && !h.old_lines.empty() &&
                             static_cast<std::size_t>(at) + h.old_lines.size() == doc.lines.size();
    if (reaches_end) doc.final_newline = true;
    const auto pos = doc.lines.begin() + at;
    doc.lines.erase(pos, pos + static_cast<long>(h.old_lines.size()));
    doc.lines.insert(doc.lines.begin() + at, h.new_lines.begin(), h.new_lines.end());
    cursor = static_cast<std::size_t>(at) + h.new_lines.size();
    delta += static_cast<long>(h.new_lines.size()) - static_cast<long>(h.old_lines.size());
    if (h.new_no_newline && cursor == doc.lines.size()) doc.final_newline = false;
  }
  return join_lines(doc.lines, doc.final_newline);
}

std::string unified_diff(const std::string& name_a, const std::string& a, const std::string& name_b,
                         const std::string& b, bool a_exists, bool b_exists) {
  if (a == b && a_exists == b_exists) return {};
  const auto la = split_lines(a), lb = split_lines(b);
  const auto& x = la.lines;
  const auto& y = lb.lines;
  std::size_t prefix = 0;
  while (prefix < x.size() && prefix < y.size() && x[prefix] == y[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < x.size() - prefix && suffix < y.size() - prefix &&
         x[x.size() - 1 - suffix] == y[y.size() - 1 - suffix]) {
    ++suffix;
  }
  if (la.final_newline != lb.final_newline && suffix > 0) suffix = 0;  // the last line differs in its newline
  const std::size_t ctx = 3;
  const std::size_t start = prefix > ctx ? prefix - ctx : 0;
  const std::size_t end_x = std::min(x.size(), x.size() - suffix + std::min(suffix, ctx));
  const std::size_t end_y = std::min(y.size(), y.size() - suffix + std::min(suffix, ctx));
  std::string out = "--- " + (a_exists ? "a" + name_a : std::string("/dev/null")) + "\n+++ " +
                    (b_exists ? "b" + name_b : std::string("/dev/null")) + "\n";
  const std::size_t cx = end_x - start, cy = end_y - start;
  out += "@@ -" + std::to_string(cx == 0 ? start : start + 1) + "," + std::to_string(cx) + " +" +
         std::to_string(cy == 0 ? start : start + 1) + "," + std::to_string(cy) + " @@\n";
  for (std::size_t i = start; i < prefix; ++i) out += " " + x[i] + "\n";
  for (std::size_t i = prefix; i < x.size() - suffix; ++i) {
    out += "-" + x[i] + "\n";
    if (i + 1 == x.size() && !la.final_newline) out += "\\ No newline at end of file\n";
  }
  for (std::size_t i = prefix; i < y.size() - suffix; ++i) {
    out += "+" + y[i] + "\n";
    if (i + 1 == y.size() && !lb.final_newline) out += "\\ No newline at end of file\n";
  }
  for (std::size_t i = x.size() - suffix; i < end_x; ++i) {
    out += " " + x[i] + "\n";
    if (i + 1 == x.size() && !la.final_newline) out += "\\ No newline at end of file\n";
  }
  return out;
}

}  // namespace cordon::fsworker

#include "core/git_rules.h"

#include "posix/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <set>
#include <sys/stat.h>

namespace cordon::core {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-'; }

// A cursor over the text, as git's config reader sees it: one character at a
// time, "\r\n" read as "\n", the end as a final "\n".
class cursor {
 public:
  explicit cursor(std::string_view text) : text_(text) {}
  bool at_end() const { return pos_ >= text_.size(); }
  char next() {
    if (pos_ >= text_.size()) {
      ++pos_;
      return '\n';
    }
    char c = text_[pos_++];
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') c = text_[pos_++];
    return c;
  }
  void back() { --pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// After "[": the section (and subsection) up to "]" (git's get_base_var).
bool parse_header(cursor& in, std::string& section, std::string& subsection) {
  section.clear();
  subsection.clear();
  for (;;) {
    char c = in.next();
    if (in.at_end() && c == '\n') return false;
    if (c == ']') break;
    if (is_space(c)) {
      // Extended form: [section "subsection"], escapes \x meaning x.
      do c = in.next(); while (is_space(c));
      if (c != '"') return false;
      for (;;) {
        c = in.next();
        if (c == '\n') return false;
        if (c == '"') break;
        if (c == '\\') {
          c = in.next();
          if (c == '\n') return false;
        }
        subsection.push_back(c);
      }
      if (in.next() != ']') return false;
      break;
    }
    if (!is_name_char(c) && c != '.') return false;
    section.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  // The old form [section.subsection]: the part after the first dot, lowercased.
  if (subsection.empty()) {
    auto dot = section.find('.');
    if (dot != std::string::npos) {
      subsection = section.substr(dot + 1);
      section.erase(dot);
    }
  }
  return !section.empty();
}

// After "name": " = value" to the end of the logical line (git's parse_value).
bool parse_value(cursor& in, std::string& value) {
  value.clear();
  bool quote = false, comment = false;
  std::size_t spaces = 0;
  for (;;) {
    char c = in.next();
    if (c == '\n') return !quote;
    if (comment) continue;
    if (is_space(c) && !quote) {
      if (!value.empty()) ++spaces;
      continue;
    }
    if (!quote && (c == ';' || c == '#')) {
      comment = true;
      continue;
    }
    value.append(spaces, ' ');
    spaces = 0;
    if (c == '\\') {
      c = in.next();
      switch (c) {
        case '\n': continue;  // a continued line
        case 't': c = '\t'; break;
        case 'b': c = '\b'; break;
        case 'n': c = '\n'; break;
        case '\\':
        case '"': break;
        default: return false;
      }
      value.push_back(c);
      continue;
    }
    if (c == '"') {
      quote = !quote;
      continue;
    }
    value.push_back(c);
  }
}

// At most `limit` + 1 bytes: the caller sees that the file is larger.
bool read_file(const std::string& path, std::size_t limit, std::string& out) {
  unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return false;
  char buffer[65536];
  bool good = true;
  while (out.size() <= limit) {
    ssize_t n = ::read(fd.get(), buffer, std::min(sizeof buffer, limit + 1 - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) good = false;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return good;
}

std::string directory_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// An include's path as git-config(1) resolves it.
// Lexically normalized: the same file git opens, named the way a mount table compares paths.
std::string include_target(const std::string& value, const std::string& including, const std::string& home) {
  std::string path;
  if (value.rfind("~/", 0) == 0) {
    if (home.empty()) return {};
    path = home + value.substr(1);
  } else if (value.empty() || value[0] == '/') {
    path = value;
  } else {
    path = directory_of(including) + "/" + value;
  }
  return path.empty() ? path : std::filesystem::path(path).lexically_normal().string();
}

struct tree_reader {
  const std::string& home;
  git_config_tree& out;
  std::set<std::string> read;         // files read (a second include adds nothing)
  std::vector<std::string> chain;     // the include chain to the file being read

  void refuse(const std::string& file, const std::string& why) { out.unreadable.push_back(file + " (" + why + ")"); }

  void read_tree(const std::string& file, int depth) {
    if (std::find(chain.begin(), chain.end(), file) != chain.end()) {
      refuse(file, "include cycle: it includes itself");
      return;
    }
    out.files.push_back(file);
    if (!read.insert(file).second) return;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return;  // absent: git reads nothing (yet)
    if (read.size() > max_config_files) {
      return refuse(file, "more than " + std::to_string(max_config_files) + " files included");
    }
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_config_bytes) {
      return refuse(file, "larger than " + std::to_string(max_config_bytes) + " bytes");
    }
    std::string text;
    if (!S_ISREG(st.st_mode) || !read_file(file, max_config_bytes, text)) return refuse(file, "cannot be read");
    if (text.size() > max_config_bytes) {
      return refuse(file, "larger than " + std::to_string(max_config_bytes) + " bytes");
    }
    out.bytes += text.size();
    const std::size_t room = max_config_variables - std::min(max_config_variables, out.entries.size());
    auto entries = parse_git_config(text, file, room);
    if (!entries) {
      const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
      return refuse(file, lines >= room ? "more than " + std::to_string(max_config_variables) + " variables in the tree"
                                        : "not a config git reads");
    }
    chain.push_back(file);
    for (auto& entry : *entries) {
      const bool include = entry.name == "path" && ((entry.section == "include" && entry.subsection.empty()) ||
                                                    (entry.section == "includeif" && !entry.subsection.empty()));
      std::string target = include ? include_target(entry.value, file, home) : std::string();
      out.entries.push_back(std::move(entry));
      if (target.empty()) continue;
      if (depth >= max_include_depth) {
        refuse(target, "included more than " + std::to_string(max_include_depth) + " levels deep");
        continue;
      }
      read_tree(target, depth + 1);
    }
    chain.pop_back();
  }
};

std::uint32_t be32(std::string_view b, std::size_t at) {
  return (std::uint32_t(std::uint8_t(b[at])) << 24) | (std::uint32_t(std::uint8_t(b[at + 1])) << 16) |
         (std::uint32_t(std::uint8_t(b[at + 2])) << 8) | std::uint32_t(std::uint8_t(b[at + 3]));
}

}  // namespace

std::string git_config_entry::key() const {
  return subsection.empty() ? section + "." + name : section + "." + subsection + "." + name;
}

std::optional<std::vector<git_config_entry>> parse_git_config(std::string_view text, const std::string& file,
                                                              std::size_t max_variables) {
  std::vector<git_config_entry> entries;
  cursor in(text);
  std::string section, subsection;
  bool have_section = false, comment = false;
  // A UTF-8 byte order mark is skipped, as git does.
  if (text.substr(0, 3) == "\xef\xbb\xbf") {
    for (int i = 0; i < 3; ++i) in.next();
  }
  while (!in.at_end()) {
    char c = in.next();
    if (c == '\n') {
      comment = false;
      continue;
    }
    if (comment || is_space(c)) continue;
    if (c == '#' || c == ';') {
      comment = true;
      continue;
    }
    if (c == '[') {
      if (!parse_header(in, section, subsection)) return std::nullopt;
      have_section = true;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) == 0 || !have_section) return std::nullopt;
    git_config_entry entry;
    entry.file = file;
    entry.section = section;
    entry.subsection = subsection;
    entry.name.push_back(c);
    for (c = in.next(); is_name_char(c); c = in.next()) entry.name.push_back(c);
    entry.name = lower(std::move(entry.name));
    while (is_space(c)) c = in.next();
    if (c == '=') {
      if (!parse_value(in, entry.value)) return std::nullopt;
    } else if (c == '#' || c == ';') {
      comment = true;  // a bare name (true) followed by a comment
    } else if (c != '\n') {
      return std::nullopt;
    }
    if (entries.size() >= max_variables) return std::nullopt;
    entries.push_back(std::move(entry));
  }
  return entries;
}

git_config_tree read_git_config_tree(const std::string& file, const std::string& home) {
  git_config_tree out;
  tree_reader{home, out, {}, {}}.read_tree(file, 0);
  return out;
}

bool git_key_runs_code(const git_config_entry& e) {
  const std::string& s = e.section;
  const std::string& n = e.name;
  const bool sub = !e.subsection.empty();
  const bool bang = !e.value.empty() && e.value[0] == '!';
  struct rule {
    const char* section;
    int subsection;  // 0: none, 1: required, 2: either
    const char* name;  // nullptr: any name
  };
  static constexpr std::array<rule, 42> kRules{{
      {"core", 0, "fsmonitor"},        {"core", 0, "hookspath"},        {"core", 0, "sshcommand"},
      {"core", 0, "pager"},            {"core", 0, "editor"},           {"core", 0, "askpass"},
      {"core", 0, "gitproxy"},         {"core", 0, "alternaterefscommand"}, {"core", 0, "worktree"},
      {"sequence", 0, "editor"},       {"diff", 0, "external"},         {"diff", 1, "textconv"},
      {"diff", 1, "command"},          {"difftool", 1, "cmd"},          {"difftool", 1, "path"},
      {"mergetool", 1, "cmd"},         {"mergetool", 1, "path"},        {"merge", 1, "driver"},
      {"filter", 1, "clean"},          {"filter", 1, "smudge"},         {"filter", 1, "process"},
      {"credential", 2, "helper"},     {"gpg", 2, "program"},           {"gpg", 1, "defaultkeycommand"},
      {"uploadpack", 0, "packobjectshook"}, {"include", 0, "path"},     {"includeif", 1, "path"},
      {"pager", 0, nullptr},           {"browser", 1, "cmd"},           {"browser", 1, "path"},
      {"web", 0, "browser"},           {"instaweb", 0, "httpd"},        {"man", 1, "cmd"},
      {"man", 1, "path"},              {"remote", 1, "uploadpack"},     {"remote", 1, "receivepack"},
      {"remote", 1, "vcs"},            {"trailer", 1, "command"},       {"trailer", 1, "cmd"},
      {"tar", 1, "command"},           {"interactive", 0, "difffilter"}, {"extensions", 0, "worktreeconfig"},
  }};
  for (const auto& r : kRules) {
    if (s != r.section) continue;
    if ((r.subsection == 0 && sub) || (r.subsection == 1 && !sub)) continue;
    if (r.name == nullptr || n == r.name) return true;
  }
  if (s == "sendemail" && (n == "smtpserver" || (n.size() > 3 && n.compare(n.size() - 3, 3, "cmd") == 0))) {
    return true;  // sendemail.{tocmd,cccmd,sendmailcmd}; an smtpServer that is a path is run
  }
  if (s == "alias" && bang) return true;                           // "!cmd" runs a shell command
  if (s == "submodule" && sub && n == "update" && bang) return true;  // "!cmd" runs on update
  return false;
}

std::optional<std::vector<std::string>> gitlinks_in_index(std::string_view b, std::size_t hash_bytes) {
  if (b.size() < 12 || b.substr(0, 4) != "DIRC") return std::nullopt;
  const std::uint32_t version = be32(b, 4), count = be32(b, 8);
  if (version < 2 || version > 4) return std::nullopt;
  std::vector<std::string> links;
  std::string previous;  // version 4 names are compressed against the one before
  std::size_t at = 12;
  const std::size_t fixed = 40 + hash_bytes + 2;  // stat data, mode, ids, size, object id, flags
  for (std::uint32_t i = 0; i < count; ++i) {
    if (at + fixed > b.size()) return std::nullopt;
    const std::uint32_t mode = be32(b, at + 24);
    const std::uint16_t flags = static_cast<std::uint16_t>((std::uint8_t(b[at + fixed - 2]) << 8) |
                                                           std::uint8_t(b[at + fixed - 1]));
    std::size_t name_at = at + fixed + ((version >= 3 && (flags & 0x4000) != 0) ? 2 : 0);
    std::string name;
    if (version == 4) {
      // A varint (git's decode_varint): bytes to drop from the previous name.
      std::uint64_t strip = 0;
      for (bool first = true;; first = false) {
        if (name_at >= b.size()) return std::nullopt;
        auto c = std::uint8_t(b[name_at++]);
        if (!first) ++strip;
        strip = (strip << 7) | (c & 127u);
        if ((c & 128u) == 0) break;
        if (strip > (1u << 20)) return std::nullopt;
      }
      if (strip > previous.size()) return std::nullopt;
      name = previous.substr(0, previous.size() - strip);
    }
    auto nul = b.find('\0', name_at);
    if (nul == std::string_view::npos) return std::nullopt;
    name.append(b.substr(name_at, nul - name_at));
    // Versions 2 and 3 pad each entry with 1-8 NULs to a multiple of 8 bytes.
    at = version == 4 ? nul + 1 : at + ((name_at - at + (nul - name_at) + 8) & ~std::size_t(7));
    if ((mode & 0170000u) == 0160000u) links.push_back(name);
    previous = std::move(name);
  }
  return links;
}

}  // namespace cordon::core

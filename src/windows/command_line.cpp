// src/windows/command_line.cpp — see command_line.h.
#include "windows/command_line.h"

#include "windows/paths.h"

namespace cordon::windows::detail {
namespace {

bool has_extension(const std::string& name) {
  const auto dot = name.rfind('.');
  const auto sep = name.find_last_of("\\/");
  return dot != std::string::npos && (sep == std::string::npos || dot > sep) && dot + 1 < name.size();
}

bool ends_with_ignoring_case(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && equals_ignoring_case(std::string_view(s).substr(s.size() - suffix.size()), suffix);
}

blocker command_blocker(blocker_code code, const std::string& subject, std::string reason) {
  return make_windows_blocker(code, std::nullopt, subject, std::move(reason));
}

bool is_absolute(const std::string& p) { return p.size() >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/'); }

}  // namespace

std::string quote_argument(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n\v\"") == std::string::npos) return arg;
  std::string out = "\"";
  std::size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    // Backslashes are literal unless a quote follows: then each one doubles.
    out.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    out += c;
  }
  out.append(backslashes * 2, '\\');  // before the closing quote
  out += '"';
  return out;
}

std::string build_command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i != 0) line += ' ';
    line += quote_argument(argv[i]);
  }
  return line;
}

std::vector<std::string> command_candidates(const std::string& argv0, const std::string& working_directory,
                                            const std::string& path_variable) {
  std::vector<std::string> candidates;
  const auto with_extensions = [&](const std::string& base, bool as_given) {
    if (as_given) candidates.push_back(base);
    for (const char* ext : {".com", ".exe"}) candidates.push_back(base + ext);
  };
  if (argv0.find_first_of("\\/:") != std::string::npos) {
    std::string path = argv0;
    for (char& c : path) c = c == '/' ? '\\' : c;
    with_extensions(normalize(is_absolute(path) ? path : join(working_directory, path)), true);
  } else {
    std::size_t start = 0;
    while (start <= path_variable.size()) {
      auto end = path_variable.find(';', start);
      if (end == std::string::npos) end = path_variable.size();
      std::string dir = path_variable.substr(start, end - start);
      // Only absolute PATH entries: a relative one would search the working directory.
      if (is_absolute(dir)) with_extensions(normalize(join(dir, argv0)), has_extension(argv0));
      start = end + 1;
    }
  }
  return candidates;
}

std::optional<std::string> resolve_command(const std::string& argv0, const std::string& working_directory,
                                           const std::string& path_variable, const host_facts& facts,
                                           std::vector<blocker>& blockers) {
  if (argv0.empty()) {
    blockers.push_back(command_blocker(blocker_code::command_not_found, argv0, "the command is empty"));
    return std::nullopt;
  }
  const std::vector<std::string> candidates = command_candidates(argv0, working_directory, path_variable);
  for (const auto& candidate : candidates) {
    auto f = find_path(facts, candidate);
    if (!f || !f->exists) continue;
    if (f->directory || f->reparse_point) {
      blockers.push_back(command_blocker(blocker_code::command_not_executable, candidate,
                                         f->directory ? "is a directory" : "is a reparse point (link)"));
      return std::nullopt;
    }
    if (ends_with_ignoring_case(candidate, ".bat") || ends_with_ignoring_case(candidate, ".cmd")) {
      blockers.push_back(command_blocker(blocker_code::command_not_executable, candidate,
                                         "batch files are run by cmd.exe, which re-parses their arguments; "
                                         "name cmd.exe /c explicitly"));
      return std::nullopt;
    }
    return candidate;
  }
  blockers.push_back(command_blocker(blocker_code::command_not_found, argv0,
                                     "not found as a path, nor in the plan's PATH with .COM or .EXE"));
  return std::nullopt;
}

}  // namespace cordon::windows::detail

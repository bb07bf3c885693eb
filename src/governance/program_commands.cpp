// program_commands.cpp — what xargs, eval, find, git, sed and awk run (see
// program_commands.h). Option syntaxes are the programs' own (GNU findutils
// xargs and find, git's parse-options, GNU sed, gawk and POSIX awk).
#include "governance/program_commands.h"

#include <algorithm>
#include <cctype>

#include "governance/command_args.h"

namespace cordon::governance::detail {
namespace {

std::string basename_of(const std::string& word) {
  auto slash = word.find_last_of('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// xargs: the command is the first operand (POSIX order); the input's items
// are appended to it (one dynamic word), or replace -I's string inside it.
void read_xargs(shell_segment& s, program_reading& r) {
  option_syntax syntax;
  syntax.with_value = {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                       "--max-procs", "--max-chars", "--process-slot-var"};
  syntax.optional_value = {"-e", "-i", "-l", "--eof", "--replace", "--max-lines"};
  syntax.long_names = {"--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit",
                       "--show-limits", "--help", "--version"};
  syntax.stop_at_operand = true;
  std::size_t end = 0;
  std::string replace;
  for (const auto& a : read_arguments(s.words, 1, syntax, &end)) {
    if (a.what == argument::kind::unknown || a.dynamic) {
      r.doubts.push_back("\"" + a.written + "\": an xargs option expanded at run time");
      return;
    }
    if (a.name == "-I") replace = a.value.value_or("");
    if (a.name == "-i" || a.name == "--replace") replace = a.value.value_or("{}");
  }
  std::vector<shell_word> command(s.words.begin() + static_cast<std::ptrdiff_t>(std::min(end, s.words.size())),
                                  s.words.end());
  if (command.empty()) command.push_back({"echo", false});  // xargs alone runs echo
  if (replace.empty()) {
    command.push_back({"{input}", true});
  } else {
    for (auto& w : command) w.dynamic = w.dynamic || w.text.find(replace) != std::string::npos;
  }
  s.words = std::move(command);
  r.replaced = true;
}

// eval: its words joined by spaces are a command line.
void read_eval(shell_segment& s, program_reading& r) {
  r.launcher = true;
  std::size_t i = 1;
  if (i < s.words.size() && s.words[i].text == "--" && !s.words[i].dynamic) ++i;
  std::string script;
  bool expanded = false;
  for (; i < s.words.size(); ++i) {
    if (s.words[i].dynamic && !expanded) {
      r.doubts.push_back("eval of \"" + s.words[i].text + "\", which is expanded at run time");
      expanded = true;  // still read as written ("eval \"rm -rf $X\"" runs rm -rf): a deny rule sees it
    }
    script += (script.empty() ? "" : " ") + s.words[i].text;
  }
  if (!s.redirects.empty()) r.doubts.push_back("eval with a redirection");
  if (!script.empty()) r.runs.push_back({true, {}, script});
}

bool is_exec_action(const shell_word& w) {
  return !w.dynamic && (w.text == "-exec" || w.text == "-execdir" || w.text == "-ok" || w.text == "-okdir");
}

// find: each -exec/-execdir/-ok/-okdir clause (up to ";" or "+") is a command;
// "{}" is a path find found: literal (never an option: it starts with a
// starting point) unless a starting point is expanded at run time, and a word
// with "{}" inside it (`sh -c 'rm {}'`) is expanded at run time.
void read_find(shell_segment& s, program_reading& r) {
  const auto& w = s.words;
  std::size_t i = 1;
  while (i < w.size() && !w[i].dynamic && (w[i].text == "-H" || w[i].text == "-L" || w[i].text == "-P" ||
                                            w[i].text == "-D" || w[i].text.rfind("-O", 0) == 0)) {
    i += w[i].text == "-D" ? 2 : 1;
  }
  bool literal_starts = true;
  for (; i < w.size() && !w[i].text.empty() && w[i].text[0] != '-' && w[i].text != "(" && w[i].text != "!"; ++i) {
    literal_starts = literal_starts && !w[i].dynamic;
  }
  std::vector<shell_word> kept(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(std::min(i, w.size())));
  while (i < w.size()) {
    if (w[i].dynamic && w[i].text.front() == '$') {
      r.doubts.push_back("the find expression word \"" + w[i].text + "\" is expanded at run time");
      return;
    }
    if (!is_exec_action(w[i])) {
      kept.push_back(w[i++]);
      continue;
    }
    std::size_t j = i + 1;
    while (j < w.size() && !(!w[j].dynamic && (w[j].text == ";" || w[j].text == "+"))) ++j;
    if (j >= w.size() || j == i + 1) {
      r.doubts.push_back("find " + w[i].text + " without a command ended by \";\" or \"+\"");
      return;
    }
    program_run run;
    for (std::size_t k = i + 1; k < j; ++k) {
      shell_word word = w[k];
      bool braces = word.text.find("{}") != std::string::npos;
      if (braces) word.dynamic = word.dynamic || word.text != "{}" || !literal_starts || k == i + 1;
      run.words.push_back(std::move(word));
    }
    r.runs.push_back(std::move(run));
    i = j + 1;
  }
  s.words = std::move(kept);
}

// git config keys whose value is a command line git runs ("!" aliases too).
bool names_a_program(const std::string& key) {
  static constexpr std::string_view kLast[] = {
      "pager", "editor", "sshcommand", "fsmonitor", "gitproxy", "askpass", "external", "command", "textconv", "cmd",
      "driver", "clean", "smudge", "process", "helper", "program", "browser", "packobjectshook", "uploadpack",
      "receivepack", "difffilter", "httpd", "sendmailcmd"};
  std::string k = lower(key);
  std::string section = k.substr(0, k.find('.'));
  std::string last = k.substr(k.find_last_of('.') + 1);
  return section == "pager" || section == "alias" ||
         std::find(std::begin(kLast), std::end(kLast), last) != std::end(kLast);
}

// Keys that make git read configuration or hooks from elsewhere.
bool loads_other_config(const std::string& key) {
  std::string k = lower(key);
  std::string section = k.substr(0, k.find('.'));
  std::string last = k.substr(k.find_last_of('.') + 1);
  return ((section == "include" || section == "includeif") && last == "path") || k == "core.hookspath" ||
         k == "init.templatedir" || section == "trace2";
}

void read_git_config(const shell_word& w, program_reading& r) {
  auto eq = w.text.find('=');
  std::string key = w.text.substr(0, eq);
  if (w.dynamic && (key.find('$') != std::string::npos || names_a_program(key) || loads_other_config(key))) {
    r.doubts.push_back("git -c \"" + w.text + "\" is expanded at run time");
    return;
  }
  if (loads_other_config(key)) {
    r.doubts.push_back("git -c " + key + " makes git read configuration or hooks from a file");
    return;
  }
  if (eq == std::string::npos || !names_a_program(key)) return;
  std::string value = w.text.substr(eq + 1);
  if (lower(key).rfind("alias.", 0) == 0) {
    value = !value.empty() && value[0] == '!' ? value.substr(1) : "git " + value;
  }
  if (!value.empty()) r.runs.push_back({true, {}, value});
}

// After git's subcommand: grep -O, rebase --exec, bisect run, submodule foreach.
void read_git_subcommand(const shell_segment& s, std::size_t sub, program_reading& r) {
  const std::string& name = s.words[sub].text;
  if (name == "grep") {
    option_syntax syntax;
    syntax.optional_value = {"-O", "--open-files-in-pager"};
    syntax.with_value = {"-e", "-f", "-A", "-B", "-C", "-m", "--max-depth", "--max-count", "--threads", "--context",
                         "--after-context", "--before-context"};
    for (const auto& a : read_arguments(s.words, sub + 1, syntax)) {
      if (a.name != "-O" && a.name != "--open-files-in-pager") continue;
      if (!a.value || a.value->empty()) {
        r.doubts.push_back("git grep " + a.written + " runs the pager git's configuration names");
      } else if (a.dynamic) {
        r.doubts.push_back("git grep " + a.written + " runs a command expanded at run time");
      } else {
        r.runs.push_back({true, {}, *a.value});
      }
    }
  } else if (name == "rebase") {
    option_syntax syntax;
    syntax.with_value = {"-x", "--exec", "--onto", "-s", "--strategy", "-X", "--strategy-option", "--whitespace",
                         "-S", "--gpg-sign", "--empty", "-r", "--rebase-merges"};
    syntax.long_names = {"--exec"};
    for (const auto& a : read_arguments(s.words, sub + 1, syntax)) {
      if (a.name != "-x" && a.name != "--exec") continue;
      if (!a.value || a.dynamic) r.doubts.push_back("git rebase " + a.written + " runs a command expanded at run time");
      else r.runs.push_back({true, {}, *a.value});
    }
  } else if ((name == "bisect" || name == "submodule") && sub + 1 < s.words.size()) {
    const std::string& action = s.words[sub + 1].text;
    if ((name == "bisect" && action == "run") || (name == "submodule" && action == "foreach")) {
      std::vector<shell_word> command(s.words.begin() + static_cast<std::ptrdiff_t>(sub + 2), s.words.end());
      if (name == "submodule" && !command.empty() && command[0].text == "--recursive") command.erase(command.begin());
      if (command.empty()) return;
      if (name == "submodule") {  // foreach joins its words into a shell command line
        std::string script;
        for (const auto& w : command) {
          if (w.dynamic) return r.doubts.push_back("git submodule foreach runs a command expanded at run time");
          script += (script.empty() ? "" : " ") + w.text;
        }
        r.runs.push_back({true, {}, script});
      } else {
        r.runs.push_back({false, std::move(command), {}});
      }
    }
  }
}

// A push with -c remote.NAME.push=REFSPEC or remote.NAME.mirror=true pushes
// that refspec (without one on the command line) or mirrors: the refspec or
// "--mirror" joins the segment's words, so "+main" or ":x" meets the rules'
// force and delete forms as on the command line. --config-env of such a key
// takes it from the environment: a doubt.
void add_push_config(shell_segment& s, const git_globals& g, program_reading& r) {
  if (g.dynamic || g.subcommand >= s.words.size() || s.words[g.subcommand].text != "push") return;
  auto push_key = [](const std::string& key) {
    std::string k = lower(key);
    bool remote = k.rfind("remote.", 0) == 0;
    return remote && k.size() > 5 && k.compare(k.size() - 5, 5, ".push") == 0 ? 1
           : remote && k.size() > 7 && k.compare(k.size() - 7, 7, ".mirror") == 0 ? 2 : 0;
  };
  std::vector<shell_word> added;
  for (const auto& c : g.configs) {
    auto eq = c.text.find('=');
    int kind = push_key(c.text.substr(0, eq));
    if (kind == 0) continue;
    std::string value = eq == std::string::npos ? "true" : c.text.substr(eq + 1);
    if (kind == 1) added.push_back({value, c.dynamic});
    else if (c.dynamic || lower(value) == "true" || value == "1" || lower(value) == "yes" || lower(value) == "on") added.push_back({"--mirror", false});
  }
  for (const auto& c : g.config_envs) {
    if (push_key(c.text.substr(0, c.text.find('='))) != 0) {
      r.doubts.push_back("git --config-env \"" + c.text + "\" takes a push refspec from the environment");
    }
  }
  // Right after "push", before any "--": they are read as options and operands.
  s.words.insert(s.words.begin() + static_cast<std::ptrdiff_t>(g.subcommand + 1), added.begin(), added.end());
}

void read_git(shell_segment& s, program_reading& r) {
  auto g = read_git_globals(s.words);
  for (const auto& c : g.configs) read_git_config(c, r);
  add_push_config(s, g, r);
  for (const auto& c : g.config_envs) {
    std::string key = c.text.substr(0, c.text.find('='));
    if (c.dynamic || names_a_program(key) || loads_other_config(key)) {
      r.doubts.push_back("git --config-env \"" + c.text + "\" takes a program from the environment");
    }
  }
  for (std::size_t i = 1; i < g.subcommand && i < s.words.size(); ++i) {
    if (s.words[i].text.rfind("--exec-path=", 0) == 0) {  // git's own programs from another directory
      r.doubts.push_back("git " + s.words[i].text + " runs git's programs from another directory");
    }
  }
  if (!g.dynamic && g.subcommand < s.words.size() && !s.words[g.subcommand].dynamic) {
    read_git_subcommand(s, g.subcommand, r);
  }
}

// A script language's program text in its arguments (sed, awk): the values
// of `script_options`, else the first operand. A doubt when an option of
// `unreadable` is given (a script from a file, an extension), when a script
// is expanded at run time, or when `runs` says it runs a command.
struct script_language {
  std::string name;
  option_syntax syntax;
  std::vector<std::string> script_options;
  std::vector<std::string> unreadable;
  bool (*runs)(const std::string&);
  std::string what_runs;  // "the e command or the e flag of s"
};

void check_scripts(const shell_segment& s, const script_language& lang, program_reading& r) {
  auto args = read_arguments(s.words, 1, lang.syntax);
  if (lang.name == "sed" && std::any_of(args.begin(), args.end(), [](const argument& a) { return a.name == "--sandbox"; })) {
    return;  // GNU sed --sandbox refuses e, r and w
  }
  auto named = [](const std::vector<std::string>& list, const argument& a) {
    return a.what == argument::kind::option && std::find(list.begin(), list.end(), a.name) != list.end();
  };
  std::vector<const argument*> scripts;
  for (const auto& a : args) {
    if (named(lang.unreadable, a)) {
      r.doubts.push_back(lang.name + " " + a.written + " reads a program this splitter cannot see (" + lang.what_runs + " runs commands)");
      return;
    }
    if (named(lang.script_options, a)) scripts.push_back(&a);
  }
  if (scripts.empty()) {
    auto first = std::find_if(args.begin(), args.end(), [](const argument& a) { return a.what != argument::kind::option; });
    if (first != args.end()) scripts.push_back(&*first);
  }
  for (const auto* a : scripts) {
    if (a->dynamic || a->what == argument::kind::unknown) {
      r.doubts.push_back("a " + lang.name + " program expanded at run time (" + lang.what_runs + " runs commands)");
      return;
    }
    if (lang.runs(a->value.value_or(a->written))) {
      r.doubts.push_back("the " + lang.name + " program runs a command (" + lang.what_runs + ")");
      return;
    }
  }
}

// GNU sed: scripts of -e/--expression, else the first operand; -f reads one from a file.
const script_language& sed_language() {
  static const script_language kSed = {
      "sed",
      {{"-e", "--expression", "-f", "--file", "-l", "--line-length"},
       {"-i", "--in-place"},
       {"--quiet", "--silent", "--debug", "--follow-symlinks", "--posix", "--regexp-extended", "--separate", "--sandbox",
        "--unbuffered", "--null-data", "--zero-terminated", "--help", "--version"},
       false,
       true},
      {"-e", "--expression"},
      {"-f", "--file"},
      sed_script_runs_commands,
      "the e command or the e flag of s"};
  return kSed;
}

// awk (POSIX, gawk, mawk): programs of -e/--source, else the first operand;
// -f, -E, -i, -l load programs or extensions.
const script_language& awk_language() {
  static const script_language kAwk = {
      "awk",
      {{"-F", "-v", "-f", "-e", "-E", "-i", "-l", "--field-separator", "--assign", "--file", "--source", "--exec",
        "--include", "--load"},
       {},
       {},
       false,
       true},
      {"-e", "--source"},
      {"-f", "-E", "-i", "-l", "--file", "--exec", "--include", "--load"},
      awk_program_runs_commands,
      "system(), a pipe to or from a command, getline from one"};
  return kAwk;
}

// python [options] -m MODULE ARGS: the segment becomes "python -m MODULE
// ARGS" (CPython's options read as it reads them: clusters, -m's module in
// the same word or the next, -W and -X take a value, -c ends the options
// with code), so "python3 -mpip install" and "python3 -I -m pip install" meet
// the rules written for "python3 -m pip". Code given with -c or a script
// file is not read (docs/governance.md: an interpreter runs what it is given).
void read_python(shell_segment& s) {
  for (std::size_t i = 1; i < s.words.size(); ++i) {
    const shell_word& w = s.words[i];
    if (w.dynamic || w.text.size() < 2 || w.text[0] != '-' || w.text == "--") return;
    if (w.text == "--check-hash-based-pycs") {
      ++i;
      continue;
    }
    if (w.text[1] == '-') continue;  // --help, --version
    for (std::size_t k = 1; k < w.text.size(); ++k) {
      char c = w.text[k];
      if (c == 'c') return;
      if (c != 'm' && c != 'W' && c != 'X') continue;
      std::size_t value = i;
      shell_word module{w.text.substr(k + 1), w.dynamic};
      if (module.text.empty()) {
        if (++value >= s.words.size()) return;
        module = s.words[value];
      }
      if (c != 'm') {
        i = value;
        break;
      }
      std::vector<shell_word> words{s.words[0], {"-m", false}, module};
      words.insert(words.end(), s.words.begin() + static_cast<std::ptrdiff_t>(value + 1), s.words.end());
      s.words = std::move(words);
      return;
    }
  }
}

bool is_python(const std::string& name) {
  return name.rfind("python", 0) == 0 &&
         std::all_of(name.begin() + 6, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

// npx / npm exec / npm x: -c and --call give a command line that npm runs in
// a shell. npm's options come before the package's name (after it, "-c" is
// the package's own: npx jest -c jest.config.js); -p, --package, --prefix,
// -w and --workspace take the next word.
void read_npm_exec(const shell_segment& s, std::size_t from, program_reading& r) {
  for (std::size_t i = from; i < s.words.size(); ++i) {
    const shell_word& w = s.words[i];
    if (w.text == "--" || w.text.empty() || w.text[0] != '-') return;  // the package and its own arguments follow
    if (w.text == "-p" || w.text == "--package" || w.text == "--prefix" || w.text == "-w" || w.text == "--workspace") {
      ++i;
      continue;
    }
    shell_word call;
    if (w.text == "-c" || w.text == "--call") {
      if (i + 1 >= s.words.size()) return;
      call = s.words[++i];
    } else if (w.text.rfind("--call=", 0) == 0) {
      call = {w.text.substr(7), w.dynamic};
    } else {
      continue;
    }
    if (call.dynamic) {
      r.doubts.push_back("\"" + w.text + "\" runs a command line that is expanded at run time");
    } else {
      r.runs.push_back({true, {}, call.text});
    }
  }
}

}  // namespace

program_reading read_program(shell_segment& segment) {
  program_reading r;
  if (segment.words.empty() || segment.words[0].dynamic) return r;
  std::string name = basename_of(segment.words[0].text);
  if (name == "xargs") read_xargs(segment, r);
  else if (name == "eval") read_eval(segment, r);
  else if (name == "find") read_find(segment, r);
  else if (name == "git") read_git(segment, r);
  else if (name == "sed" || name == "gsed") check_scripts(segment, sed_language(), r);
  else if (name == "awk" || name == "gawk" || name == "mawk" || name == "nawk") check_scripts(segment, awk_language(), r);
  else if (is_python(name)) read_python(segment);
  else if (name == "npx") read_npm_exec(segment, 1, r);
  else if (name == "npm" && segment.words.size() > 1 && (segment.words[1].text == "exec" || segment.words[1].text == "x")) {
    read_npm_exec(segment, 2, r);
  }
  return r;
}

}  // namespace cordon::governance::detail

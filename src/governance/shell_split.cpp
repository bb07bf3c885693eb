// shell_split.cpp — the conservative shell splitter (see
// cordon/governance/shell_split.h for what it accepts). Two passes: the
// lexer (shell_lexer.h) turns the text into words and operators, and a
// parser groups words into simple commands and unwraps wrappers and `sh -c`.
#include "cordon/governance/shell_split.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "governance/command_args.h"
#include "governance/shell_lexer.h"
#include "governance/program_commands.h"

namespace cordon::governance {
namespace {

constexpr int kMaxNesting = 8;

using token = detail::shell_token;
using detail::is_blank;
using detail::is_name_char;
using detail::is_name_start;


std::string basename_of(const std::string& word) {
  auto slash = word.find_last_of('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}


bool is_keyword(const std::string& w) {
  static constexpr std::array<std::string_view, 16> kKeywords = {"if", "then", "else", "elif", "fi", "for", "while",
                                                                 "until", "do", "done", "case", "esac", "function",
                                                                 "select", "[[", "coproc"};
  return std::find(kKeywords.begin(), kKeywords.end(), w) != kKeywords.end();
}

// How the parser reads past a shell keyword (a doubt either way): the words
// of a compound command's body are commands like any others, so a deny rule
// still sees `rm -rf x` in `if c; then rm -rf x; fi` or `f() { rm -rf x; }`.
enum class keyword_skip {
  none,
  header,  // for/select NAME in WORDS: words up to ";" or a newline are not commands
  test,    // [[ ... ]]: words and operators up to "]]" are not commands
  name,    // function NAME: the next word is a name
  case_word,     // case WORD in: words up to "in" are not commands
  case_pattern,  // PATTERN | PATTERN ): up to ")" (or "esac"), not commands
};

keyword_skip skip_after(const std::string& keyword) {
  if (keyword == "for" || keyword == "select") return keyword_skip::header;
  if (keyword == "[[") return keyword_skip::test;
  if (keyword == "function") return keyword_skip::name;
  if (keyword == "case") return keyword_skip::case_word;
  return keyword_skip::none;  // if then else elif fi while until do done coproc: a command follows or precedes
}

bool is_assignment(const token& t) {
  const auto& s = t.word.text;
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || !is_name_start(s[0])) return false;
  return std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(eq), is_name_char);
}

// "a[$(cmd)]": bash evaluates an array subscript as arithmetic wherever a
// word becomes a variable name or an arithmetic value (let, printf -v, read,
// test -v, declare, an assignment to an integer variable), and runs the
// command substitution inside it even when the word was quoted.
bool has_subscript_substitution(const std::string& text) {
  auto open = text.find('[');
  if (open == std::string::npos) return false;
  return text.find("$(", open) != std::string::npos || text.find('`', open) != std::string::npos;
}

bool is_shell(const std::string& name) {
  return name == "sh" || name == "bash" || name == "dash" || name == "zsh" || name == "ksh" || name == "ash";
}

class splitter {
 public:
  splitter(shell_split& out, int depth) : out_(out), depth_(depth) {}

  void parse(std::string_view text) {
    const std::size_t before = out_.uncertain.size();
    const auto lexed = detail::lex_shell(text, out_.uncertain);
    const auto& tokens = lexed.tokens;
    bool lexed_all = out_.uncertain.size() == before;
    shell_segment current;
    std::string redirect_op;
    int depth = 0;
    bool expecting_command = false;  // after | && ||: a command must follow
    bool after_command = false;      // a command (or a closed subshell) precedes the operator
    keyword_skip skipping = keyword_skip::none;
    bool function_parens = false;  // NAME ( seen: a ")" makes it a function definition
    int cases = 0;                 // open case commands: ";;" ends a clause, the next pattern follows
    for (const auto& t : tokens) {
      if (skipping == keyword_skip::case_word) {
        if (t.is_word && !t.quoted && t.word.text == "in") skipping = keyword_skip::case_pattern;
        continue;
      }
      if (skipping == keyword_skip::case_pattern) {
        if (t.is_word && !t.quoted && t.word.text == "esac") {
          --cases;
          skipping = keyword_skip::none;
          after_command = true;
        } else if (!t.is_word && t.op == ")") {
          skipping = keyword_skip::none;  // the clause's commands follow
        }
        continue;
      }
      if (!t.is_word && (t.op == ";;" || t.op == ";&" || t.op == ";;&")) {
        if (cases <= 0) {
          doubt("\"" + t.op + "\" outside a case command");
          break;
        }
        finish(current);
        after_command = false;
        skipping = keyword_skip::case_pattern;
        continue;
      }
      if (skipping != keyword_skip::none) {
        if (skipping == keyword_skip::test) {
          if (t.is_word && !t.quoted && t.word.text == "]]") {
            skipping = keyword_skip::none;
            after_command = true;  // "[[ ... ]] && cmd"
          }
          continue;
        }
        if (skipping == keyword_skip::name && t.is_word) {
          skipping = keyword_skip::none;
          function_parens = true;  // "function f ()" may follow
          continue;
        }
        if (skipping == keyword_skip::header && t.is_word) continue;
        skipping = keyword_skip::none;  // the header ends at an operator
      }
      if (function_parens && !t.is_word && (t.op == "(" || t.op == ")")) {
        if (t.op == ")") function_parens = false;
        continue;
      }
      function_parens = false;
      if (t.is_word) {
        if (has_subscript_substitution(t.word.text)) {
          doubt("\"" + t.word.text + "\": bash runs a command substitution in an array subscript");
          break;
        }
        if (!redirect_op.empty()) {
          add_redirect(current, redirect_op, t.word);
          redirect_op.clear();
          continue;
        }
        if (current.words.empty()) {
          if (is_assignment(t)) {  // NAME=value before a command, or alone (it stays for the next ones)
            doubt_assignment(t.word.text);
            continue;
          }
          if (!t.quoted && (t.word.text == "{" || t.word.text == "}" || t.word.text == "!")) continue;
          if (!t.quoted && is_keyword(t.word.text)) {
            doubt("shell keyword \"" + t.word.text + "\"");
            skipping = skip_after(t.word.text);
            if (skipping == keyword_skip::case_word) ++cases;
            if (t.word.text == "esac") --cases;  // after a last clause without ";;"
            after_command = true;  // "fi && cmd", "done | cmd"
            continue;  // the body's commands are read: a deny among them still denies
          }
        }
        current.words.push_back(t.word);
        expecting_command = false;
        after_command = true;
        continue;
      }
      const std::string& op = t.op;
      if (!redirect_op.empty()) {
        doubt("redirection \"" + redirect_op + "\" without a target");
        break;
      }
      if (op == "(") {
        if (current.words.size() == 1 && !current.words[0].dynamic) {
          // NAME () BODY: a function definition; its body is read as commands.
          doubt("function definition \"" + current.words[0].text + "()\"");
          current = {};
          function_parens = true;
          continue;
        }
        if (!current.words.empty()) {
          doubt("\"(\" after a command word (a function definition?)");
          break;
        }
        ++depth;
      } else if (op == ")") {
        finish(current);
        after_command = true;
        if (--depth < 0) {
          doubt("unbalanced \")\"");
          break;
        }
      } else if (op == "|" || op == "|&" || op == "&&" || op == "||" || op == ";" || op == "&" || op == "\n") {
        bool empty = current.words.empty() && current.redirects.empty() && !after_command;
        if (empty && (op == "|" || op == "|&" || op == "&&" || op == "||") ) {
          doubt("\"" + op + "\" without a command before it");
          break;
        }
        finish(current);
        after_command = false;
        expecting_command = op == "|" || op == "|&" || op == "&&" || op == "||";
      } else {
        redirect_op = op;  // > >> >| >& &> &>> < <& << <<- <<<
      }
    }
    if (out_.uncertain.size() == before && lexed_all) {
      if (!redirect_op.empty()) doubt("redirection \"" + redirect_op + "\" without a target");
      else if (depth != 0) doubt("unbalanced \"(\"");
      else if (expecting_command) doubt("the command line ends after an operator");
    }
    finish(current);
    read_substitutions(lexed);
  }

  // One argv, as an argv request gives it: literal words.
  void parse_argv(const std::vector<std::string>& argv) {
    shell_segment s;
    for (const auto& a : argv) s.words.push_back({a, false});
    finish(s);
  }

 private:
  void doubt(std::string why) { out_.uncertain.push_back(std::move(why)); }

  // A command substitution's script is a command line of its own (`echo
  // $(rm -rf x)` runs rm -rf x); its output is still unknown (a doubt).
  void read_substitutions(const detail::shell_lexed& lexed) {
    for (const auto& why : lexed.notes) doubt(why);
    for (const auto& script : lexed.substitutions) {
      if (depth_ >= kMaxNesting) {
        doubt("command substitutions nested more than " + std::to_string(kMaxNesting) + " deep");
        return;
      }
      splitter(out_, depth_ + 1).parse(script);
    }
  }

  // A variable assignment changes what a command runs: PATH picks the
  // program, LD_PRELOAD loads code into it, BASH_ENV is sourced by a shell,
  // GIT_EXTERNAL_DIFF or PAGER is a command line git runs. The segments are
  // still read (one of them can deny the request), but it is never certain.
  void doubt_assignment(const std::string& word) {
    doubt("\"" + word.substr(0, word.find('=') + 1) + "...\": a variable assignment can change what a command runs");
  }

  void add_redirect(shell_segment& s, const std::string& op, const shell_word& target) {
    if (op == "<<" || op == "<<-" || op == "<<<") return;  // data for stdin, not a file
    if ((op == ">&" || op == "<&") && !target.dynamic &&
        (target.text == "-" || std::all_of(target.text.begin(), target.text.end(),
                                           [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))) {
      return;  // descriptor duplication or close
    }
    if (target.dynamic) {
      doubt("redirection target \"" + target.text + "\" is expanded at run time");
      return;
    }
    if (target.text == "/dev/null") return;
    s.redirects.push_back({op != "<" && op != "<&", target});
  }

  // Unwraps wrappers, splits `sh -c`, judges the command word; appends.
  void finish(shell_segment& s) {
    if (s.words.empty()) {
      if (!s.redirects.empty()) out_.segments.push_back(s);  // "> file": still a write to judge
      s = {};
      return;
    }
    detail::program_reading reading;
    for (int guard = 0; guard < 16; ++guard) {
      unwrap(s);
      if (s.words.empty()) {
        s = {};
        return;
      }
      const shell_word& head = s.words[0];
      std::string name = basename_of(head.text);
      if (head.dynamic) {
        doubt("the command word \"" + head.text + "\" is expanded at run time");
      } else if (name == "source" || name == "." || name == "trap" || name == "alias" || name == "fc") {
        doubt("\"" + name + "\" runs a command this splitter cannot see");
      } else if (name == "hash" && std::any_of(s.words.begin() + 1, s.words.end(), [](const shell_word& w) {
                   return w.dynamic || (w.text.size() > 1 && w.text[0] == '-' && w.text.find('p') != std::string::npos);
                 })) {
        doubt("\"hash -p\" makes a command name run another program");
      } else if (is_shell(name) && nested(s)) {
        s = {};
        return;
      } else {
        reading = detail::read_program(s);
        if (reading.replaced && guard + 1 == 16) doubt("xargs nested more than 16 deep");
        if (reading.replaced) continue;  // xargs: read the command it runs in its place
      }
      break;
    }
    for (auto& why : reading.doubts) doubt(std::move(why));
    if (!reading.launcher) out_.segments.push_back(std::move(s));
    s = {};
    for (auto& run : reading.runs) {
      if (depth_ >= kMaxNesting) {
        doubt("commands nested more than " + std::to_string(kMaxNesting) + " deep");
        break;
      }
      splitter inner(out_, depth_ + 1);
      if (run.script) {
        inner.parse(run.text);
      } else {
        shell_segment segment;
        segment.words = std::move(run.words);
        inner.finish(segment);
      }
    }
  }

  // `sh -c SCRIPT`: true when SCRIPT was split in place of the segment.
  bool nested(const shell_segment& s) {
    bool dash_c = false;
    std::size_t i = 1;
    for (; i < s.words.size(); ++i) {
      const auto& w = s.words[i].text;
      if (s.words[i].dynamic && dash_c && w.rfind('-', 0) != 0 && w.rfind('+', 0) != 0) break;  // the script
      if (s.words[i].dynamic) {
        doubt("a shell option that is expanded at run time");
        return false;
      }
      if (w == "--") {
        ++i;
        break;
      }
      if (w.rfind("--", 0) == 0) {  // --login, --norc, --noprofile; --rcfile FILE, --init-file FILE
        if (w == "--rcfile" || w == "--init-file") ++i;
        continue;
      }
      if (w.size() > 1 && (w[0] == '-' || w[0] == '+')) {
        // A cluster: each o or O takes the next word as an option name
        // ("-eo pipefail"); a c anywhere makes the first operand the script.
        if (w.find('c') != std::string::npos) dash_c = true;
        i += static_cast<std::size_t>(std::count_if(w.begin() + 1, w.end(), [](char c) { return c == 'o' || c == 'O'; }));
        continue;
      }
      break;
    }
    if (!dash_c) return false;  // a script file or stdin: the shell itself is the segment
    if (i >= s.words.size()) {
      doubt("\"" + s.words[0].text + " -c\" without a script");
      return false;
    }
    if (depth_ >= kMaxNesting) {
      doubt("shells nested more than " + std::to_string(kMaxNesting) + " deep");
      return false;
    }
    const bool expanded = s.words[i].dynamic;
    if (expanded) doubt("the script of \"" + s.words[0].text + " -c\" is expanded at run time");
    splitter inner(out_, depth_ + 1);
    inner.parse(s.words[i].text);  // as written, when expanded: a deny rule still sees "rm -rf $X"
    return !expanded;  // an expanded script: the shell stays a segment too
  }

  // Moves `i` past a wrapper's options, read as getopt_long reads them in
  // POSIX order (detail::read_arguments: clusters "-iu NAME", "-n5", long
  // options and their unique abbreviations "--adj 5", "--unset=X", "--"); a
  // word expanded at run time is where the command starts. `assignments`:
  // env's NAME=VALUE words and "-" before the command (options may follow
  // them). False after a doubt or a rewrite: an option of `command_options`
  // (env -S, in any abbreviation) whose value is split into words in its
  // place when it is plain words (`rewritten`; env reads them again, as GNU
  // env does), a doubt when it holds quotes, escapes, `$` or `#`.
  bool skip_wrapper_options(shell_segment& s, std::size_t& i, const detail::option_syntax& syntax,
                            const std::vector<std::string>& command_options = {}, bool assignments = false,
                            bool* rewritten = nullptr) {
    auto runs_a_command = [&](const detail::argument& a) {
      return std::any_of(command_options.begin(), command_options.end(), [&](const std::string& c) {
        return a.name == c || (a.written.size() > 2 && a.written[1] == '-' && c.rfind(a.written, 0) == 0);
      });
    };
    for (;;) {
      std::size_t end = i;
      const auto args = detail::read_arguments(s.words, i, syntax, &end);
      for (std::size_t k = 0; k < args.size(); ++k) {
        const auto& a = args[k];
        if (a.what == detail::argument::kind::unknown) {
          i = a.index;
          return true;
        }
        if (!runs_a_command(a)) continue;
        std::size_t after = end;  // the first word after the option's value
        for (std::size_t n = k + 1; n < args.size(); ++n) {
          if (args[n].index > a.index) {
            after = args[n].index;
            break;
          }
        }
        if (rewritten == nullptr || a.dynamic || !split_plain_words(s, a, after)) {
          doubt("\"" + s.words[a.index].text + "\" runs a string as a command this splitter does not split");
          return false;
        }
        *rewritten = true;
        return false;
      }
      i = end;
      if (!assignments || i >= s.words.size() || s.words[i].dynamic) return true;
      token probe;
      probe.word = s.words[i];
      if (probe.word.text != "-" && !is_assignment(probe)) return true;
      if (probe.word.text != "-") doubt_assignment(probe.word.text);
      ++i;
    }
  }

  // env -S VALUE of plain words (letters, digits, blanks and ._/=:+,@%-):
  // the words replace the option and its value. False for anything else.
  static bool split_plain_words(shell_segment& s, const detail::argument& a, std::size_t after) {
    const std::string& value = a.value.value_or("");
    bool plain = std::all_of(value.begin(), value.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || is_blank(c) || std::string_view("._/=:+,@%-").find(c) != std::string_view::npos;
    });
    if (!plain || value.find_first_not_of(" \t") == std::string::npos || after <= a.index) return false;
    std::vector<shell_word> words(s.words.begin(), s.words.begin() + static_cast<std::ptrdiff_t>(a.index));
    for (std::size_t at = value.find_first_not_of(" \t"); at != std::string::npos; at = value.find_first_not_of(" \t", at)) {
      std::size_t stop = value.find_first_of(" \t", at);
      words.push_back({value.substr(at, stop - at), false});
      at = stop;
    }
    words.insert(words.end(), s.words.begin() + static_cast<std::ptrdiff_t>(std::min(after, s.words.size())), s.words.end());
    s.words = std::move(words);
    return true;
  }

  static detail::option_syntax wrapper_syntax(std::vector<std::string> with_value) {
    detail::option_syntax syntax;
    syntax.with_value = std::move(with_value);
    syntax.stop_at_operand = true;
    return syntax;
  }

  // env, command, builtin, exec, nohup, time, nice, timeout, stdbuf: the
  // command they run is the segment.
  void unwrap(shell_segment& s) {
    constexpr int kMaxWrappers = 256;  // each round removes a word or an -S: the line bounds it
    for (int guard = 0; !s.words.empty() && !s.words[0].dynamic; ++guard) {
      if (guard == kMaxWrappers) {  // the segment still starts with a wrapper: what it runs is unread
        doubt("wrappers nested more than " + std::to_string(kMaxWrappers) + " deep");
        return;
      }
      std::string name = basename_of(s.words[0].text);
      std::size_t i = 1;
      if (name == "env") {
        // -S / --split-string runs its value as a command line; -u, -C and
        // -a take a value; "-" is -i; NAME=VALUE words precede the command.
        static const auto kEnv = wrapper_syntax({"-u", "-C", "-a", "-S", "--unset", "--chdir", "--argv0", "--split-string"});
        bool rewritten = false;
        if (!skip_wrapper_options(s, i, kEnv, {"-S", "--split-string"}, true, &rewritten)) {
          if (rewritten) continue;  // env again, with the split words in place of -S
          return;
        }
      } else if (name == "command" || name == "builtin" || name == "nohup") {
        static const auto kPlain = wrapper_syntax({});
        skip_wrapper_options(s, i, kPlain);
      } else if (name == "time") {  // the keyword (-p), or GNU time (-f FORMAT, -o FILE)
        static const auto kTime = wrapper_syntax({"-f", "-o", "--format", "--output"});
        skip_wrapper_options(s, i, kTime);
      } else if (name == "exec") {
        static const auto kExec = wrapper_syntax({"-a"});
        skip_wrapper_options(s, i, kExec);
      } else if (name == "nice") {
        static const auto kNice = wrapper_syntax({"-n", "--adjustment"});
        skip_wrapper_options(s, i, kNice);
      } else if (name == "stdbuf") {
        static const auto kStdbuf = wrapper_syntax({"-i", "-o", "-e", "--input", "--output", "--error"});
        skip_wrapper_options(s, i, kStdbuf);
      } else if (name == "timeout") {
        static const auto kTimeout = wrapper_syntax({"-s", "-k", "--signal", "--kill-after"});
        skip_wrapper_options(s, i, kTimeout);
        ++i;  // the duration
      } else {
        return;
      }
      if (i >= s.words.size()) return;  // the wrapper alone (`env` prints the environment)
      s.words.erase(s.words.begin(), s.words.begin() + static_cast<std::ptrdiff_t>(std::min(i, s.words.size())));
    }
  }

  shell_split& out_;
  int depth_;
};

}  // namespace

shell_split split_shell_command(std::string_view command) {
  shell_split out;
  splitter(out, 0).parse(command);
  return out;
}

shell_split split_argv(const std::vector<std::string>& argv) {
  shell_split out;
  splitter(out, 0).parse_argv(argv);
  return out;
}

}  // namespace cordon::governance

// command_args.cpp — reading argv as getopt_long and git read it (see
// command_args.h).
#include "governance/command_args.h"

#include <algorithm>

#include "governance/glob.h"
#include "governance/json_util.h"

namespace cordon::governance::detail {
namespace {

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::string_view basename_of(std::string_view word) {
  auto slash = word.find_last_of('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

// "--rec" -> "--recursive" when exactly one known long option starts so (an
// exact name always wins); else the name as written.
std::string resolve_long(std::string_view written, const option_syntax& syntax) {
  std::string found;
  int count = 0;
  for (const auto* list : {&syntax.with_value, &syntax.optional_value, &syntax.long_names}) {
    for (const auto& name : *list) {
      if (!starts_with(name, "--")) continue;
      if (name == written) return name;
      if (syntax.abbreviations && starts_with(name, written)) {
        if (found != name) ++count;
        found = name;
      }
    }
  }
  return count == 1 ? found : std::string(written);
}

// One long option "--name[=value]" at words[i]; advances i past it (and its value).
argument read_long(const std::vector<shell_word>& words, std::size_t& i, const option_syntax& syntax) {
  const shell_word& w = words[i];
  auto eq = w.text.find('=');
  argument a{argument::kind::option, {}, w.text.substr(0, eq), {}, false, i};
  a.name = resolve_long(a.written, syntax);
  ++i;
  if (eq != std::string::npos) {
    a.value = w.text.substr(eq + 1);
    a.dynamic = w.dynamic;
  } else if (contains(syntax.with_value, a.name) && i < words.size()) {
    a.value = words[i].text;
    a.dynamic = words[i].dynamic;
    ++i;
  }
  return a;
}

// A cluster "-vRf" / "-bNAME" / "-n 5" at words[i]; advances i.
void read_cluster(const std::vector<shell_word>& words, std::size_t& i, const option_syntax& syntax,
                  std::vector<argument>& out) {
  const shell_word& w = words[i];
  const std::size_t at = i++;
  for (std::size_t k = 1; k < w.text.size(); ++k) {
    argument a{argument::kind::option, std::string{'-', w.text[k]}, std::string{'-', w.text[k]}, {}, false, at};
    bool required = contains(syntax.with_value, a.name);
    if (required || contains(syntax.optional_value, a.name)) {
      if (k + 1 < w.text.size()) {
        a.value = w.text.substr(k + 1);
        a.dynamic = w.dynamic;
      } else if (required && i < words.size()) {
        a.value = words[i].text;
        a.dynamic = words[i].dynamic;
        ++i;
      }
      out.push_back(std::move(a));
      return;
    }
    out.push_back(std::move(a));
  }
}

}  // namespace

std::vector<argument> read_arguments(const std::vector<shell_word>& words, std::size_t from, const option_syntax& syntax,
                                     std::size_t* end) {
  std::vector<argument> out;
  std::size_t i = from;
  bool options_end = false;
  while (i < words.size()) {
    const shell_word& w = words[i];
    const std::string& t = w.text;
    if (options_end || !(t.size() > 1 && t[0] == '-')) {
      if (w.dynamic && !options_end) {
        out.push_back({argument::kind::unknown, {}, t, {}, true, i++});
        continue;
      }
      if (syntax.stop_at_operand) break;
      out.push_back({argument::kind::operand, {}, t, {}, w.dynamic, i++});
      continue;
    }
    if (t == "--") {
      options_end = true;
      ++i;
      if (syntax.stop_at_operand) break;
      continue;
    }
    if (w.dynamic) {  // "-$X": an option of unknown letters
      out.push_back({argument::kind::unknown, {}, t, {}, true, i++});
      continue;
    }
    if (t[1] == '-') {
      out.push_back(read_long(words, i, syntax));
      continue;
    }
    auto eq = t.find('=');
    std::string head = t.substr(0, eq);
    if (head.size() > 2 && (contains(syntax.with_value, head) || contains(syntax.optional_value, head) ||
                            contains(syntax.long_names, head))) {
      out.push_back(read_long(words, i, syntax));  // a one-dash word option (find's -delete)
      continue;
    }
    read_cluster(words, i, syntax, out);
  }
  if (end) *end = i;
  return out;
}

git_globals read_git_globals(const std::vector<shell_word>& words) {
  // git.c handle_options: exact names only; these take a value ("=" or the next word).
  static const std::vector<std::string> kValued = {"--git-dir", "--work-tree", "--namespace", "--super-prefix",
                                                   "--config-env", "--attr-source", "--list-cmds"};
  git_globals g;
  std::size_t i = 1;
  while (i < words.size()) {
    const shell_word& w = words[i];
    if (w.dynamic) {
      g.dynamic = true;
      break;
    }
    const std::string& t = w.text;
    if (t.empty() || t[0] != '-') break;
    ++i;
    if (t == "-C" || t == "-c") {
      if (i >= words.size()) break;
      if (t == "-c") g.configs.push_back(words[i]);
      if (words[i].dynamic) g.dynamic = true;
      ++i;
      continue;
    }
    auto eq = t.find('=');
    std::string name = t.substr(0, eq);
    if (!contains(kValued, name)) continue;  // a flag: -p, -P, --no-pager, --bare, --exec-path[=x], ...
    shell_word value;
    if (eq != std::string::npos) {
      value = {t.substr(eq + 1), false};
    } else if (i < words.size()) {
      value = words[i++];
    }
    if (value.dynamic) g.dynamic = true;
    if (name == "--config-env") g.config_envs.push_back(value);
  }
  g.subcommand = i;
  return g;
}

bool command_words_match(std::string_view pattern, const shell_segment& segment, bool cautious, std::size_t& next) {
  // Word by word without building a list: most rules fail on the first word.
  std::size_t k = 0, i = 0;
  bool any = false;
  while (i < pattern.size()) {
    while (i < pattern.size() && pattern[i] == ' ') ++i;
    if (i >= pattern.size()) break;
    std::size_t j = pattern.find(' ', i);
    if (j == std::string_view::npos) j = pattern.size();
    std::string_view word = pattern.substr(i, j - i);
    i = j;
    any = true;
    if (k == 1 && basename_of(segment.words[0].text) == "git") {
      auto g = read_git_globals(segment.words);
      if (g.dynamic) {
        next = segment.words.size();
        return cautious;
      }
      k = g.subcommand;
    }
    if (k >= segment.words.size()) return false;
    const shell_word& w = segment.words[k];
    if (w.dynamic) {
      next = segment.words.size();
      return cautious;
    }
    bool base = k == 0 && word.find('/') == std::string_view::npos;
    std::string_view subject = base ? basename_of(w.text) : std::string_view(w.text);
    if (!name_glob_matches(word, subject)) return false;
    ++k;
  }
  next = k;
  return any;
}

bool command_form_matches(const command_form& form, const shell_segment& segment, bool cautious) {
  std::size_t from = 0;
  if (!command_words_match(form.command, segment, cautious, from)) return false;
  option_syntax syntax;
  syntax.with_value = form.with_value;
  syntax.abbreviations = false;  // the form does not know every long option: it compares written prefixes itself
  for (const auto& o : form.options) {
    if (o.size() > 2 && o[1] != '-') syntax.long_names.push_back(o);  // "-delete": a whole word
  }
  bool option_found = form.options.empty(), operand_found = form.operands.empty();
  for (const auto& a : read_arguments(segment.words, from, syntax)) {
    if (a.what == argument::kind::unknown) {
      option_found = option_found || cautious;
      operand_found = operand_found || cautious;
    } else if (a.what == argument::kind::operand) {
      operand_found = operand_found || (a.dynamic && cautious) ||
                      std::any_of(form.operands.begin(), form.operands.end(),
                                  [&](const std::string& g) { return name_glob_matches(g, a.written); });
    } else {
      option_found = option_found || std::any_of(form.options.begin(), form.options.end(), [&](const std::string& o) {
                       if (o == a.name) return true;
                       // getopt_long takes a unique prefix: a cautious rule takes every prefix.
                       return cautious && starts_with(a.written, "--") && a.written.size() > 2 && starts_with(o, "--") &&
                              starts_with(o, a.written);
                     });
    }
  }
  return option_found && operand_found;
}

result<void> check_command_form(const command_form& form, const std::string& where) {
  if (form.command.find_first_not_of(' ') == std::string::npos) {
    return invalid(where + "/command", "an empty command pattern");
  }
  if (form.options.empty() && form.operands.empty()) {
    return invalid(where, "a command form names options or operands (a plain command is a string)");
  }
  for (auto [key, list] : {std::pair{"options", &form.options}, std::pair{"with_value", &form.with_value}}) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string& o = (*list)[i];
      bool shape = o.size() >= 2 && o[0] == '-' && o != "--" && o.find_first_of("=*? ") == std::string::npos &&
                   !(o.size() == 3 && o[1] == '-');
      if (!shape) {
        return invalid(where + "/" + key + "/" + std::to_string(i),
                       "not an option name: \"" + o + "\" (\"-x\", \"--name\" or a one-dash word \"-name\")");
      }
    }
  }
  for (std::size_t i = 0; i < form.operands.size(); ++i) {
    if (form.operands[i].empty()) return invalid(where + "/operands/" + std::to_string(i), "an empty operand pattern");
  }
  return ok;
}

}  // namespace cordon::governance::detail

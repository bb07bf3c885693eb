// The CLI11 definitions read into command_doc: see command_tree.h.
#include "cli/command_tree.h"

namespace cordon::cli {
namespace {

// `text` split at each `separator`.
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + 1) {
    out.push_back(text.substr(start, at - start));
  }
  out.push_back(text.substr(start));
  return out;
}

// The fixed values a value name spells: "none|any" (our own names) or
// "TEXT:{linux,macos}" (what CLI11's IsMember check appends); else none.
std::vector<std::string> choices_of(const std::string& value) {
  if (value.find(' ') != std::string::npos) return {};
  if (auto brace = value.find(":{"); brace != std::string::npos && value.back() == '}') {
    return split(value.substr(brace + 2, value.size() - brace - 3), ',');
  }
  if (value.find('|') == std::string::npos) return {};
  return split(value, '|');
}

option_doc option_of(const CLI::Option& opt) {
  option_doc doc;
  for (const auto& s : opt.get_snames()) doc.names.push_back("-" + s);
  for (const auto& l : opt.get_lnames()) doc.names.push_back("--" + l);
  if (doc.names.empty()) doc.names.push_back(opt.get_name());  // a positional
  if (opt.get_items_expected_max() > 0) doc.value = opt.get_type_name();
  doc.description = opt.get_description();
  doc.group = opt.get_group();
  doc.choices = choices_of(doc.value);
  return doc;
}

command_doc describe(const CLI::App& app, std::vector<std::string> path) {
  command_doc doc;
  path.push_back(app.get_name());
  doc.path = path;
  doc.description = app.get_description();
  doc.footer = app.get_footer();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    (opt->nonpositional() ? doc.options : doc.positionals).push_back(option_of(*opt));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); })) {
    doc.subcommands.push_back(describe(*sub, path));
  }
  return doc;
}

void collect(const command_doc& doc, std::vector<const command_doc*>& out) {
  out.push_back(&doc);
  for (const auto& sub : doc.subcommands) collect(sub, out);
}

std::string joined(const std::vector<std::string>& words, char separator) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += separator;
    out += w;
  }
  return out;
}

}  // namespace

std::string command_doc::spelled() const { return joined(path, ' '); }
std::string command_doc::page_name() const { return joined(path, '-'); }

command_doc describe_commands(const CLI::App& app) { return describe(app, {}); }

std::vector<const command_doc*> flatten(const command_doc& root) {
  std::vector<const command_doc*> out;
  collect(root, out);
  return out;
}

}  // namespace cordon::cli

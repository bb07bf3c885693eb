// sbpl_text.cpp — quoting and layout of SBPL text.
#include "macos/sbpl_text.h"

namespace cordon::macos_impl {
namespace {

constexpr std::size_t line_width = 100;

std::string render_flat(const sbpl_expr& e) {
  if (!e.is_list) return e.atom;
  std::string out = "(";
  for (std::size_t i = 0; i < e.members.size(); ++i) {
    if (i != 0) out += ' ';
    out += render_flat(e.members[i]);
  }
  return out + ")";
}

}  // namespace

sbpl_expr sbpl_form(std::string_view head, std::vector<sbpl_expr> args) {
  std::vector<sbpl_expr> members;
  members.reserve(args.size() + 1);
  members.push_back(sbpl_expr::symbol(std::string(head)));
  for (auto& a : args) members.push_back(std::move(a));
  return sbpl_expr::list(std::move(members));
}

sbpl_expr sbpl_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return sbpl_expr::symbol(out + "\"");
}

sbpl_expr sbpl_raw_string(std::string_view text) { return sbpl_expr::symbol("#\"" + std::string(text) + "\""); }

sbpl_expr sbpl_param(std::string_view key) { return sbpl_form("param", {sbpl_string(key)}); }

std::string regex_quote(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string regex_case_fold(std::string_view regex) {
  std::string out;
  bool escaped = false, bracket = false;
  for (const char c : regex) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (letter && !escaped && !bracket) {
      const char lower = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      out += '[';
      out += lower;
      out += static_cast<char>(lower - 'a' + 'A');
      out += ']';
      continue;
    }
    if (!escaped && c == '[') bracket = true;
    if (!escaped && c == ']') bracket = false;
    escaped = !escaped && c == '\\';
    out += c;
  }
  return out;
}

bool regex_is_writable(std::string_view text) {
  return text.find('"') == std::string_view::npos && text.find('\n') == std::string_view::npos;
}

std::string render_sbpl(const sbpl_expr& e, int indent) {
  std::string flat = render_flat(e);
  if (!e.is_list || flat.size() + static_cast<std::size_t>(indent) <= line_width || e.members.size() < 2) {
    return flat;
  }
  // Break after the head and any leading symbols (the operations of a rule).
  std::string out = "(";
  std::size_t i = 0;
  for (; i < e.members.size() && !e.members[i].is_list; ++i) {
    if (i != 0) out += ' ';
    out += e.members[i].atom;
  }
  const std::string pad(static_cast<std::size_t>(indent) + 2, ' ');
  for (; i < e.members.size(); ++i) out += "\n" + pad + render_sbpl(e.members[i], indent + 2);
  return out + ")";
}

}  // namespace cordon::macos_impl

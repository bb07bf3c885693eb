// src/core/enforcement.cpp — spellings of controls and levels, and the
// satisfaction order used by every compile gate.
#include "cordon/enforcement.h"

#include <utility>

namespace cordon {
namespace {

constexpr std::pair<control, std::string_view> control_names[] = {
    {control::filesystem_read, "filesystem_read"},
    {control::filesystem_write, "filesystem_write"},
    {control::filesystem_deny, "filesystem_deny"},
    {control::network_deny, "network_deny"},
    {control::network_filter, "network_filter"},
    {control::unix_sockets, "unix_sockets"},
    {control::environment, "environment"},
    {control::process_tree_cleanup, "process_tree_cleanup"},
    {control::process_count, "process_count"},
    {control::memory, "memory"},
    {control::cpu, "cpu"},
    {control::timeout, "timeout"},
    {control::privilege, "privilege"},
    {control::descriptor_hygiene, "descriptor_hygiene"},
    {control::syscall_filter, "syscall_filter"},
    {control::terminal, "terminal"},
    {control::devices, "devices"},
};

constexpr std::pair<enforcement_level, std::string_view> level_names[] = {
    {enforcement_level::enforced, "enforced"},
    {enforcement_level::partial, "partial"},
    {enforcement_level::not_enforced, "not_enforced"},
    {enforcement_level::not_applicable, "not_applicable"},
    {enforcement_level::planned, "planned"},
    {enforcement_level::unverified, "unverified"},
};

// How much a level promises; `planned` promises nothing yet, and `unverified`
// nothing that this host can prove.
int strength(enforcement_level level) noexcept {
  switch (level) {
    case enforcement_level::enforced: return 2;
    case enforcement_level::partial: return 1;
    case enforcement_level::not_enforced:
    case enforcement_level::not_applicable:
    case enforcement_level::planned:
    case enforcement_level::unverified: return 0;
  }
  return 0;
}

}  // namespace

std::string_view to_string(control c) noexcept {
  for (const auto& [value, name] : control_names) {
    if (value == c) return name;
  }
  return "unknown";
}

std::string_view to_string(enforcement_level level) noexcept {
  for (const auto& [value, name] : level_names) {
    if (value == level) return name;
  }
  return "unknown";
}

std::optional<control> control_from_string(std::string_view name) noexcept {
  for (const auto& [value, spelling] : control_names) {
    if (spelling == name) return value;
  }
  return std::nullopt;
}

std::optional<enforcement_level> enforcement_level_from_string(std::string_view name) noexcept {
  for (const auto& [value, spelling] : level_names) {
    if (spelling == name) return value;
  }
  return std::nullopt;
}

bool level_satisfies(enforcement_level available, enforcement_level required) noexcept {
  // Accepting "not proven" never accepts "absent" (the one rule for
  // `unverified`, docs/policy.md).
  if (required == enforcement_level::unverified) {
    return available != enforcement_level::not_enforced && available != enforcement_level::planned;
  }
  // A requirement that asks for no promise is met by anything.
  if (strength(required) == 0) return true;
  // The control has nothing to act on for this policy, so nothing can escape it.
  if (available == enforcement_level::not_applicable) return true;
  return strength(available) >= strength(required);
}

}  // namespace cordon

// src/windows/environment.h — the command's environment, built from scratch:
// names compared without regard to case (as Windows does), UTF-8 validated,
// then encoded as the UTF-16 block CreateProcessW takes with
// CREATE_UNICODE_ENVIRONMENT (docs/windows-backend.md, "Environment").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/policy.h"
#include "cordon/windows/compile.h"
#include "cordon/windows/plan.h"

namespace cordon::windows::detail {

// Strict UTF-8 -> UTF-16: overlong forms, surrogate code points and values
// above U+10FFFF are rejected (nullopt).
std::optional<std::u16string> utf8_to_utf16(std::string_view text);

// UTF-16 -> UTF-8; a lone surrogate is rejected (nullopt).
std::optional<std::string> utf16_to_utf8(std::u16string_view text);

// The environment the policy gives the command, from the host's environment:
// `inherit: all` takes every host entry, `allow` the host entries of those
// names (matched without regard to case), the host's `SystemRoot` always
// (system DLLs need it), then `set` replaces or adds, in order.
// Problems are appended to `blockers` (environment_collision,
// environment_not_utf8, environment_invalid_name); the result is meaningful
// only when none was added.
environment_spec build_environment(const environment_policy& policy,
                                   const std::vector<std::pair<std::string, std::string>>& host,
                                   std::vector<blocker>& blockers);

}  // namespace cordon::windows::detail

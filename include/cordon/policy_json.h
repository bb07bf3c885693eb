// cordon/policy_json.h — strict JSON v1 reading and writing of sandbox_policy.
//
// Reading is strict: unknown fields, wrong types and out-of-range numbers are
// errors, because a typo must never weaken a policy (docs/policy.md). Reading checks
// structure only; validate_sandbox_policy() checks meaning.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon {

// One problem in a policy document.
// Parses policy JSON text.
// Returns the (not yet validated) policy, or an error:
//  - error_code::parse_error, location "line L, column C", when the text is not JSON;
//  - error_code::invalid_policy, location = JSON pointer of the first structural
//    problem (unknown field, wrong type, missing schema_version, unsupported
//    schema_version, unknown enum spelling). All structural problems are also
//    listed, one per line, in `message` after the first.
result<sandbox_policy> sandbox_policy_from_json(std::string_view text);

// Every problem in policy text, for `cordon policy validate`: the structural
// ones (as sandbox_policy_from_json finds them, in document order), then the
// semantic ones validate_sandbox_policy() finds in what could be read. A
// semantic check is left out where a structural error kept a field at its
// default (beneath the parent of that error; an unknown field keeps nothing
// from being checked), because a default may contradict its siblings. Not
// JSON: one error, located "line L, column C". Empty: the policy is valid.
std::vector<policy_error> sandbox_policy_errors(std::string_view text);

// Serializes a policy as JSON v1 (stable key order, 2-space indent). For any
// valid policy p: sandbox_policy_from_json(sandbox_policy_to_json(p)) == p.
std::string sandbox_policy_to_json(const sandbox_policy& policy);

// Reads a file and parses it. Adds error_code::io_error (with errno) when the
// file cannot be read; otherwise as sandbox_policy_from_json.
result<sandbox_policy> load_sandbox_policy(const std::string& path);

}  // namespace cordon

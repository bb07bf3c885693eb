// contract.h — the level each control gets from the macOS mechanisms.
#pragma once

#include "cordon/enforcement.h"
#include "cordon/policy.h"
#include "macos/host_facts.h"

namespace cordon::macos_impl {

// The levels the mechanisms give on a Mac for this (normalized) policy: what
// the design promises if sandbox-exec accepts the profile and enforces it as
// documented. Levels below `enforced` say why (docs/macos-backend.md, "Levels").
// The driver then applies the proof rule (apply_proof_rule in
// cordon/backend.h): no macOS proof run has passed, so a plan states
// `unverified` where this says `enforced` or `partial`.
enforcement_contract macos_design_contract(const sandbox_policy& policy, std::uint16_t broker_port);

}  // namespace cordon::macos_impl

// contract.h — the level each control gets from the macOS mechanisms.
#pragma once

#include "cordon/enforcement.h"
#include "cordon/policy.h"
#include "macos/host_facts.h"

namespace cordon::macos_impl {

// The levels the mechanisms give on a Mac for this (normalized) policy: what
// the design promises if sandbox-exec accepts the profile and enforces it as
// documented. Levels below `enforced` say why (docs/macos-backend.md, "Levels").
enforcement_contract macos_design_contract(const sandbox_policy& policy, std::uint16_t broker_port);

// The levels this host can state: on a Mac (facts.native) the design levels;
// elsewhere every `enforced` or `partial` becomes `unverified` (compiled, not
// proven here), and levels that say a mechanism does nothing stay as they are.
enforcement_contract reported_contract(const enforcement_contract& design, const macos_host_facts& facts);

}  // namespace cordon::macos_impl

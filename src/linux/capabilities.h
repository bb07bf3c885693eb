// capabilities.h — leaving the sandbox's user namespace with no capability.
#pragma once

namespace cordon::linux_impl {

// Locks the securebits (no root fix-ups, no ambient raise), empties the
// bounding and ambient sets, then the effective, permitted and inheritable
// sets (capabilities(7)). After this, even uid 0 in the namespace gains
// nothing at execve. Requires CAP_SETPCAP at entry. Allocation-free; returns 0
// or an errno value. Irreversible.
int drop_all_capabilities() noexcept;

}  // namespace cordon::linux_impl

// broker_seccomp.h — the confined broker's seccomp allowlist, prebuilt by
// cordon_broker_seccomp_gen (src/linux/gen/broker_seccomp_gen.cpp lists the
// calls and says why; docs/network.md, "The broker's process").
#pragma once

#include <linux/filter.h>

#include <cstddef>

namespace cordon::linux_impl {

extern const sock_filter* const broker_seccomp_program;
extern const std::size_t broker_seccomp_program_size;

}  // namespace cordon::linux_impl

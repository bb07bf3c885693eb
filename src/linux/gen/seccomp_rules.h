// seccomp_rules.h — the baseline seccomp filter as libseccomp builds it.
//
// This is the source of truth for the filter's rules, but it does not run at
// launch: cordon_seccomp_gen (seccomp_gen.cpp) calls it at build time for
// every combination of seccomp_options and writes the exported programs into
// a generated source that libcordon compiles in (seccomp_programs.h). Running
// libseccomp on every launch cost about 0.3 ms and 120 kB of memory.
#pragma once

#include <string>

#include "cordon/result.h"
#include "linux/seccomp_filter.h"

namespace cordon::linux_impl {

// How libseccomp lays out the syscall-number checks: the prebuilt programs
// use a binary tree; the linear list (libseccomp's default) is kept for the
// unit test that checks both decide alike.
enum class seccomp_layout { binary_tree, linear };

// Builds the filter with libseccomp and exports it as BPF for the native
// architecture. Errors: error_code::launch_failed when libseccomp fails.
result<seccomp_program> build_seccomp_program_with_libseccomp(const seccomp_options& options,
                                                              seccomp_layout layout = seccomp_layout::binary_tree);

// libseccomp's name for a native syscall number, or "" when it has none.
std::string libseccomp_syscall_name(int syscall_nr);

}  // namespace cordon::linux_impl

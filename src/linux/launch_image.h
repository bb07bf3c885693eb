// launch_image.h — everything the sandbox's PID 1 needs from the plan and the
// request, as one self-contained block of bytes.
//
// PID 1 is started while the plan is still being compiled (supervisor.h): it
// first sets up what depends on the policy alone, then receives this image
// over a socket into memory of its own and reads nothing else. No memory is
// shared between PID 1 and the supervisor, and PID 1 allocates nothing: it
// maps the image with mmap(2), checks that every offset stays inside it, and
// turns the offsets the exec and Landlock calls need into pointers in place.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "linux/landlock.h"
#include "linux/linux_plan.h"

namespace cordon::linux_impl {

// Offsets are from the start of the image; strings are NUL-terminated.
struct image_mount_op {
  std::uintptr_t source = 0;       // "/oldroot" + path
  std::uintptr_t target = 0;       // "/newroot" + path
  std::uintptr_t link_target = 0;  // symlink only
  std::uint32_t kind = 0;          // mount_kind
  std::uint8_t directory = 0;
  std::uint8_t nodev = 0;          // outside /dev
};

struct image_rlimit {
  std::int32_t resource = 0;
  std::uint64_t value = 0;
};

struct image_header {
  std::uint64_t magic = 0;
  std::uint64_t size = 0;  // of the whole image, header included
  std::uintptr_t ops = 0;
  std::uint64_t op_count = 0;
  std::uintptr_t landlock_rules = 0;  // landlock_flat_rule[], paths as offsets until relocated
  std::uint64_t landlock_rule_count = 0;
  std::uintptr_t bpf = 0;             // sock_filter[]
  std::uint64_t bpf_length = 0;
  std::uintptr_t rlimits = 0;
  std::uint64_t rlimit_count = 0;
  std::uintptr_t argv = 0;            // char*[argc + 1], offsets until relocated
  std::uint64_t argc = 0;
  std::uintptr_t envp = 0;            // char*[envc + 1], offsets until relocated
  std::uint64_t envc = 0;
  std::uintptr_t working_directory = 0;
  std::int32_t landlock_abi = 0;
  std::uint8_t full_root = 0;
  std::uint8_t loopback_up = 0;
  std::uint8_t seccomp_notify = 0;
  std::uint8_t landlock_restrict_tcp = 0;
  std::uint8_t landlock_scope = 0;
};

// The supervisor's side: the image of one launch.
std::string build_launch_image(const linux_plan_payload& payload, const std::vector<std::string>& argv,
                               const std::vector<std::string>& envp, const std::string& working_directory);

// PID 1's side: the received image, relocated.
struct launch_image_view {
  const char* base = nullptr;
  const image_header* header = nullptr;
  const image_mount_op* ops = nullptr;
  const landlock_flat_rule* landlock_rules = nullptr;
  const sock_filter* bpf = nullptr;
  const image_rlimit* rlimits = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;

  const char* string(std::uintptr_t offset) const noexcept { return base + offset; }
};

// Reads one image from `fd` into a private mapping. Returns 0; -1 at end of
// file before a whole image (the supervisor is gone, or gave up this start);
// or an errno value (EINVAL: the image is malformed).
int receive_launch_image(int fd, launch_image_view& view) noexcept;

}  // namespace cordon::linux_impl

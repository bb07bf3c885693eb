#include "linux/launch_image.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::linux_impl {
namespace {

constexpr std::uint64_t kMagic = 0x31676d69646e6f63ULL;  // "condimg1"
// Larger than any policy and command line the kernel would exec (ARG_MAX is a
// quarter of the stack limit); a bound, so a corrupt size cannot map the world.
constexpr std::uint64_t kMaxImageSize = std::uint64_t{1} << 30;

// Appends to a byte buffer; arrays are reserved first and filled by offset,
// since the buffer moves as it grows.
class image_writer {
 public:
  std::uintptr_t reserve(std::size_t bytes, std::size_t align) {
    std::size_t at = (buffer_.size() + align - 1) / align * align;
    buffer_.resize(at + bytes, '\0');
    return at;
  }
  std::uintptr_t string(const std::string& text) {
    std::uintptr_t at = buffer_.size();
    buffer_.append(text.c_str(), text.size() + 1);
    return at;
  }
  template <class T>
  void put(std::uintptr_t at, const T& value) {
    std::memcpy(buffer_.data() + at, &value, sizeof value);
  }
  std::string take() && {
    buffer_.push_back('\0');  // the last byte is NUL: no string can run past the end
    return std::move(buffer_);
  }
  std::size_t size() const { return buffer_.size(); }

 private:
  std::string buffer_;
};

bool under_dev(const std::string& path) {
  return path.compare(0, 4, "/dev") == 0 && (path.size() == 4 || path[4] == '/');
}

template <class T>
bool array_fits(std::uint64_t size, std::uintptr_t offset, std::uint64_t count) noexcept {
  if (offset % alignof(T) != 0 || offset > size) return false;
  return count <= (size - offset) / sizeof(T);
}

bool read_fully(int fd, char* out, std::size_t length) noexcept {
  std::size_t done = 0;
  while (done < length) {
    ssize_t n = ::read(fd, out + done, length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Offsets of a pointer array become pointers (same size), and the array must end with a null.
bool relocate_strings(char* base, std::uint64_t size, std::uintptr_t at, std::uint64_t count) noexcept {
  if (!array_fits<std::uintptr_t>(size, at, count + 1)) return false;
  auto* slots = reinterpret_cast<std::uintptr_t*>(base + at);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (slots[i] >= size) return false;
    char* p = base + slots[i];
    std::memcpy(&slots[i], &p, sizeof p);
  }
  return slots[count] == 0;
}

}  // namespace

std::string build_launch_image(const linux_plan_payload& payload, const std::vector<std::string>& argv,
                               const std::vector<std::string>& envp, const std::string& working_directory) {
  static_assert(sizeof(std::uintptr_t) == sizeof(char*), "offsets become pointers in place");
  image_writer w;
  image_header h;
  const std::uintptr_t header_at = w.reserve(sizeof h, alignof(image_header));
  const auto& ops = payload.mounts.ops;
  const auto& rules = payload.landlock.rules;
  const auto& bpf = payload.seccomp.bpf;
  h.op_count = ops.size();
  h.ops = w.reserve(sizeof(image_mount_op) * ops.size(), alignof(image_mount_op));
  h.landlock_rule_count = rules.size();
  h.landlock_rules = w.reserve(sizeof(landlock_flat_rule) * rules.size(), alignof(landlock_flat_rule));
  h.bpf_length = bpf.size();
  h.bpf = w.reserve(sizeof(sock_filter) * bpf.size(), alignof(sock_filter));
  h.rlimit_count = payload.rlimits.size();
  h.rlimits = w.reserve(sizeof(image_rlimit) * payload.rlimits.size(), alignof(image_rlimit));
  h.argc = argv.size();
  h.argv = w.reserve(sizeof(std::uintptr_t) * (argv.size() + 1), alignof(std::uintptr_t));
  h.envc = envp.size();
  h.envp = w.reserve(sizeof(std::uintptr_t) * (envp.size() + 1), alignof(std::uintptr_t));

  for (std::size_t i = 0; i < ops.size(); ++i) {
    image_mount_op op;
    op.source = w.string("/oldroot" + ops[i].path);
    op.target = w.string("/newroot" + ops[i].path);
    op.link_target = w.string(ops[i].link_target);
    op.kind = static_cast<std::uint32_t>(ops[i].kind);
    op.directory = ops[i].directory ? 1 : 0;
    op.nodev = under_dev(ops[i].path) ? 0 : 1;
    w.put(h.ops + i * sizeof op, op);
  }
  for (std::size_t i = 0; i < rules.size(); ++i) {
    std::uintptr_t path = w.string(rules[i].path);
    landlock_flat_rule rule{nullptr, rules[i].access};
    w.put(h.landlock_rules + i * sizeof rule, rule);
    w.put(h.landlock_rules + i * sizeof rule + offsetof(landlock_flat_rule, path), path);
  }
  for (std::size_t i = 0; i < bpf.size(); ++i) w.put(h.bpf + i * sizeof(sock_filter), bpf[i]);
  for (std::size_t i = 0; i < payload.rlimits.size(); ++i) {
    image_rlimit limit;
    limit.resource = payload.rlimits[i].resource;
    limit.value = payload.rlimits[i].value;
    w.put(h.rlimits + i * sizeof limit, limit);
  }
  for (std::size_t i = 0; i < argv.size(); ++i) w.put(h.argv + i * sizeof(std::uintptr_t), w.string(argv[i]));
  for (std::size_t i = 0; i < envp.size(); ++i) w.put(h.envp + i * sizeof(std::uintptr_t), w.string(envp[i]));
  h.working_directory = w.string(working_directory);
  h.landlock_abi = payload.landlock.abi;
  h.full_root = payload.mounts.full_root ? 1 : 0;
  h.loopback_up = payload.loopback_up ? 1 : 0;
  h.seccomp_notify = payload.seccomp.notify ? 1 : 0;
  h.landlock_restrict_tcp = payload.landlock.restrict_tcp ? 1 : 0;
  h.landlock_scope = payload.landlock.scope_signals_and_abstract_sockets ? 1 : 0;
  h.magic = kMagic;
  h.size = w.size() + 1;  // take() appends the final NUL
  w.put(header_at, h);
  return std::move(w).take();
}

int receive_launch_image(int fd, launch_image_view& view) noexcept {
  image_header h;
  if (!read_fully(fd, reinterpret_cast<char*>(&h), sizeof h)) return -1;
  if (h.magic != kMagic || h.size < sizeof h + 1 || h.size > kMaxImageSize) return EINVAL;
  void* mapped = ::mmap(nullptr, h.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return errno;
  char* base = static_cast<char*>(mapped);
  std::memcpy(base, &h, sizeof h);
  if (!read_fully(fd, base + sizeof h, h.size - sizeof h)) return -1;
  const std::uint64_t size = h.size;
  if (base[size - 1] != '\0') return EINVAL;
  if (!array_fits<image_mount_op>(size, h.ops, h.op_count) ||
      !array_fits<landlock_flat_rule>(size, h.landlock_rules, h.landlock_rule_count) ||
      !array_fits<sock_filter>(size, h.bpf, h.bpf_length) ||
      !array_fits<image_rlimit>(size, h.rlimits, h.rlimit_count) || h.working_directory >= size) {
    return EINVAL;
  }
  const auto* ops = reinterpret_cast<const image_mount_op*>(base + h.ops);
  for (std::uint64_t i = 0; i < h.op_count; ++i) {
    if (ops[i].source >= size || ops[i].target >= size || ops[i].link_target >= size) return EINVAL;
  }
  auto* rules = reinterpret_cast<landlock_flat_rule*>(base + h.landlock_rules);
  for (std::uint64_t i = 0; i < h.landlock_rule_count; ++i) {
    std::uintptr_t path = 0;
    std::memcpy(&path, &rules[i].path, sizeof path);
    if (path >= size) return EINVAL;
    rules[i].path = base + path;
  }
  if (!relocate_strings(base, size, h.argv, h.argc) || !relocate_strings(base, size, h.envp, h.envc)) return EINVAL;
  view.base = base;
  view.header = reinterpret_cast<const image_header*>(base);
  view.ops = ops;
  view.landlock_rules = rules;
  view.bpf = reinterpret_cast<const sock_filter*>(base + h.bpf);
  view.rlimits = reinterpret_cast<const image_rlimit*>(base + h.rlimits);
  view.argv = reinterpret_cast<char* const*>(base + h.argv);
  view.envp = reinterpret_cast<char* const*>(base + h.envp);
  return 0;
}

}  // namespace cordon::linux_impl

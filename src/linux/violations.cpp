#include "linux/violations.h"

#include "linux/connect_redirect.h"
#include "linux/fallback_calls.h"
#include "linux/mount_point_changes.h"
#include "linux/protected_writes.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <algorithm>
#include <cstring>
#include <limits>

namespace cordon::linux_impl {
namespace {

// What a blocked call was aimed at, when its arguments say it in a word.
std::string describe_call(const seccomp_notif& request) {
  std::string name = syscall_name(request.data.nr);
  if (name == "socket" || name == "socketpair") {
    switch (request.data.args[0]) {
      case AF_INET: return name + "(AF_INET)";
      case AF_INET6: return name + "(AF_INET6)";
      case AF_NETLINK: return name + "(AF_NETLINK)";
      case AF_PACKET: return name + "(AF_PACKET)";
      default: return name + "(family " + std::to_string(request.data.args[0]) + ")";
    }
  }
  return name;
}

// A refused socket(2) that only asks about the namespace's own network is a
// probe, not an attempt to get out: a route or address query
// (AF_NETLINK, NETLINK_ROUTE), which libc's getaddrinfo (AI_ADDRCONFIG) and
// npm make on every run. Refused all the same (EAFNOSUPPORT); the report
// lists it under "probes", apart from the violations (docs/report.md).
const char* kind_of(const seccomp_notif& request, bool network) {
  if (!network) return "seccomp";
  const bool route_query = syscall_name(request.data.nr) == "socket" && request.data.args[0] == AF_NETLINK &&
                           request.data.args[2] == NETLINK_ROUTE;
  return route_query ? "network_probe" : "network_socket";
}

// The kernel's notification structures may be larger than this header's
// (seccomp_unotify(2)): buffers are sized by SECCOMP_GET_NOTIF_SIZES.
struct notif_sizes {
  std::size_t request = sizeof(seccomp_notif);
  std::size_t response = sizeof(seccomp_notif_resp);
};

notif_sizes kernel_notif_sizes() {
  seccomp_notif_sizes sizes{};
  notif_sizes out;
  if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0U, &sizes) == 0) {
    out.request = std::max<std::size_t>(out.request, sizes.seccomp_notif);
    out.response = std::max<std::size_t>(out.response, sizes.seccomp_notif_resp);
  }
  return out;
}

}  // namespace

void violation_log::record(const std::string& kind, const std::string& target) {
  for (auto& v : entries_) {
    if (v.kind == kind && v.target == target) {
      if (v.count < std::numeric_limits<std::uint64_t>::max()) ++v.count;
      return;
    }
  }
  if (entries_.size() >= max_distinct) {
    ++dropped_;
    return;
  }
  entries_.push_back({kind, target, 1});
}

std::vector<violation> violation_log::entries() const {
  std::vector<violation> out = entries_;
  if (dropped_ > 0) out.push_back({"truncated", "more distinct violations than the report keeps", dropped_});
  return out;
}

bool answer_notification(int listener_fd, const seccomp_program& program, violation_log& log,
                         const connect_redirect* redirect) {
  static const notif_sizes sizes = kernel_notif_sizes();
  // Zeroed and 8-byte aligned, as SECCOMP_IOCTL_NOTIF_RECV requires.
  std::vector<std::uint64_t> request_buffer((sizes.request + 7) / 8, 0);
  std::vector<std::uint64_t> response_buffer((sizes.response + 7) / 8, 0);
  auto* request = reinterpret_cast<seccomp_notif*>(request_buffer.data());
  auto* response = reinterpret_cast<seccomp_notif_resp*>(response_buffer.data());
  if (::ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_RECV, request) != 0) {
    // EINTR; ENOENT: the caller died (or was interrupted) before we read it.
    return errno == EINTR || errno == ENOENT;
  }
  response->id = request->id;
  response->val = 0;
  if (program.connect_notified && request->data.nr == SYS_connect) {
    static const connect_redirect no_redirect;
    answer_connect(listener_fd, *request, *response, program, redirect ? *redirect : no_redirect, log);
  } else if (program.listen_checked && request->data.nr == SYS_listen) {
    answer_listen(listener_fd, *request, *response, log);
  } else if (program.mount_point_changes_checked && is_mount_point_change(request->data.nr)) {
    answer_mount_point_change(listener_fd, *request, *response, program, log);
  } else if (is_protected_write_check(program, *request)) {
    answer_protected_write(listener_fd, *request, *response, program, log);
  } else {
    const bool network = syscall_name(request->data.nr).rfind("socket", 0) == 0;
    // libc's clone3/openat2 first try is refused all the same, but is no violation (linux/fallback_calls.h).
    if (!is_expected_fallback(listener_fd, *request)) log.record(kind_of(*request, network), describe_call(*request));
    response->error = -errno_for_notification(program, request->data.nr);
    response->flags = 0;
  }
  // ENOENT: the caller died (or was interrupted) meanwhile; nothing to answer.
  ::ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SEND, response);
  return true;
}

int receive_descriptor(int socket_fd) {
  int fd = -1;
  return receive_descriptors(socket_fd, &fd, 1) == 1 ? fd : -1;
}

std::size_t receive_descriptors(int socket_fd, int* fds, std::size_t max) {
  constexpr std::size_t kMost = 4;
  if (max > kMost) max = kMost;
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMost)] = {};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  if (::recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC) <= 0) return 0;
  std::size_t count = 0;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    std::size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < n; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
      if (count < max) {
        fds[count++] = fd;
      } else {
        ::close(fd);
      }
    }
  }
  return count;
}

}  // namespace cordon::linux_impl

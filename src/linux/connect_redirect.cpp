// connect_redirect.cpp — the supervisor performs a filtered command's
// connect(2) on its own copy of the socket (connect_redirect.h).
#include "linux/connect_redirect.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "linux/unix_connect.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

// An IP destination from the caller's sockaddr (our copy).
struct ip_destination {
  bool v4 = true;     // an IPv4 address (also an IPv4-mapped IPv6 one)
  in_addr a4{};
  in6_addr a6{};
  int port = 0;
  std::string text() const {
    char buf[INET6_ADDRSTRLEN] = {};
    if (v4) {
      ::inet_ntop(AF_INET, &a4, buf, sizeof buf);
      return buf;
    }
    ::inet_ntop(AF_INET6, &a6, buf, sizeof buf);
    return buf;
  }
  std::string target() const { return (v4 ? text() : "[" + text() + "]") + ":" + std::to_string(port); }
  bool loopback() const { return v4 ? (ntohl(a4.s_addr) >> 24) == 127 : IN6_IS_ADDR_LOOPBACK(&a6); }
  bool is(std::uint32_t host_order_v4, int p) const { return v4 && ntohl(a4.s_addr) == host_order_v4 && port == p; }
};

std::optional<ip_destination> ip_of(const sockaddr_storage& address, std::size_t length) {
  ip_destination d;
  if (address.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, &address, sizeof in);
    d.a4 = in.sin_addr;
    d.port = ntohs(in.sin_port);
    return d;
  }
  // The kernel takes an IPv6 address without its scope id (RFC 2133's 24 bytes).
  if (address.ss_family == AF_INET6 && length >= offsetof(sockaddr_in6, sin6_scope_id)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, &address, length < sizeof in6 ? length : sizeof in6);
    d.port = ntohs(in6.sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
      std::memcpy(&d.a4, in6.sin6_addr.s6_addr + 12, 4);
    } else {
      d.v4 = false;
      d.a6 = in6.sin6_addr;
    }
    return d;
  }
  return std::nullopt;
}

// A pidfd for the calling thread's process. pidfd_open() takes only a
// thread-group leader (before Linux 6.9's PIDFD_THREAD), and a Go or Java
// program connects from any thread: then its group's leader, whose
// descriptor table the thread shares.
int open_pidfd(pid_t tid) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, tid, 0U));
  if (fd >= 0 || (errno != EINVAL && errno != ENOENT)) return fd;  // ENOENT from Linux 6.9 on
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Tgid:", 0) == 0) {
      const pid_t group = static_cast<pid_t>(std::atoi(line.c_str() + 5));
      return group > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, group, 0U)) : -1;
    }
  }
  return -1;
}

int socket_option(int fd, int name) {
  int value = -1;
  socklen_t length = sizeof value;
  return ::getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : -1;
}

// connect(2) on our copy with our copy of the address: the errno the
// command sees is the kernel's own (0, EINPROGRESS, ECONNREFUSED, ...).
int connect_as_asked(int fd, const sockaddr_storage& address, std::size_t length) {
  return ::connect(fd, reinterpret_cast<const sockaddr*>(&address), static_cast<socklen_t>(length)) == 0 ? 0 : errno;
}

// connect(2) on our copy as the caller's call would behave: a non-blocking
// socket gets EINPROGRESS and the caller polls for the outcome itself; for a
// blocking one we connect non-blocking and wait here, at most `wait`, so that
// a full accept queue cannot hold the supervisor forever. The file's flags
// are the caller's: they are restored before it runs again.
int connect_like_the_caller(int fd, const sockaddr_storage& address, std::size_t length,
                            std::chrono::milliseconds wait) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return errno;
  if ((flags & O_NONBLOCK) != 0) return connect_as_asked(fd, address, length);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int err = connect_as_asked(fd, address, length);
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (ready == 1) {
      socklen_t size = sizeof err;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &size) != 0) err = errno;
    } else {
      err = ETIMEDOUT;
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  return err;
}

// A loopback address of the socket's family with `port`, for bind and connect.
std::size_t loopback_address(int domain, bool v6_listener, int port, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof out);
  if (domain == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&out);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    in->sin_port = htons(static_cast<std::uint16_t>(port));
    return sizeof *in;
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&out);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(static_cast<std::uint16_t>(port));
  if (v6_listener) {
    in6->sin6_addr = in6addr_loopback;
  } else {  // ::ffff:127.0.0.1 reaches the IPv4 listener (unless the socket is IPV6_V6ONLY)
    in6->sin6_addr.s6_addr[10] = 0xff;
    in6->sin6_addr.s6_addr[11] = 0xff;
    in6->sin6_addr.s6_addr[12] = 127;
    in6->sin6_addr.s6_addr[15] = 1;
  }
  return sizeof *in6;
}

int local_port(int fd) {
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) return -1;
  if (local.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  if (local.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
  return -1;
}

// Connects the command's TCP socket to the broker's transparent listener,
// after noting where it was going. Returns the errno for the command.
int redirect_tcp(int fd, int domain, const ip_destination& destination, const connect_redirect& redirect) {
  sockaddr_storage address{};
  int port = local_port(fd);
  if (port < 0) return errno;
  if (port == 0) {  // unbound: bind now, so that the entry exists before the broker can accept
    const std::size_t length = loopback_address(domain, redirect.transparent_v6, 0, address);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), static_cast<socklen_t>(length)) != 0) return errno;
    port = local_port(fd);
    if (port <= 0) return EADDRNOTAVAIL;
  }
  const std::string source = std::to_string(port);
  if (!redirect.destinations->put(source, {destination.text(), destination.port})) return EAGAIN;
  const std::size_t length = loopback_address(domain, redirect.transparent_v6, redirect.transparent_port, address);
  const int err = connect_like_the_caller(fd, address, length, redirect.connect_wait);
  if (err != 0 && err != EINPROGRESS) redirect.destinations->drop(source);
  return err;
}

// The errno for the command's connect(2) on `fd` (our copy): every call is
// performed here, none is let through to the kernel.
int decide(int fd, pid_t pid, const sockaddr_storage& address, std::size_t length, const seccomp_program& program,
           const connect_redirect& redirect, violation_log& log, const std::function<bool()>& still_waiting) {
  const int domain = socket_option(fd, SO_DOMAIN);
  if (domain < 0) return errno == ENOTSOCK ? ENOTSOCK : EBADF;
  if (domain == AF_UNIX) return connect_unix(fd, pid, address, length, program, log, still_waiting);
  if (domain != AF_INET && domain != AF_INET6) return EACCES;  // the filter makes no other sockets
  const auto destination = ip_of(address, length);
  // AF_UNSPEC (dissolve an association) and malformed addresses: the kernel
  // answers them on our copy exactly as it would have.
  if (!destination) return connect_as_asked(fd, address, length);
  const int type = socket_option(fd, SO_TYPE);
  const bool to_broker = destination->is(INADDR_LOOPBACK, program.broker_port);
  const bool local = destination->loopback() && program.allow_loopback_connect;
  if (type == SOCK_STREAM) {
    if (to_broker || local) return connect_like_the_caller(fd, address, length, redirect.connect_wait);
    // DNS over TCP to the sandbox's resolver: the broker serves it on the
    // transparent listener (src/broker/dns_tcp.cpp), whatever ports the rules name.
    const bool to_dns = redirect.dns_port != 0 && destination->is(INADDR_LOOPBACK, redirect.dns_port);
    if (redirect.destinations && to_dns) return redirect_tcp(fd, domain, *destination, redirect);
    const auto& ports = redirect.port_may_be_allowed;
    const bool hopeless = !ports.empty() && !ports[static_cast<std::size_t>(destination->port)];
    if (redirect.destinations && !hopeless) return redirect_tcp(fd, domain, *destination, redirect);
  } else if (type == SOCK_DGRAM) {
    if (local || (redirect.dns_port != 0 && destination->is(INADDR_LOOPBACK, redirect.dns_port))) {
      return connect_as_asked(fd, address, length);
    }
  }
  log.record("network_connect", destination->target() + (type == SOCK_DGRAM ? " (udp)" : ""));
  return EACCES;
}

// The caller's socket (our copy), or -1 with response.error set. pidfd_open,
// then the notification's validity: the pid was still the caller's when the
// pidfd was made.
unique_fd callers_socket(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response) {
  unique_fd pidfd(open_pidfd(static_cast<pid_t>(request.pid)));
  std::uint64_t id = request.id;
  if (pidfd.get() < 0 || ::ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) {
    response.error = -ESRCH;  // the caller is gone; nobody reads this
    return unique_fd();
  }
  unique_fd socket(static_cast<int>(
      ::syscall(SYS_pidfd_getfd, pidfd.get(), static_cast<int>(request.data.args[0]), 0U)));
  if (socket.get() < 0) {
    // EBADF: not an open descriptor, as the call would say. Anything else
    // (no ptrace access to the caller): refuse rather than guess.
    response.error = errno == EBADF ? -EBADF : -EACCES;
  }
  return socket;
}

}  // namespace

std::vector<bool> ports_rules_may_allow(const network_policy& policy) {
  std::vector<bool> ports(65536, policy.default_action == rule_action::allow);
  for (const auto& rule : policy.rules) {
    if (rule.action != rule_action::allow) continue;
    if (!rule.port) return std::vector<bool>(65536, true);
    if (*rule.port >= 0 && *rule.port < 65536) ports[static_cast<std::size_t>(*rule.port)] = true;
  }
  ports[0] = false;
  return ports;
}

connect_redirect transparent_routing(int listener_fd, std::uint16_t transparent_port) {
  connect_redirect out;
  out.destinations = std::make_shared<broker::destination_table>();
  out.transparent_port = transparent_port;
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  out.transparent_v6 = ::getsockname(listener_fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
                       local.ss_family == AF_INET6;
  return out;
}

void answer_connect(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response,
                    const seccomp_program& program, const connect_redirect& redirect, violation_log& log) {
  response.flags = 0;
  response.val = 0;
  sockaddr_storage address{};
  const auto asked = static_cast<std::size_t>(request.data.args[2]);
  if (asked > sizeof address) {  // what the kernel says to an oversized address
    response.error = -EINVAL;
    return;
  }
  iovec local{&address, asked};
  iovec remote{reinterpret_cast<void*>(request.data.args[1]), asked};
  if (asked > 0 &&
      ::process_vm_readv(static_cast<pid_t>(request.pid), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(asked)) {
    response.error = -EFAULT;
    return;
  }
  std::uint64_t id = request.id;
  unique_fd socket = callers_socket(listener_fd, request, response);
  if (socket.get() < 0) return;
  const auto still_waiting = [listener_fd, id]() mutable {
    return ::ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
  };
  response.error =
      -decide(socket.get(), static_cast<pid_t>(request.pid), address, asked, program, redirect, log, still_waiting);
}

void answer_listen(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response, violation_log& log) {
  response.flags = 0;
  response.val = 0;
  unique_fd socket = callers_socket(listener_fd, request, response);
  if (socket.get() < 0) return;
  const int domain = socket_option(socket.get(), SO_DOMAIN);
  if (domain < 0) {
    response.error = errno == ENOTSOCK ? -ENOTSOCK : -EBADF;
    return;
  }
  if (domain == AF_UNIX) {
    // The same socket: the backlog as asked, the kernel's own answer.
    const int backlog = static_cast<int>(request.data.args[1]);
    response.error = ::listen(socket.get(), backlog) == 0 ? 0 : -errno;
    return;
  }
  const int port = local_port(socket.get());
  log.record("network_listen", domain == AF_INET6 ? "[::]:" + std::to_string(port < 0 ? 0 : port)
                                                  : "0.0.0.0:" + std::to_string(port < 0 ? 0 : port));
  response.error = -EACCES;
}

}  // namespace cordon::linux_impl

// The network namespace of PID 1 of the sandbox (sandbox_init_steps.h): the
// loopback and its congestion control, the broker's listeners, the resolver
// file. Child side: no allocation.
#include "linux/sandbox_init_steps.h"

#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace cordon::linux_impl {
namespace {

// The broker's TCP listener on the namespace's loopback (which is up).
int open_broker_tcp_listener(const prepared_launch& launch, std::uint16_t port = broker_port) noexcept {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) init_fail(launch, init_step::broker_listeners, errno);
  int one = 1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    init_fail(launch, init_step::broker_listeners, errno);
  }
  return fd;
}

// The broker's transparent listener (src/linux/connect_redirect.h): the
// supervisor connects the command's own TCP sockets here. Dual-stack [::]
// when the namespace has IPv6, else 127.0.0.1.
int open_broker_transparent_listener(const prepared_launch& launch) noexcept {
  int one = 1;
  int zero = 0;
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    sockaddr_in6 any6{};
    any6.sin6_family = AF_INET6;
    any6.sin6_port = htons(broker_transparent_port);
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) == 0 &&
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        ::bind(fd, reinterpret_cast<sockaddr*>(&any6), sizeof any6) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      return fd;
    }
    ::close(fd);
  }
  return open_broker_tcp_listener(launch, broker_transparent_port);
}

// The broker's DNS socket: UDP on 127.0.0.1:53 inside (docs/network.md,
// "DNS inside the sandbox").
int open_broker_dns_socket(const prepared_launch& launch) noexcept {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) init_fail(launch, init_step::broker_listeners, errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(broker_dns_port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    init_fail(launch, init_step::broker_listeners, errno);
  }
  return fd;
}

}  // namespace

// The broker's unix socket, bound in the private /dev before it becomes
// read-only: the command can connect to it but not remove or replace it, and
// it vanishes with the mount namespace (nothing is left on the host).
int open_broker_unix_listener(const prepared_launch& launch) noexcept {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) init_fail(launch, init_step::broker_listeners, errno);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, "/newroot");
  std::strcat(address.sun_path, broker_socket_path);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::chmod(address.sun_path, 0666) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    init_fail(launch, init_step::broker_listeners, errno);
  }
  return fd;
}

// The sandbox's /etc/resolv.conf names the broker's DNS socket: a file in
// the staging root bound read-only over the host's. When the view has no
// /etc/resolv.conf (or it is a link that leads outside the view) nothing is
// mounted and names simply do not resolve inside (the broker still decides
// every connection).
void overlay_resolv_conf() noexcept {
  static constexpr char contents[] = "# cordon: the network broker answers for the names the policy allows\n"
                                     "nameserver 127.0.0.1\noptions timeout:3 attempts:2\n";
  int fd = ::open("/resolv.conf", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written = ::write(fd, contents, sizeof contents - 1) == static_cast<ssize_t>(sizeof contents - 1);
  ::close(fd);
  struct stat target {};
  if (!written || ::stat("/newroot/etc/resolv.conf", &target) != 0 || !S_ISREG(target.st_mode)) return;
  init_bind("/resolv.conf", "/newroot/etc/resolv.conf", true, true);
}

void bring_up_loopback(const prepared_launch& launch) noexcept {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) init_fail(launch, init_step::loopback, errno);
  struct ifreq request {};
  std::strcpy(request.ifr_name, "lo");
  if (::ioctl(fd, SIOCGIFFLAGS, &request) != 0) init_fail(launch, init_step::loopback, errno);
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
  if (::ioctl(fd, SIOCSIFFLAGS, &request) != 0) init_fail(launch, init_step::loopback, errno);
  ::close(fd);
}

// Every TCP connection of the sandbox's network namespace crosses its
// loopback (to the broker, or to the command itself). A host may make BBR
// its default, and a new namespace inherits it; BBR paces a loopback
// transfer to less than half of what cubic moves (docs/network.md,
// "Throughput"). So this namespace, and only it, uses cubic. Through the
// host's /proc, before the new root (whose /proc/sys is read-only). A
// namespace other than the host's may choose only an algorithm of
// tcp_allowed_congestion_control (EPERM otherwise, whatever its
// capabilities), which on some hosts lists no cubic; reno is always
// allowed and, like cubic, unpaced. Not a control: where neither can be set
// the inherited default stays.
void loopback_congestion_control() noexcept {
  constexpr const char* kPath = "/proc/sys/net/ipv4/tcp_congestion_control";
  if (!init_write_file(kPath, "cubic")) (void)init_write_file(kPath, "reno");
}

void hand_over_broker_listeners(const prepared_launch& launch, int unix_listener) noexcept {
  // Created here, before Landlock and seccomp, served outside: the
  // supervisor's broker accepts on them directly (src/broker/broker.h).
  int listeners[4] = {open_broker_tcp_listener(launch), unix_listener, open_broker_transparent_listener(launch),
                      open_broker_dns_socket(launch)};
  if (!init_send_descriptors(launch.broker_send_fd, listeners, 4)) {
    init_fail(launch, init_step::broker_listeners, errno);
  }
  for (int fd : listeners) ::close(fd);
}

}  // namespace cordon::linux_impl

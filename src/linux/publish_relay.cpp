// Published ports' relay (publish_relay.h). The relay process is forked from
// the supervisor: it uses only system calls and memory the parent allocated
// before the fork (plus mmap'd buffers), so a lock some other thread of the
// parent held at the fork cannot stop it.
#include "linux/publish_relay.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace cordon::linux_impl {
namespace {

// What the relay hands back per port (a fixed record on the counts pipe).
struct port_counts {
  std::uint64_t accepted = 0, refused = 0, failed = 0, bytes_in = 0, bytes_out = 0;
  std::uint64_t entry_errno = 0;  // entering the sandbox's namespaces failed with this errno (0: entered)
};

// One direction of a connection: bytes read from `from`, not yet written to `to`.
struct half {
  char* buffer = nullptr;
  std::size_t start = 0, end = 0;
  bool eof = false;  // `from` ended; `to` is shut down for writing once the buffer is empty
  bool shut = false;
};

struct connection {
  int host = -1;     // accepted on the host's loopback
  int inside = -1;   // opened in the sandbox's namespace
  bool connecting = false;
  std::size_t port = 0;  // index into the ports
  half in, out;          // in: host -> sandbox; out: sandbox -> host
};

struct relay_state {
  std::size_t ports = 0;
  const published_port* published = nullptr;
  const int* listeners = nullptr;
  int stop = -1, counts = -1;
  port_counts* totals = nullptr;
  connection* table = nullptr;
  std::size_t table_size = 0;
  pollfd* fds = nullptr;
  connection** owner = nullptr;  // per pollfd: the connection, or nullptr
};

bool same_namespace(const char* mine, const char* theirs) {
  struct stat a {}, b {};
  return ::stat(mine, &a) == 0 && ::stat(theirs, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Closes every descriptor but `keep` (sorted ascending).
void close_all_but(const int* keep, std::size_t count) {
  unsigned from = 3;
  for (std::size_t i = 0; i < count; ++i) {
    const auto fd = static_cast<unsigned>(keep[i]);
    if (fd > from) ::syscall(SYS_close_range, from, fd - 1, 0);
    if (fd + 1 > from) from = fd + 1;
  }
  ::syscall(SYS_close_range, from, ~0U, 0);
}

// Enters PID 1's user namespace (when it is not ours) and network namespace,
// then gives up every capability. False with errno set when a step fails.
bool enter_sandbox_network(pid_t pid) {
  char user[64], net[64];
  std::snprintf(user, sizeof user, "/proc/%d/ns/user", static_cast<int>(pid));
  std::snprintf(net, sizeof net, "/proc/%d/ns/net", static_cast<int>(pid));
  if (same_namespace("/proc/self/ns/net", net)) {
    errno = EINVAL;  // the sandbox has no network namespace of its own: relaying would reach the host's loopback
    return false;
  }
  int net_fd = ::open(net, O_RDONLY | O_CLOEXEC);
  if (net_fd < 0) return false;
  if (!same_namespace("/proc/self/ns/user", user)) {
    int user_fd = ::open(user, O_RDONLY | O_CLOEXEC);
    const bool entered = user_fd >= 0 && ::setns(user_fd, CLONE_NEWUSER) == 0;
    const int err = errno;
    if (user_fd >= 0) ::close(user_fd);
    if (!entered) {
      ::close(net_fd);
      errno = err;
      return false;
    }
  }
  const bool entered = ::setns(net_fd, CLONE_NEWNET) == 0;
  const int err = errno;
  ::close(net_fd);
  errno = err;
  if (!entered) return false;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  return ::syscall(SYS_capset, &header, data) == 0 && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
}

void release(connection& c) {
  if (c.host >= 0) ::close(c.host);
  if (c.inside >= 0) ::close(c.inside);
  if (c.in.buffer != nullptr) ::munmap(c.in.buffer, publish_buffer_bytes);
  if (c.out.buffer != nullptr) ::munmap(c.out.buffer, publish_buffer_bytes);
  c = connection{};
}

std::size_t open_on_port(const relay_state& s, std::size_t port) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.table_size; ++i) n += s.table[i].host >= 0 && s.table[i].port == port;
  return n;
}

// Accepts one host connection on port `p` and starts its connection inside.
void accept_one(relay_state& s, std::size_t p) {
  // The descriptor limit was raised for every slot (relay_descriptors), so
  // accept4 does not fail with EMFILE and leave the listener readable.
  int host = ::accept4(s.listeners[p], nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (host < 0) return;
  connection* slot = nullptr;
  for (std::size_t i = 0; i < s.table_size && slot == nullptr; ++i) {
    if (s.table[i].host < 0) slot = &s.table[i];
  }
  if (slot == nullptr || open_on_port(s, p) >= publish_max_connections) {
    ::close(host);
    ++s.totals[p].refused;
    return;
  }
  int inside = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(s.published[p].port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  void* a = ::mmap(nullptr, publish_buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* b = ::mmap(nullptr, publish_buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  slot->host = host;
  slot->inside = inside;
  slot->port = p;
  slot->in.buffer = a == MAP_FAILED ? nullptr : static_cast<char*>(a);
  slot->out.buffer = b == MAP_FAILED ? nullptr : static_cast<char*>(b);
  const int rc = inside < 0 ? -1 : ::connect(inside, reinterpret_cast<sockaddr*>(&to), sizeof to);
  if (slot->in.buffer == nullptr || slot->out.buffer == nullptr || (rc != 0 && errno != EINPROGRESS)) {
    ++s.totals[p].failed;
    release(*slot);
    return;
  }
  slot->connecting = rc != 0;
  if (!slot->connecting) ++s.totals[p].accepted;
}

// Moves what `from` has into h's buffer, and the buffer into `to`. False
// when the connection is over (an error either way).
bool pump(half& h, int from, int to, std::uint64_t& counted) {
  if (!h.eof && h.end < publish_buffer_bytes) {
    ssize_t n = ::read(from, h.buffer + h.end, publish_buffer_bytes - h.end);
    if (n > 0) h.end += static_cast<std::size_t>(n);
    if (n == 0) h.eof = true;
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
  }
  if (h.end > h.start) {
    ssize_t n = ::send(to, h.buffer + h.start, h.end - h.start, MSG_NOSIGNAL);
    if (n > 0) {
      h.start += static_cast<std::size_t>(n);
      counted += static_cast<std::uint64_t>(n);
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (h.start == h.end) h.start = h.end = 0;
  }
  if (h.eof && h.start == h.end && !h.shut) {
    ::shutdown(to, SHUT_WR);
    h.shut = true;
  }
  return true;
}

void serve_connection(relay_state& s, connection& c, bool inside_ready) {
  if (c.connecting) {
    if (!inside_ready) return;  // the connect inside has not finished: SO_ERROR would still read 0
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(c.inside, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      ++s.totals[c.port].failed;
      release(c);
      return;
    }
    c.connecting = false;
    ++s.totals[c.port].accepted;
  }
  port_counts& t = s.totals[c.port];
  if (!pump(c.in, c.host, c.inside, t.bytes_in) || !pump(c.out, c.inside, c.host, t.bytes_out) ||
      (c.in.shut && c.out.shut)) {
    release(c);
  }
}

short interest(const half& h, bool reading_side) {
  if (reading_side) return !h.eof && h.end < publish_buffer_bytes ? POLLIN : 0;
  return h.end > h.start ? POLLOUT : 0;
}

// The relay process's loop; returns when the supervisor closes the stop pipe.
void relay_loop(relay_state& s) {
  for (;;) {
    std::size_t n = 0;
    s.fds[n] = {s.stop, POLLIN, 0};
    s.owner[n++] = nullptr;
    for (std::size_t p = 0; p < s.ports; ++p) {
      s.fds[n] = {s.listeners[p], POLLIN, 0};
      s.owner[n++] = nullptr;
    }
    for (std::size_t i = 0; i < s.table_size; ++i) {
      connection& c = s.table[i];
      if (c.host < 0) continue;
      const short host_events = static_cast<short>(interest(c.in, true) | interest(c.out, false));
      const short inside_events =
          c.connecting ? POLLOUT : static_cast<short>(interest(c.out, true) | interest(c.in, false));
      // A side with nothing wanted is left out of the poll (fd -1): its
      // error or hang-up would otherwise wake every poll while the other side
      // is idle. The next read or send on it finds the error.
      const short host_wanted = c.connecting ? short{0} : host_events;
      s.fds[n] = {host_wanted != 0 ? c.host : -1, host_wanted, 0};
      s.owner[n++] = &c;
      s.fds[n] = {inside_events != 0 ? c.inside : -1, inside_events, 0};
      s.owner[n++] = &c;
    }
    if (::poll(s.fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (s.fds[0].revents != 0) return;
    for (std::size_t p = 0; p < s.ports; ++p) {
      if (s.fds[1 + p].revents & POLLIN) accept_one(s, p);
    }
    for (std::size_t i = 1 + s.ports; i < n; ++i) {
      connection* c = s.owner[i];
      if (s.fds[i].revents != 0 && c->host >= 0) serve_connection(s, *c, s.fds[i].fd == c->inside);
    }
  }
}

[[noreturn]] void run_relay(pid_t sandbox_pid, pid_t supervisor, relay_state& s, int* keep, std::size_t keep_count,
                            rlim_t descriptors) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != supervisor) ::_exit(1);  // the supervisor died before PR_SET_PDEATHSIG took hold
  ::prctl(PR_SET_DUMPABLE, 0);
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < descriptors) {
    limit.rlim_cur = descriptors;  // start() checked the hard limit
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  std::sort(keep, keep + keep_count);
  close_all_but(keep, keep_count);
  if (enter_sandbox_network(sandbox_pid)) {
    relay_loop(s);
  } else {
    for (std::size_t p = 0; p < s.ports; ++p) s.totals[p].entry_errno = static_cast<std::uint64_t>(errno);
  }
  for (std::size_t i = 0; i < s.table_size; ++i) {
    if (s.table[i].host >= 0) release(s.table[i]);
  }
  const auto bytes = static_cast<ssize_t>(sizeof(port_counts) * s.ports);
  const bool written = ::write(s.counts, s.totals, static_cast<std::size_t>(bytes)) == bytes;
  ::_exit(written ? 0 : 1);
}

}  // namespace

publish_relay::publish_relay(publish_relay&& other) noexcept
    : ports_(std::move(other.ports_)),
      listeners_(std::move(other.listeners_)),
      stop_write_(std::move(other.stop_write_)),
      counts_read_(std::move(other.counts_read_)),
      pid_(std::exchange(other.pid_, -1)),
      entry_error_(other.entry_error_) {}

publish_relay& publish_relay::operator=(publish_relay&& other) noexcept {
  if (this != &other) {
    this->~publish_relay();
    new (this) publish_relay(std::move(other));
  }
  return *this;
}

publish_relay::~publish_relay() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

result<publish_relay> publish_relay::bind(const std::vector<published_port>& ports) {
  publish_relay relay;
  for (const published_port& p : ports) {
    unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(p.host_port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    if (!fd || ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd.get(), SOMAXCONN) != 0) {
      const int err = errno;
      return make_error(error_code::io_error,
                        "network.publish: cannot listen on 127.0.0.1:" + std::to_string(p.host_port) + " (for port " +
                            std::to_string(p.port) + " inside): " + std::strerror(err),
                        "/network/publish", err);
    }
    relay.ports_.push_back(p);
    relay.listeners_.push_back(std::move(fd));
  }
  return relay;
}

result<void> publish_relay::start(pid_t sandbox_pid) {
  if (ports_.empty()) return ok;
  int stop_pipe[2], counts_pipe[2];
  if (::pipe2(stop_pipe, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "publish relay: pipe", {}, errno);
  unique_fd stop_read(stop_pipe[0]);
  stop_write_.reset(stop_pipe[1]);
  if (::pipe2(counts_pipe, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "publish relay: pipe", {}, errno);
  counts_read_.reset(counts_pipe[0]);
  unique_fd counts_write(counts_pipe[1]);
  // Everything the relay uses is allocated here, before the fork.
  const std::size_t table_size = ports_.size() * publish_max_connections;
  std::vector<connection> table(table_size);
  std::vector<pollfd> fds(1 + ports_.size() + 2 * table_size);
  std::vector<connection*> owner(fds.size());
  std::vector<port_counts> totals(ports_.size());
  std::vector<int> listener_fds;
  std::vector<int> keep{stop_read.get(), counts_write.get()};
  for (const unique_fd& l : listeners_) {
    listener_fds.push_back(l.get());
    keep.push_back(l.get());
  }
  // Descriptors the relay may hold: stdio, its pipes and listeners, two per
  // connection slot, and one accepted beyond the table to be closed (refused).
  const rlim_t descriptors = 3 + keep.size() + 2 * table_size + 1 + 16;
  if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_max < descriptors) {
    return make_error(error_code::launch_failed,
                      "publish relay: the descriptor limit (RLIMIT_NOFILE hard) is below the " +
                          std::to_string(descriptors) + " descriptors its " + std::to_string(ports_.size()) +
                          " ports' connections need",
                      "/network/publish", EMFILE);
  }
  relay_state s{ports_.size(), ports_.data(), listener_fds.data(), stop_read.get(), counts_write.get(),
                totals.data(), table.data(), table_size, fds.data(), owner.data()};
  const pid_t supervisor = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return make_error(error_code::launch_failed, "publish relay: fork", {}, errno);
  if (pid == 0) run_relay(sandbox_pid, supervisor, s, keep.data(), keep.size(), descriptors);
  pid_ = pid;
  listeners_.clear();  // the relay's copies only: when it ends, a host client is refused
  return ok;
}

std::vector<published_port_evidence> publish_relay::stop() {
  std::vector<published_port_evidence> out;
  std::vector<port_counts> counts(ports_.size());
  if (pid_ > 0) {
    stop_write_.reset();
    auto* bytes = reinterpret_cast<char*>(counts.data());
    const std::size_t want = sizeof(port_counts) * counts.size();
    std::size_t got = 0;
    while (got < want) {
      ssize_t n = ::read(counts_read_.get(), bytes + got, want - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got != want) {
      counts.assign(ports_.size(), port_counts{});
      entry_error_ = EPIPE;  // the relay ended without its counts
    } else if (!counts.empty() && counts[0].entry_errno != 0) {
      entry_error_ = static_cast<int>(counts[0].entry_errno);
    }
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    published_port_evidence e;
    e.port = ports_[i].port;
    e.host_port = ports_[i].host_port;
    e.max_connections = publish_max_connections;
    e.buffer_bytes = publish_buffer_bytes;
    e.accepted = counts[i].accepted;
    e.refused = counts[i].refused;
    e.failed = counts[i].failed;
    e.bytes_in = counts[i].bytes_in;
    e.bytes_out = counts[i].bytes_out;
    out.push_back(e);
  }
  listeners_.clear();
  return out;
}

}  // namespace cordon::linux_impl

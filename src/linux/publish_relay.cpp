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
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "posix/socket_io.h"

namespace cordon::linux_impl {
namespace {

// What the relay hands back per port (a fixed record on the counts pipe).
struct port_counts {
  std::uint64_t accepted = 0, refused = 0, failed = 0, bytes_in = 0, bytes_out = 0;
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

// The namespace `fd` names is `own` (a /proc/self/ns path). Nullopt (errno
// set) when either cannot be read: the caller cannot tell, and refuses.
std::optional<bool> is_own_namespace(int fd, const char* own) {
  struct stat theirs {}, mine {};
  if (::fstat(fd, &theirs) != 0 || ::stat(own, &mine) != 0) return std::nullopt;
  return theirs.st_dev == mine.st_dev && theirs.st_ino == mine.st_ino;
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

// Opens /proc/PID/ns/KIND. PID 1 is still waiting at its sync pipe (start()'s
// precondition): dumpable, so this process (same user, no capability) may
// open it, and its namespaces are the ones the clone made.
int open_namespace(pid_t pid, const char* kind) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/ns/%s", static_cast<int>(pid), kind);
  return ::open(path, O_RDONLY | O_CLOEXEC);
}

// Enters PID 1's user namespace (when it is not ours) and network namespace,
// then gives up every capability. 0, or the errno of the step that failed
// (EINVAL: the sandbox's network namespace is this process's own, where the
// relay would reach the host's loopback).
int enter_sandbox_network(pid_t pid) {
  const int net = open_namespace(pid, "net");
  const int user = open_namespace(pid, "user");
  int err = net < 0 || user < 0 ? errno : 0;
  if (err == 0) {
    const std::optional<bool> own_net = is_own_namespace(net, "/proc/self/ns/net");
    const std::optional<bool> own_user = own_net ? is_own_namespace(user, "/proc/self/ns/user") : std::nullopt;
    if (!own_net || !own_user) {
      err = errno;
    } else if (*own_net) {
      err = EINVAL;
    } else if ((!*own_user && ::setns(user, CLONE_NEWUSER) != 0) || ::setns(net, CLONE_NEWNET) != 0) {
      err = errno;
    }
  }
  if (net >= 0) ::close(net);
  if (user >= 0) ::close(user);
  if (err != 0) return err;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capset, &header, data) != 0 || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  return 0;
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

std::int64_t monotonic_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// After the stop: the tree is gone, so nothing more comes from inside but
// what the inside sockets and the buffers hold (a server's last answer, sent
// just before it exited). That goes on to the host, for at most
// publish_drain_ms; then every connection ends. Nothing more is read from
// the host, and a connect still under way counts as failed.
void drain(relay_state& s) {
  const std::int64_t deadline = monotonic_ms() + static_cast<std::int64_t>(publish_drain_ms);
  for (;;) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.table_size; ++i) {
      connection& c = s.table[i];
      if (c.host < 0) continue;
      if (c.connecting || (c.out.shut && c.out.start == c.out.end)) {
        if (c.connecting) ++s.totals[c.port].failed;
        release(c);
        continue;
      }
      const short host_wanted = interest(c.out, false);
      const short inside_wanted = interest(c.out, true);
      s.fds[n] = {host_wanted != 0 ? c.host : -1, host_wanted, 0};
      s.owner[n++] = &c;
      s.fds[n] = {inside_wanted != 0 ? c.inside : -1, inside_wanted, 0};
      s.owner[n++] = &c;
    }
    const std::int64_t left = deadline - monotonic_ms();
    if (n == 0 || left <= 0) return;
    if (::poll(s.fds, n, static_cast<int>(left)) < 0 && errno != EINTR) return;
    for (std::size_t i = 0; i < n; ++i) {
      connection* c = s.owner[i];
      if (s.fds[i].revents == 0 || c->host < 0) continue;
      if (!pump(c->out, c->inside, c->host, s.totals[c->port].bytes_out)) release(*c);
    }
  }
}

// The relay process's loop; returns when the supervisor closes the stop pipe
// (after drain()).
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
    if (s.fds[0].revents != 0) {
      drain(s);
      return;
    }
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
  // start() waits for this word: 0 (in the sandbox's namespaces, relaying) or why not.
  const int entry = enter_sandbox_network(sandbox_pid);
  if (::write(s.counts, &entry, sizeof entry) != static_cast<ssize_t>(sizeof entry) || entry != 0) ::_exit(1);
  relay_loop(s);
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
      counts_missing_(other.counts_missing_) {}

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
  counts_write.reset();  // the relay's copy only: EOF when it ends
  // The relay's first word: it is in the sandbox's namespaces (0), or why
  // not. Read before PID 1 goes on, so the relay serves the run's whole life.
  int entry = EPIPE;  // it ended without a word
  if (!read_exactly(counts_read_.get(), &entry, sizeof entry)) entry = EPIPE;
  if (entry != 0) {
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return make_error(error_code::launch_failed,
                      std::string("network.publish: the relay could not enter the sandbox's network namespace: ") +
                          std::strerror(entry),
                      "/network/publish", entry);
  }
  return ok;
}

std::vector<published_port_evidence> publish_relay::stop() {
  std::vector<published_port_evidence> out;
  std::vector<port_counts> counts(ports_.size());
  if (pid_ > 0) {
    stop_write_.reset();
    if (!read_exactly(counts_read_.get(), counts.data(), sizeof(port_counts) * counts.size())) {
      counts.assign(ports_.size(), port_counts{});
      counts_missing_ = true;  // the relay ended without its counts
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

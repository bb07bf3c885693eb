// broker_process.cpp — see broker_process.h. The supervisor's side of the
// channel: the protocol is listed in src/broker/broker_link.cpp.
#include "linux/broker_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "broker/broker_link.h"
#include "broker/broker_options_json.h"
#include "broker/evidence_stream.h"
#include "core/outcome_json.h"
#include "linux/broker_confinement.h"
#include "posix/helper_spawn.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

// The longest message the supervisor holds while it waits for its end: an
// entry with 256 requests of 16 KiB heads stays far below it.
constexpr std::size_t max_line = 16 * 1024 * 1024;

struct broker_process::state {
  pid_t pid = -1;
  unique_fd pidfd;
  unique_fd channel;
  std::mutex write_mutex;  // writers: the supervisor's thread (destinations) and the link thread (answers)
  std::string received;    // read from the channel, not yet a whole line
  bool overflowed = false;  // a line longer than max_line came: the channel is not read further
  std::thread thread;

  mutable std::mutex mutex;  // everything below
  std::condition_variable changed;
  std::optional<broker::streamed_evidence> stream;  // merged as it arrives (evidence_stream.h)
  std::vector<std::string> listeners;
  std::uint64_t memory_budget_bytes = 0;
  bool ended = false;  // the evidence came, or the channel closed
  std::optional<int> probe_errno;
  bool stopped = false;
  bool reaped = false;

  bool send(const json& message) { return send_line(message.dump() + "\n"); }

  bool send_line(const std::string& line) {
    const std::lock_guard<std::mutex> lock(write_mutex);
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::send(channel.get(), line.data() + done, line.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  // The next whole line, waiting at most until `deadline` (nullopt: no
  // deadline); empty optional at end of stream, an error or the deadline.
  std::optional<std::string> next_line(std::optional<steady::time_point> deadline) {
    for (;;) {
      if (const auto end = received.find('\n'); end != std::string::npos) {
        std::string line = received.substr(0, end);
        received.erase(0, end + 1);
        return line;
      }
      int timeout = -1;
      if (deadline) {
        timeout = static_cast<int>(std::max<long long>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - steady::now()).count()));
      }
      pollfd p{channel.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, timeout);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return std::nullopt;
      if (received.size() > max_line) {
        overflowed = true;
        return std::nullopt;
      }
      char chunk[16384];
      const ssize_t n = ::recv(channel.get(), chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      received.append(chunk, static_cast<std::size_t>(n));
    }
  }
};

namespace {

// What the system resolver says `host` is, as IP literals in its order, or
// why not (the broker's resolution, done here: broker_link.h).
std::pair<std::vector<std::string>, std::string> resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list);
  if (rc != 0) return {{}, rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)};
  std::vector<std::string> out;
  for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr, text, sizeof text);
    } else if (a->ai_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr, text, sizeof text);
    } else {
      continue;
    }
    if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
  }
  ::freeaddrinfo(list);
  return {out, out.empty() ? "no address" : ""};
}

// How the broker ended, for the evidence, without reaping it. Its channel
// closes as it exits, a moment before it can be waited for: waits up to 1 s.
std::string how_it_ended(const broker_process::state& s) {
  pollfd p{s.pidfd.get(), POLLIN, 0};
  (void)::poll(&p, 1, 1000);
  siginfo_t info{};
  if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(s.pidfd.get()), &info, WEXITED | WNOHANG | WNOWAIT) !=
          0 ||
      info.si_pid == 0) {
    return "closed its channel";
  }
  if (info.si_code == CLD_EXITED) return "exited with status " + std::to_string(info.si_status);
  return std::string("was killed by signal ") + ::strsignal(info.si_status);
}

// An entry of the broker's, or one saying it is unreadable.
network_connection connection_of(const json& m) {
  try {
    return core::connection_from_json(m.at("connection"));
  } catch (const std::exception& e) {
    network_connection c;
    c.protocol = "unknown";
    c.action = "error";
    c.reason = std::string("an entry of the network broker's evidence is unreadable: ") + e.what();
    return c;
  }
}

std::uint64_t id_of(const json& m, const char* key) {
  const json& id = m[key];
  return id.is_number_unsigned() ? id.get<std::uint64_t>() : 0;
}

// The link thread: answers the broker and merges its evidence as it comes
// (evidence_stream.h), until its last message came or it ended.
void serve_link(broker_process::state& s) {
  for (;;) {
    auto line = s.next_line(std::nullopt);
    if (!line) break;
    const json m = json::parse(*line, nullptr, false);
    if (!m.is_object()) continue;
    if (m.contains("resolve")) {
      auto [addresses, problem] = resolve(m.value("host", std::string()), m.value("port", 0));
      (void)s.send({{"resolved", m["resolve"]}, {"addresses", addresses}, {"problem", problem}});
    } else if (m.contains("probe_errno")) {
      const std::lock_guard<std::mutex> lock(s.mutex);
      s.probe_errno = m["probe_errno"].get<int>();
      s.changed.notify_all();
    } else if (m.contains("open") || m.contains("entry")) {
      const bool open = m.contains("open");
      network_connection c = connection_of(m);
      const std::uint64_t id = id_of(m, open ? "open" : "entry");
      const std::lock_guard<std::mutex> lock(s.mutex);
      open ? s.stream->opened(id, std::move(c)) : s.stream->recorded(id, std::move(c));
    } else if (m.contains("evidence")) {
      network_evidence last;
      std::string unreadable;
      try {
        last = core::evidence_from_json(m["evidence"]);
      } catch (const std::exception& e) {
        unreadable = e.what();
      }
      const std::lock_guard<std::mutex> lock(s.mutex);
      if (!unreadable.empty()) {
        network_connection c;
        c.protocol = "unknown";
        c.action = "error";
        c.reason = "the network broker's evidence is unreadable: " + unreadable;
        s.stream->recorded(0, std::move(c));
      }
      s.stream->finished(std::move(last));
      s.ended = true;
      s.changed.notify_all();
      return;
    }
  }
  if (s.overflowed) {  // not a broker cordon wrote: it is not heard further
    ::syscall(SYS_pidfd_send_signal, s.pidfd.get(), SIGKILL, nullptr, 0);
  }
  const std::string how = s.overflowed ? "sent a message over 16 MiB and was killed" : how_it_ended(s);
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.ended) {
    // Every entry it sent is kept; a connection still open is listed as it
    // was last reported, and one entry says the broker is gone.
    s.stream->ended_open("the network broker process " + how + " while this connection was open");
    network_connection c;
    c.protocol = "unknown";
    c.action = "error";
    c.reason = "the network broker process " + how +
               " before the run ended: the connections it had not finished are listed as last reported, and what it "
               "decided in its last " + std::to_string(broker::evidence_report_delay.count()) +
               " ms (not sent yet) is missing";
    s.stream->recorded(0, std::move(c));
    s.ended = true;
  }
  s.changed.notify_all();
}

// Where the broker's process finds its descriptors after execve: the
// channel, then the listeners in order, then the DNS socket.
constexpr int exec_channel_fd = 3;
constexpr int exec_first_listener_fd = 4;
constexpr std::size_t max_exec_descriptors = 8;  // the channel, six listeners, the DNS socket

// The argument that makes cordon-supervisor the broker's process.
constexpr const char* broker_argument = "--network-broker";

// Writes `digits` of `value` into `out` (async-signal-safe); returns the end.
char* put_decimal(char* out, int value) {
  char reversed[16];
  int n = 0;
  unsigned int v = value < 0 ? 0U : static_cast<unsigned int>(value);
  do {
    reversed[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && n < 16);
  while (n > 0) *out++ = reversed[--n];
  return out;
}

// The child between fork and execve: only async-signal-safe calls (the
// supervisor may have other threads). `sources` are the channel, the
// listeners and the DNS socket, which land on 3, 4, ...; every other
// descriptor is closed; the environment is empty (the host's never reaches
// the broker: docs/network.md, "The broker's process"). `failed` is the
// channel line written when execve fails, up to its errno's digits.
[[noreturn]] void exec_broker(pid_t parent, const std::vector<int>& sources, const char* path, char* const argv[],
                              const std::string& failed) {
  // Dies with the supervisor (kept across execve: the helper is not
  // set-user-ID); the supervisor may have died between the fork and this.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != parent) ::_exit(1);
  // The terminal's signals are the supervisor's to forward; a broker
  // killed by Ctrl-C would lose the evidence. splice(2) into a reset peer
  // raises SIGPIPE (broker.cpp): ignored, it is EPIPE. Ignored dispositions
  // survive execve.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Each source is first copied above every target, so that placing one
  // never overwrites another that is still to be placed.
  const int above = exec_channel_fd + static_cast<int>(sources.size()) + 64;
  int moved[max_exec_descriptors];
  const std::size_t count = std::min(sources.size(), max_exec_descriptors);
  for (std::size_t i = 0; i < count; ++i) {
    moved[i] = ::fcntl(sources[i], F_DUPFD_CLOEXEC, above);
    if (moved[i] < 0) ::_exit(1);
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (::dup2(moved[i], exec_channel_fd + static_cast<int>(i)) < 0) ::_exit(1);  // dup2 clears FD_CLOEXEC
  }
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null_fd >= 0) ::dup2(null_fd, fd);
  }
  // Every other descriptor of the supervisor (the sandbox's pidfd, the
  // seccomp listener, its pipes) is closed.
  ::syscall(SYS_close_range, static_cast<unsigned int>(exec_channel_fd + static_cast<int>(count)), ~0U, 0U);
  char* const no_environment[] = {nullptr};
  ::execve(path, argv, no_environment);
  char line[512];
  const std::size_t prefix = std::min<std::size_t>(failed.size(), sizeof line - 24);
  std::memcpy(line, failed.data(), prefix);
  char* end = put_decimal(line + prefix, errno);
  *end++ = '"';
  *end++ = '}';
  *end++ = '\n';
  (void)::write(exec_channel_fd, line, static_cast<std::size_t>(end - line));
  ::_exit(127);
}

// The broker's first line from the channel (its options), read blocking.
std::optional<std::string> read_options_line(int channel) {
  std::string received;
  char chunk[16384];
  while (received.find('\n') == std::string::npos) {
    if (received.size() > max_line) return std::nullopt;
    const ssize_t n = ::recv(channel, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    received.append(chunk, static_cast<std::size_t>(n));
  }
  // Nothing follows the options until the broker said it is ready.
  if (received.find('\n') + 1 != received.size()) return std::nullopt;
  received.pop_back();
  return received;
}

// The descriptor limit of a broker with `max_connections`: a relayed
// connection holds six descriptors (two sockets, two pipes); the rest is
// the broker's own (epoll, its timers, the channel).
rlim_t broker_max_files(std::size_t max_connections) { return static_cast<rlim_t>(max_connections) * 6 + 64; }

}  // namespace

broker_process::broker_process(std::shared_ptr<state> s) : state_(std::move(s)) {}

broker_process::~broker_process() { stop(); }

pid_t broker_process::pid() const { return state_->pid; }

result<std::unique_ptr<broker_process>> broker_process::start(broker::broker_options options,
                                                               std::vector<int> listener_fds) {
  auto close_given = [&] {
    for (int fd : listener_fds) ::close(fd);
    if (options.dns_socket >= 0) ::close(options.dns_socket);
  };
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    const int err = errno;
    close_given();
    return make_error(error_code::launch_failed, "network broker: socketpair", {}, err);
  }
  auto s = std::make_shared<state>();
  s->channel.reset(pair[0]);
  unique_fd theirs(pair[1]);
  s->listeners = options.listener_names;
  s->memory_budget_bytes = options.limits.memory_budget_bytes;
  s->stream.emplace(options.limits.max_connections);
  auto destinations = options.destinations;
  // Everything the child needs is made before the fork: between fork and
  // execve it may only make async-signal-safe calls.
  auto encoded = broker::broker_options_to_json(options, listener_fds.size());
  if (!encoded) {
    close_given();
    return std::move(encoded).error_value();
  }
  std::string options_line = encoded->dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  encoded->clear();
  // Its keys and credentials are secret: the copies here are wiped.
  struct wiped {
    std::string& text;
    ~wiped() { ::explicit_bzero(text.data(), text.size()); }
  } wipe{options_line};
  const std::string path = posix::supervisor_path({});
  if (::access(path.c_str(), X_OK) != 0) {
    const int err = errno;
    close_given();
    return make_error(error_code::launch_failed,
                      "network broker: cannot execute the supervisor helper " + path +
                          " (install cordon, build the cordon_supervisor target, or set CORDON_SUPERVISOR)",
                      {}, err);
  }
  std::vector<int> sources{theirs.get()};
  sources.insert(sources.end(), listener_fds.begin(), listener_fds.end());
  if (options.dns_socket >= 0) sources.push_back(options.dns_socket);
  if (sources.size() > max_exec_descriptors) {
    close_given();
    return make_error(error_code::usage_error, "network broker: more than six listeners");
  }
  std::string program = "cordon-supervisor";
  std::string argument = broker_argument;
  char* const argv[] = {program.data(), argument.data(), nullptr};
  const std::string quoted_path = json(path).dump();
  const std::string failed =
      "{\"failed\":\"execve of " + quoted_path.substr(1, quoted_path.size() - 2) + " failed with errno ";
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    close_given();
    return make_error(error_code::launch_failed, "network broker: fork", {}, err);
  }
  if (child == 0) exec_broker(parent, sources, path.c_str(), argv, failed);
  close_given();  // the broker has them now
  theirs.reset();
  s->pid = child;
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
  if (pidfd < 0) {
    const int err = errno;
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return make_error(error_code::launch_failed, "network broker: pidfd_open", {}, err);
  }
  s->pidfd.reset(pidfd);
  const bool sent = s->send_line(options_line);
  const auto ready = sent ? s->next_line(steady::now() + std::chrono::seconds(10)) : std::nullopt;
  const json first = ready ? json::parse(*ready, nullptr, false) : json();
  if (!first.is_object() || !first.contains("ready")) {
    ::syscall(SYS_pidfd_send_signal, s->pidfd.get(), SIGKILL, nullptr, 0);
    ::waitpid(child, nullptr, 0);
    std::string why = first.is_object() && first.contains("failed")
                          ? first["failed"].get<std::string>()
                          : std::string(ready ? "an unexpected first message" : "no answer within 10 s");
    return make_error(error_code::launch_failed, "network broker: " + why);
  }
  if (destinations) {
    std::weak_ptr<state> weak = s;
    destinations->set_forward([weak](const std::string& source, const broker::original_destination* d) {
      const auto link = weak.lock();
      if (!link) return false;
      return d != nullptr ? link->send({{"put", source}, {"address", d->address}, {"port", d->port}})
                          : link->send({{"drop", source}});
    });
  }
  try {
    s->thread = std::thread([raw = s.get()] { serve_link(*raw); });
  } catch (const std::system_error& e) {
    ::syscall(SYS_pidfd_send_signal, s->pidfd.get(), SIGKILL, nullptr, 0);
    ::waitpid(child, nullptr, 0);
    return make_error(error_code::launch_failed, std::string("network broker: its thread: ") + e.what());
  }
  return std::unique_ptr<broker_process>(new broker_process(std::move(s)));
}

void broker_process::stop() {
  if (!state_) return;
  state& s = *state_;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (s.stopped) return;
    s.stopped = true;
  }
  (void)s.send({{"stop", true}});
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    if (!s.changed.wait_for(lock, std::chrono::seconds(10), [&s] { return s.ended; })) {
      ::syscall(SYS_pidfd_send_signal, s.pidfd.get(), SIGKILL, nullptr, 0);  // then the channel closes
    }
  }
  if (s.thread.joinable()) s.thread.join();
  ::waitpid(s.pid, nullptr, 0);
}

network_evidence broker_process::evidence() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  network_evidence e = state_->stream->evidence();
  e.listeners = state_->listeners;
  e.memory_budget_bytes = state_->memory_budget_bytes;
  return e;
}

int broker_process::probe_open(const std::string& path) {
  state& s = *state_;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    s.probe_errno.reset();
  }
  if (!s.send({{"probe_open", path}})) return -1;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.changed.wait_for(lock, std::chrono::seconds(5), [&s] { return s.probe_errno.has_value(); })) return -1;
  return *s.probe_errno;
}

}  // namespace cordon::linux_impl

namespace cordon::linux_impl {

bool is_broker_invocation(int argc, char** argv) {
  return argc == 2 && std::strcmp(argv[1], broker_argument) == 0;
}

int serve_as_broker() {
  const int channel = exec_channel_fd;
  auto say = [channel](const std::string& why) {
    const std::string line = json{{"failed", why}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    (void)::send(channel, line.data(), line.size(), MSG_NOSIGNAL);
  };
  std::optional<std::string> line = read_options_line(channel);
  if (!line) {
    say("its options did not come, or came with more after them");
    return 1;
  }
  const json encoded = json::parse(*line, nullptr, false);
  ::explicit_bzero(line->data(), line->size());
  auto decoded = broker::broker_options_from_json(encoded);
  if (!decoded) {
    say(decoded.error_value().describe());
    return 1;
  }
  broker::broker_options options = std::move(decoded->options);
  std::vector<int> listeners;
  for (std::size_t i = 0; i < decoded->listener_count; ++i) listeners.push_back(exec_first_listener_fd + static_cast<int>(i));
  if (decoded->dns) options.dns_socket = exec_first_listener_fd + static_cast<int>(decoded->listener_count);
  for (int fd : listeners) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (options.dns_socket >= 0) ::fcntl(options.dns_socket, F_SETFD, FD_CLOEXEC);
  ::fcntl(channel, F_SETFD, FD_CLOEXEC);
  const rlim_t max_files = broker_max_files(options.limits.max_connections);
  return broker::serve_over_channel(std::move(options), std::move(listeners), channel,
                                    [max_files] { return confine_broker_process(max_files); });
}

}  // namespace cordon::linux_impl

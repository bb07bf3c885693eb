// broker_process.cpp — see broker_process.h. The supervisor's side of the
// channel: the protocol is listed in src/broker/broker_link.cpp.
#include "linux/broker_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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
#include "posix/poll_timeout.h"
#include "posix/socket_io.h"
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
  bool spawned = false;  // it read its options and answered (spawn(), serve())
  bool serving = false;  // serve() succeeded: the link thread runs

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
        timeout = poll_timeout_until(*deadline);
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

std::string dns_upstream() {
  const char* configured = std::getenv("CORDON_DNS_UPSTREAM");
  return configured != nullptr && *configured != '\0' ? std::string(configured) : broker::system_dns_upstream();
}

std::size_t broker_connection_budget(std::size_t wanted) {
  constexpr rlim_t kReserve = 64;
  constexpr rlim_t kPerConnection = 6;
  struct rlimit files {};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_max == RLIM_INFINITY) return wanted;
  const rlim_t budget = files.rlim_max > kReserve ? (files.rlim_max - kReserve) / kPerConnection : 1;
  return std::max<std::size_t>(1, std::min<std::size_t>(wanted, static_cast<std::size_t>(budget)));
}

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
// supervisor may have other threads). `channel` lands on 3; every other
// descriptor is closed; the environment is empty (the host's never reaches
// the broker: docs/network.md, "The broker's process"). `failed` is the
// channel line written when execve fails, up to its errno's digits.
[[noreturn]] void exec_broker(pid_t parent, int channel, const char* path, char* const argv[],
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
  if (channel != broker_channel_fd && ::dup2(channel, broker_channel_fd) < 0) ::_exit(1);
  if (channel == broker_channel_fd) ::fcntl(channel, F_SETFD, 0);  // dup2 clears FD_CLOEXEC; this did not dup2
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null_fd >= 0) ::dup2(null_fd, fd);
  }
  // Every other descriptor of the supervisor (the sandbox's pidfd, the
  // seccomp listener, its pipes) is closed.
  ::syscall(SYS_close_range, static_cast<unsigned int>(broker_channel_fd + 1), ~0U, 0U);
  char* const no_environment[] = {nullptr};
  ::execve(path, argv, no_environment);
  char line[512];
  const std::size_t prefix = std::min<std::size_t>(failed.size(), sizeof line - 24);
  std::memcpy(line, failed.data(), prefix);
  char* end = put_decimal(line + prefix, errno);
  *end++ = '"';
  *end++ = '}';
  *end++ = '\n';
  // Nothing is left to do if the parent cannot be told: (void) alone does not
  // silence glibc's warn_unused_result under _FORTIFY_SOURCE (Debian's flags).
  [[maybe_unused]] const ssize_t told = ::write(broker_channel_fd, line, static_cast<std::size_t>(end - line));
  ::_exit(127);
}

// What spawn() executes when set (use_broker_program).
std::string& broker_program() {
  static std::string program;
  return program;
}

}  // namespace

void use_broker_program(std::string path) { broker_program() = std::move(path); }

broker_process::broker_process(std::shared_ptr<state> s) : state_(std::move(s)) {}

broker_process::~broker_process() { stop(); }

pid_t broker_process::pid() const { return state_->pid; }

bool broker_process::served() const { return state_->serving; }

namespace {

// The broker's next message, which must hold `key`: {"spawned": true} once
// it has read its options (with "authority", the CA certificate as PEM,
// when it made one), {"ready": true} once it serves; or {"failed": why}.
// `what` names the step for the error.
result<json> await_message(broker_process::state& s, const char* key, const char* what) {
  const auto line = s.next_line(steady::now() + std::chrono::seconds(10));
  const json m = line ? json::parse(*line, nullptr, false) : json();
  if (m.is_object() && m.contains(key)) return m;
  std::string why = m.is_object() && m.contains("failed") && m["failed"].is_string()
                        ? m["failed"].get<std::string>()
                        : std::string(line ? "an unexpected message" : "no answer within 10 s") + " " + what;
  return make_error(error_code::launch_failed, "network broker: " + why);
}

}  // namespace

result<std::unique_ptr<broker_process>> broker_process::spawn(broker::broker_options options,
                                                               std::string* certificate_pem) {
  auto encoded = broker::broker_options_to_json(options);
  if (!encoded) return std::move(encoded).error_value();
  std::string options_line = encoded->dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  encoded->clear();
  // Its credentials are secret: this copy is wiped.
  struct wiped {
    std::string& text;
    ~wiped() { ::explicit_bzero(text.data(), text.size()); }
  } wipe{options_line};
  // Everything the child needs is made before the fork: between fork and
  // execve it may only make async-signal-safe calls.
  const std::string path = broker_program().empty() ? posix::supervisor_path({}) : broker_program();
  if (::access(path.c_str(), X_OK) != 0) {
    const int err = errno;  // before the message's strings are built
    return make_error(error_code::launch_failed,
                      "network broker: cannot execute the supervisor helper " + path +
                          " (install cordon, build the cordon_supervisor target, or set CORDON_SUPERVISOR)",
                      {}, err);
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    const int err = errno;
    return make_error(error_code::launch_failed, "network broker: socketpair", {}, err);
  }
  auto s = std::make_shared<state>();
  s->channel.reset(pair[0]);
  unique_fd theirs(pair[1]);
  s->listeners = options.listener_names;
  s->memory_budget_bytes = options.limits.memory_budget_bytes;
  s->stream.emplace(options.limits.max_connections);
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
    return make_error(error_code::launch_failed, "network broker: fork", {}, err);
  }
  if (child == 0) exec_broker(parent, theirs.get(), path.c_str(), argv, failed);
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
  std::unique_ptr<broker_process> broker(new broker_process(s));
  if (!s->send_line(options_line)) {
    return make_error(error_code::launch_failed, "network broker: it did not take its options");
  }
  // Without an authority to make, its answer is awaited in serve(), while
  // the sandbox is being set up.
  if (options.tls.make_authority) {
    auto spawned = await_message(*s, "spawned", "to its options");
    if (!spawned) return std::move(spawned).error_value();
    s->spawned = true;
    const json& authority = (*spawned)["authority"];
    if (!authority.is_string()) return make_error(error_code::launch_failed, "network broker: it made no authority");
    if (certificate_pem != nullptr) *certificate_pem = authority.get<std::string>();
  }
  return broker;
}

result<void> broker_process::serve(std::vector<int> listener_fds, int dns_socket,
                                   std::shared_ptr<broker::destination_table> destinations) {
  std::vector<unique_fd> given;
  for (int fd : listener_fds) given.emplace_back(fd);
  unique_fd dns(dns_socket);
  state& s = *state_;
  if (listener_fds.empty() || listener_fds.size() > 3) {
    return make_error(error_code::usage_error, "network broker: one to three listeners");
  }
  if (!s.spawned) {
    auto spawned = await_message(s, "spawned", "to its options");
    if (!spawned) return std::move(spawned).error_value();
    s.spawned = true;
  }
  std::vector<int> fds = listener_fds;
  if (dns) fds.push_back(dns.get());
  const std::string line = json{{"listeners", listener_fds.size()}, {"dns", static_cast<bool>(dns)}}.dump() + "\n";
  {
    const std::lock_guard<std::mutex> lock(s.write_mutex);
    if (!send_with_descriptors(s.channel.get(), line, fds.data(), fds.size())) {
      const int err = errno;
      return make_error(error_code::launch_failed, "network broker: handing over its listeners", {}, err);
    }
  }
  given.clear();  // the broker has them now
  dns.reset();
  auto ready = await_message(s, "ready", "to its listeners");
  if (!ready) return std::move(ready).error_value();
  if (destinations) {
    std::weak_ptr<state> weak = state_;
    destinations->set_forward([weak](const std::string& source, const broker::original_destination* d) {
      const auto link = weak.lock();
      if (!link) return false;
      return d != nullptr ? link->send({{"put", source}, {"address", d->address}, {"port", d->port}})
                          : link->send({{"drop", source}});
    });
  }
  try {
    s.thread = std::thread([raw = state_.get()] { serve_link(*raw); });
  } catch (const std::system_error& e) {
    return make_error(error_code::launch_failed, std::string("network broker: its thread: ") + e.what());
  }
  s.serving = true;
  return ok;
}

result<std::unique_ptr<broker_process>> broker_process::start(broker::broker_options options,
                                                               std::vector<int> listener_fds) {
  const int dns = options.dns_socket;
  auto destinations = options.destinations;
  auto spawned = spawn(std::move(options));
  if (!spawned) {
    for (int fd : listener_fds) ::close(fd);
    if (dns >= 0) ::close(dns);
    return std::move(spawned).error_value();
  }
  if (auto served = (*spawned)->serve(std::move(listener_fds), dns, std::move(destinations)); !served) {
    return std::move(served).error_value();
  }
  return std::move(*spawned);
}

void broker_process::stop() {
  if (!state_) return;
  state& s = *state_;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (s.stopped) return;
    s.stopped = true;
  }
  if (!s.serving) {  // spawned, never served: it has decided nothing
    ::syscall(SYS_pidfd_send_signal, s.pidfd.get(), SIGKILL, nullptr, 0);
    ::waitpid(s.pid, nullptr, 0);
    return;
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

std::size_t broker_process::open_connections() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stream->open_count();
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


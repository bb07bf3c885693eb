// src/broker/broker_link.cpp — the confined broker's side of its channel to
// the supervisor (broker_link.h). One JSON object per line each way:
//   supervisor -> broker: {"put": source, "address": a, "port": p} and
//     {"drop": source} (transparent destinations, destination_table.h),
//     {"resolved": id, "addresses": [...], "problem": "..."}, {"stop": true},
//     {"probe_open": path} (tests: show that no file can be opened);
//   broker -> supervisor: {"ready": true} or {"failed": why},
//     {"resolve": id, "host": h, "port": p}, {"probe_errno": e},
//     {"open": id, "connection": {...}} (a connection still open, when it
//     is decided and when its action changes), {"entry": id, "connection":
//     {...}} (an entry, when it is complete; id 0: never reported open),
//     {"evidence": {...}} last, after the stop drained everything: what was
//     not streamed (no entry, in this broker), the memory peak, the
//     injections (evidence_stream.h is the supervisor's side).
#include "broker/broker_link.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio.hpp>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "broker/core.h"
#include "broker/serve.h"
#include "core/outcome_json.h"

namespace cordon::broker {
namespace {

using json = nlohmann::json;
using namespace detail;

// Writes all of `data` to the blocking descriptor `fd`; false on failure.
bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      (void)::poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

class channel_link {
 public:
  channel_link(core& c, int fd) : core_(c), fd_(fd), wait_(c.io), report_timer_(c.io) {
    std::error_code ec;
    wait_.assign(stream(AF_UNIX, 0), fd, ec);
    if (!ec) wait_.non_blocking(true, ec);
  }

  void start() { wait_readable(); }

  // Reads everything the supervisor sent so far (destination_table.h: an
  // entry is sent before its connect, so it is here before its accept).
  void refill() { read_available(); }

  void resolve(const std::string& host, int port, broker_hooks::resolved_callback done) {
    const std::uint64_t id = ++last_id_;
    pending_.emplace(id, std::move(done));
    send({{"resolve", id}, {"host", host}, {"port", port}});
  }

  // An entry of the evidence, streamed: `open` (a connection still open,
  // as it stands) or its final entry. Sent within evidence_report_delay, together
  // with the others of that moment: a supervisor woken for each of them
  // would cost every connection's latency on a busy host. An open report
  // still waiting when its final entry comes is dropped (the entry says more).
  void report(bool open, std::uint64_t id, network_connection connection) {
    if (!open && id != 0) {
      std::erase_if(reports_, [id](const pending_report& r) { return r.open && r.id == id; });
    }
    reports_.push_back({open, id, std::move(connection)});
    if (reports_.size() == 1) {
      report_timer_.expires_after(evidence_report_delay);
      report_timer_.async_wait([this](std::error_code ec) {
        if (!ec) send_reports();
      });
    }
  }

  // What waits to be sent (reports, the output not yet written), bytes:
  // counted in the broker's memory peak and budget (core.h).
  std::uint64_t held_bytes() const {
    std::uint64_t held = in_.capacity() + out_.capacity();
    for (const auto& r : reports_) held += connection_held_bytes(r.connection);
    return held;
  }

  // After run_loop(): the complete evidence, blocking.
  bool finish(const network_evidence& evidence) {
    pending_.clear();
    send_reports();
    std::error_code ec;
    wait_.non_blocking(false, ec);
    const std::string rest = out_.substr(out_offset_);
    return write_all(fd_, rest) && write_all(fd_, line(json{{"evidence", cordon::core::evidence_to_json(evidence)}}));
  }

 private:
  void send_reports() {
    report_timer_.cancel();
    std::string lines;
    for (const auto& r : reports_) {
      lines += line({{r.open ? "open" : "entry", r.id}, {"connection", cordon::core::connection_to_json(r.connection)}});
    }
    reports_.clear();
    out_ += lines;
    flush();
  }

  void wait_readable() {
    wait_.async_wait(stream::socket::wait_read, [this](std::error_code ec) {
      if (ec || stopped_) return;
      if (!read_available()) return stop();
      if (!stopped_) wait_readable();  // a stop request may have come with what was read
    });
  }

  // False at end of stream or an error: the supervisor is gone.
  bool read_available() {
    char chunk[16384];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n > 0) {
        in_.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      const bool open = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      std::size_t start = 0;
      for (std::size_t end; (end = in_.find('\n', start)) != std::string::npos; start = end + 1) {
        handle(in_.substr(start, end - start));
      }
      in_.erase(0, start);
      return open;
    }
  }

  void handle(const std::string& line) {
    const json m = json::parse(line, nullptr, false);
    if (!m.is_object()) return;
    if (m.contains("put")) {
      core_.options.destinations->put(m["put"].get<std::string>(),
                                      {m.value("address", std::string()), m.value("port", 0)});
    } else if (m.contains("drop")) {
      core_.options.destinations->drop(m["drop"].get<std::string>());
    } else if (m.contains("resolved")) {
      auto it = pending_.find(m["resolved"].get<std::uint64_t>());
      if (it == pending_.end()) return;
      auto done = std::move(it->second);
      pending_.erase(it);
      std::vector<std::string> addresses = m.value("addresses", std::vector<std::string>{});
      std::string problem = m.value("problem", std::string());
      asio::post(core_.io, [done = std::move(done), addresses = std::move(addresses),
                            problem = std::move(problem)]() mutable { done(std::move(addresses), std::move(problem)); });
    } else if (m.contains("probe_open")) {
      const int fd = ::open(m["probe_open"].get<std::string>().c_str(), O_RDONLY | O_CLOEXEC);
      const int err = fd < 0 ? errno : 0;
      if (fd >= 0) ::close(fd);
      send({{"probe_errno", err}});
    } else if (m.contains("stop")) {
      stop();
    }
  }

  void stop() {
    if (stopped_) return;
    stopped_ = true;
    std::error_code ec;
    wait_.cancel(ec);
    asio::post(core_.io, [this] { begin_stop(core_); });
  }

  // Queued and written as the socket takes it: the broker never blocks on
  // its supervisor.
  void send(const json& message) {
    out_ += line(message);
    flush();
  }
  // One message as a line. Text the broker records is printable() already;
  // a byte that is not UTF-8 anyway is replaced rather than thrown on.
  static std::string line(const json& message) {
    return message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }
  void flush() {
    while (out_offset_ < out_.size()) {
      const ssize_t n = ::send(fd_, out_.data() + out_offset_, out_.size() - out_offset_, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        out_offset_ += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !writing_) {
        writing_ = true;
        wait_.async_wait(stream::socket::wait_write, [this](std::error_code ec) {
          writing_ = false;
          if (!ec) flush();
        });
      }
      return;
    }
    out_.clear();
    out_offset_ = 0;
  }

  core& core_;
  int fd_;
  stream::socket wait_;  // owns fd_; used for readiness only
  bool stopped_ = false;
  bool writing_ = false;
  std::string in_, out_;
  std::size_t out_offset_ = 0;
  std::uint64_t last_id_ = 0;
  struct pending_report {
    bool open;
    std::uint64_t id;
    network_connection connection;
  };
  std::vector<pending_report> reports_;  // report(): not sent yet
  asio::steady_timer report_timer_;
  std::map<std::uint64_t, broker_hooks::resolved_callback> pending_;
};

}  // namespace

int serve_over_channel(broker_options options, std::vector<int> listener_fds, int channel,
                       const std::function<std::string()>& confine) {
  auto say = [channel](const json& m) { (void)write_all(channel, m.dump() + "\n"); };
  options.destinations = std::make_shared<destination_table>();  // filled from the channel
  channel_link* link = nullptr;
  options.hooks.resolve_async = [&link](const std::string& host, int port, broker_hooks::resolved_callback done) {
    link->resolve(host, port, std::move(done));
  };
  auto prepared = prepare_core(std::move(options), std::move(listener_fds));
  if (!prepared) {
    say({{"failed", prepared.error_value().describe()}});
    return 1;
  }
  core& c = **prepared;
  channel_link channel_state(c, channel);
  link = &channel_state;
  c.options.destinations->set_refill([&channel_state] { channel_state.refill(); });
  // Each entry goes to the supervisor as soon as it is complete, and a
  // connection still open when it is decided: a broker that dies leaves
  // every decision it made (docs/network.md, "The broker's process").
  c.on_recorded = [&channel_state](std::uint64_t id, network_connection entry) {
    channel_state.report(false, id, std::move(entry));
  };
  c.on_decided = [&channel_state](std::uint64_t id, network_connection entry) {
    channel_state.report(true, id, std::move(entry));
  };
  c.link_held_bytes = [&channel_state] { return channel_state.held_bytes(); };
  if (const std::string problem = confine(); !problem.empty()) {
    say({{"failed", "cannot confine the network broker: " + problem}});
    return 1;
  }
  say({{"ready", true}});
  channel_state.start();
  run_loop(c);
  const bool sent = channel_state.finish(c.evidence);
  c.on_recorded = nullptr;  // the channel is done: nothing more can be streamed
  c.on_decided = nullptr;
  c.link_held_bytes = nullptr;
  return sent ? 0 : 1;
}

}  // namespace cordon::broker

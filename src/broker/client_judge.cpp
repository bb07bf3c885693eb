// src/broker/client_judge.cpp — the client's stream on a connection allowed
// for a name, judged request by request (client_judge.h).
#include "broker/client_judge.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <utility>

#include "broker/decision.h"
#include "broker/first_bytes.h"
#include "cordon/host_rules.h"

namespace cordon::broker {
namespace {

// A chunk-size line (RFC 9112 §7.1) or a trailer line longer than this is
// not read further.
constexpr std::size_t max_chunk_line = 4096;

// The size of a chunk-size line (without its line end), or -1.
std::int64_t chunk_size_of(std::string_view line) {
  std::size_t i = 0;
  std::uint64_t size = 0;
  while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) {
    if (i == 15) return -1;  // more than 15 hex digits: no body is that large
    const char c = line[i];
    size = size * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    ++i;
  }
  if (i == 0) return -1;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;  // BWS before an extension
  if (i < line.size() && line[i] != ';') return -1;
  return static_cast<std::int64_t>(size);
}

}  // namespace

client_judge::client_judge(std::string host, bool host_required, std::size_t max_head_bytes)
    : host_(std::move(host)), host_required_(host_required), max_head_bytes_(max_head_bytes) {}

judge_verdict client_judge::refuse(std::string reason, bool malformed) {
  state_ = state::refused;
  reason_ = std::move(reason);
  malformed_ = malformed;
  std::string().swap(held_);
  return judge_verdict::refuse;
}

bool client_judge::names_the_host(const std::string& name) const {
  const auto named = normalize_destination_host(name);
  return named && *named == host_;
}

std::size_t client_judge::pass(std::size_t at, std::uint64_t n, std::string& out) {
  const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, held_.size() - at));
  out.append(held_, at, k);
  return k;
}

judge_verdict client_judge::identify(std::string& out) {
  const bool tls_like = static_cast<unsigned char>(held_[0]) >= 0x80 || (held_[0] >= 0x14 && held_[0] <= 0x17);
  // A first line longer than a request head may be, still without its end:
  // another protocol (servers refuse request lines that long: nginx and
  // Apache at 8 KiB by default).
  const bool overlong_line = !tls_like && held_.size() > max_head_bytes_ && held_.find('\n') == std::string::npos;
  const auto seen = overlong_line ? first_bytes_result{first_bytes_status::other, {}, {}}
                                  : classify_first_bytes(held_, max_head_bytes_);
  switch (seen.status) {
    case first_bytes_status::incomplete:
      if (tls_like) return judge_verdict::more;  // TLS (or SSL 2.0) being assembled: all of it is held
      return first_line(out);
    case first_bytes_status::malformed:
      return refuse(std::string(tls_like ? "unreadable TLS" : "unreadable HTTP request") + " in a tunnel to " + host_ +
                        ": " + seen.problem,
                    true);
    case first_bytes_status::other:
      break;
    case first_bytes_status::tls:
      if (seen.name.empty()) return refuse("TLS without a server name (SNI) in a tunnel to " + host_, false);
      if (!names_the_host(seen.name)) {
        return refuse("TLS server name " + printable(seen.name) + " does not match the tunnel's host " + host_ +
                          " (domain fronting)",
                      false);
      }
      break;
    case first_bytes_status::http:
      state_ = state::head;
      return judge_verdict::relay;  // not a verdict: the caller reads the heads
  }
  state_ = state::passing;
  out.append(held_, forwarded_);
  std::string().swap(held_);
  return judge_verdict::pass_rest;
}

// Bytes that may still become a request line: until the line ends, they go
// on as they come (no server acts on a line it has not seen the end of, and
// a protocol that sends a word and waits is not held); from its end on, a
// request head is held until it is judged.
judge_verdict client_judge::first_line(std::string& out) {
  std::size_t start = 0;
  while (start < held_.size() && (held_[start] == '\r' || held_[start] == '\n')) ++start;
  if (held_.find('\n', start) != std::string::npos) {
    state_ = state::head;  // the request line is complete, its fields are not
    return judge_verdict::more;
  }
  if (forwarded_ == held_.size()) return judge_verdict::more;
  out.append(held_, forwarded_);
  forwarded_ = held_.size();
  return judge_verdict::relay;
}

// One request head at the start of held_ (after what was passed): judged,
// then passed with the state for its body set.
judge_verdict client_judge::head(std::string& out) {
  const auto h = scan_request_head(held_, max_head_bytes_);
  switch (h.status) {
    case first_bytes_status::incomplete:
      return judge_verdict::more;
    case first_bytes_status::malformed:
      return refuse("unreadable HTTP request in a tunnel to " + host_ + ": " + h.problem, true);
    case first_bytes_status::other:
    case first_bytes_status::tls:
      return refuse("bytes that are not an HTTP request head after request " + std::to_string(requests_) +
                        " in a tunnel to " + host_,
                    true);
    case first_bytes_status::http:
      break;
  }
  if (h.method == "CONNECT") return refuse("HTTP CONNECT inside a tunnel to " + host_, false);
  if (h.upgrade) return refuse("HTTP Upgrade inside a tunnel to " + host_ + " (what follows could not be judged)", false);
  if (h.host.empty() && host_required_) {
    return refuse("HTTP request without a host in a tunnel to " + host_ + " (a server would pick one)", false);
  }
  if (!h.host.empty() && !names_the_host(h.host)) {
    return refuse("HTTP request for " + printable(h.host) + " does not match the tunnel's host " + host_ +
                      " (domain fronting)",
                  false);
  }
  ++requests_;
  out.append(held_, forwarded_, h.length - forwarded_);  // the first line's start may have gone already
  held_.erase(0, h.length);
  forwarded_ = 0;
  remaining_ = h.content_length;
  state_ = h.chunked ? state::chunk_size : h.content_length > 0 ? state::body : state::head;
  return judge_verdict::relay;
}

judge_verdict client_judge::feed(std::string_view in, std::string& out) {
  if (state_ == state::refused) return judge_verdict::refuse;
  if (state_ == state::passing) {
    out.append(in);
    return judge_verdict::pass_rest;
  }
  held_.append(in);
  const std::size_t before = out.size();
  if (state_ == state::identify) {
    const auto v = identify(out);
    if (state_ != state::head) return v;
  }
  std::size_t at = 0;  // bytes of held_ passed by the body states below
  while (true) {
    if (state_ == state::head) {
      held_.erase(0, at);
      at = 0;
      const auto v = head(out);
      if (v != judge_verdict::relay) {
        if (v == judge_verdict::more) break;
        return v;
      }
      continue;
    }
    if (at == held_.size()) break;
    if (state_ == state::body || state_ == state::chunk_data) {
      const std::size_t k = pass(at, remaining_, out);
      at += k;
      remaining_ -= k;
      if (remaining_ == 0) state_ = state_ == state::body ? state::head : state::chunk_end;
      continue;
    }
    if (state_ == state::chunk_end) {
      if (held_[at] == '\n') {
        at += pass(at, 1, out);
      } else if (held_[at] == '\r') {
        if (held_.size() - at < 2) break;
        if (held_[at + 1] != '\n') return refuse("a chunk not followed by its line end", true);
        at += pass(at, 2, out);
      } else {
        return refuse("a chunk longer than its size", true);
      }
      state_ = state::chunk_size;
      continue;
    }
    // chunk_size, trailers: one line
    const auto lf = held_.find('\n', at);
    if (lf == std::string::npos) {
      if (held_.size() - at > max_chunk_line) return refuse("a chunk-size or trailer line over 4096 bytes", true);
      break;
    }
    std::string_view line(held_.data() + at, lf - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    at += pass(at, lf + 1 - at, out);
    if (state_ == state::trailers) {
      if (line.empty()) state_ = state::head;
      continue;
    }
    const auto size = chunk_size_of(line);
    if (size < 0) return refuse("an unreadable chunk size", true);
    remaining_ = static_cast<std::uint64_t>(size);
    state_ = size == 0 ? state::trailers : state::chunk_data;
  }
  held_.erase(0, at);
  if (held_.capacity() > 2 * max_head_bytes_ && held_.size() < max_head_bytes_) held_.shrink_to_fit();
  return out.size() > before ? judge_verdict::relay : judge_verdict::more;
}

}  // namespace cordon::broker

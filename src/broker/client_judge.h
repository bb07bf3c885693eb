// src/broker/client_judge.h — what a client sends on a connection allowed
// for a name, judged before the destination gets it (docs/network.md, "TLS
// in tunnels"). A pure state machine over the client's byte stream, no
// sockets: the session feeds it what it reads and sends on only what it
// hands back.
//
// - TLS: records are held until the ClientHello is complete (however many
//   records, empty ones included, up to max_client_hello_bytes); its server
//   name must be the connection's host. Then the rest passes unread.
// - HTTP/1: every request head on the connection is read as a lenient server
//   reads it (first_bytes.h) and must ask for the connection's host; its body
//   is counted through (Content-Length, chunked) to find the next head.
//   CONNECT and Upgrade are refused: what follows them is not HTTP the
//   broker could keep reading, and a server that ignores them would read
//   the next request unjudged.
//   Bytes of a first line that has not ended yet go on as they come (no
//   server acts on a line before its end); from its end on, a request head
//   is held until it is judged.
// - Anything else (another TCP protocol) passes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon::broker {

enum class judge_verdict {
  more,       // nothing (more) may go yet: read on
  relay,      // `out` got bytes that may go; keep feeding what follows
  pass_rest,  // `out` got bytes that may go, and everything after passes unread
  refuse,     // close the connection: reason() and malformed() say why
};

class client_judge {
 public:
  // `host`: the connection's host, normalized. `host_required`: an HTTP
  // request without a host (no Host field, HTTP/1.0 or 0.9) is refused (a
  // server would pick its default site for it). `max_head_bytes`: an HTTP
  // request head's bound.
  client_judge(std::string host, bool host_required, std::size_t max_head_bytes);

  // Takes the client's next bytes `in`; appends to `out` those that may go
  // to the destination now (held ones included, in order).
  judge_verdict feed(std::string_view in, std::string& out);

  const std::string& reason() const { return reason_; }
  bool malformed() const { return malformed_; }  // refused as unreadable, not for what it names
  std::size_t held_bytes() const { return held_.capacity(); }
  std::uint64_t requests() const { return requests_; }  // HTTP request heads judged
  bool http() const { return state_ != state::identify && state_ != state::passing && state_ != state::refused; }

 private:
  enum class state { identify, head, body, chunk_size, chunk_data, chunk_end, trailers, passing, refused };

  judge_verdict identify(std::string& out);
  judge_verdict first_line(std::string& out);
  judge_verdict head(std::string& out);
  judge_verdict refuse(std::string reason, bool malformed);
  bool names_the_host(const std::string& name) const;
  // Moves up to `n` bytes of held_ from `at` to `out`.
  std::size_t pass(std::size_t at, std::uint64_t n, std::string& out);

  std::string host_;
  bool host_required_;
  std::size_t max_head_bytes_;
  state state_ = state::identify;
  std::string held_;
  std::size_t forwarded_ = 0;    // of held_, bytes of an incomplete first line already let go
  std::uint64_t remaining_ = 0;  // body / chunk data bytes still to pass
  std::uint64_t requests_ = 0;
  std::string reason_;
  bool malformed_ = false;
};

}  // namespace cordon::broker

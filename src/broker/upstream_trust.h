// src/broker/upstream_trust.h — the authorities a terminated connection's
// destination is checked against (docs/tls.md), read before the broker is
// confined and parsed when the first terminated connection needs them.
//
// The system bundle holds about 140 certificates; parsing them costs about
// 20 ms of CPU. Made before confinement, that parse was on every terminated
// run's critical path, although most commands end before they open a
// terminated connection, or open none. So the file is read whole before
// confinement (the confined broker can open no file: docs/network.md) and
// parsed from memory the first time a destination's certificate is checked.
// Private to src/broker.
#pragma once

#include <memory>
#include <string>

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace cordon::broker {

// What every upstream client context has, whoever makes it: peer
// verification, TLS 1.2 or later, ALPN http/1.1.
void set_upstream_client_options(ssl_ctx_st* ctx);

class upstream_trust {
 public:
  // Reads `ca_file` (empty: OpenSSL's default certificate file, the system
  // bundle) whole and makes the client context it will fill: peer
  // verification, TLS 1.2+, ALPN http/1.1. Null when the file cannot be
  // read, holds no PEM certificate, or OpenSSL cannot make a context; `why`
  // then says so, naming the file.
  static std::shared_ptr<upstream_trust> read(const std::string& ca_file, std::string& why);

  ~upstream_trust();
  upstream_trust(const upstream_trust&) = delete;
  upstream_trust& operator=(const upstream_trust&) = delete;

  // The context with every certificate of the file in its store, parsed on
  // the first call (not thread-safe: the broker's one thread calls it).
  // Null when the file's text holds no certificate OpenSSL can parse; `why`
  // then says so, on this and every later call.
  ssl_ctx_st* context(std::string& why);

  // Whether context() has parsed the file (tests).
  bool parsed() const { return parsed_; }

 private:
  upstream_trust() = default;
  ssl_ctx_st* ctx_ = nullptr;
  std::string file_;
  std::string pem_;  // released once parsed
  bool parsed_ = false;
  std::string failure_;
};

}  // namespace cordon::broker

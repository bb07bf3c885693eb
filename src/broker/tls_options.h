// src/broker/tls_options.h — what the broker needs for `tls: "terminate"`
// rules (docs/tls.md): the run's authority, where upstream certificates
// are checked, and the credentials it injects.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace cordon::broker {

class tls_authority;
class upstream_trust;

// ALPN of a terminated connection: HTTP/1.1 only, both ways, the protocol
// list as OpenSSL takes it (docs/tls.md: no HTTP/2).
inline constexpr unsigned char alpn_http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

// A credential read by the supervisor before the run: the header `name`
// gets `value` (the policy's format with the secret in it) on every request
// to `host` over a terminated connection.
struct tls_credential {
  std::string host;
  std::string header;
  std::string value;
};

struct tls_options {
  // Null: the plan has no terminated rule; a connection that meets one is
  // refused (fail closed).
  std::shared_ptr<tls_authority> authority;
  // PEM file of the authorities upstream certificates are checked against;
  // empty: OpenSSL's default verify paths (the system trust store). Tests
  // name their own test CA here (cordon run: CORDON_UPSTREAM_CA_FILE).
  std::string upstream_ca_file;
  // The upstream trust store, read before confinement and parsed at the
  // first terminated connection (upstream_trust.h): the confined broker can
  // open no file (docs/network.md). Null: a context is made per connection
  // from the files (the in-thread broker and the unit tests).
  std::shared_ptr<upstream_trust> upstream;
  std::vector<tls_credential> credentials;
  // For the broker's own process (broker_options_json.h), which makes them
  // itself: the run's authority (the supervisor gets its certificate back)
  // and the upstream trust store's read, before it is confined. The supervisor then
  // links no TLS library at all.
  bool make_authority = false;
  bool make_upstream = false;
};

}  // namespace cordon::broker

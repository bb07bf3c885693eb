// src/broker/tls_options.h — what the broker needs for `tls: "terminate"`
// rules (docs/tls.md): the run's authority, where upstream certificates
// are checked, and the credentials it injects.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace cordon::broker {

class tls_authority;

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
  std::vector<tls_credential> credentials;
};

}  // namespace cordon::broker

// broker_endpoint.h — where a command in a filtered-network sandbox finds the
// network broker (docs/network.md); in core because core's environment and
// evidence code names them as well as the broker and the Linux backend.
// Fixed: each sandbox has a network namespace and a /dev of its own, so
// nothing else can hold these.
#pragma once

#include <cstdint>

namespace cordon::broker {

inline constexpr std::uint16_t broker_port = 3128;                        // TCP on 127.0.0.1 inside
inline constexpr const char* broker_socket_path = "/dev/cordon-proxy.sock";  // unix stream socket inside
// TCP on [::] (or 127.0.0.1) inside: the command's own connections, routed
// here by the supervisor (connect_redirect.h), never dialed by the command.
inline constexpr std::uint16_t broker_transparent_port = 3129;
// UDP on 127.0.0.1 inside: the sandbox's resolver (its /etc/resolv.conf).
inline constexpr std::uint16_t broker_dns_port = 53;
// With a tls "terminate" rule (docs/tls.md): a read-only file inside with
// the host's system bundle and the run's CA certificate, and the variables
// that point tools at it (SSL_CERT_FILE: OpenSSL, Python's ssl, Go, curl
// built on OpenSSL; NODE_EXTRA_CA_CERTS: Node, added to its own store;
// REQUESTS_CA_BUNDLE: Python requests; CURL_CA_BUNDLE: curl; GIT_SSL_CAINFO:
// git; PIP_CERT: pip).
inline constexpr const char* sandbox_ca_bundle_path = "/dev/cordon-ca.pem";
inline constexpr const char* sandbox_ca_variables[] = {"SSL_CERT_FILE",  "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
                                                       "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",      "PIP_CERT"};

}  // namespace cordon::broker

namespace cordon::linux_impl {
using broker::broker_port;
using broker::broker_socket_path;
using broker::broker_transparent_port;
using broker::broker_dns_port;
}  // namespace cordon::linux_impl

// src/broker/trust_bundle.h — the certificates a sandbox with terminated
// rules trusts (docs/tls.md). Plain file reading, apart from the run's
// authority (tls_authority.h), so that the supervisor links no TLS library.
#pragma once

#include <string>

namespace cordon::broker {

// The PEM bundle the sandbox trusts: the host's system bundle (the first of
// the usual Debian/Fedora/Alpine paths that exists, read whole) followed by
// `ca_pem`. SSL_CERT_FILE replaces a tool's system bundle, so both are in
// it. Returns the bundle; with no system bundle, just `ca_pem`.
std::string trust_bundle(const std::string& ca_pem);

}  // namespace cordon::broker

// src/broker/tls_authority.h — the run's own certificate authority for TLS
// termination (docs/tls.md). Created by the broker's process for a run whose
// policy has a `tls: "terminate"` rule; its private key lives only in this
// object, in the broker's process that makes it (src/linux/broker_process.h):
// what the supervisor and the sandbox get is the certificate, as PEM. Leaf
// certificates are minted on first use per host and cached for the run.
// Used on the broker's thread only, after creation.
#pragma once

#include <openssl/types.h>

#include <map>
#include <memory>
#include <string>

#include "cordon/result.h"

namespace cordon::broker {

class tls_authority {
 public:
  // A fresh authority: an EC P-256 key and a self-signed CA certificate
  // (basicConstraints CA:TRUE, pathlen 0, keyUsage keyCertSign, valid from
  // one hour ago for 7 days), plus one P-256 key every leaf shares.
  // Errors: error_code::launch_failed with OpenSSL's reason.
  static result<std::shared_ptr<tls_authority>> create();

  // The CA certificate, PEM.
  const std::string& certificate_pem() const { return ca_pem_; }

  // A server SSL_CTX (TLS 1.2+, ALPN http/1.1 only) presenting a leaf for
  // `host` (a normalized name, or an IP literal, which goes in an IP SAN)
  // signed by this authority; minted once per host. The context stays owned
  // here. Errors: launch_failed.
  result<SSL_CTX*> server_context(const std::string& host);

  ~tls_authority();
  tls_authority(const tls_authority&) = delete;
  tls_authority& operator=(const tls_authority&) = delete;

 private:
  tls_authority() = default;
  EVP_PKEY* ca_key_ = nullptr;
  X509* ca_cert_ = nullptr;
  EVP_PKEY* leaf_key_ = nullptr;
  std::string ca_pem_;
  std::map<std::string, SSL_CTX*> contexts_;
  long serial_ = 1;
};

}  // namespace cordon::broker

// src/broker/tls_authority.cpp — the run's certificate authority and its
// leaves (tls_authority.h), with OpenSSL's EVP and X509 API.
#include "broker/tls_authority.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "broker/tls_options.h"

namespace cordon::broker {
namespace {

error openssl_failure(const std::string& step) {
  std::string reason = step;
  if (const unsigned long code = ERR_get_error(); code != 0) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    reason += ": ";
    reason += text;
  }
  ERR_clear_error();
  return make_error(error_code::launch_failed, "tls authority: " + reason);
}

struct x509_deleter {
  void operator()(X509* x) const { X509_free(x); }
};
using x509_ptr = std::unique_ptr<X509, x509_deleter>;

bool add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

// A certificate with `subject_cn` and `key`'s public half, issued by
// `issuer` (itself when null); the caller adds extensions and signs.
x509_ptr new_certificate(const std::string& subject_cn, EVP_PKEY* key, X509* issuer, long serial) {
  x509_ptr cert(X509_new());
  if (!cert) return nullptr;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  // An hour back: a sandbox clock a little behind the host's still accepts it.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7L * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("cordon run"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(subject_cn.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  if (X509_set_pubkey(cert.get(), key) != 1) return nullptr;
  return cert;
}

bool is_ip_literal(const std::string& host) {
  return host.find(':') != std::string::npos ||
         host.find_first_not_of("0123456789.") == std::string::npos;
}

}  // namespace

result<std::shared_ptr<tls_authority>> tls_authority::create() {
  std::shared_ptr<tls_authority> a(new tls_authority());
  a->ca_key_ = EVP_EC_gen("P-256");
  a->leaf_key_ = EVP_EC_gen("P-256");
  if (a->ca_key_ == nullptr || a->leaf_key_ == nullptr) return openssl_failure("generating keys");
  x509_ptr ca = new_certificate("cordon run CA (this run only)", a->ca_key_, nullptr, 1);
  if (!ca || !add_extension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_extension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_extension(ca.get(), ca.get(), NID_subject_key_identifier, "hash") ||
      X509_sign(ca.get(), a->ca_key_, EVP_sha256()) == 0) {
    return openssl_failure("making the CA certificate");
  }
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr || PEM_write_bio_X509(bio, ca.get()) != 1) {
    BIO_free(bio);
    return openssl_failure("writing the CA certificate");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  a->ca_pem_.assign(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  a->ca_cert_ = ca.release();
  return a;
}

result<SSL_CTX*> tls_authority::server_context(const std::string& host) {
  if (auto known = contexts_.find(host); known != contexts_.end()) return known->second;
  x509_ptr leaf = new_certificate(host, leaf_key_, ca_cert_, ++serial_);
  const std::string san = (is_ip_literal(host) ? "IP:" : "DNS:") + host;
  if (!leaf || !add_extension(leaf.get(), ca_cert_, NID_subject_alt_name, san) ||
      !add_extension(leaf.get(), ca_cert_, NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension(leaf.get(), ca_cert_, NID_key_usage, "critical,digitalSignature") ||
      !add_extension(leaf.get(), ca_cert_, NID_ext_key_usage, "serverAuth") ||
      !add_extension(leaf.get(), ca_cert_, NID_authority_key_identifier, "keyid:always") ||
      X509_sign(leaf.get(), ca_key_, EVP_sha256()) == 0) {
    return openssl_failure("minting a certificate for " + host);
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_use_certificate(ctx, leaf.get()) != 1 || SSL_CTX_add1_chain_cert(ctx, ca_cert_) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, leaf_key_) != 1) {
    SSL_CTX_free(ctx);
    return openssl_failure("a server context for " + host);
  }
  // HTTP/1.1 only (docs/tls.md): a client that offers h2 alone gets no ALPN
  // answer and speaks HTTP/1.1, or gives up.
  SSL_CTX_set_alpn_select_cb(
      ctx,
      [](SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in, unsigned int in_length,
         void*) {
        unsigned char* chosen = nullptr;
        if (SSL_select_next_proto(&chosen, out_length, alpn_http11, sizeof alpn_http11, in, in_length) !=
            OPENSSL_NPN_NEGOTIATED)
          return SSL_TLSEXT_ERR_NOACK;
        *out = chosen;
        return SSL_TLSEXT_ERR_OK;
      },
      nullptr);
  contexts_.emplace(host, ctx);
  return ctx;
}

tls_authority::~tls_authority() {
  for (auto& [host, ctx] : contexts_) SSL_CTX_free(ctx);
  X509_free(ca_cert_);
  EVP_PKEY_free(ca_key_);  // OpenSSL clears the private key's memory
  EVP_PKEY_free(leaf_key_);
}

}  // namespace cordon::broker

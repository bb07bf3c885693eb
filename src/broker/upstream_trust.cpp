// src/broker/upstream_trust.cpp — see upstream_trust.h.
#include "broker/upstream_trust.h"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <fstream>
#include <sstream>

#include "broker/tls_options.h"

namespace cordon::broker {

void set_upstream_client_options(ssl_ctx_st* ctx) {
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_alpn_protos(ctx, alpn_http11, sizeof alpn_http11);
}

std::shared_ptr<upstream_trust> upstream_trust::read(const std::string& ca_file, std::string& why) {
  std::shared_ptr<upstream_trust> t(new upstream_trust());
  t->file_ = ca_file.empty() ? X509_get_default_cert_file() : ca_file;
  std::ifstream in(t->file_, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) {
    why = "cannot read the upstream trust store " + t->file_;
    return nullptr;
  }
  t->pem_ = std::move(text).str();
  if (t->pem_.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    why = "the upstream trust store " + t->file_ + " holds no PEM certificate";
    return nullptr;
  }
  t->ctx_ = SSL_CTX_new(TLS_client_method());
  if (t->ctx_ == nullptr) {
    why = "cannot make an OpenSSL client context";
    return nullptr;
  }
  set_upstream_client_options(t->ctx_);
  return t;
}

upstream_trust::~upstream_trust() { SSL_CTX_free(ctx_); }

ssl_ctx_st* upstream_trust::context(std::string& why) {
  if (!parsed_) {
    parsed_ = true;
    // What X509_load_cert_crl_file does with a file, from memory.
    BIO* bio = BIO_new_mem_buf(pem_.data(), static_cast<int>(pem_.size()));
    STACK_OF(X509_INFO)* infos = bio != nullptr ? PEM_X509_INFO_read_bio(bio, nullptr, nullptr, nullptr) : nullptr;
    BIO_free(bio);
    X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
    int added = 0;
    for (int i = 0; infos != nullptr && i < sk_X509_INFO_num(infos); ++i) {
      const X509_INFO* info = sk_X509_INFO_value(infos, i);
      if (info->x509 != nullptr && X509_STORE_add_cert(store, info->x509) == 1) ++added;
      if (info->crl != nullptr) X509_STORE_add_crl(store, info->crl);
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    std::string().swap(pem_);
    if (added == 0) failure_ = "the upstream trust store " + file_ + " holds no certificate OpenSSL can read";
  }
  if (!failure_.empty()) {
    why = failure_;
    return nullptr;
  }
  return ctx_;
}

}  // namespace cordon::broker

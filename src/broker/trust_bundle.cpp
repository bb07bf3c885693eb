// src/broker/trust_bundle.cpp — see trust_bundle.h.
#include "broker/trust_bundle.h"

#include <fstream>
#include <sstream>

namespace cordon::broker {

std::string trust_bundle(const std::string& ca_pem) {
  std::string out;
  for (const char* path : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                           "/etc/ssl/cert.pem"}) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    std::ostringstream text;
    text << in.rdbuf();
    out = text.str();
    if (!out.empty() && out.back() != '\n') out += '\n';
    break;
  }
  return out + ca_pem;
}

}  // namespace cordon::broker

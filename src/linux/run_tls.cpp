// src/linux/run_tls.cpp — the run's authority, its bundle and the injected
// credentials (run_tls.h).
#include "linux/run_tls.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/broker_endpoint.h"
#include "core/json_pointer.h"

namespace cordon::linux_impl {
namespace {

std::string host_variable(const std::vector<std::string>& environment, const std::string& name) {
  for (const auto& entry : environment) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  }
  return {};
}

std::string read_secret_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();  // `echo > file`
  return secret;
}

}  // namespace

result<run_tls> prepare_run_tls(const network_policy& policy, const std::vector<std::string>& host_environment) {
  run_tls out;
  const bool terminates = std::any_of(policy.rules.begin(), policy.rules.end(),
                                      [](const network_rule& r) { return r.tls == tls_mode::terminate; });
  if (!terminates) return out;
  for (std::size_t i = 0; i < policy.credentials.size(); ++i) {
    const network_credential& c = policy.credentials[i];
    const std::string secret = c.from_env.empty() ? read_secret_file(c.from_file) : host_variable(host_environment, c.from_env);
    const std::string at = ::cordon::detail::pointer_join(::cordon::detail::pointer_join("/network/credentials", i), "value_from");
    if (secret.empty() || secret.find_first_of("\r\n") != std::string::npos) {
      return make_error(error_code::invalid_policy,
                        "credential for " + c.host + ": " +
                            (c.from_env.empty() ? "the file " + c.from_file : "the host variable " + c.from_env) +
                            " is unset, empty, unreadable or holds a line break",
                        at);
    }
    std::string value = c.format;
    value.replace(value.find("{}"), 2, secret);
    out.options.credentials.push_back({c.host, c.header, std::move(value)});
  }
  // The broker's process makes the authority and reads the upstream trust
  // store before it is confined (it can open no file then:
  // docs/network.md); the supervisor gets the certificate back for the
  // bundle (broker_process::spawn).
  out.options.make_authority = true;
  out.options.make_upstream = true;
  if (const char* ca = std::getenv("CORDON_UPSTREAM_CA_FILE"); ca != nullptr && *ca != '\0') {
    out.options.upstream_ca_file = ca;
  }
  return out;
}

int install_ca_bundle(const std::string& bundle) noexcept {
  // In the staging root (a tmpfs without the private /dev's 64 KiB limit;
  // a system bundle is ~200 KiB), like the sandbox's resolv.conf.
  const int fd = ::open("/cordon-ca.pem", O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
  if (fd < 0) return errno;
  std::size_t at = 0;
  while (at < bundle.size()) {
    const ssize_t n = ::write(fd, bundle.data() + at, bundle.size() - at);
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return err;
    }
    at += static_cast<std::size_t>(n);
  }
  ::close(fd);
  char target[128] = "/newroot";
  std::strncat(target, broker::sandbox_ca_bundle_path, sizeof target - sizeof "/newroot");
  const int mount_point = ::open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
  if (mount_point < 0) return errno;
  ::close(mount_point);
  if (::mount("/cordon-ca.pem", target, nullptr, MS_BIND, nullptr) != 0 ||
      ::mount(nullptr, target, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return errno;
  }
  return 0;
}

}  // namespace cordon::linux_impl

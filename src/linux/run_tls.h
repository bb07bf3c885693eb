// src/linux/run_tls.h — the supervisor's part of TLS termination
// (docs/tls.md): before the clone it reads the credentials the broker
// injects and asks the broker's process for the run's authority (which that
// process makes: broker_process.h), from whose certificate it makes the
// bundle the sandbox trusts (broker/trust_bundle.h); PID 1 puts the bundle
// at broker::sandbox_ca_bundle_path.
#pragma once

#include <string>
#include <vector>

#include "broker/tls_options.h"
#include "cordon/policy.h"
#include "cordon/result.h"

namespace cordon::linux_impl {

struct run_tls {
  broker::tls_options options;  // for the broker: credentials, make_authority and make_upstream
  std::string bundle;           // PEM: the system bundle, then the run CA; empty: no terminated rule (filled by the supervisor)
};

// For a policy with a tls "terminate" rule: the broker options that ask
// for an authority and an upstream context, the upstream CA file (the
// supervisor's CORDON_UPSTREAM_CA_FILE, for tests; otherwise the system
// store) and every credential's value, read now from `host_environment`
// ("NAME=VALUE") or its file and put into its format; the bundle is left
// empty. Without such a rule: an empty run_tls. Errors (fail closed,
// nothing runs): invalid_policy (location /network/credentials/N/value_from)
// when a secret's variable is unset or empty or its file cannot be read or
// is empty.
result<run_tls> prepare_run_tls(const network_policy& policy, const std::vector<std::string>& host_environment);

// PID 1 (after the clone, before the root is final): writes `bundle` into
// the staging root and binds it read-only at /newroot + sandbox_ca_bundle_path.
// Returns 0 or an errno.
int install_ca_bundle(const std::string& bundle) noexcept;

}  // namespace cordon::linux_impl

// kubernetes.h — `cordon gate render --kubernetes`: one Kubernetes Job per
// gate, each running `cordon gate run --only NAME` inside its pod
// (docs/gates.md, "Kubernetes").
//
// Gates are independent units, so a fleet runs them on the scheduler it has.
// The output is JSON (a `v1` List of `batch/v1` Jobs), which is also YAML:
// `kubectl apply -f` reads it as it is. Each pod gets what cordon's
// mechanisms need — user namespaces (seccomp and AppArmor profiles that allow
// them, hostUsers: false with an unmasked /proc so the sandbox can mount its
// own) — and nothing more: no privilege escalation, every capability
// dropped. Where a cluster still forbids them, cordon inside the pod refuses
// the gate with the blockers it found, or fails it at the setup step; it
// never runs it bare.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cordon/result.h"
#include "gates/manifest.h"

namespace cordon::gates {

struct kubernetes_settings {
  std::string image;              // an image with cordon on PATH and the workspace at pod_workspace
  std::string pod_workspace = "/workspace";
  std::string manifest_in_pod;    // absolute path of the manifest inside the pod
  std::string namespace_name;     // metadata.namespace; empty: none (kubectl's current)
  // The pod's seccomp profile: "unconfined", or "localhost/PATH" (a profile
  // on the node, relative to the kubelet's seccomp directory, that allows
  // unshare/clone of user namespaces, mount, pivot_root, landlock_* and
  // seccomp). The container runtime's default profile does not.
  std::string seccomp = "unconfined";
  std::vector<std::string> only;  // empty: every gate
};

// One Job per selected gate whose `env` is linux or any, in manifest order;
// gates for another OS are not rendered and are named in `not_rendered`
// ("windows-tests: env = windows"). Errors: usage_error (an --only name that
// is no gate, an empty image, a seccomp setting of another form).
result<nlohmann::ordered_json> render_kubernetes(const gate_manifest& manifest, const kubernetes_settings& settings,
                                                 std::vector<std::string>& not_rendered);

// The Job name of a gate: "cordon-gate-" and the name lower-cased, with
// characters outside [a-z0-9-] as '-'; when that changed the name or made it
// longer than 63 characters, cut and ended with 8 hex digits of the name's
// SHA-256, so that distinct gates keep distinct names (DNS-1123 labels).
std::string kubernetes_job_name(const std::string& gate_name);

}  // namespace cordon::gates

// kubernetes.cpp — rendering gates as Kubernetes Jobs (kubernetes.h).
#include "gates/kubernetes.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "manifest/digest.h"
#include "gates/runner.h"

namespace cordon::gates {

using manifest::sha256_digest;
namespace {

using ojson = nlohmann::ordered_json;

constexpr const char* kContainer = "gate";
constexpr const char* kRecordDir = "/cordon-gate-run";
// Time beyond the gates' own timeouts for the pod to start and cordon to compile and write.
constexpr double kDeadlineSlackSec = 120;

// The sum of the timeouts of `gate` and, transitively, of what it needs (the
// pod runs them all), or 0 when one of them has no timeout.
double chain_timeout_sec(const gate_manifest& manifest, const gate_spec& gate) {
  auto chosen = select_gates(manifest, {gate.name});
  if (!chosen) return 0;
  double total = 0;
  for (const gate_spec* g : *chosen) {
    if (!g->timeout_ms) return 0;
    total += static_cast<double>(*g->timeout_ms) / 1000.0;
  }
  return total;
}

ojson seccomp_profile(const std::string& setting) {
  if (setting == "unconfined") return {{"type", "Unconfined"}};
  return {{"type", "Localhost"}, {"localhostProfile", setting.substr(std::string_view("localhost/").size())}};
}

ojson job(const gate_manifest& manifest, const gate_spec& gate, const kubernetes_settings& s) {
  const std::string name = kubernetes_job_name(gate.name);
  std::string needs;
  for (const auto& n : gate.needs) needs += (needs.empty() ? "" : ",") + n;
  ojson labels = {{"app.kubernetes.io/managed-by", "cordon"}, {"cordon.dev/job", name}};
  ojson annotations = {{"cordon.dev/gate", gate.name},
                       {"cordon.dev/manifest-digest", manifest.digest},
                       {"cordon.dev/needs", needs},
                       {"cordon.dev/policy", gate.policy == policy_kind::inline_table ? "inline" : gate.policy_ref}};
  ojson command = {"cordon", "gate", "run", s.manifest_in_pod, "--only", gate.name, "--out", kRecordDir,
                   "--workspace", s.pod_workspace};
  ojson container = {
      {"name", kContainer},
      {"image", s.image},
      {"workingDir", s.pod_workspace},
      {"command", command},
      {"securityContext",
       {// cordon sets no_new_privs itself and needs no capability: user namespaces give it its own.
        {"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", {"ALL"}}}},
        // The sandbox mounts a /proc of its own PID namespace; the kernel allows
        // that only where the container's /proc is not partly masked.
        {"procMount", "Unmasked"},
        {"seccompProfile", seccomp_profile(s.seccomp)},
        {"appArmorProfile", {{"type", "Unconfined"}}}}},
      {"volumeMounts", {{{"name", "gate-run"}, {"mountPath", kRecordDir}}}}};
  ojson pod_spec = {{"restartPolicy", "Never"},
                    // A user namespace for the pod: unmasked /proc requires it, and
                    // root in the container is not root on the node.
                    {"hostUsers", false},
                    {"nodeSelector", {{"kubernetes.io/os", "linux"}}},
                    {"containers", {container}},
                    {"volumes", {{{"name", "gate-run"}, {"emptyDir", ojson::object()}}}}};
  ojson spec = {{"backoffLimit", 0}};
  if (double t = chain_timeout_sec(manifest, gate); t > 0) {
    spec["activeDeadlineSeconds"] = static_cast<std::int64_t>(std::ceil(t + kDeadlineSlackSec));
  }
  spec["template"] = {{"metadata", {{"labels", labels}, {"annotations", annotations}}}, {"spec", pod_spec}};
  ojson metadata = {{"name", name}};
  if (!s.namespace_name.empty()) metadata["namespace"] = s.namespace_name;
  metadata["labels"] = labels;
  metadata["annotations"] = annotations;
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", metadata}, {"spec", spec}};
}

}  // namespace

std::string kubernetes_job_name(const std::string& gate_name) {
  const std::string prefix = "cordon-gate-";
  std::string name = prefix;
  for (char c : gate_name) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    name += ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) ? l : '-';
  }
  while (name.back() == '-') name.pop_back();
  bool changed = name != prefix + gate_name;
  if (!changed && name.size() <= 63) return name;
  std::string hash = sha256_digest(gate_name).substr(std::string_view("sha256:").size(), 8);
  name = name.substr(0, 63 - 9);
  while (name.back() == '-') name.pop_back();
  return name + "-" + hash;
}

result<ojson> render_kubernetes(const gate_manifest& manifest, const kubernetes_settings& settings,
                                std::vector<std::string>& not_rendered) {
  if (settings.image.empty()) return make_error(error_code::usage_error, "--image names the image the pods run");
  if (settings.seccomp != "unconfined" &&
      (!settings.seccomp.starts_with("localhost/") || settings.seccomp.size() == std::string_view("localhost/").size())) {
    return make_error(error_code::usage_error, "--seccomp-profile is 'unconfined' or 'localhost/PATH'");
  }
  auto chosen = select_gates(manifest, settings.only);
  if (!chosen) return chosen.error_value();
  ojson items = ojson::array();
  std::map<std::string, std::string> names;
  for (const gate_spec* g : *chosen) {
    if (g->os != target_os::any && g->os != target_os::linux_os) {
      // cordon enforces on Linux nodes today; a Job elsewhere would only be refused there.
      not_rendered.push_back(g->name + ": env = " + std::string(to_string(g->os)));
      continue;
    }
    std::string job_name = kubernetes_job_name(g->name);
    if (auto [it, fresh] = names.emplace(job_name, g->name); !fresh) {
      return make_error(error_code::usage_error,
                        "gates '" + it->second + "' and '" + g->name + "' have the same Job name " + job_name);
    }
    items.push_back(job(manifest, *g, settings));
  }
  return ojson{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

}  // namespace cordon::gates

// `cordon gate render --kubernetes` (src/gates/kubernetes.h): the structure
// of every Job, and a round trip — the output read back as YAML (by PyYAML,
// not by cordon) is the same document and names every gate it was made from.
#include "gates/kubernetes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli_capture.h"
#include "harness.h"

namespace cordon::gates {
namespace {

using json = nlohmann::json;

constexpr const char* kManifest = R"([[gate]]
name = "build"
cmd = ["make"]
timeout_sec = 600

[[gate]]
name = "unit_tests.Fast"
cmd = ["make", "check"]
needs = ["build"]
timeout_sec = 300
sandbox_policy = "read-only"

[[gate]]
name = "lint"
cmd = "make lint"
shell = true

[[gate]]
name = "roslyn"
cmd = ["dotnet", "test"]
env = "windows"
sandbox_policy = "windows-worktree-no-secrets"
)";

gate_manifest manifest() {
  auto r = parse_manifest(kManifest, "/src/repo/ci/gates.toml");
  EXPECT_TRUE(r.manifest) << r.errors[0].message;
  return *r.manifest;
}

kubernetes_settings settings() {
  kubernetes_settings s;
  s.image = "registry.example/ci/cordon:1";
  s.manifest_in_pod = "/workspace/ci/gates.toml";
  s.namespace_name = "ci";
  return s;
}

TEST(KubernetesRender, OneJobPerLinuxGateWithWhatCordonNeeds) {
  gate_manifest m = manifest();
  std::vector<std::string> not_rendered;
  auto list = render_kubernetes(m, settings(), not_rendered);
  ASSERT_TRUE(list) << list.error_value().describe();
  EXPECT_EQ((*list)["apiVersion"], "v1");
  EXPECT_EQ((*list)["kind"], "List");
  ASSERT_EQ((*list)["items"].size(), 3u);
  EXPECT_EQ(not_rendered, (std::vector<std::string>{"roslyn: env = windows"}));
  const std::regex dns_label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  for (const auto& job : (*list)["items"]) {
    EXPECT_EQ(job["apiVersion"], "batch/v1");
    EXPECT_EQ(job["kind"], "Job");
    const std::string name = job["metadata"]["name"];
    EXPECT_LE(name.size(), 63u);
    EXPECT_TRUE(std::regex_match(name, dns_label)) << name;
    EXPECT_EQ(job["metadata"]["namespace"], "ci");
    EXPECT_EQ(job["spec"]["backoffLimit"], 0);
    const auto& pod = job["spec"]["template"]["spec"];
    EXPECT_EQ(pod["restartPolicy"], "Never");
    EXPECT_EQ(pod["hostUsers"], false);
    EXPECT_EQ(pod["nodeSelector"]["kubernetes.io/os"], "linux");
    ASSERT_EQ(pod["containers"].size(), 1u);
    const auto& c = pod["containers"][0];
    EXPECT_EQ(c["image"], "registry.example/ci/cordon:1");
    const auto& sc = c["securityContext"];
    EXPECT_EQ(sc["allowPrivilegeEscalation"], false);
    EXPECT_EQ(sc["capabilities"]["drop"], nlohmann::ordered_json::array({"ALL"}));
    EXPECT_EQ(sc["procMount"], "Unmasked");
    EXPECT_EQ(sc["seccompProfile"]["type"], "Unconfined");
    EXPECT_EQ(sc["appArmorProfile"]["type"], "Unconfined");
    EXPECT_FALSE(sc.contains("privileged"));
    const std::string gate = job["metadata"]["annotations"]["cordon.dev/gate"];
    EXPECT_EQ(c["command"], nlohmann::ordered_json::array({"cordon", "gate", "run", "/workspace/ci/gates.toml", "--only", gate, "--out",
                                         "/cordon-gate-run", "--workspace", "/workspace"}));
    EXPECT_EQ(job["metadata"]["annotations"]["cordon.dev/manifest-digest"], m.digest);
  }
  const auto& tests = (*list)["items"][1];
  EXPECT_EQ(tests["metadata"]["annotations"]["cordon.dev/needs"], "build");
  // The pod runs the gate and what it needs: both timeouts, plus the slack.
  EXPECT_EQ(tests["spec"]["activeDeadlineSeconds"], 600 + 300 + 120);
  EXPECT_FALSE((*list)["items"][2]["spec"].contains("activeDeadlineSeconds"));  // lint has no timeout
}

TEST(KubernetesRender, JobNamesAreDnsLabelsAndStayDistinct) {
  EXPECT_EQ(kubernetes_job_name("build"), "cordon-gate-build");
  std::string a = kubernetes_job_name("unit_tests.Fast"), b = kubernetes_job_name("unit-tests-fast");
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.starts_with("cordon-gate-unit-tests-fast-")) << a;
  std::string long_name = kubernetes_job_name(std::string(100, 'x'));
  EXPECT_EQ(long_name.size(), 63u);
  EXPECT_NE(long_name, kubernetes_job_name(std::string(99, 'x')));
}

TEST(KubernetesRender, OnlyAndSeccompSettings) {
  gate_manifest m = manifest();
  kubernetes_settings s = settings();
  s.only = {"unit_tests.Fast"};
  s.seccomp = "localhost/profiles/cordon.json";
  std::vector<std::string> not_rendered;
  auto list = render_kubernetes(m, s, not_rendered);
  ASSERT_TRUE(list);
  ASSERT_EQ((*list)["items"].size(), 2u);  // the gate and the gate it needs
  auto profile = (*list)["items"][0]["spec"]["template"]["spec"]["containers"][0]["securityContext"]["seccompProfile"];
  EXPECT_EQ(profile["type"], "Localhost");
  EXPECT_EQ(profile["localhostProfile"], "profiles/cordon.json");
  EXPECT_EQ(profile.size(), 2u);
  s.seccomp = "runtime-default";
  EXPECT_EQ(render_kubernetes(m, s, not_rendered).error_value().code, error_code::usage_error);
  s = settings();
  s.only = {"nope"};
  EXPECT_EQ(render_kubernetes(m, s, not_rendered).error_value().message, "--only nope: no such gate");
}

TEST(KubernetesRender, CliOutputReadsBackAsYamlAndNamesEveryGate) {
  test::temp_dir ws;
  ws.mkdir("ci");
  std::string path = ws.write("ci/gates.toml", kManifest);
  auto r = test::run_cli({"gate", "render", "--kubernetes", path, "--image", "img:1", "--workspace", ws.path(),
                          "--output", ws.path() + "/jobs.yaml"},
                         ws.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cordon: not rendered: roslyn: env = windows"), std::string::npos) << r.err;
  // PyYAML reads the file as YAML and writes it back as JSON.
  ASSERT_EQ(test::host_command({"/usr/bin/python3", "-c",
                                "import json,sys,yaml; json.dump(yaml.safe_load(open('jobs.yaml')), open('back.json','w'))"},
                               ws.path()),
            0)
      << "python3-yaml (scripts/setup.sh) must be installed";
  std::ifstream original(ws.path() + "/jobs.yaml"), back(ws.path() + "/back.json");
  json a = json::parse(original), b = json::parse(back);
  EXPECT_EQ(a, b);
  std::set<std::string> gates;
  for (const auto& job : b["items"]) {
    gates.insert(job["metadata"]["annotations"]["cordon.dev/gate"].get<std::string>());
    EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["command"][3], "/workspace/ci/gates.toml");
  }
  EXPECT_EQ(gates, (std::set<std::string>{"build", "unit_tests.Fast", "lint"}));
  // A gate in the record of a run of that manifest has the same name as its Job's annotation.
  auto m = parse_manifest(kManifest, path);
  for (const auto& g : m.manifest->gates) {
    if (g.os != target_os::windows) {
      EXPECT_TRUE(gates.contains(g.name)) << g.name;
    }
  }
}

}  // namespace
}  // namespace cordon::gates

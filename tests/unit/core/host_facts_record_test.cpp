// Recorded host facts (docs/host-facts.md): each backend's own facts type is
// carried opaquely by the driver, a record of each platform loads into that
// type (and only that backend's), writes back unchanged, compiles to the same
// plan as the facts it was recorded from, and a bad record is a typed error
// at its JSON pointer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "cordon/backend.h"
#include "cordon/linux_backend.h"
#include "cordon/linux_host_facts.h"
#include "cordon/selection.h"
#include "cordon/windows/compile.h"
#include "facts_files.h"
#include "macos/backend.h"
#include "macos/macos_plan.h"

namespace cordon {
namespace {

using test::facts_file_text;

struct recorded {
  const char* file;
  std::shared_ptr<const sandbox_backend> backend;
};

std::vector<recorded> records() {
  std::shared_ptr<const sandbox_backend> linux_backend = make_linux_backend();
  std::shared_ptr<const sandbox_backend> mac(&macos_impl::the_macos_backend(), [](const sandbox_backend*) {});
  std::shared_ptr<const sandbox_backend> win(&windows::the_windows_backend(), [](const sandbox_backend*) {});
  return {{"linux-abi7-cgroup-v2.json", linux_backend},
          {"macos-14-arm64.json", mac},
          {"windows-10-ntfs.json", win}};
}

bool carries_own_type(const sandbox_backend& backend, const host_facts& facts) {
  if (backend.platform() == "linux") return backend_facts_as<linux_host_facts>(facts) != nullptr;
  if (backend.platform() == "macos") return backend_facts_as<macos_impl::macos_host_facts>(facts) != nullptr;
  return backend_facts_as<windows::windows_backend_facts>(facts) != nullptr;
}

TEST(HostFactsRecord, EachPlatformsRecordLoadsIntoItsBackendsOwnTypeAndWritesBackUnchanged) {
  for (const auto& r : records()) {
    SCOPED_TRACE(r.file);
    const std::string text = facts_file_text(r.file);
    auto loaded = r.backend->load_host_facts(text, {});
    ASSERT_TRUE(loaded) << loaded.error_value().describe();
    EXPECT_EQ(loaded->platform, r.backend->platform());
    EXPECT_TRUE(loaded->backend_available) << loaded->backend_blocker;
    EXPECT_TRUE(carries_own_type(*r.backend, *loaded));
    EXPECT_FALSE(loaded->lines.empty());
    auto written = r.backend->record_host_facts(*loaded);
    ASSERT_TRUE(written) << written.error_value().describe();
    auto again = r.backend->load_host_facts(*written, {});
    ASSERT_TRUE(again) << again.error_value().describe();
    EXPECT_EQ(*r.backend->record_host_facts(*again), *written);
    EXPECT_EQ(again->lines, loaded->lines);
  }
}

TEST(HostFactsRecord, ARecordOfAnotherPlatformIsRefusedByEveryOtherBackend) {
  for (const auto& r : records()) {
    const std::string text = facts_file_text(r.file);
    for (const auto& other : records()) {
      if (other.backend->platform() == r.backend->platform()) continue;
      SCOPED_TRACE(std::string(r.file) + " on " + std::string(other.backend->platform()));
      auto loaded = other.backend->load_host_facts(text, {});
      ASSERT_FALSE(loaded);
      EXPECT_EQ(loaded.error_value().code, error_code::unsupported_platform);
      EXPECT_EQ(loaded.error_value().location, "/platform");
    }
  }
}

TEST(HostFactsRecord, FactsOfAnotherBackendAreNotRecordedAndDoNotBuild) {
  auto recs = records();
  auto mac = recs[1].backend->load_host_facts(facts_file_text(recs[1].file), {});
  ASSERT_TRUE(mac);
  for (const auto& other : {recs[0], recs[2]}) {
    auto written = other.backend->record_host_facts(*mac);
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error_value().code, error_code::unsupported_platform);
  }
  // The Linux backend given macOS facts relabelled as Linux ones: no Linux record, refused.
  host_facts relabelled = *mac;
  relabelled.platform = "linux";
  sandbox_policy p;
  p.filesystem.writable = {"/tmp/x"};
  for (const auto& [which, required] : required_enforcement(p)) p.enforcement[which] = enforcement_level::not_enforced;
  auto compiled = recs[0].backend->compile(p, {}, relabelled);
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.failure().code, error_code::backend_unavailable);
}

TEST(HostFactsRecord, LoadedFactsCompileToTheSamePlanAsTheFactsTheyWereRecordedFrom) {
  for (const auto& r : records()) {
    SCOPED_TRACE(r.file);
    auto loaded = r.backend->load_host_facts(facts_file_text(r.file), {});
    ASSERT_TRUE(loaded);
    auto again = r.backend->load_host_facts(*r.backend->record_host_facts(*loaded), {});
    ASSERT_TRUE(again);
    sandbox_policy p;
    p.filesystem.readable = {"{workspace}"};
    p.filesystem.writable = {"{workspace}"};
    for (const auto& [which, required] : required_enforcement(p)) {
      p.enforcement[which] = enforcement_level::not_enforced;
    }
    compile_options o;
    o.workspace = loaded->workspace.empty() ? "/home/dev/project" : loaded->workspace;
    auto first = r.backend->compile(p, o, *loaded);
    auto second = r.backend->compile(p, o, *again);
    ASSERT_TRUE(first) << first.failure().describe();
    ASSERT_TRUE(second) << second.failure().describe();
    EXPECT_EQ(first.plan()->payload()->describe(), second.plan()->payload()->describe());
    for (const auto& [which, status] : first.plan()->contract()) {
      EXPECT_EQ(status.level, second.plan()->contract().at(which).level) << to_string(which);
      // One rule for `unverified`: nothing is enforced on a platform without a proof run.
      if (r.backend->platform() != "linux") {
        EXPECT_NE(status.level, enforcement_level::enforced) << to_string(which);
      }
    }
  }
}

TEST(HostFactsRecord, TheRunningHostsLinuxFactsRecordAndLoadBack) {
  auto backend = make_linux_backend();
  const host_facts here = backend->read_host_facts({}, false);
  auto written = backend->record_host_facts(here);
  ASSERT_TRUE(written) << written.error_value().describe();
  auto loaded = backend->load_host_facts(*written, {});
  ASSERT_TRUE(loaded) << loaded.error_value().describe();
  EXPECT_EQ(loaded->uid, here.uid);
  EXPECT_EQ(loaded->home, here.home);
  EXPECT_EQ(loaded->backend_available, here.backend_available);
  EXPECT_EQ(linux_facts_of(*loaded)->landlock_abi, linux_facts_of(here)->landlock_abi);
  EXPECT_EQ(linux_facts_of(*loaded)->cgroups.memory_parent, linux_facts_of(here)->cgroups.memory_parent);
}

// Every backend's loader marks its facts recorded, and the Linux launcher
// refuses a plan compiled from this host's own record before any sandbox step
// (plan_recorded_facts): a record describes a host, it never proves one.
TEST(HostFactsRecord, APlanFromLoadedFactsNeverLaunchesEvenForTheRunningPlatform) {
  for (const auto& r : records()) {
    SCOPED_TRACE(r.file);
    auto loaded = r.backend->load_host_facts(facts_file_text(r.file), {});
    ASSERT_TRUE(loaded) << loaded.error_value().describe();
    EXPECT_TRUE(loaded->recorded);
  }
  auto backend = make_linux_backend();
  const host_facts here = backend->read_host_facts({}, false);
  auto loaded = backend->load_host_facts(*backend->record_host_facts(here), {});
  ASSERT_TRUE(loaded) << loaded.error_value().describe();
  EXPECT_FALSE(here.recorded);
  sandbox_policy policy;
  policy.name = "recorded";
  policy.isolation = isolation_level::process;
  for (const auto& [which, required] : required_enforcement(policy)) policy.enforcement[which] = enforcement_level::not_enforced;
  launch_request request;
  request.argv = {"true"};
  auto from_record = backend->compile(policy, {}, *loaded);
  ASSERT_TRUE(from_record) << from_record.failure().describe();
  auto refused = backend->launch(from_record.plan().get(), request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error_value().code, error_code::plan_recorded_facts);
  auto live = backend->compile(policy, {}, here);
  ASSERT_TRUE(live) << live.failure().describe();
  EXPECT_FALSE(live.plan()->from_recorded_facts());
}

struct bad_record {
  const char* text;
  error_code code;
  const char* location;  // of the error, or of its first entry in `errors`
};

TEST(HostFactsRecord, ABadRecordIsATypedErrorAtItsPointer) {
  auto backend = make_linux_backend();
  const bad_record cases[] = {
      {"{\"format\": ", error_code::parse_error, "line 1, column 12"},
      {"[1]", error_code::parse_error, ""},
      {"{\"platform\": \"linux\"}", error_code::parse_error, "/format"},
      {"{\"format\": \"cordon-host-facts-2\", \"platform\": \"linux\"}", error_code::parse_error, "/format"},
      {"{\"format\": \"cordon-host-facts-1\"}", error_code::parse_error, "/platform"},
      {"{\"format\": \"cordon-host-facts-1\", \"platform\": \"linux\", \"landlock_abi\": \"7\"}",
       error_code::parse_error, "/landlock_abi"},
      {"{\"format\": \"cordon-host-facts-1\", \"platform\": \"linux\", \"uid\": -1}", error_code::parse_error,
       "/uid"},
      {"{\"format\": \"cordon-host-facts-1\", \"platform\": \"linux\", \"colour\": 1}", error_code::parse_error,
       "/colour"},
      {"{\"format\": \"cordon-host-facts-1\", \"platform\": \"linux\", \"cgroups\": {\"v3\": true}}",
       error_code::parse_error, "/cgroups/v3"},
      {"{\"format\": \"cordon-host-facts-1\", \"platform\": \"linux\", \"seccomp\": true, \"seccomp\": false}",
       error_code::parse_error, "/seccomp"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto loaded = backend->load_host_facts(c.text, {});
    ASSERT_FALSE(loaded);
    const error& e = loaded.error_value();
    EXPECT_EQ(e.code, c.code) << e.describe();
    const std::string at = e.errors.empty() ? e.location : e.errors.front().location;
    EXPECT_EQ(at, c.location) << e.describe();
  }
}

TEST(HostFactsRecord, AMacRecordNeverClaimsANativeMacAndEveryBadFieldIsListed) {
  const auto& mac = macos_impl::the_macos_backend();
  auto loaded = mac.load_host_facts(
      "{\"format\": \"cordon-host-facts-1\", \"platform\": \"macos\", \"native\": true, \"broker_port\": 70000, "
      "\"aliases\": [{\"link\": 1}]}",
      {});
  ASSERT_FALSE(loaded);
  std::vector<std::string> where;
  for (const auto& e : loaded.error_value().errors) where.push_back(e.location);
  EXPECT_EQ(where, (std::vector<std::string>{"/aliases/0/link", "/broker_port", "/native"}));
  auto good = mac.load_host_facts(facts_file_text("macos-14-arm64.json"), {});
  ASSERT_TRUE(good);
  EXPECT_FALSE(backend_facts_as<macos_impl::macos_host_facts>(*good)->native);
}

TEST(HostFactsRecord, ABackendWithoutARecordFormatSaysSo) {
  auto host = make_host_execution_backend();
  auto loaded = host->load_host_facts(facts_file_text("linux-abi7-cgroup-v2.json"), {});
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error_value().code, error_code::usage_error);
  auto written = host->record_host_facts(host->read_host_facts({}, false));
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error_value().code, error_code::usage_error);
}

}  // namespace
}  // namespace cordon

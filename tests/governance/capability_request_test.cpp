// Requests: strict reading, normalization, canonical form and digests.
#include <gtest/gtest.h>

#include "cordon/governance/capability_request.h"

namespace cordon::governance {
namespace {

TEST(CapabilityRequest, ReadsAndNormalizes) {
  auto r = capability_request_from_json(R"({"schema_version":1,"action":"filesystem_read","risk":"low",
    "resources":{"paths":["/work//src/./a/../b"],"hosts":["WWW.Example.COM.:443","[2001:DB8::1]:80"],
    "variables":["HOME"]},"tool":"read","trace_id":"t1","subject_id":"alice",
    "host_metadata":{"ui":"panel"}})");
  ASSERT_TRUE(r) << r.error_value().describe();
  EXPECT_EQ(r->action, action_kind::filesystem_read);
  EXPECT_EQ(r->paths, std::vector<std::string>{"/work/src/b"});
  EXPECT_EQ(r->hosts, (std::vector<std::string>{"www.example.com:443", "[2001:db8::1]:80"}));
  EXPECT_EQ(r->host_metadata.at("ui"), "panel");
}

TEST(CapabilityRequest, RejectsUnknownFieldsAndBadShapes) {
  struct row {
    const char* text;
    const char* location;
  } rows[] = {
      {R"({"schema_version":1,"action":"shell","risk":"low","command":"ls","allow":true})", "/allow"},
      {R"({"schema_version":2,"action":"shell","risk":"low","command":"ls"})", "/schema_version"},
      {R"({"schema_version":1,"action":"fly","risk":"low"})", "/action"},
      {R"({"schema_version":1,"action":"shell","risk":"extreme","command":"ls"})", "/risk"},
      {R"({"schema_version":1,"action":"shell","risk":"low"})", "/command"},
      {R"({"schema_version":1,"action":"shell","risk":"low","command":"ls","argv":["ls"]})", "/argv"},
      {R"({"schema_version":1,"action":"process","risk":"low"})", "/argv"},
      {R"({"schema_version":1,"action":"filesystem_read","risk":"low","argv":["cat"]})", "/argv"},
      {R"({"schema_version":1,"action":"filesystem_read","risk":"low","resources":{"paths":["rel/path"]}})",
       "/resources/paths/0"},
      {R"({"schema_version":1,"action":"network_outbound","risk":"low","resources":{"hosts":["http://x.com"]}})",
       "/resources/hosts/0"},
      {R"({"schema_version":1,"action":"secret_access","risk":"low","resources":{"variables":["A-B"]}})",
       "/resources/variables/0"},
      {R"({"schema_version":1,"action":"secret_access","risk":"low","resources":{"files":[]}})", "/resources/files"},
      {R"({"schema_version":1,"action":"shell","risk":"low","command":"ls","command":"rm"})", "/command"},
  };
  for (const auto& row : rows) {
    auto r = capability_request_from_json(row.text);
    ASSERT_FALSE(r) << row.text;
    EXPECT_EQ(r.error_value().code, error_code::invalid_policy) << row.text;
    EXPECT_EQ(r.error_value().location, row.location) << row.text << ": " << r.error_value().describe();
  }
  EXPECT_EQ(capability_request_from_json("{").error_value().code, error_code::parse_error);
}

TEST(CapabilityRequest, CanonicalFormAndDigest) {
  capability_request a;
  a.action = action_kind::shell;
  a.risk = risk_level::low;
  a.command = "git status";
  a.paths = {"/b", "/a"};
  a.trace_id = "t1";
  ASSERT_TRUE(normalize_capability_request(a));
  capability_request b = a;
  b.trace_id = "t2";
  b.paths = {"/a", "/b", "/a"};
  b.host_metadata["x"] = "y";
  // Same thing asked twice: one normalized form, two digests (the digest covers everything).
  EXPECT_EQ(normalized_form(a), normalized_form(b));
  EXPECT_NE(request_digest(a), request_digest(b));
  EXPECT_EQ(request_digest(a), request_digest(a));
  EXPECT_EQ(request_digest(a).rfind("sha256:", 0), 0u);
  EXPECT_EQ(request_digest(a).size(), 7u + 64u);
  // The canonical text reads back to the same request.
  auto back = capability_request_from_json(canonical_json(a));
  ASSERT_TRUE(back) << back.error_value().describe();
  EXPECT_EQ(*back, a);
  EXPECT_EQ(canonical_json(*back), canonical_json(a));
  b.command = "git status --short";
  EXPECT_NE(normalized_form(a), normalized_form(b));
}

TEST(CapabilityRequest, KnownDigest) {
  EXPECT_EQ(sha256_digest("abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(CapabilityRequest, PathNormalization) {
  EXPECT_EQ(*normalize_absolute_path("/"), "/");
  EXPECT_EQ(*normalize_absolute_path("/.."), "/");
  EXPECT_EQ(*normalize_absolute_path("/a/b/../../../c/"), "/c");
  EXPECT_FALSE(normalize_absolute_path(""));
  EXPECT_FALSE(normalize_absolute_path("a"));
}

// Text that is not UTF-8 (a surrogate, an overlong form, past U+10FFFF) is
// refused by normalization, so that no later step (the digest, an audit
// event) throws on it.
TEST(CapabilityRequest, NormalizationRefusesTextThatIsNotUtf8) {
  for (const char* bad : {"\xed\xa0\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80"}) {
    capability_request r;
    r.action = action_kind::shell;
    r.risk = risk_level::low;
    r.command = std::string("echo ") + bad;
    bool normalized = true;
    EXPECT_NO_THROW(normalized = static_cast<bool>(normalize_capability_request(r)));
    EXPECT_FALSE(normalized) << "bytes of " << bad;
    std::string digest;
    if (normalized) {
      EXPECT_NO_THROW(digest = request_digest(r)) << "digest of a request that normalized";
    }
  }
}

}  // namespace
}  // namespace cordon::governance

// network_check_test.cpp — network_deny after the behavioural check
// (cordon/windows/network_check.h), on recorded observations of the probe:
// the check can only lower a claim, and every outcome but "the connect failed
// and nothing reached the listener" leaves nothing claimed.
#include <gtest/gtest.h>

#include "cordon/windows/network_check.h"

namespace cordon::windows {
namespace {

const control_status kStated{enforcement_level::unverified, "AppContainer without network capabilities", ""};

connect_probe_observation blocked() {
  connect_probe_observation o;
  o.ran = true;
  o.target = "127.0.0.1:50123";
  o.exit_code = 7;
  o.connect_failed = curl_connect_failed(7);
  return o;
}

TEST(NetworkCheck, AFailedConnectKeepsTheStatedLevelAndSaysWhatWasChecked) {
  const control_status s = network_deny_after_probe(kStated, blocked());
  EXPECT_EQ(s.level, enforcement_level::unverified);
  EXPECT_EQ(s.mechanism, kStated.mechanism);
  EXPECT_EQ(s.detail, "checked before the run: a connect from the AppContainer to 127.0.0.1:50123 failed (probe exit 7)");
  connect_probe_observation timed = blocked();
  timed.exit_code = 28;
  timed.connect_failed = curl_connect_failed(28);
  EXPECT_EQ(network_deny_after_probe(kStated, timed).level, enforcement_level::unverified);
}

TEST(NetworkCheck, AConnectionThatReachedTheListenerIsNotEnforcedWhateverTheProbeSaid) {
  connect_probe_observation o = blocked();
  o.listener_saw_connection = true;  // the probe says 7, the listener says otherwise: the listener wins
  const control_status s = network_deny_after_probe(kStated, o);
  EXPECT_EQ(s.level, enforcement_level::not_enforced);
  EXPECT_EQ(s.detail, "a probe in the AppContainer reached 127.0.0.1:50123: the network is not denied");
}

TEST(NetworkCheck, ASucceededConnectIsNotEnforced) {
  connect_probe_observation o = blocked();
  o.exit_code = 52;  // curl: empty reply from the server, i.e. connected
  o.connect_failed = curl_connect_failed(52);
  EXPECT_FALSE(o.connect_failed);
  const control_status s = network_deny_after_probe(kStated, o);
  EXPECT_EQ(s.level, enforcement_level::not_enforced);
  EXPECT_EQ(s.detail, "not checked: the network probe to 127.0.0.1:50123 exited 52, not with a failed connect");
}

TEST(NetworkCheck, AProbeThatDidNotRunOrEndLeavesNothingClaimed) {
  connect_probe_observation none;
  none.reason = "no curl.exe at C:\\Windows\\System32\\curl.exe";
  control_status s = network_deny_after_probe(kStated, none);
  EXPECT_EQ(s.level, enforcement_level::not_enforced);
  EXPECT_EQ(s.detail, "not checked: no network probe ran (no curl.exe at C:\\Windows\\System32\\curl.exe)");
  connect_probe_observation hung = blocked();
  hung.timed_out = true;
  s = network_deny_after_probe(kStated, hung);
  EXPECT_EQ(s.level, enforcement_level::not_enforced);
  EXPECT_EQ(s.detail, "not checked: the network probe to 127.0.0.1:50123 did not end in time");
}

TEST(NetworkCheck, AStatusThatClaimsNothingIsLeftAsItIs) {
  connect_probe_observation reached = blocked();
  reached.listener_saw_connection = true;
  for (enforcement_level l : {enforcement_level::not_enforced, enforcement_level::not_applicable}) {
    const control_status stated{l, "", "the policy allows the network"};
    EXPECT_EQ(network_deny_after_probe(stated, reached), stated);
  }
}

// The check never raises a level: `enforced` stays `enforced` only when the
// connect failed (no proof run has passed on Windows, so the compiler states
// `unverified`; this is the rule should one pass).
TEST(NetworkCheck, TheCheckNeverRaisesALevel) {
  const control_status enforced{enforcement_level::enforced, "AppContainer", ""};
  EXPECT_EQ(network_deny_after_probe(enforced, blocked()).level, enforcement_level::enforced);
  connect_probe_observation reached = blocked();
  reached.listener_saw_connection = true;
  EXPECT_EQ(network_deny_after_probe(enforced, reached).level, enforcement_level::not_enforced);
}

}  // namespace
}  // namespace cordon::windows

// The DACL lease's restore record: its exact format, strict reading, and the
// retry rule (three attempts, the entry kept until restored).
#include <gtest/gtest.h>

#include "windows/lease_record.h"

namespace cordon::windows {
namespace {

using namespace detail;

lease_record sample_record() {
  lease_record r;
  r.owner_pid = 4242;
  r.owner_start_time = 133000000000000000ull;
  r.plan_identity = 7;
  r.appcontainer_name = "cordon.00000000000000ab.7";
  r.appcontainer_sid = "S-1-15-2-1-2-3-4-5-6-7";
  r.created = {"C:\\Temp\\cordon-run-7"};
  r.entries = {{"C:\\work", "0e3a4b1c:0000000000012345", "D:AI(A;OICI;FA;;;SY)", false, lease_state::pending, 0},
               {"C:\\work\\secret", "0e3a4b1c:0000000000012346", "D:P(A;;FA;;;SY)", true, lease_state::pending, 0}};
  return r;
}

TEST(WindowsLeaseRecord, FormatIsStable) {
  EXPECT_EQ(lease_record_to_json(sample_record()), R"json({
 "appcontainer": {
  "name": "cordon.00000000000000ab.7",
  "sid": "S-1-15-2-1-2-3-4-5-6-7"
 },
 "created": [
  "C:\\Temp\\cordon-run-7"
 ],
 "entries": [
  {
   "attempts": 0,
   "dacl_protected": false,
   "file_id": "0e3a4b1c:0000000000012345",
   "original_sddl": "D:AI(A;OICI;FA;;;SY)",
   "path": "C:\\work",
   "state": "pending"
  },
  {
   "attempts": 0,
   "dacl_protected": true,
   "file_id": "0e3a4b1c:0000000000012346",
   "original_sddl": "D:P(A;;FA;;;SY)",
   "path": "C:\\work\\secret",
   "state": "pending"
  }
 ],
 "format": "cordon-windows-dacl-lease",
 "owner": {
  "pid": 4242,
  "plan": 7,
  "start_time": 133000000000000000
 },
 "version": 1
}
)json");
}

TEST(WindowsLeaseRecord, RoundTrips) {
  auto back = lease_record_from_json(lease_record_to_json(sample_record()));
  ASSERT_TRUE(back) << back.error_value().describe();
  EXPECT_EQ(*back, sample_record());
}

// The low-integrity fallback's label entries record the original label
// ("S:(ML;...)", "S:" for none) where DACL entries record the DACL.
TEST(WindowsLeaseRecord, LabelEntriesRoundTripAndOtherDescriptorsAreRefused) {
  lease_record r = sample_record();
  r.entries[0].original_sddl = "S:";
  r.entries[1].original_sddl = "S:(ML;OICI;NW;;;ME)";
  auto back = lease_record_from_json(lease_record_to_json(r));
  ASSERT_TRUE(back) << back.error_value().message;
  EXPECT_EQ(*back, r);
  r.entries[0].original_sddl = "G:SY";
  auto refused = lease_record_from_json(lease_record_to_json(r));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error_value().location, "/entries/0");
}

TEST(WindowsLeaseRecord, ReadingIsStrict) {
  const std::string good = lease_record_to_json(sample_record());
  const auto fails_at = [](std::string text, const std::string& pointer) {
    auto r = lease_record_from_json(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error_value().location, pointer) << text;
  };
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  fails_at(edit("\"version\": 1", "\"version\": 2"), "/version");
  fails_at(edit("cordon-windows-dacl-lease", "other"), "/format");
  fails_at(edit("\"attempts\": 0,", "\"attempts\": 0, \"extra\": 1,"), "/entries/0/extra");
  fails_at(edit("\"state\": \"pending\"", "\"state\": \"done\""), "/entries/0/state");
  fails_at(edit("\"pid\": 4242,", ""), "/owner/pid");
  fails_at(edit("D:AI(A;OICI;FA;;;SY)", "O:SY"), "/entries/0");
  EXPECT_EQ(lease_record_from_json("{").error_value().code, error_code::parse_error);
}

TEST(WindowsLeaseRecord, RestoresInReverseOrderAndMarksEachEntry) {
  lease_record r = sample_record();
  std::vector<std::string> order, failures;
  EXPECT_EQ(restore_entries(r, [&](const lease_entry& e) -> result<void> {
    order.push_back(e.path);
    return ok;
  }, failures), 0u);
  EXPECT_EQ(order, (std::vector<std::string>{"C:\\work\\secret", "C:\\work"}));
  EXPECT_TRUE(r.complete());
  EXPECT_TRUE(failures.empty());
}

TEST(WindowsLeaseRecord, AFailingRestoreIsTriedThreeTimesAndKept) {
  lease_record r = sample_record();
  int calls_for_secret = 0, calls_for_work = 0;
  std::vector<std::string> failures;
  const std::size_t pending = restore_entries(r, [&](const lease_entry& e) -> result<void> {
    if (e.path == "C:\\work") {
      // Succeeds on the second attempt.
      if (++calls_for_work < 2) return make_error(error_code::io_error, "sharing violation");
      return ok;
    }
    ++calls_for_secret;
    return make_error(error_code::io_error, "access denied");
  }, failures);
  EXPECT_EQ(pending, 1u);
  EXPECT_EQ(calls_for_secret, max_restore_attempts);
  EXPECT_EQ(r.entries[1].state, lease_state::pending);
  EXPECT_EQ(r.entries[1].attempts, 3);
  EXPECT_EQ(r.entries[0].state, lease_state::restored);
  EXPECT_EQ(r.entries[0].attempts, 1);
  EXPECT_FALSE(r.complete());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("C:\\work\\secret"), std::string::npos);
  // The next start retries what is still pending, and only that.
  std::vector<std::string> again;
  EXPECT_EQ(restore_entries(r, [&](const lease_entry& e) -> result<void> {
    again.push_back(e.path);
    return ok;
  }, failures), 0u);
  EXPECT_EQ(again, std::vector<std::string>{"C:\\work\\secret"});
  EXPECT_TRUE(r.complete());
}

}  // namespace
}  // namespace cordon::windows

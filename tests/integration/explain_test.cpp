// `cordon policy explain` and `cordon probe --human`, and the acceptance
// check of the portable contract: for every built-in profile, the levels
// explain prints agree with `cordon probe` (a control is either at the
// host's best level or not applicable to the profile) and equal, control by
// control, the levels in the report of an actual run under that profile.
#include <map>
#include <sstream>

#include "cli_capture.h"
#include "harness.h"

namespace cordon::test {
namespace {

struct table_line {
  std::string level;     // second column
  std::string required;  // third column (explain only)
};

// The rows of the table whose header starts with `header` (first column
// -> the next ones); continuation lines (indented) and other sections are skipped.
std::map<std::string, table_line> parse_table(const std::string& text, const std::string& header) {
  std::map<std::string, table_line> rows;
  std::istringstream in(text);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside) {
      inside = line.rfind(header, 0) == 0;
      continue;
    }
    if (line.empty()) break;
    if (line.front() == ' ') continue;
    std::istringstream fields(line);
    std::string control;
    table_line row;
    fields >> control >> row.level >> row.required;
    rows[control] = row;
  }
  return rows;
}

std::vector<std::string> profile_names() {
  captured list = run_cli({"-q", "profile", "list"}, "/");  // names only (without -q: a table with origins)
  std::vector<std::string> names;
  std::istringstream in(list.out);
  for (std::string name; std::getline(in, name);) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

TEST(Explain, EveryProfileAgreesWithProbeAndWithAnActualRun) {
  const nlohmann::json probe = probe_json();
  ASSERT_TRUE(probe.is_object());
  ASSERT_TRUE(probe["available"].get<bool>());
  const auto names = profile_names();
  ASSERT_GE(names.size(), 3u);
  for (const auto& profile : names) {
    SCOPED_TRACE(profile);
    temp_dir ws;
    captured explained = run_cli({"policy", "explain", "--profile", profile, "--workspace", ws.path()}, ws.path());
    ASSERT_EQ(explained.exit_code, 0) << explained.out << explained.err;
    EXPECT_NE(explained.out.find("policy:     " + profile + " (built-in profile " + profile + ")"), std::string::npos)
        << explained.out;
    const auto table = parse_table(explained.out, "CONTROL ");

    auto run = run_cordon({"--profile", profile, "--workspace", ws.path()}, {"true"}, ws.path());
    ASSERT_EQ(run.exit_code, 0) << run.all();
    ASSERT_EQ(run.report["outcome"], "completed");
    const auto& controls = run.report["controls"];

    EXPECT_EQ(table.size(), controls.size());
    EXPECT_EQ(table.size(), probe["best"].size());
    for (const auto& [control, status] : controls.items()) {
      SCOPED_TRACE(control);
      ASSERT_TRUE(table.contains(control)) << explained.out;
      const std::string level = table.at(control).level;
      EXPECT_EQ(level, status["level"].get<std::string>()) << "explain and the run's report disagree";
      const std::string best = probe["best"][control]["level"];
      EXPECT_TRUE(level == best || level == "not_applicable")
          << "explain says " << level << ", probe's best is " << best;
      // What the profile requires is met by what the run got.
      const std::string required = table.at(control).required;
      if (required == "enforced") {
        EXPECT_EQ(level, "enforced");
      }
    }
  }
}

TEST(Explain, FlagsShowWhatARunWithThemWouldGet) {
  temp_dir ws;
  captured plain = run_cli({"policy", "explain", "--workspace", ws.path()}, ws.path());
  captured open = run_cli({"policy", "explain", "--workspace", ws.path(), "--net", "any"}, ws.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(open.exit_code, 0) << open.err;
  EXPECT_EQ(parse_table(plain.out, "CONTROL ").at("network_deny").level, "enforced");
  EXPECT_EQ(parse_table(open.out, "CONTROL ").at("network_deny").level, "not_applicable");
  EXPECT_NE(open.out.find("edited by flags"), std::string::npos) << open.out;
  const auto limited = parse_table(
      run_cli({"policy", "explain", "--workspace", ws.path(), "--timeout", "5"}, ws.path()).out, "CONTROL ");
  EXPECT_EQ(limited.at("timeout").level, "enforced");
  EXPECT_EQ(limited.at("timeout").required, "enforced");
}

TEST(Explain, RefusalsPrintErrorsOrBlockers) {
  temp_dir ws, dir;
  const std::string vm = dir.write("vm.json", R"({"schema_version": 1, "name": "needs-vm", "isolation": "vm"})");
  captured refused = run_cli({"policy", "explain", vm, "--workspace", ws.path()}, ws.path());
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.out.find("result:     refused (isolation_insufficient)"), std::string::npos) << refused.out;
  const auto blockers = parse_table(refused.out, "BLOCKER ");
  ASSERT_TRUE(blockers.contains("isolation")) << refused.out;
  EXPECT_EQ(blockers.at("isolation").level, "vm");  // the REQUIRED column

  const std::string bad = dir.write("bad.json", R"({"schema_version": 1, "filesystem": {"readable": ["rel"]}})");
  captured invalid = run_cli({"policy", "explain", bad, "--workspace", ws.path()}, ws.path());
  EXPECT_EQ(invalid.exit_code, 1);
  EXPECT_NE(invalid.out.find("refused (invalid_policy)"), std::string::npos) << invalid.out;
  EXPECT_TRUE(parse_table(invalid.out, "LOCATION ").contains("/filesystem/readable/0")) << invalid.out;

  captured missing = run_cli({"policy", "explain", dir.path() + "/nope.json"}, ws.path());
  EXPECT_EQ(missing.exit_code, 125);
  EXPECT_EQ(missing.err.rfind("cordon: io_error: ", 0), 0u) << missing.err;
  captured unknown = run_cli({"policy", "explain", "--profile", "no-such"}, ws.path());
  EXPECT_EQ(unknown.exit_code, 125);
  EXPECT_EQ(unknown.err.rfind("cordon: unknown_profile: ", 0), 0u) << unknown.err;
}

TEST(Explain, TakesTheCgroupParentARunWouldBeGiven) {
  // A directory that is no cgroup: the run would fall back to an rlimit and say why; explain says the same.
  temp_dir ws;
  const std::vector<std::string> flags = {"--memory", "1G", "--cgroup-parent", ws.path(), "--workspace", ws.path()};
  std::vector<std::string> args = {"policy", "explain"};
  args.insert(args.end(), flags.begin(), flags.end());
  captured explained = run_cli(args, ws.path());
  EXPECT_EQ(explained.exit_code, 1) << explained.out << explained.err;
  const std::string why = "cgroup parent " + ws.path() + " does not enable memory, pids and cpu in cgroup.subtree_control";
  EXPECT_NE(explained.out.find(why), std::string::npos) << explained.out;
  args = {"run"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--", "true"});
  captured ran = run_cli(args, ws.path());
  EXPECT_EQ(ran.exit_code, 125);
  EXPECT_NE(ran.err.find(why), std::string::npos) << ran.err;
}

TEST(Probe, HumanTableMatchesTheJson) {
  const nlohmann::json probe = probe_json();
  captured human = run_cli({"probe", "--human"}, "/");
  EXPECT_EQ(human.exit_code, probe["available"].get<bool>() ? 0 : 1);
  EXPECT_NE(human.out.find("backend:    " + probe["backend"].get<std::string>()), std::string::npos) << human.out;
  const auto table = parse_table(human.out, "CONTROL ");
  ASSERT_EQ(table.size(), probe["best"].size()) << human.out;
  for (const auto& [control, status] : probe["best"].items()) {
    ASSERT_TRUE(table.contains(control)) << control;
    EXPECT_EQ(table.at(control).level, status["level"].get<std::string>()) << control;
  }
  // Every blocker of the JSON is in the text: a control's as its row of the
  // control table (at the level available), anything else (the backend) as
  // a row of the blocker table, which is absent when there is no such blocker.
  const auto blockers = parse_table(human.out, "BLOCKER ");
  bool other = false;
  for (const auto& b : probe["blockers"]) {
    const std::string name = b["control"].get<std::string>();
    if (table.contains(name)) {
      EXPECT_EQ(table.at(name).level, b["available"].get<std::string>()) << b.dump();
    } else {
      other = true;
      EXPECT_TRUE(blockers.contains(name)) << b.dump();
    }
  }
  EXPECT_EQ(human.out.find("BLOCKER") != std::string::npos, other) << human.out;
}

}  // namespace
}  // namespace cordon::test

// Edge cases of the path model, each with its documented behaviour
// (docs/linux-backend.md, "Path edge cases").
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness.h"

namespace cordon::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string policy_file(const temp_dir& dir, const std::string& filesystem) {
  return dir.write("policy.json", R"({"schema_version": 1, "name": "edge", "filesystem": )" + filesystem +
                                      R"(, "environment": {"set": {"PATH": "/usr/bin:/bin"}}})");
}

TEST(PathEdges, ASymlinkInThePolicyIsResolvedOnceAndSaidSo) {
  temp_dir ws, data, dir;
  data.write("note.txt", "through the link\n");
  std::string link = ws.path() + "-link";
  ASSERT_EQ(::symlink(data.path().c_str(), link.c_str()), 0);
  auto r = run_cordon({"--policy", policy_file(dir, R"({"readable": ["{workspace}"], "writable": [")" + link + R"("]})")},
                      {"sh", "-c", "cat " + data.path() + "/note.txt && echo w > " + data.path() + "/new && echo wrote"},
                      ws.path());
  ::unlink(link.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("through the link\nwrote"), std::string::npos) << r.all();
  EXPECT_EQ(slurp(data.path() + "/new"), "w\n");
  EXPECT_NE(r.report["warnings"].dump().find("writable path " + link + " resolved to " + data.path()),
            std::string::npos)
      << r.report["warnings"].dump();
}

TEST(PathEdges, FilesWorkInEveryList) {
  temp_dir ws, other, dir;
  std::string readable = other.write("readable.txt", "r\n");
  std::string writable = other.write("writable.txt", "w\n");
  other.write("neighbour.txt", "n\n");
  ws.write("protected.txt", "p\n");
  ws.write("denied.txt", "d\n");
  auto r = run_cordon({"--policy", policy_file(dir, R"({"readable": ["{workspace}", ")" + readable + R"("],
        "writable": ["{workspace}", ")" + writable + R"("],
        "protected_read_only": ["{workspace}/protected.txt"], "denied": ["{workspace}/denied.txt"]})")},
                      {"sh", "-c",
                       "cat " + readable + "; echo more >> " + writable + " && echo appended; cat " + other.path() +
                           "/neighbour.txt; echo x >> protected.txt; cat denied.txt; echo free > free.txt && echo ok"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("r\nappended\n"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("neighbour.txt: No such file or directory"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("protected.txt: Read-only file system"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("denied.txt: Permission denied"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("ok"), std::string::npos);
  EXPECT_EQ(slurp(writable), "w\nmore\n");
  EXPECT_EQ(slurp(ws.path() + "/protected.txt"), "p\n");
}

TEST(PathEdges, AbsentDeniedPathIsSkippedOutsideWritableRootsAndRefusedInside) {
  temp_dir ws, dir;
  auto outside = run_cordon(
      {"--policy", policy_file(dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"],
        "denied": ["/usr/cordon-never-exists"]})")},
      {"sh", "-c", "echo ran"}, ws.path());
  EXPECT_EQ(outside.exit_code, 0) << outside.all();
  auto inside = run_cordon({"--policy", policy_file(dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"],
        "denied": ["{workspace}/later.key"]})")},
                           {"sh", "-c", "echo ran"}, ws.path());
  EXPECT_EQ(inside.exit_code, 125);
  EXPECT_NE(inside.err.find("denied path " + ws.path() + "/later.key does not exist and could be created"),
            std::string::npos)
      << inside.err;
}

TEST(PathEdges, AWorkspaceReachedThroughASymlinkRunsAtItsRealPath) {
  temp_dir real;
  real.write("in.txt", "real\n");
  std::string link = real.path() + "-ws";
  ASSERT_EQ(::symlink(real.path().c_str(), link.c_str()), 0);
  auto r = run_cordon({"--workspace", link}, {"sh", "-c", "pwd; cat in.txt; echo x > out.txt"}, "/");
  ::unlink(link.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("real\n"), std::string::npos) << r.all();
  EXPECT_EQ(slurp(real.path() + "/out.txt"), "x\n");
}

TEST(PathEdges, LongPathsSpacesAndNonUtf8Names) {
  temp_dir base;
  std::string deep = base.path();
  for (int i = 0; i < 40; ++i) deep += "/" + std::string(60, static_cast<char>('a' + i % 26));
  std::filesystem::create_directories(deep);  // about 2,450 bytes
  std::string odd = base.path() + "/with space and \xff\xfe bytes";
  std::filesystem::create_directories(odd);
  auto r = run_cordon({"--workspace", base.path()},
                      {"sh", "-c", "echo deep > '" + deep + "/f' && cat '" + deep + "/f'; echo odd > '" + odd +
                                       "/g' && cat '" + odd + "/g'"},
                      base.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "deep\nodd\n");
  // The report is still valid JSON (invalid UTF-8 in argv is replaced, not fatal).
  EXPECT_TRUE(r.report.is_object());
  EXPECT_EQ(r.report["outcome"], "completed");
}

TEST(PathEdges, SysAndProcPathsCanBeDenied) {
  temp_dir ws, dir;
  auto r = run_cordon({"--policy", policy_file(dir, R"({"readable": ["{workspace}"], "writable": ["{workspace}"],
        "denied": ["/sys/kernel", "/etc/hostname"]})")},
                      {"sh", "-c", "ls /sys/kernel 2>&1; cat /etc/hostname 2>&1; ls /sys/class >/dev/null && echo sys-ok"},
                      ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.all().find("cannot open directory '/sys/kernel': Permission denied"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("/etc/hostname: Permission denied"), std::string::npos) << r.all();
  EXPECT_NE(r.out.find("sys-ok"), std::string::npos);
}

}  // namespace
}  // namespace cordon::test

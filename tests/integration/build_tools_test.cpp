// Build tools used the way builds use them, inside the workspace, under the
// default profile: touch of an existing file (GNU touch reopens it on
// descriptor 0), make with stamp files, cp -p, tar x, install, rsync -a.
// Each asserts the result on the host (times, modes, contents), not just the
// exit status. stdin is a host file here (run_cordon), as in a CI job.
#include <fcntl.h>
#include <sys/stat.h>

#include <fstream>

#include "harness.h"

namespace cordon::test {
namespace {

struct stat stat_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

constexpr time_t kOld = 1000000000;

void make_old(const std::string& path) {
  timespec times[2] = {{kOld, 0}, {kOld, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(BuildTools, TouchOfAnExistingFileSetsItsTimes) {
  temp_dir ws;
  std::string stamp = ws.write("stamp", "");
  make_old(stamp);
  auto r = run_sh(ws.path(), "touch stamp && touch -d '2020-01-02 03:04:05 UTC' dated && echo touched");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "touched\n") << r.all();
  EXPECT_GT(stat_of(stamp).st_mtim.tv_sec, kOld) << "touch did not set the stamp's time";
  EXPECT_EQ(stat_of(ws.path() + "/dated").st_mtim.tv_sec, 1577934245);
  EXPECT_TRUE(r.report["violations"].empty()) << r.report.dump(2);
}

TEST(BuildTools, MakeWithStampFilesBuildsOnceThenIsUpToDate) {
  temp_dir ws;
  ws.write("input.txt", "data\n");
  ws.write("Makefile",
           "all: out.txt\n"
           "configure.stamp: input.txt\n\ttouch configure.stamp\n"
           "out.txt: configure.stamp\n\tcp input.txt out.txt\n\ttouch out.txt\n");
  make_old(ws.path() + "/input.txt");
  auto r = run_sh(ws.path(), "make && echo second && make");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("touch configure.stamp\ncp input.txt out.txt\ntouch out.txt\nsecond\n"), std::string::npos)
      << r.all();
  EXPECT_NE(r.out.find("Nothing to be done for 'all'"), std::string::npos) << r.all();
  std::ifstream out(ws.path() + "/out.txt");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "data");
}

TEST(BuildTools, CpPreservingTarExtractInstallAndRsyncKeepModesAndTimes) {
  temp_dir ws;
  std::string source = ws.write("src/tool.sh", "#!/bin/sh\necho tool\n");
  ws.write("src/data/file.txt", "payload\n");
  ASSERT_EQ(::chmod(source.c_str(), 0750), 0);
  make_old(source);
  make_old(ws.path() + "/src/data/file.txt");
  ASSERT_EQ(host_command({"tar", "-cf", ws.path() + "/src.tar", "-C", ws.path(), "src"}), 0);
  auto r = run_sh(ws.path(),
                  "set -e\n"
                  "cp -p src/tool.sh copied.sh\n"
                  "mkdir unpacked && tar -xf src.tar -C unpacked\n"
                  "install -m 0755 src/tool.sh installed.sh\n"
                  "install -d -m 0700 private\n"
                  "rsync -a src/ mirror/\n"
                  "echo done\n");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out, "done\n") << r.all();
  for (const char* copy : {"copied.sh", "unpacked/src/tool.sh", "mirror/tool.sh"}) {
    struct stat st = stat_of(ws.path() + "/" + copy);
    EXPECT_EQ(st.st_mode & 07777, 0750u) << copy;
    EXPECT_EQ(st.st_mtim.tv_sec, kOld) << copy << ": time not preserved";
  }
  for (const char* copy : {"unpacked/src/data/file.txt", "mirror/data/file.txt"}) {
    EXPECT_EQ(stat_of(ws.path() + "/" + copy).st_mtim.tv_sec, kOld) << copy;
  }
  EXPECT_EQ(stat_of(ws.path() + "/installed.sh").st_mode & 07777, 0755u);
  EXPECT_EQ(stat_of(ws.path() + "/private").st_mode & 07777, 0700u);
  EXPECT_TRUE(r.report["violations"].empty()) << r.report.dump(2);
}

}  // namespace
}  // namespace cordon::test

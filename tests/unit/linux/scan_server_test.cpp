// The pool's scan server (linux/scan_server.h): what it rescans is what the
// caller would rescan itself, and it keeps none of the caller's descriptors.
#include "linux/scan_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace cordon::linux_impl {
namespace {

namespace fs = std::filesystem;

TEST(ScanServer, RescansAsTheCallerWouldAndHoldsNoneOfItsDescriptors) {
  int pipe_ends[2];
  ASSERT_EQ(::pipe2(pipe_ends, O_CLOEXEC), 0);
  unique_fd read_end(pipe_ends[0]), write_end(pipe_ends[1]);
  auto server = scan_server::start();  // forked while the pipe's write end is open here
  ASSERT_TRUE(server);
  write_end.reset();
  pollfd p{read_end.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  char byte;
  EXPECT_EQ(::read(read_end.get(), &byte, 1), 0);  // EOF: the server did not keep the write end

  char tmpl[] = "/tmp/cordon-scanserver-XXXXXX";
  const std::string root = fs::canonical(::mkdtemp(tmpl)).string();
  fs::create_directories(root + "/a/.git/hooks");
  std::ofstream(root + "/a/.git/config") << "[core]\n\tfsmonitor = /bin/x\n";
  fs::create_directories(root + "/b");
  std::ofstream(root + "/b/.git") << "gitdir: ../a/.git\n";
  const vcs::vcs_scan walked = vcs::scan_vcs_metadata(root, "");
  const auto remote = server->rescan(root, "", walked);
  ASSERT_TRUE(remote.has_value());
  const vcs::vcs_scan local = vcs::rescan_places(root, "", walked);
  EXPECT_EQ(remote->protect, local.protect);
  EXPECT_EQ(remote->places, walked.places);
  EXPECT_EQ(remote->repositories, walked.repositories);
  ASSERT_EQ(remote->records.size(), local.records.size());
  for (const auto& [path, record] : local.records) {
    ASSERT_TRUE(remote->records.count(path)) << path;
    EXPECT_EQ(remote->records.at(path).keys, record.keys);
    EXPECT_TRUE(remote->records.at(path).metadata == record.metadata) << path;
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace cordon::linux_impl

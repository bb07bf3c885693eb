// The pool's scan server (linux/scan_server.h): what it rescans is what the
// caller would rescan itself, and it keeps none of the caller's descriptors.
#include "linux/scan_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
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

// What libuv does in a Node host: a child handler of pthread_atfork(3) that
// closes the descriptor numbers of its signal pipe and opens a new pipe
// there (uv__signal_global_reinit). The server closes those descriptors,
// so the numbers are its scan pipe's when it forks a scan child.
int host_pipe[2] = {-1, -1};
void reopen_host_pipe_in_child() {
  ::close(host_pipe[0]);  // NOLINT: what the host library does, by number
  ::close(host_pipe[1]);  // NOLINT
  if (::pipe2(host_pipe, O_CLOEXEC) == 0) (void)!::write(host_pipe[1], "*", 1);
}

TEST(ScanServer, AHostsAtforkHandlerDoesNotCloseTheScanPipe) {
  // At 4 and 5: the numbers the server's first scan pipe gets (its socket
  // is 3, everything above closed), as libuv's pipe has them in a Node host.
  int made[2];
  ASSERT_EQ(::pipe2(made, O_CLOEXEC), 0);
  unique_fd read_end(made[0]), write_end(made[1]);
  // Moved above 4 and 5 first (pipe2 may have given either), then onto them.
  unique_fd high_read(::fcntl(read_end.get(), F_DUPFD_CLOEXEC, 64));
  unique_fd high_write(::fcntl(write_end.get(), F_DUPFD_CLOEXEC, 64));
  ASSERT_TRUE(high_read && high_write);
  read_end.reset();
  write_end.reset();
  ASSERT_EQ(::dup3(high_read.get(), 4, O_CLOEXEC), 4);
  ASSERT_EQ(::dup3(high_write.get(), 5, O_CLOEXEC), 5);
  host_pipe[0] = 4;
  host_pipe[1] = 5;
  ASSERT_EQ(::pthread_atfork(nullptr, nullptr, &reopen_host_pipe_in_child), 0);
  auto server = scan_server::start();
  ASSERT_TRUE(server);
  char tmpl[] = "/tmp/cordon-scanserver-XXXXXX";
  const std::string root = fs::canonical(::mkdtemp(tmpl)).string();
  fs::create_directories(root + "/a/.git/hooks");
  const vcs::vcs_scan walked = vcs::scan_vcs_metadata(root, "");
  ASSERT_TRUE(walked.incomplete.empty());
  const auto remote = server->rescan(root, "", walked);
  ASSERT_TRUE(remote.has_value());
  // Before the fix: "the repository scan was ended by signal 13" (EPIPE on
  // the scan pipe the handler had closed in the scan's child).
  EXPECT_TRUE(remote->incomplete.empty()) << remote->incomplete.front().reason;
  EXPECT_EQ(remote->places, walked.places);
  fs::remove_all(root);
}

}  // namespace
}  // namespace cordon::linux_impl

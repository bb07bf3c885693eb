// The launch image (launch_image.h): what the supervisor builds is what PID 1
// reads back, relocated; a truncated or corrupt image is refused.
#include "linux/launch_image.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace cordon::linux_impl {
namespace {

linux_plan_payload sample_payload() {
  linux_plan_payload p;
  p.mounts.full_root = false;
  p.mounts.ops.push_back({mount_kind::bind_read_only, "/usr", {}, true, "platform default"});
  p.mounts.ops.push_back({mount_kind::symlink, "/bin", "usr/bin", false, "platform default"});
  p.mounts.ops.push_back({mount_kind::mask, "/dev/shm/x", {}, false, "denied"});
  p.landlock.abi = 4;
  p.landlock.restrict_tcp = true;
  p.landlock.rules = {{"/usr", landlock_access::read}, {"/work/ws", landlock_access::read_write}};
  p.seccomp.notify = true;
  p.seccomp.bpf = {{0x20, 0, 0, 4}, {0x06, 0, 0, 0x7fff0000}};
  p.rlimits.push_back({RLIMIT_NPROC, 77, "RLIMIT_NPROC"});
  p.loopback_up = true;
  return p;
}

// Sends the bytes through a socket pair (from a second thread when they do
// not fit its buffer) and receives them as PID 1 would.
int round_trip(const std::string& bytes, launch_image_view& view, bool close_early = false) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -2;
  std::size_t length = close_early ? bytes.size() / 2 : bytes.size();
  ssize_t sent = ::send(pair[0], bytes.data(), length, MSG_NOSIGNAL);
  ::close(pair[0]);
  if (sent != static_cast<ssize_t>(length)) {
    ::close(pair[1]);
    return -3;
  }
  int rc = receive_launch_image(pair[1], view);
  ::close(pair[1]);
  return rc;
}

TEST(LaunchImage, RoundTripsEveryField) {
  const auto payload = sample_payload();
  const std::vector<std::string> argv = {"sh", "-c", "echo hi"};
  const std::vector<std::string> envp = {"PATH=/usr/bin:/bin", "HOME=/tmp"};
  std::string bytes = build_launch_image(payload, argv, envp, "/work/ws");
  launch_image_view v;
  ASSERT_EQ(round_trip(bytes, v), 0);
  const image_header& h = *v.header;
  ASSERT_EQ(h.op_count, 3U);
  EXPECT_STREQ(v.string(v.ops[0].source), "/oldroot/usr");
  EXPECT_STREQ(v.string(v.ops[0].target), "/newroot/usr");
  EXPECT_EQ(static_cast<mount_kind>(v.ops[0].kind), mount_kind::bind_read_only);
  EXPECT_EQ(v.ops[0].directory, 1);
  EXPECT_EQ(v.ops[0].nodev, 1);
  EXPECT_STREQ(v.string(v.ops[1].link_target), "usr/bin");
  EXPECT_EQ(static_cast<mount_kind>(v.ops[1].kind), mount_kind::symlink);
  EXPECT_EQ(v.ops[2].nodev, 0);  // under /dev
  EXPECT_EQ(v.ops[2].directory, 0);
  ASSERT_EQ(h.landlock_rule_count, 2U);
  EXPECT_STREQ(v.landlock_rules[1].path, "/work/ws");
  EXPECT_EQ(v.landlock_rules[1].access, landlock_access::read_write);
  EXPECT_EQ(h.landlock_abi, 4);
  EXPECT_EQ(h.landlock_restrict_tcp, 1);
  EXPECT_EQ(h.landlock_scope, 0);
  ASSERT_EQ(h.bpf_length, 2U);
  EXPECT_EQ(v.bpf[1].k, 0x7fff0000U);
  EXPECT_EQ(h.seccomp_notify, 1);
  ASSERT_EQ(h.rlimit_count, 1U);
  EXPECT_EQ(v.rlimits[0].resource, RLIMIT_NPROC);
  EXPECT_EQ(v.rlimits[0].value, 77U);
  EXPECT_EQ(h.loopback_up, 1);
  EXPECT_EQ(h.full_root, 0);
  EXPECT_STREQ(v.string(h.working_directory), "/work/ws");
  ASSERT_EQ(h.argc, 3U);
  EXPECT_STREQ(v.argv[2], "echo hi");
  EXPECT_EQ(v.argv[3], nullptr);
  ASSERT_EQ(h.envc, 2U);
  EXPECT_STREQ(v.envp[1], "HOME=/tmp");
  EXPECT_EQ(v.envp[2], nullptr);
}

TEST(LaunchImage, LargerThanASocketBufferArrivesWhole) {
  std::vector<std::string> argv = {"true"};
  for (int i = 0; i < 20000; ++i) argv.push_back(std::string(40, static_cast<char>('a' + i % 26)));
  std::string bytes = build_launch_image(sample_payload(), argv, {}, "/");
  ASSERT_GT(bytes.size(), 512U * 1024);
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  pid_t writer = ::fork();
  if (writer == 0) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(pair[0], bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) ::_exit(1);
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(pair[0]);
  launch_image_view v;
  EXPECT_EQ(receive_launch_image(pair[1], v), 0);
  ::close(pair[1]);
  int status = 0;
  ::waitpid(writer, &status, 0);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(v.header->argc, argv.size());
  EXPECT_EQ(std::string(v.argv[20000]), argv[20000]);
}

TEST(LaunchImage, TruncatedOrCorruptImagesAreRefused) {
  std::string bytes = build_launch_image(sample_payload(), {"true"}, {}, "/");
  launch_image_view v;
  EXPECT_EQ(round_trip(bytes, v, /*close_early=*/true), -1);  // end of file: the supervisor gave up
  EXPECT_EQ(round_trip("", v), -1);
  std::string bad_magic = bytes;
  bad_magic[0] ^= 1;
  EXPECT_EQ(round_trip(bad_magic, v), EINVAL);
  std::string bad_offset = bytes;
  image_header h;
  std::memcpy(&h, bad_offset.data(), sizeof h);
  h.working_directory = h.size + 100;
  std::memcpy(bad_offset.data(), &h, sizeof h);
  EXPECT_EQ(round_trip(bad_offset, v), EINVAL);
  std::string bad_count = bytes;
  std::memcpy(&h, bad_count.data(), sizeof h);
  h.op_count = 1U << 30;
  std::memcpy(bad_count.data(), &h, sizeof h);
  EXPECT_EQ(round_trip(bad_count, v), EINVAL);
  std::string unterminated = bytes;
  unterminated.back() = 'x';
  EXPECT_EQ(round_trip(unterminated, v), EINVAL);
}

}  // namespace
}  // namespace cordon::linux_impl

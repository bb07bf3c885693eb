// The pool's scan server (linux/scan_server.h).
#include "linux/scan_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "posix/bounded_scan.h"
#include "posix/socket_io.h"
#include "posix/vcs_scan_codec.h"

namespace cordon::linux_impl {
namespace {

// One length-prefixed blob; at most the scan's memory bound.
bool send_blob(int fd, const std::string& blob) {
  const std::uint64_t size = blob.size();
  return send_all(fd, std::string(reinterpret_cast<const char*>(&size), sizeof size) + blob);
}

std::optional<std::string> receive_blob(int fd) {
  std::uint64_t size = 0;
  if (!read_exactly(fd, &size, sizeof size) || size > vcs::scan_memory_bound_bytes) {
    return std::nullopt;
  }
  std::string blob(size, '\0');
  if (!read_exactly(fd, blob.data(), blob.size())) return std::nullopt;
  return blob;
}

// The server: its socket on 3, /dev/null on 0-2, nothing else open; one
// request at a time (root, home, the earlier scan encoded), answered with
// the new scan encoded ("" when the request is malformed), until EOF.
[[noreturn]] void serve(int socket) {
  ::signal(SIGPIPE, SIG_IGN);
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) {
    if (null >= 0 && null != fd) ::dup2(null, fd);
  }
  if (::dup2(socket, 3) != 3) ::_exit(1);
  ::syscall(SYS_close_range, 4U, ~0U, 0);
  // The host's atfork handlers still name descriptors closed just above.
  vcs::fork_scans_without_atfork_handlers();
  for (;;) {
    auto root = receive_blob(3);
    if (!root) ::_exit(0);
    auto home = receive_blob(3);
    auto earlier = home ? receive_blob(3) : std::nullopt;
    auto decoded = earlier ? vcs::decode_scan(*earlier) : std::nullopt;
    std::string answer;
    if (decoded) answer = vcs::encode_scan(vcs::rescan_places(*root, *home, *decoded));
    if (!home || !earlier || !send_blob(3, answer)) ::_exit(0);
  }
}

}  // namespace

std::unique_ptr<scan_server> scan_server::start() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return nullptr;
  unique_fd ours(pair[0]), theirs(pair[1]);
  const pid_t pid = ::fork();
  if (pid < 0) return nullptr;
  if (pid == 0) serve(theirs.get());
  std::unique_ptr<scan_server> server(new scan_server());
  server->socket_ = std::move(ours);
  server->pid_ = pid;
  return server;
}

scan_server::~scan_server() {
  socket_.reset();
  if (pid_ > 0) {
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

std::optional<vcs::vcs_scan> scan_server::rescan(const std::string& root, const std::string& home,
                                                 const vcs::vcs_scan& earlier) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return std::nullopt;
  vcs::vcs_scan places;  // only what rescan_places reads
  places.places = earlier.places;
  places.entries_seen = earlier.entries_seen;
  std::optional<vcs::vcs_scan> scan;
  if (send_blob(socket_.get(), root) && send_blob(socket_.get(), home) &&
      send_blob(socket_.get(), vcs::encode_scan(places))) {
    if (auto answer = receive_blob(socket_.get()); answer && !answer->empty()) scan = vcs::decode_scan(*answer);
  }
  if (!scan) failed_ = true;  // a request half sent or answered leaves the stream unusable
  return scan;
}

}  // namespace cordon::linux_impl

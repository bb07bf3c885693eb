// scan_server.h — a small process a pool's process forks before it opens
// its watch sets, which runs the scans that need no listings
// (vcs::rescan_places) for it (docs/deferred-execution.md, "The pool's
// watch sets"). Each scan still runs in a memory-bounded child
// (posix/bounded_scan.h), forked from this small process: a fork of the
// pool's process itself, which holds the sets (20 MB at 150,000
// directories), costs milliseconds per scan, twice per call. The server
// holds no descriptor but its socket (every other one is closed, its
// standard ones are /dev/null: no prepared sandbox's socket or pipe of the
// caller stays open in it), and leaves when the socket closes. Linux only.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "posix/unique_fd.h"
#include "posix/vcs_scan.h"

namespace cordon::linux_impl {

class scan_server {
 public:
  // Forks the server; nullptr when it cannot (the caller rescans itself).
  static std::unique_ptr<scan_server> start();
  // Closes the socket (the server leaves) and reaps it.
  ~scan_server();
  scan_server(const scan_server&) = delete;
  scan_server& operator=(const scan_server&) = delete;

  // vcs::rescan_places(root, home, earlier) run by the server; nullopt when
  // the server failed or its answer is malformed (the caller then rescans
  // itself; once failed, the server is not asked again). Thread-safe.
  std::optional<vcs::vcs_scan> rescan(const std::string& root, const std::string& home, const vcs::vcs_scan& earlier);

 private:
  scan_server() = default;
  std::mutex mutex_;
  unique_fd socket_;
  pid_t pid_ = -1;
  bool failed_ = false;
};

}  // namespace cordon::linux_impl

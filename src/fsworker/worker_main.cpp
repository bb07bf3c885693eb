// cordon-fs-worker — the confined filesystem worker (docs/fs-worker.md). Run
// by the client inside the sandbox as the plan's command:
//   cordon-fs-worker --config JSON
// It links statically, so inside the sandbox it needs nothing but its own
// file: no shared library, no shell, no environment variable.
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "fsworker/worker.h"

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--config") != 0) {
    std::fprintf(stderr, "usage: cordon-fs-worker --config JSON (started by the cordon fs client)\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a gone client is a failed write, then exit
  ::umask(022);
  auto config = cordon::fsworker::worker_config_from_json(argv[2]);
  if (!config) {
    std::fprintf(stderr, "cordon-fs-worker: %s: %s\n", config.error().code.c_str(), config.error().message.c_str());
    return 2;
  }
  auto paths = cordon::fsworker::resolver::open(*config);
  if (!paths) {
    std::fprintf(stderr, "cordon-fs-worker: %s: %s\n", paths.error().code.c_str(), paths.error().message.c_str());
    return 2;
  }
  cordon::fsworker::worker w(std::move(*paths), config->limits);
  return cordon::fsworker::serve(w, 0, 1, config->limits.max_request_bytes);
}

// fs_worker_bench — requests per second of the filesystem worker
// (docs/fs-worker.md): a 4 KiB read and an edit of a 100 KiB file, through
// the confined worker (a pipe to a process in the sandbox) and in-process
// (the same worker code called directly, no sandbox, no pipe).
//   cordon_fs_worker_bench [SECONDS_PER_CASE]   (default 2)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "cordon/cordon.h"
#include "cordon/fs_worker.h"
#include "fsworker/worker.h"

namespace {

double rate(double seconds, const std::function<bool(int)>& one) {
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  int n = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (!one(n)) {
      std::fprintf(stderr, "request %d failed\n", n);
      std::exit(1);
    }
    ++n;
  }
  return n / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// An edit that is always valid: flip a marker back and forth.
std::string edit_request(int n) {
  return n % 2 == 0 ? R"({"op":"edit","path":"big.txt","old_string":"MARK-A","new_string":"MARK-B"})"
                    : R"({"op":"edit","path":"big.txt","old_string":"MARK-B","new_string":"MARK-A"})";
}
const char* kRead = R"({"op":"read","path":"small.txt"})";

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  char tmpl[] = "/var/tmp/cordon-fsw-bench-XXXXXX";
  const std::string ws = ::mkdtemp(tmpl);
  std::ofstream(ws + "/small.txt") << std::string(4096, 'r');
  std::string big(100 * 1024, 'x');
  big.replace(50 * 1024, 6, "MARK-A");
  std::ofstream(ws + "/big.txt") << big;

  auto policy = cordon::builtin_profile("workspace-write");
  auto backend = cordon::make_host_backend();
  const std::string worker_path = cordon::find_fs_worker("");
  cordon::compile_options options;
  options.workspace = ws;
  auto compiled = backend->compile(cordon::with_fs_worker_readable(*policy, worker_path), options);
  if (!compiled) {
    std::fprintf(stderr, "%s\n", compiled.failure().describe().c_str());
    return 1;
  }
  auto started = cordon::fs_worker::start(*compiled.plan());
  if (!started) {
    std::fprintf(stderr, "%s\n", started.error_value().describe().c_str());
    return 1;
  }
  auto ok = [](const cordon::result<std::string>& r) {
    if (r && r->find("\"ok\":true") != std::string::npos) return true;
    std::fprintf(stderr, "%s\n", r ? r->c_str() : r.error_value().describe().c_str());
    return false;
  };
  const double w_read = rate(seconds, [&](int) { return ok(started->call(kRead)); });
  const double w_edit = rate(seconds, [&](int n) { return ok(started->call(edit_request(n))); });
  started->finish();
  std::ofstream(ws + "/big.txt", std::ios::trunc) << big;  // the marker back to MARK-A

  cordon::fsworker::worker_config config;
  config.workspace = ws;
  config.mounts = {{"rw-bind", ws, "writable"}};
  auto paths = cordon::fsworker::resolver::open(config);
  cordon::fsworker::worker local(std::move(*paths), config.limits);
  auto local_ok = [](const std::string& r) {
    if (r.find("\"ok\":true") != std::string::npos) return true;
    std::fprintf(stderr, "%s\n", r.c_str());
    return false;
  };
  const double l_read = rate(seconds, [&](int) { return local_ok(local.handle_line(kRead)); });
  const double l_edit = rate(seconds, [&](int n) { return local_ok(local.handle_line(edit_request(n))); });

  std::printf("case                 worker req/s   in-process req/s   ratio\n");
  std::printf("read 4 KiB           %12.0f   %16.0f   %5.2f\n", w_read, l_read, w_read / l_read);
  std::printf("edit 100 KiB         %12.0f   %16.0f   %5.2f\n", w_edit, l_edit, w_edit / l_edit);
  std::filesystem::remove_all(ws);
  return 0;
}

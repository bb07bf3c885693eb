// capped_run.cpp — output relayed within a cap (capped_run.h).
#include "cli/capped_run.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <string>

namespace cordon::cli {
namespace {

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed stdout: the rest is dropped, as the command's own write would fail
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

capture_options capped_relay::options() {
  capture_options o;
  o.max_output = max_output_;
  o.on_output = [this](int stream, std::string_view bytes) {
    std::uint64_t& written = written_[stream - 1];
    const std::uint64_t head = max_output_ / 2;
    if (written >= head) return;
    const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(head - written, bytes.size()));
    write_all(stream, bytes.substr(0, take));
    written += take;
  };
  return o;
}

void capped_relay::finish(const captured_output& out, const captured_output& err) {
  std::cout.flush();
  const captured_output* streams[2] = {&out, &err};
  for (int i = 0; i < 2; ++i) {
    const captured_output& s = *streams[i];
    if (s.truncated()) {
      std::cerr << "\ncordon: --max-output: " << s.dropped_bytes << " of " << s.total_bytes << " bytes of "
                << (i == 0 ? "stdout" : "stderr") << " dropped here (the first and the last "
                << max_output_ / 2 << " kept)\n";
      std::cerr.flush();
    }
    const auto from = static_cast<std::size_t>(std::min<std::uint64_t>(written_[i], s.data.size()));
    write_all(i + 1, std::string_view(s.data).substr(from));
  }
}

run_report run_capped(const sandbox_plan& plan, const launch_request& request, std::uint64_t max_output) {
  run_request r;
  r.launch = request;
  r.stdout_spec = stdio_spec::pipe();
  r.stderr_spec = stdio_spec::pipe();
  auto started = start_run(plan, r);
  if (!started) {
    run_report failed;
    failed.failure = started.error_value();
    return failed;
  }
  capped_relay relay(max_output);
  captured_run captured = capture_run(*started, relay.options());
  relay.finish(captured.stdout_data, captured.stderr_data);
  captured.report.json = report_with_output(captured.report.json, captured, max_output);
  return std::move(captured.report);
}

governance::execution_result execute_capped(governance::execution_runtime& runtime,
                                            const governance::capability_request& request,
                                            const governance::execution_context& context, std::uint64_t max_output) {
  capped_relay relay(max_output);
  governance::tool_io io;
  io.stdin_fd = STDIN_FILENO;
  io.max_output = max_output;
  io.on_output = relay.options().on_output;
  auto r = runtime.execute_tool(request, context, io);
  relay.finish(r.stdout_data, r.stderr_data);
  return r;
}

}  // namespace cordon::cli

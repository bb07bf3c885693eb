// A program built against an installed cordon (tests/consumer/, docs/packaging.md):
// compiles the built-in profile workspace-write and runs one confined command
// with the run API, which starts the installed cordon-supervisor. Prints the
// command's output and its exit code; exits 0 when the confined write to /etc
// was refused and the allowed echo worked.
#include <unistd.h>

#include <cordon/cordon.h>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const std::string workspace = argc > 1 ? argv[1] : "/tmp";
  auto policy = cordon::builtin_profile("workspace-write");
  if (!policy) {
    std::cerr << policy.error_value().describe() << "\n";
    return 1;
  }
  auto backend = cordon::make_host_backend();
  cordon::compile_options options;
  options.workspace = workspace;
  auto compiled = backend->compile(*policy, options);
  if (!compiled) {
    std::cerr << compiled.failure().describe() << "\n";
    return 1;
  }
  cordon::run_request request;
  request.launch.argv = {"/bin/sh", "-c", "echo confined; touch /etc/cordon-consumer 2>/dev/null && exit 3; exit 0"};
  request.stdout_spec = cordon::stdio_spec::pipe();
  auto run = cordon::start_run(*compiled.plan(), request);
  if (!run) {
    std::cerr << run.error_value().describe() << "\n";
    return 1;
  }
  std::string out;
  char buffer[256];
  for (ssize_t n; (n = ::read(run->stdout_fd(), buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  cordon::run_report report = run->wait();
  const int code = cordon::exit_code_for(report);
  std::cout << "output: " << out << "exit: " << code << "\n";
  return out == "confined\n" && code == 0 ? 0 : 1;
}

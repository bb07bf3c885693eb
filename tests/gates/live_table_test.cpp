// The live table of `cordon gate run` (src/gates/live_table.h): its rows, and
// the real CLI on a pseudo-terminal redrawing it, with and without NO_COLOR;
// on a pipe the plain lines stay.
#include "gates/live_table.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "cli_capture.h"
#include "harness.h"

namespace cordon::gates {
namespace {

std::vector<gate_state> states(const std::vector<gate_spec>& specs) {
  std::vector<gate_state> out(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) out[i].spec = &specs[i];
  return out;
}

TEST(LiveTable, RowsShowStateElapsedAndWhatWasBelowEnforced) {
  std::vector<gate_spec> specs(3);
  specs[0].name = "build";
  specs[1].name = "unit-tests";
  specs[2].name = "lint";
  auto g = states(specs);
  g[0].phase = gate_phase::finished, g[0].launched = true, g[0].outcome = gate_outcome::passed;
  g[0].duration_ms = 1500, g[0].below_enforced = {"memory=partial", "cpu=partial"};
  g[1].phase = gate_phase::running, g[1].launched = true, g[1].started_ms = 1000;
  std::string text = render_gate_table(g, 3250, false, 0);
  EXPECT_EQ(text,
            "GATE        STATE    ELAPSED  BELOW ENFORCED\n"
            "build       passed   1.5s     memory=partial,cpu=partial\n"
            "unit-tests  running  2.2s\n"
            "lint        pending  -\n");
  EXPECT_EQ(text.find('\033'), std::string::npos);
  std::string colored = render_gate_table(g, 3250, true, 0);
  EXPECT_NE(colored.find("\033[32mpassed\033[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\033[36mrunning\033[0m"), std::string::npos);
  // Cut to the terminal's width, so that a redraw covers exactly what it wrote.
  for (std::size_t start = 0, end; (end = render_gate_table(g, 3250, false, 20).find('\n', start)) != std::string::npos;
       start = end + 1) {
    EXPECT_LT(end - start, 20u);
  }
}

TEST(LiveTable, RedrawMovesTheCursorOverThePreviousTable) {
  std::vector<gate_spec> specs(2);
  specs[0].name = "a";
  specs[1].name = "b";
  auto g = states(specs);
  std::ostringstream out;
  live_table table(out, false, 80);
  table.draw(g, 0);
  EXPECT_EQ(out.str().find("\033[3A"), std::string::npos);
  table.draw(g, 10);
  EXPECT_NE(out.str().find("\033[3A\r\033[J"), std::string::npos);
}

// Runs `cordon gate run` with its stdout on a pseudo-terminal; returns all it wrote there.
std::string run_on_terminal(const std::string& manifest, const std::string& out_dir, bool no_color) {
  int master = -1;
  winsize size{};
  size.ws_col = 100;
  size.ws_row = 40;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  if (pid == 0) {
    if (no_color) ::setenv("NO_COLOR", "1", 1);
    else ::unsetenv("NO_COLOR");
    ::setenv("TERM", "xterm", 1);
    std::string cli = test::cordon_cli();
    ::execl(cli.c_str(), cli.c_str(), "gate", "run", manifest.c_str(), "--out", out_dir.c_str(), nullptr);
    ::_exit(127);
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0) break;
    ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO once the child side is closed
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return text;
}

constexpr const char* kTwoGates = R"([[gate]]
name = "quick"
cmd = ["/bin/true"]

[[gate]]
name = "slower"
cmd = ["/bin/sleep", "1.2"]
needs = ["quick"]
)";

TEST(LiveTable, TheCliDrawsItOnATerminalAndHonoursNoColor) {
  test::temp_dir ws;
  std::string manifest = ws.write("gates.toml", kTwoGates);
  std::string text = run_on_terminal(manifest, ws.path() + "/rec", false);
  EXPECT_NE(text.find("GATE"), std::string::npos) << text;
  EXPECT_NE(text.find("BELOW ENFORCED"), std::string::npos);
  EXPECT_NE(text.find("running"), std::string::npos);
  EXPECT_NE(text.find("\033[3A"), std::string::npos) << "no redraw";  // header + two rows
  EXPECT_NE(text.find("\033[32mpassed"), std::string::npos);
  EXPECT_EQ(text.find("gate quick passed"), std::string::npos) << "plain lines on a terminal";

  std::string plain = run_on_terminal(manifest, ws.path() + "/rec2", true);
  EXPECT_NE(plain.find("\033[3A"), std::string::npos);
  EXPECT_EQ(plain.find("\033[32m"), std::string::npos) << "colour despite NO_COLOR";
  EXPECT_EQ(plain.find("\033[0m"), std::string::npos);
  EXPECT_NE(plain.find("passed"), std::string::npos);
}

TEST(LiveTable, APipeGetsPlainLines) {
  test::temp_dir ws;
  std::string manifest = ws.write("gates.toml", kTwoGates);
  auto r = test::run_cli({"gate", "run", manifest, "--out", ws.path() + "/rec"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gate quick passed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

}  // namespace
}  // namespace cordon::gates

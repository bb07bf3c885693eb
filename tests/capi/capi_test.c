/* Tests of the C API (include/cordon/cordon_c.h), written in C: real
 * confined runs through libcordon_c.so and the cordon-supervisor helper. The
 * allowed thing works and the forbidden thing fails with its exact errno.
 *
 * Usage: capi_test [--junit FILE] [--probe PATH]
 *   --probe  the capi-probe program (copied into each test's workspace);
 *            default $CORDON_CAPI_PROBE, else the build tree's.
 * Exit status 0 when every test passed, 77 when none failed but some were
 * skipped, else 1. Each test prints "ok NAME",
 * "FAIL NAME: why" or "skip NAME: why". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cordon/cordon_c.h"

/* ---- a small test harness with JUnit output ---- */

#define MAX_TESTS 64
struct outcome {
  const char* name;
  int failed, skipped;
  char why[512];
  double seconds;
};
static struct outcome results[MAX_TESTS];
static int result_count;
static struct outcome* current;
static const char* probe_program;

static void fail_test(const char* format, ...) {
  if (current->failed) return; /* the first failure says the most */
  current->failed = 1;
  va_list args;
  va_start(args, format);
  vsnprintf(current->why, sizeof current->why, format, args);
  va_end(args);
}

static void skip_test(const char* why) {
  current->skipped = 1;
  snprintf(current->why, sizeof current->why, "%s", why);
}

#define CHECK(cond, ...)         \
  do {                           \
    if (!(cond)) {               \
      fail_test(__VA_ARGS__);    \
      goto done;                 \
    }                            \
  } while (0)

static int contains(const char* text, const char* needle) { return text != NULL && strstr(text, needle) != NULL; }

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run_test(const char* name, void (*body)(void)) {
  current = &results[result_count++];
  current->name = name;
  double start = now_seconds();
  body();
  current->seconds = now_seconds() - start;
  if (current->failed) {
    printf("FAIL %s: %s\n", name, current->why);
  } else if (current->skipped) {
    printf("skip %s: %s\n", name, current->why);
  } else {
    printf("ok %s\n", name);
  }
  fflush(stdout);
}

static void xml_escaped(FILE* out, const char* text) {
  for (; *text != '\0'; ++text) {
    switch (*text) {
      case '<': fputs("&lt;", out); break;
      case '>': fputs("&gt;", out); break;
      case '&': fputs("&amp;", out); break;
      case '"': fputs("&quot;", out); break;
      default: fputc(*text, out);
    }
  }
}

static int write_junit(const char* path, int failures, int skips) {
  FILE* out = fopen(path, "w");
  if (out == NULL) return -1;
  /* The counts on <testsuites> too: scripts/test.sh's summary reads them there. */
  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
          result_count, failures, skips);
  fprintf(out, "<testsuite name=\"capi\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", result_count, failures, skips);
  for (int i = 0; i < result_count; ++i) {
    fprintf(out, "  <testcase classname=\"capi\" name=\"%s\" time=\"%.3f\">", results[i].name, results[i].seconds);
    if (results[i].failed || results[i].skipped) {
      fputs(results[i].failed ? "<failure message=\"" : "<skipped message=\"", out);
      xml_escaped(out, results[i].why);
      fputs("\"/>", out);
    }
    fputs("</testcase>\n", out);
  }
  fputs("</testsuite>\n</testsuites>\n", out);
  return fclose(out);
}

/* ---- fixtures ---- */

static char workspace[64];

/* A fresh workspace with the probe program in it, and compile options naming it. */
static int make_workspace(char* options, size_t size) {
  snprintf(workspace, sizeof workspace, "/tmp/cordon-capi-XXXXXX");
  if (mkdtemp(workspace) == NULL) return -1;
  char command[512];
  snprintf(command, sizeof command, "cp '%s' '%s/probe' && chmod 755 '%s/probe'", probe_program, workspace, workspace);
  if (system(command) != 0) return -1;
  snprintf(options, size, "{\"workspace\": \"%s\"}", workspace);
  return 0;
}

static void remove_workspace(void) {
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", workspace);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", workspace);
}

/* Compiles a built-in profile for the workspace; NULL on error, with the
 * reason in compile_failure. */
static char compile_failure[512];
static cordon_plan* compile_profile_quietly(const char* profile, const char* options) {
  char* policy = NULL;
  char* error = NULL;
  cordon_plan* plan = NULL;
  compile_failure[0] = '\0';
  if (cordon_profile_json(profile, &policy, &error) != CORDON_OK || cordon_compile(policy, options, &plan, &error) != CORDON_OK) {
    snprintf(compile_failure, sizeof compile_failure, "%s: %s", profile, error != NULL ? error : "?");
  }
  cordon_string_free(policy);
  cordon_string_free(error);
  return plan;
}

/* Reads a descriptor to its end into buffer (NUL-terminated). */
static void read_all(int fd, char* buffer, size_t size) {
  size_t used = 0;
  ssize_t n;
  while (used + 1 < size && (n = read(fd, buffer + used, size - 1 - used)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    used += (size_t)n;
  }
  buffer[used] = '\0';
}

/* Starts argv with stdout on a pipe (in a sandbox of `pool` when it is not
 * NULL, else under plan), collects stdout and waits. */
static cordon_run* collect_from(cordon_plan* plan, cordon_pool* pool, const char* const* argv, char* out, size_t size) {
  cordon_run_request request = {0};
  request.argv = argv;
  request.stdout_io.mode = CORDON_STDIO_PIPE;
  cordon_run* run = NULL;
  char* error = NULL;
  int code = pool != NULL ? cordon_pool_start(pool, &request, &run, &error) : cordon_run_start(plan, &request, &run, &error);
  if (code != CORDON_OK) {
    fail_test("%s: %s", pool != NULL ? "cordon_pool_start" : "cordon_run_start", error);
    cordon_string_free(error);
    return NULL;
  }
  read_all(cordon_run_fd(run, 1), out, size);
  if (cordon_run_wait(run, -1) != CORDON_RUN_ENDED) fail_test("cordon_run_wait(-1) did not end the run");
  return run;
}

static cordon_run* run_collect(cordon_plan* plan, const char* const* argv, char* out, size_t size) {
  return collect_from(plan, NULL, argv, out, size);
}

/* What every confined-run test starts from: a workspace with the probe,
 * the workspace-write profile compiled for it; released after each test. */
static struct {
  cordon_plan* plan;
  cordon_run* run;
  char* error;
  char* report;
} fx;

static void run_confined_test(const char* name, void (*body)(void)) {
  char options[128];
  memset(&fx, 0, sizeof fx);
  if (make_workspace(options, sizeof options) != 0) {
    current = &results[result_count++];
    current->name = name;
    fail_test("workspace: %s", strerror(errno));
    printf("FAIL %s: %s\n", name, current->why);
    return;
  }
  fx.plan = compile_profile_quietly("workspace-write", options);
  run_test(name, body);
  cordon_string_free(fx.error);
  cordon_string_free(fx.report);
  cordon_run_free(fx.run);
  cordon_plan_free(fx.plan);
  remove_workspace();
}

/* ---- tests ---- */

static void test_versions_and_codes(void) {
  CHECK(cordon_abi_version() == CORDON_ABI_VERSION, "abi %u", cordon_abi_version());
  CHECK(cordon_library_version() != NULL && strchr(cordon_library_version(), '.') != NULL, "library version");
  CHECK(strcmp(cordon_error_code_name(CORDON_OK), "ok") == 0, "name of 0");
  CHECK(strcmp(cordon_error_code_name(CORDON_E_ENFORCEMENT_UNAVAILABLE), "enforcement_unavailable") == 0, "name 7");
  CHECK(strcmp(cordon_error_code_name(CORDON_E_INVALID_DESTINATION), "invalid_destination") == 0, "name 17");
  CHECK(strcmp(cordon_error_code_name(CORDON_E_PLAN_RECORDED_FACTS), "plan_recorded_facts") == 0, "name 18");
  CHECK(cordon_error_code_name(CORDON_E_PLAN_RECORDED_FACTS + 1) == NULL, "past the last code");
  CHECK(cordon_error_code_name(-1) == NULL, "negative code");
done:;
}

static void test_unknown_profile(void) {
  char* policy = (char*)"untouched";
  char* error = NULL;
  int code = cordon_profile_json("no-such-profile", &policy, &error);
  CHECK(code == CORDON_E_UNKNOWN_PROFILE, "code %d", code);
  CHECK(policy == NULL, "policy_json set on failure");
  CHECK(contains(error, "\"code\":\"unknown_profile\""), "error %s", error);
  cordon_string_free(error);
  CHECK(cordon_profile_json(NULL, NULL, NULL) == CORDON_E_USAGE_ERROR, "NULL out");
done:;
}

static void test_compile_errors_are_typed(void) {
  cordon_plan* plan = NULL;
  char* error = NULL;
  int code = cordon_compile("{not json", NULL, &plan, &error);
  CHECK(code == CORDON_E_PARSE_ERROR && plan == NULL, "parse: code %d", code);
  CHECK(contains(error, "\"location\":\"line 1, column 3\""), "parse location: %s", error);
  cordon_string_free(error);
  error = NULL;
  code = cordon_compile("{\"schema_version\": 1, \"filesystem\": {\"raed\": \"all\"}}", NULL, &plan, &error);
  CHECK(code == CORDON_E_INVALID_POLICY, "invalid: code %d", code);
  CHECK(contains(error, "\"code\":\"invalid_policy\"") && contains(error, "\"location\":\"/filesystem/raed\""),
        "invalid: %s", error);
  cordon_string_free(error);
  error = NULL;
  code = cordon_compile("{\"schema_version\": 1}", "{\"workspce\": \"/tmp\"}", &plan, &error);
  CHECK(code == CORDON_E_USAGE_ERROR && contains(error, "unknown field workspce"), "options: %d %s", code, error);
  cordon_string_free(error);
  error = NULL;
  code = cordon_compile(NULL, NULL, &plan, &error);
  CHECK(code == CORDON_E_USAGE_ERROR, "NULL policy: %d", code);
done:
  cordon_string_free(error);
}

static void test_refusal_carries_blockers(void) {
  /* Host execution enforces nothing: a policy that requires its controls is
   * refused, with one typed blocker per control. */
  char options[128];
  char* policy = NULL;
  char* error = NULL;
  cordon_plan* plan = NULL;
  CHECK(make_workspace(options, sizeof options) == 0, "workspace");
  snprintf(options, sizeof options, "{\"workspace\": \"%s\", \"sandbox\": \"forbid\"}", workspace);
  CHECK(cordon_profile_json("workspace-write", &policy, &error) == CORDON_OK, "profile");
  /* Gate 3: the profile asks for an OS sandbox; host execution is none. */
  int code = cordon_compile(policy, options, &plan, &error);
  CHECK(code == CORDON_E_ISOLATION_INSUFFICIENT && plan == NULL, "code %d: %s", code, error);
  CHECK(contains(error, "{\"subject\":\"isolation\",\"control\":\"isolation\",\"required\":\"os_sandbox\","
                        "\"available\":\"none\""),
        "isolation blocker: %s", error);
  cordon_string_free(error);
  error = NULL;
  /* Gate 4: with isolation "none" accepted, each required control is a blocker. */
  char* at = strstr(policy, "\"isolation\": \"os_sandbox\"");
  CHECK(at != NULL, "the profile has no isolation field: %s", policy);
  memcpy(at, "\"isolation\": \"none\"      ", strlen("\"isolation\": \"os_sandbox\""));
  code = cordon_compile(policy, options, &plan, &error);
  CHECK(code == CORDON_E_ENFORCEMENT_UNAVAILABLE && plan == NULL, "code %d: %s", code, error);
  CHECK(contains(error, "{\"subject\":\"control\",\"control\":\"filesystem_write\",\"required\":\"enforced\","
                        "\"available\":\"not_enforced\""),
        "control blockers: %s", error);
  char* explained = NULL;
  char* explain_error = NULL;
  code = cordon_explain(policy, options, &explained, &explain_error);
  CHECK(code == CORDON_OK && explain_error == NULL, "explain code %d", code);
  CHECK(contains(explained, "\"compiles\": false") && contains(explained, "\"code\": \"enforcement_unavailable\"") &&
            contains(explained, "\"subject\": \"control\""),
        "explain: %s", explained);
  cordon_string_free(explained);
done:
  cordon_string_free(policy);
  cordon_string_free(error);
  remove_workspace();
}

static void test_explain_and_probe(void) {
  char* probe = NULL;
  char* error = NULL;
  CHECK(cordon_probe(&probe, &error) == CORDON_OK, "probe: %s", error);
  CHECK(contains(probe, "\"backend\": \"linux-namespaces\"") && contains(probe, "\"best\""), "probe: %s", probe);
  if (!contains(probe, "\"available\": true")) {
    skip_test("the Linux backend is not available on this host (cordon probe)");
    goto done;
  }
  char* policy = NULL;
  CHECK(cordon_profile_json("read-only", &policy, &error) == CORDON_OK, "profile");
  char* explained = NULL;
  char options[128];
  CHECK(make_workspace(options, sizeof options) == 0, "workspace");
  int code = cordon_explain(policy, options, &explained, &error);
  cordon_string_free(policy);
  CHECK(code == CORDON_OK, "explain %d", code);
  CHECK(contains(explained, "\"compiles\": true") && contains(explained, "\"filesystem_write\": {"),
        "explain: %s", explained);
  CHECK(contains(explained, "\"fingerprint\": \"sha256:"), "fingerprint: %s", explained);
  cordon_string_free(explained);
  remove_workspace();
done:
  cordon_string_free(probe);
  cordon_string_free(error);
}

/* The allowed write lands in the workspace; writes to a host directory
 * outside it and to /etc fail with their exact errno; a denied read too. */
static void test_confined_run_allowed_and_forbidden(void) {
  char outside[64] = "/var/tmp/cordon-capi-outside-XXXXXX";
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  CHECK(mkdtemp(outside) != NULL, "outside dir");
  chmod(outside, 0777);
  char inside_file[128], outside_file[128], probe[128];
  snprintf(inside_file, sizeof inside_file, "%s/made-inside", workspace);
  snprintf(outside_file, sizeof outside_file, "%s/made-outside", outside);
  snprintf(probe, sizeof probe, "%s/probe", workspace);
  const char* argv[] = {probe, "write", inside_file, "write", outside_file, "write", "/etc/cordon-capi-probe",
                        "read", "/etc/shadow", "read", inside_file, NULL};
  char out[4096];
  fx.run = run_collect(fx.plan, argv, out, sizeof out);
  CHECK(fx.run != NULL, "start");
  cordon_run_status status;
  CHECK(cordon_run_status_get(fx.run, &status) == CORDON_OK, "status");
  CHECK(status.ran && status.exited && status.exit_code == 0 && status.error_code == CORDON_OK, "exit %d: %s",
        status.exit_code, out);
  char expected[512];
  /* Creating a file in /etc meets the read-only mount (EROFS) before any
   * permission check, for root and every other user alike. */
  snprintf(expected, sizeof expected, "write OK\nwrite ENOENT\nwrite EROFS\nread EACCES\nread OK probe\n");
  CHECK(strcmp(out, expected) == 0, "probe said:\n%s\nexpected:\n%s", out, expected);
  CHECK(access(inside_file, F_OK) == 0, "the allowed file is not on the host");
  CHECK(access(outside_file, F_OK) != 0 && errno == ENOENT, "the forbidden file exists on the host");
  fx.report = cordon_run_report_json(fx.run);
  CHECK(contains(fx.report, "\"outcome\": \"completed\"") && contains(fx.report, "\"schema\": 1"), "report: %.300s", fx.report);
  CHECK(cordon_run_error_json(fx.run) == NULL, "error JSON for a run that ran");
done:
  rmdir(outside);
}

static void test_stdin_pipe_and_fd(void) {
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  /* stdout to a file descriptor of ours, stdin from a pipe. */
  char out_path[128];
  snprintf(out_path, sizeof out_path, "%s/out.txt", workspace);
  int out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  CHECK(out_fd >= 0, "open out");
  const char* argv[] = {"/bin/sh", "-c", "tr a-z A-Z", NULL};
  cordon_run_request request = {0};
  request.argv = argv;
  request.stdin_io.mode = CORDON_STDIO_PIPE;
  request.stdout_io.mode = CORDON_STDIO_FD;
  request.stdout_io.fd = out_fd;
  int code = cordon_run_start(fx.plan, &request, &fx.run, &fx.error);
  close(out_fd);
  CHECK(code == CORDON_OK, "start: %s", fx.error);
  CHECK(cordon_run_fd(fx.run, 1) == -1 && cordon_run_fd(fx.run, 7) == -1, "stdout is not a pipe");
  int in = cordon_run_take_fd(fx.run, 0);
  CHECK(in >= 0 && cordon_run_fd(fx.run, 0) == -1, "take stdin");
  CHECK(write(in, "hello sandbox\n", 14) == 14, "write stdin");
  close(in);
  CHECK(cordon_run_wait(fx.run, 20000) == CORDON_RUN_ENDED, "wait");
  char text[64];
  int fd = open(out_path, O_RDONLY | O_CLOEXEC);
  read_all(fd, text, sizeof text);
  close(fd);
  CHECK(strcmp(text, "HELLO SANDBOX\n") == 0, "output %s", text);
  /* A descriptor that is not open is a usage fx.error before anything runs. */
  cordon_run* never = NULL;
  request.stdin_io.mode = CORDON_STDIO_FD;
  request.stdin_io.fd = 987;
  code = cordon_run_start(fx.plan, &request, &never, &fx.error);
  CHECK(code == CORDON_E_USAGE_ERROR && never == NULL && contains(fx.error, "\"errno\":9"), "closed fd: %d %s", code,
        fx.error);
  request.stdin_io.mode = 42;
  cordon_string_free(fx.error);
  fx.error = NULL;
  CHECK(cordon_run_start(fx.plan, &request, &never, &fx.error) == CORDON_E_USAGE_ERROR, "unknown mode");
done:;
}

static void test_deadline_cancel_and_wait_fd(void) {
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  const char* argv[] = {"/bin/sleep", "60", NULL};
  cordon_run_request request = {0};
  request.argv = argv;
  CHECK(cordon_run_start(fx.plan, &request, &fx.run, &fx.error) == CORDON_OK, "start: %s", fx.error);
  CHECK(cordon_run_pid(fx.run) > 0, "pid");
  double start = now_seconds();
  CHECK(cordon_run_wait(fx.run, 200) == CORDON_RUN_GOING, "the deadline did not pass first");
  double waited = now_seconds() - start;
  CHECK(waited >= 0.19 && waited < 5.0, "waited %.3f s for a 200 ms deadline", waited);
  CHECK(cordon_run_status_get(fx.run, &(cordon_run_status){0}) == CORDON_E_USAGE_ERROR, "status before the end");
  CHECK(cordon_run_report_json(fx.run) == NULL, "report before the end");
  struct pollfd ready = {cordon_run_wait_fd(fx.run), POLLIN, 0};
  CHECK(ready.fd >= 0 && poll(&ready, 1, 0) == 0, "wait fd readable while the run goes on");
  cordon_run_cancel(fx.run);
  cordon_run_cancel(fx.run); /* idempotent */
  CHECK(poll(&ready, 1, 20000) == 1, "wait fd never became readable after cancel");
  int ended = CORDON_RUN_GOING;
  for (int i = 0; i < 2000 && ended == CORDON_RUN_GOING; ++i) ended = cordon_run_wait(fx.run, 10);
  CHECK(ended == CORDON_RUN_ENDED, "the cancelled run did not end");
  cordon_run_status status;
  CHECK(cordon_run_status_get(fx.run, &status) == CORDON_OK, "status");
  CHECK(status.cancelled == 1 && status.ran && !status.exited && status.signal == 9 && status.exit_code == 137,
        "cancelled %d exited %d signal %d exit %d", status.cancelled, status.exited, status.signal, status.exit_code);
  CHECK(status.wall_ms < 20000, "wall %lld ms", (long long)status.wall_ms);
  fx.report = cordon_run_report_json(fx.run);
  CHECK(contains(fx.report, "\"signal\": 9") && contains(fx.report, "\"signal_name\": \"SIGKILL\""), "report: %.400s", fx.report);
done:;
}

static atomic_int waiter_tid; /* the waiting thread's id, once it is about to wait */

static void* wait_without_deadline(void* run) {
  static int answer;
  atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
  answer = cordon_run_wait(run, -1);
  return &answer;
}

/* 1 once thread `tid` of this process sleeps (state S in
 * /proc/self/task/TID/stat, proc(5)): blocked in its call. Polled within 10 s. */
static int thread_blocks(int tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  for (int i = 0; i < 2000; ++i) {
    char text[512] = {0};
    FILE* f = fopen(path, "r");
    if (f != NULL) {
      size_t n = fread(text, 1, sizeof text - 1, f);
      fclose(f);
      const char* end = n > 0 ? strrchr(text, ')') : NULL; /* the name may hold spaces */
      if (end != NULL && end[1] == ' ' && end[2] == 'S') return 1;
    }
    usleep(5 * 1000); /* polling a condition */
  }
  return 0;
}

/* One thread waits without a deadline; another cancels (cordon_c.h: the one
 * call that may come from another thread while one waits). */
static void test_cancel_from_another_thread(void) {
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  /* Cancelled once the command runs (its line read) and the waiter is
   * blocked in cordon_run_wait (polled), not after a fixed pause. */
  const char* argv[] = {"/bin/sh", "-c", "echo up; exec sleep 60", NULL};
  cordon_run_request request = {0};
  request.argv = argv;
  request.stdout_io.mode = CORDON_STDIO_PIPE;
  CHECK(cordon_run_start(fx.plan, &request, &fx.run, &fx.error) == CORDON_OK, "start: %s", fx.error);
  char line[3] = {0};
  CHECK(read(cordon_run_fd(fx.run, 1), line, sizeof line) == 3 && memcmp(line, "up\n", 3) == 0, "the command never ran");
  pthread_t waiter;
  atomic_store(&waiter_tid, 0);
  CHECK(pthread_create(&waiter, NULL, wait_without_deadline, fx.run) == 0, "pthread_create");
  for (int i = 0; i < 2000 && atomic_load(&waiter_tid) == 0; ++i) usleep(5 * 1000);
  CHECK(thread_blocks(atomic_load(&waiter_tid)), "the waiting thread never blocked in cordon_run_wait");
  double start = now_seconds();
  cordon_run_cancel(fx.run);
  void* answer = NULL;
  pthread_join(waiter, &answer);
  CHECK(*(int*)answer == CORDON_RUN_ENDED, "the waiting thread got %d", *(int*)answer);
  CHECK(now_seconds() - start < 10.0, "cancel took %.1f s", now_seconds() - start);
  cordon_run_status status;
  CHECK(cordon_run_status_get(fx.run, &status) == CORDON_OK && status.cancelled == 1, "not cancelled");
done:;
}

static void test_command_not_found(void) {
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  const char* argv[] = {"no-such-command-cordon", NULL};
  char out[64];
  fx.run = run_collect(fx.plan, argv, out, sizeof out);
  CHECK(fx.run != NULL, "start");
  cordon_run_status status;
  CHECK(cordon_run_status_get(fx.run, &status) == CORDON_OK, "status");
  CHECK(status.exit_code == 127 && !status.ran && status.error_code == CORDON_E_COMMAND_NOT_FOUND, "exit %d code %d",
        status.exit_code, status.error_code);
  fx.error = cordon_run_error_json(fx.run);
  CHECK(contains(fx.error, "\"code\":\"command_not_found\""), "error %s", fx.error);
  fx.report = cordon_run_report_json(fx.run);
  CHECK(contains(fx.report, "\"outcome\": \"launch_failed\""), "report %.300s", fx.report);
  /* Empty argv and NULL arguments are usage errors. */
  cordon_run* never = NULL;
  const char* empty[] = {NULL};
  cordon_run_request request = {0};
  request.argv = empty;
  CHECK(cordon_run_start(fx.plan, &request, &never, NULL) == CORDON_E_USAGE_ERROR && never == NULL, "empty argv");
  CHECK(cordon_run_start(NULL, &request, &never, NULL) == CORDON_E_USAGE_ERROR, "NULL plan");
  CHECK(cordon_run_wait(NULL, 0) == -1 && cordon_run_pid(NULL) == -1, "NULL run");
done:;
}

/* ---- ABI minor 1: governance and the filesystem worker ---- */

static const char* rules_json =
    "{\"schema_version\": 1, \"name\": \"c tests\", \"rules\": ["
    "{\"id\": \"inspect\", \"reason\": \"harmless\", \"decision\": \"allow\", \"commands\": [\"ls\", \"true\"]},"
    "{\"id\": \"write\", \"reason\": \"needs a person\", \"decision\": \"require_approval\", \"commands\": [\"touch\"]},"
    "{\"id\": \"no-rm\", \"reason\": \"no deleting\", \"decision\": \"deny\", \"commands\": [\"rm\"]}]}";

static void test_abi_minor(void) {
  CHECK(CORDON_ABI_MINOR >= 5, "header minor %d", CORDON_ABI_MINOR);
  CHECK(cordon_abi_minor() == CORDON_ABI_MINOR, "library minor %u", cordon_abi_minor());
done:;
}

static void test_rules_decide(void) {
  cordon_rules* rules = NULL;
  char* error = NULL;
  char* decision = NULL;
  int code = cordon_rules_load("{\"schema_version\": 1, \"name\": \"x\", \"rules\": [{\"id\": \"a\", \"decison\": \"allow\"}]}",
                               &rules, &error);
  CHECK(code == CORDON_E_INVALID_POLICY && rules == NULL, "bad rules: code %d", code);
  CHECK(contains(error, "\"location\":\"/rules/0"), "bad rules: %s", error);
  cordon_string_free(error);
  error = NULL;
  CHECK(cordon_rules_load(rules_json, &rules, &error) == CORDON_OK, "load: %s", error);
  CHECK(cordon_rules_decide(rules, "{\"schema_version\": 1, \"action\": \"shell\", \"risk\": \"low\", \"command\": \"ls -l\"}",
                            &decision, &error) == CORDON_OK, "decide: %s", error);
  CHECK(contains(decision, "\"decision\":\"allow\"") && contains(decision, "\"request_digest\":\"sha256:"), "allow: %s", decision);
  cordon_string_free(decision);
  decision = NULL;
  CHECK(cordon_rules_decide(rules, "{\"schema_version\": 1, \"action\": \"shell\", \"risk\": \"low\", \"command\": \"ls; rm -rf /\"}",
                            &decision, &error) == CORDON_OK, "decide: %s", error);
  CHECK(contains(decision, "\"decision\":\"deny\"") && contains(decision, "\"rule_id\":\"no-rm\""), "deny: %s", decision);
  cordon_string_free(decision);
  decision = NULL;
  code = cordon_rules_decide(rules, "{\"schema_version\": 1, \"action\": \"shell\", \"comand\": \"ls\"}", &decision, &error);
  CHECK(code == CORDON_E_INVALID_POLICY && decision == NULL, "bad request: code %d", code);
done:
  cordon_string_free(error);
  cordon_string_free(decision);
  cordon_rules_free(rules);
}

/* The approver of test_governance_execute: approves once, and counts. */
static int approvals_asked;
static int approve_once(void* user, const char* shown, char* decision, size_t capacity) {
  (void)user;
  ++approvals_asked;
  if (!contains(shown, "\"filesystem_write\"")) return 1; /* it must be shown the plan */
  snprintf(decision, capacity, "{\"decision\": \"approved\", \"scope\": \"once\", \"reason\": \"c test\"}");
  return 0;
}

static void test_governance_execute(void) {
  cordon_rules* rules = NULL;
  char* error = NULL;
  char* result = NULL;
  char context[256], request[512], path[128];
  struct stat st;
  snprintf(context, sizeof context, "{\"workspace\": \"%s\"}", workspace);
  CHECK(cordon_rules_load(rules_json, &rules, &error) == CORDON_OK, "load: %s", error);
  /* Denied by a rule: nothing runs. */
  snprintf(request, sizeof request,
           "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", \"argv\": [\"rm\", \"%s/probe\"]}", workspace);
  CHECK(cordon_governance_execute(rules, request, context, NULL, NULL, &result, &error) == CORDON_OK, "denied: %s", error);
  CHECK(contains(result, "\"status\":\"denied\"") && contains(result, "\"exit_code\":200"), "denied: %s", result);
  snprintf(path, sizeof path, "%s/probe", workspace);
  CHECK(stat(path, &st) == 0, "the denied rm ran");
  cordon_string_free(result);
  result = NULL;
  /* Needs approval, no approver: denied. */
  snprintf(request, sizeof request,
           "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", \"argv\": [\"touch\", \"%s/made\", "
           "\"/usr/cordon-capi-gov\"]}", workspace);
  CHECK(cordon_governance_execute(rules, request, context, NULL, NULL, &result, &error) == CORDON_OK, "no approver: %s", error);
  CHECK(contains(result, "\"status\":\"denied\""), "no approver: %s", result);
  snprintf(path, sizeof path, "%s/made", workspace);
  CHECK(stat(path, &st) != 0, "ran without an approval");
  cordon_string_free(result);
  result = NULL;
  /* Approved by the callback: runs confined. The workspace file is made; the
   * one under /usr is refused (read-only), so touch exits 1. */
  CHECK(cordon_governance_execute(rules, request, context, approve_once, NULL, &result, &error) == CORDON_OK,
        "approved: %s", error);
  CHECK(approvals_asked == 1, "approver asked %d times", approvals_asked);
  CHECK(contains(result, "\"status\":\"completed\"") && contains(result, "\"approver\":\"host\""), "approved: %s", result);
  CHECK(contains(result, "\"exit_code\":1,"), "touch of /usr did not fail: %s", result);
  CHECK(stat(path, &st) == 0, "the approved write did not happen: %s", result);
  CHECK(stat("/usr/cordon-capi-gov", &st) != 0 && errno == ENOENT, "the write to /usr happened");
  cordon_string_free(result);
  result = NULL;
  /* The audit log in the workspace is the run's record: the command may not
   * touch it (or its head), as under cordon exec. Before, touch exited 0. */
  {
    char audited[512];
    snprintf(audited, sizeof audited, "{\"workspace\": \"%s\", \"audit\": \"%s/gov-audit.jsonl\"}", workspace,
             workspace);
    snprintf(request, sizeof request,
             "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", \"argv\": [\"touch\", "
             "\"%s/gov-audit.jsonl\"]}", workspace);
    CHECK(cordon_governance_execute(rules, request, audited, approve_once, NULL, &result, &error) == CORDON_OK,
          "audited: %s", error);
    CHECK(contains(result, "\"status\":\"completed\"") && contains(result, "\"exit_code\":1,"),
          "the command wrote its own audit log: %s", result);
  }
done:
  cordon_string_free(error);
  cordon_string_free(result);
  cordon_rules_free(rules);
}

/* ---- ABI minor 3: the tool-use call ---- */

static size_t streamed;
static void count_output(void* user, int stream, const char* bytes, size_t size) {
  (void)user;
  (void)bytes;
  if (stream == 1) streamed += size;
}

static int approve_for_session(void* user, const char* shown, char* decision, size_t capacity) {
  (void)user;
  (void)shown;
  ++approvals_asked;
  snprintf(decision, capacity, "{\"decision\": \"approved\", \"scope\": \"session\", \"reason\": \"c test\"}");
  return 0;
}

static void test_governance_tool_call(void) {
  static const char* tool_rules =
      "{\"schema_version\": 1, \"name\": \"c tool call\", \"rules\": ["
      "{\"id\": \"ok\", \"reason\": \"harmless\", \"decision\": \"allow\", \"commands\": [\"cat\", \"yes\", \"sh\", \"python3\"]},"
      "{\"id\": \"ask\", \"reason\": \"needs a person\", \"decision\": \"require_approval\", \"commands\": [\"touch\"]}]}";
  cordon_rules* rules = NULL;
  cordon_ledger* ledger = cordon_ledger_new();
  char* error = NULL;
  char* result = NULL;
  char context[256], request[512];
  cordon_tool_io io;
  memset(&io, 0, sizeof io);
  snprintf(context, sizeof context, "{\"workspace\": \"%s\"}", workspace);
  CHECK(ledger != NULL, "no ledger");
  CHECK(cordon_rules_load(tool_rules, &rules, &error) == CORDON_OK, "load: %s", error);
  /* stdin in, stdout out, bytes unchanged (base64 of "a\377b" is "Yf9i"). */
  io.stdin_data = "a\377b";
  io.stdin_size = 3;
  CHECK(cordon_governance_tool_call(rules, "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", "
                                    "\"argv\": [\"cat\"]}", context, &io, NULL, NULL, &result, &error) == CORDON_OK,
        "cat: %s", error);
  CHECK(contains(result, "\"status\":\"completed\"") && contains(result, "\"base64\":\"Yf9i\"") &&
            contains(result, "\"dropped\":0") && contains(result, "\"sandbox_notes\":[]"), "cat: %s", result);
  cordon_string_free(result);
  result = NULL;
  /* What the sandbox refused is a line of "sandbox_notes" (none for the cat above). */
  memset(&io, 0, sizeof io);
  CHECK(cordon_governance_tool_call(rules, "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", "
                                    "\"argv\": [\"python3\", \"-c\", \"import socket; socket.create_connection("
                                    "('192.0.2.1', 80), timeout=5)\"]}", context, &io, NULL, NULL, &result, &error) ==
            CORDON_OK, "connect: %s", error);
  CHECK(contains(result, "\"sandbox_notes\":[\"[cordon] blocked by the sandbox: network_connect 192.0.2.1:80 (x1); "
                         "the policy refuses it, retrying will not help\"]"), "connect: %s", result);
  cordon_string_free(result);
  result = NULL;
  /* yes under a cap and a timeout: 124, the cap kept, the rest counted. */
  memset(&io, 0, sizeof io);
  io.timeout_ms = 500;
  io.max_output = 1000;
  io.on_output = count_output;
  CHECK(cordon_governance_tool_call(rules, "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", "
                                    "\"argv\": [\"yes\"]}", context, &io, NULL, NULL, &result, &error) == CORDON_OK,
        "yes: %s", error);
  CHECK(contains(result, "\"status\":\"timed_out\"") && contains(result, "\"exit_code\":124") &&
            contains(result, "\"kept\":1000") && streamed > 1000, "yes (%zu streamed): %s", streamed, result);
  cordon_string_free(result);
  result = NULL;
  /* A session grant in the ledger covers the same request again. */
  approvals_asked = 0;
  memset(&io, 0, sizeof io);
  io.ledger = ledger;
  snprintf(request, sizeof request,
           "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", \"argv\": [\"touch\", \"%s/tool\"]}",
           workspace);
  for (int i = 0; i < 2; ++i) {
    CHECK(cordon_governance_tool_call(rules, request, context, &io, approve_for_session, NULL, &result, &error) ==
              CORDON_OK, "touch: %s", error);
    CHECK(contains(result, "\"status\":\"completed\""), "touch: %s", result);
    cordon_string_free(result);
    result = NULL;
  }
  CHECK(approvals_asked == 1, "asked %d times", approvals_asked);
done:
  cordon_string_free(error);
  cordon_string_free(result);
  cordon_rules_free(rules);
  cordon_ledger_free(ledger);
}

/* Arguments and environment entries reach the command as bytes, unchanged
 * ("\377" is not UTF-8; base64 of "f\377/v\376" is "Zv8vdv4="); a NUL,
 * which no C string can carry, is refused with its location (issue 34). */
static void test_tool_call_bytes_and_nul(void) {
  static const char* tool_rules =
      "{\"schema_version\": 1, \"name\": \"c bytes\", \"rules\": ["
      "{\"id\": \"ok\", \"reason\": \"harmless\", \"decision\": \"allow\", \"commands\": [\"sh\", \"echo\", \"printf\"]}]}";
  cordon_rules* rules = NULL;
  char* error = NULL;
  char* result = NULL;
  char context[512];
  const char* environment[] = {"TZ=v\376", NULL};
  cordon_tool_io io;
  memset(&io, 0, sizeof io);
  io.environment = environment;
  snprintf(context, sizeof context, "{\"workspace\": \"%s\"}", workspace);
  CHECK(cordon_rules_load(tool_rules, &rules, &error) == CORDON_OK, "load: %s", error);
  /* The request is JSON text: the non-UTF-8 byte comes through the per-call environment. */
  CHECK(cordon_governance_tool_call(rules, "{\"schema_version\": 1, \"action\": \"process\", \"risk\": \"low\", "
                                    "\"argv\": [\"sh\", \"-c\", \"printf 'f\\\\377/%s' \\\"$TZ\\\"\"]}", context, &io, NULL,
                                    NULL, &result, &error) == CORDON_OK, "printf: %s", error);
  CHECK(contains(result, "\"status\":\"completed\"") && contains(result, "\"base64\":\"Zv8vdv4=\""), "printf: %s",
        result);
  cordon_string_free(result);
  result = NULL;
  CHECK(cordon_governance_tool_call(rules, "{\"schema_version\": 1, \"action\": \"shell\", \"risk\": \"low\", "
                                    "\"command\": \"echo a\\u0000b\"}", context, NULL, NULL, NULL, &result, &error) ==
            CORDON_E_INVALID_POLICY, "a NUL in the command: %s", result);
  CHECK(contains(error, "\"location\":\"/command\"") && contains(error, "NUL"), "%s", error);
  cordon_string_free(error);
  error = NULL;
  snprintf(context, sizeof context, "{\"workspace\": \"%s\", \"environment\": [\"PATH=/bin\", \"TZ=a\\u0000b\"]}",
           workspace);
  CHECK(cordon_governance_tool_call(rules, "{\"schema_version\": 1, \"action\": \"shell\", \"risk\": \"low\", "
                                    "\"command\": \"echo x\"}", context, NULL, NULL, NULL, &result, &error) ==
            CORDON_E_USAGE_ERROR, "a NUL in the environment: %s", result);
  CHECK(contains(error, "\"location\":\"/environment/1\"") && contains(error, "NUL"), "%s", error);
done:
  cordon_string_free(error);
  cordon_string_free(result);
  cordon_rules_free(rules);
}

static void test_audit_log(void) {
  char log[128], *error = NULL, *verified = NULL;
  snprintf(log, sizeof log, "%s/audit.jsonl", workspace);
  for (int i = 0; i < 3; ++i) {
    CHECK(cordon_audit_append(log, "{\"module\": \"host\", \"event\": \"tick\", \"outcome\": \"ok\", \"ids\": {\"trace_id\": \"t\"}}",
                              &error) == CORDON_OK, "append: %s", error);
  }
  CHECK(cordon_audit_append(log, "{\"module\": \"host\"}", &error) == CORDON_E_USAGE_ERROR, "an event without its fields");
  cordon_string_free(error);
  error = NULL;
  CHECK(cordon_audit_verify(log, &verified, &error) == CORDON_OK, "verify: %s", error);
  CHECK(contains(verified, "\"ok\":true") && contains(verified, "\"events\":3"), "verify: %s", verified);
  cordon_string_free(verified);
  verified = NULL;
  {
    /* Without its head the log does not verify, unless the caller says no head is kept. */
    char head[160], moved[160];
    snprintf(head, sizeof head, "%s.head", log);
    snprintf(moved, sizeof moved, "%s.head.kept", log);
    CHECK(rename(head, moved) == 0, "move the head away: %s", strerror(errno));
    CHECK(cordon_audit_verify(log, &verified, &error) == CORDON_OK, "verify: %s", error);
    CHECK(contains(verified, "\"ok\":false") && contains(verified, "no head file") &&
              contains(verified, "\"bad_line\":4") && contains(verified, "\"head_present\":false"),
          "headless: %s", verified);
    cordon_string_free(verified);
    verified = NULL;
    CHECK(cordon_audit_verify_with(log, "{}", &verified, &error) == CORDON_OK, "verify_with {}: %s", error);
    CHECK(contains(verified, "\"ok\":false"), "headless with {}: %s", verified);
    cordon_string_free(verified);
    verified = NULL;
    CHECK(cordon_audit_verify_with(log, "{\"no_head\": true}", &verified, &error) == CORDON_OK, "no_head: %s", error);
    CHECK(contains(verified, "\"ok\":true") && contains(verified, "\"events\":3"), "no_head: %s", verified);
    cordon_string_free(verified);
    verified = NULL;
    CHECK(cordon_audit_verify_with(log, "{\"no_head\": 1}", &verified, &error) == CORDON_E_USAGE_ERROR,
          "a no_head that is not a bool");
    cordon_string_free(error);
    error = NULL;
    CHECK(cordon_audit_verify_with(log, "{\"no_head\": true", &verified, &error) == CORDON_E_PARSE_ERROR,
          "options that are not JSON");
    cordon_string_free(error);
    error = NULL;
    CHECK(rename(moved, head) == 0, "put the head back: %s", strerror(errno));
    CHECK(cordon_audit_verify(log, &verified, &error) == CORDON_OK, "verify: %s", error);
    CHECK(contains(verified, "\"ok\":true") && contains(verified, "\"head_present\":true") &&
              contains(verified, "\"head_seq\":3"),
          "with the head: %s", verified);
    cordon_string_free(verified);
    verified = NULL;
  }
  {
    /* Edit the second record's outcome in place: the chain breaks at line 2. */
    char text[8192];
    FILE* f = fopen(log, "r+");
    CHECK(f != NULL, "open log");
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    char* second = strchr(text, '\n');
    char* outcome = second != NULL ? strstr(second, "\"outcome\":\"ok\"") : NULL;
    if (outcome != NULL) {
      memcpy(outcome + 11, "OK", 2);
      rewind(f);
      fwrite(text, 1, n, f);
    }
    fclose(f);
    CHECK(outcome != NULL, "no outcome in %s", text);
  }
  CHECK(cordon_audit_verify(log, &verified, &error) == CORDON_OK, "verify: %s", error);
  CHECK(contains(verified, "\"ok\":false") && contains(verified, "\"bad_line\":2") && contains(verified, "\"events\":1"),
        "tampered: %s", verified);
  CHECK(cordon_audit_append(log, "{\"module\": \"host\", \"event\": \"tick\", \"outcome\": \"ok\"}", &error) ==
            CORDON_E_INVALID_POLICY, "appended to a log that does not verify");
done:
  cordon_string_free(error);
  cordon_string_free(verified);
}

/* One worker call; the response in *response. */
static int fs_call(cordon_fs* fs, const char* request, char** response) {
  char* error = NULL;
  cordon_string_free(*response);
  *response = NULL;
  int code = cordon_fs_call(fs, request, response, &error);
  if (code != CORDON_OK) fail_test("fs call %s: %s", request, error);
  cordon_string_free(error);
  return code;
}

static void test_fs_worker(void) {
  char options[256], *error = NULL, *response = NULL, *report = NULL, path[160], target[160];
  cordon_fs* fs = NULL;
  snprintf(options, sizeof options, "{\"workspace\": \"%s\", \"deadline_ms\": 5000}", workspace);
  CHECK(cordon_fs_start(NULL, "{\"deadline_ms\": 0}", &fs, &error) == CORDON_E_USAGE_ERROR, "deadline 0 accepted");
  cordon_string_free(error);
  error = NULL;
  CHECK(cordon_fs_start(NULL, options, &fs, &error) == CORDON_OK, "start: %s", error);
  CHECK(cordon_fs_pid(fs) > 0, "pid %d", cordon_fs_pid(fs));
  CHECK(fs_call(fs, "{\"op\": \"write\", \"path\": \"a.txt\", \"content\": \"hello\\n\"}", &response) == CORDON_OK, "write");
  CHECK(contains(response, "\"ok\":true"), "write: %s", response);
  CHECK(fs_call(fs, "{\"op\": \"read\", \"path\": \"a.txt\"}", &response) == CORDON_OK, "read");
  CHECK(contains(response, "\"content\":\"hello\\n\""), "read: %s", response);
  CHECK(fs_call(fs, "{\"op\": \"read\", \"path\": \"../etc/passwd\"}", &response) == CORDON_OK, "escape");
  CHECK(contains(response, "\"ok\":false") && contains(response, "\"code\":\"path_escape\""), "escape: %s", response);
  snprintf(path, sizeof path, "%s/link", workspace);
  snprintf(target, sizeof target, "/etc/passwd");
  CHECK(symlink(target, path) == 0, "symlink: %s", strerror(errno));
  CHECK(fs_call(fs, "{\"op\": \"read\", \"path\": \"link\"}", &response) == CORDON_OK, "symlink");
  CHECK(contains(response, "\"code\":\"symlink\""), "symlink: %s", response);
  CHECK(cordon_fs_finish(fs, &report, &error) == CORDON_OK, "finish: %s", error);
  CHECK(contains(report, "\"writes\":[") && contains(report, "a.txt"), "report: %s", report);
  cordon_string_free(response);
  response = NULL;
  CHECK(cordon_fs_call(fs, "{\"op\": \"stat\", \"path\": \"a.txt\"}", &response, &error) == CORDON_E_USAGE_ERROR,
        "a call after finish");
done:
  cordon_string_free(error);
  cordon_string_free(response);
  cordon_string_free(report);
  cordon_fs_free(fs);
}

/* ---- ABI minor 2: pools of prepared sandboxes ---- */

/* A pool's sandbox confines as an ordinary run does (the allowed write
 * lands, /etc is EROFS, /etc/shadow EACCES), its report says it was
 * prepared, and the next command gets a new sandbox: a file the first left
 * in its private /tmp is not there. The pool outlives the plan it came from. */
static void test_pool_prepared_runs(void) {
  cordon_pool* pool = NULL;
  cordon_run* second = NULL;
  char* second_report = NULL;
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  CHECK(cordon_pool_new(fx.plan, "{\"size\": 1, \"wait_ms\": 20000}", &pool, &fx.error) == CORDON_OK, "pool: %s",
        fx.error);
  cordon_plan_free(fx.plan);
  fx.plan = NULL;
  for (int i = 0; i < 400 && cordon_pool_ready_count(pool) < 1; ++i) usleep(50 * 1000);
  CHECK(cordon_pool_ready_count(pool) == 1, "ready %d", cordon_pool_ready_count(pool));
  int changed = -1;
  CHECK(cordon_pool_refresh(pool, &changed, &fx.error) == CORDON_OK && changed == 0, "refresh %d: %s", changed,
        fx.error);
  char inside_file[128], probe[128], out[1024];
  snprintf(inside_file, sizeof inside_file, "%s/made-in-a-prepared-sandbox", workspace);
  snprintf(probe, sizeof probe, "%s/probe", workspace);
  const char* first_argv[] = {probe, "write", inside_file, "write", "/etc/cordon-capi-probe", "read", "/etc/shadow",
                              "write", "/tmp/left-behind", NULL};
  fx.run = collect_from(NULL, pool, first_argv, out, sizeof out);
  CHECK(fx.run != NULL, "start");
  CHECK(strcmp(out, "write OK\nwrite EROFS\nread EACCES\nwrite OK\n") == 0, "probe said:\n%s", out);
  CHECK(access(inside_file, F_OK) == 0, "the allowed file is not on the host");
  cordon_run_status status;
  CHECK(cordon_run_status_get(fx.run, &status) == CORDON_OK && status.ran && status.exit_code == 0, "status");
  fx.report = cordon_run_report_json(fx.run);
  CHECK(contains(fx.report, "\"prepared\": true") && contains(fx.report, "\"prepared_at\": \"") &&
            contains(fx.report, "\"outcome\": \"completed\""),
        "report: %.400s", fx.report);
  const char* second_argv[] = {probe, "read", "/tmp/left-behind", NULL};
  second = collect_from(NULL, pool, second_argv, out, sizeof out);
  CHECK(second != NULL, "second start");
  CHECK(strcmp(out, "read ENOENT\n") == 0, "the second command saw the first's /tmp: %s", out);
  second_report = cordon_run_report_json(second);
  CHECK(contains(second_report, "\"prepared\": true"), "second report: %.300s", second_report);
done:
  cordon_string_free(second_report);
  cordon_run_free(second);
  cordon_pool_free(pool);
}

/* Options a pool cannot honour are refused before anything is prepared. */
static void test_pool_options_refused(void) {
  cordon_pool* pool = NULL;
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  CHECK(cordon_pool_new(fx.plan, "{\"sise\": 2}", &pool, &fx.error) == CORDON_E_USAGE_ERROR && pool == NULL &&
            contains(fx.error, "\"location\":\"/sise\""),
        "unknown field: %s", fx.error);
  cordon_string_free(fx.error);
  fx.error = NULL;
  CHECK(cordon_pool_new(fx.plan, "{\"size\": 0}", &pool, NULL) == CORDON_E_USAGE_ERROR, "size 0");
  CHECK(cordon_pool_new(fx.plan, "{\"max_age_ms\": 0}", &pool, NULL) == CORDON_E_USAGE_ERROR, "max_age_ms 0");
  CHECK(cordon_pool_new(fx.plan, "{\"wait_ms\": \"1\"}", &pool, NULL) == CORDON_E_USAGE_ERROR, "wait_ms text");
  CHECK(cordon_pool_new(fx.plan, "{size", &pool, NULL) == CORDON_E_PARSE_ERROR, "not JSON");
  CHECK(cordon_pool_new(NULL, NULL, &pool, NULL) == CORDON_E_USAGE_ERROR && pool == NULL, "NULL plan");
  CHECK(cordon_pool_ready_count(NULL) == -1, "NULL pool");
  CHECK(cordon_pool_refresh(NULL, NULL, NULL) == CORDON_E_USAGE_ERROR, "refresh NULL pool");
done:
  cordon_pool_free(pool);
}

/* A descriptor the caller hands to a pooled run (here a pipe without
 * O_CLOEXEC, as a C host makes one) is not held by the sandbox the pool
 * prepares next: once the run and the caller are done with the write end,
 * the reader sees end-of-file at once, not when that next sandbox is given
 * up (max_age, 30 s by default). */
static void test_pool_keeps_no_host_descriptor(void) {
  cordon_pool* pool = NULL;
  int fds[2] = {-1, -1};
  CHECK(fx.plan != NULL, "compile %s", compile_failure);
  CHECK(cordon_pool_new(fx.plan, "{\"size\": 1, \"refill_after_ms\": 0}", &pool, &fx.error) == CORDON_OK, "pool: %s",
        fx.error);
  CHECK(pipe(fds) == 0, "pipe");
  char probe[128], made[128];
  snprintf(probe, sizeof probe, "%s/probe", workspace);
  snprintf(made, sizeof made, "%s/made-by-a-pooled-run", workspace);
  const char* argv[] = {probe, "write", made, NULL};
  cordon_run_request request = {0};
  request.argv = argv;
  request.stdout_io.mode = CORDON_STDIO_FD;
  request.stdout_io.fd = fds[1];
  CHECK(cordon_pool_start(pool, &request, &fx.run, &fx.error) == CORDON_OK, "start: %s", fx.error);
  CHECK(cordon_run_wait(fx.run, -1) == CORDON_RUN_ENDED, "wait");
  /* The refill prepares the next sandbox now, while this process still holds fds[1]. */
  for (int i = 0; i < 400 && cordon_pool_ready_count(pool) < 1; ++i) usleep(50 * 1000);
  CHECK(cordon_pool_ready_count(pool) == 1, "the next sandbox was not prepared");
  close(fds[1]);
  fds[1] = -1;
  struct pollfd readable = {fds[0], POLLIN, 0};
  char out[256];
  double began = now_seconds();
  CHECK(poll(&readable, 1, 5000) == 1, "no end-of-file within 5 s: the next sandbox holds the pipe");
  read_all(fds[0], out, sizeof out);
  CHECK(strcmp(out, "write OK\n") == 0, "probe said: %s", out);
  CHECK(now_seconds() - began < 5.0, "end-of-file after %.1f s", now_seconds() - began);
done:
  if (fds[0] >= 0) close(fds[0]);
  if (fds[1] >= 0) close(fds[1]);
  cordon_pool_free(pool);
}

int main(int argc, char** argv) {
  const char* junit = NULL;
  probe_program = getenv("CORDON_CAPI_PROBE");
#ifdef CORDON_CAPI_PROBE_BUILT
  if (probe_program == NULL) probe_program = CORDON_CAPI_PROBE_BUILT;
#endif
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--junit") == 0) junit = argv[i + 1];
    if (strcmp(argv[i], "--probe") == 0) probe_program = argv[i + 1];
  }
  if (probe_program == NULL) {
    fprintf(stderr, "capi_test: no probe program (--probe PATH)\n");
    return 2;
  }
  run_test("versions_and_codes", test_versions_and_codes);
  run_test("unknown_profile", test_unknown_profile);
  run_test("compile_errors_are_typed", test_compile_errors_are_typed);
  run_test("refusal_carries_blockers", test_refusal_carries_blockers);
  run_test("abi_minor", test_abi_minor);
  run_test("rules_decide", test_rules_decide);
  run_test("explain_and_probe", test_explain_and_probe);
  int available = !results[result_count - 1].skipped;
  if (available) {
    run_confined_test("confined_run_allowed_and_forbidden", test_confined_run_allowed_and_forbidden);
    run_confined_test("stdin_pipe_and_fd", test_stdin_pipe_and_fd);
    run_confined_test("deadline_cancel_and_wait_fd", test_deadline_cancel_and_wait_fd);
    run_confined_test("cancel_from_another_thread", test_cancel_from_another_thread);
    run_confined_test("command_not_found", test_command_not_found);
    run_confined_test("governance_execute", test_governance_execute);
    run_confined_test("audit_log", test_audit_log);
    run_confined_test("governance_tool_call", test_governance_tool_call);
    run_confined_test("tool_call_bytes_and_nul", test_tool_call_bytes_and_nul);
    run_confined_test("fs_worker", test_fs_worker);
    run_confined_test("pool_prepared_runs", test_pool_prepared_runs);
    run_confined_test("pool_options_refused", test_pool_options_refused);
    run_confined_test("pool_keeps_no_host_descriptor", test_pool_keeps_no_host_descriptor);
  }
  int failures = 0, skips = 0;
  for (int i = 0; i < result_count; ++i) {
    failures += results[i].failed;
    skips += results[i].skipped;
  }
  printf("capi: %d passed, %d failed, %d skipped\n", result_count - failures - skips, failures, skips);
  if (junit != NULL && write_junit(junit, failures, skips) != 0) {
    fprintf(stderr, "capi_test: cannot write %s\n", junit);
    return 1;
  }
  /* 77: ctest's SKIP_RETURN_CODE (tests/capi/CMakeLists.txt), so that a skip is counted as one. */
  return failures != 0 ? 1 : skips != 0 ? 77 : 0;
}

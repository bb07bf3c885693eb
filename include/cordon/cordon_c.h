/* cordon/cordon_c.h — the C API of libcordon (docs/library.md).
 *
 * A small, stable surface over the compile driver and the run API
 * (cordon/backend.h, cordon/run.h) for hosts in C and for language bindings
 * (bindings/python, bindings/node). No C++ type crosses it: handles are
 * opaque pointers, structured data is JSON text (UTF-8, NUL-terminated),
 * errors are stable codes plus an error JSON document.
 *
 * Conventions, for every function below:
 *  - A function that can fail returns an `int`: 0 (CORDON_OK) or one of the
 *    positive cordon_error_code values. When it fails and `error_json` is
 *    not NULL, *error_json receives an error document (see "Error JSON"),
 *    which the caller frees with cordon_string_free(); on success *error_json
 *    is set to NULL.
 *  - Any such function also fails with CORDON_E_LAUNCH_FAILED (errno
 *    ENOMEM in the error JSON) when memory runs out; a function returning
 *    `char*` returns NULL then.
 *  - Every `char*` the library returns is allocated by it and freed with
 *    cordon_string_free(); every handle with its own *_free function.
 *  - Descriptors named "owned by the handle" are closed by its *_free.
 *  - Thread safety: a plan may be used by many threads at once (to start
 *    runs), and so may a pool (cordon_pool_start, _ready_count, _refresh);
 *    a run handle by one thread at a time, except cordon_run_cancel(),
 *    which any thread may call while another waits. No handle may be freed
 *    while another thread uses it.
 *  - Units: times in milliseconds, sizes in bytes.
 *
 * Error JSON: {"code": "<stable spelling, docs/errors.md>", "message": "one
 * line", "location": "JSON pointer or line/column or empty", "errno": N,
 * "errors": [{"location", "reason"}...] (every policy problem),
 * "blockers": [{"subject": "control|backend|isolation", "control": "<control
 * name, or backend/isolation>", "required": "<level>", "available":
 * "<level>", "reason": "..."}...] (why a compile was refused)}.
 *
 * Versioning: CORDON_ABI_VERSION changes only when a function's signature or
 * a struct's layout changes incompatibly; new functions and new error codes
 * may be added within a version, and each such addition raises
 * CORDON_ABI_MINOR (the symbols it adds get the ELF version node
 * CORDON_C_1.<minor>, src/capi/cordon_c.map). A host compares
 * cordon_abi_version() with CORDON_ABI_VERSION (must be equal) and
 * cordon_abi_minor() with the minor whose functions it uses (must be at
 * least that). Minor 0: compile, explain, probe, runs. Minor 1: governance
 * (capability rules, the execution runtime, the audit log) and the
 * filesystem worker. Minor 2: pools of prepared sandboxes. Minor 3: the
 * tool-use call (cordon_governance_tool_call) and approval ledgers. Minor 4:
 * cordon_audit_verify_with (the head rules of a verify chosen by the caller).
 * Minor 5: the error code CORDON_E_PLAN_RECORDED_FACTS.
 */
#ifndef CORDON_CORDON_C_H
#define CORDON_CORDON_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CORDON_C_API __attribute__((visibility("default")))
#else
#define CORDON_C_API
#endif

/* The ABI this header describes, and the additions within it. */
#define CORDON_ABI_VERSION 1
#define CORDON_ABI_MINOR 5

/* Stable error codes: the C spelling of cordon::error_code
 * (include/cordon/result.h, docs/errors.md). Values never change; new ones
 * are only appended. */
enum cordon_error_code {
  CORDON_OK = 0,
  CORDON_E_PARSE_ERROR = 1,              /* policy or options text is not JSON */
  CORDON_E_INVALID_POLICY = 2,           /* well-formed but invalid policy (compile gate 1) */
  CORDON_E_UNKNOWN_PROFILE = 3,          /* no built-in profile of that name */
  CORDON_E_BACKEND_UNAVAILABLE = 4,      /* the sandbox cannot run on this host (gate 2) */
  CORDON_E_UNSUPPORTED_PLATFORM = 5,     /* no backend for this OS (gate 2) */
  CORDON_E_ISOLATION_INSUFFICIENT = 6,   /* gate 3 */
  CORDON_E_ENFORCEMENT_UNAVAILABLE = 7,  /* a required control cannot be met (gate 4) */
  CORDON_E_PLAN_NULL = 8,
  CORDON_E_PLAN_FOREIGN = 9,
  CORDON_E_PLAN_OTHER_PLATFORM = 10,
  CORDON_E_PLAN_STALE = 11,
  CORDON_E_COMMAND_NOT_FOUND = 12,       /* argv[0] not found inside the sandbox (exit 127) */
  CORDON_E_COMMAND_NOT_EXECUTABLE = 13,  /* found but not executable (exit 126) */
  CORDON_E_LAUNCH_FAILED = 14,           /* a sandbox setup step failed; errno in the error JSON */
  CORDON_E_IO_ERROR = 15,
  CORDON_E_USAGE_ERROR = 16,             /* bad arguments: NULL where a value is needed, bad options */
  CORDON_E_INVALID_DESTINATION = 17,
  CORDON_E_PLAN_RECORDED_FACTS = 18      /* compiled on recorded host facts: explain only, never launched (minor 5) */
};

/* The ABI version of the loaded library (CORDON_ABI_VERSION it was built
 * with). A host built against another version should refuse to go on. */
CORDON_C_API uint32_t cordon_abi_version(void);

/* The CORDON_ABI_MINOR the loaded library was built with (since minor 1; a
 * library without this symbol is minor 0). */
CORDON_C_API uint32_t cordon_abi_minor(void);

/* The library version, "MAJOR.MINOR.PATCH" (static storage; do not free). */
CORDON_C_API const char* cordon_library_version(void);

/* The stable spelling of an error code ("enforcement_unavailable"); "ok"
 * for 0; NULL for a value that is not a code (static storage). */
CORDON_C_API const char* cordon_error_code_name(int code);

/* Frees a string the library returned. NULL is allowed. */
CORDON_C_API void cordon_string_free(char* text);

/* ---- Policies and plans ------------------------------------------------ */

/* A compiled plan: what a run of one policy on this host enforces. Opaque;
 * immutable; valid only in the process that compiled it. */
typedef struct cordon_plan cordon_plan;

/* The JSON text of a built-in profile ("workspace-write", "read-only",
 * "offline"; NULL or "" = the default, workspace-write) in *policy_json.
 * Errors: CORDON_E_UNKNOWN_PROFILE; CORDON_E_USAGE_ERROR when policy_json is
 * NULL. */
CORDON_C_API int cordon_profile_json(const char* name, char** policy_json, char** error_json);

/* Compiles a policy (JSON v1, schemas/policy.v1.schema.json) for this host.
 *
 * options_json: NULL or a JSON object with optional string fields
 *   "workspace"     absolute directory that {workspace} names (required when
 *                   the policy uses {workspace}; the default working
 *                   directory of runs),
 *   "home"          absolute directory for {home} (default: the host's),
 *   "cgroup_parent" a delegated cgroup v2 directory for tree-wide limits,
 *   "sandbox"       "auto" (default) | "require" | "forbid" (host execution:
 *                   refused unless the policy accepts not_enforced controls),
 *   "shortcuts"     an object: `cordon run`'s shortcut flags (docs/cli.md),
 *                   same meaning, by the same code (src/core/shortcuts.h),
 *                   applied to the policy before the compile: "ro", "rw",
 *                   "deny" [PATH...] (relative to the current directory;
 *                   "ro"/"rw" must exist), "allow_hosts" ["HOST[:PORT]"...],
 *                   "env" [NAME...], "setenv" {NAME: VALUE},
 *                   "allow_local_binding" bool, "caches" ["pip"|"npm"|
 *                   "cargo"|"ccache"...] (under "home", else $HOME),
 *                   "git_identity" bool (the user's user.name/user.email
 *                   as GIT_AUTHOR_* and GIT_COMMITTER_*); a bad one is
 *                   CORDON_E_USAGE_ERROR at "/shortcuts/KEY".
 *   Unknown fields are an error (a typo must not weaken anything).
 * On success *plan receives a plan, freed with cordon_plan_free().
 * Errors: CORDON_E_PARSE_ERROR (policy or options not JSON; location is
 * "line L, column C"), CORDON_E_INVALID_POLICY (errors lists every problem
 * with its JSON pointer), CORDON_E_BACKEND_UNAVAILABLE,
 * CORDON_E_UNSUPPORTED_PLATFORM, CORDON_E_ISOLATION_INSUFFICIENT,
 * CORDON_E_ENFORCEMENT_UNAVAILABLE (each with blockers),
 * CORDON_E_USAGE_ERROR (policy_json or plan NULL, bad options). */
CORDON_C_API int cordon_compile(const char* policy_json, const char* options_json, cordon_plan** plan,
                                char** error_json);

/* Frees a plan. Runs started from it keep what they need. NULL is allowed. */
CORDON_C_API void cordon_plan_free(cordon_plan* plan);

/* What a run of this plan gets, as JSON: {"compiles": true, "policy": name,
 * "backend", "platform", "isolation", "workspace", "fingerprint",
 * "controls": {control: {"level", "mechanism"?, "detail"?}}, "limits",
 * "warnings": [...]}. NULL only when plan is NULL or memory ran out. */
CORDON_C_API char* cordon_plan_json(const cordon_plan* plan);

/* Compiles without running (`cordon policy explain`): *explain_json receives
 * cordon_plan_json()'s document when the policy compiles, else {"compiles":
 * false, "error": <error JSON>}. A refusal is an answer, not a failure: it
 * returns 0. Errors: CORDON_E_USAGE_ERROR (NULL arguments, bad options),
 * CORDON_E_PARSE_ERROR when options_json is not JSON. */
CORDON_C_API int cordon_explain(const char* policy_json, const char* options_json, char** explain_json,
                                char** error_json);

/* This host's capabilities for its backend (`cordon probe`), as JSON:
 * {"platform", "backend", "available": bool, "isolation", "best": {control:
 * {"level", "mechanism"?, "detail"?}}, "blockers": [...], "facts": [...]}.
 * Takes a few milliseconds (it tries namespaces in a short-lived child).
 * Errors: CORDON_E_USAGE_ERROR when probe_json is NULL. */
CORDON_C_API int cordon_probe(char** probe_json, char** error_json);

/* ---- Runs -------------------------------------------------------------- */

typedef struct cordon_run cordon_run;

/* Where one standard stream of the command comes from or goes to. */
enum cordon_stdio_mode {
  CORDON_STDIO_INHERIT = 0, /* the caller's own descriptor 0, 1 or 2 */
  CORDON_STDIO_FD = 1,      /* `fd`, duplicated (the caller keeps and closes its own) */
  CORDON_STDIO_PIPE = 2     /* a new pipe; the caller's end from cordon_run_fd() */
};

typedef struct cordon_stdio {
  int mode; /* enum cordon_stdio_mode */
  int fd;   /* CORDON_STDIO_FD only */
} cordon_stdio;

typedef struct cordon_run_request {
  /* The command: NULL-terminated, argv[0] non-empty; looked up in the
   * sandbox's PATH. Arguments and environment entries reach the command as
   * bytes, unchanged (they need not be UTF-8). */
  const char* const* argv;
  /* Absolute working directory inside the sandbox; NULL or "" = the
   * workspace (else "/"). */
  const char* cwd;
  /* "NAME=VALUE" entries, NULL-terminated, that the policy's environment
   * rules choose from; NULL = this process's environ. */
  const char* const* env;
  cordon_stdio stdin_io, stdout_io, stderr_io;
  /* The cordon-supervisor helper; NULL = $CORDON_SUPERVISOR, else the
   * installed one, else the build tree's. */
  const char* supervisor_path;
} cordon_run_request;

/* Starts `request` under `plan` in a supervisor helper process and returns
 * at once with *run. Errors: CORDON_E_USAGE_ERROR (NULL plan, request or
 * run; empty argv; a CORDON_STDIO_FD descriptor that is not open; an unknown
 * mode), CORDON_E_PLAN_NULL, CORDON_E_LAUNCH_FAILED with errno (pipe2,
 * socketpair, clone3). What goes wrong after the start (command not found,
 * a setup step, no helper installed) is in the run's report and error. */
CORDON_C_API int cordon_run_start(const cordon_plan* plan, const cordon_run_request* request, cordon_run** run,
                                  char** error_json);

/* The supervisor helper's host PID (the sandbox's processes are its
 * descendants; it is not the caller's child: do not waitpid it). */
CORDON_C_API int cordon_run_pid(const cordon_run* run);

/* The caller's end of a CORDON_STDIO_PIPE stream (stream 0, 1 or 2), owned
 * by the handle; -1 when the stream is not a pipe, was taken, or stream is
 * out of range. Close stdin (take it, then close) to give the command EOF. */
CORDON_C_API int cordon_run_fd(const cordon_run* run, int stream);

/* As cordon_run_fd(), but the caller owns the descriptor from now on. */
CORDON_C_API int cordon_run_take_fd(cordon_run* run, int stream);

/* A descriptor (owned by the handle; poll it, never read it) that becomes
 * readable when the report arrives or the helper ends; then call
 * cordon_run_wait(run, 0), which may still say CORDON_RUN_GOING while the
 * report is incomplete. For event loops (asyncio, libuv, epoll). */
CORDON_C_API int cordon_run_wait_fd(const cordon_run* run);

enum cordon_wait_result { CORDON_RUN_GOING = 0, CORDON_RUN_ENDED = 1 };

/* Waits up to timeout_ms milliseconds (< 0: without a deadline; 0: only
 * looks) for the run to end. Returns CORDON_RUN_ENDED once it has (then and
 * on every later call), CORDON_RUN_GOING when the deadline passed first (the
 * run goes on), -1 when run is NULL. */
CORDON_C_API int cordon_run_wait(cordon_run* run, int64_t timeout_ms);

/* Kills the whole sandboxed tree. Idempotent; safe from any thread while
 * another waits; no effect once the run ended. The run then ends with
 * cancelled = true in cordon_run_status(). */
CORDON_C_API void cordon_run_cancel(cordon_run* run);

/* The end of a run, valid after CORDON_RUN_ENDED. */
typedef struct cordon_run_status {
  int exit_code;  /* as the CLI's: the command's code, 128+signal, 124 timeout,
                     125 refused/failed, 126 not executable, 127 not found */
  int ran;        /* 1 when the command ran (outcome fields valid) */
  int exited;     /* 1 when it exited normally */
  int signal;     /* terminating signal when it did not */
  int timed_out;  /* the policy's wall-clock timeout killed the tree */
  int cancelled;  /* cordon_run_cancel() killed it */
  int error_code; /* CORDON_OK, or why it did not run or was not supervised to its end */
  int64_t wall_ms;
} cordon_run_status;

/* Fills *status. Errors: CORDON_E_USAGE_ERROR when run or status is NULL or
 * the run has not ended (cordon_run_wait() said CORDON_RUN_GOING). */
CORDON_C_API int cordon_run_status_get(const cordon_run* run, cordon_run_status* status);

/* The run report (JSON, "schema": 1, schemas/report.v1.schema.json), also
 * for a run that failed to start the command. NULL until the run ended. */
CORDON_C_API char* cordon_run_report_json(const cordon_run* run);

/* The error JSON of a run that did not run the command or was not
 * supervised to its end; NULL when it ran (or has not ended). */
CORDON_C_API char* cordon_run_error_json(const cordon_run* run);

/* Frees a run handle. A run still going is cancelled and waited for (this
 * blocks until its tree is gone). NULL is allowed. Never call it while
 * another thread uses the handle. */
CORDON_C_API void cordon_run_free(cordon_run* run);

/* ---- Prepared sandboxes (minor 2; docs/prepared.md) ---------------------
 *
 * A pool keeps sandboxes for one plan set up ahead of time (namespaces, the
 * mount table, Landlock, seccomp, the cgroup, the broker when the plan
 * filters the network), each waiting just before its command's exec.
 * Starting a command in one sends only argv, the environment, the working
 * directory and the three standard descriptors. A prepared sandbox is used
 * for one command only; the pool prepares its replacement. The run is the
 * same as cordon_run_start()'s: the same handle, the same report, which
 * also says "prepared": true and "prepared_at". */

typedef struct cordon_pool cordon_pool;

/* Starts preparing sandboxes for `plan` on a thread of the pool's own and
 * returns at once with *pool. The pool keeps what it needs of the plan: the
 * caller may free the plan first.
 *
 * options_json: NULL, "" or a JSON object with optional fields (unknown ones
 * are refused):
 *   "size"             sandboxes kept ready, 1..64 (default 2)
 *   "max_age_ms"       a sandbox ready longer is given up and replaced, so
 *                      that what the plan does not record (a file that
 *                      appeared, a changed mount) is never older than this
 *                      (default 30000; > 0)
 *   "wait_ms"          how long cordon_pool_start() waits when none is ready
 *                      (default 10000; >= 0)
 *   "refill_after_ms"  a started sandbox is replaced once its run ended or
 *                      this long after the start, whichever comes first
 *                      (default 50; 0 = at once)
 *   "supervisor_path"  the cordon-supervisor helper (default: as
 *                      cordon_run_request's supervisor_path)
 * Errors: CORDON_E_USAGE_ERROR (NULL plan or pool, bad options),
 * CORDON_E_PARSE_ERROR (options not JSON), CORDON_E_PLAN_NULL. */
CORDON_C_API int cordon_pool_new(const cordon_plan* plan, const char* options_json, cordon_pool** pool,
                                 char** error_json);

/* Takes a ready sandbox (waiting up to the pool's wait_ms) and starts
 * `request` in it, as cordon_run_start() does; request->supervisor_path is
 * not used (the pool's helper runs it). Errors: those of cordon_run_start();
 * CORDON_E_LAUNCH_FAILED when no sandbox became ready in time (with the last
 * preparation's error); CORDON_E_PLAN_STALE once a helper found that the
 * host changed since the plan was compiled (call cordon_pool_refresh()). A
 * terminal on a standard stream is relayed as a pipe. A sandbox was built on
 * the host facts of its preparation: after making a repository under a
 * writable root, call cordon_pool_refresh(), or the command may write that
 * repository's hooks (reported as violations in its report; docs/prepared.md,
 * "Invalidation"). */
CORDON_C_API int cordon_pool_start(cordon_pool* pool, const cordon_run_request* request, cordon_run** run,
                                   char** error_json);

/* How many sandboxes are ready now; -1 when pool is NULL. */
CORDON_C_API int cordon_pool_ready_count(const cordon_pool* pool);

/* Compiles the pool's policy again on fresh host facts; when the plan
 * changed (a repository appeared under a writable root, the cgroup site
 * changed), every sandbox prepared for the old one is given up. *changed
 * (when not NULL) is 1 then, else 0. Errors: the compile's (the policy
 * cannot run here any more: the pool is emptied), CORDON_E_USAGE_ERROR when
 * pool is NULL. */
CORDON_C_API int cordon_pool_refresh(cordon_pool* pool, int* changed, char** error_json);

/* Gives up every prepared sandbox (their helpers kill the waiting trees) and
 * stops the pool's thread (within about 100 ms, even while a helper is
 * still preparing); runs already started go on, each owned by its
 * cordon_run. NULL is allowed. Never call it while another thread is in a
 * cordon_pool_* call on the same pool. */
CORDON_C_API void cordon_pool_free(cordon_pool* pool);

/* ---- Governance (minor 1; docs/governance.md) ----------------------------
 *
 * The governance runtime judges a capability request (what an agent host
 * asks to do: schemas/capability_rules.v1.schema.json, "$defs/request")
 * against capability rules (allow / deny / require_approval), asks an
 * approver when the rules say so (showing it the compiled sandbox plan), runs
 * an allowed command under the sandbox policy, and records every step in an
 * audit log. `cordon exec` (docs/governance.md) is the same runtime. */

/* Capability rules (a rules file's JSON). Opaque, immutable, usable from
 * many threads at once. */
typedef struct cordon_rules cordon_rules;

/* Reads and checks rules JSON text (strict: unknown fields are errors; every
 * example the file holds must pass, `cordon rules test`). On success *rules
 * receives the rules, freed with cordon_rules_free(). Errors:
 * CORDON_E_PARSE_ERROR (location "line L, column C"),
 * CORDON_E_INVALID_POLICY (location: the JSON pointer of the problem, e.g.
 * "/rules/2/examples/match/0"), CORDON_E_USAGE_ERROR (NULL arguments). */
CORDON_C_API int cordon_rules_load(const char* rules_json, cordon_rules** rules, char** error_json);

/* Frees rules. NULL is allowed. */
CORDON_C_API void cordon_rules_free(cordon_rules* rules);

/* Judges one request (JSON, "$defs/request") without running anything: pure,
 * no file, process or network touched. *decision_json receives
 * {"decision": "allow"|"deny"|"require_approval", "reason": "one line",
 * "rule_id": "id or empty", "parts": [{"part", "decision", "rule_id",
 * "reason"}...], "uncertain": [...], "request_digest": "sha256:...",
 * "rules_digest": "sha256:..."}. A denial is an answer: it returns 0.
 * Errors: CORDON_E_PARSE_ERROR, CORDON_E_INVALID_POLICY (the request; JSON
 * pointer), CORDON_E_USAGE_ERROR (NULL arguments). */
CORDON_C_API int cordon_rules_decide(const cordon_rules* rules, const char* request_json, char** decision_json,
                                     char** error_json);

/* An approver the runtime calls for a require_approval request, on the
 * thread that called cordon_governance_execute(). `approval_request_json` is
 * what `cordon exec --approver CMD` writes on the command's stdin: the
 * request, its digest, the rules' reason and the compiled plan's level for
 * every control (docs/governance.md, "Approvals"). The approver writes one
 * decision, {"decision": "approved"|"denied"|"manual_review", "scope":
 * "once"|"session"|"workspace", "reason": "..."} (NUL-terminated, at most
 * `capacity` bytes with the NUL), into `decision_json` and returns 0. Any
 * other return, or text that is not such a decision (unknown fields
 * included), is a denial with the cause as its reason. The answer can only
 * permit or refuse the plan that was shown; it cannot change it. */
typedef int (*cordon_approver_fn)(void* user, const char* approval_request_json, char* decision_json,
                                  size_t capacity);

/* Runs one request through the governance runtime and blocks until it is
 * decided and, when allowed, has run to its end. The command inherits the
 * caller's stdin, stdout and stderr.
 *
 * context_json: a JSON object, every field optional (unknown fields are
 * errors):
 *   "workspace"     absolute directory ({workspace}; default working
 *                   directory); default: the current directory,
 *   "policy"        the sandbox policy (a JSON object, docs/policy.md), or
 *   "profile"       a built-in profile's name (default "workspace-write"),
 *   "session_id"    the session the audit events name (default "capi-PID"),
 *   "backend"       "auto" (default) | "require" | "forbid",
 *   "audit"         a tamper-evident audit log file (JSON Lines, appended;
 *                   an existing log must verify); without it, the events are
 *                   kept in memory and returned in the result's "events",
 *   "pre_approved"  a request digest ("sha256:...", as cordon_rules_decide
 *                   gives it for the request with its "working_directory"
 *                   set: an empty one becomes the workspace before the
 *                   digest is taken) that the host had approved beforehand: a
 *                   require_approval request with exactly that digest is
 *                   approved once (approver "host"); any other is
 *                   asked of `approver`,
 *   "shortcuts"     cordon_compile()'s "shortcuts", applied to the policy,
 *   "environment"   ["NAME=VALUE"...] the sandbox policy's environment rules
 *                   choose from (default: this process's environ); an entry
 *                   holding a NUL ("\u0000") is CORDON_E_USAGE_ERROR at
 *                   "/environment/N" (a C string would end there). A NUL in
 *                   the request's command or argv is CORDON_E_INVALID_POLICY
 *                   at "/command" or "/argv/N".
 * approver: NULL = every require_approval request that is not pre-approved
 * is denied (`cordon exec`'s default); `user` is passed to it unchanged.
 *
 * *result_json receives {"status": "completed"|"authorized"|"denied"|
 * "rejected"|"refused"|"failed"|"cancelled"|"timed_out", "reason",
 * "exit_code" (`cordon exec`'s: the command's, 128+signal, 124, 125, 126,
 * 127, 200 denied, 201 rejected), "run_id", "decision" (as
 * cordon_rules_decide), "approval": null | {"decision", "scope", "reason",
 * "approver"}, "request_digest", "rules_digest", "sandbox_policy_digest",
 * "report_digest", "report": the run report or null, "events": [...] (only
 * without "audit")}. A denial or a failed command is an answer: it returns
 * 0. Errors: CORDON_E_PARSE_ERROR, CORDON_E_INVALID_POLICY (the request, or
 * the policy in the context), CORDON_E_UNKNOWN_PROFILE, CORDON_E_IO_ERROR
 * and CORDON_E_INVALID_POLICY for an audit log that cannot be opened or does
 * not verify (nothing runs), CORDON_E_USAGE_ERROR (NULL arguments, a bad
 * context field). */
CORDON_C_API int cordon_governance_execute(const cordon_rules* rules, const char* request_json,
                                           const char* context_json, cordon_approver_fn approver, void* user,
                                           char** result_json, char** error_json);

/* The grants approvers gave with scope "session" or "workspace", kept across
 * calls (minor 3): a ledger passed to every cordon_governance_tool_call() of
 * a session lets one approval cover the same request again (for the same
 * session id, or the same workspace). Used by one thread at a time. */
typedef struct cordon_ledger cordon_ledger;
/* A new, empty ledger (NULL when out of memory); freed with cordon_ledger_free(). */
CORDON_C_API cordon_ledger* cordon_ledger_new(void);
/* Frees a ledger. NULL is allowed. */
CORDON_C_API void cordon_ledger_free(cordon_ledger* ledger);

/* Receives the command's output as it is read, before the cap: `stream` is 1
 * (stdout) or 2 (stderr), `bytes` holds `size` bytes (not NUL-terminated). */
typedef void (*cordon_output_fn)(void* user, int stream, const char* bytes, size_t size);

/* The tool-use call's input and output handling (minor 3). Zero-initialize
 * it and set what you need. */
typedef struct cordon_tool_io {
  const char* stdin_data; /* the command's stdin, `stdin_size` bytes, then end of file */
  size_t stdin_size;
  int64_t timeout_ms;     /* > 0: the tree is killed after this many ms; status
                             "timed_out", exit_code 124. <= 0: no host timeout */
  uint64_t max_output;    /* bytes kept per stream (head and tail); 0 = 1 MiB */
  cordon_output_fn on_output; /* NULL or a callback for every chunk read */
  void* output_user;
  cordon_pool* pool;      /* NULL or a pool: used when its plan is the plan
                             compiled for the request (else cold, with a warning) */
  cordon_ledger* ledger;  /* NULL or the session's approval ledger */
  /* NULL or "NAME=VALUE" entries, NULL-terminated, for this call only: added
   * to the context's environment (a name there is replaced); the policy's
   * environment rules still choose, and one they drop is named in the
   * result's "warnings". */
  const char* const* environment;
} cordon_tool_io;

/* The tool-use call: cordon_governance_execute()'s steps (rules, approval
 * shown the compiled plan, every step audited, the same context_json) with
 * the command's stdin fed from io->stdin_data and its stdout and stderr
 * captured, capped at io->max_output bytes per stream (the first half and
 * the last half are kept), a host timeout, an optional pool and an approval
 * ledger (io NULL = all defaults). The command always runs confined: a
 * request that backend selection would run on the host is "rejected".
 *
 * *result_json receives cordon_governance_execute()'s result plus
 * "stdout" and "stderr": {"base64": the kept bytes, exactly; "text": the same
 * as UTF-8 (invalid bytes replaced by U+FFFD); "bytes": what the command
 * wrote; "kept"; "dropped": bytes - kept; "dropped_at": where in the kept
 * bytes the dropped ones were}, "pooled": bool (it started in a sandbox of
 * io->pool), "warnings": [...], "sandbox_notes": [...] (what the sandbox
 * refused or hid that the output may not explain, one "[cordon] ..." line
 * each: every violation, and the report's view diagnoses; the same lines
 * cordon mcp adds to a shell result, docs/governance.md). The report's
 * "output" says the same as stdout and stderr (docs/report.md). Errors:
 * those of cordon_governance_execute(). */
CORDON_C_API int cordon_governance_tool_call(const cordon_rules* rules, const char* request_json,
                                             const char* context_json, const cordon_tool_io* io,
                                             cordon_approver_fn approver, void* user, char** result_json,
                                             char** error_json);

/* Appends one event to a tamper-evident audit log (created 0600 when
 * missing; an existing log must verify first) and makes it durable
 * (fdatasync) before returning. event_json: {"module", "event", "outcome",
 * "ids": {name: string}, "attributes": {name: string}, "elapsed_ms": N},
 * module, event and outcome required; the timestamp is the library's.
 * Errors: CORDON_E_IO_ERROR (errno), CORDON_E_INVALID_POLICY (the log does
 * not verify: nothing is appended), CORDON_E_PARSE_ERROR and
 * CORDON_E_USAGE_ERROR (the event). */
CORDON_C_API int cordon_audit_append(const char* path, const char* event_json, char** error_json);

/* Verifies an audit log (`cordon audit verify`): *verification_json receives
 * {"ok": bool, "events": N (records that verified from the start),
 * "bad_line": N (1-based; 0 when ok), "problem": "one line",
 * "last_hash", "interrupted_runs": [run_id...], "records": [{"seq", "hash",
 * "event"}...], "head_present": bool (FILE.head exists), "head_keyed": bool
 * (its MAC verified under the key given), "head_seq": N (the record it
 * names)}. A log with records and no FILE.head does not verify (ok false,
 * problem "no head file ..."): its last records could have been cut with
 * nothing to show it (docs/governance.md, "What the chain proves, against
 * whom"); a caller that keeps no head says so with cordon_audit_verify_with. A log
 * that does not verify is an answer (ok false), not an error. Errors:
 * CORDON_E_IO_ERROR (errno: it cannot be read), CORDON_E_USAGE_ERROR (NULL
 * arguments). Since minor 4 the head is required (before, a headless log
 * verified on its chain alone). */
CORDON_C_API int cordon_audit_verify(const char* path, char** verification_json, char** error_json);

/* cordon_audit_verify with the head rules chosen (minor 4). options_json
 * (NULL is {}): {"no_head": bool (default false: a log with records and no
 * FILE.head fails; true: no head is kept, the chain alone is verified and a
 * cut end goes unseen), "head_key_file": "path" (the head must carry an
 * HMAC-SHA256 under the key this file holds, at least 16 bytes, and name
 * the last record: the key cordon's jsonl sink was given, `cordon audit
 * verify --head-key-file`)}; "no_head" true with "head_key_file" is a usage
 * error. The answer is cordon_audit_verify's. Errors: CORDON_E_IO_ERROR
 * (errno: the log or the key file cannot be read), CORDON_E_PARSE_ERROR
 * (options_json is not JSON), CORDON_E_USAGE_ERROR (NULL path, an unknown
 * member or one of the wrong type, both members). */
CORDON_C_API int cordon_audit_verify_with(const char* path, const char* options_json, char** verification_json,
                                          char** error_json);

/* ---- The filesystem worker (minor 1; docs/fs-worker.md) -----------------
 *
 * An agent's file tools run in a confined, long-lived worker process under
 * the same plan as its commands, so that no path trick can do more than the
 * sandbox allows: the worker refuses `..` (path_escape), symbolic links
 * (symlink), other mounts, and the kernel's mount table and Landlock rules
 * hold underneath. One thread talks to one worker. */

typedef struct cordon_fs cordon_fs;

/* Compiles `policy_json` (NULL = the workspace-write profile) for the
 * workspace of options_json and starts a worker under it; when the plan does
 * not show the worker executable, the one file is added read-only (as
 * `cordon fs` does). options_json: cordon_compile()'s options plus
 * "worker" (the cordon-fs-worker executable; default $CORDON_FS_WORKER, the
 * installed one, the build tree's), "supervisor" (the helper) and
 * "deadline_ms" (a number: per request, default 10000). Errors: those of
 * cordon_compile(), CORDON_E_USAGE_ERROR (no worker executable, bad
 * options), CORDON_E_ENFORCEMENT_UNAVAILABLE (no mount table to resolve
 * against), CORDON_E_LAUNCH_FAILED. */
CORDON_C_API int cordon_fs_start(const char* policy_json, const char* options_json, cordon_fs** fs,
                                 char** error_json);

/* Sends one request (a JSON object on one line: {"op": "read"|"write"|
 * "edit"|"format_json"|"glob"|"grep"|"apply_patch"|"stat"|"list", ...},
 * docs/fs-worker.md, "Protocol") and gives the response line in
 * *response_json: {"ok": true, "result", "touched"} or {"ok": false, "error":
 * {"code": stable code (path_escape, symlink, denied, not_found, ...),
 * "message", "rule"?}}. A refusal is a response: it returns 0. Errors (of the
 * channel): CORDON_E_USAGE_ERROR (NULL, a line over the request limit or
 * holding a newline), CORDON_E_IO_ERROR (the worker is gone or missed its
 * deadline + 2 s; it is killed and every later call fails). */
CORDON_C_API int cordon_fs_call(cordon_fs* fs, const char* request_json, char** response_json, char** error_json);

/* The worker's host PID, -1 when fs is NULL or finished. */
CORDON_C_API int cordon_fs_pid(const cordon_fs* fs);

/* Ends the worker: closes its input, waits for its final report (5 s, then it
 * is cancelled). *report_json receives {"worker": the worker's report
 * ({"requests", "failed", "writes": [...]}) or null, "run": the run report}.
 * Later calls fail with CORDON_E_USAGE_ERROR. */
CORDON_C_API int cordon_fs_finish(cordon_fs* fs, char** report_json, char** error_json);

/* Frees the handle; a worker still running is killed. NULL is allowed. */
CORDON_C_API void cordon_fs_free(cordon_fs* fs);

#ifdef __cplusplus
}
#endif

#endif /* CORDON_CORDON_C_H */

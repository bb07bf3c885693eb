/* addon_tools.c — the tool-use call and the file worker of cordon.node
 * (docs/node.md, "The tool-use call", "The file worker"), over libcordon_c's
 * cordon_governance_tool_call and cordon_fs_*: calls that block, so they run
 * off the event loop. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "addon.h"

/* ---- the tool-use call (ABI minor 3, docs/node.md "The tool-use call") ----
 *
 * cordon_governance_tool_call blocks until the command ended, so it runs on a
 * thread of its own; everything it hands back to JavaScript (each chunk of
 * output, the approval request, the result) goes through one thread-safe
 * function, in order: the result comes after the last chunk. The approver is
 * asked on the event loop and may answer later (a promise): the call's
 * thread waits for the answer. The queue holds at most 16 messages, so a
 * command that writes faster than JavaScript reads waits (backpressure), and
 * the host never holds more than that besides the capped output. */

static const napi_type_tag ledger_tag = {0x636f72646f6e2d6cULL, 0x6564676572786d34ULL};

static void ledger_finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  cordon_ledger_free(data);
}

/* ledgerNew() -> ledger external */
napi_value ledger_new(napi_env env, napi_callback_info info) {
  (void)info;
  cordon_ledger* ledger = cordon_ledger_new();
  if (ledger == NULL) {
    napi_throw_error(env, "cordon_addon", "cordon_ledger_new: out of memory");
    return NULL;
  }
  return make_tagged_external(env, ledger, ledger_finalize, &ledger_tag);
}

enum { MESSAGE_OUTPUT, MESSAGE_APPROVAL, MESSAGE_DONE };

typedef struct tool_message {
  int kind;
  int stream;
  char* bytes; /* output bytes, or the approval request (NUL-terminated) */
  size_t size;
} tool_message;

typedef struct tool_call_box {
  napi_threadsafe_function tsfn;
  /* Kept alive while the call's thread uses them. */
  napi_ref rules_ref, pool_ref, ledger_ref;
  /* JavaScript's callbacks: approver(requestJson, answer), output(stream,
   * Buffer), done(resultJson, errorJson); the first two may be NULL. */
  napi_ref approver, output, done;
  const cordon_rules* rules;
  pool_box* pool;
  char* request;
  char* context;
  char* stdin_data;
  char** environment;
  cordon_tool_io io;
  int code;
  char* result;
  char* error;
  uv_sem_t answered; /* posted by answer() */
  int awaiting;      /* an approval request is out (main thread) */
  char* answer;      /* the decision JSON, or NULL: denied */
} tool_call_box;

static void delete_ref(napi_env env, napi_ref ref) {
  if (ref != NULL) napi_delete_reference(env, ref);
}

/* The thread-safe function is gone (main thread): everything is freed. */
static void tool_call_finalize(napi_env env, void* data, void* hint) {
  (void)hint;
  tool_call_box* box = data;
  if (box->pool != NULL && --box->pool->busy == 0 && box->pool->close_pending) {
    cordon_pool_free(box->pool->pool);
    box->pool->pool = NULL;
  }
  napi_ref refs[] = {box->rules_ref, box->pool_ref, box->ledger_ref, box->approver, box->output, box->done};
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; ++i) delete_ref(env, refs[i]);
  free(box->request);
  free(box->context);
  free(box->stdin_data);
  free_array(box->environment);
  cordon_string_free(box->result);
  cordon_string_free(box->error);
  free(box->answer);
  uv_sem_destroy(&box->answered);
  free(box);
}

/* answer(decisionJson | null): the approver's answer, once. */
static napi_value tool_answer(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  void* data = NULL;
  size_t argc = 1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, &data) != napi_ok) return NULL;
  tool_call_box* box = data;
  if (!box->awaiting) return NULL;
  box->awaiting = 0;
  int ok = 1;
  box->answer = argc >= 1 ? string_arg(env, argv[0], &ok) : NULL;
  uv_sem_post(&box->answered);
  return NULL;
}

static napi_value ref_value(napi_env env, napi_ref ref) {
  napi_value out = NULL;
  napi_get_reference_value(env, ref, &out);
  return out;
}

/* Delivers one message on the event loop (env NULL: the function is being
 * torn down, and an approval is then a denial). */
static void tool_call_js(napi_env env, napi_value unused, void* context, void* data) {
  (void)unused;
  tool_call_box* box = context;
  tool_message* m = data;
  if (env == NULL) {
    if (m->kind == MESSAGE_APPROVAL) uv_sem_post(&box->answered);
    free(m->bytes);
    free(m);
    return;
  }
  napi_value global, ignored;
  napi_get_global(env, &global);
  if (m->kind == MESSAGE_OUTPUT && box->output != NULL) {
    napi_value args[2];
    args[0] = int_value(env, m->stream);
    napi_create_buffer_copy(env, m->size, m->bytes, NULL, &args[1]);
    napi_call_function(env, global, ref_value(env, box->output), 2, args, &ignored);
  } else if (m->kind == MESSAGE_APPROVAL) {
    napi_value args[2];
    args[0] = string_value(env, m->bytes);
    box->awaiting = 1;
    if (box->approver == NULL ||
        napi_create_function(env, "answer", NAPI_AUTO_LENGTH, tool_answer, box, &args[1]) != napi_ok ||
        napi_call_function(env, global, ref_value(env, box->approver), 2, args, &ignored) != napi_ok) {
      box->awaiting = 0;
      uv_sem_post(&box->answered); /* no answer: denied */
    }
  } else if (m->kind == MESSAGE_DONE) {
    napi_value args[2];
    args[0] = string_value(env, box->code == CORDON_OK ? box->result : NULL);
    args[1] = box->code == CORDON_OK ? string_value(env, NULL) : error_result(env, box->error, box->code);
    box->error = NULL; /* error_result took it */
    napi_call_function(env, global, ref_value(env, box->done), 2, args, &ignored);
  }
  free(m->bytes);
  free(m);
}

/* Queues one message; 0 when the function is closing. */
static int post(tool_call_box* box, int kind, int stream, char* bytes, size_t size) {
  tool_message* m = malloc(sizeof *m);
  if (m == NULL) {
    free(bytes);
    return 0;
  }
  m->kind = kind;
  m->stream = stream;
  m->bytes = bytes;
  m->size = size;
  if (napi_call_threadsafe_function(box->tsfn, m, napi_tsfn_blocking) != napi_ok) {
    free(bytes);
    free(m);
    return 0;
  }
  return 1;
}

/* The C approver (the call's thread): asks JavaScript and waits for its answer. */
static int tool_approver(void* user, const char* request, char* decision, size_t capacity) {
  tool_call_box* box = user;
  char* copy = strdup(request);
  if (copy == NULL || !post(box, MESSAGE_APPROVAL, 0, copy, 0)) return -1;
  uv_sem_wait(&box->answered);
  char* answer = box->answer;
  box->answer = NULL;
  if (answer == NULL) return -1;
  size_t length = strlen(answer);
  int code = length < capacity ? 0 : -2;
  if (code == 0) memcpy(decision, answer, length + 1);
  free(answer);
  return code;
}

static void tool_output(void* user, int stream, const char* bytes, size_t size) {
  tool_call_box* box = user;
  char* copy = malloc(size > 0 ? size : 1);
  if (copy == NULL) return;
  memcpy(copy, bytes, size);
  post(box, MESSAGE_OUTPUT, stream, copy, size);
}

static void* tool_call_thread(void* data) {
  tool_call_box* box = data;
  box->code = cordon_governance_tool_call(box->rules, box->request, box->context, &box->io,
                                          box->approver != NULL ? tool_approver : NULL, box, &box->result,
                                          &box->error);
  post(box, MESSAGE_DONE, 0, NULL, 0);
  napi_release_threadsafe_function(box->tsfn, napi_tsfn_release);
  return NULL;
}

static napi_ref function_ref(napi_env env, napi_value value) {
  napi_valuetype type;
  napi_ref ref = NULL;
  if (napi_typeof(env, value, &type) == napi_ok && type == napi_function) napi_create_reference(env, value, 1, &ref);
  return ref;
}

static napi_ref keep(napi_env env, napi_value value) {
  napi_ref ref = NULL;
  napi_create_reference(env, value, 1, &ref);
  return ref;
}

/* Reads io {stdin: Buffer?, timeoutMs, maxOutput, pool, ledger,
 * environment: [string|Buffer]} into box; 0 on a bad field. */
static int read_tool_io(napi_env env, napi_value io, tool_call_box* box) {
  napi_value v;
  napi_valuetype type;
  if (napi_get_named_property(env, io, "stdin", &v) == napi_ok && napi_typeof(env, v, &type) == napi_ok &&
      type != napi_undefined && type != napi_null) {
    void* data = NULL;
    size_t length = 0;
    bool is_buffer = false;
    if (napi_is_buffer(env, v, &is_buffer) != napi_ok || !is_buffer) return 0;
    napi_get_buffer_info(env, v, &data, &length);
    box->stdin_data = malloc(length > 0 ? length : 1);
    if (box->stdin_data == NULL) return 0;
    memcpy(box->stdin_data, data, length);
    box->io.stdin_data = box->stdin_data;
    box->io.stdin_size = length;
  }
  double number = 0;
  if (napi_get_named_property(env, io, "timeoutMs", &v) == napi_ok && napi_get_value_double(env, v, &number) == napi_ok) {
    box->io.timeout_ms = (int64_t)number;
  }
  if (napi_get_named_property(env, io, "maxOutput", &v) == napi_ok && napi_get_value_double(env, v, &number) == napi_ok) {
    if (number < 1) return 0;
    box->io.max_output = (uint64_t)number;
  }
  if (napi_get_named_property(env, io, "pool", &v) == napi_ok && napi_typeof(env, v, &type) == napi_ok &&
      type != napi_undefined && type != napi_null) {
    box->pool = pool_arg(env, v);
    if (box->pool == NULL || box->pool->pool == NULL || box->pool->close_pending) {
      box->pool = NULL;
      return 0;
    }
    box->pool->busy++;
    box->pool_ref = keep(env, v);
    box->io.pool = box->pool->pool;
  }
  if (napi_get_named_property(env, io, "ledger", &v) == napi_ok && napi_typeof(env, v, &type) == napi_ok &&
      type != napi_undefined && type != napi_null) {
    box->io.ledger = tagged_external(env, v, &ledger_tag);
    if (box->io.ledger == NULL) return 0;
    box->ledger_ref = keep(env, v);
  }
  if (napi_get_named_property(env, io, "environment", &v) == napi_ok && napi_typeof(env, v, &type) == napi_ok &&
      type != napi_undefined && type != napi_null) {
    box->environment = string_array(env, v);
    if (box->environment == NULL) return 0;
    box->io.environment = (const char* const*)box->environment;
  }
  return 1;
}

/* toolCall(rules, requestJson, contextJson, io, approver, output, done) ->
 * undefined | {error}: starts the call; done(resultJson, null) or
 * done(null, {error}) is called once, after the last output(stream, Buffer).
 * approver(approvalRequestJson, answer) must call answer(decisionJson) once
 * (answer(null): denied). */
napi_value tool_call(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  CHECK_NAPI(get_args(env, info, 7, argv) ? napi_ok : napi_generic_failure);
  tool_call_box* box = calloc(1, sizeof *box);
  if (box == NULL || uv_sem_init(&box->answered, 0) != 0) {
    free(box);
    napi_throw_error(env, "cordon_addon", "out of memory");
    return NULL;
  }
  int ok = 1;
  box->rules = tagged_external(env, argv[0], &rules_tag);
  box->request = string_arg(env, argv[1], &ok);
  box->context = ok ? string_arg(env, argv[2], &ok) : NULL;
  box->approver = function_ref(env, argv[4]);
  box->output = function_ref(env, argv[5]);
  box->done = function_ref(env, argv[6]);
  if (box->output != NULL) {
    box->io.on_output = tool_output;
    box->io.output_user = box;
  }
  napi_value name;
  napi_create_string_utf8(env, "cordon.toolCall", NAPI_AUTO_LENGTH, &name);
  if (!ok || box->rules == NULL || box->request == NULL || box->done == NULL || !read_tool_io(env, argv[3], box)) {
    tool_call_finalize(env, box, NULL);
    char* error = NULL;
    return error_result(env, error, CORDON_E_USAGE_ERROR);
  }
  box->rules_ref = keep(env, argv[0]);
  if (napi_create_threadsafe_function(env, NULL, NULL, name, 16, 1, box, tool_call_finalize, box, tool_call_js,
                                      &box->tsfn) != napi_ok) {
    tool_call_finalize(env, box, NULL);
    napi_throw_error(env, "cordon_addon", "napi_create_threadsafe_function failed");
    return NULL;
  }
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int started = pthread_create(&thread, &attr, tool_call_thread, box);
  pthread_attr_destroy(&attr);
  if (started != 0) {
    napi_release_threadsafe_function(box->tsfn, napi_tsfn_abort); /* finalize frees box */
    napi_throw_error(env, "cordon_addon", "cannot start the tool call's thread");
    return NULL;
  }
  return NULL;
}

/* ---- the filesystem worker (ABI minor 1, docs/fs-worker.md; docs/node.md
 * "The file worker") ----
 *
 * cordon_fs_start, _call and _finish block (a request waits for the
 * worker's answer), so each runs as async work on libuv's pool and answers
 * through a callback: the event loop goes on. index.js lets one call at a
 * time reach a worker (one thread per worker, cordon_c.h). */

static const napi_type_tag fs_tag = {0x636f72646f6e2d66ULL, 0x732d776f726b786dULL};

typedef struct fs_box {
  cordon_fs* fs;
} fs_box;

static void fs_finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  fs_box* box = data;
  cordon_fs_free(box->fs); /* a worker still running is killed */
  free(box);
}

enum { FS_START, FS_CALL, FS_FINISH };

typedef struct fs_work {
  int op;
  fs_box* box;     /* FS_CALL, FS_FINISH: the worker (kept alive by keep) */
  napi_ref keep;   /* the worker's external while the work runs */
  napi_ref done;   /* done({error} | null, text | external) */
  char* a;         /* FS_START: policy JSON; FS_CALL: request JSON */
  char* b;         /* FS_START: options JSON */
  cordon_fs* started;
  int code;
  char* out;
  char* error;
  napi_async_work work;
} fs_work;

static void fs_execute(napi_env env, void* data) {
  (void)env;
  fs_work* w = data;
  if (w->op == FS_START) {
    w->code = cordon_fs_start(w->a, w->b, &w->started, &w->error);
  } else if (w->op == FS_CALL) {
    w->code = cordon_fs_call(w->box->fs, w->a, &w->out, &w->error);
  } else {
    w->code = cordon_fs_finish(w->box->fs, &w->out, &w->error);
  }
}

static void fs_complete(napi_env env, napi_status status, void* data) {
  (void)status;
  fs_work* w = data;
  napi_value args[2], global, ignored;
  napi_get_global(env, &global);
  if (w->code != CORDON_OK) {
    args[0] = error_result(env, w->error, w->code);
    w->error = NULL;
    napi_get_null(env, &args[1]);
  } else if (w->op == FS_START) {
    napi_get_null(env, &args[0]);
    fs_box* box = calloc(1, sizeof *box);
    if (box == NULL) {
      cordon_fs_free(w->started);
      args[0] = error_result(env, NULL, CORDON_E_LAUNCH_FAILED);
      napi_get_null(env, &args[1]);
    } else {
      box->fs = w->started;
      args[1] = make_tagged_external(env, box, fs_finalize, &fs_tag);
    }
  } else {
    napi_get_null(env, &args[0]);
    args[1] = string_value(env, w->out);
  }
  napi_value done = ref_value(env, w->done);
  delete_ref(env, w->done);
  delete_ref(env, w->keep);
  napi_delete_async_work(env, w->work);
  free(w->a);
  free(w->b);
  cordon_string_free(w->out);
  cordon_string_free(w->error);
  free(w);
  napi_call_function(env, global, done, 2, args, &ignored);
}

/* Queues w (its done callback is argv[last]); {error} when it cannot. */
static napi_value fs_queue(napi_env env, fs_work* w, napi_value done) {
  napi_value name;
  napi_create_string_utf8(env, "cordon.fs", NAPI_AUTO_LENGTH, &name);
  w->done = function_ref(env, done);
  if (w->done == NULL || napi_create_async_work(env, NULL, name, fs_execute, fs_complete, w, &w->work) != napi_ok ||
      napi_queue_async_work(env, w->work) != napi_ok) {
    delete_ref(env, w->done);
    delete_ref(env, w->keep);
    free(w->a);
    free(w->b);
    free(w);
    return error_result(env, NULL, CORDON_E_USAGE_ERROR);
  }
  return NULL;
}

/* fsStart(policyJson | null, optionsJson, done) */
napi_value fs_start(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  CHECK_NAPI(get_args(env, info, 3, argv) ? napi_ok : napi_generic_failure);
  fs_work* w = calloc(1, sizeof *w);
  int ok = 1;
  if (w == NULL) return error_result(env, NULL, CORDON_E_LAUNCH_FAILED);
  w->op = FS_START;
  w->a = string_arg(env, argv[0], &ok);
  w->b = ok ? string_arg(env, argv[1], &ok) : NULL;
  if (!ok) {
    free(w->a);
    free(w->b);
    free(w);
    return error_result(env, NULL, CORDON_E_USAGE_ERROR);
  }
  return fs_queue(env, w, argv[2]);
}

/* fsCall(worker, requestJson, done) and fsFinish(worker, done) */
static napi_value fs_call_or_finish(napi_env env, napi_callback_info info, int op) {
  napi_value argv[3];
  CHECK_NAPI(get_args(env, info, 3, argv) ? napi_ok : napi_generic_failure);
  fs_box* box = tagged_external(env, argv[0], &fs_tag);
  fs_work* w = calloc(1, sizeof *w);
  int ok = 1;
  if (w == NULL) return error_result(env, NULL, CORDON_E_LAUNCH_FAILED);
  w->op = op;
  w->box = box;
  if (op == FS_CALL) w->a = string_arg(env, argv[1], &ok);
  if (box == NULL || box->fs == NULL || !ok || (op == FS_CALL && w->a == NULL)) {
    free(w->a);
    free(w);
    return error_result(env, NULL, CORDON_E_USAGE_ERROR);
  }
  w->keep = keep(env, argv[0]);
  return fs_queue(env, w, argv[op == FS_CALL ? 2 : 1]);
}

napi_value fs_call(napi_env env, napi_callback_info info) { return fs_call_or_finish(env, info, FS_CALL); }
napi_value fs_finish(napi_env env, napi_callback_info info) { return fs_call_or_finish(env, info, FS_FINISH); }

/* fsPid(worker) -> the worker's supervisor PID, -1 once finished */
napi_value fs_pid(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  fs_box* box = tagged_external(env, argv[0], &fs_tag);
  return int_value(env, box != NULL ? cordon_fs_pid(box->fs) : -1);
}


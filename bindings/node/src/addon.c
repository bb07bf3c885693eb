/* cordon.node — the Node.js addon over libcordon's C API (include/cordon/
 * cordon_c.h), in C with the plain N-API (node_api.h, which ships with
 * Node.js: no node-addon-api). index.js is the public API (docs/node.md).
 *
 * The end of a run is watched with a uv_poll on the C API's wait descriptor
 * (cordon_run_wait_fd): no thread of libuv's pool is held while a command
 * runs. Output streams are the pipe descriptors, handed to JavaScript, which
 * opens them as net.Socket (also non-blocking, on the event loop).
 *
 * Every function that can fail returns {error: "<error JSON>"} instead of
 * throwing, so that index.js builds one CordonError type with the stable code
 * and the blockers. */
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cordon/cordon_c.h"
#include "addon.h"


/* One run: the C handle, and the poll watching its end. Freed when both the
 * JavaScript object is collected and the poll is closed. */
typedef struct run_box {
  cordon_run* run;
  uv_poll_t poll;
  int polling;         /* the poll is started */
  int poll_open;       /* uv_poll_init succeeded and uv_close has not finished */
  int collected;       /* the JavaScript external was finalized */
  napi_env env;
  /* waitEnd()'s callback while one is pending, and its async context: the
   * callback is made with napi_make_callback, which runs the microtasks it
   * queues (a promise resolved from a bare libuv callback would wait for
   * the next unrelated JavaScript callback). */
  napi_ref ended;
  napi_ref resource;
  napi_async_context context;
} run_box;

/* ---- values ---- */

napi_value string_value(napi_env env, const char* text) {
  napi_value out;
  if (text == NULL) {
    napi_get_null(env, &out);
  } else {
    napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &out);
  }
  return out;
}

/* A library string as a JavaScript string (null for NULL), freed. */
napi_value take_string(napi_env env, char* text) {
  napi_value out = string_value(env, text);
  cordon_string_free(text);
  return out;
}

napi_value error_result(napi_env env, char* error_json, int code) {
  napi_value out;
  napi_create_object(env, &out);
  if (error_json == NULL) {
    /* Out of memory for the error document: the code alone. */
    char fallback[160];
    const char* name = cordon_error_code_name(code);
    snprintf(fallback, sizeof fallback, "{\"code\":\"%s\",\"message\":\"no details\",\"location\":\"\",\"errno\":0,"
             "\"errors\":[],\"blockers\":[]}", name != NULL ? name : "launch_failed");
    napi_set_named_property(env, out, "error", string_value(env, fallback));
  } else {
    napi_set_named_property(env, out, "error", take_string(env, error_json));
  }
  return out;
}

/* Argument i as a new C string (NULL for undefined/null); *ok = 0 when it is
 * another type or holds a NUL (a C string would end there). */
char* string_arg(napi_env env, napi_value value, int* ok) {
  napi_valuetype type;
  napi_typeof(env, value, &type);
  if (type == napi_undefined || type == napi_null) return NULL;
  size_t length = 0;
  if (type != napi_string || napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) {
    *ok = 0;
    return NULL;
  }
  char* out = malloc(length + 1);
  if (out == NULL) {
    *ok = 0;
    return NULL;
  }
  napi_get_value_string_utf8(env, value, out, length + 1, &length);
  if (strlen(out) != length) {
    free(out);
    *ok = 0;
    return NULL;
  }
  return out;
}

/* A string (UTF-8) or a Buffer (its bytes, unchanged) as a new C string;
 * NULL when it is neither or holds a NUL. */
static char* bytes_arg(napi_env env, napi_value value) {
  bool is_buffer = false;
  if (napi_is_buffer(env, value, &is_buffer) != napi_ok || !is_buffer) {
    int ok = 1;
    char* out = string_arg(env, value, &ok);
    return ok ? out : NULL;
  }
  void* data = NULL;
  size_t length = 0;
  if (napi_get_buffer_info(env, value, &data, &length) != napi_ok || memchr(data, 0, length) != NULL) return NULL;
  char* out = malloc(length + 1);
  if (out == NULL) return NULL;
  memcpy(out, data, length);
  out[length] = 0;
  return out;
}

/* A JavaScript array of strings or Buffers (bytes passed unchanged) as a
 * NULL-terminated C array (each element and the array malloc'ed); NULL when
 * value is not such an array or an element holds a NUL. */
char** string_array(napi_env env, napi_value value) {
  bool is_array = false;
  if (napi_is_array(env, value, &is_array) != napi_ok || !is_array) return NULL;
  uint32_t n = 0;
  napi_get_array_length(env, value, &n);
  char** out = calloc((size_t)n + 1, sizeof *out);
  if (out == NULL) return NULL;
  for (uint32_t i = 0; i < n; ++i) {
    napi_value item;
    napi_get_element(env, value, i, &item);
    out[i] = bytes_arg(env, item);
    if (out[i] == NULL) {
      for (uint32_t j = 0; j <= i; ++j) free(out[j]);
      free(out);
      return NULL;
    }
  }
  return out;
}

void free_array(char** items) {
  for (char** p = items; p != NULL && *p != NULL; ++p) free(*p);
  free(items);
}

napi_value int_value(napi_env env, int64_t v) {
  napi_value out;
  napi_create_int64(env, v, &out);
  return out;
}

int get_args(napi_env env, napi_callback_info info, size_t want, napi_value* argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return 0;
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  for (size_t i = argc; i < want; ++i) argv[i] = undefined;
  return 1;
}

/* ---- handles ---- */

/* Every external this addon makes carries the type tag of what it holds, and
 * every function checks it: a pool passed where a plan or a run is expected
 * is refused, never read as one. */
static const napi_type_tag plan_tag = {0x636f72646f6e2d70ULL, 0x6c616e2d62786d31ULL};
static const napi_type_tag run_tag = {0x636f72646f6e2d72ULL, 0x756e2d2d62786d31ULL};
static const napi_type_tag pool_tag = {0x636f72646f6e2d70ULL, 0x6f6f6c2d62786d32ULL};

/* The data of an external tagged `tag`; NULL for any other value. */
void* tagged_external(napi_env env, napi_value value, const napi_type_tag* tag) {
  bool tagged = false;
  void* data = NULL;
  if (napi_check_object_type_tag(env, value, tag, &tagged) != napi_ok || !tagged) return NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok) return NULL;
  return data;
}

/* A new external that owns `data` (freed by `finalize`), tagged; NULL when it
 * cannot be made, and then `data` has been finalized already or will be when
 * the untagged external is collected: the caller frees nothing. */
napi_value make_tagged_external(napi_env env, void* data, napi_finalize finalize, const napi_type_tag* tag) {
  napi_value external;
  if (napi_create_external(env, data, finalize, NULL, &external) != napi_ok) {
    finalize(env, data, NULL);
    return NULL;
  }
  if (napi_type_tag_object(env, external, tag) != napi_ok) return NULL;
  return external;
}

/* ---- plans ---- */

static void plan_finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  cordon_plan_free(data);
}

static cordon_plan* plan_arg(napi_env env, napi_value value) { return tagged_external(env, value, &plan_tag); }

/* abiVersion() -> number; libraryVersion() -> string */
static napi_value abi_version(napi_env env, napi_callback_info info) {
  (void)info;
  return int_value(env, cordon_abi_version());
}

static napi_value library_version(napi_env env, napi_callback_info info) {
  (void)info;
  return string_value(env, cordon_library_version());
}

/* {json: text} on success, else {error}: what every JSON-answering call returns. */
static napi_value json_answer(napi_env env, int code, char* text, char* error) {
  if (code != CORDON_OK) {
    cordon_string_free(text);
    return error_result(env, error, code);
  }
  napi_value out;
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "json", take_string(env, text));
  return out;
}

/* The two string arguments (policy JSON, options JSON) of compile and
 * explain, malloc'ed; 0 when either is not a string (or null). */
static int policy_and_options(napi_env env, napi_callback_info info, char** policy, char** options) {
  napi_value argv[2];
  int ok = get_args(env, info, 2, argv);
  *policy = ok ? string_arg(env, argv[0], &ok) : NULL;
  *options = ok ? string_arg(env, argv[1], &ok) : NULL;
  return ok;
}

/* profileJson(name) -> {json} | {error} */
static napi_value profile_json(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  int ok = 1;
  char* name = string_arg(env, argv[0], &ok);
  char* text = NULL;
  char* error = NULL;
  int code = ok ? cordon_profile_json(name, &text, &error) : CORDON_E_USAGE_ERROR;
  free(name);
  return json_answer(env, code, text, error);
}

/* compile(policyJson, optionsJson) -> {plan} | {error} */
static napi_value compile(napi_env env, napi_callback_info info) {
  char *policy, *options;
  int ok = policy_and_options(env, info, &policy, &options);
  cordon_plan* plan = NULL;
  char* error = NULL;
  int code = ok ? cordon_compile(policy, options, &plan, &error) : CORDON_E_USAGE_ERROR;
  free(policy);
  free(options);
  if (code != CORDON_OK) return error_result(env, error, code);
  napi_value out;
  napi_create_object(env, &out);
  napi_value external = make_tagged_external(env, plan, plan_finalize, &plan_tag);
  if (external == NULL) {
    napi_throw_error(env, "cordon_addon", "napi_create_external failed");
    return NULL;
  }
  napi_set_named_property(env, out, "plan", external);
  return out;
}

/* planJson(plan) -> string */
static napi_value plan_json(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  return take_string(env, cordon_plan_json(plan_arg(env, argv[0])));
}

/* explain(policyJson, optionsJson) -> {json} | {error} */
static napi_value explain(napi_env env, napi_callback_info info) {
  char *policy, *options;
  int ok = policy_and_options(env, info, &policy, &options);
  char* text = NULL;
  char* error = NULL;
  int code = ok ? cordon_explain(policy, options, &text, &error) : CORDON_E_USAGE_ERROR;
  free(policy);
  free(options);
  return json_answer(env, code, text, error);
}

/* probe() -> {json} | {error} */
static napi_value probe(napi_env env, napi_callback_info info) {
  (void)info;
  char* text = NULL;
  char* error = NULL;
  int code = cordon_probe(&text, &error);
  return json_answer(env, code, text, error);
}

/* ---- runs ---- */

static void box_release(run_box* box) {
  /* Both owners gone: JavaScript's object and the poll. A run still going is
   * cancelled and waited for by cordon_run_free. */
  if (!box->collected || box->poll_open) return;
  cordon_run_free(box->run);
  free(box);
}

static void poll_closed(uv_handle_t* handle) {
  run_box* box = handle->data;
  box->poll_open = 0;
  box_release(box);
}

static void stop_poll(run_box* box) {
  if (box->polling) {
    uv_poll_stop(&box->poll);
    box->polling = 0;
  }
}

static void run_finalize(napi_env env, void* data, void* hint) {
  (void)hint;
  run_box* box = data;
  box->collected = 1;
  stop_poll(box);
  if (box->ended != NULL) {
    /* Collected with a waitEnd() pending: its callback will never be called. */
    napi_delete_reference(env, box->ended);
    napi_delete_reference(env, box->resource);
    napi_async_destroy(env, box->context);
    box->ended = NULL;
  }
  if (box->poll_open && !uv_is_closing((uv_handle_t*)&box->poll)) uv_close((uv_handle_t*)&box->poll, poll_closed);
  box_release(box);
}

static run_box* run_arg(napi_env env, napi_value value) { return tagged_external(env, value, &run_tag); }

/* Calls waitEnd()'s callback, once. */
static void call_ended(run_box* box) {
  if (box->ended == NULL) return;
  napi_env env = box->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, resource, ignored;
  napi_get_reference_value(env, box->ended, &callback);
  napi_get_reference_value(env, box->resource, &resource);
  napi_async_context context = box->context;
  napi_delete_reference(env, box->ended);
  napi_delete_reference(env, box->resource);
  box->ended = NULL;
  box->resource = NULL;
  box->context = NULL;
  if (box->poll_open) uv_unref((uv_handle_t*)&box->poll);
  napi_make_callback(env, context, resource, callback, 0, NULL, &ignored);
  napi_async_destroy(env, context);
  napi_close_handle_scope(env, scope);
}

/* The wait descriptor is readable: the report arrived (maybe in part) or the helper ended. */
static void on_wait_fd(uv_poll_t* handle, int status, int events) {
  (void)status;
  (void)events;
  run_box* box = handle->data;
  if (cordon_run_wait(box->run, 0) != CORDON_RUN_ENDED) return;
  stop_poll(box);
  call_ended(box);
}

static int mode_of(napi_env env, napi_value value, cordon_stdio* io) {
  /* "inherit" | "pipe" | a descriptor number */
  napi_valuetype type;
  napi_typeof(env, value, &type);
  if (type == napi_number) {
    int32_t fd = -1;
    napi_get_value_int32(env, value, &fd);
    io->mode = CORDON_STDIO_FD;
    io->fd = fd;
    return 1;
  }
  char text[16] = "";
  size_t length = 0;
  if (type != napi_string || napi_get_value_string_utf8(env, value, text, sizeof text, &length) != napi_ok) return 0;
  if (strcmp(text, "inherit") == 0) {
    io->mode = CORDON_STDIO_INHERIT;
  } else if (strcmp(text, "pipe") == 0) {
    io->mode = CORDON_STDIO_PIPE;
  } else {
    return 0;
  }
  return 1;
}

/* ---- pools of prepared sandboxes (ABI minor 2, docs/prepared.md) ---- */

/* A pool's external: closed by poolClose() or when collected, whichever
 * comes first. Runs started from it own themselves. */

static void pool_finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  pool_box* box = data;
  cordon_pool_free(box->pool);
  free(box);
}

/* The pool of an external made by poolNew(); NULL for anything else. */
pool_box* pool_arg(napi_env env, napi_value value) { return tagged_external(env, value, &pool_tag); }

/* poolNew(plan, optionsJson) -> {pool} | {error} */
static napi_value pool_new(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  CHECK_NAPI(get_args(env, info, 2, argv) ? napi_ok : napi_generic_failure);
  int ok = 1;
  char* options = string_arg(env, argv[1], &ok);
  cordon_plan* plan = plan_arg(env, argv[0]);
  pool_box* box = calloc(1, sizeof *box);
  char* error = NULL;
  int code = box == NULL ? CORDON_E_LAUNCH_FAILED
             : ok        ? cordon_pool_new(plan, options, &box->pool, &error)
                         : CORDON_E_USAGE_ERROR;
  free(options);
  if (code != CORDON_OK) {
    free(box);
    return error_result(env, error, code);
  }
  napi_value out;
  napi_create_object(env, &out);
  napi_value external = make_tagged_external(env, box, pool_finalize, &pool_tag);
  if (external == NULL) {
    napi_throw_error(env, "cordon_addon", "napi_create_external failed");
    return NULL;
  }
  napi_set_named_property(env, out, "pool", external);
  return out;
}

/* poolReady(pool) -> number of sandboxes ready; -1 once closed */
static napi_value pool_ready(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  pool_box* box = pool_arg(env, argv[0]);
  return int_value(env, box != NULL ? cordon_pool_ready_count(box->pool) : -1);
}

/* poolRefresh(pool) -> {changed: boolean} | {error} */
static napi_value pool_refresh(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  pool_box* box = pool_arg(env, argv[0]);
  int changed = 0;
  char* error = NULL;
  int code = cordon_pool_refresh(box != NULL ? box->pool : NULL, &changed, &error);
  if (code != CORDON_OK) return error_result(env, error, code);
  napi_value out, flag;
  napi_create_object(env, &out);
  napi_get_boolean(env, changed != 0, &flag);
  napi_set_named_property(env, out, "changed", flag);
  return out;
}

/* poolClose(pool): gives up the sandboxes still waiting; idempotent. */
static napi_value pool_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  pool_box* box = pool_arg(env, argv[0]);
  if (box != NULL && box->busy > 0) {
    box->close_pending = 1; /* a tool call's thread uses it: freed when the last one ends */
  } else if (box != NULL) {
    cordon_pool_free(box->pool);
    box->pool = NULL;
  }
  return NULL;
}

/* start(plan, argv, cwd, env, [stdin, stdout, stderr], supervisor, pool) ->
 * {run, pid, fds: [in, out, err]} | {error}. With a pool (from poolNew) the
 * command starts in one of its prepared sandboxes and plan is not used. The
 * fds are the caller's now. */
static napi_value start(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  CHECK_NAPI(get_args(env, info, 7, argv) ? napi_ok : napi_generic_failure);
  cordon_plan* plan = plan_arg(env, argv[0]);
  napi_valuetype pool_type;
  napi_typeof(env, argv[6], &pool_type);
  const int pooled = pool_type != napi_undefined && pool_type != napi_null;
  pool_box* pool = pooled ? pool_arg(env, argv[6]) : NULL;
  char** args = string_array(env, argv[1]);
  int ok = 1;
  char* cwd = string_arg(env, argv[2], &ok);
  char** environment = string_array(env, argv[3]);
  char* supervisor = string_arg(env, argv[5], &ok);
  cordon_run_request request = {0};
  cordon_stdio* streams[3] = {&request.stdin_io, &request.stdout_io, &request.stderr_io};
  for (uint32_t i = 0; i < 3 && ok; ++i) {
    napi_value mode;
    napi_get_element(env, argv[4], i, &mode);
    ok = mode_of(env, mode, streams[i]);
  }
  request.argv = (const char* const*)args;
  request.cwd = cwd;
  request.env = (const char* const*)environment;
  request.supervisor_path = supervisor;
  cordon_run* run = NULL;
  char* error = NULL;
  cordon_pool* from = pool != NULL ? pool->pool : NULL;
  int code = !ok || args == NULL || environment == NULL ? CORDON_E_USAGE_ERROR
             : pooled                                   ? cordon_pool_start(from, &request, &run, &error)
             : plan != NULL                             ? cordon_run_start(plan, &request, &run, &error)
                                                        : CORDON_E_USAGE_ERROR;
  free_array(args);
  free_array(environment);
  free(cwd);
  free(supervisor);
  if (code != CORDON_OK) return error_result(env, error, code);

  run_box* box = calloc(1, sizeof *box);
  uv_loop_t* loop = NULL;
  if (box == NULL || napi_get_uv_event_loop(env, &loop) != napi_ok ||
      uv_poll_init(loop, &box->poll, cordon_run_wait_fd(run)) != 0) {
    free(box);
    cordon_run_free(run); /* cancels and waits */
    napi_throw_error(env, "cordon_addon", "cannot watch the run");
    return NULL;
  }
  box->run = run;
  box->env = env;
  box->poll.data = box;
  box->poll_open = 1;
  uv_poll_start(&box->poll, UV_READABLE, on_wait_fd);
  box->polling = 1;
  /* The poll alone must not keep the process alive: a pending waitEnd() does (its promise). */
  uv_unref((uv_handle_t*)&box->poll);

  napi_value out, fds;
  napi_create_object(env, &out);
  napi_value external = make_tagged_external(env, box, run_finalize, &run_tag);
  if (external == NULL) {
    napi_throw_error(env, "cordon_addon", "napi_create_external failed");
    return NULL;
  }
  napi_set_named_property(env, out, "run", external);
  napi_set_named_property(env, out, "pid", int_value(env, cordon_run_pid(run)));
  napi_create_array_with_length(env, 3, &fds);
  for (uint32_t i = 0; i < 3; ++i) napi_set_element(env, fds, i, int_value(env, cordon_run_take_fd(run, (int)i)));
  napi_set_named_property(env, out, "fds", fds);
  return out;
}

/* waitEnd(run, callback): calls callback() once the run ended (at once when
 * it has). One pending callback per run. */
static napi_value wait_end(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  CHECK_NAPI(get_args(env, info, 2, argv) ? napi_ok : napi_generic_failure);
  run_box* box = run_arg(env, argv[0]);
  napi_valuetype type;
  napi_typeof(env, argv[1], &type);
  if (box == NULL || type != napi_function) {
    napi_throw_type_error(env, "usage_error", "waitEnd(run, callback)");
    return NULL;
  }
  if (box->ended != NULL) {
    napi_throw_error(env, "usage_error", "waitEnd() is already pending for this run");
    return NULL;
  }
  napi_value resource, name;
  napi_create_object(env, &resource);
  napi_create_string_utf8(env, "cordon.run", NAPI_AUTO_LENGTH, &name);
  CHECK_NAPI(napi_async_init(env, resource, name, &box->context));
  napi_create_reference(env, argv[1], 1, &box->ended);
  napi_create_reference(env, resource, 1, &box->resource);
  if (cordon_run_wait(box->run, 0) == CORDON_RUN_ENDED) {
    stop_poll(box);
    call_ended(box);
    return NULL;
  }
  uv_ref((uv_handle_t*)&box->poll); /* keep the loop alive until the end */
  return NULL;
}

/* cancel(run) */
static napi_value cancel(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  run_box* box = run_arg(env, argv[0]);
  if (box != NULL) cordon_run_cancel(box->run);
  return NULL;
}

/* result(run) -> {status fields, report, error} once ended, else null. */
static napi_value result(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  run_box* box = run_arg(env, argv[0]);
  cordon_run_status status;
  napi_value out;
  if (box == NULL || cordon_run_status_get(box->run, &status) != CORDON_OK) {
    napi_get_null(env, &out);
    return out;
  }
  napi_create_object(env, &out);
  napi_value yes, no;
  napi_get_boolean(env, true, &yes);
  napi_get_boolean(env, false, &no);
  napi_set_named_property(env, out, "exitCode", int_value(env, status.exit_code));
  napi_set_named_property(env, out, "ran", status.ran ? yes : no);
  napi_set_named_property(env, out, "exited", status.exited ? yes : no);
  napi_set_named_property(env, out, "signal", int_value(env, status.signal));
  napi_set_named_property(env, out, "timedOut", status.timed_out ? yes : no);
  napi_set_named_property(env, out, "cancelled", status.cancelled ? yes : no);
  napi_set_named_property(env, out, "wallMs", int_value(env, status.wall_ms));
  napi_set_named_property(env, out, "report", take_string(env, cordon_run_report_json(box->run)));
  napi_set_named_property(env, out, "error", take_string(env, cordon_run_error_json(box->run)));
  return out;
}

/* ---- governance (docs/governance.md): rules, decide, the audit log ---- */

const napi_type_tag rules_tag = {0x636f72646f6e2d72ULL, 0x756c65732d786d33ULL};

static void rules_finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  cordon_rules_free(data);
}

/* rulesLoad(json) -> {rules} | {error}. */
static napi_value rules_load(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  CHECK_NAPI(get_args(env, info, 1, argv) ? napi_ok : napi_generic_failure);
  int ok = 1;
  char* text = string_arg(env, argv[0], &ok);
  cordon_rules* rules = NULL;
  char* error = NULL;
  int code = cordon_rules_load(ok ? text : NULL, &rules, &error);
  free(text);
  if (code != 0) return error_result(env, error, code);
  napi_value out;
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "rules", make_tagged_external(env, rules, rules_finalize, &rules_tag));
  return out;
}

/* rulesDecide(rules, requestJson) -> {json} | {error}. Pure: nothing runs. */
static napi_value rules_decide(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  CHECK_NAPI(get_args(env, info, 2, argv) ? napi_ok : napi_generic_failure);
  const cordon_rules* rules = tagged_external(env, argv[0], &rules_tag);
  int ok = 1;
  char* request = string_arg(env, argv[1], &ok);
  char* decision = NULL;
  char* error = NULL;
  int code = cordon_rules_decide(rules, ok ? request : NULL, &decision, &error);
  free(request);
  return json_answer(env, code, decision, error);
}

/* auditAppend(path, eventJson) -> {} | {error}: durable before it returns. */
static napi_value audit_append(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  CHECK_NAPI(get_args(env, info, 2, argv) ? napi_ok : napi_generic_failure);
  int ok = 1;
  char* path = string_arg(env, argv[0], &ok);
  char* event = string_arg(env, argv[1], &ok);
  char* error = NULL;
  int code = cordon_audit_append(ok ? path : NULL, ok ? event : NULL, &error);
  free(path);
  free(event);
  if (code != 0) return error_result(env, error, code);
  napi_value out;
  napi_create_object(env, &out);
  return out;
}

/* auditVerify(path, optionsJson) -> {json} | {error}; a log that does not
 * verify is an answer. optionsJson: cordon_audit_verify_with's (minor 4). */
static napi_value audit_verify(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  CHECK_NAPI(get_args(env, info, 2, argv) ? napi_ok : napi_generic_failure);
  int ok = 1;
  char* path = string_arg(env, argv[0], &ok);
  char* options = string_arg(env, argv[1], &ok);
  char* verification = NULL;
  char* error = NULL;
  int code = cordon_audit_verify_with(ok ? path : NULL, options, &verification, &error);
  free(path);
  free(options);
  return json_answer(env, code, verification, error);
}

#define EXPORT(name, fn)                                                                 \
  do {                                                                                   \
    napi_value f;                                                                        \
    if (napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &f) == napi_ok) {  \
      napi_set_named_property(env, exports, name, f);                                   \
    }                                                                                    \
  } while (0)

NAPI_MODULE_INIT() {
  EXPORT("abiVersion", abi_version);
  EXPORT("libraryVersion", library_version);
  EXPORT("profileJson", profile_json);
  EXPORT("compile", compile);
  EXPORT("planJson", plan_json);
  EXPORT("explain", explain);
  EXPORT("probe", probe);
  EXPORT("start", start);
  EXPORT("waitEnd", wait_end);
  EXPORT("cancel", cancel);
  EXPORT("result", result);
  EXPORT("poolNew", pool_new);
  EXPORT("poolReady", pool_ready);
  EXPORT("poolRefresh", pool_refresh);
  EXPORT("poolClose", pool_close);
  EXPORT("rulesLoad", rules_load);
  EXPORT("rulesDecide", rules_decide);
  EXPORT("auditAppend", audit_append);
  EXPORT("auditVerify", audit_verify);
  EXPORT("ledgerNew", ledger_new);
  EXPORT("toolCall", tool_call);
  EXPORT("fsStart", fs_start);
  EXPORT("fsCall", fs_call);
  EXPORT("fsFinish", fs_finish);
  EXPORT("fsPid", fs_pid);
  return exports;
}

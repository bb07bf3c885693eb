/* addon.h — what the parts of cordon.node share (addon.c: values, plans,
 * runs, pools, rules and the audit log; addon_tools.c: the tool-use call and
 * the file worker). docs/node.md, "How it is built". */
#ifndef CORDON_NODE_ADDON_H
#define CORDON_NODE_ADDON_H

#include <node_api.h>
#include <stdint.h>

#include "cordon/cordon_c.h"

#define CHECK_NAPI(call)                                        \
  do {                                                          \
    if ((call) != napi_ok) {                                    \
      napi_throw_error(env, "cordon_addon", #call " failed");   \
      return NULL;                                              \
    }                                                           \
  } while (0)

/* A pool's external: closed by poolClose() or when collected, whichever
 * comes first; a tool call using it on its thread defers poolClose(). */
typedef struct pool_box {
  cordon_pool* pool;
  int busy;          /* tool calls using it on their threads (main thread only) */
  int close_pending; /* poolClose() came while busy: freed when the last call ends */
} pool_box;

extern const napi_type_tag rules_tag;

/* A C string as a JavaScript string (null for NULL). */
napi_value string_value(napi_env env, const char* text);
/* A library string as a JavaScript string (null for NULL), freed. */
napi_value take_string(napi_env env, char* text);
/* {error: "<error JSON>"} (takes error_json; the code alone when it is NULL). */
napi_value error_result(napi_env env, char* error_json, int code);
/* A string argument as a new C string (NULL for undefined/null); *ok = 0 for
 * another type or a NUL inside. */
char* string_arg(napi_env env, napi_value value, int* ok);
/* An array of strings or Buffers as a NULL-terminated C array; NULL when it
 * is not one or an element holds a NUL. */
char** string_array(napi_env env, napi_value value);
void free_array(char** items);
napi_value int_value(napi_env env, int64_t v);
/* The first `want` arguments (undefined for the missing ones); 0 on failure. */
int get_args(napi_env env, napi_callback_info info, size_t want, napi_value* argv);
/* The data of an external tagged `tag`; NULL for any other value. */
void* tagged_external(napi_env env, napi_value value, const napi_type_tag* tag);
/* A new external owning data (freed by finalize), tagged; NULL when it cannot be made. */
napi_value make_tagged_external(napi_env env, void* data, napi_finalize finalize, const napi_type_tag* tag);
/* The pool of an external made by poolNew(); NULL for anything else. */
pool_box* pool_arg(napi_env env, napi_value value);

/* addon_tools.c */
napi_value ledger_new(napi_env env, napi_callback_info info);
napi_value tool_call(napi_env env, napi_callback_info info);
napi_value fs_start(napi_env env, napi_callback_info info);
napi_value fs_call(napi_env env, napi_callback_info info);
napi_value fs_finish(napi_env env, napi_callback_info info);
napi_value fs_pid(napi_env env, napi_callback_info info);

#endif

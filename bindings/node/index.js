'use strict';
// cordon for Node.js (docs/node.md): run commands confined by a cordon
// policy. A thin layer over cordon.node, the N-API addon over libcordon's C
// API (include/cordon/cordon_c.h). Types: index.d.ts, report.d.ts.
//
// Where the addon is found: addon_path.js (the variables, the build tree, an
// installed cordon).

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ABI_VERSION = 1;

function loadAddon() {
  const candidates = require('./addon_path').addonCandidates();
  const tried = [];
  for (const candidate of candidates) {
    if (!fs.existsSync(candidate)) {
      tried.push(`${candidate}: not found`);
      continue;
    }
    const addon = require(candidate);
    if (addon.abiVersion() !== ABI_VERSION) {
      throw new Error(`${candidate} has C API version ${addon.abiVersion()}; this package needs ${ABI_VERSION}`);
    }
    return addon;
  }
  throw new Error(`cordon.node not found (install cordon, or set CORDON_NODE_ADDON or CORDON_BUILD_DIR): ${tried.join('; ')}`);
}

let addonCache = null;
function addon() {
  if (addonCache === null) addonCache = loadAddon();
  return addonCache;
}

// An error with a stable code (docs/errors.md): code, message, location,
// errno, errors (every policy problem), blockers (why a compile was refused).
// The message: the code, message and location, then the first policy error
// (its code, location and reason) and the first blocker (its control, reason
// and levels), each with how many more there are, so that a reader of the
// message alone knows what to change (docs/node.md, "Errors").
function errorSummary({ code, message, location, errors = [], blockers = [] }) {
  // The message of several policy errors lists them all, one a line: the
  // first line is the first, the rest are counted (e.errors has them).
  const head = String(message ?? '').split('\n', 1)[0];
  let text = `${code}: ${head}${location ? ` (at ${location})` : ''}`;
  if (errors.length > 0) {
    const { location: where = '', reason = '' } = errors[0];
    if (reason && (reason !== head || where !== (location || ''))) {
      text += `; first error: ${code}${where ? ` at ${where}` : ''}: ${reason}`;
    }
    if (errors.length > 1) text += ` (and ${errors.length - 1} more in .errors)`;
  }
  if (blockers.length > 0) {
    const b = blockers[0];
    text += `; first blocker: ${b.control}: ${b.reason} (requires ${b.required}, this host gives ${b.available})`;
    if (blockers.length > 1) text += ` (and ${blockers.length - 1} more in .blockers)`;
  }
  return text;
}

class CordonError extends Error {
  constructor(detail) {
    super(errorSummary(detail));
    this.name = 'CordonError';
    this.code = detail.code;
    this.location = detail.location || '';
    this.errno = detail.errno || 0;
    this.errors = detail.errors || [];
    this.blockers = detail.blockers || [];
  }
}

function unwrap(answer) {
  if (answer.error !== undefined) throw new CordonError(JSON.parse(answer.error));
  return answer;
}

// A string or Buffer for the C API, refused when it holds a NUL (a C string
// would end there: the command would get less than was asked, silently).
// Buffers pass their bytes unchanged (a file name that is not UTF-8).
function cBytes(value, where) {
  if (Buffer.isBuffer(value)) {
    if (value.includes(0)) throw nulError(where);
    return value;
  }
  const text = String(value);
  if (text.includes('\0')) throw nulError(where);
  return text;
}

function nulError(where) {
  return new CordonError({ code: 'usage_error', message: 'holds a NUL byte, which no argument or variable can carry: refused',
    location: where });
}

// {NAME: string | Buffer} -> ["NAME=VALUE" (string or Buffer)...]; a NUL is refused.
function environmentEntries(env, where) {
  return Object.entries(env).filter(([, v]) => v !== undefined).map(([k, v]) => {
    cBytes(k, `${where}/${k}`);
    if (k.includes('=') || k === '') throw new CordonError({ code: 'usage_error', message: 'not a variable name', location: `${where}/${k}` });
    const value = cBytes(v, `${where}/${k}`);
    return Buffer.isBuffer(value) ? Buffer.concat([Buffer.from(`${k}=`), value]) : `${k}=${value}`;
  });
}

function profileJson(name = 'workspace-write') {
  return unwrap(addon().profileJson(name)).json;
}

// A profile name, policy JSON text, or a policy object -> policy JSON text.
function policyText(policy) {
  if (typeof policy === 'object' && policy !== null) return JSON.stringify(policy);
  if (typeof policy !== 'string') throw new TypeError('policy is a profile name, JSON text, an object or a Plan');
  return policy.trimStart().startsWith('{') ? policy : profileJson(policy);
}

// shortcuts: the CLI's shortcut flags (docs/cli.md), same meaning, applied
// by the library's own code before the compile: {ro, rw, deny, allow_hosts,
// env, setenv, allow_local_binding, caches, git_identity} (docs/node.md).
function optionsText({ workspace, home, cgroupParent, sandbox, shortcuts } = {}) {
  const o = {};
  if (shortcuts !== undefined) o.shortcuts = shortcuts;
  if (workspace !== undefined) o.workspace = workspace;
  if (home !== undefined) o.home = home;
  if (cgroupParent !== undefined) o.cgroup_parent = cgroupParent;
  if (sandbox !== undefined) o.sandbox = sandbox;
  return JSON.stringify(o);
}

// A compiled policy for this host; reuse one for many runs.
class Plan {
  constructor(policy, options = {}) {
    this.handle = unwrap(addon().compile(policyText(policy), optionsText(options))).plan;
    this.workspace = options.workspace;
  }

  explain() {
    return JSON.parse(addon().planJson(this.handle));
  }
}

function compile(policy = 'workspace-write', options = {}) {
  return new Plan(policy, options);
}

function explain(policy = 'workspace-write', options = {}) {
  return JSON.parse(unwrap(addon().explain(policyText(policy), optionsText(options))).json);
}

function probe() {
  return JSON.parse(unwrap(addon().probe()).json);
}

// One publish entry as network.publish's {port, host_port}: PORT, "PORT" or
// "HOSTPORT:PORT" (cordon run --publish), or {port, host_port?}. The policy's
// validation checks the numbers (1..65535, each host port once).
function publishedPort(item) {
  if (item !== null && typeof item === 'object') return { ...item };
  if (Number.isInteger(item)) return { port: item, host_port: item };
  const m = typeof item === 'string' ? /^(?:(\d+):)?(\d+)$/.exec(item) : null;
  if (!m) throw new TypeError(`publish: ${JSON.stringify(item)} is not PORT, "HOSTPORT:PORT" or {port, host_port}`);
  return { port: Number(m[2]), host_port: Number(m[1] === undefined ? m[2] : m[1]) };
}

function planFor(policy, { workspace, cwd, timeout, shortcuts, publish }) {
  const publishing = Array.isArray(publish) && publish.length > 0;
  if (publish !== undefined && !Array.isArray(publish)) throw new TypeError('publish is an array');
  if (policy instanceof Plan) {
    // Never ignored: a compiled plan cannot take them.
    if (shortcuts !== undefined) throw new TypeError('shortcuts cannot apply to a compiled Plan: give them to compile()');
    if (publishing) throw new TypeError('publish with a Plan: put network.publish in the policy before compiling it');
    return policy;
  }
  let text = policyText(policy);
  if (timeout !== undefined || publishing) {
    const doc = JSON.parse(text);
    if (timeout !== undefined) {
      doc.process = doc.process || {};
      const current = doc.process.timeout_seconds;
      doc.process.timeout_seconds = current === undefined ? timeout : Math.min(current, timeout);
    }
    if (publishing) {
      doc.network = doc.network || {};
      doc.network.publish = (doc.network.publish || []).concat(publish.map(publishedPort));
      if (doc.network.mode === 'filtered') doc.network.allow_local_binding = true;
    }
    text = JSON.stringify(doc);
  }
  return new Plan(text, { workspace: workspace || cwd || process.cwd(), shortcuts });
}

function stdioMode(value) {
  if (value === undefined || value === null || value === 'inherit') return 'inherit';
  if (value === 'pipe' || typeof value === 'string' || Buffer.isBuffer(value)) return 'pipe';
  if (typeof value === 'number') return value;
  if (value && typeof value.fd === 'number') return value.fd;
  throw new TypeError("stdin is 'inherit', 'pipe', a string, a Buffer or a descriptor");
}

// A started run: stdout and stderr are Readable streams, stdin a Writable
// (with stdin: 'pipe'); cancel() kills the tree; wait() resolves to the
// RunResult once the run and its output ended.
class Run {
  // pool: the Pool whose prepared sandbox runs it (Pool.start), else none.
  constructor(plan, argv, options, pool = null) {
    if (!Array.isArray(argv) || argv.length === 0) throw new TypeError('argv is a non-empty array of strings');
    const env = options.env || process.env;
    const started = unwrap(addon().start(plan.handle, argv.map((a, i) => cBytes(a, `/argv/${i}`)), options.cwd ?? null,
      environmentEntries(env, '/env'), [stdioMode(options.stdin), 'pipe', 'pipe'],
      options.supervisor ?? null, pool ? pool.handle : null));
    this.handle = started.run;
    this.pid = started.pid;
    this.argv = argv.slice();
    const [inFd, outFd, errFd] = started.fds;
    this.stdout = new net.Socket({ fd: outFd, readable: true, writable: false });
    this.stderr = new net.Socket({ fd: errFd, readable: true, writable: false });
    this.stdin = inFd >= 0 ? new net.Socket({ fd: inFd, readable: false, writable: true }) : null;
    this.stdin?.on('error', () => {}); // EPIPE when the command exits before reading everything
    if (this.stdin && options.stdin !== 'pipe') {
      this.stdin.end(options.stdin);
      this.stdin = null;
    }
    this.ended = new Promise((resolve) => addon().waitEnd(this.handle, resolve));
    this.result = null;
    if (options.signal) {
      if (options.signal.aborted) this.cancel();
      else options.signal.addEventListener('abort', () => this.cancel(), { once: true });
    }
  }

  cancel() {
    addon().cancel(this.handle);
  }

  // Resolves to the RunResult. stdout/stderr hold what was not read through the streams.
  async wait() {
    if (this.result) return this.result;
    const [out, err] = await Promise.all([collect(this.stdout), collect(this.stderr), this.ended]);
    const r = addon().result(this.handle);
    this.result = {
      argv: this.argv,
      exitCode: r.exitCode,
      stdout: out,
      stderr: err,
      report: r.report ? JSON.parse(r.report) : {},
      ran: r.ran,
      signal: r.signal,
      timedOut: r.timedOut,
      cancelled: r.cancelled,
      wallMs: r.wallMs,
      error: r.error ? new CordonError(JSON.parse(r.error)) : null,
    };
    return this.result;
  }
}

function collect(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    if (stream.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function start(policy, argv, options = {}) {
  if (policy instanceof Plan && options.timeout !== undefined) {
    throw new TypeError('timeout with a Plan: use run(), or put process.timeout_seconds in the policy');
  }
  return new Run(planFor(policy, options), argv, options);
}

// Runs argv confined by policy; resolves to {exitCode, stdout, stderr,
// report, ...}. onStdout/onStderr get each chunk as it comes. Rejects with a
// CordonError when nothing ran (invalid policy, refused compile, usage).
async function run(policy, argv, options = {}) {
  const hostDeadline = policy instanceof Plan ? options.timeout : undefined;
  const r = start(policy, argv, { ...options, timeout: hostDeadline === undefined ? options.timeout : undefined });
  return finish(r, options, hostDeadline);
}

// Streams r's output to the callbacks, cancels it at hostDeadline (seconds;
// undefined: none) and resolves to its RunResult.
async function finish(r, options, hostDeadline) {
  if (options.onStdout) r.stdout.on('data', options.onStdout);
  if (options.onStderr) r.stderr.on('data', options.onStderr);
  let timer = null;
  let timedOut = false;
  if (hostDeadline !== undefined) {
    timer = setTimeout(() => {
      timedOut = true;
      r.cancel();
    }, hostDeadline * 1000);
  }
  try {
    const result = await r.wait();
    result.timedOut = result.timedOut || timedOut;
    return result;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

// Sandboxes prepared ahead of time for one policy (docs/prepared.md): each
// command starts in a sandbox of its own that was set up before it was
// asked for, and the pool prepares its replacement. Options: workspace,
// size (1-64, default 2), maxAge, wait, refillAfter (seconds), supervisor,
// shortcuts (the CLI's shortcut flags, as run()'s; a TypeError with a Plan).
class Pool {
  constructor(policy = 'workspace-write', options = {}) {
    this.plan = planFor(policy, { workspace: options.workspace, shortcuts: options.shortcuts });
    const o = { size: options.size ?? 2 };
    const ms = { maxAge: 'max_age_ms', refillAfter: 'refill_after_ms' };
    for (const [key, field] of Object.entries(ms)) {
      if (options[key] !== undefined) o[field] = Math.round(options[key] * 1000);
    }
    if (options.supervisor !== undefined) o.supervisor_path = options.supervisor;
    // The library does not wait (wait_ms 0): run() waits here, on timers, so
    // that the event loop never blocks on the pool.
    this.waitMs = options.wait !== undefined ? Math.round(options.wait * 1000) : 10000;
    o.wait_ms = 0;
    this.handle = unwrap(addon().poolNew(this.plan.handle, JSON.stringify(o))).pool;
    this.closed = false;
  }

  // How many sandboxes are ready now.
  get ready() {
    return addon().poolReady(this.handle);
  }

  // Compiles the policy again on fresh host facts; true when the plan
  // changed (every sandbox prepared for the old one is given up).
  refresh() {
    return unwrap(addon().poolRefresh(this.handle)).changed;
  }

  // As the module's start(), in a prepared sandbox (no timeout: use run()).
  // With none ready it throws at once (launch_failed); run() waits for one.
  start(argv, options = {}) {
    if (this.closed) throw new Error('the pool is closed');
    if (options.timeout !== undefined) throw new TypeError('timeout with a pool: use pool.run()');
    return new Run(this.plan, argv, options, this);
  }

  // As the module's run(), in a prepared sandbox; timeout (seconds) cancels it.
  async run(argv, options = {}) {
    await this.readyOrDeadline();
    const r = this.start(argv, { ...options, timeout: undefined });
    return finish(r, options, options.timeout);
  }

  // Resolves once a sandbox is ready, or after the pool's wait (then start()
  // throws the pool's error), polling every 2 ms on a timer.
  async readyOrDeadline() {
    const deadline = Date.now() + this.waitMs;
    while (!this.closed && this.ready === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  // Gives up the sandboxes still waiting; runs already started go on.
  close() {
    addon().poolClose(this.handle);
    this.closed = true;
  }
}

// Governance (docs/governance.md): capability rules judge what an agent host
// asks to do ("$defs/request" of schemas/capability_rules.v1.schema.json).
class Rules {
  // rules: the rules file's JSON text, or an object. Throws CordonError
  // (parse_error, invalid_policy with the JSON pointer) when they do not check.
  constructor(rules) {
    const text = typeof rules === 'string' ? rules : JSON.stringify(rules);
    this._rules = unwrap(addon().rulesLoad(text)).rules;
  }

  // The decision for one request, without running anything: {decision:
  // 'allow'|'deny'|'require_approval', reason, rule_id, parts, uncertain,
  // request_digest, rules_digest}. A denial is an answer, not an error.
  decide(request) {
    return JSON.parse(unwrap(addon().rulesDecide(this._rules, JSON.stringify(request))).json);
  }
}

// Appends one event to a tamper-evident audit log (created 0600; an existing
// log must verify first), durable when it returns. event: {module, event,
// outcome, ids?, attributes?, elapsed_ms?}.
function auditAppend(file, event) {
  unwrap(addon().auditAppend(file, JSON.stringify(event)));
}

// Verifies an audit log: {ok, events, bad_line, problem, last_hash,
// interrupted_runs, records, head_present, head_keyed, head_seq}. A log that
// does not verify is an answer (ok false); so is a log with records and no
// head file, unless options.noHead says no head is kept (the chain alone is
// verified: a cut end goes unseen). options.headKeyFile: the head must carry
// a MAC under the key that file holds. Throws CordonError (io_error: the
// log or key cannot be read; usage_error: noHead with headKeyFile).
function auditVerify(file, options = {}) {
  const c = {};
  if (options.noHead !== undefined) c.no_head = options.noHead;
  if (options.headKeyFile !== undefined) c.head_key_file = options.headKeyFile;
  return JSON.parse(unwrap(addon().auditVerify(file, JSON.stringify(c))).json);
}

// The grants approvers gave with scope "session" or "workspace" (cordon_ledger_*):
// pass one Ledger to every toolCall() of a session and an approval covers the
// same request again. toolCall()s sharing a ledger run one after the other.
class Ledger {
  constructor() {
    this._handle = addon().ledgerNew();
    this._tail = Promise.resolve();
  }

  // Runs fn (which returns a promise) after the calls queued before it.
  _serialize(fn) {
    const next = this._tail.then(fn, fn);
    this._tail = next.catch(() => {});
    return next;
  }
}

// An approver's answers.
function approve(reason, scope = 'once') {
  return { decision: 'approved', scope, reason };
}

function deny(reason) {
  return { decision: 'denied', scope: 'once', reason };
}

function contextJson({ workspace, policy, preApproved, audit, sessionId, backend, env, shortcuts }) {
  const c = {};
  if (shortcuts !== undefined) c.shortcuts = shortcuts;
  if (workspace !== undefined) c.workspace = String(workspace);
  if (policy !== undefined) c.policy = JSON.parse(policyText(policy));
  if (preApproved !== undefined) c.pre_approved = preApproved;
  if (audit !== undefined) c.audit = String(audit);
  if (sessionId !== undefined) c.session_id = sessionId;
  if (backend !== undefined) c.backend = backend;
  if (env !== undefined) {
    c.environment = environmentEntries(env, '/env').map((e) => {
      if (Buffer.isBuffer(e)) throw new TypeError('env values are strings (extraEnv takes Buffers)');
      return e;
    });
  }
  return JSON.stringify(c);
}

function captured(d) {
  const data = Buffer.from(d.base64, 'base64');
  return { data, text: d.text, total: d.bytes, dropped: d.dropped, droppedAt: d.dropped_at, truncated: d.dropped > 0 };
}

function toolResult(d) {
  return {
    status: d.status, reason: d.reason, exitCode: d.exit_code, runId: d.run_id,
    decision: { ...d.decision, request_digest: d.request_digest, rules_digest: d.rules_digest },
    approval: d.approval, requestDigest: d.request_digest, sandboxPolicyDigest: d.sandbox_policy_digest,
    report: d.report, events: d.events ?? null,
    stdout: captured(d.stdout), stderr: captured(d.stderr), pooled: d.pooled, warnings: d.warnings,
    sandboxNotes: d.sandbox_notes ?? [],
  };
}

// The tool-use call (docs/node.md, "The tool-use call"): the rules decide the
// request, an approver shown the compiled plan decides what they leave to
// one, the command runs confined (cold or in a prepared sandbox of `pool`)
// with its output captured and capped, and every step is audited. Resolves
// to a ToolResult; a denial, a rejection, a failed or timed-out command is
// a result. Rejects with a CordonError when the request, the policy, the
// context or the audit log is bad (then nothing ran). The event loop is not
// blocked: the call runs on a thread of its own.
function toolCall(rules, request, options = {}) {
  if (!(rules instanceof Rules)) throw new TypeError('rules is a Rules');
  const { stdin, timeout, maxOutput, onOutput, pool, ledger, extraEnv, approver } = options;
  const requestText = typeof request === 'string' ? request : JSON.stringify(request);
  const context = contextJson(options);
  const io = {};
  if (stdin !== undefined && stdin !== null) {
    if (typeof stdin !== 'string' && !Buffer.isBuffer(stdin)) throw new TypeError('stdin is a string or a Buffer');
    io.stdin = Buffer.from(stdin);
  }
  if (timeout !== undefined) io.timeoutMs = Math.max(1, Math.round(timeout * 1000));
  if (maxOutput !== undefined) {
    if (!Number.isInteger(maxOutput) || maxOutput <= 0) {
      throw new CordonError({ code: 'usage_error', message: 'maxOutput is a positive number of bytes', location: '/maxOutput' });
    }
    io.maxOutput = maxOutput;
  }
  if (pool !== undefined && pool !== null) {
    if (!(pool instanceof Pool)) throw new TypeError('pool is a Pool');
    if (pool.closed) throw new Error('the pool is closed');
    io.pool = pool.handle;
  }
  if (ledger !== undefined && ledger !== null && !(ledger instanceof Ledger)) throw new TypeError('ledger is a Ledger');
  if (extraEnv !== undefined) io.environment = environmentEntries(extraEnv, '/extraEnv');
  const ask = approver ? (shown, answer) => {
    Promise.resolve().then(() => approver(JSON.parse(shown))).then(
      (decision) => answer(JSON.stringify(decision ?? {})),
      (e) => answer(JSON.stringify(deny(`the approver failed: ${e && e.message ? e.message : e}`))));
  } : null;
  const output = onOutput ? (stream, chunk) => {
    try {
      onOutput(stream, chunk);
    } catch (e) {
      process.nextTick(() => { throw e; }); // as an exception in any event handler
    }
  } : null;
  const call = () => new Promise((resolve, reject) => {
    io.ledger = ledger ? ledger._handle : undefined;
    const started = addon().toolCall(rules._rules, requestText, context, io, ask, output, (result, error) => {
      if (error) reject(new CordonError(JSON.parse(error.error)));
      else resolve(toolResult(JSON.parse(result)));
    });
    if (started && started.error !== undefined) reject(new CordonError(JSON.parse(started.error)));
  });
  return ledger ? ledger._serialize(call) : call();
}

// A refusal by the file worker: code is its stable code (docs/fs-worker.md,
// "Error codes": path_escape, symlink, denied, outside_roots, not_found,
// read_only, ...), rule the policy rule that decided, response the whole answer.
class FsError extends CordonError {
  constructor(response) {
    const e = response.error || {};
    super({ code: e.code || 'invalid_request', message: e.message || '', location: e.rule || '' });
    this.name = 'FsError';
    this.rule = e.rule || '';
    this.response = response;
  }
}

const callback = (resolve, reject, read) => (error, value) => {
  if (error) reject(new CordonError(JSON.parse(error.error)));
  else resolve(read(value));
};

// The confined filesystem worker (docs/fs-worker.md): an agent's file tools
// served by a long-lived worker process under the same sandbox plan as its
// commands, so that no path trick reaches further than the sandbox allows.
// Python's cordon.fs.Worker; every method returns a promise, and the
// requests reach the worker one at a time. Start one with FsWorker.start().
class FsWorker {
  constructor(handle, workspace) {
    this._handle = handle;
    this.workspace = workspace;
    this.report = null;
    this._tail = Promise.resolve();
  }

  // Compiles policy (a profile name, JSON text or an object) for workspace
  // and starts the worker. options: deadlineMs (per request, default 10000),
  // worker (the cordon-fs-worker executable), shortcuts (the CLI's shortcut
  // flags, as run()'s, applied before the compile). Rejects with a
  // CordonError (invalid_policy, refused, usage_error: no worker executable,
  // a bad shortcut at /shortcuts/KEY, ...).
  static start(workspace, policy = 'workspace-write', options = {}) {
    const o = { workspace: String(workspace) };
    if (options.deadlineMs !== undefined) o.deadline_ms = options.deadlineMs;
    if (options.worker !== undefined) o.worker = options.worker;
    if (options.shortcuts !== undefined) o.shortcuts = options.shortcuts;
    return new Promise((resolve, reject) => {
      const refused = addon().fsStart(policyText(policy), JSON.stringify(o),
        callback(resolve, reject, (handle) => new FsWorker(handle, o.workspace)));
      if (refused) reject(new CordonError(JSON.parse(refused.error)));
    });
  }

  // The worker's supervisor PID (-1 once closed).
  get pid() {
    return addon().fsPid(this._handle);
  }

  _queue(fn) {
    const next = this._tail.then(fn, fn);
    this._tail = next.catch(() => {});
    return next;
  }

  // Sends {op, ...fields}; resolves to the whole response ({ok, result,
  // touched}). Rejects with an FsError for a refusal, a CordonError (io_error:
  // the worker is gone; usage_error: closed) for the channel.
  call(op, fields = {}) {
    return this._queue(() => new Promise((resolve, reject) => {
      const refused = addon().fsCall(this._handle, JSON.stringify({ op, ...fields }),
        callback(resolve, reject, (text) => JSON.parse(text)));
      if (refused) reject(new CordonError(JSON.parse(refused.error)));
    })).then((response) => {
      if (!response.ok) throw new FsError(response);
      return response;
    });
  }

  async read(file, { offset = 0, length } = {}) {
    const fields = { path: file, offset };
    if (length !== undefined) fields.length = length;
    return (await this.call('read', fields)).result.content;
  }

  async write(file, content, { createParents = false } = {}) {
    await this.call('write', { path: file, content, create_parents: createParents });
  }

  // Replaces old by new; resolves to how many replacements were made.
  async edit(file, old, replacement, { expectedOccurrences = 1 } = {}) {
    return (await this.call('edit', { path: file, old_string: old, new_string: replacement,
      expected_occurrences: expectedOccurrences })).result.replacements;
  }

  async list(dir = '.') {
    return (await this.call('list', { path: dir })).result.entries;
  }

  async glob(pattern, dir = '.') {
    return (await this.call('glob', { pattern, path: dir })).result.matches;
  }

  async grep(pattern, dir = '.', fields = {}) {
    return (await this.call('grep', { pattern, path: dir, ...fields })).result.matches;
  }

  async applyPatch(patch, { dryRun = false } = {}) {
    return (await this.call('apply_patch', { patch, dry_run: dryRun })).result;
  }

  async stat(file) {
    return (await this.call('stat', { path: file })).result;
  }

  // Ends the worker; resolves to {worker: its report (every write), run: the
  // run report}. Idempotent.
  close() {
    if (this.report !== null) return Promise.resolve(this.report);
    return this._queue(() => new Promise((resolve, reject) => {
      if (this.report !== null) {
        resolve(this.report);
        return;
      }
      const refused = addon().fsFinish(this._handle, callback(resolve, reject, (text) => {
        this.report = JSON.parse(text);
        return this.report;
      }));
      if (refused) reject(new CordonError(JSON.parse(refused.error)));
    }));
  }
}

module.exports = {
  FsWorker, FsError,
  run, start, compile, explain, probe, profileJson, Plan, Pool, Run, CordonError, Rules, auditAppend, auditVerify,
  toolCall, Ledger, approve, deny,
  libraryVersion: () => addon().libraryVersion(),
};

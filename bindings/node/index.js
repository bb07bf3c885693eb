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
class CordonError extends Error {
  constructor(detail) {
    super(`${detail.code}: ${detail.message}${detail.location ? ` (at ${detail.location})` : ''}`);
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

function profileJson(name = 'workspace-write') {
  return unwrap(addon().profileJson(name)).json;
}

// A profile name, policy JSON text, or a policy object -> policy JSON text.
function policyText(policy) {
  if (typeof policy === 'object' && policy !== null) return JSON.stringify(policy);
  if (typeof policy !== 'string') throw new TypeError('policy is a profile name, JSON text, an object or a Plan');
  return policy.trimStart().startsWith('{') ? policy : profileJson(policy);
}

function optionsText({ workspace, home, cgroupParent, sandbox } = {}) {
  const o = {};
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

function planFor(policy, { workspace, cwd, timeout }) {
  if (policy instanceof Plan) return policy;
  let text = policyText(policy);
  if (timeout !== undefined) {
    const doc = JSON.parse(text);
    doc.process = doc.process || {};
    const current = doc.process.timeout_seconds;
    doc.process.timeout_seconds = current === undefined ? timeout : Math.min(current, timeout);
    text = JSON.stringify(doc);
  }
  return new Plan(text, { workspace: workspace || cwd || process.cwd() });
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
    const started = unwrap(addon().start(plan.handle, argv.map(String), options.cwd ?? null,
      Object.entries(env).map(([k, v]) => `${k}=${v}`), [stdioMode(options.stdin), 'pipe', 'pipe'],
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
// size (1-64, default 2), maxAge, wait, refillAfter (seconds), supervisor.
class Pool {
  constructor(policy = 'workspace-write', options = {}) {
    this.plan = planFor(policy, { workspace: options.workspace });
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

module.exports = {
  run, start, compile, explain, probe, profileJson, Plan, Pool, Run, CordonError, Rules, auditAppend, auditVerify,
  libraryVersion: () => addon().libraryVersion(),
};

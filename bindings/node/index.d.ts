// cordon for Node.js (docs/node.md). The report's types are generated from
// the report JSON Schema: report.d.ts.
import type { Readable, Writable } from 'node:stream';
import type { Report, ReportControl, ReportLevel } from './report';

export type { Report, ReportControl, ReportLevel };

/** A built-in profile name ("workspace-write", "read-only", "offline"),
 * policy JSON text, a policy object (schemas/policy.v1.schema.json) or a Plan. */
export type PolicyLike = string | Record<string, unknown> | Plan;

/** The CLI's shortcut flags (docs/cli.md), same meaning, applied to the
 * policy by the library's own code before its compile; a bad one is a
 * CordonError usage_error at /shortcuts/KEY. */
export interface Shortcuts {
  /** --ro PATH: appended to filesystem.readable (must exist). */
  ro?: string[];
  /** --rw PATH: appended to filesystem.writable (must exist). */
  rw?: string[];
  /** --deny PATH */
  deny?: string[];
  /** --allow-host HOST[:PORT]: network filtered, allow rules in this order. */
  allow_hosts?: string[];
  /** --env NAME: the host's value passes. */
  env?: string[];
  /** --setenv NAME=VALUE */
  setenv?: Record<string, string>;
  /** --allow-local-binding */
  allow_local_binding?: boolean;
  /** --cache NAME */
  caches?: Array<'pip' | 'npm' | 'cargo' | 'ccache'>;
  /** The user's git identity (user.name, user.email) as GIT_AUTHOR_* and GIT_COMMITTER_*, as `cordon run` does for a profile. */
  git_identity?: boolean;
}

export interface CompileOptions {
  /** The CLI's shortcut flags, same meaning. */
  shortcuts?: Shortcuts;
  /** The directory {workspace} names; required when the policy uses it. */
  workspace?: string;
  /** The directory {home} names (default: the host's). */
  home?: string;
  /** A delegated cgroup v2 directory for tree-wide limits. */
  cgroupParent?: string;
  /** "auto" (default), "require", or "forbid" (host execution). */
  sandbox?: 'auto' | 'require' | 'forbid';
}

export interface RunOptions {
  /** Working directory inside the sandbox (default: the workspace). */
  cwd?: string;
  /** The environment the policy chooses from (default: process.env); Buffer
   * values pass unchanged; a NUL is refused (usage_error, /env/NAME). */
  env?: Record<string, string | Buffer>;
  /** 'inherit' (default), 'pipe' (start(): run.stdin), data to write, or a descriptor. */
  stdin?: 'inherit' | 'pipe' | string | Buffer | number | { fd: number };
  /** Seconds. Lowers the policy's process.timeout_seconds (exit 124); with a
   * Plan, run() cancels at the deadline instead. */
  timeout?: number;
  /** The directory {workspace} names (default: cwd, else process.cwd()); not for a Plan. */
  workspace?: string;
  /** The CLI's shortcut flags, same meaning; not for a Plan (give them to compile()). */
  shortcuts?: Shortcuts;
  /** Ports to publish, as cordon run --publish: PORT, "PORT" or "HOSTPORT:PORT", or
   * {port, host_port}. Appended to network.publish (a filtered network also gets
   * allow_local_binding): the host's 127.0.0.1:HOSTPORT is relayed to 127.0.0.1:PORT
   * inside the sandbox (docs/network.md, "Published ports"). TypeError with a Plan. */
  publish?: Array<number | string | { port: number; host_port?: number }>;
  /** Cancels the run when aborted. */
  signal?: AbortSignal;
  /** The cordon-supervisor helper (default: $CORDON_SUPERVISOR, installed, build tree). */
  supervisor?: string;
  /** run(): each chunk of output as it comes. */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

export interface RunResult {
  argv: string[];
  /** As the CLI's (docs/cli.md): the command's code, 128+signal, 124
   * timeout, 125 refused/failed, 126 not executable, 127 not found. */
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  report: Report;
  /** The command ran (false: error says why not). */
  ran: boolean;
  signal: number;
  timedOut: boolean;
  cancelled: boolean;
  /** Milliseconds from launch to the end of the tree. */
  wallMs: number;
  error: CordonError | null;
}

export interface Blocker {
  subject: 'control' | 'backend' | 'isolation';
  control: string;
  required: string;
  available: string;
  reason: string;
}

/** An error with a stable code (docs/errors.md). */
export class CordonError extends Error {
  code: string;
  location: string;
  errno: number;
  errors: Array<{ location: string; reason: string }>;
  blockers: Blocker[];
}

export interface ControlsExplained {
  compiles: true;
  policy: string;
  backend: string;
  platform: string;
  isolation: string;
  workspace: string;
  fingerprint: string;
  controls: Record<string, ReportControl>;
  limits: Record<string, number>;
  warnings: string[];
}

export type Explained = ControlsExplained | {
  compiles: false;
  error: { code: string; message: string; location: string; errno: number;
           errors: Array<{ location: string; reason: string }>; blockers: Blocker[] };
};

export interface Capabilities {
  platform: string;
  backend: string;
  available: boolean;
  isolation: string;
  best: Record<string, ReportControl>;
  blockers: Blocker[];
  facts: string[];
}

export class Plan {
  constructor(policy: string | Record<string, unknown>, options?: CompileOptions);
  readonly workspace: string | undefined;
  explain(): ControlsExplained;
}

export class Run {
  readonly pid: number;
  readonly argv: string[];
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** With stdin: 'pipe'; end() it to give the command EOF. */
  readonly stdin: Writable | null;
  cancel(): void;
  wait(): Promise<RunResult>;
}

export interface PoolOptions {
  /** The directory {workspace} names (default: process.cwd()); not for a Plan. */
  workspace?: string;
  /** Sandboxes kept ready, 1 to 64 (default 2). */
  size?: number;
  /** Seconds a sandbox may wait ready before it is replaced (default 30). */
  maxAge?: number;
  /** Seconds run() waits for a sandbox when none is ready (default 10), on timers: the event loop never blocks. */
  wait?: number;
  /** Seconds after a start at the latest before its replacement is prepared (default 0.05). */
  refillAfter?: number;
  /** The cordon-supervisor helper (default: $CORDON_SUPERVISOR, installed, build tree). */
  supervisor?: string;
  /** The CLI's shortcut flags, applied before the pool's compile (a TypeError with a Plan). */
  shortcuts?: Shortcuts;
}

/** Sandboxes prepared ahead of time for one policy (docs/prepared.md): each
 * command starts in a sandbox of its own, set up before it was asked for. */
export class Pool {
  constructor(policy?: PolicyLike, options?: PoolOptions);
  readonly plan: Plan;
  /** How many sandboxes are ready now (-1 once closed). */
  readonly ready: number;
  /** Compiles the policy again on fresh host facts; true when the plan changed. */
  refresh(): boolean;
  /** RunOptions without timeout, workspace and supervisor (the pool's own).
   * Throws a CordonError (launch_failed) at once when no sandbox is ready. */
  start(argv: string[], options?: Omit<RunOptions, 'timeout' | 'workspace' | 'supervisor'>): Run;
  /** timeout (seconds) cancels the run at the deadline. */
  run(argv: string[], options?: Omit<RunOptions, 'workspace' | 'supervisor'>): Promise<RunResult>;
  /** Gives up the sandboxes still waiting; runs already started go on. */
  close(): void;
}

/** Arguments: strings (UTF-8) or Buffers (bytes passed unchanged); a NUL is
 * refused with a CordonError usage_error at /argv/N. */
export type Argv = Array<string | Buffer>;

export function run(policy: PolicyLike, argv: Argv, options?: RunOptions): Promise<RunResult>;
export function start(policy: PolicyLike, argv: Argv, options?: RunOptions): Run;
export function compile(policy?: string | Record<string, unknown>, options?: CompileOptions): Plan;
export function explain(policy?: string | Record<string, unknown>, options?: CompileOptions): Explained;
export function probe(): Capabilities;
export function profileJson(name?: string): string;
export function libraryVersion(): string;

/** A capability request (schemas/capability_rules.v1.schema.json, "$defs/request"). */
export type CapabilityRequest = Record<string, unknown>;

/** What the rules say about one request (docs/governance.md). */
export interface Decision {
  decision: 'allow' | 'deny' | 'require_approval';
  reason: string;
  rule_id: string;
  parts: Array<{ part: string; decision: string; rule_id: string; reason: string }>;
  uncertain: unknown[];
  request_digest: string;
  rules_digest: string;
}

/** Capability rules (a rules file's JSON text or object); throws a
 * CordonError (parse_error, invalid_policy with the JSON pointer) when they do
 * not check. */
export class Rules {
  constructor(rules: string | Record<string, unknown>);
  /** Judges one request without running anything; a denial is an answer. */
  decide(request: CapabilityRequest): Decision;
}

/** One event for the tamper-evident audit log. */
export interface AuditEvent {
  module: string;
  event: string;
  outcome: string;
  ids?: Record<string, string>;
  attributes?: Record<string, string>;
  elapsed_ms?: number;
}

/** What verifying an audit log found; a log that does not verify is ok: false. */
export interface AuditVerification {
  ok: boolean;
  events: number;
  bad_line: number;
  problem: string;
  last_hash: string;
  interrupted_runs: string[];
  records: Array<{ seq: number; hash: string; event: Record<string, unknown> }>;
  /** FILE.head exists. */
  head_present: boolean;
  /** Its MAC verified under the key given. */
  head_keyed: boolean;
  /** The record the head names. */
  head_seq: number;
}

/** The head rules of a verify: by default a log with records and no head does not verify. */
export interface AuditVerifyOptions {
  /** No head file is kept: verify the chain alone (a cut end goes unseen). */
  noHead?: boolean;
  /** The head must carry an HMAC-SHA256 under the key this file holds and name the last record. */
  headKeyFile?: string;
}

/** Appends one event (created 0600; an existing log must verify first), durable when it returns. */
export function auditAppend(file: string, event: AuditEvent): void;
/** Verifies an audit log (`cordon audit verify`); the head is required unless options.noHead. */
export function auditVerify(file: string, options?: AuditVerifyOptions): AuditVerification;

/** What an approver answers: approve(reason, scope) or deny(reason). */
export interface ApprovalAnswer {
  decision: 'approved' | 'denied' | 'manual_review';
  scope: 'once' | 'session' | 'workspace';
  reason: string;
}

/** What an approver is shown (docs/governance.md, "Approvals"): the request,
 * its digest, the rules' reason and the compiled plan's level per control. */
export interface ApprovalRequest {
  request: CapabilityRequest;
  request_digest: string;
  sandbox: { controls: Record<string, unknown>; [key: string]: unknown };
  [key: string]: unknown;
}

/** Returns or resolves to an answer; one that throws or rejects denies. */
export type Approver = (shown: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;

export function approve(reason: string, scope?: 'once' | 'session' | 'workspace'): ApprovalAnswer;
export function deny(reason: string): ApprovalAnswer;

/** Session and workspace grants kept across toolCall()s; calls sharing one run one after the other. */
export class Ledger {
  constructor();
}

export interface ToolCallOptions {
  /** The directory {workspace} names (default: process.cwd()). */
  workspace?: string;
  /** The sandbox policy: a profile name, JSON text or an object (default workspace-write). */
  policy?: string | Record<string, unknown>;
  approver?: Approver;
  /** A request digest approved beforehand: exactly that request, once. */
  preApproved?: string;
  /** A tamper-evident audit log (JSON Lines) the events go to; without it, ToolResult.events. */
  audit?: string;
  sessionId?: string;
  backend?: 'auto' | 'require' | 'forbid';
  /** The host environment the policy chooses from (default: process.env); a NUL is refused. */
  env?: Record<string, string>;
  /** The command's stdin, then end of file. */
  stdin?: string | Buffer;
  /** Seconds; the tree is killed: status timed_out, exitCode 124. */
  timeout?: number;
  /** Bytes kept per stream (the first and the last half); default 1 MiB. */
  maxOutput?: number;
  /** Every chunk as it is read (before the cap): stream 1 stdout, 2 stderr. */
  onOutput?: (stream: 1 | 2, chunk: Buffer) => void;
  /** Used when its plan is the one compiled for the request, else cold (a warning says why). */
  pool?: Pool;
  ledger?: Ledger;
  /** Variables for this call only (Buffers unchanged); one the policy drops is a warning. */
  extraEnv?: Record<string, string | Buffer>;
  /** The CLI's shortcut flags applied to the policy, same meaning. */
  shortcuts?: Shortcuts;
}

/** One stream as the host kept it: the head and the tail within maxOutput. */
export interface Captured {
  data: Buffer;
  /** data as UTF-8 (invalid bytes replaced by U+FFFD). */
  text: string;
  /** Bytes the command wrote. */
  total: number;
  dropped: number;
  /** Where in data the dropped bytes were. */
  droppedAt: number;
  truncated: boolean;
}

export interface ToolResult {
  status: 'completed' | 'authorized' | 'denied' | 'rejected' | 'refused' | 'failed' | 'cancelled' | 'timed_out';
  reason: string;
  /** `cordon exec`'s: the command's, 128+signal, 124, 125-127, 200 denied, 201 rejected. */
  exitCode: number;
  runId: string;
  decision: Decision;
  approval: { decision: string; scope: string; reason: string; approver: string } | null;
  requestDigest: string;
  sandboxPolicyDigest: string;
  report: Report | null;
  /** The audit events when no audit file was given, else null. */
  events: Array<Record<string, unknown>> | null;
  stdout: Captured;
  stderr: Captured;
  /** It started in a prepared sandbox of the pool. */
  pooled: boolean;
  warnings: string[];
  /** What the sandbox refused or hid that the output may not explain, one
   * "[cordon] ..." line each (every violation, the report's view diagnoses):
   * the lines cordon mcp adds to a shell result; show them to the model. */
  sandboxNotes: string[];
}

/** The tool-use call (docs/node.md, "The tool-use call"): decide, approve,
 * run confined with output captured and capped, audit every step. Rejects
 * with a CordonError when the request, policy, context or audit log is bad
 * (then nothing ran); a denial or a failed command is a result. */
export function toolCall(rules: Rules, request: CapabilityRequest | string, options?: ToolCallOptions): Promise<ToolResult>;

/** A refusal by the file worker: code is its stable code (docs/fs-worker.md,
 * "Error codes"), rule the policy rule that decided, response the whole answer. */
export class FsError extends CordonError {
  rule: string;
  response: { ok: false; error: { code: string; message: string; rule?: string } };
}

export interface FsWorkerOptions {
  /** Milliseconds per request (default 10000). */
  deadlineMs?: number;
  /** The cordon-fs-worker executable (default: $CORDON_FS_WORKER, installed, build tree). */
  worker?: string;
  /** The CLI's shortcut flags, applied before the worker's compile. */
  shortcuts?: Shortcuts;
}

/** The confined file worker (docs/fs-worker.md): an agent's file tools under
 * the same sandbox plan as its commands. Requests reach it one at a time. */
export class FsWorker {
  /** Compiles policy for workspace and starts the worker. */
  static start(workspace: string, policy?: string | Record<string, unknown>, options?: FsWorkerOptions): Promise<FsWorker>;
  readonly workspace: string;
  /** The worker's supervisor PID (-1 once closed). */
  readonly pid: number;
  /** The whole response; rejects with an FsError for a refusal. */
  call(op: string, fields?: Record<string, unknown>): Promise<{ ok: true; result: any; touched: unknown }>;
  read(path: string, options?: { offset?: number; length?: number }): Promise<string>;
  write(path: string, content: string, options?: { createParents?: boolean }): Promise<void>;
  /** Resolves to how many replacements were made. */
  edit(path: string, old: string, replacement: string, options?: { expectedOccurrences?: number }): Promise<number>;
  list(path?: string): Promise<Array<{ name: string; type: string; size: number; [key: string]: unknown }>>;
  /** Absolute paths matching a glob (`**` across directories). */
  glob(pattern: string, path?: string): Promise<string[]>;
  /** Lines matching an RE2 pattern. */
  grep(pattern: string, path?: string, fields?: Record<string, unknown>): Promise<Array<{ path: string; line: number; text: string }>>;
  applyPatch(patch: string, options?: { dryRun?: boolean }): Promise<Record<string, unknown>>;
  stat(path: string): Promise<{ type: string; size: number; mode: number; nlink: number; mtime_ns: number }>;
  /** Ends the worker: {worker: its report (every write), run: the run report}. Idempotent. */
  close(): Promise<{ worker: Record<string, unknown> | null; run: Report }>;
}

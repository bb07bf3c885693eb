'use strict';
// The tool-use call in the Node package (docs/node.md, "The tool-use call"):
// over the C API's cordon_governance_tool_call, on a thread of its own so
// that the event loop goes on. Output captured with a cap, stdin, a timeout
// that is exit 124, streaming, a pool, approvals (the approver sees the
// compiled plan; session grants through a Ledger), every step audited, and
// bytes passed unchanged (a NUL refused).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, before, after } = require('node:test');

const cordon = require('..');

const RULES = {
  schema_version: 1,
  name: 'node tool-call tests',
  rules: [
    { id: 'inspect', reason: 'harmless', decision: 'allow', actions: ['shell', 'process'],
      commands: ['cat', 'echo', 'printf', 'yes', 'sleep', 'exit', 'sh', 'ls'] },
    { id: 'ask-touch', reason: 'touch asks first', decision: 'require_approval', commands: ['touch'] },
    { id: 'no-delete', reason: "deleting is not the agent's job", decision: 'deny', commands: ['rm'] },
  ],
};

const shell = (command) => ({ schema_version: 1, action: 'shell', risk: 'low', command, tool: 'bash' });

let workspace;
let rules;
before(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-tool-'));
  fs.chmodSync(workspace, 0o755);
  rules = new cordon.Rules(RULES);
});
after(() => fs.rmSync(workspace, { recursive: true, force: true }));

test('stdin bytes in, output bytes out, the events returned', async () => {
  const data = Buffer.from([0x6f, 0x6e, 0x65, 0x0a, 0xff, 0x00, 0x74, 0x77, 0x6f, 0x0a]);
  const r = await cordon.toolCall(rules, shell('cat; echo err >&2; exit 4'), { workspace, stdin: data });
  assert.equal(r.status, 'completed', r.reason);
  assert.equal(r.exitCode, 4);
  assert.deepEqual(r.stdout.data, data);
  assert.equal(r.stderr.text, 'err\n');
  assert.equal(r.stdout.truncated, false);
  assert.equal(r.report.output.stdout.bytes, data.length);
  assert.equal(r.events.at(-1).event, 'run.completed');
  assert.equal(r.decision.decision, 'allow');
});

test('the event loop goes on while a command runs', async () => {
  let ticks = 0;
  const timer = setInterval(() => { ticks += 1; }, 10);
  try {
    const r = await cordon.toolCall(rules, shell('sleep 0.5; echo done'), { workspace });
    assert.equal(r.stdout.text, 'done\n', r.reason);
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks >= 5, `the timer fired ${ticks} times`);
});

test('a per-call variable the policy drops is a warning; values pass as bytes', async () => {
  const r = await cordon.toolCall(rules, shell('printf %s "$TZ/${CI-unset}"'), { workspace,
    extraEnv: { TZ: Buffer.from([0x55, 0xff, 0x30]), CI: '1' } });
  assert.equal(r.status, 'completed', r.reason);
  assert.deepEqual(r.stdout.data, Buffer.from([0x55, 0xff, 0x30, 0x2f, 0x75, 0x6e, 0x73, 0x65, 0x74]));
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0], /variable CI was given/);
});

test('a NUL in a request, a variable or an argument is refused with a clear error', async () => {
  await assert.rejects(cordon.toolCall(rules, shell('echo a\0b'), { workspace }),
    (e) => e instanceof cordon.CordonError && e.code === 'invalid_policy' && e.location === '/command');
  assert.throws(() => cordon.toolCall(rules, shell('echo x'), { workspace, extraEnv: { TZ: 'a\0b' } }),
    (e) => e.code === 'usage_error' && e.location === '/extraEnv/TZ' && /NUL/.test(e.message));
  assert.throws(() => cordon.toolCall(rules, shell('echo x'), { workspace, env: { PATH: '/bin\0/x' } }),
    (e) => e.code === 'usage_error' && e.location === '/env/PATH');
  assert.throws(() => cordon.start('workspace-write', ['echo', 'a\0b'], { workspace }),
    (e) => e.code === 'usage_error' && e.location === '/argv/1');
  assert.throws(() => cordon.start('workspace-write', ['echo', Buffer.from([0x61, 0, 0x62])], { workspace }),
    (e) => e.code === 'usage_error' && e.location === '/argv/1');
});

test('run() passes a Buffer argument unchanged (not UTF-8)', async () => {
  const name = Buffer.from([0x66, 0xff, 0x2e, 0x74, 0x78, 0x74]); // "f\xff.txt"
  const r = await cordon.run('workspace-write', ['printf', '%s', name], { workspace, cwd: workspace });
  assert.equal(r.exitCode, 0, r.stderr.toString());
  assert.deepEqual(r.stdout, name);
});

test('endless output is capped and times out with 124', async () => {
  const r = await cordon.toolCall(rules, shell('yes'), { workspace, timeout: 1.5, maxOutput: 8192 });
  assert.equal(r.status, 'timed_out', r.reason);
  assert.equal(r.exitCode, 124);
  assert.equal(r.stdout.data.length, 8192);
  assert.ok(r.stdout.dropped > 0);
  assert.equal(r.stdout.total, 8192 + r.stdout.dropped);
  assert.equal(r.report.output.stdout.dropped, r.stdout.dropped);
  assert.ok(process.memoryUsage().rss < 200 * 1024 * 1024, `rss ${process.memoryUsage().rss}`);
});

test('onOutput sees every chunk, in order, before the result', async () => {
  const seen = [];
  const r = await cordon.toolCall(rules, shell('printf 0123456789; printf e >&2'), { workspace, maxOutput: 4,
    onOutput: (stream, chunk) => seen.push([stream, chunk]) });
  assert.equal(r.status, 'completed', r.reason);
  assert.equal(Buffer.concat(seen.filter(([s]) => s === 1).map(([, c]) => c)).toString(), '0123456789');
  assert.equal(Buffer.concat(seen.filter(([s]) => s === 2).map(([, c]) => c)).toString(), 'e');
  assert.equal(r.stdout.text, '0189');
  assert.equal(r.stdout.dropped, 6);
  assert.equal(r.stdout.droppedAt, 2);
});

test('denied by rules; approvals: shown the plan, async answers, session grants through a Ledger', async () => {
  const denied = await cordon.toolCall(rules, shell(`rm -rf ${workspace}`), { workspace });
  assert.equal(denied.status, 'denied');
  assert.equal(denied.exitCode, 200);
  assert.ok(fs.existsSync(workspace));
  const shown = [];
  const approver = async (request) => {
    shown.push(request);
    await new Promise((resolve) => setTimeout(resolve, 10));
    return cordon.approve('fine for this session', 'session');
  };
  const ledger = new cordon.Ledger();
  const request = shell(`touch ${workspace}/made`);
  const both = await Promise.all([1, 2].map(() => cordon.toolCall(rules, request, { workspace, approver, ledger,
    sessionId: 's1' })));
  for (const r of both) assert.equal(r.status, 'completed', r.reason);
  assert.equal(shown.length, 1); // the grant covered the second call
  assert.ok(Object.keys(shown[0].sandbox.controls).length > 0); // the approver saw the compiled plan
  assert.ok(fs.existsSync(path.join(workspace, 'made')));
  const declined = await cordon.toolCall(rules, shell(`touch ${workspace}/other`), { workspace,
    approver: () => cordon.deny('not now') });
  assert.equal(declined.status, 'denied');
  assert.equal(declined.approval.decision, 'denied');
  assert.equal(fs.existsSync(path.join(workspace, 'other')), false);
  const threw = await cordon.toolCall(rules, shell(`touch ${workspace}/third`), { workspace,
    approver: () => { throw new Error('no person here'); } });
  assert.equal(threw.status, 'denied');
  assert.match(threw.approval.reason, /no person here/);
});

test('the audit log gets every step and verifies', async () => {
  const log = path.join(workspace, '..', `${path.basename(workspace)}.audit.jsonl`);
  try {
    const r = await cordon.toolCall(rules, shell('echo audited'), { workspace, audit: log });
    assert.equal(r.events, null);
    const v = cordon.auditVerify(log);
    assert.equal(v.ok, true, v.problem);
    assert.ok(v.records.some((rec) => rec.event.event === 'run.completed'));
  } finally {
    fs.rmSync(log, { force: true });
  }
});

test('a pool is used, and its timeout is 124', async () => {
  const pool = new cordon.Pool('workspace-write', { workspace, size: 1 });
  try {
    await pool.readyOrDeadline();
    const r = await cordon.toolCall(rules, shell('echo pooled'), { workspace, pool });
    assert.equal(r.status, 'completed', r.reason);
    assert.equal(r.pooled, true, r.warnings.join('; '));
    assert.equal(r.stdout.text, 'pooled\n');
    await pool.readyOrDeadline();
    const slow = cordon.toolCall(rules, shell('sleep 30'), { workspace, pool, timeout: 0.3 });
    pool.close(); // while the call uses it: freed when the call ends
    const s = await slow;
    assert.equal(s.status, 'timed_out');
    assert.equal(s.exitCode, 124);
    assert.equal(s.pooled, true);
  } finally {
    pool.close();
  }
});

test('shortcuts mean what the CLI flags mean', async () => {
  const outside = fs.mkdtempSync(path.join('/var/tmp', 'cordon-node-rw-'));
  fs.chmodSync(outside, 0o777);
  try {
    const target = path.join(outside, 'made-by-rw');
    const plain = await cordon.run('workspace-write', ['sh', '-c', `echo x > ${target}`], { workspace });
    assert.notEqual(plain.exitCode, 0);
    assert.equal(fs.existsSync(target), false);
    const r = await cordon.run('workspace-write', ['sh', '-c', `echo "$CORDON_SHORTCUT" > ${target}`], { workspace,
      shortcuts: { rw: [outside], setenv: { CORDON_SHORTCUT: 'set' } } });
    assert.equal(r.exitCode, 0, r.stderr.toString());
    assert.equal(fs.readFileSync(target, 'utf8'), 'set\n');
    const t = await cordon.toolCall(rules, shell('printf %s "$CORDON_SHORTCUT"'), { workspace,
      shortcuts: { setenv: { CORDON_SHORTCUT: 'tool' } } });
    assert.equal(t.stdout.text, 'tool', t.reason);
    assert.ok(cordon.compile('workspace-write', { workspace, shortcuts: { allow_hosts: ['example.org:443'] } }).explain().compiles);
    assert.throws(() => cordon.compile('workspace-write', { workspace, shortcuts: { rw: ['/does/not/exist'] } }),
      (e) => e.code === 'usage_error' && /does not exist/.test(e.message));
    await assert.rejects(cordon.toolCall(rules, shell('echo x'), { workspace, shortcuts: { bogus: [] } }),
      (e) => e.code === 'usage_error' && e.location === '/shortcuts/bogus');
  } finally {
    fs.rmSync(outside, { recursive: true, force: true });
  }
});

test('a refused connect is a sandbox note of the result; a clean run has none', async () => {
  // The lines cordon mcp adds to a shell result (docs/governance.md, "The tool-use call").
  const pyRules = new cordon.Rules({ schema_version: 1, name: 'notes', rules: [
    { id: 'py', reason: 'tests', decision: 'allow', actions: ['shell', 'process'], commands: ['python3', 'echo'] }] });
  const r = await cordon.toolCall(pyRules,
    shell("python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)\""), { workspace });
  assert.equal(r.status, 'completed', r.reason);
  assert.notEqual(r.exitCode, 0);
  assert.ok(r.sandboxNotes.length > 0, JSON.stringify(r.report));
  assert.match(r.sandboxNotes[0],
    /^\[cordon\] blocked by the sandbox: network_connect 192\.0\.2\.1:80 \(x\d+\); the policy refuses it, retrying will not help$/);
  const clean = await cordon.toolCall(pyRules, shell('echo fine'), { workspace });
  assert.equal(clean.stdout.text, 'fine\n');
  assert.deepEqual(clean.sandboxNotes, []);
});

test('Pool and FsWorker take shortcuts; a Plan refuses them', async () => {
  const pool = new cordon.Pool('workspace-write', { workspace, size: 1, shortcuts: { setenv: { CORDON_SHORTCUT: 'pooled' } } });
  try {
    const r = await pool.run(['sh', '-c', 'printf %s "$CORDON_SHORTCUT"'], { cwd: workspace });
    assert.equal(r.exitCode, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), 'pooled');
  } finally {
    pool.close();
  }
  assert.throws(() => new cordon.Pool('workspace-write', { workspace, size: 1, shortcuts: { bogus: [] } }),
    (e) => e.code === 'usage_error' && e.location === '/shortcuts/bogus');
  const plan = cordon.compile('workspace-write', { workspace });
  assert.throws(() => new cordon.Pool(plan, { size: 1, shortcuts: { setenv: { X: '1' } } }), TypeError);
  const outside = fs.mkdtempSync(path.join('/var/tmp', 'cordon-node-fsrw-'));
  fs.chmodSync(outside, 0o777);
  try {
    const target = path.join(outside, 'by-worker');
    const plain = await cordon.FsWorker.start(workspace);
    try {
      await assert.rejects(plain.write(target, 'x'), (e) => e instanceof cordon.FsError);
    } finally {
      await plain.close();
    }
    assert.equal(fs.existsSync(target), false);
    const w = await cordon.FsWorker.start(workspace, 'workspace-write', { shortcuts: { rw: [outside] } });
    try {
      await w.write(target, 'written\n');
    } finally {
      await w.close();
    }
    assert.equal(fs.readFileSync(target, 'utf8'), 'written\n');
    await assert.rejects(cordon.FsWorker.start(workspace, 'workspace-write', { shortcuts: { bogus: [] } }),
      (e) => e.code === 'usage_error' && e.location === '/shortcuts/bogus');
  } finally {
    fs.rmSync(outside, { recursive: true, force: true });
  }
});

test('git config in a protected repository says read-only and is a sandbox note', async () => {
  // .git/config is read-only (protect_vcs_metadata); git replaces it by a rename, which the
  // kernel refuses with EBUSY; the sandbox answers EROFS and reports the path.
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-git-'));
  fs.chmodSync(repo, 0o755);
  try {
    require('node:child_process').execFileSync('git', ['init', '-q', repo]);
    const gitRules = new cordon.Rules({ schema_version: 1, name: 'git', rules: [
      { id: 'git', reason: 'tests', decision: 'allow', actions: ['shell', 'process'], commands: ['git'] }] });
    const r = await cordon.toolCall(gitRules, shell('git config user.name someone'), { workspace: repo });
    assert.equal(r.status, 'completed', r.reason);
    assert.notEqual(r.exitCode, 0);
    assert.match(r.stderr.text, /could not write config file \.git\/config: Read-only file system/);
    assert.doesNotMatch(r.stderr.text, /busy/);
    assert.deepEqual(r.sandboxNotes, [`[cordon] blocked by the sandbox: protected_write ${path.join(repo, '.git', 'config')} (x1); ` +
      'the policy refuses it, retrying will not help']);
  } finally {
    fs.rmSync(repo, { recursive: true, force: true });
  }
});

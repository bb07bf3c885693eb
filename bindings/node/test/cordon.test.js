'use strict';
// The Node package against real confined runs (node --test, docs/node.md).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, before, after } = require('node:test');

const cordon = require('..');
const { generate } = require('../scripts/generate-report-types.js');

let available = false;
let skipReason = '';
let workspace;
let outside;

before(() => {
  const caps = cordon.probe();
  available = caps.available;
  skipReason = `the Linux backend is not available on this host: ${caps.facts.join('; ')}`;
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-'));
  outside = fs.mkdtempSync('/var/tmp/cordon-node-outside-');
  fs.chmodSync(outside, 0o777);
});

after(() => {
  fs.rmSync(workspace, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

test('report types are generated from the schema', () => {
  const schema = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../schemas/report.v1.schema.json'), 'utf8'));
  const committed = fs.readFileSync(path.join(__dirname, '../report.d.ts'), 'utf8');
  assert.equal(generate(schema), committed, 'report.d.ts is stale: npm run generate-types');
});

test('allowed write works, forbidden writes fail with their errno', async (t) => {
  if (!available) return t.skip(skipReason);
  const inside = path.join(workspace, 'made-inside');
  const elsewhere = path.join(outside, 'made-outside');
  const r = await cordon.run('workspace-write', ['/bin/sh', '-c',
    `echo ok > ${inside}; echo x > ${elsewhere}; echo y > /etc/cordon-node-probe; cat ${inside}`], { cwd: workspace });
  assert.equal(r.exitCode, 0, r.stderr.toString());
  assert.equal(r.stdout.toString(), 'ok\n');
  assert.match(r.stderr.toString(), new RegExp(`${elsewhere}: Directory nonexistent|${elsewhere}: No such file`));
  // Creating a file in /etc meets the read-only mount (EROFS) before any permission check, for every user.
  assert.match(r.stderr.toString(), /\/etc\/cordon-node-probe: Read-only file system/);
  assert.ok(fs.existsSync(inside));
  assert.ok(!fs.existsSync(elsewhere));
  assert.equal(r.report.outcome, 'completed');
  assert.equal(r.report.controls.filesystem_write.level, 'enforced');
  assert.equal(r.error, null);
});

test('streaming output arrives before the end; stdin pipe', async (t) => {
  if (!available) return t.skip(skipReason);
  // The command prints its second line only once the first has reached
  // this process (the callback makes the file it waits for; bounded by 20 s):
  // both lines at the end would mean the first came only at the end.
  const seen = [];
  const go = path.join(workspace, 'first-seen');
  const r = await cordon.run('workspace-write',
    ['/bin/sh', '-c', 'echo first; i=0; while [ ! -e first-seen ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; '
      + 'test -e first-seen && echo second'],
    { cwd: workspace, onStdout: (c) => { seen.push(c.toString()); fs.writeFileSync(go, ''); } });
  fs.rmSync(go, { force: true });
  assert.equal(r.stdout.toString(), 'first\nsecond\n');
  assert.equal(seen[0], 'first\n', 'the first line came only at the end');

  const run = cordon.start('workspace-write', ['/usr/bin/tr', 'a-z', 'A-Z'], { cwd: workspace, stdin: 'pipe' });
  run.stdin.end('piped in\n');
  const piped = await run.wait();
  assert.equal(piped.stdout.toString(), 'PIPED IN\n');
  const given = await cordon.run('workspace-write', ['/bin/cat'], { cwd: workspace, stdin: 'given\n' });
  assert.equal(given.stdout.toString(), 'given\n');
});

test('cancel and AbortSignal kill the tree', async (t) => {
  if (!available) return t.skip(skipReason);
  const run = cordon.start('workspace-write', ['/bin/sh', '-c', 'echo ready; exec sleep 60'], { cwd: workspace });
  assert.ok(run.pid > 0);
  await new Promise((resolve) => run.stdout.once('data', resolve));
  run.cancel();
  const r = await run.wait();
  assert.equal(r.cancelled, true);
  assert.equal(r.exitCode, 137);
  assert.equal(r.report.outcome, 'cancelled');

  // Aborted once the command runs (its first output), not after a fixed pause.
  const controller = new AbortController();
  const started = Date.now();
  const aborted = await cordon.run('workspace-write', ['/bin/sh', '-c', 'echo ready; exec sleep 60'],
    { cwd: workspace, signal: controller.signal, onStdout: () => controller.abort() });
  assert.equal(aborted.cancelled, true);
  assert.equal(aborted.stdout.toString(), 'ready\n');
  assert.ok(Date.now() - started < 20000);
});

test('timeout is the policy timeout; a Plan is cancelled at the deadline', async (t) => {
  if (!available) return t.skip(skipReason);
  const r = await cordon.run('workspace-write', ['/bin/sleep', '30'], { cwd: workspace, timeout: 0.3 });
  assert.equal(r.exitCode, 124);
  assert.equal(r.timedOut, true);
  assert.equal(r.report.timeout_fired, true);
  const plan = cordon.compile('workspace-write', { workspace });
  assert.equal(plan.explain().compiles, true);
  const p = await cordon.run(plan, ['/bin/sleep', '30'], { timeout: 0.3 });
  assert.equal(p.timedOut, true);
  assert.equal(p.cancelled, true);
});

test('eight runs at once share one plan', async (t) => {
  if (!available) return t.skip(skipReason);
  const plan = cordon.compile('workspace-write', { workspace });
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) =>
    cordon.run(plan, ['/bin/sh', '-c', `echo ${i}`])));
  assert.deepEqual(results.map((r) => r.stdout.toString()), Array.from({ length: 8 }, (_, i) => `${i}\n`));
});

test('command not found is a result with its error', async (t) => {
  if (!available) return t.skip(skipReason);
  const r = await cordon.run('workspace-write', ['no-such-command-cordon'], { cwd: workspace });
  assert.equal(r.exitCode, 127);
  assert.equal(r.ran, false);
  assert.equal(r.error.code, 'command_not_found');
  assert.equal(r.report.outcome, 'launch_failed');
});

test('errors carry stable codes, locations and typed blockers', () => {
  assert.throws(() => cordon.compile({ schema_version: 1, filesystem: { raed: 'all' } }),
    (e) => e instanceof cordon.CordonError && e.code === 'invalid_policy' && e.location === '/filesystem/raed');
  assert.throws(() => cordon.compile('{not json'), (e) => e.code === 'parse_error' && e.location === 'line 1, column 3');
  assert.throws(() => cordon.compile('no-such-profile'), (e) => e.code === 'unknown_profile');
  assert.throws(() => cordon.compile('workspace-write', { workspace, sandbox: 'forbid' }), (e) =>
    e.code === 'isolation_insufficient' && e.blockers.length === 1 && e.blockers[0].subject === 'isolation' &&
    e.blockers[0].required === 'os_sandbox' && e.blockers[0].available === 'none');
  const policy = JSON.parse(cordon.profileJson('workspace-write'));
  policy.isolation = 'none';
  assert.throws(() => cordon.compile(policy, { workspace, sandbox: 'forbid' }), (e) =>
    e.code === 'enforcement_unavailable' &&
    e.blockers.some((b) => b.subject === 'control' && b.control === 'filesystem_write' &&
      b.required === 'enforced' && b.available === 'not_enforced'));
  const explained = cordon.explain(policy, { workspace, sandbox: 'forbid' });
  assert.equal(explained.compiles, false);
  assert.equal(explained.error.code, 'enforcement_unavailable');
  assert.throws(() => cordon.start('workspace-write', [], { cwd: workspace }), TypeError);
  assert.match(cordon.libraryVersion(), /^\d+\.\d+\.\d+$/);
});

test('the message alone names the first error and the first blocker', () => {
  // A model that reads only the message learns what to change (docs/node.md, "Errors").
  assert.throws(() => cordon.compile({ schema_version: 1, filesystem: { raed: 'all', wirte: 1 }, bogus: 2 }), (e) =>
    e.errors.length === 3 && e.message === 'invalid_policy: unknown field "raed" (at /filesystem/raed) (and 2 more in .errors)');
  const policy = JSON.parse(cordon.profileJson('workspace-write'));
  policy.isolation = 'none';
  assert.throws(() => cordon.compile(policy, { workspace, sandbox: 'forbid' }), (e) => {
    const b = e.blockers[0];
    return e.message.includes(`; first blocker: ${b.control}: ${b.reason} (requires ${b.required}, this host gives ${b.available})`) &&
      e.message.endsWith(`(and ${e.blockers.length - 1} more in .blockers)`);
  });
  const made = new cordon.CordonError({ code: 'invalid_policy', message: 'the policy is invalid',
    errors: [{ location: '/network/mode', reason: 'unknown mode' }] });
  assert.equal(made.message, 'invalid_policy: the policy is invalid; first error: invalid_policy at /network/mode: unknown mode');
});

test('the docs/node.md example runs', async (t) => {
  if (!available) return t.skip(skipReason);
  const text = fs.readFileSync(path.join(__dirname, '../../../docs/node.md'), 'utf8');
  const code = /```js\n([\s\S]*?)```/.exec(text)[1].replace("require('cordon-sandbox')", 'require(process.env.CORDON_PACKAGE)');
  const file = path.join(workspace, 'example.js');
  fs.writeFileSync(file, code);
  const { execFileSync } = require('node:child_process');
  const out = execFileSync(process.execPath, [file], {
    cwd: workspace, env: { ...process.env, CORDON_PACKAGE: path.join(__dirname, '..') }, encoding: 'utf8',
  });
  assert.match(out, /exit 0: hello from the sandbox/);
  assert.match(out, /filesystem_write: enforced/);
});

test('the TypeScript declarations type-check a host (tsc --strict)', (t) => {
  const { spawnSync } = require('node:child_process');
  const tsc = spawnSync('tsc', ['--version'], { encoding: 'utf8' });
  if (tsc.error) return t.skip('tsc is not installed (Debian: node-typescript, scripts/setup.sh)');
  const root = path.join(__dirname, '..');
  const done = spawnSync('tsc', ['--noEmit', '--strict', '--target', 'es2022', '--module', 'commonjs',
    '--moduleResolution', 'node', '--lib', 'es2022,dom', 'test/types/node-shim.d.ts', 'test/types/consumer.ts'],
  { cwd: root, encoding: 'utf8' });
  assert.equal(done.status, 0, done.stdout + done.stderr);
});

test('a pool runs each command in a prepared sandbox of its own', async (t) => {
  if (!available) return t.skip(skipReason);
  const inside = path.join(workspace, 'made-in-a-pool');
  const pool = new cordon.Pool('workspace-write', { workspace, size: 1, wait: 20 });
  try {
    for (let i = 0; i < 400 && pool.ready < 1; ++i) await new Promise((r) => setTimeout(r, 50));
    assert.equal(pool.ready, 1);
    assert.equal(pool.refresh(), false);
    const r = await pool.run(['/bin/sh', '-c', `touch ${inside} && touch /etc/x; echo left > /tmp/left-behind`],
      { cwd: workspace });
    assert.equal(r.exitCode, 0, r.stderr.toString());
    assert.ok(fs.existsSync(inside));
    assert.match(r.stderr.toString(), /cannot touch '\/etc\/x': Read-only file system/);
    assert.equal(r.report.prepared, true);
    assert.match(r.report.prepared_at, /Z$/);
    // The next command gets a new sandbox: the first one's /tmp is not there.
    const second = await pool.run(['/bin/cat', '/tmp/left-behind'], { cwd: workspace });
    assert.equal(second.exitCode, 1);
    assert.match(second.stderr.toString(), /No such file or directory/);
    const cancelled = await pool.run(['/bin/sleep', '30'], { timeout: 0.5 });
    assert.ok(cancelled.cancelled && cancelled.timedOut);
  } finally {
    pool.close();
  }
  assert.equal(pool.ready, -1);
  assert.throws(() => pool.start(['/bin/true']), /the pool is closed/);
  assert.throws(() => new cordon.Pool('workspace-write', { workspace, size: 0 }),
    (e) => e instanceof cordon.CordonError && e.code === 'usage_error' && e.location === '/size');
});

test('a pool never blocks the event loop and its handle is no plan', async (t) => {
  if (!available) return t.skip(skipReason);
  // A helper that does not exist: no sandbox ever becomes ready.
  const pool = new cordon.Pool('workspace-write', { workspace, size: 1, wait: 0.3, supervisor: '/nonexistent/cordon-supervisor' });
  try {
    let ticks = 0;
    const ticker = setInterval(() => { ticks += 1; }, 10);
    const began = Date.now();
    await assert.rejects(pool.run(['/bin/true']),
      (e) => e instanceof cordon.CordonError && e.code === 'launch_failed' && /cordon-supervisor/.test(e.message));
    clearInterval(ticker);
    assert.ok(Date.now() - began < 3000, `run() took ${Date.now() - began} ms`);
    assert.ok(ticks >= 10, `the event loop ran ${ticks} timer ticks while run() waited`);
    const before = Date.now();
    assert.throws(() => pool.start(['/bin/true']), (e) => e instanceof cordon.CordonError && e.code === 'launch_failed');
    assert.ok(Date.now() - before < 500);
    // A pool's handle where a plan is expected is refused, never read as a plan.
    assert.throws(() => new cordon.Run(pool, ['/bin/true'], {}), (e) => e instanceof cordon.CordonError && e.code === 'usage_error');
    assert.equal(cordon.Plan.prototype.explain.call(pool), null);
    // The pool option of the module's run() does not exist: the policy given is the one that runs.
    const r = await cordon.run('read-only', ['/bin/sh', '-c', `touch ${workspace}/ro-probe`], { workspace, pool });
    assert.notEqual(r.exitCode, 0);
    assert.equal(r.report.policy.name, 'read-only');
  } finally {
    pool.close();
  }
});

'use strict';
// The confined file worker in the Node package (docs/node.md, "The file
// worker"): reads and writes inside its workspace, refuses escapes with their
// stable codes, and keeps the event loop going (the C calls run as async work).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, before, after } = require('node:test');

const cordon = require('..');

let workspace;
let outside;
let worker;
before(async () => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-fs-'));
  outside = fs.mkdtempSync(path.join('/var/tmp', 'cordon-node-fs-outside-'));
  fs.chmodSync(outside, 0o777);
  worker = await cordon.FsWorker.start(workspace);
});
after(async () => {
  await worker?.close();
  fs.rmSync(workspace, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

test('reads, writes, edits, lists and searches inside the workspace', async () => {
  await worker.write('notes.txt', 'alpha\nbeta\n');
  assert.equal(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8'), 'alpha\nbeta\n');
  assert.equal(await worker.read('notes.txt'), 'alpha\nbeta\n');
  assert.equal(await worker.edit('notes.txt', 'beta', 'gamma'), 1);
  assert.equal(await worker.read(path.join(workspace, 'notes.txt')), 'alpha\ngamma\n');
  assert.deepEqual((await worker.list('.')).map((e) => e.name), ['notes.txt']);
  assert.deepEqual(await worker.glob('*.txt'), [path.join(workspace, 'notes.txt')]);
  assert.deepEqual((await worker.grep('gam+a')).map((m) => [m.line, m.text]), [[2, 'gamma']]);
  assert.equal((await worker.stat('notes.txt')).size, 'alpha\ngamma\n'.length);
  assert.ok(worker.pid > 0);
  // Requests sent together reach the worker one at a time, and all answer.
  const many = await Promise.all([1, 2, 3].map((i) => worker.write(`n${i}.txt`, `${i}\n`).then(() => worker.read(`n${i}.txt`))));
  assert.deepEqual(many, ['1\n', '2\n', '3\n']);
});

test('a patch applies', async () => {
  await worker.write('a.txt', 'one\ntwo\n');
  await worker.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n');
  assert.equal(await worker.read('a.txt'), 'one\nthree\n');
});

test('.. and a symbolic link out of the workspace are refused with their codes', async () => {
  fs.writeFileSync(path.join(outside, 'secret'), 'hunter2\n');
  await assert.rejects(worker.read(`../${path.basename(outside)}/secret`),
    (e) => e instanceof cordon.FsError && e.code === 'path_escape');
  await assert.rejects(worker.write('../escaped.txt', 'x'), (e) => e.code === 'path_escape');
  fs.symlinkSync(path.join(outside, 'secret'), path.join(workspace, 'link'));
  await assert.rejects(worker.read('link'), (e) => e.code === 'symlink' && e.response.ok === false);
  await assert.rejects(worker.write('/etc/cordon-node-fs', 'x'), (e) => e instanceof cordon.FsError);
  assert.equal(fs.existsSync('/etc/cordon-node-fs'), false);
});

test('close() gives the report of every write; later calls are refused', async () => {
  const w = await cordon.FsWorker.start(workspace);
  await w.write('closing.txt', 'bye\n');
  const report = await w.close();
  assert.ok(report.worker.writes.some((x) => JSON.stringify(x).includes('closing.txt')), JSON.stringify(report.worker));
  assert.equal(report.run.outcome, 'completed');
  assert.deepEqual(await w.close(), report);
  await assert.rejects(w.read('closing.txt'), (e) => e instanceof cordon.CordonError && e.code === 'usage_error');
});

test('a bad policy is refused with its code', async () => {
  await assert.rejects(cordon.FsWorker.start(workspace, { schema_version: 1, filesystem: { readable: ['relative'] } }),
    (e) => e instanceof cordon.CordonError && e.code === 'invalid_policy');
});

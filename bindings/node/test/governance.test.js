'use strict';
// Governance in the Node package (docs/node.md, "API"): the rules
// decide without running anything, bad rules and requests carry stable codes
// and locations, and the audit log verifies and detects tampering.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const cordon = require('..');

const RULES = {
  schema_version: 1,
  name: 'node tests',
  rules: [
    { id: 'inspect', reason: 'inspecting is harmless', decision: 'allow', actions: ['shell', 'process'],
      commands: ['ls', 'echo', 'true'] },
    { id: 'publish', reason: 'writing needs a person', decision: 'require_approval', commands: ['sh', 'touch'] },
    { id: 'no-delete', reason: "deleting is not the agent's job", decision: 'deny', commands: ['rm'] },
  ],
};

const shell = (command) => ({ schema_version: 1, action: 'shell', risk: 'low', command, tool: 'bash' });

test('the rules decide without running anything', () => {
  const rules = new cordon.Rules(RULES);
  assert.equal(rules.decide(shell('ls -l')).decision, 'allow');
  const denied = rules.decide(shell('ls && rm -rf .'));
  assert.equal(denied.decision, 'deny');
  assert.equal(denied.rule_id, 'no-delete');
  assert.equal(denied.reason, "deleting is not the agent's job");
  assert.equal(rules.decide(shell('touch x')).decision, 'require_approval');
  assert.match(denied.request_digest, /^sha256:/);
  assert.match(denied.rules_digest, /^sha256:/);
  // Rules as JSON text decide the same, with the same digest.
  assert.equal(new cordon.Rules(JSON.stringify(RULES)).decide(shell('ls -l')).rules_digest,
    rules.decide(shell('ls -l')).rules_digest);
});

test('bad rules and requests carry codes and locations', () => {
  assert.throws(() => new cordon.Rules({ schema_version: 1, name: 'x', rules: [{ id: 'a', decison: 'allow' }] }),
    (e) => e instanceof cordon.CordonError && e.code === 'invalid_policy' && e.location.startsWith('/rules/0'));
  assert.throws(() => new cordon.Rules('{not json'), (e) => e.code === 'parse_error');
  assert.throws(() => new cordon.Rules(RULES).decide({ schema_version: 1, action: 'shell', risk: 'low', comand: 'ls' }),
    (e) => e.code === 'invalid_policy');
});

test('the audit log verifies and detects tampering', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-audit-'));
  try {
    const log = path.join(dir, 'audit.jsonl');
    cordon.auditAppend(log, { module: 'host', event: 'tool.decided', outcome: 'allow', ids: { trace_id: 't1' } });
    cordon.auditAppend(log, { module: 'host', event: 'tool.called', outcome: 'ok', attributes: { tool: 'bash' } });
    const good = cordon.auditVerify(log);
    assert.equal(good.ok, true);
    assert.equal(good.bad_line, 0);
    assert.equal(good.events, 2);
    assert.equal(good.records[1].event.event, 'tool.called');
    assert.equal(fs.statSync(log).mode & 0o777, 0o600);
    assert.equal(good.head_present, true);
    assert.equal(good.head_seq, 2);

    // Without its head the log does not verify, unless no head is kept by choice.
    fs.renameSync(`${log}.head`, `${log}.head.kept`);
    const headless = cordon.auditVerify(log);
    assert.equal(headless.ok, false);
    assert.match(headless.problem, /no head file/);
    assert.equal(cordon.auditVerify(log, { noHead: true }).ok, true);
    assert.throws(() => cordon.auditVerify(log, { noHead: 'yes' }), (e) => e.code === 'usage_error');
    fs.renameSync(`${log}.head.kept`, `${log}.head`);

    const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
    const record = JSON.parse(lines[0]);
    record.event.outcome = 'deny';
    lines[0] = JSON.stringify(record);
    fs.writeFileSync(log, `${lines.join('\n')}\n`);
    const bad = cordon.auditVerify(log);
    assert.equal(bad.ok, false);
    assert.equal(bad.bad_line, 1);
    assert.equal(bad.events, 0);
    // Nothing is appended to a log that does not verify.
    assert.throws(() => cordon.auditAppend(log, { module: 'host', event: 'x', outcome: 'ok' }),
      (e) => e.code === 'invalid_policy');
    assert.throws(() => cordon.auditAppend(log, { module: 'host' }), (e) => e instanceof cordon.CordonError);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

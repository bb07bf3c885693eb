'use strict';
// The scripted agent session of tests/agent_session/scenario.json (issue 34,
// acceptance 1) through toolCall: explore, a failing test suite, an edit,
// the suite passing, an install through the filtered network to a loopback
// stand-in registry after approval, a commit; a push the approver declines
// and a delete the rules deny. Every step's decision, exit and output, and
// the audit log (it verifies, one decision per step), are checked.
const assert = require('node:assert/strict');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { test } = require('node:test');

const cordon = require('..');

const fixture = process.env.CORDON_AGENT_SESSION || path.join(__dirname, '../../../tests/agent_session');

// Starts the stand-in registry; resolves to {port, stop}.
async function startRegistry(scenario) {
  const [cmd, ...args] = scenario.server.argv.map((a) => a.replace('{fixture}', fixture));
  const server = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stdout }).once('line', resolve);
    server.once('error', reject);
  });
  return { port: Number(line.split(scenario.server.port_after)[1].split(' ')[0]), stop: () => server.kill() };
}

test('the scripted agent session', async () => {
  const scenario = JSON.parse(fs.readFileSync(path.join(fixture, 'scenario.json'), 'utf8'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-session-'));
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  const registry = await startRegistry(scenario);
  try {
    for (const [name, text] of Object.entries(scenario.files)) fs.writeFileSync(path.join(workspace, name), text);
    for (const [cmd, ...args] of scenario.setup) execFileSync(cmd, args, { cwd: workspace });
    const policy = JSON.parse(cordon.profileJson('workspace-write'));
    policy.network = JSON.parse(JSON.stringify(scenario.network).replaceAll('"{port}"', String(registry.port)));
    const rules = new cordon.Rules(scenario.rules);
    const audit = path.join(dir, 'audit.jsonl');
    for (const step of scenario.steps) {
      const command = step.command.replaceAll('{port}', String(registry.port));
      const shown = [];
      const r = await cordon.toolCall(rules, { schema_version: 1, action: 'shell', risk: 'low', command, tool: 'bash',
        trace_id: step.name }, { workspace, policy, audit, sessionId: 'agent-session', timeout: 60,
        approver: async (request) => { shown.push(request); return step.approver; } });
      const { expect } = step;
      const where = `${step.name}: ${r.status} ${r.reason} ${r.stderr.text}`;
      assert.equal(r.decision.decision, expect.decision, where);
      assert.equal(r.status, expect.status, where);
      assert.equal(r.exitCode, expect.exit_code, where);
      for (const text of expect.stdout_contains ?? []) assert.ok(r.stdout.text.includes(text), `${where} stdout ${r.stdout.text}`);
      if (expect.approval !== undefined) {
        assert.equal(shown.length, 1, where);
        assert.equal(shown[0].request.command, command); // the approver saw this request...
        assert.ok(Object.keys(shown[0].sandbox.controls).length > 0); // ...and the compiled plan
        assert.equal(r.approval.decision, expect.approval, where);
      } else {
        assert.equal(shown.length, 0, where);
      }
    }
    const verified = cordon.auditVerify(audit);
    assert.equal(verified.ok, true, verified.problem);
    const events = verified.records.map((rec) => rec.event);
    const outcomes = (name) => events.filter((e) => e.event === name).map((e) => e.outcome);
    assert.deepEqual(outcomes('policy.decision'), scenario.steps.map((s) => s.expect.decision));
    assert.deepEqual(outcomes('approval'), scenario.steps.filter((s) => s.expect.approval).map((s) => s.expect.approval));
    assert.equal(outcomes('run.completed').length, scenario.steps.filter((s) => s.expect.status === 'completed').length);
    for (const [name, text] of Object.entries(scenario.after.file_contains)) {
      assert.ok(fs.readFileSync(path.join(workspace, name), 'utf8').includes(text), name);
    }
    const log = scenario.after.host_git_log;
    assert.equal(execFileSync(log.argv[0], log.argv.slice(1), { cwd: workspace, encoding: 'utf8' }), log.stdout);
  } finally {
    registry.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

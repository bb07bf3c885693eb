'use strict';
// The scripted agent session of tests/agent_session/scenario.json (issue 34,
// acceptance 1) through toolCall: explore, a failing test suite, an edit,
// the suite passing, an install through the filtered network to a loopback
// stand-in registry after approval, a commit; a push the approver declines
// and a delete the rules deny. Every step's decision, exit and output, and
// the audit log (it verifies, one decision per step), are checked.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const cordon = require('..');

const fixture = process.env.CORDON_AGENT_SESSION || path.join(__dirname, '../../../tests/agent_session');
const session = require(path.join(fixture, 'session.js'));

test('the scripted agent session', async () => {
  const { scenario } = session;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-session-'));
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  const registry = await session.startRegistry();
  try {
    session.prepareWorkspace(workspace);
    const policy = session.policyFor(cordon.profileJson('workspace-write'), registry.port);
    const rules = new cordon.Rules(scenario.rules);
    const audit = path.join(dir, 'audit.jsonl');
    for (const step of scenario.steps) {
      const command = session.commandFor(step, registry.port);
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
    session.checkAudit(verified.records.map((rec) => rec.event));
    session.checkAfter(workspace);
  } finally {
    registry.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

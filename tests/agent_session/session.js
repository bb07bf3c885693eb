'use strict';
// What the JavaScript drivers of scenario.json share (bindings/node/test/
// agent_session.test.js, tests/mcp/agent_session.test.mjs): the stand-in
// registry, the workspace and policy, and the checks after the steps.
const assert = require('node:assert/strict');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const scenario = JSON.parse(fs.readFileSync(path.join(__dirname, 'scenario.json'), 'utf8'));

// Starts the stand-in registry (a loopback HTTP server); resolves to {port, stop}.
async function startRegistry() {
  const [cmd, ...args] = scenario.server.argv.map((a) => a.replace('{fixture}', __dirname));
  const server = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stdout }).once('line', resolve);
    server.once('error', reject);
  });
  return { port: Number(line.split(scenario.server.port_after)[1].split(' ')[0]), stop: () => server.kill() };
}

// Writes the files into workspace and runs the setup there, on the host.
function prepareWorkspace(workspace) {
  for (const [name, text] of Object.entries(scenario.files)) fs.writeFileSync(path.join(workspace, name), text);
  for (const [cmd, ...args] of scenario.setup) execFileSync(cmd, args, { cwd: workspace });
}

// The workspace-write profile (its JSON text) with the scenario's network for port.
function policyFor(profileText, port) {
  const policy = JSON.parse(profileText);
  policy.network = JSON.parse(JSON.stringify(scenario.network).replaceAll('"{port}"', String(port)));
  return policy;
}

const commandFor = (step, port) => step.command.replaceAll('{port}', String(port));

// The audit events (already verified): one policy.decision per step, in
// order; one approval per approver answer; one run.completed per step that ran.
function checkAudit(events) {
  const outcomes = (name) => events.filter((e) => e.event === name).map((e) => e.outcome);
  assert.deepEqual(outcomes('policy.decision'), scenario.steps.map((s) => s.expect.decision));
  assert.deepEqual(outcomes('approval'), scenario.steps.filter((s) => s.expect.approval).map((s) => s.expect.approval));
  assert.equal(outcomes('run.completed').length, scenario.steps.filter((s) => s.expect.status === 'completed').length);
}

// The workspace's files and the repository's history after the session.
function checkAfter(workspace) {
  for (const [name, text] of Object.entries(scenario.after.file_contains)) {
    assert.ok(fs.readFileSync(path.join(workspace, name), 'utf8').includes(text), name);
  }
  const log = scenario.after.host_git_log;
  assert.equal(execFileSync(log.argv[0], log.argv.slice(1), { cwd: workspace, encoding: 'utf8' }), log.stdout);
}

module.exports = { scenario, startRegistry, prepareWorkspace, policyFor, commandFor, checkAudit, checkAfter };

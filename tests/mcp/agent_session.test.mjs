// The scripted agent session of tests/agent_session/scenario.json (issue 34,
// acceptance 1) through `cordon mcp`, driven by the official MCP TypeScript
// SDK's client: each step is a `shell` tool call; approvals are answered
// through elicitation as each step's approver says. Every step's decision,
// exit and output, and the audit log (it verifies, one decision per step),
// are checked. CORDON names the cordon binary; CORDON_AGENT_SESSION the
// fixture (default ../agent_session).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const cordon = process.env.CORDON;
assert.ok(cordon, "CORDON names the cordon binary");
const fixture = process.env.CORDON_AGENT_SESSION || path.join(path.dirname(fileURLToPath(import.meta.url)), "../agent_session");
const session = createRequire(import.meta.url)(path.join(fixture, "session.js"));

test("the scripted agent session through cordon mcp", async () => {
  const { scenario } = session;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cordon-mcp-session-"));
  const workspace = path.join(dir, "ws");
  fs.mkdirSync(workspace);
  const registry = await session.startRegistry();
  let client;
  try {
    session.prepareWorkspace(workspace);
    const profile = execFileSync(cordon, ["profile", "show", "workspace-write"], { encoding: "utf8" });
    fs.writeFileSync(path.join(dir, "policy.json"), JSON.stringify(session.policyFor(profile, registry.port)));
    fs.writeFileSync(path.join(dir, "rules.json"), JSON.stringify(scenario.rules));
    const audit = path.join(dir, "audit.jsonl");
    const transport = new StdioClientTransport({
      command: cordon,
      args: ["mcp", "--rules", path.join(dir, "rules.json"), "--policy", path.join(dir, "policy.json"),
             "--workspace", workspace, "--audit", audit, "--timeout", "60"],
      env: { ...process.env },
      stderr: "inherit",
    });
    client = new Client({ name: "cordon-session-agent", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    let current = null;
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      const answer = current.approver;
      return answer.decision === "approved"
        ? { action: "accept", content: { approve: true, scope: answer.scope } }
        : { action: "decline" };
    });
    await client.connect(transport);
    for (const step of scenario.steps) {
      current = step;
      asked.length = 0;
      const command = session.commandFor(step, registry.port);
      const r = await client.callTool({ name: "shell", arguments: { command } });
      const s = r.structuredContent;
      const { expect } = step;
      const where = `${step.name}: ${s.status} ${s.reason} ${s.stderr}`;
      assert.equal(s.decision, expect.decision, where);
      assert.equal(s.status, expect.status, where);
      assert.equal(s.exit_code, expect.exit_code, where);
      assert.equal(r.isError, expect.exit_code !== 0, where);
      for (const text of expect.stdout_contains ?? []) assert.ok((s.stdout ?? "").includes(text), `${where} stdout ${s.stdout}`);
      if (expect.approval !== undefined) {
        assert.equal(asked.length, 1, where);
        assert.ok(asked[0].includes(command.split(" ")[0]), asked[0]); // the user was shown the request
        assert.equal(s.approval.decision, expect.approval, where);
        assert.equal(s.approval.approver, "elicitation");
      } else {
        assert.equal(asked.length, 0, where);
      }
    }
    await client.close();
    client = null;
    assert.match(execFileSync(cordon, ["audit", "verify", audit], { encoding: "utf8" }), /^ok: /);
    session.checkAudit(fs.readFileSync(audit, "utf8").trim().split("\n").map((line) => JSON.parse(line).event));
    session.checkAfter(workspace);
  } finally {
    await client?.close();
    registry.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

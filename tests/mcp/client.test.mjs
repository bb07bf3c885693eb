// cordon mcp driven by the official MCP TypeScript SDK's client over stdio:
// an agent session's tool calls (explore, edit, patch, run, a denied delete,
// an approval through elicitation, a declined one), capped output and the
// timeout, and the built-in rules when no --rules is given. CORDON (the cordon
// binary) must be set; run by tests/mcp/run.sh.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const cordon = process.env.CORDON;
assert.ok(cordon, "CORDON names the cordon binary");

const rules = {
  schema_version: 1, name: "mcp test agent",
  rules: [
    { id: "inspect", reason: "inspection is harmless", decision: "allow", actions: ["shell", "process"],
      commands: ["ls", "cat", "echo", "yes", "sleep", "sh", "true", "grep", "exit"] },
    { id: "files", reason: "the workspace's files", decision: "allow", actions: ["filesystem_read", "filesystem_write"],
      paths: ["{workspace}/**", "{workspace}"] },
    { id: "touch-asks", reason: "creating files by command needs the user", decision: "require_approval", commands: ["touch"] },
    { id: "no-delete", reason: "deleting is not the agent's job", decision: "deny", commands: ["rm"] },
  ],
};

let dir, workspace, client, answers = [];
async function connect(elicits, defaultRules = false) {
  const rulesArgs = defaultRules ? [] : ["--rules", path.join(dir, "rules.json")];
  const transport = new StdioClientTransport({
    command: cordon,
    args: ["mcp", ...rulesArgs, "--workspace", workspace, "--audit", path.join(dir, "audit.jsonl"),
           "--max-output", "4096", "--timeout", "20"],
    env: { ...process.env },
    stderr: "inherit",
  });
  const c = new Client({ name: "cordon-test-agent", version: "1.0.0" }, { capabilities: elicits ? { elicitation: {} } : {} });
  if (elicits) {
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      assert.match(request.params.message, /touch/);
      return answers.shift() ?? { action: "decline" };
    });
  }
  await c.connect(transport);
  return c;
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cordon-mcp-"));
  fs.chmodSync(dir, 0o755);
  workspace = path.join(dir, "ws");
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, "app.js"), "function add(a, b) {\n  return a - b;\n}\nmodule.exports = add;\n");
  fs.writeFileSync(path.join(dir, "rules.json"), JSON.stringify(rules).replaceAll("{workspace}", workspace));
  client = await connect(true);
});

after(async () => {
  await client?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const text = (r) => r.content.map((c) => c.text).join("");

test("initialize and tools/list name the tools", async () => {
  assert.equal(client.getServerVersion().name, "cordon");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ["apply_patch", "edit", "glob", "grep", "read", "shell", "write"]);
});

test("explore: glob, grep, read through the confined worker", async () => {
  const globbed = await client.callTool({ name: "glob", arguments: { pattern: "**/*.js" } });
  assert.equal(globbed.isError, false, text(globbed));
  assert.match(text(globbed), /app\.js/);
  const grepped = await client.callTool({ name: "grep", arguments: { pattern: "return a" } });
  assert.equal(grepped.isError, false, text(grepped));
  assert.equal(grepped.structuredContent.response.result.matches[0].line, 2);
  const read = await client.callTool({ name: "read", arguments: { path: "app.js" } });
  assert.match(text(read), /return a - b/);
});

test("edit, apply_patch and write change the workspace; a path outside is refused", async () => {
  const edited = await client.callTool({ name: "edit", arguments: { path: "app.js", old_string: "a - b", new_string: "a + b" } });
  assert.equal(edited.isError, false, text(edited));
  const patched = await client.callTool({ name: "apply_patch", arguments: {
    patch: "*** Begin Patch\n*** Add File: test.sh\n+echo test-ok\n*** End Patch\n" } });
  assert.equal(patched.isError, false, text(patched));
  assert.equal(fs.readFileSync(path.join(workspace, "test.sh"), "utf8"), "echo test-ok\n");
  const outside = await client.callTool({ name: "write", arguments: { path: "/etc/cordon-mcp", content: "x" } });
  assert.equal(outside.isError, true);
  assert.equal(fs.existsSync("/etc/cordon-mcp"), false);
});

test("shell: runs confined, output and exit status come back", async () => {
  const ran = await client.callTool({ name: "shell", arguments: { command: "sh test.sh; cat app.js; echo oops >&2; exit 3" } });
  assert.equal(ran.isError, true);  // a non-zero exit
  assert.equal(ran.structuredContent.exit_code, 3);
  assert.match(ran.structuredContent.stdout, /test-ok\n[\s\S]*a \+ b/);
  assert.equal(ran.structuredContent.stderr, "oops\n");
  assert.equal(ran.structuredContent.report.outcome, "completed");
  const denied = await client.callTool({ name: "shell", arguments: { command: "ls && rm -rf ." } });
  assert.equal(denied.isError, true);
  assert.equal(denied.structuredContent.status, "denied");
  assert.match(text(denied), /do not retry/);
  assert.ok(fs.existsSync(path.join(workspace, "app.js")));
  const writeEtc = await client.callTool({ name: "shell", arguments: { command: "echo x > /etc/cordon-mcp-shell" } });
  assert.notEqual(writeEtc.structuredContent.exit_code, 0);
  assert.equal(fs.existsSync("/etc/cordon-mcp-shell"), false);
});

test("approval through elicitation: accepted runs, declined does not", async () => {
  answers = [{ action: "accept", content: { approve: true, scope: "once" } }, { action: "decline" }];
  const made = await client.callTool({ name: "shell", arguments: { command: "touch made.txt" } });
  assert.equal(made.isError, false, text(made));
  assert.equal(made.structuredContent.approval.approver, "elicitation");
  assert.ok(fs.existsSync(path.join(workspace, "made.txt")));
  const declined = await client.callTool({ name: "shell", arguments: { command: "touch other.txt" } });
  assert.equal(declined.structuredContent.status, "denied");
  assert.equal(fs.existsSync(path.join(workspace, "other.txt")), false);
});

test("without elicitation and without an approver, an approval is refused", async () => {
  const plain = await connect(false);
  try {
    const r = await plain.callTool({ name: "shell", arguments: { command: "touch third.txt" } });
    assert.equal(r.structuredContent.status, "denied");
    assert.match(text(r), /no elicitation/);
  } finally {
    await plain.close();
  }
});

test("without --rules, the default rules for coding agents judge the calls", async () => {
  const agent = await connect(false, true);
  try {
    const listed = await agent.callTool({ name: "shell", arguments: { command: "ls > listing.txt" } });
    assert.equal(listed.isError, false, text(listed));
    assert.ok(fs.existsSync(path.join(workspace, "listing.txt")));
    const removed = await agent.callTool({ name: "shell", arguments: { command: "rm -rf ." } });
    assert.equal(removed.structuredContent.status, "denied");
    assert.match(text(removed), /delete files one by one/);
    assert.ok(fs.existsSync(path.join(workspace, "app.js")));
    const install = await agent.callTool({ name: "shell", arguments: { command: "npm install left-pad" } });
    assert.equal(install.structuredContent.status, "denied");
    assert.match(text(install), /no elicitation/);
    // What the sandbox refused is a line of the text, so that a model does not retry it.
    const connect = await agent.callTool({ name: "shell", arguments: {
      command: "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)\"" } });
    assert.equal(connect.isError, true);
    assert.match(text(connect), /\[cordon\] blocked by the sandbox: network_connect 192\.0\.2\.1:80 \(x1\)/);
    // The same line, from the same function as the library's and the bindings' tool-use call.
    assert.match(connect.structuredContent.sandbox_notes[0], /^\[cordon\] blocked by the sandbox: network_connect 192\.0\.2\.1:80 \(x1\)/);
    const outside = await agent.callTool({ name: "write", arguments: { path: "/etc/cordon-mcp-default", content: "x" } });
    assert.equal(outside.isError, true);
    assert.equal(fs.existsSync("/etc/cordon-mcp-default"), false);
  } finally {
    await agent.close();
    fs.rmSync(path.join(workspace, "listing.txt"), { force: true });
  }
});

test("endless output is capped and the timeout is exit 124", async () => {
  const r = await client.callTool({ name: "shell", arguments: { command: "yes", timeout_ms: 1000 } });
  assert.equal(r.structuredContent.exit_code, 124);
  assert.equal(r.structuredContent.stdout.length, 4096);
  assert.ok(r.structuredContent.stdout_dropped > 0);
  assert.match(text(r), /bytes dropped/);
  assert.match(text(r), /timed out/);
});

test("the audit log verifies", async () => {
  const { execFileSync } = await import("node:child_process");
  const out = execFileSync(cordon, ["audit", "verify", path.join(dir, "audit.jsonl")], { encoding: "utf8" });
  assert.match(out, /^ok: /);
});

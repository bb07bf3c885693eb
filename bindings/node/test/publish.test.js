'use strict';
// The publish option (cordon run --publish; docs/network.md, "Published ports"):
// the host reaches a server the command starts, the report counts the relay.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { test, before, after } = require('node:test');

const cordon = require('..');

let available = false;
let skipReason = '';
let workspace;

before(() => {
  const caps = cordon.probe();
  available = caps.available;
  skipReason = `the Linux backend is not available on this host: ${caps.facts.join('; ')}`;
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-publish-'));
});

after(() => fs.rmSync(workspace, { recursive: true, force: true }));

// Listens on 127.0.0.1:8000 inside, says "ready", answers one connection
// with "pong " and what it read, then exits.
const SERVER = [
  'import socket',
  's = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)',
  "s.bind(('127.0.0.1', 8000)); s.listen(4)",
  "print('ready', flush=True)",
  "c, _ = s.accept(); data = b''",
  'while True:',
  '    chunk = c.recv(4096)',
  '    if not chunk: break',
  '    data += chunk',
  "c.sendall(b'pong ' + data); c.close()",
].join('\n');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function ask(port, data) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const c = net.connect(port, '127.0.0.1', () => c.end(data));
    c.on('data', (d) => chunks.push(d));
    c.on('end', () => resolve(Buffer.concat(chunks).toString()));
    c.on('error', reject);
  });
}

test('publish relays the host port to the server inside', async (t) => {
  if (!available) return t.skip(skipReason);
  const hostPort = await freePort();
  const run = cordon.start('workspace-write', ['/usr/bin/python3', '-c', SERVER],
    { cwd: workspace, timeout: 60, publish: [`${hostPort}:8000`] });
  const line = await new Promise((resolve) => {
    let text = '';
    run.stdout.on('data', (d) => {
      text += d.toString();
      if (text.includes('\n')) resolve(text);
    });
    run.stdout.on('end', () => resolve(text));
  });
  assert.equal(line, 'ready\n');
  assert.equal(await ask(hostPort, 'ping'), 'pong ping');
  const r = await run.wait();
  assert.equal(r.exitCode, 0, r.stderr.toString());
  assert.equal(r.report.published_ports.length, 1);
  const relay = r.report.published_ports[0];
  assert.deepEqual([relay.port, relay.host_port, relay.host_address, relay.accepted, relay.bytes_in, relay.bytes_out],
    [8000, hostPort, '127.0.0.1', 1, 4, 9]);
});

test('publish spellings: a bad one and a Plan are refused', () => {
  assert.throws(() => cordon.start('workspace-write', ['/bin/true'], { cwd: workspace, publish: [':80'] }),
    /HOSTPORT:PORT/);
  assert.throws(() => cordon.start(cordon.compile('workspace-write', { workspace }), ['/bin/true'],
    { publish: [8000] }), /Plan/);
});

'use strict';
// Where the package looks for cordon.node, the N-API addon (docs/node.md,
// "Install"), first match wins:
//   1. $CORDON_NODE_ADDON, the path of cordon.node;
//   2. $CORDON_BUILD_DIR/bindings/node/cordon.node (a cordon build tree);
//   3. the build tree of the checkout this package sits in (../../build);
//   4. <prefix>/lib/cordon/cordon.node (and lib/<multiarch>/cordon/) of the
//      installation whose `cordon` is on PATH (`cmake --install --prefix`);
//   5. the same under /usr/local and /usr (an installed cordon).
// The installed addon loads libcordon_c.so.1 from the directory above its
// own (its run path), and the library finds cordon-supervisor in
// <prefix>/libexec/cordon: no variable is needed.

const fs = require('node:fs');
const path = require('node:path');

const MULTIARCH = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch] || '';

function underPrefix(prefix) {
  const out = [path.join(prefix, 'lib', 'cordon', 'cordon.node')];
  if (MULTIARCH) out.push(path.join(prefix, 'lib', MULTIARCH, 'cordon', 'cordon.node'));
  return out;
}

function prefixesOnPath() {
  const out = [];
  for (const dir of (process.env.PATH || '').split(':')) {
    if (!dir) continue;
    const cli = path.join(dir, 'cordon');
    try {
      fs.accessSync(cli, fs.constants.X_OK);
    } catch {
      continue;
    }
    out.push(path.dirname(path.dirname(fs.realpathSync(cli))));
  }
  return out;
}

function addonCandidates() {
  const candidates = [];
  if (process.env.CORDON_NODE_ADDON) candidates.push(process.env.CORDON_NODE_ADDON);
  if (process.env.CORDON_BUILD_DIR) candidates.push(path.join(process.env.CORDON_BUILD_DIR, 'bindings/node/cordon.node'));
  candidates.push(path.join(__dirname, '../../build/bindings/node/cordon.node'));
  for (const prefix of [...prefixesOnPath(), '/usr/local', '/usr']) candidates.push(...underPrefix(prefix));
  return [...new Set(candidates)];
}

module.exports = { addonCandidates };

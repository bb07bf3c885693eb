#!/usr/bin/env bash
# tests/mcp/run.sh CORDON [SCRATCH]: installs the official MCP client library
# (package.json) into a scratch copy of this directory, never into the tree,
# and runs client.test.mjs and agent_session.test.mjs (the scripted session of
# tests/agent_session/) against the cordon binary CORDON.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cordon="$(realpath "${1:?usage: run.sh CORDON [SCRATCH]}")"
scratch="${2:-$(mktemp -d /tmp/cordon-mcp-client-XXXXXX)}"
mkdir -p "$scratch"
cp "$here/package.json" "$here/client.test.mjs" "$here/agent_session.test.mjs" "$scratch/"
cd "$scratch"
[ -d node_modules/@modelcontextprotocol/sdk ] || npm install --no-audit --no-fund --loglevel=error
CORDON="$cordon" CORDON_AGENT_SESSION="$here/../agent_session" node --test client.test.mjs agent_session.test.mjs

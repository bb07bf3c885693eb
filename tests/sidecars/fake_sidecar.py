# A JSON-RPC sidecar for the tests of `cordon sidecar` (tests/sidecars/).
# Usage: fake_sidecar.py MODE [MARKER]; MARKER only names the process.
#   echo        answers initialize, then echoes each request's params (mcp)
#   junk        the same, with a banner and stray lines on stdout (mcp)
#   noinit      reads everything, answers nothing
#   ignoreterm  answers initialize, then ignores SIGTERM and stdin's end
#   lsp-echo    echo with Content-Length frames, and junk between them
#   flood       answers initialize, then writes notifications without end (mcp)
#   burst       echo, but each later request first gets 3000 notifications of 1 KB (mcp)
import json
import signal
import sys
import time

mode = sys.argv[1]
out = sys.stdout.buffer


def answer(message):
    return {"jsonrpc": "2.0", "id": message["id"],
            "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "fake"}}
            if message.get("method") == "initialize" else message.get("params")}


def send_line(obj):
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def send_lsp(obj):
    body = json.dumps(obj).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


if mode == "ignoreterm":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "junk":
    out.write(b"fake sidecar 1.0 starting (a banner on stdout)\n")
    out.flush()

if mode == "lsp-echo":
    stream = sys.stdin.buffer
    out.write(b"lsp banner that is not a frame\n")
    out.flush()
    while True:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            c = stream.read(1)
            if not c:
                sys.exit(0)
            header += c
        length = int(header.split(b":")[1].split(b"\r\n")[0])
        message = json.loads(stream.read(length))
        if "id" in message:
            send_lsp(answer(message))
            out.write(b"stray debug output\n")
            out.flush()

count = 0
for line in sys.stdin.buffer:
    message = json.loads(line)
    if "id" not in message or mode == "noinit":
        continue
    if mode == "burst" and message.get("method") != "initialize":
        for n in range(3000):
            send_line({"jsonrpc": "2.0", "method": "progress", "params": {"n": n, "pad": "x" * 1000}})
    send_line(answer(message))
    count += 1
    if mode == "flood":
        while True:
            send_line({"jsonrpc": "2.0", "method": "progress", "params": {"pad": "x" * 1000}})
    if mode == "junk" and count % 10 == 0:
        out.write(b"debug: handled %d requests\n" % count)
        out.flush()

if mode == "ignoreterm":
    while True:
        time.sleep(1)

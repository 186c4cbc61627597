"""A tiny language server for the sandbox tests: it speaks LSP over stdio and, when asked for
a hover, tries to write a file into its working folder (the workspace), to write into its cache
folder, and to connect to 127.0.0.1 on the port given as its first argument; the hover's text
says how each attempt went."""

import json
import os
import socket
import sys


def read_message():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return json.loads(sys.stdin.buffer.read(length))


def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def attempt(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return "refused (%s)" % (error.strerror or error)


def write_workspace():
    with open(os.path.join(os.getcwd(), "written-by-server.txt"), "w") as out:
        out.write("the sandbox let me write here\n")


def write_cache():
    with open(os.path.join(os.environ["XDG_CACHE_HOME"], "probe-cache"), "w") as out:
        out.write("cached\n")


def connect():
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as conn:
        conn.sendall(b"hello from the language server\n")


while True:
    message = read_message()
    method = message.get("method")
    ident = message.get("id")
    if method == "initialize":
        capabilities = {"hoverProvider": True, "textDocumentSync": 1}
        send({"jsonrpc": "2.0", "id": ident, "result": {"capabilities": capabilities}})
    elif method == "textDocument/didOpen":
        uri = message["params"]["textDocument"]["uri"]
        params = {"uri": uri, "diagnostics": []}
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
    elif method == "textDocument/hover":
        report = "workspace write: %s\n\ncache write: %s\n\nconnect: %s" % (
            attempt(write_workspace),
            attempt(write_cache),
            attempt(connect),
        )
        result = {"contents": {"kind": "markdown", "value": report}}
        send({"jsonrpc": "2.0", "id": ident, "result": result})
    elif method == "exit":
        sys.exit(0)
    elif ident is not None and method is not None:
        send({"jsonrpc": "2.0", "id": ident, "result": None})

"""Calls waiting on a person, at once, over MCP's Streamable HTTP transport.

    python tools/bench_waiting.py                    # askq, 1,000 calls
    python tools/bench_waiting.py --calls 200        # fewer
    python tools/bench_waiting.py --sdk              # and the official Python SDK's server beside it
    python tools/bench_waiting.py --check            # exit 1 unless every call was held and completed
    python tools/bench_waiting.py --store PATH       # askq with its asks in a store

Each call is one MCP session (initialize, then a ``tools/call`` of the example)
whose form arrives on the call's event stream and is left unanswered.  Once
every call waits, the server's memory is read (VmRSS in /proc), and
``tools/list`` is sent for a while on another keep-alive connection.  Then
every form is answered, each on a connection of its own, and every stream
must end with the call's result.  Reported: calls held (their form
arrived), completed (their result arrived), RSS per waiting call (RSS while
all wait, less RSS before the first session), and ``tools/list`` per second
meanwhile.  Only loopback is reached; every wait is bounded.

The peer with ``--sdk`` is the ``mcp`` package's own server (``MCPServer``, or
``FastMCP`` before 2.0) with one tool that elicits, on uvicorn, started from a
throw-away virtual environment made for the run (pip must reach its index).
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERSION = "2025-11-25"
WAIT_SECONDS = 30.0  # the longest any one step may take before it counts as failed
LIST_SECONDS = 3.0

SDK_SERVER = r'''
import sys
from pydantic import BaseModel
try:
    from mcp.server.mcpserver import MCPServer as Server, Context
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server, Context

server = Server("peer", host="127.0.0.1", port=int(sys.argv[1])) if "FastMCP" in Server.__name__ else Server("peer")

class Choice(BaseModel):
    database: str

@server.tool()
async def ask_questions(questions: list, ctx: Context) -> str:
    answer = await ctx.elicit(message="Which database?", schema=Choice)
    return f"{answer.action}: {getattr(answer, 'data', None)}"

if "FastMCP" in Server.__name__:
    server.settings.port = int(sys.argv[1])
    server.run(transport="streamable-http")
else:
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
'''


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def tree_rss_kb(pid: int) -> int:
    """The server's RSS, with its children's (uvicorn may run workers)."""
    total = rss_kb(pid)
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as listing:
            children = listing.read().split()
    except OSError:
        children = []
    return total + sum(tree_rss_kb(int(child)) for child in children)


class Client:
    """One MCP session over HTTP, its call left waiting on its form."""

    def __init__(self, port: int, token: Optional[str], arguments: Any) -> None:
        self.port, self.token, self.arguments = port, token, arguments
        self.session: Optional[str] = None
        self.form_id: Any = None
        self.stream: Any = None
        self.held = threading.Event()
        self.result: Optional[Dict[str, Any]] = None
        self.error: Optional[str] = None

    def headers(self) -> Dict[str, str]:
        found = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.token:
            found["Authorization"] = f"Bearer {self.token}"
        if self.session:
            found["Mcp-Session-Id"] = self.session
            found["MCP-Protocol-Version"] = VERSION
        return found

    def post(self, message: Dict[str, Any], keep: bool = False) -> Any:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT_SECONDS)
        connection.request("POST", "/mcp", json.dumps(message), self.headers())
        response = connection.getresponse()
        if keep:
            return response
        body = response.read()
        connection.close()
        if response.getheader("Mcp-Session-Id"):
            self.session = response.getheader("Mcp-Session-Id")
        return first_message(body, response.getheader("Content-Type", ""))

    def open(self) -> None:
        step = "initialize"
        try:
            self.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "bench", "version": "1"}}})
            step = "notifications/initialized"
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
            step = "tools/call"
            self.stream = self.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "ask_questions", "arguments": self.arguments}}, keep=True)
            for message in events(self.stream):
                if message.get("method") == "elicitation/create":
                    self.form_id = message["id"]
                    self.held.set()
                    return
            self.error = "the stream ended without a form"
        except (OSError, http.client.HTTPException, ValueError) as err:
            self.error = f"{step}: {type(err).__name__}: {err}"
        self.held.set()

    def answer(self, content: Dict[str, Any]) -> None:
        try:
            self.post({"jsonrpc": "2.0", "id": self.form_id, "result": {"action": "accept", "content": content}})
            for message in events(self.stream):
                if message.get("id") == 2:
                    self.result = message
                    return
            self.error = "the stream ended without the call's result"
        except (OSError, http.client.HTTPException, ValueError) as err:
            self.error = f"{type(err).__name__}: {err}"


def first_message(body: bytes, content_type: str) -> Any:
    if not body:
        return None
    if content_type.startswith("text/event-stream"):
        for line in body.decode().splitlines():
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:])
        return None
    return json.loads(body)


def events(response: Any) -> Any:
    """The messages of an event stream, as they arrive."""
    data: List[str] = []
    while True:
        line = response.readline()
        if not line:
            return
        text = line.decode("utf-8").rstrip("\r\n")
        if text.startswith("data:"):
            data.append(text[5:].strip())
        elif not text and data:
            joined, data = "".join(data), []
            if joined:
                yield json.loads(joined)


def lists_per_second(port: int, token: Optional[str], session: Optional[str]) -> float:
    """tools/list on one keep-alive connection of its own, for a while."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if session:
        headers.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": VERSION})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_SECONDS)
    done, started = 0, time.monotonic()
    while time.monotonic() - started < LIST_SECONDS:
        connection.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}), headers)
        body = connection.getresponse().read()
        if b"ask_questions" not in body:
            raise RuntimeError(f"tools/list failed: {body[:200]!r}")
        done += 1
    connection.close()
    return done / (time.monotonic() - started)


def wait_for_port(port: int, process: Any) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not listen")


def run(command: List[str], port: int, calls: int, token: Optional[str], content: Any, arguments: Any) -> Dict[str, Any]:
    with tempfile.TemporaryFile() as log:  # a pipe nobody reads would fill, and stop the server's logging threads
        return run_logged(command, port, calls, token, content, arguments, log)


def run_logged(command: List[str], port: int, calls: int, token: Optional[str], content: Any, arguments: Any,
               log: Any) -> Dict[str, Any]:
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_for_port(port, process)
        time.sleep(0.5)
        before = tree_rss_kb(process.pid)
        clients = [Client(port, token, arguments) for _ in range(calls)]
        threads = [threading.Thread(target=client.open, daemon=True) for client in clients]
        for thread in threads:
            thread.start()
        for client in clients:
            client.held.wait(WAIT_SECONDS)
        held = sum(1 for client in clients if client.form_id is not None)
        time.sleep(0.5)
        waiting = tree_rss_kb(process.pid)
        rate = lists_per_second(port, token, next((c.session for c in clients if c.session), None))
        answering = [threading.Thread(target=client.answer, args=(content(client),), daemon=True)
                     for client in clients if client.form_id is not None]
        for thread in answering:
            thread.start()
        for thread in answering:
            thread.join(WAIT_SECONDS)
        completed = sum(1 for client in clients if client.result is not None and "result" in client.result)
        errors = sorted({client.error for client in clients if client.error})
        return {"calls": calls, "held": held, "completed": completed, "rss_before_kb": before,
                "rss_waiting_kb": waiting, "kb_per_waiting_call": (waiting - before) / max(held, 1),
                "tools_list_per_second": rate, "errors": errors[:5]}
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.seek(0)
        if b"Traceback" in log.read():
            raise RuntimeError("the server wrote a traceback")


def askq_run(calls: int, store: Optional[str]) -> Dict[str, Any]:
    port = free_port()
    with open(os.path.join(HERE, "example_args.json"), encoding="utf-8") as stream:
        arguments = json.load(stream)
    command = [sys.executable, os.path.join(HERE, "askq.py"), "serve", "--http", "--port", str(port),
               "--token", "bench"] + (["--store", store] if store else [])
    sys.path.insert(0, HERE)
    import askq

    form = askq.to_elicitation(askq.ask(arguments), protocol_version=VERSION)
    content = accept_content(form["requestedSchema"])
    return run(command, port, calls, "bench", lambda client: content, arguments)


def accept_content(schema: Dict[str, Any]) -> Dict[str, Any]:
    """A whole answer to the form: each required field's first choice."""
    content: Dict[str, Any] = {}
    for key in schema.get("required", []):
        prop = schema["properties"][key]
        if prop.get("type") == "array":
            items = prop["items"]
            first = (items.get("anyOf") or items.get("oneOf") or [{}])[0].get("const") or items.get("enum", [""])[0]
            content[key] = [first]
        elif "oneOf" in prop:
            content[key] = prop["oneOf"][0]["const"]
        elif "enum" in prop:
            content[key] = prop["enum"][0]
        elif prop.get("type") in ("number", "integer"):
            content[key] = prop.get("default", prop.get("minimum", 1))
        else:
            content[key] = "an answer"
    return content


def sdk_run(calls: int) -> Dict[str, Any]:
    venv = tempfile.mkdtemp(prefix="askq-sdk-peer-")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "mcp", "uvicorn"],
                   check=True)
    script = os.path.join(venv, "peer.py")
    with open(script, "w", encoding="utf-8") as stream:
        stream.write(SDK_SERVER)
    version = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    port = free_port()
    figures = run([python, script, str(port)], port, calls, None, lambda client: {"database": "SQLite"},
                  {"questions": ["Which database?"]})
    figures["server"] = f"mcp {version}"
    return figures


def report(name: str, figures: Dict[str, Any]) -> str:
    return (f"{name:<24} held {figures['held']:>5} of {figures['calls']}, completed {figures['completed']:>5},"
            f" {figures['kb_per_waiting_call']:6.1f} KB per waiting call (RSS {figures['rss_before_kb'] / 1024:.1f}"
            f" -> {figures['rss_waiting_kb'] / 1024:.1f} MB), tools/list {figures['tools_list_per_second']:7.0f}/s"
            f" meanwhile" + (f"; errors: {figures['errors']}" if figures["errors"] else ""))


def main(argv: List[str]) -> int:
    calls = int(argv[argv.index("--calls") + 1]) if "--calls" in argv else 1000
    store = argv[argv.index("--store") + 1] if "--store" in argv else None
    askq_figures = askq_run(calls, store)
    print(report("askq" + (" --store" if store else ""), askq_figures), flush=True)
    if "--sdk" in argv:
        sdk = sdk_run(calls)
        print(report(sdk["server"], sdk), flush=True)
    if "--json" in argv:
        print(json.dumps(askq_figures))
    ok = askq_figures["held"] == askq_figures["completed"] == calls and askq_figures["kb_per_waiting_call"] <= 50
    return 0 if ok or "--check" not in argv else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Calls waiting on a person, at once, over MCP's Streamable HTTP transport.

    python tools/bench_waiting.py                    # askq, 1,000 calls
    python tools/bench_waiting.py --calls 200        # fewer
    python tools/bench_waiting.py --calls 1000,5000,10000 --sdk   # each level, askq and the SDK's server
    python tools/bench_waiting.py --rate 400         # new sessions a second (the default), 0: all at once
    python tools/bench_waiting.py --check            # exit 1 unless every call was held and completed, ...
    python tools/bench_waiting.py --check --kb 14    # ... with another bound on memory per waiting call
    python tools/bench_waiting.py --store PATH       # askq with its asks in a store

Each call is one MCP session (initialize, then a ``tools/call`` of the example)
whose form arrives on the call's event stream and is left unanswered.  The
sessions arrive in a burst, ``--rate`` new ones a second.  Once every call
waits, the server's memory is read (VmRSS in /proc), and ``tools/list`` is
sent for a while on another keep-alive connection.  Then every form is
answered, each on a connection of its own, and every stream must end with
the call's result.  Reported: calls held (their form arrived), completed
(their result arrived), RSS per waiting call (RSS while all wait, less RSS
before the first session), and ``tools/list`` per second meanwhile.  Only
loopback is reached; every wait is bounded.  The open-files limit is raised
to its hard limit, for the streams of both ends.

``--check`` asks, at every level: every call held and completed, within
6 KB per waiting call, and, with ``--sdk``, ``tools/list`` meanwhile at no
less than 1.5 times the SDK's server's rate.

The peer with ``--sdk`` is the ``mcp`` package's own server (``MCPServer``, or
``FastMCP`` before 2.0) with one tool that elicits, on uvicorn, started from a
throw-away virtual environment made once for the run (pip must reach its index).
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
ANSWERERS = 64  # forms answered at once: each on a connection of its own, beside the streams still open
MOST_KB_PER_CALL = 6.0
LEAST_LIST_RATIO = 1.5  # askq's tools/list rate meanwhile, at least this many times the SDK's server's

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


def run(command: List[str], port: int, calls: int, rate: float, token: Optional[str], content: Any,
        arguments: Any, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    with tempfile.TemporaryFile() as log:  # a pipe nobody reads would fill, and stop the server's logging threads
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env)
        try:
            return run_on(process, port, calls, rate, token, content, arguments)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
            log.seek(0)
            if b"Traceback" in log.read():
                raise RuntimeError("the server wrote a traceback")


def arrive(clients: List[Client], rate: float) -> None:
    """Each client opens its session and call, ``rate`` new ones a second (all at once for 0)."""
    started = time.monotonic()
    for index, client in enumerate(clients):
        if rate > 0:
            time.sleep(max(0.0, started + index / rate - time.monotonic()))
        threading.Thread(target=client.open, daemon=True).start()


def answer_all(clients: List[Client], content: Any) -> None:
    """Every held form answered, a few at a time, each result read from its stream."""
    queue = [client for client in clients if client.form_id is not None]
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not queue:
                    return
                client = queue.pop()
            client.answer(content(client))

    workers = [threading.Thread(target=work, daemon=True) for _ in range(ANSWERERS)]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + WAIT_SECONDS + len(queue) / 100
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))


def run_on(process: Any, port: int, calls: int, rate: float, token: Optional[str], content: Any,
           arguments: Any) -> Dict[str, Any]:
    wait_for_port(port, process)
    time.sleep(0.5)
    before = tree_rss_kb(process.pid)
    clients = [Client(port, token, arguments) for _ in range(calls)]
    arrived = time.monotonic()
    arrive(clients, rate)
    arrival = time.monotonic() - arrived
    for client in clients:
        client.held.wait(max(0.1, arrived + arrival + WAIT_SECONDS - time.monotonic()))
    held = sum(1 for client in clients if client.form_id is not None)
    time.sleep(1.0)
    waiting = tree_rss_kb(process.pid)
    rate_seen = lists_per_second(port, token, next((c.session for c in clients if c.session), None))
    answer_all(clients, content)
    completed = sum(1 for client in clients if client.result is not None and "result" in client.result)
    errors = sorted({client.error for client in clients if client.error})
    return {"calls": calls, "held": held, "completed": completed, "rss_before_kb": before,
            "rss_waiting_kb": waiting, "kb_per_waiting_call": (waiting - before) / max(held, 1),
            "tools_list_per_second": rate_seen, "arrival_per_second": calls / max(arrival, 1e-9),
            "errors": errors[:5]}


def askq_run(calls: int, rate: float, store: Optional[str]) -> Dict[str, Any]:
    port = free_port()
    with open(os.path.join(HERE, "example_args.json"), encoding="utf-8") as stream:
        arguments = json.load(stream)
    command = [sys.executable, os.path.join(HERE, "askq.py"), "serve", "--http", "--port", str(port),
               "--token", "bench"] + (["--store", store] if store else [])
    sys.path.insert(0, HERE)
    import askq

    form = askq.to_elicitation(askq.ask(arguments), protocol_version=VERSION)
    content = accept_content(form["requestedSchema"])
    env = dict(os.environ) if store else dict(os.environ, ASKQ_STORE="memory")  # asks in memory unless --store
    return run(command, port, calls, rate, "bench", lambda client: content, arguments, env)


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


def sdk_peer() -> List[str]:
    """The SDK's server, in a virtual environment made for this run: its command."""
    venv = tempfile.mkdtemp(prefix="askq-sdk-peer-")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "mcp", "uvicorn"],
                   check=True)
    script = os.path.join(venv, "peer.py")
    with open(script, "w", encoding="utf-8") as stream:
        stream.write(SDK_SERVER)
    return [python, script]


def sdk_run(peer: List[str], calls: int, rate: float) -> Dict[str, Any]:
    version = subprocess.run([peer[0], "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    port = free_port()
    figures = run([*peer, str(port)], port, calls, rate, None, lambda client: {"database": "SQLite"},
                  {"questions": ["Which database?"]})
    figures["server"] = f"mcp {version}"
    return figures


def report(name: str, figures: Dict[str, Any]) -> str:
    return (f"{name:<24} held {figures['held']:>5} of {figures['calls']}, completed {figures['completed']:>5},"
            f" {figures['kb_per_waiting_call']:6.1f} KB per waiting call (RSS {figures['rss_before_kb'] / 1024:.1f}"
            f" -> {figures['rss_waiting_kb'] / 1024:.1f} MB), tools/list {figures['tools_list_per_second']:7.0f}/s"
            f" meanwhile, {figures['arrival_per_second']:4.0f} sessions/s arriving"
            + (f"; errors: {figures['errors']}" if figures["errors"] else ""))


def passes(figures: Dict[str, Any], peer: Optional[Dict[str, Any]], most_kb: float) -> bool:
    """Every call held and completed, within the memory bound, and, beside the SDK's server, faster at tools/list."""
    whole = figures["held"] == figures["completed"] == figures["calls"]
    faster = peer is None or figures["tools_list_per_second"] >= LEAST_LIST_RATIO * peer["tools_list_per_second"]
    return whole and figures["kb_per_waiting_call"] <= most_kb and faster


def open_files() -> None:
    """As many open files as the system allows this user: each waiting call holds a socket at both ends."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv: List[str]) -> int:
    levels = [int(level) for level in (argv[argv.index("--calls") + 1] if "--calls" in argv else "1000").split(",")]
    rate = float(argv[argv.index("--rate") + 1]) if "--rate" in argv else 400.0
    store = argv[argv.index("--store") + 1] if "--store" in argv else None
    most_kb = float(argv[argv.index("--kb") + 1]) if "--kb" in argv else MOST_KB_PER_CALL
    open_files()
    threading.stack_size(512 * 1024)  # ten thousand clients' threads, each waiting on one stream
    peer = sdk_peer() if "--sdk" in argv else None
    ok = True
    for calls in levels:
        askq_figures = askq_run(calls, rate, store)
        print(report("askq" + (" --store" if store else ""), askq_figures), flush=True)
        sdk = sdk_run(peer, calls, rate) if peer is not None else None
        if sdk is not None:
            print(report(sdk["server"], sdk), flush=True)
        if "--json" in argv:
            print(json.dumps({"askq": askq_figures, "sdk": sdk}))
        ok = passes(askq_figures, sdk, most_kb) and ok
    return 0 if ok or "--check" not in argv else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

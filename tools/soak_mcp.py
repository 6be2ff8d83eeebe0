"""Soak test for askq's MCP server: ``python askq.py serve`` over stdio.

    python tools/soak_mcp.py                      # 10,000 mixed lines, fixed seed
    python tools/soak_mcp.py --quick              # a few hundred lines (for the test suite)
    python tools/soak_mcp.py --lines 50000 --seed 7 --askq path/to/askq.py [--json]
    python tools/soak_mcp.py --http [--quick]    # the same mix over serve --http (see its section)

It starts the server as a child process and sends it a deterministic mix of
lines: every method of both protocol eras (the handshake versions 2024-11-05,
2025-03-26, 2025-06-18 and 2025-11-25: initialize, notifications/initialized,
ping, tools/list, tools/call, logging/setLevel with valid and invalid levels;
2026-07-28: server/discover and requests with their own ``_meta`` envelope,
tools/call answered with input requests and retried with ``inputResponses``);
notifications; malformed JSON; JSON that is no object; batches; odd ids
(1e400, 1.5, true, null, {}, [], long strings, negative and big integers);
1 MB, 1.5 MB and 3 MB lines; deep nesting; invalid UTF-8; hostile tool
arguments; unknown methods; and clients with forms that get
``elicitation/create`` during tools/call and answer it with garbage, an
error, accept, decline or cancel, or never (then cancel the call).

Every line is followed by a ``ping`` (a fence): the server is single-threaded
and answers in order, so every response written before the fence's belongs
to the lines sent before it.  For every line it checks, after SPEC 9:

- a request (id a string or an integer) is answered exactly once, with its id;
- a request whose id is neither is answered -32600 with id null; text that is
  not JSON -32700 with id null; an unknown method -32601; a notification,
  or a response the client sends, gets no response;
- every line the server writes is strict JSON (no NaN, Infinity, 1e400,
  duplicate keys), and a JSON-RPC 2.0 object;
- the results say what SPEC 9 says: the protocol version echoed, results of
  2026-07-28 with ``resultType`` (lists with ``ttlMs`` and ``cacheScope``),
  -32022 with the supported versions, an ``outputSchema`` and
  ``structuredContent`` from 2025-06-18 on, -32602 for a bad log level, no
  form under a version without elicitation, forms in the vocabulary of their
  version whose text fields have identifier keys (optional ones with
  ``"default": ""``), a client's elicitation error quoted in words other
  than unavailable_text(), no -32603 ever;
- the server stays alive to the end and exits 0 at the end of input (also
  with a call still waiting for its form); its VmRSS (/proc/PID/status) is
  sampled every 1,000 lines.

It reports counts per category, time per line, memory, and the violations
(every kind with its count, the first 20 with the line sent and the
response).  Exit status: 0 without violations, 1 with, 2 on bad usage.
Standard library only, Python 3.8+; it stops by itself (10 s per exchange,
``--max-seconds`` in all).
"""

import argparse
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import askq  # the versions askq speaks and what each brings: its one table, not a copy

HANDSHAKE_VERSIONS = tuple(protocol.name for protocol in askq._PROTOCOLS if protocol.handshake)
FORM_VERSIONS = tuple(protocol.name for protocol in askq._PROTOCOLS if protocol.forms and protocol.handshake)
LATEST = askq._latest_handshake().name
STATELESS = next(protocol.name for protocol in askq._PROTOCOLS if protocol.stateless)
STRUCTURED_VERSIONS = tuple(protocol.name for protocol in askq._PROTOCOLS if protocol.structured)
LEGACY_FORM_VERSIONS = tuple(protocol.name for protocol in askq._PROTOCOLS if protocol.legacy_forms)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
TOOL = "ask_questions"
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32022
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
CLIENT_ERROR = "The form could not be drawn (soak error 4711)"
TIMEOUT = 10.0
MEMORY_EVERY = 1000
MB = 1_000_000

# What a line needs from the server.
ANSWER = "answer"  # exactly one response with its id
ID_OR_NULL = "id-or-null"  # one error response, with its id or with id null
NULL_ERROR = "null-error"  # one error response with id null
SILENT = "silent"  # no response
BATCH = "batch"  # refused as a whole (-32600, id null), or one array of responses
CANCELLED = "cancelled"  # a call the client cancelled: no response

Message = Dict[str, Any]
Problem = Tuple[str, str]  # (kind of violation, what exactly)
Check = Callable[["Soak", "Line", Message], List[Problem]]
React = Callable[["Soak", "Line", Message], List["Line"]]


class Line:
    """One line sent to the server, and what the server must do with it."""

    def __init__(self, category: str, data: bytes, expect: str, rid: Any = None, *,
                 want: str = "any", codes: Tuple[int, ...] = (), check: Optional[Check] = None,
                 odd_key: Optional[str] = None, inner: Sequence["Line"] = ()) -> None:
        self.category, self.data, self.expect, self.rid = category, data, expect, rid
        self.want, self.codes, self.check = want, codes, check  # want: "result", "error", "any"
        self.odd_key = odd_key  # an invalid id, as the server would echo it
        self.inner = list(inner)  # the entries of a batch
        self.react: Optional[React] = None  # more lines to send once it is answered
        self.call = False  # a tools/call whose form (if any) the unit answers
        self.needs_form = False  # the form must come (a client with forms, a valid call)
        self.policy: Optional[str] = None  # how its form was answered
        self.responses: List[Message] = []
        self.null: Optional[Message] = None  # a response with id null, taken as its
        self.echo: Optional[Message] = None  # a response that echoes its invalid id
        self.arrays_seen: List[List[Any]] = []  # for a batch: the arrays written

    @property
    def key(self) -> Optional[str]:
        return id_key(self.rid) if self.expect in (ANSWER, ID_OR_NULL, CANCELLED) else None


class Unit:
    """Lines sent together, then a fence; the forms the server asks for meanwhile
    are answered by ``policies``, one per form, in the order the calls were sent."""

    def __init__(self, category: str, lines: List[Line], policies: Sequence[str] = (),
                 forbid: Optional[str] = None, version: str = LATEST, controlled: bool = False,
                 hold: bool = False) -> None:
        self.category, self.lines, self.policies = category, lines, list(policies)
        self.forbid = forbid  # why a form would be a violation here, if it would
        self.version, self.controlled, self.hold = version, controlled, hold
        self.calls = [line for line in lines if line.call]
        self.forms: List[Message] = []
        self.held: List[Tuple[Message, int]] = []
        self.stray: List[Message] = []
        self.notifications: List[Message] = []
        self.fences: Dict[str, float] = {}
        self.sent_lines: List[Line] = []
        self.keyed: Dict[str, Line] = {}
        self.arrays: List[List[Any]] = []
        self.problems: List[Tuple[Problem, Optional[Line], Any]] = []


# ---------------------------------------------------------------------------
# JSON helpers


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is not a finite number")
    return value


def _unique_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("an object repeats a key")
    return dict(pairs)


def strict_loads(raw: bytes) -> Any:
    """JSON as RFC 8259 has it: UTF-8, no NaN/Infinity, finite numbers, unique keys."""
    return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant,
                      parse_float=_finite_float, object_pairs_hook=_unique_keys)


def id_key(value: Any) -> str:
    """An id as a key: 1 and "1" differ, true and 1 differ."""
    return json.dumps(value, sort_keys=True)


def encode(message: Any) -> bytes:
    """One line of JSON, raw UTF-8 where it can be (lone surrogates escaped)."""
    text = json.dumps(message, ensure_ascii=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message).encode("ascii") + b"\n"


def request(rid: Any, method: str, params: Any = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def excerpt(value: Any, limit: int = 300) -> str:
    """A short, printable form of a line sent or a message received."""
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value).rstrip(b"\n").decode("utf-8", "backslashreplace")
        size = len(value)
    else:
        text = json.dumps(value, ensure_ascii=True, default=str)
        size = len(text)
    if len(text) > limit:
        return f"{text[:limit]}... ({size} bytes)"
    return text


def forms(capabilities: Any) -> bool:
    """Whether capabilities declare form elicitation (empty, or naming form)."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    return isinstance(elicitation, dict) and (not elicitation or "form" in elicitation)


def meta(version: str, capabilities: Any) -> Message:
    return {META_VERSION: version, META_CAPABILITIES: capabilities}


# ---------------------------------------------------------------------------
# Checks of results


def error_of(message: Message) -> Optional[int]:
    error = message.get("error")
    return error.get("code") if isinstance(error, dict) else None


def text_of(result: Any) -> str:
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return ""
    return "\n".join(str(part.get("text")) for part in content if isinstance(part, dict))


def tool_result_problems(result: Any) -> List[Problem]:
    """A CallToolResult: a content list of text parts, isError a boolean."""
    if not isinstance(result, dict):
        return [("tools/call result is not an object", excerpt(result))]
    content = result.get("content")
    if not isinstance(content, list) or not content:
        return [("tools/call result without content", excerpt(result))]
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
            return [("tools/call content part is not text", excerpt(part))]
    if "isError" in result and not isinstance(result["isError"], bool):
        return [("tools/call isError is not a boolean", excerpt(result))]
    return []


# How a call ends, by how its form was answered: (isError, structured status).
OUTCOMES: Dict[str, Tuple[Optional[bool], Optional[str]]] = {
    "unavailable": (False, "unavailable"),
    "accept": (False, "answered"),
    "interleave": (False, "answered"),
    "accept_empty": (None, None),
    "decline": (False, "declined"),
    "cancel": (False, "declined"),
    "cancel_wrong_id": (False, "declined"),
    "garbage": (True, None),
    "garbage_line": (False, "declined"),
    "error": (None, "unavailable"),
    "outer_garbage": (True, None),
}


def outcome_problems(result: Message, policy: str, version: str) -> List[Problem]:
    """isError and structuredContent as the policy and the protocol version want them."""
    is_error, status = OUTCOMES.get(policy, (None, None))
    problems: List[Problem] = []
    if is_error is not None and bool(result.get("isError")) != is_error:
        problems.append((f"tools/call isError is not {str(is_error).lower()} (form answered: {policy})",
                         excerpt(text_of(result), 200)))
    if version in STRUCTURED_VERSIONS and not result.get("isError"):
        structured = result.get("structuredContent")
        if not isinstance(structured, dict):
            problems.append((f"tools/call result without structuredContent (protocol {version})",
                             f"keys: {sorted(result)}"))
        elif status is not None and structured.get("status") != status:
            problems.append(("structuredContent.status is wrong",
                             f"{structured.get('status')!r}, expected {status!r} ({policy})"))
        elif structured.get("result") != text_of(result):
            # hosts hand their model the structured part alone: it must hold the words
            problems.append(("structuredContent.result is not the result's text", excerpt(str(structured.get("result")), 200)))
    return problems


def error_reply_problems(soak: "Soak", result: Message) -> List[Problem]:
    """SPEC 9: a client's error is quoted, in words other than unavailable_text()."""
    text = text_of(result)
    problems: List[Problem] = []
    if text == soak.learned.get("unavailable"):
        problems.append(("a client's elicitation error is answered with unavailable_text()", excerpt(text, 200)))
    if CLIENT_ERROR not in text:
        problems.append(("a client's elicitation error is not quoted in the result", excerpt(text, 200)))
    return problems


def call_check(version: str, hostile: bool = False) -> Check:
    """The check of a handshake-era tools/call, once its form (if any) is answered."""
    def check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
        if "error" in message:
            return [] if hostile else [("tools/call answered with an error", excerpt(message))]
        result = message.get("result")
        problems = tool_result_problems(result)
        if problems or not isinstance(result, dict):
            return problems
        if line.needs_form and line.policy is None:
            return [(f"no elicitation/create for a client with forms (protocol {version})", "")]
        policy = line.policy or ("unavailable" if not hostile else "")
        if policy == "unavailable":
            soak.learned.setdefault("unavailable", text_of(result))
        if policy == "error":
            problems.extend(error_reply_problems(soak, result))
        if policy == "accept_empty":
            return problems
        return problems + outcome_problems(result, policy, version) if policy else problems
    return check


def initialize_check(asked: Any) -> Check:
    expected = asked if asked in HANDSHAKE_VERSIONS else LATEST

    def check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
        result = message.get("result")
        if not isinstance(result, dict):
            return [("initialize answered without a result", excerpt(message))]
        problems: List[Problem] = []
        if result.get("protocolVersion") != expected:
            problems.append(("initialize does not answer the version SPEC 9 names",
                             (f"client asked {asked!r}, server answered {result.get('protocolVersion')!r},"
                              f" expected {expected!r}")))
        info = result.get("serverInfo")
        if not isinstance(info, dict) or info.get("name") != "askq" or not isinstance(info.get("version"), str):
            problems.append(("initialize serverInfo is not askq's", excerpt(info)))
        capabilities = result.get("capabilities")
        if not isinstance(capabilities, dict) or not isinstance(capabilities.get("tools"), dict):
            problems.append(("initialize capabilities lack tools", excerpt(capabilities)))
        return problems
    return check


def tools_list_check(version: str) -> Check:
    def check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
        result = message.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list) or len(tools) != 1 or not isinstance(tools[0], dict):
            return [("tools/list does not list the one tool", excerpt(message))]
        tool = tools[0]
        problems: List[Problem] = []
        if tool.get("name") != TOOL or not isinstance(tool.get("inputSchema"), dict):
            problems.append(("tools/list tool is not ask_questions with an inputSchema", excerpt(tool)))
        if version in STRUCTURED_VERSIONS and not isinstance(tool.get("outputSchema"), dict):
            problems.append((f"tools/list tool without outputSchema (protocol {version})", f"keys: {sorted(tool)}"))
        if version == STATELESS:
            problems.extend(stateless_problems(result, "tools/list"))
        return problems
    return check


def stateless_problems(result: Any, method: str) -> List[Problem]:
    """2026-07-28: every result has resultType; lists and discover also ttlMs and cacheScope."""
    if not isinstance(result, dict):
        return [(f"{method} (2026-07-28) result is not an object", excerpt(result))]
    problems: List[Problem] = []
    if result.get("resultType") not in ("complete", "input_required"):
        problems.append((f"{method} (2026-07-28) result without resultType", f"keys: {sorted(result)}"))
    lasting = isinstance(result.get("ttlMs"), int) and result.get("cacheScope") in ("public", "private")
    if method in ("tools/list", "server/discover") and not lasting:
        problems.append((f"{method} (2026-07-28) result without ttlMs/cacheScope", f"keys: {sorted(result)}"))
    return problems


def discover_check(with_meta: bool) -> Check:
    def check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
        result = message.get("result")
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if not isinstance(versions, list) or STATELESS not in versions:
            return [("server/discover does not list 2026-07-28", excerpt(message))]
        problems: List[Problem] = []
        if not any(version in versions for version in HANDSHAKE_VERSIONS):
            problems.append(("server/discover lists no handshake version", excerpt(versions)))
        if with_meta:
            problems.extend(stateless_problems(result, "server/discover"))
        return problems
    return check


def unsupported_check(version: str) -> Check:
    def check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
        error = message.get("error")
        data = error.get("data") if isinstance(error, dict) else None
        if not isinstance(data, dict) or data.get("requested") != version:
            return [("-32022 without data.requested", excerpt(message))]
        supported = data.get("supported")
        if not isinstance(supported, list) or STATELESS not in supported:
            return [("-32022 without the supported versions", excerpt(message))]
        return []
    return check


def empty_result_check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
    if message.get("result") != {}:
        return [(f"{line.category} result is not an empty object", excerpt(message))]
    return []


# ---------------------------------------------------------------------------
# Forms: what the server asks, and what a client answers


def form_problems(params: Any, version: str, controlled: bool) -> List[Problem]:
    """ElicitRequestFormParams; for askq's own questions also SPEC 9's form rules."""
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(schema, dict) or not isinstance(properties, dict) or not properties \
            or not isinstance(params.get("message"), str):
        return [("elicitation/create params are not a form", excerpt(params))]
    if not controlled:
        return []
    required = schema.get("required") or []
    problems: List[Problem] = []
    for key, prop in properties.items():
        if not isinstance(prop, dict):
            problems.append(("form property is not an object", excerpt(prop)))
            continue
        plain = prop.get("type") == "string" and not any(k in prop for k in ("oneOf", "anyOf", "enum"))
        if plain and not IDENTIFIER.match(key):  # a question's text field, or its custom text
            problems.append(("the key of a text field of the form is not an identifier", repr(key)))
        if plain and key not in required and prop.get("default") != "":
            problems.append(("optional text field of the form without \"default\": \"\"", f"{key}: {excerpt(prop)}"))
        if version in LEGACY_FORM_VERSIONS and (prop.get("type") == "array" or "oneOf" in prop or "anyOf" in prop):
            problems.append(("form under 2025-06-18 uses the vocabulary of 2025-11-25", f"{key}: {excerpt(prop)}"))
    return problems


def choice_values(prop: Any) -> List[Any]:
    if not isinstance(prop, dict):
        return []
    for word in ("oneOf", "anyOf"):
        entries = prop.get(word)
        if isinstance(entries, list):
            return [entry.get("const") for entry in entries if isinstance(entry, dict) and "const" in entry]
    enum = prop.get("enum")
    return list(enum) if isinstance(enum, list) else []


def form_value(prop: Any, required: bool) -> Any:
    """A value a person could have entered in one field of the form."""
    kind = prop.get("type") if isinstance(prop, dict) else None
    if kind == "array":
        return choice_values(prop.get("items"))[:1]
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return 1
    values = choice_values(prop)
    if values:
        return values[0]
    return "typed answer" if required else None


def accept_content(params: Any) -> Dict[str, Any]:
    """Content that fills the form in: the first choice, or some typed text."""
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = schema.get("required") if isinstance(schema, dict) else None
    content: Dict[str, Any] = {}
    for key, prop in (properties or {}).items():
        value = form_value(prop, key in (required or []))
        if value is not None:
            content[key] = value
    return content


GARBAGE_RESULTS: List[Any] = [
    "garbage", None, {}, 42, [1, 2], {"action": "maybe"}, {"action": "ACCEPT"},
    {"action": "accept", "content": [1]}, {"action": "accept", "content": "q0=yes"},
    {"action": "accept", "content": {"no_such_field": "x"}}, {"action": "accept", "content": {"q0": 12345}},
    {"action": "accept", "content": {"q0": {"nested": ["x"]}}}, {"action": ["accept"]},
]


def elicit_result(policy: str, params: Any, rng: random.Random) -> Any:
    """What a client sends back for a form, by policy."""
    if policy in ("accept", "interleave"):
        return {"action": "accept", "content": accept_content(params)}
    if policy == "accept_empty":
        return {"action": "accept", "content": {}}
    if policy in ("decline", "cancel"):
        return {"action": policy}
    if policy in ("cancel_wrong_id", "garbage_line"):
        return {"action": "decline"}
    return rng.choice(GARBAGE_RESULTS)


# ---------------------------------------------------------------------------
# The child process


class Child:
    """The server, with a reader thread for its stdout, one draining its
    stderr, and a writer thread, so that nothing here blocks forever."""

    def __init__(self, command: List[str], cwd: str) -> None:
        self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.incoming: queue.Queue[Optional[bytes]] = queue.Queue()
        self.outgoing: queue.Queue[Optional[bytes]] = queue.Queue()
        self.stderr = bytearray()
        self.stderr_size = 0
        self.write_error: Optional[str] = None
        for target in (self._read, self._drain, self._write):
            threading.Thread(target=target, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            self.incoming.put(raw)
        self.incoming.put(None)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read(65536) if self.proc.stderr else b"", b""):
            self.stderr_size += len(chunk)
            if len(self.stderr) < 1 << 20:
                self.stderr += chunk

    def _write(self) -> None:
        assert self.proc.stdin is not None
        try:
            for data in iter(self.outgoing.get, None):
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            self.proc.stdin.close()
        except OSError as err:
            self.write_error = f"{type(err).__name__}: {err}"

    def rss(self) -> Dict[str, int]:
        """VmRSS and VmHWM in kB, where /proc has them."""
        figures: Dict[str, int] = {}
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                for row in status:
                    name, _, value = row.partition(":")
                    if name in ("VmRSS", "VmHWM"):
                        figures[name] = int(value.split()[0])
        except (OSError, ValueError):
            pass
        return figures

    def finish(self, timeout: float) -> Optional[int]:
        """End the input; the exit status, or None if it had to be killed."""
        self.outgoing.put(None)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


# ---------------------------------------------------------------------------
# The run: units of lines, each followed by a fence, judged when it is answered


class Violation:
    __slots__ = ("category", "detail", "kind", "response", "sent")

    def __init__(self, kind: str, detail: str, category: str, sent: str, response: str) -> None:
        self.kind, self.detail, self.category, self.sent, self.response = kind, detail, category, sent, response

    def as_dict(self) -> Dict[str, str]:
        return {"kind": self.kind, "detail": self.detail, "category": self.category,
                "sent": self.sent, "response": self.response}


class Soak:
    """Sends units to the child, routes what it writes, and judges each unit."""

    def __init__(self, child: Child, rng: random.Random, max_seconds: float) -> None:
        self.child, self.rng = child, rng
        self.learned: Dict[str, str] = {}
        self.sent = 0
        self.fences = 0
        self.ids = 0
        self.started = time.monotonic()
        self.deadline = self.started + max_seconds
        self.stopped: Optional[str] = None
        self.timeouts = 0
        self.violations: List[Violation] = []
        self.kinds: Dict[str, int] = {}
        self.lines_by_category: Dict[str, int] = {}
        self.units: Dict[str, List[float]] = {}  # category: [units, lines, seconds, violations]
        self.notes: Dict[str, int] = {}
        self.memory: List[Tuple[int, int]] = []
        self.exchanges: List[float] = []

    def next_rid(self) -> str:
        self.ids += 1
        return f"soak-{self.ids}"

    def note(self, what: str) -> None:
        self.notes[what] = self.notes.get(what, 0) + 1

    def send(self, unit: Unit, line: Line) -> None:
        self.child.outgoing.put(line.data)
        self.sent += 1
        self.lines_by_category[line.category] = self.lines_by_category.get(line.category, 0) + 1
        unit.sent_lines.append(line)
        for target in [line, *line.inner]:
            if target.key is not None:
                unit.keyed[target.key] = target

    def send_all(self, unit: Unit, lines: Sequence[Line]) -> None:
        for line in lines:
            self.send(unit, line)
        if lines:
            self.fence(unit)

    def fence(self, unit: Unit) -> None:
        self.fences += 1
        fence_id = f"fence-{self.fences}"
        self.child.outgoing.put(encode(request(fence_id, "ping")))
        unit.fences[id_key(fence_id)] = time.monotonic() + TIMEOUT

    def run(self, unit: Unit) -> None:
        start = time.monotonic()
        self.send_all(unit, unit.lines)
        while unit.fences and self.stopped is None:
            try:
                raw = self.child.incoming.get(timeout=max(0.0, max(unit.fences.values()) - time.monotonic()))
            except queue.Empty:
                self.on_timeout(unit)
                break
            if raw is None:
                self.on_end_of_output(unit)
                break
            self.receive(unit, raw)
        self.judge(unit)
        self.account(unit, time.monotonic() - start)

    def on_timeout(self, unit: Unit) -> None:
        self.timeouts += 1
        unit.fences.clear()
        if self.child.proc.poll() is not None:
            self.on_end_of_output(unit)
            return
        self.problem(unit, ("no response within 10 s", f"the fence after {unit.category}"), None, None)
        if self.timeouts >= 3:
            self.stopped = "the server stopped answering (three timeouts in a row)"

    def on_end_of_output(self, unit: Unit) -> None:
        try:
            status: Optional[int] = self.child.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            status = None
        self.problem(unit, ("the server ended before the end of its input", f"exit status {status}"), None, None)
        self.stopped = f"the server ended (exit status {status}) during {unit.category}"

    def judge(self, unit: Unit) -> None:
        judge_unit(self, unit)

    def problem(self, unit: Unit, problem: Problem, line: Optional[Line], response: Any) -> None:
        unit.problems.append((problem, line, response))

    def account(self, unit: Unit, seconds: float) -> None:
        self.timeouts = 0 if not unit.problems or self.timeouts == 0 else self.timeouts
        figures = self.units.setdefault(unit.category, [0.0, 0.0, 0.0, 0.0])
        figures[0] += 1
        figures[1] += len(unit.sent_lines)
        figures[2] += seconds
        figures[3] += len(unit.problems)
        self.exchanges.append(seconds)
        for problem, line, response in unit.problems:
            self.violate(unit, line, problem, response)
        if self.sent >= MEMORY_EVERY * (len(self.memory) + 1):
            rss = self.child.rss().get("VmRSS")
            self.memory.append((self.sent, -1 if rss is None else rss))

    def violate(self, unit: Unit, line: Optional[Line], problem: Problem, response: Any) -> None:
        target = line if line is not None else next(iter(unit.sent_lines or unit.lines), None)
        sent = excerpt(target.data) if target is not None else "(nothing)"
        category = target.category if target is not None else unit.category
        shown = "(no response)" if response is None else excerpt(response)
        self.violations.append(Violation(problem[0], problem[1], category, sent, shown))
        self.kinds[problem[0]] = self.kinds.get(problem[0], 0) + 1

    # -- what the server writes

    def receive(self, unit: Unit, raw: bytes) -> None:
        try:
            value = strict_loads(raw)
        except (ValueError, UnicodeDecodeError) as err:
            self.problem(unit, ("the server wrote a line that is not strict JSON", str(err)[:200]), None, raw)
            try:
                value = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                return
        if isinstance(value, list):
            unit.arrays.append(value)
        elif not isinstance(value, dict):
            self.problem(unit, ("the server wrote JSON that is no object", ""), None, raw)
        elif "method" in value:
            self.on_server_message(unit, value)
        else:
            self.on_response(unit, value)

    def on_response(self, unit: Unit, message: Message) -> None:
        for problem in response_shape(message):
            self.problem(unit, problem, None, message)
        key = id_key(message["id"]) if "id" in message else "(absent)"
        if key in unit.fences:
            del unit.fences[key]
            self.timeouts = 0
            if message.get("result") != {}:
                self.problem(unit, ("a ping (fence) is not answered with an empty result", ""), None, message)
            if not unit.fences and unit.held:
                self.flush_held(unit)
            return
        line = unit.keyed.get(key)
        if line is None:
            unit.stray.append(message)
            return
        line.responses.append(message)
        if line.react is not None and len(line.responses) == 1:
            self.send_all(unit, line.react(self, line, message))

    def on_server_message(self, unit: Unit, message: Message) -> None:
        if message.get("jsonrpc") != "2.0":
            self.problem(unit, ("a message from the server without \"jsonrpc\": \"2.0\"", ""), None, message)
        if "id" not in message:
            unit.notifications.append(message)
            self.note(f"server notification {message.get('method')}")
            return
        method = message.get("method")
        if method == "elicitation/create":
            self.on_form(unit, message)
            return
        self.problem(unit, ("an unexpected request from the server", str(method)), None, message)
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": METHOD_NOT_FOUND, "message": "no"}}
        self.send_all(unit, [Line("reply: refusal", encode(reply), SILENT)])

    def on_form(self, unit: Unit, message: Message) -> None:
        form_id = message["id"]
        call = unit.calls[len(unit.forms)] if len(unit.forms) < len(unit.calls) else None
        if isinstance(form_id, bool) or not isinstance(form_id, (str, int)):
            self.problem(unit, ("elicitation/create with an id that is no string or integer", ""), call, message)
        if unit.forbid is not None:
            self.problem(unit, ("elicitation/create sent to " + unit.forbid, ""), call, message)
        for problem in form_problems(message.get("params"), unit.version, unit.controlled):
            self.problem(unit, problem, call, message)
        unit.held.append((message, len(unit.forms)))
        unit.forms.append(message)
        if not unit.hold or len(unit.forms) >= len(unit.calls):
            self.flush_held(unit)

    def flush_held(self, unit: Unit) -> None:
        """Answer the forms held, the last one first."""
        held, unit.held = unit.held, []
        lines: List[Line] = []
        for message, index in reversed(held):
            lines.extend(self.reply_lines(unit, message, index))
        self.send_all(unit, lines)

    def reply_lines(self, unit: Unit, message: Message, index: int) -> List[Line]:
        """The client's lines for one form: its answer, and what goes with it."""
        policy = unit.policies[index] if index < len(unit.policies) else "decline"
        call = unit.calls[index] if index < len(unit.calls) else None
        if call is None:
            policy = "decline"
        else:
            call.policy = policy
        before = self.lines_before_reply(unit, policy, call, message["id"])
        if policy in ("leave", "never_cancel"):  # no answer (never_cancel sent its late one)
            return before
        if policy == "error":
            reply: Message = {"jsonrpc": "2.0", "id": message["id"],
                              "error": {"code": -32000, "message": CLIENT_ERROR}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "result": elicit_result(policy, message.get("params"), self.rng)}
        return before + [Line(f"reply: {policy}", encode(reply), SILENT)]

    def lines_before_reply(self, unit: Unit, policy: str, call: Optional[Line], form_id: Any) -> List[Line]:
        """Lines a client sends while a form waits: pings, lists, cancellations, garbage."""
        lines: List[Line] = []
        if policy in ("interleave", "never_cancel"):
            rid = self.next_rid()
            lines.append(Line("ping while a form waits", encode(request(rid, "ping")), ANSWER, rid,
                              want="result", check=empty_result_check))
        if policy == "interleave":
            rid = self.next_rid()
            lines.append(Line("tools/list while a form waits", encode(request(rid, "tools/list")), ANSWER, rid,
                              want="result", check=tools_list_check(unit.version)))
        if policy in ("never_cancel", "cancel_wrong_id", "leave") and call is not None:
            lines.extend(self.cancel_lines(policy, call, form_id))
        if policy == "garbage_line":
            lines.append(Line("garbage while a form waits", b'{"jsonrpc": "2.0", "id": \n', NULL_ERROR,
                              want="error", codes=(PARSE_ERROR,)))
        return lines

    def cancel_lines(self, policy: str, call: Line, form_id: Any) -> List[Line]:
        if policy == "leave":  # the input ends while the form waits
            call.expect = CANCELLED
            return []
        wrong = str(call.rid) if isinstance(call.rid, int) else [call.rid]
        cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": call.rid if policy == "never_cancel" else wrong,
                                "reason": "soak: the user closed the tab"}}
        if policy != "never_cancel":
            return [Line("notifications/cancelled (id of another type)", encode(cancelled), SILENT)]
        call.expect = CANCELLED
        late = {"jsonrpc": "2.0", "id": form_id, "result": {"action": "decline"}}  # the withdrawn form
        return [Line("notifications/cancelled", encode(cancelled), SILENT),
                Line("reply to a withdrawn form", encode(late), SILENT)]


def response_shape(message: Message) -> List[Problem]:
    """A JSON-RPC 2.0 response: jsonrpc, an id member, exactly one of result and error."""
    problems: List[Problem] = []
    if message.get("jsonrpc") != "2.0":
        problems.append(("a response without \"jsonrpc\": \"2.0\"", ""))
    if "id" not in message:
        problems.append(("a response without an id member", ""))
    if ("result" in message) == ("error" in message):
        problems.append(("a response without exactly one of result and error", f"keys: {sorted(message)}"))
    error = message.get("error")
    if "error" in message and (not isinstance(error, dict) or isinstance(error.get("code"), bool)
                               or not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str)):
        problems.append(("an error without an integer code and a message", ""))
    return problems


# ---------------------------------------------------------------------------
# Judging a unit once its fences are answered

Judged = List[Tuple[Problem, Any]]  # problems, each with the response it is about


def judge_unit(soak: Soak, unit: Unit) -> None:
    nulls = sort_stray(soak, unit)
    batch = next((line for line in unit.sent_lines if line.expect == BATCH), None)
    if batch is not None:
        batch.arrays_seen = unit.arrays
    elif unit.arrays:
        soak.problem(unit, ("the server wrote an array where no batch was sent", ""), None, unit.arrays[0])
    pair_nulls(soak, unit, nulls)
    for line in unit.sent_lines:
        for problem, response in JUDGES[line.expect](soak, line):
            soak.problem(unit, problem, line, response)


def sort_stray(soak: Soak, unit: Unit) -> List[Message]:
    """Responses with id null (returned), echoes of invalid ids, and ids never sent."""
    nulls: List[Message] = []
    for message in unit.stray:
        if message.get("id") is None:
            nulls.append(message)
            continue
        key = id_key(message["id"])
        line = next((line for line in unit.sent_lines if line.odd_key == key and line.echo is None), None)
        if line is not None:
            line.echo = message
        else:
            soak.problem(unit, ("a response with an id that was never sent", key[:100]), None, message)
    return nulls


def pair_nulls(soak: Soak, unit: Unit, nulls: List[Message]) -> None:
    """Responses with id null go, in order, to the lines that take them, then to
    requests left unanswered; any left over answered a line that needs none."""
    for message in nulls:
        line = next((line for line in unit.sent_lines if line.expect in (NULL_ERROR, BATCH)
                     and line.null is None and line.echo is None), None)
        if line is None:
            line = next((line for line in unit.sent_lines if line.expect in (ANSWER, ID_OR_NULL)
                         and not line.responses and line.null is None), None)
        if line is not None:
            line.null = message
            continue
        silent = next((line for line in unit.sent_lines if line.expect in (SILENT, CANCELLED)), None)
        soak.problem(unit, (f"{(silent or unit.sent_lines[0]).category}: answered, but it needs no response",
                            f"error {error_of(message)}"), silent, message)


def shape(line: Line, message: Message) -> List[Problem]:
    """Result or error as the line wants it, with the error codes it allows."""
    code = error_of(message)
    error = message.get("error")
    said = str(error.get("message"))[:160] if isinstance(error, dict) else ""
    if code == INTERNAL_ERROR:
        return [("internal error (-32603)", said)]
    if line.want == "result" and "error" in message:
        return [(f"{line.category}: an error instead of a result", f"{code}: {said}")]
    if line.want == "error" and "error" not in message:
        return [(f"{line.category}: a result instead of error {'/'.join(map(str, line.codes))}", "")]
    if "error" in message and line.codes and code not in line.codes:
        return [(f"{line.category}: error {code} instead of {'/'.join(map(str, line.codes))}", said)]
    return []


def judge_answer(soak: Soak, line: Line) -> Judged:
    if line.null is not None:
        return [((f"{line.category}: request answered with id null, not its id",
                  f"error {error_of(line.null)}"), line.null)]
    if not line.responses:
        return [((f"{line.category}: request not answered", ""), None)]
    judged: Judged = []
    if len(line.responses) > 1:
        judged.append(((f"{line.category}: request answered {len(line.responses)} times", ""), line.responses[1]))
    message = line.responses[0]
    problems = shape(line, message)
    if not problems and line.check is not None:
        problems = line.check(soak, line, message)
    return judged + [(problem, message) for problem in problems]


def judge_id_or_null(soak: Soak, line: Line) -> Judged:
    message = line.responses[0] if line.responses else line.null
    if message is None:
        return [((f"{line.category}: invalid request not answered", ""), None)]
    judged: Judged = [((f"{line.category}: answered more than once", ""), message)] if len(line.responses) > 1 else []
    return judged + [(problem, message) for problem in shape(line, message)]


def judge_null_error(soak: Soak, line: Line) -> Judged:
    if line.null is not None:
        return [(problem, line.null) for problem in shape(line, line.null)]
    if line.echo is not None:
        what = f"error {error_of(line.echo)}" if "error" in line.echo else "a result"
        return [((f"{line.category}: answered with the invalid id, not with id null", what), line.echo)]
    codes = "/".join(map(str, line.codes))
    return [((f"{line.category}: no error response", f"expected {codes} with id null"), None)]


def judge_cancelled(soak: Soak, line: Line) -> Judged:
    if line.responses:
        return [(("a cancelled call was answered", ""), line.responses[0])]
    return []


def judge_silent(soak: Soak, line: Line) -> Judged:
    return []


def judge_batch(soak: Soak, line: Line) -> Judged:
    """Refused as a whole (-32600, id null), or one array answering each request once."""
    requests = [inner for inner in line.inner if inner.key is not None]
    if any(inner.responses for inner in line.inner):
        return [((f"{line.category}: answered with separate lines, not one array", ""), line.inner[0].responses[0])]
    if line.null is not None:
        soak.note("batch refused as a whole (-32600)")
        return [(problem, line.null) for problem in shape(line, line.null)]
    arrays = line.arrays_seen
    if not arrays:
        return [((f"{line.category}: not answered", ""), None)] if requests or len(line.inner) == 0 else []
    soak.note("batch answered with an array")
    answered = [item.get("id") for item in arrays[0] if isinstance(item, dict)]
    missing = [inner.rid for inner in requests if answered.count(inner.rid) != 1]
    if missing or not arrays[0]:
        return [((f"{line.category}: the array does not answer each request once", repr(missing)[:100]), arrays[0])]
    return []


JUDGES: Dict[str, Callable[[Soak, Line], Judged]] = {
    ANSWER: judge_answer, ID_OR_NULL: judge_id_or_null, NULL_ERROR: judge_null_error,
    CANCELLED: judge_cancelled, SILENT: judge_silent, BATCH: judge_batch,
}


# ---------------------------------------------------------------------------
# The mix: one function per category, each making one unit

QUESTIONS: List[Message] = [
    {"question": "Which database?", "header": "DB", "purpose": "to write the config",
     "options": [{"label": "SQLite"}, {"label": "Postgres (Recommended)", "description": "the server's"}]},
    {"question": "Which checks should run?", "multiSelect": True, "options": ["Unit tests", "Lint", "Types"]},
    {"question": "Anything else?", "required": False},
    {"question": "What is the project called?"},
    {"question": "Proceed with the migration?", "type": "yesno"},
    {"question": "Which colour?", "options": ["Red", "Blue"], "required": False},
]
FORM_CAPABILITIES: List[Message] = [
    {"elicitation": {}}, {"elicitation": {"form": {}}}, {"elicitation": {"form": {}, "url": {}}},
]
CAPABILITIES: List[Message] = FORM_CAPABILITIES + [
    {}, {"elicitation": {"url": {}}}, {"roots": {"listChanged": True}}, {"elicitation": True},
    {"sampling": {}, "experimental": {"x": {}}},
]
POLICIES = ("accept", "accept", "accept_empty", "decline", "cancel", "garbage", "garbage", "error",
            "never_cancel", "cancel_wrong_id", "interleave", "garbage_line")
STATELESS_POLICIES = ("accept", "accept", "accept_empty", "decline", "cancel", "garbage", "outer_garbage")
OUTER_GARBAGE: List[Any] = ["garbage", {}, [1], 5, {"another_key": {"action": "accept"}}]
UNICODE_TEXT = "Ünïcødé 你好 🎉 مرحبا \u202eevil\u202c e\u0301 \u200b\ufeff \U0001f600\U0001f9d1\u200d\U0001f4bb"
CONTROL_TEXT = "\u0000\u0001\u0007\u001b[2J\u001b]0;title\u0007\u007f\u0085\u2028\u2029\r\n\t"
WRONG_TYPES: List[Any] = [
    5, "", None, True, [], {}, {"questions": 5}, {"questions": None}, {"questions": {"a": {"b": 1}}},
    {"questions": [None, 5, True, []]}, {"questions": [{"question": 5, "options": {"a": [1, 2]}}]},
    {"questions": [{"question": "q", "options": [{"label": {"x": 1}}, [], None, 1.5]}]},
    {"questions": [{"question": "q", "multiSelect": "maybe", "required": "perhaps", "id": [1]}]},
    {"questions": [{"question": ["a", "b"], "type": 7, "options": "A|B|C"}]},
    {"questions": [{"question": "dup", "options": ["A", "a", "A (Recommended)", "Other", "Personalize your response"]}]},
    {"questions": [{"question": "a", "id": "x"}, {"question": "b", "id": "x"}]},
    {"questions": [{"question": "dotted ids", "id": "my.q-1", "options": ["A", "B"]}]},
    '{"questions": [{"question": "Double encoded?"}]}', "[{'question': 'A Python literal?'}]",
    ("<ask_followup_question><question>Markup?</question><follow_up><suggest>A</suggest>"
     "<suggest>B</suggest></follow_up></ask_followup_question>"),
    "not json at all", '```json\n{"questions": [{"question": "fenced"}]}\n```',
    {"questions": [{"question": "numbers", "options": [1e308, -1e308, 12345678901234567890123, 0.1, -0.0, True]}]},
    {"\u0000key": 1, "questions": [{"question\u0000": "nul in a key", "question": "ok"}]},
]
MALFORMED: List[bytes] = [
    b"{", b"}", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b'{"jsonrpc":"2.0","id":1,"method":"ping",}',
    b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}", b"NaN", b"Infinity", b"-Infinity", b'{"id": NaN}',
    b"[1,", b'"unterminated', b"tru", b'{"a":1}}', b'{"a": 1} {"b": 2}', b"\x00", b"\x1b[31m",
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}garbage', b'{"a": "\x01"}', b'{"a" 1}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping"} // a comment', b"{\"id\": 1, \"id\": }", b"<xml/>",
]
NON_OBJECTS: List[bytes] = [b"5", b"-1", b"1.5", b'"ping"', b"true", b"false", b"null", b"1e400", b"[]", b'""', b"0"]
INVALID_IDS = ("1e400", "-1e400", "1.5", "-0.5", "1e-400", "true", "false", "null", "{}", "[]", "[1]", '{"id": 1}')
BAD_UTF8: List[bytes] = [
    b"\xff\xfe\xfd", b"\x80",
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xc3\x28"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"p\xc0\xafing"}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xed\xa0\x80"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xe2\x82"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"caf\xe9"}}',
]
UNKNOWN_METHODS = ("foo", "tools/lis", "resources/lis", "prompts/list", "completion/complete",
                   "sampling/createMessage", "elicitation/create", "roots/list", "", " ping", "PING",
                   "tools/call/x", "initialize/", "notifications/initialized", "tasks/list", "método",
                   "x" * 10_000, "rpc.discover", "subscriptions/listen")


class Gen:
    """Makes units, and follows what the handshake told the server."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.version = LATEST  # what SPEC 9 negotiates for the last initialize
        self.forms = False
        self.count = 0

    def rid(self) -> Any:
        """A fresh valid id: mostly integers, also strings, negative and big ones."""
        self.count += 1
        roll = self.rng.random()
        if roll < 0.6:
            return self.count
        if roll < 0.85:
            return f"r{self.count}"
        return -self.count if roll < 0.95 else 2 ** 63 + self.count

    def line(self, category: str, method: str, params: Any = None, *, want: str = "result",
             codes: Tuple[int, ...] = (), check: Optional[Check] = None, rid: Any = None) -> Line:
        rid = self.rid() if rid is None else rid
        return Line(category, encode(request(rid, method, params)), ANSWER, rid, want=want, codes=codes, check=check)

    def forbid(self) -> Optional[str]:
        if not self.forms:
            return "a client that declared no form elicitation"
        if self.version not in FORM_VERSIONS:
            return f"a client of protocol {self.version}, which has no elicitation"
        return None

    def initialize(self, category: str, version: Any, capabilities: Any) -> Line:
        params = {"protocolVersion": version, "capabilities": capabilities,
                  "clientInfo": {"name": "soak_mcp", "version": "1.0"}}
        self.version = version if version in HANDSHAKE_VERSIONS else LATEST
        self.forms = forms(capabilities)
        return self.line(category, "initialize", params, check=initialize_check(version))

    def questions(self) -> Message:
        return {"questions": self.rng.sample(QUESTIONS, self.rng.choice((1, 1, 2, 3)))}

    def call(self, category: str, arguments: Any, controlled: bool, name: Any = TOOL) -> Line:
        params: Message = {"name": name} if arguments is MISSING else {"name": name, "arguments": arguments}
        line = self.line(category, "tools/call", params, want="result" if controlled else "any",
                         codes=() if controlled else (INVALID_PARAMS,),
                         check=call_check(self.version, hostile=not controlled))
        line.call = True
        line.needs_form = controlled and self.forbid() is None
        return line

    def call_unit(self, category: str, lines: List[Line], controlled: bool, hold: bool = False) -> Unit:
        policies = [self.rng.choice(POLICIES) for line in lines if line.call]
        return Unit(category, lines, policies, forbid=self.forbid(), version=self.version,
                    controlled=controlled, hold=hold)


MISSING: Any = object()


def notification(category: str, method: str, params: Any = None) -> Line:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return Line(category, encode(message), SILENT)


def u_call(g: Gen) -> Unit:
    return g.call_unit("tools/call", [g.call("tools/call", g.questions(), True)], True)


def u_initialize(g: Gen) -> Unit:
    version = g.rng.choice(HANDSHAKE_VERSIONS + ("2099-01-01", "1.0", "", "2025-11-25 ", STATELESS))
    return Unit("initialize", [g.initialize("initialize", version, g.rng.choice(CAPABILITIES))])


def u_initialized(g: Gen) -> Unit:
    return Unit("notifications/initialized", [notification("notifications/initialized", "notifications/initialized")])


def u_ping(g: Gen) -> Unit:
    params = g.rng.choice((None, {}, {"_meta": {"progressToken": 1}}))
    line = g.line("ping", "ping", params, check=empty_result_check)
    if g.rng.random() < 0.2:
        line.data = line.data[:-1] + b"\r\n"
        line.category = "ping (CRLF)"
    return Unit("ping", [line])


def u_tools_list(g: Gen) -> Unit:
    params = g.rng.choice((None, {}, {"cursor": "x"}))
    return Unit("tools/list", [g.line("tools/list", "tools/list", params, check=tools_list_check(g.version))])


def u_set_level(g: Gen) -> Unit:
    params = {"level": g.rng.choice(LOG_LEVELS)}
    return Unit("logging/setLevel", [g.line("logging/setLevel", "logging/setLevel", params, check=empty_result_check)])


def u_set_level_invalid(g: Gen) -> Unit:
    level = g.rng.choice(("verbose", "", "INFO", "Debug", 5, None, ["info"], "trace", MISSING))
    params: Message = {} if level is MISSING else {"level": level}
    line = g.line("logging/setLevel invalid", "logging/setLevel", params, want="error", codes=(INVALID_PARAMS,))
    return Unit("logging/setLevel invalid", [line])


def u_forms(g: Gen) -> Unit:
    """A client with forms: initialize, initialized, one or two calls whose forms it answers."""
    version = g.rng.choice(HANDSHAKE_VERSIONS + FORM_VERSIONS * 3)
    init = g.initialize("elicitation: initialize", version, g.rng.choice(FORM_CAPABILITIES))
    lines = [init, notification("notifications/initialized", "notifications/initialized")]
    calls = [g.call("elicitation: tools/call", g.questions(), True) for _ in range(g.rng.choice((1, 1, 2)))]
    return g.call_unit("elicitation", lines + calls, True, hold=len(calls) > 1)


def stateless_call_check(form_caps: bool, controlled: bool) -> Check:
    def check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
        if "error" in message:
            return [("stateless tools/call answered with an error", excerpt(message))] if controlled else []
        result = message.get("result")
        problems = stateless_problems(result, "tools/call")
        if not isinstance(result, dict):
            return problems
        if result.get("resultType") == "input_required":
            if not form_caps:
                problems.append(("input_required for a client without form elicitation", ""))
            return problems + input_request_problems(result, controlled)
        problems.extend(tool_result_problems(result))
        if form_caps and controlled:
            problems.append(("stateless tools/call from a client with forms is not input_required", ""))
        elif controlled:
            problems.extend(outcome_problems(result, "unavailable", STATELESS))
        return problems
    return check


def input_request_problems(result: Message, controlled: bool) -> List[Problem]:
    requests = result.get("inputRequests")
    if not isinstance(requests, dict) or not requests:
        return [("input_required without inputRequests", excerpt(result))]
    problems: List[Problem] = []
    for entry in requests.values():
        if not isinstance(entry, dict) or entry.get("method") != "elicitation/create":
            problems.append(("an input request that is no elicitation/create", excerpt(entry)))
        else:
            problems.extend(form_problems(entry.get("params"), STATELESS, controlled))
    return problems


def retry_check(policy: str) -> Check:
    def check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
        if "error" in message:
            if policy in ("outer_garbage", "garbage"):  # -32602: no usable response (shape checks the code)
                return []
            return [(f"stateless retry ({policy}) answered with an error", excerpt(message))]
        result = message.get("result")
        problems = stateless_problems(result, "tools/call") + tool_result_problems(result)
        if problems or not isinstance(result, dict):
            return problems
        if result.get("resultType") != "complete":
            return [(f"stateless retry ({policy}) is not complete", str(result.get("resultType")))]
        return [] if policy == "accept_empty" else outcome_problems(result, policy, STATELESS)
    return check


def retry_react(params: Message, policy: str) -> React:
    """The retried call (same arguments, plus inputResponses) for an input request."""
    def react(soak: "Soak", line: Line, message: Message) -> List[Line]:
        result = message.get("result")
        requests = result.get("inputRequests") if isinstance(result, dict) else None
        if not isinstance(result, dict) or result.get("resultType") != "input_required" or not isinstance(requests, dict):
            return []
        key, entry = next(iter(requests.items()), ("", None))
        form = entry.get("params") if isinstance(entry, dict) else None
        if policy == "outer_garbage":
            responses: Any = soak.rng.choice(OUTER_GARBAGE)
        else:
            responses = {key: elicit_result(policy, form, soak.rng)}
        line.policy = policy
        rid = soak.next_rid()
        state = {"requestState": result["requestState"]} if "requestState" in result else {}
        data = encode(request(rid, "tools/call", {**params, "inputResponses": responses, **state}))
        return [Line(f"stateless retry: {policy}", data, ANSWER, rid, codes=(INVALID_PARAMS,),
                     check=retry_check(policy))]
    return react


def u_discover(g: Gen) -> Unit:
    with_meta = g.rng.random() < 0.8
    params = {"_meta": meta(STATELESS, g.rng.choice(CAPABILITIES))} if with_meta else None
    category = "server/discover" if with_meta else "server/discover (no _meta)"
    return Unit("server/discover", [g.line(category, "server/discover", params, check=discover_check(with_meta))])


def u_stateless_list(g: Gen) -> Unit:
    params = {"_meta": meta(STATELESS, g.rng.choice(CAPABILITIES))}
    return Unit("stateless tools/list", [g.line("stateless tools/list", "tools/list", params,
                                                check=tools_list_check(STATELESS))])


def u_stateless_call(g: Gen) -> Unit:
    capabilities = g.rng.choice(CAPABILITIES + FORM_CAPABILITIES * 2)
    controlled = g.rng.random() < 0.8
    arguments = g.questions() if controlled else hostile_arguments(g.rng)
    params: Message = {"name": TOOL, "arguments": arguments, "_meta": meta(STATELESS, capabilities)}
    line = g.line("stateless tools/call", "tools/call", params, want="result" if controlled else "any",
                  codes=(INVALID_PARAMS,), check=stateless_call_check(forms(capabilities), controlled))
    line.react = retry_react(params, g.rng.choice(STATELESS_POLICIES))
    return Unit("stateless tools/call", [line], version=STATELESS, controlled=controlled)


def u_unsupported(g: Gen) -> Unit:
    version = g.rng.choice(("2099-01-01", "2026-01-01", "draft", "2024-13-45", "latest"))
    method = g.rng.choice(("tools/list", "tools/call", "server/discover"))
    params: Message = {"_meta": meta(version, {"elicitation": {}})}
    if method == "tools/call":
        params.update(name=TOOL, arguments=g.questions())
    line = g.line("stateless unsupported version", method, params, want="error",
                  codes=(UNSUPPORTED_VERSION,), check=unsupported_check(version))
    return Unit("stateless unsupported version", [line], forbid="a request of an unsupported version")


def u_notification(g: Gen) -> Unit:
    method, params = g.rng.choice([
        ("notifications/initialized", None), ("notifications/cancelled", {"requestId": 999_999_999, "reason": "x"}),
        ("notifications/cancelled", {"requestId": {"x": 1}}), ("notifications/cancelled", 5),
        ("notifications/progress", {"progressToken": 1, "progress": 0.5}), ("notifications/roots/list_changed", None),
        ("foo/bar", {"x": [1, 2]}), ("ping", None), ("tools/call", {"name": TOOL, "arguments": {"questions": ["Q?"]}}),
        ("initialize", {"protocolVersion": "2024-11-05", "capabilities": {}}), ("tools/list", None),
        ("logging/setLevel", {"level": "nope"}), ("notifications/message", {"_meta": meta(STATELESS, {})}),
    ])
    return Unit("notification", [notification(f"notification {method}", method, params)])


def u_malformed(g: Gen) -> Unit:
    noise = b"@" + bytes(g.rng.randrange(32, 127) for _ in range(g.rng.randrange(0, 200)))  # never JSON
    data = g.rng.choice(MALFORMED + [noise])
    return Unit("malformed JSON", [Line("malformed JSON", data + b"\n", NULL_ERROR, want="error", codes=(PARSE_ERROR,))])


def u_non_object(g: Gen) -> Unit:
    data = g.rng.choice(NON_OBJECTS)
    return Unit("non-object JSON", [Line("non-object JSON", data + b"\n", NULL_ERROR, want="error",
                                         codes=(INVALID_REQUEST,))])


def batch_entries(g: Gen) -> List[Line]:
    ping = g.line("batch entry", "ping")
    note = notification("batch entry", "notifications/initialized")
    invalid = Line("batch entry", b"1", NULL_ERROR)
    other = g.line("batch entry", "tools/list", rid=str(ping.rid) if isinstance(ping.rid, int) else None)
    return g.rng.choice([[ping, other], [ping, note], [note, note], [invalid, invalid, invalid],
                         [ping, Line("batch entry", b'{"foo": 1}', NULL_ERROR)]])


def u_batch(g: Gen) -> Unit:
    entries = batch_entries(g)
    data = b"[" + b", ".join(entry.data.rstrip(b"\n") for entry in entries) + b"]"
    if g.rng.random() < 0.15:
        data = b"[" + data + b"]"  # a batch inside a batch
    line = Line("batch", data + b"\n", BATCH, want="error", codes=(INVALID_REQUEST,), inner=entries)
    return Unit("batch", [line])


def u_invalid_id(g: Gen) -> Unit:
    raw = g.rng.choice(INVALID_IDS)
    method = g.rng.choice(("ping", "tools/list", "nope/nothing", "logging/setLevel"))
    data = ('{"jsonrpc": "2.0", "id": ' + raw + ', "method": ' + json.dumps(method) + "}\n").encode()
    line = Line(f"invalid id {raw}", data, NULL_ERROR, want="error", codes=(INVALID_REQUEST,),
                odd_key=id_key(json.loads(raw)))
    return Unit("invalid id", [line])


def u_valid_id(g: Gen) -> Unit:
    """Ids that are valid but unusual; or an integer and its digits as a string, together."""
    if g.rng.random() < 0.2:
        g.count += 1
        n = 7_000_000 + g.count
        lines = [g.line("ids n and \"n\"", "ping", rid=n, check=empty_result_check),
                 g.line("ids n and \"n\"", "tools/list", rid=str(n))]
        return Unit("unusual valid id", lines)
    rid = g.rng.choice([0, -1, -(2 ** 63), 2 ** 63, 2 ** 64 + 1, 10 ** 30, -(10 ** 30), "", " ", "é🎉",
                        "\u0000\n\"\\", "a" * 100_000, "1", 10 ** 5000 - 1])
    if isinstance(rid, int) and rid > 10 ** 100 and hasattr(sys, "get_int_max_str_digits"):
        # Python 3.11+ reads no integer of over 4,300 digits: the line is a parse error.
        text = '{"jsonrpc": "2.0", "id": ' + str(rid) + ', "method": "ping"}\n'
        return Unit("unusual valid id", [Line("id: 5000-digit integer", text.encode(), NULL_ERROR, want="error",
                                              codes=(PARSE_ERROR,))])
    return Unit("unusual valid id", [g.line("unusual valid id", "ping", rid=rid, check=empty_result_check)])


def random_json(rng: random.Random, depth: int) -> Any:
    """A random value shaped a little like a call."""
    roll = rng.random()
    if depth <= 0 or roll < 0.4:
        return rng.choice([None, True, False, 0, -1, 2 ** 70, 1e308, -0.5, "", "Postgres", UNICODE_TEXT,
                           CONTROL_TEXT, "x" * rng.randrange(0, 5000), "\ud800", "(Recommended)"])
    if roll < 0.7:
        return [random_json(rng, depth - 1) for _ in range(rng.randrange(0, 6))]
    keys = ("questions", "question", "options", "label", "multiSelect", "type", "id", "header", "required",
            "choices", "description", "recommended", "allowCustom", "", "\u0000")
    return {rng.choice(keys): random_json(rng, depth - 1) for _ in range(rng.randrange(0, 6))}


def hostile_arguments(rng: random.Random) -> Any:
    """Arguments a model, or someone else, might send: huge, strange, of the wrong types."""
    roll = rng.randrange(8)
    if roll == 0:
        return {"questions": [{"question": "x" * rng.choice((4001, 50_000, 200_000))}]}
    if roll == 1:
        return {"questions": [{"question": f"Q{i}?"} for i in range(rng.choice((17, 100, 2000)))]}
    if roll == 2:
        return {"questions": [{"question": "Pick", "options": [f"o{i}" for i in range(rng.choice((33, 1000, 5000)))]}]}
    if roll == 3:
        return {"questions": [{"question": UNICODE_TEXT, "header": "🎉" * 20,
                               "options": [UNICODE_TEXT, "😀", "\u200b", "e\u0301", "\ud800 lone \udfff"]}]}
    if roll == 4:
        return {"questions": [{"question": CONTROL_TEXT + "?", "purpose": CONTROL_TEXT, "options": [CONTROL_TEXT, "ok"]}]}
    if roll == 5:
        return random_json(rng, 4)
    return rng.choice(WRONG_TYPES)


def u_hostile(g: Gen) -> Unit:
    name: Any = TOOL if g.rng.random() < 0.9 else g.rng.choice(("nope", "", 5, None, "ASK_QUESTIONS", TOOL + " "))
    arguments = MISSING if g.rng.random() < 0.05 else hostile_arguments(g.rng)
    return g.call_unit("hostile arguments", [g.call("hostile arguments", arguments, False, name)], False)


def u_unknown(g: Gen) -> Unit:
    method = g.rng.choice(UNKNOWN_METHODS)
    params = {"_meta": meta(STATELESS, {})} if g.rng.random() < 0.3 else None
    line = g.line("unknown method", method, params, want="error", codes=(METHOD_NOT_FOUND,))
    return Unit("unknown method", [line])


def u_invalid_request(g: Gen) -> Unit:
    rid = g.rid()
    shapes: List[Message] = [
        {"id": rid, "method": "ping"}, {"jsonrpc": "1.0", "id": rid, "method": "ping"},
        {"jsonrpc": 2.0, "id": rid, "method": "ping"}, {"jsonrpc": "2.0", "id": rid, "method": 5},
        {"jsonrpc": "2.0", "id": rid, "method": None}, {"jsonrpc": "2.0", "id": rid, "method": ["ping"]},
        {"jsonrpc": "2.0", "id": rid},
    ]
    if g.rng.random() < 0.4:
        params = g.rng.choice(([], [1, 2], 5, "x", True, None))
        message = {"jsonrpc": "2.0", "id": rid, "method": g.rng.choice(("ping", "tools/list")), "params": params}
        line = Line("params not an object", encode(message), ANSWER, rid, want="error",
                    codes=(INVALID_PARAMS, INVALID_REQUEST))
        return Unit("invalid request", [line])
    message = g.rng.choice(shapes)
    return Unit("invalid request", [Line("invalid request", encode(message), ID_OR_NULL, rid, want="error",
                                         codes=(INVALID_REQUEST,))])


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def u_deep(g: Gen) -> Unit:
    roll = g.rng.randrange(6)
    if roll < 3:
        data = [b"[" * 100_000 + b"]" * 100_000, b"[" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000][roll]
        return Unit("deep nesting", [Line("deep nesting (no request)", data + b"\n", NULL_ERROR, want="error",
                                          codes=(PARSE_ERROR, INVALID_REQUEST))])
    rid = g.rid()
    if roll == 5:
        arguments = '{"questions": [{"question": "Deep?", "options": ' + nested(1000) + "}]}"
        text = '{"jsonrpc": "2.0", "id": ' + json.dumps(rid) + ', "method": "tools/call", "params": {"name": '
        text += json.dumps(TOOL) + ', "arguments": ' + arguments + "}}\n"
        # Past the server's bound on a message's depth (a call's MAX_DEPTH and its
        # envelope): the line cannot be parsed, so its id cannot be read either.
        line = Line("deep nesting (tools/call arguments, 1000)", text.encode(), NULL_ERROR, want="error",
                    codes=(PARSE_ERROR,))
        return Unit("deep nesting", [line], forbid="a call whose arguments nest 1000 deep")
    depth = 40 if roll == 3 else 20
    text = '{"jsonrpc": "2.0", "id": ' + json.dumps(rid) + ', "method": "ping", "params": {"x": ' + nested(depth) + "}}\n"
    line = Line(f"deep nesting (ping params, {depth})", text.encode(), ANSWER, rid, want="result",
                check=empty_result_check)
    return Unit("deep nesting", [line])


def u_utf8(g: Gen) -> Unit:
    data = g.rng.choice(BAD_UTF8)
    return Unit("invalid UTF-8", [Line("invalid UTF-8", data + b"\n", NULL_ERROR, want="error", codes=(PARSE_ERROR,))])


def refused_check(soak: "Soak", line: Line, message: Message) -> List[Problem]:
    result = message.get("result")
    problems = tool_result_problems(result)
    if not problems and isinstance(result, dict) and result.get("isError") is not True:
        problems.append(("a call over the bounds is not a tool error", excerpt(text_of(result), 160)))
    return problems


def u_megabyte(g: Gen) -> Unit:
    roll = g.rng.randrange(4)
    if roll == 2:
        return Unit("1 MB line", [Line("1 MB line (not JSON)", b"x" * MB + b"\n", NULL_ERROR, want="error",
                                       codes=(PARSE_ERROR,))])
    if roll == 1:
        line = g.line("1 MB line (ping)", "ping", {"pad": "y" * MB}, check=empty_result_check)
        return Unit("1 MB line", [line])
    text = "x" * MB if roll == 0 else "é" * (MB // 2)
    line = g.line("1 MB line (tools/call)", "tools/call", {"name": TOOL, "arguments": {"questions": [{"question": text}]}},
                  check=refused_check)
    return Unit("1 MB line", [line], forbid="a call over the bounds")


def u_line_15mb(g: Gen) -> Unit:
    return Unit("1.5 MB line", [g.line("1.5 MB line (ping)", "ping", {"pad": "y" * (3 * MB // 2)},
                                       check=empty_result_check)])


def u_line_3mb(g: Gen) -> Unit:
    data = encode(request(g.rid(), "ping", {"pad": "y" * (3 * MB)}))
    return Unit("3 MB line", [Line("3 MB line (ping)", data, NULL_ERROR, want="error", codes=(PARSE_ERROR,))])


# The mix, in the order of the first round (one unit of each), with weights.
CATEGORIES: List[Tuple[str, float, Callable[[Gen], Unit]]] = [
    ("tools/call", 6, u_call),
    ("initialize", 3, u_initialize),
    ("notifications/initialized", 2, u_initialized),
    ("ping", 6, u_ping),
    ("tools/list", 4, u_tools_list),
    ("logging/setLevel", 2, u_set_level),
    ("logging/setLevel invalid", 2, u_set_level_invalid),
    ("elicitation", 9, u_forms),
    ("server/discover", 3, u_discover),
    ("stateless tools/list", 3, u_stateless_list),
    ("stateless tools/call", 6, u_stateless_call),
    ("stateless unsupported version", 2, u_unsupported),
    ("notification", 5, u_notification),
    ("malformed JSON", 5, u_malformed),
    ("non-object JSON", 4, u_non_object),
    ("batch", 3, u_batch),
    ("invalid id", 5, u_invalid_id),
    ("unusual valid id", 4, u_valid_id),
    ("1 MB line", 0.12, u_megabyte),
    ("1.5 MB line", 0.03, u_line_15mb),
    ("3 MB line", 0.03, u_line_3mb),
    ("deep nesting", 1.5, u_deep),
    ("invalid UTF-8", 3, u_utf8),
    ("hostile arguments", 6, u_hostile),
    ("unknown method", 4, u_unknown),
    ("invalid request", 3, u_invalid_request),
]


def schedule(g: Gen) -> "Callable[[int], Unit]":
    """The unit to send as the n-th: one of each category first, then by weight."""
    makers = [maker for _, _, maker in CATEGORIES]
    weights = [weight for _, weight, _ in CATEGORIES]

    def unit(n: int) -> Unit:
        maker = makers[n] if n < len(makers) else g.rng.choices(makers, weights)[0]
        return maker(g)
    return unit


def left_waiting(g: Gen) -> Unit:
    """Last: a call whose form is never answered when the input ends (exit 0 all the same)."""
    init = g.initialize("end: initialize", LATEST, {"elicitation": {}})
    call = g.call("end: tools/call left waiting", {"questions": [QUESTIONS[0]]}, True)
    return Unit("end of input with a form waiting", [init, call], ["leave"], version=LATEST, controlled=True)


def soak(child: Child, seed: int, lines: int, max_seconds: float) -> Soak:
    setter = getattr(sys, "set_int_max_str_digits", None)
    if setter is not None:
        setter(0)  # ids may be integers of thousands of digits
    run = Soak(child, random.Random(seed + 1), max_seconds)
    gen = Gen(random.Random(seed))
    make = schedule(gen)
    n = 0
    while run.sent < lines and run.stopped is None:
        if time.monotonic() > run.deadline:
            run.stopped = f"the time limit ({max_seconds:g} s) was reached"
            break
        run.run(make(n))
        n += 1
    if run.stopped is None:
        run.run(left_waiting(gen))
    return run


def finish(run: Soak, child: Child) -> Dict[str, Any]:
    """End the input; check the exit, the output after it, and stderr."""
    memory = child.rss()
    status = child.finish(TIMEOUT)
    unit = Unit("end of input", [])
    if status != 0:
        run.problem(unit, ("the server does not exit 0 at the end of input",
                           "killed after 10 s" if status is None else f"exit status {status}"), None, None)
    late = [raw for raw in iter_queue(child.incoming) if raw]
    for raw in late:
        run.problem(unit, ("output after the end of input", ""), None, raw)
    if b"Traceback" in child.stderr:
        at = child.stderr.index(b"Traceback")
        run.problem(unit, ("a traceback on stderr", ""), None, bytes(child.stderr[at:at + 600]))
    if child.write_error is not None:
        run.problem(unit, ("the server stopped reading its input", child.write_error), None, None)
    run.account(unit, 0.0)
    return {"status": status, "VmRSS_end_kB": memory.get("VmRSS"), "VmHWM_kB": memory.get("VmHWM")}


def iter_queue(incoming: "queue.Queue[Optional[bytes]]") -> List[Optional[bytes]]:
    items: List[Optional[bytes]] = []
    while True:
        try:
            items.append(incoming.get(timeout=0.5))
        except queue.Empty:
            return items
        if items[-1] is None:
            return items


# ---------------------------------------------------------------------------
# Over HTTP: python askq.py serve --http
#
# The same mix, one POST per message to /mcp, each unit in a session of its
# own version (a unit that begins with initialize starts its own), a tenth of
# the POSTs with a hostile header instead (another Origin, a wrong or missing
# token, a missing or unknown session, an unknown protocol version, a body
# over the bound or in chunks, two Hosts, a foreign Host), each answered by
# the transport's rules; forms arrive on event streams and are answered by
# the mix's policies; then 20 idle sockets are held open while a client
# completes a call through a form, which must take under a second.

HTTP_TOKEN = "soak-token"
HTTP_MAX_BODY = 1024 * 1024  # askq's MAX_PAYLOAD_BYTES: a bigger body is 413
HOSTILE = ("foreign origin", "wrong token", "no token", "no session", "unknown session", "wrong version",
           "oversized body", "chunked body", "two hosts", "foreign host")
HOSTILE_STATUS = {"foreign origin": 403, "wrong token": 401, "no token": 401, "no session": 400,
                  "unknown session": 404, "wrong version": 400, "oversized body": 413, "chunked body": 411,
                  "two hosts": 400, "foreign host": 403}
HTTP_POLICIES = ("accept", "accept", "decline", "cancel", "garbage", "error", "cancel_call", "interleave")
IDLE_SOCKETS = 20


class HttpReply:
    """A response read from a raw socket: status, headers, then a body or events."""

    def __init__(self, sock: Any, stream: Any) -> None:
        self.sock, self.stream = sock, stream
        words = stream.readline().split(None, 2)
        self.status = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
        self.headers: Dict[str, str] = {}
        while True:
            row = stream.readline()
            if row in (b"\r\n", b"\n", b""):
                break
            name, _, value = row.decode("latin-1").partition(":")
            self.headers[name.strip().lower()] = value.strip()

    @property
    def is_stream(self) -> bool:
        return self.headers.get("content-type", "").startswith("text/event-stream")

    def body(self) -> bytes:
        try:
            return bytes(self.stream.read(int(self.headers.get("content-length", "0"))))
        finally:
            self.close()

    def event(self) -> Optional[Message]:
        """The next message on an event stream (None at its end)."""
        data: List[bytes] = []
        while True:
            row = self.stream.readline()
            if not row:
                return None
            if row.strip() == b"" and data:
                return strict_loads(b"".join(data))
            if row.startswith(b"data:"):
                data.append(row[5:].strip())

    def close(self) -> None:
        self.stream.close()
        self.sock.close()


def http_post(port: int, body: bytes, headers: Dict[str, str], hostile: Optional[str] = None) -> HttpReply:
    import socket

    rows = [f"{name}: {value}" for name, value in headers.items()]
    payload = body
    if hostile == "chunked body":
        rows.append("Transfer-Encoding: chunked")
        payload = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    elif hostile == "oversized body":
        rows.append(f"Content-Length: {HTTP_MAX_BODY + 1 + len(body)}")
        payload = body[:65536]  # the rest never comes: the server refuses before it reads
    else:
        rows.append(f"Content-Length: {len(body)}")
    host = {"two hosts": "127.0.0.1\r\nHost: 127.0.0.1", "foreign host": "evil.example"}.get(hostile or "")
    rows.insert(0, f"Host: {host or f'127.0.0.1:{port}'}")
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    try:
        sock.sendall(("POST /mcp HTTP/1.1\r\n" + "\r\n".join(rows) + "\r\n\r\n").encode("latin-1") + payload)
    except OSError:
        pass  # refused before the body was read: the answer is still there to read
    return HttpReply(sock, sock.makefile("rb"))


class HttpSoak:
    """Sends the mix over HTTP and judges each answer by the transport's rules."""

    def __init__(self, port: int, child: Any, rng: random.Random, max_seconds: float) -> None:
        self.port, self.child, self.rng = port, child, rng
        self.sent = 0
        self.ids = 0
        self.started = time.monotonic()
        self.deadline = self.started + max_seconds
        self.sessions: Dict[Tuple[str, bool], str] = {}
        self.counts: Dict[str, int] = {}
        self.violations: List[Violation] = []
        self.kinds: Dict[str, int] = {}
        self.memory: List[Tuple[int, int]] = []
        self.seconds: List[float] = []

    def next_rid(self) -> str:
        self.ids += 1
        return f"soak-http-{self.ids}"

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def violate(self, kind: str, detail: str, category: str, sent: bytes, got: Any) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.violations.append(Violation(kind, detail, category, excerpt(sent), excerpt(got)))

    def headers(self, session: Optional[str], hostile: Optional[str] = None) -> Dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "Authorization": f"Bearer {HTTP_TOKEN}"}
        if session:
            headers["Mcp-Session-Id"] = session
        extra = {"foreign origin": {"Origin": "http://evil.example"}, "wrong token": {"Authorization": "Bearer nope"},
                 "unknown session": {"Mcp-Session-Id": "no-such-session"},
                 "wrong version": {"MCP-Protocol-Version": "2099-01-01"}}.get(hostile or "", {})
        headers.update(extra)
        if hostile == "no token":
            del headers["Authorization"]
        if hostile == "no session":
            headers.pop("Mcp-Session-Id", None)
        return headers

    def session(self, version: str, with_forms: bool) -> str:
        """A session of the version, made once (and again if the server ended it)."""
        key = (version, with_forms)
        if key not in self.sessions:
            capabilities = {"elicitation": {}} if with_forms else {}
            body = encode(request(self.next_rid(), "initialize", {
                "protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "soak_mcp"}}))
            reply = http_post(self.port, body.strip(), self.headers(None))
            reply.body()
            self.sessions[key] = reply.headers.get("mcp-session-id", "")
        return self.sessions[key]

    def run(self, unit: Unit) -> None:
        stateless = unit.version == STATELESS
        session = None if stateless else self.session(
            unit.version if unit.version in HANDSHAKE_VERSIONS else LATEST, self.rng.random() < 0.5)
        pending = list(unit.lines)
        while pending and time.monotonic() < self.deadline:
            line = pending.pop(0)
            if b'"method": "initialize"' in line.data and line.expect == ANSWER and not stateless:
                session = self.start_session(line) or session
                continue
            more, session = self.send(unit, line, session)
            pending[:0] = more

    def start_session(self, line: Line) -> Optional[str]:
        started = time.monotonic()
        reply = http_post(self.port, line.data.strip(), self.headers(None))
        body = reply.body()
        self.account(line, started)
        if reply.status != 200:
            self.violate("initialize over HTTP not answered 200", str(reply.status), line.category, line.data, body)
        return reply.headers.get("mcp-session-id")

    def account(self, line: Line, started: float) -> None:
        self.sent += 1
        self.seconds.append(time.monotonic() - started)
        self.count(line.category)
        if self.sent % MEMORY_EVERY == 0:
            self.memory.append((self.sent, self.child.rss().get("VmRSS", 0)))

    def hostile_for(self, line: Line, session: Optional[str]) -> Optional[str]:
        if self.rng.random() >= 0.1:
            return None
        choices = [name for name in HOSTILE if name != "no session" or (session and self.plain_request(line))]
        return self.rng.choice(choices)

    @staticmethod
    def plain_request(line: Line) -> bool:
        """A message that needs its session: not an initialize, nor one of 2026-07-28."""
        return b"initialize" not in line.data and META_VERSION.encode() not in line.data \
            and b"server/discover" not in line.data

    def send(self, unit: Unit, line: Line, session: Optional[str]) -> Tuple[List[Line], Optional[str]]:
        """One message as one POST; the lines to send next (a retry), and the session from now on."""
        body = line.data.rstrip(b"\r\n")
        hostile = self.hostile_for(line, session)
        started = time.monotonic()
        try:
            reply = http_post(self.port, body, self.headers(session, hostile), hostile)
            if reply.status == 404 and hostile is None and session in self.sessions.values():
                # The server's bound on sessions ended this one, the idlest: begin it again.
                reply.close()
                self.count("sessions ended by the server's bound, begun again")
                key = next(key for key, known in self.sessions.items() if known == session)
                del self.sessions[key]
                session = self.session(*key)
                reply = http_post(self.port, body, self.headers(session, hostile), hostile)
            more = self.judge(unit, line, body, reply, hostile, session)
        except (OSError, ValueError) as err:
            self.violate("the connection failed", f"{type(err).__name__}: {err}", line.category, body, "")
            more = []
        self.account(line, started)
        return more, session

    def judge(self, unit: Unit, line: Line, body: bytes, reply: HttpReply, hostile: Optional[str],
              session: Optional[str]) -> List[Line]:
        if hostile is not None:
            got = reply.body()
            self.count(f"hostile: {hostile}")
            wanted = HOSTILE_STATUS[hostile]
            if hostile == "foreign host" and reply.status == 403 or reply.status == wanted:
                if wanted == 401 and reply.headers.get("www-authenticate") != "Bearer":
                    self.violate("401 without WWW-Authenticate: Bearer", hostile, line.category, body, got)
                return []
            self.violate(f"{hostile}: not {wanted}", str(reply.status), line.category, body, got)
            return []
        if len(body) > HTTP_MAX_BODY:
            got = reply.body()
            if reply.status != 413:
                self.violate("a body over the bound is not 413", str(reply.status), line.category, body, got)
            return []
        if reply.is_stream:
            return self.follow_stream(unit, line, body, reply, session)
        got = reply.body()
        return self.judge_json(line, body, reply.status, got)

    def judge_json(self, line: Line, body: bytes, status: int, got: bytes) -> List[Line]:
        try:
            message = strict_loads(got) if got else None
        except ValueError as err:
            self.violate("a body that is not strict JSON", str(err), line.category, body, got)
            return []
        expect = line.expect
        if expect == SILENT:
            if status != 202 and not (status == 400 and isinstance(message, dict) and "error" in message):
                self.violate("a notification or response not answered 202", str(status), line.category, body, got)
            return []
        if expect == BATCH:
            if not (status == 200 and isinstance(message, list)) and not (status == 400 and isinstance(message, dict)
                                                                           and error_of(message) == INVALID_REQUEST):
                self.violate("a batch neither answered nor refused -32600", str(status), line.category, body, got)
            return []
        if not isinstance(message, dict) or ("result" not in message and "error" not in message):
            self.violate("a request not answered with a JSON-RPC response", str(status), line.category, body, got)
            return []
        if error_of(message) == INTERNAL_ERROR:
            self.violate("an internal error (-32603)", "", line.category, body, got)
        if expect == ANSWER and message.get("id") != line.rid and not (status == 400 and message.get("id") is None):
            self.violate("a response with the wrong id", str(message.get("id")), line.category, body, got)
        if expect == NULL_ERROR and (status != 400 or message.get("id") is not None):
            self.violate("an unreadable message not answered 400 with id null", str(status), line.category, body, got)
        if expect == ANSWER and status != 200 and message.get("id") is not None:
            self.violate("a request answered with a status other than 200", str(status), line.category, body, got)
        if line.react is not None and "result" in message:
            return line.react(self, line, message)  # type: ignore[arg-type]
        return []

    def follow_stream(self, unit: Unit, line: Line, body: bytes, reply: HttpReply, session: Optional[str]) -> List[Line]:
        """A call's event stream: its form answered by a policy, then its result (or its end, cancelled)."""
        self.count("event streams")
        try:
            cancelled = False
            while True:
                event = reply.event()
                if event is None:
                    if not cancelled:
                        self.violate("an event stream ended without the call's answer", "", line.category, body, "")
                    return []
                if event.get("method") == "elicitation/create":
                    cancelled = self.answer_form(event, line, session)
                elif "method" not in event:
                    if event.get("id") != line.rid:
                        self.violate("a stream's response has the wrong id", str(event.get("id")), line.category, body, event)
                    if error_of(event) == INTERNAL_ERROR:
                        self.violate("an internal error (-32603)", "", line.category, body, event)
                    return []
        finally:
            reply.close()

    def answer_form(self, form: Message, call: Line, session: Optional[str]) -> bool:
        """Answer a form by a policy; whether the call was cancelled instead."""
        policy = self.rng.choice(HTTP_POLICIES)
        self.count(f"form: {policy}")
        if policy == "interleave":
            reply = http_post(self.port, encode(request(self.next_rid(), "ping")).strip(), self.headers(session))
            got = reply.body()
            if reply.status != 200 or b'"result": {}' not in got:
                self.violate("a ping while a form waits is not answered", str(reply.status), "form", b"ping", got)
        if policy == "cancel_call":
            message: Message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": call.rid}}
        elif policy == "error":
            message = {"jsonrpc": "2.0", "id": form["id"], "error": {"code": -32000, "message": CLIENT_ERROR}}
        else:
            message = {"jsonrpc": "2.0", "id": form["id"], "result": elicit_result(policy, form.get("params"), self.rng)}
        reply = http_post(self.port, encode(message).strip(), self.headers(session))
        got = reply.body()
        if reply.status != 202:
            self.violate("the client's answer to a form is not 202", str(reply.status), "form", encode(message), got)
        return policy == "cancel_call"


def idle_sockets_check(run: HttpSoak) -> Dict[str, Any]:
    """While IDLE_SOCKETS sockets are open and silent (and one trickles), a
    client completes a call through a form: the time it takes."""
    import socket

    idle = [socket.create_connection(("127.0.0.1", run.port), timeout=TIMEOUT) for _ in range(IDLE_SOCKETS)]
    idle[0].sendall(b"POST /mcp HTTP/1.1\r\nHo")  # and then nothing more
    try:
        started = time.monotonic()
        session = run.session(LATEST, True)
        call = encode(request("idle-call", "tools/call", {"name": TOOL, "arguments": {"questions": [QUESTIONS[0]]}}))
        reply = http_post(run.port, call.strip(), run.headers(session))
        form = reply.event() or {}
        answer = {"jsonrpc": "2.0", "id": form.get("id"), "result": elicit_result("accept", form.get("params"), run.rng)}
        http_post(run.port, encode(answer).strip(), run.headers(session)).body()
        result = reply.event() or {}
        reply.close()
        seconds = time.monotonic() - started
    finally:
        for sock in idle:
            sock.close()
    answered = "The user answered" in text_of(result.get("result"))
    if not answered or seconds >= 1.0:
        run.violate("a client with 20 idle sockets open did not complete its call within a second",
                    f"{seconds:.3f} s, answered: {answered}", "idle sockets", call, result)
    return {"idle_sockets": IDLE_SOCKETS, "call_seconds": round(seconds, 3), "answered": answered}


def soak_http(askq: str, python: str, seed: int, lines: int, max_seconds: float) -> int:
    """The mix over HTTP; the exit status."""
    setter = getattr(sys, "set_int_max_str_digits", None)
    if setter is not None:
        setter(0)
    port = free_port()
    child = Child([python, askq, "serve", "--http", "--port", str(port), "--token", HTTP_TOKEN], os.path.dirname(askq))
    child.outgoing.put(None)  # nothing on stdin
    wait_for_port(port)
    run = HttpSoak(port, child, random.Random(seed + 1), max_seconds)
    make = schedule(Gen(random.Random(seed)))
    n = 0
    while run.sent < lines and time.monotonic() < run.deadline:
        run.run(make(n))
        n += 1
    idle = idle_sockets_check(run)
    memory = child.rss()
    child.proc.send_signal(signal.SIGINT)
    status = child.finish(TIMEOUT)
    if b"Traceback" in child.stderr:
        at = child.stderr.index(b"Traceback")
        run.violate("a traceback on stderr", "", "end", b"", bytes(child.stderr[at:at + 600]))
    if status != 0:
        run.violate("serve --http does not exit 0 on Ctrl-C", str(status), "end", b"", "")
    print_http_summary(run, idle, memory, seed)
    return 0 if not run.violations and run.sent >= lines else 1


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int) -> None:
    import socket

    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"soak_mcp: serve --http does not listen on port {port}")


def print_http_summary(run: HttpSoak, idle: Dict[str, Any], memory: Dict[str, int], seed: int) -> None:
    out = sys.stdout.write
    seconds = time.monotonic() - run.started
    times = sorted(run.seconds) or [0.0]
    out(f"soak_mcp --http: {run.sent} POSTs (seed {seed}) in {seconds:.2f} s: median"
        f" {1000 * times[len(times) // 2]:.3f} ms, p99 {1000 * times[int(len(times) * 0.99)]:.3f} ms per POST\n")
    samples = ", ".join(f"{sent}: {rss}" for sent, rss in run.memory)
    out(f"server VmRSS kB by POSTs sent: {samples or 'n/a'}; at the end {memory.get('VmRSS')},"
        f" peak (VmHWM) {memory.get('VmHWM')}\n")
    out(f"a call through a form with {idle['idle_sockets']} idle sockets open: {idle['call_seconds']} s"
        f" (answered: {idle['answered']})\n")
    hostile = {name: count for name, count in run.counts.items() if name.startswith(("hostile:", "form:", "event"))}
    out("by kind: " + ", ".join(f"{name} {count}" for name, count in sorted(hostile.items())) + "\n")
    out(f"\nviolations: {len(run.violations)}\n")
    for kind, count in sorted(run.kinds.items(), key=lambda item: -item[1]):
        out(f"{count:>7}  {kind}\n")
    for number, violation in enumerate(run.violations[:20], 1):
        out(f"{number:>3}. [{violation.category}] {violation.kind} ({violation.detail})\n"
            f"     sent: {violation.sent}\n     got:  {violation.response}\n")


# ---------------------------------------------------------------------------
# Report


def summary(run: Soak, end: Dict[str, Any], command: List[str], seed: int) -> Dict[str, Any]:
    seconds = time.monotonic() - run.started
    examples: Dict[str, Dict[str, str]] = {}
    for violation in run.violations:
        examples.setdefault(violation.kind, violation.as_dict())
    exchanges = sorted(run.exchanges) or [0.0]
    return {
        "command": command, "seed": seed, "lines": run.sent, "fences": run.fences, "seconds": round(seconds, 2),
        "ms_per_line": round(1000 * seconds / max(1, run.sent), 3),
        "ms_per_exchange_median": round(1000 * exchanges[len(exchanges) // 2], 3),
        "ms_per_exchange_p99": round(1000 * exchanges[int(len(exchanges) * 0.99)], 3),
        "stopped": run.stopped, "exit_status": end["status"], "stderr_bytes": run.child.stderr_size,
        "memory_kB": {"VmRSS_every_1000_lines": run.memory, "VmRSS_end": end["VmRSS_end_kB"],
                      "VmHWM_peak": end["VmHWM_kB"]},
        "categories": {name: {"units": int(f[0]), "lines": int(f[1]), "violations": int(f[3]),
                              "ms_per_line": round(1000 * f[2] / max(1.0, f[1]), 3)}
                       for name, f in sorted(run.units.items())},
        "lines_by_kind": dict(sorted(run.lines_by_category.items())),
        "notes": dict(sorted(run.notes.items())),
        "violations": len(run.violations),
        "violation_kinds": dict(sorted(run.kinds.items(), key=lambda item: -item[1])),
        "first_violations": [violation.as_dict() for violation in run.violations[:20]],
        "example_of_each_kind": examples,
    }


def print_summary(report: Dict[str, Any]) -> None:
    out = sys.stdout.write
    out(f"soak_mcp: {' '.join(report['command'])}  (seed {report['seed']})\n")
    out(f"lines sent: {report['lines']} (+{report['fences']} fences) in {report['seconds']} s:"
        f" {report['ms_per_line']} ms per line; exchange median {report['ms_per_exchange_median']} ms,"
        f" p99 {report['ms_per_exchange_p99']} ms\n")
    if report["stopped"]:
        out(f"STOPPED EARLY: {report['stopped']}\n")
    memory = report["memory_kB"]
    samples = ", ".join(f"{lines}: {rss}" for lines, rss in memory["VmRSS_every_1000_lines"])
    out(f"server VmRSS kB by lines sent: {samples or 'n/a'}; at the end {memory['VmRSS_end']},"
        f" peak (VmHWM) {memory['VmHWM_peak']}\n")
    out(f"server exit status at the end of input: {report['exit_status']}; stderr {report['stderr_bytes']} bytes\n\n")
    out(f"{'category':<34}{'units':>7}{'lines':>8}{'violations':>12}{'ms/line':>10}\n")
    for name, figures in report["categories"].items():
        out(f"{name:<34}{figures['units']:>7}{figures['lines']:>8}{figures['violations']:>12}"
            f"{figures['ms_per_line']:>10}\n")
    out("\nlines by kind: " + ", ".join(f"{name} {count}" for name, count in report["lines_by_kind"].items()) + "\n")
    if report["notes"]:
        out("notes: " + ", ".join(f"{name} {count}" for name, count in report["notes"].items()) + "\n")
    print_violations(report)


def print_violations(report: Dict[str, Any]) -> None:
    out = sys.stdout.write
    out(f"\nviolations: {report['violations']}\n")
    for kind, count in report["violation_kinds"].items():
        out(f"{count:>7}  {kind}\n")
    for title, entries in (("first violations", report["first_violations"]),
                           ("one example of each kind", list(report["example_of_each_kind"].values()))):
        if entries:
            out(f"\n{title}:\n")
        for number, entry in enumerate(entries, 1):
            detail = f" ({entry['detail']})" if entry["detail"] else ""
            out(f"{number:>3}. [{entry['category']}] {entry['kind']}{detail}\n"
                f"     sent: {entry['sent']}\n     got:  {entry['response']}\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # as a background job without job control: the
        signal.signal(signal.SIGINT, signal.default_int_handler)  # servers it starts must still take their Ctrl-C
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the root, above tools/
    parser.add_argument("--askq", default=os.path.join(here, "askq.py"), help="the askq.py to serve")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs it")
    parser.add_argument("--lines", type=int, default=10_000, help="lines to send (default 10,000)")
    parser.add_argument("--quick", action="store_true", help="a few hundred lines (300)")
    parser.add_argument("--seed", type=int, default=20251125, help="the seed of the mix")
    parser.add_argument("--max-seconds", type=float, help="stop after this long (default 900; 120 with --quick)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--http", action="store_true", help="over HTTP: serve --http, one POST per message")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.askq):
        parser.error(f"no such file: {args.askq}")
    if args.http:
        limit = args.max_seconds if args.max_seconds is not None else (120.0 if args.quick else 900.0)
        return soak_http(os.path.abspath(args.askq), args.python, args.seed, 300 if args.quick else args.lines, limit)
    command = [args.python, os.path.abspath(args.askq), "serve"]
    child = Child(command, os.path.dirname(os.path.abspath(args.askq)))
    try:
        limit = args.max_seconds if args.max_seconds is not None else (120.0 if args.quick else 900.0)
        run = soak(child, args.seed, 300 if args.quick else args.lines, limit)
        end = finish(run, child)
    finally:
        if child.proc.poll() is None:
            child.proc.kill()
    report = summary(run, end, command, args.seed)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    else:
        print_summary(report)
    return 0 if not report["violations"] and not report["stopped"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Soak test of askq's web page: SPEC 10's rules under hostile traffic.

    python tools/soak_web.py                      # 1,000 requests, seed 1
    python tools/soak_web.py --quick              # a few dozen, for the test suite
    python tools/soak_web.py --requests 5000 --seed 7 --askq ../other/askq.py

It starts ``python askq.py ask example_args.json --web --port 0`` (the
askq.py and example_args.json beside this script unless told otherwise),
reads the URL with its one-time token that the CLI prints on stderr, and
sends seeded random requests over raw sockets, to loopback only: no token, a
wrong one, the token in the query, in a form field and as a Bearer header;
foreign, folded, empty, missing and duplicate Host headers; every method on
every path; oversized, lying and malformed Content-Length; malformed forms
and JSON; idle and trickling sockets held open meanwhile; clients that reset
or half-close.  Each request's expected status follows SPEC 10's order of
checks: more than one Host 400; a Host that is not an IP literal or
localhost, optionally with ``:digits``, 403; an unknown path 404; a method
the path does not take 405; a body over MAX_PAYLOAD_BYTES 413 (before it is
read); a missing or wrong token 403.  No request with the valid token ever
submits or dismisses, until the end; forms that send nothing (the script's
draft, a dismissal's first step, the way back from it) are 200.

Then it times the person's ``GET /?token=...`` while 1, 5 and 20 idle
sockets are held open (SPEC: under about a second), sends the person's real
submission (built from ``GET /questions``), checks the grace period (409 for
later submissions, each told that its own answers were not sent, the "sent"
page for ``GET /``), that the CLI exits 0 and
prints the result, and that its stderr holds no Python traceback.

Exit status: 0 when every request was answered by the rules, 1 when any was
not, 2 when the soak could not run at all.  Every phase is bounded in time.
"""

import argparse
import ipaddress
import json
import os
import random
import re
import select
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)
from urllib.parse import quote, urlsplit

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the root, above tools/
MAX_PAYLOAD_BYTES = 1024 * 1024  # askq's bound on a body (SPEC 5.7, 10)
ROUTES: Dict[str, Tuple[str, ...]] = {"/": ("GET", "POST"), "/questions": ("GET",), "/answers": ("POST",),
                                      "/dismiss": ("POST",), "/follow-up": ("POST",)}
LATENCY_LIMIT_S = 1.5  # SPEC 10: "never holds up another request by more than a second", plus slack
RESPONSE_WAIT_S = 8.0  # how long one request waits for its answer
OVERSIZE_WAIT_S = 3.0  # how long a 413 may take when the body is never sent
GRACE_S = 2.0  # SPEC 10: later submissions are answered 409 for at least this long
EXIT_WAIT_S = 30.0  # how long the CLI may take to exit after the submission
IDLE_LEVELS = (1, 5, 20)
MAX_HELD = 8  # sockets held open at once in the random phase
TRACEBACK_MARKS = ("Traceback (most recent call last)", "Exception occurred during processing of request",
                   "Exception in thread")
FALLBACK_ANSWERS: Dict[str, Any] = {"q0": "PostgreSQL", "q1": ["Unit tests"]}

Status = Union[int, str]  # an HTTP status, or what happened instead ("closed", "timeout", ...)
Reply = Tuple[Status, str, bytes]  # status, status line, body
Probe = Tuple[Status, float, int]  # the person's GET: status, seconds, idle sockets still open when it was sent


# ---------------------------------------------------------------------------
# What is sent, and what it must get


@dataclass
class Target:
    """Where the page listens, and its token."""

    host: str
    port: int
    token: str

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass
class Case:
    """One request: what goes on the wire, and the statuses that obey SPEC 10."""

    category: str
    method: str = "GET"
    path: str = "/"
    query: str = ""
    host_lines: List[str] = field(default_factory=list)
    host_kind: str = "local"  # local, foreign or duplicate
    headers: List[str] = field(default_factory=list)
    body: bytes = b""
    length: Optional[str] = None  # Content-Length as sent; None: len(body) when a body is expected
    length_delta: int = 0  # a lying Content-Length: this much more (or less) than the body
    token_ok: bool = False
    mode: str = "normal"
    cut: int = -1  # for resets: bytes sent before the reset (-1: all)
    hold_s: float = 0.0  # for held sockets
    expect: FrozenSet[Status] = frozenset()
    rule: str = ""
    timed: bool = True  # whether a slow answer counts as being held up


@dataclass
class Violation:
    kind: str
    request: str
    expected: str
    got: str


@dataclass
class HoldResult:
    kind: str
    outcome: str
    status: Status
    seconds: float


def declared_length(case: Case) -> Optional[int]:
    """The Content-Length the server is told, as a number (None: none or not a number)."""
    if case.length is None or not re.fullmatch(r"[0-9]+", case.length.strip()):
        return None
    return int(case.length)


def judge(case: Case) -> Tuple[FrozenSet[Status], str]:
    """The status SPEC 10's order of checks gives this request, and the rule that decides it."""
    if case.host_kind == "duplicate":
        return frozenset({400}), "more than one Host -> 400"
    if case.host_kind == "foreign":
        return frozenset({403}), "foreign, empty or missing Host -> 403"
    if case.path not in ROUTES:
        return frozenset({404}), "unknown path -> 404"
    if case.method not in ROUTES[case.path]:
        return frozenset({405}), "method not allowed on the path -> 405"
    if (declared_length(case) or 0) > MAX_PAYLOAD_BYTES:
        return frozenset({413}), "Content-Length over MAX_PAYLOAD_BYTES -> 413"
    if not case.token_ok:
        return frozenset({403}), "missing or wrong token -> 403"
    if case.method == "GET":
        return frozenset({200}), "valid token, GET -> 200"
    if case.path == "/" and any(case.body.endswith(form) for form in WAITING_FORMS):
        return frozenset({200}), "valid token, a draft, a dismissal's first step or the way back -> 200"
    return frozenset({400}), "valid token, answers that collect_answers refuses -> 400"


def finish(case: Case) -> Case:
    """Fill in the Content-Length and the expected statuses (unless a generator set them)."""
    if case.length is None and (case.body or case.method.upper() not in ("GET", "HEAD")):
        case.length = str(len(case.body) + case.length_delta)
    if not case.expect:
        case.expect, case.rule = judge(case)
    return case


def raw_request(case: Case) -> bytes:
    target = case.path + ("?" + case.query if case.query else "")
    lines = [f"{case.method} {target} HTTP/1.1", *case.host_lines, *case.headers]
    if case.length is not None:
        lines.append(f"Content-Length: {case.length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + case.body


def describe(case: Case) -> str:
    """The request, short, for the report."""
    first = f"{case.method} {case.path}{'?' + case.query if case.query else ''}"
    parts = [first[:90], repr(case.host_lines)[:80] if case.host_lines else "(no Host line)"]
    parts += [h[:60] for h in case.headers if h.startswith(("Authorization", "Content-Type", "Content-Length"))]
    if case.length is not None:
        parts.append(f"Content-Length: {case.length[:24]} (body {len(case.body)} bytes)")
    if case.body:
        parts.append(f"body {case.body[:40]!r}")
    if case.mode != "normal":
        parts.append(f"[{case.mode}]")
    return " | ".join(parts)


def status_word(status: Status) -> str:
    return str(status)


# ---------------------------------------------------------------------------
# The random requests


@dataclass
class Gen:
    """What the generators draw from."""

    rng: random.Random
    target: Target
    quick: bool
    combos: Iterator[Tuple[str, str]]


METHODS = ("GET", "POST", "PUT", "DELETE", "TRACE", "PROPFIND", "PATCH", "OPTIONS", "HEAD", "get", "post",
           "FOOBAR", "G3T!")
PATHS = ("/", "/questions", "/answers", "/dismiss", "/follow-up", "/nope", "/questions/", "/index.html", "/askq.py",
         "/example_args.json", "/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd")
ALLOWED = tuple((m, p) for p, methods in ROUTES.items() for m in methods)
ENDING = ("/dismiss", "/follow-up")  # a valid token there ends the page, whatever the body
TOKEN_SAFE = tuple(combo for combo in ALLOWED if combo[1] not in ENDING)  # a valid token here never ends the page
REFUSED_FORMS = (b"", b"q:q1=Unit+tests", b"q:q1=Lint&text:q2=soak", b"%%%&&==&", b"=&=&=", b"q:q9=x&q:q1",
                 b"\xff\xfe\x00q:q1=Lint", b"a=" + b"%zz" * 200, b"text:q2=" + b"b" * 3000, b"q:q1=&other:q1=",
                 b"action=nonsense&q:q1=Lint", b"note:q0=a+note+alone&q:q1=Lint&text:q2=soak")
# Forms that ask for a step that sends nothing: the script's draft, the first
# step of a dismissal, and the way back from it.  Each is 200 and the page waits on.
WAITING_FORMS = (b"action=draft&q:q1=Lint&note:q0=n", b"action=draft", b"action=dismiss&q:q0=SQLite",
                 b"action=back&text:q2=soak")
REFUSED_JSON = (b"", b"{", b"}", b"null", b"[]", b"{}", b"1e400", b"NaN", b"not json", b"\xff\xfe\xfd",
                b'{"q1": ["Unit tests"]}', b'{"q2": "soak"}', b'{"q9": "x"}', b"[null, [\"Lint\"]]",
                b'{"answers": {"q1": {"answers": ["Lint"]}}}', b'{"q1": ', b'"{\\"q1\\": [\\"Lint\\"]}"',
                b"[" * 50000, b'{"a":' * 20000, b'{"q1": ["Lint"], "q1": ["Lint"]}')


def local_hosts(port: int) -> List[str]:
    return ["127.0.0.1", f"127.0.0.1:{port}", "localhost", f"localhost:{port}", "[::1]", f"[::1]:{port}"]


def foreign_hosts(port: int) -> List[List[str]]:
    """Host header lines that SPEC 10 calls foreign (an empty list: no Host at all)."""
    values = ["evil.com", f"evil.com:{port}", "localhost:80@evil.com", f"localhost:{port}@evil.com",
              "127.0.0.1:evil.com", "[::1].evil.com", "[::1]:evil.com", "localhost.evil.com",
              "127.0.0.1.evil.com", "127.0.0.1, evil.com", "127.0.0.1 evil.com", f"127.0.0.1:{port}:{port}",
              "localhost:http", "localhost:-1", "localhost:+80", "127.0.0.1:", ""]
    lines = [[f"Host: {value}"] for value in values]
    lines += [["Host: 127.0.0.1\r\n evil.com"], ["Host:\r\n 127.0.0.1"], [f"Host: localhost\r\n\t:{port}"],
              ["X-Note: yes\r\n Host: 127.0.0.1"], []]
    return lines


def duplicate_hosts(port: int) -> List[List[str]]:
    return [["Host: 127.0.0.1", "Host: 127.0.0.1"], [f"Host: 127.0.0.1:{port}", "host: localhost"],
            ["Host: 127.0.0.1", "Host: evil.com"], ["Host: evil.com", "Host: 127.0.0.1"],
            ["Host: localhost", "X-A: b", "HOST: localhost"], ["Host: [::1]", "Host: "]]


def method_path_cycle(rng: random.Random) -> Iterator[Tuple[str, str]]:
    """Every method on every path, in a seeded order, again and again."""
    combos = [(m, p) for m in METHODS for p in PATHS]
    while True:
        rng.shuffle(combos)
        yield from combos


def base(g: Gen, category: str, method: str, path: str) -> Case:
    name = g.rng.choice(("Host", "Host", "host", "HOST"))
    case = Case(category, method, path, host_lines=[f"{name}: {g.rng.choice(local_hosts(g.target.port))}"])
    case.headers.append(g.rng.choice(("Connection: close", "Connection: close", "User-Agent: soak")))
    return case


def add_body(case: Case, g: Gen) -> None:
    """A body that collect_answers always refuses: q0, a required question, is never answered."""
    if case.method.upper() in ("GET", "HEAD") and g.rng.random() < 0.8:
        return
    if case.path == "/answers":
        case.body = g.rng.choice(REFUSED_JSON)
        case.headers.append("Content-Type: application/json")
    else:
        case.body = g.rng.choice(REFUSED_FORMS + (WAITING_FORMS if g.rng.random() < 0.3 else ()))
        case.headers.append("Content-Type: application/x-www-form-urlencoded")


def wrong_tokens(token: str, rng: random.Random) -> List[str]:
    fake = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
                   for _ in token)
    return ["", "x", token[:-1], token + "x", token[1:], token.swapcase(), "A" * len(token), fake, "%00",
            "t%C3%B6k%C3%A9n", "../../etc/passwd"]


def set_token(case: Case, how: str, g: Gen) -> None:
    """Put a token in the request: how is none, wrong_*, or valid_* (query, bearer or form)."""
    token = g.target.token
    if how.startswith("valid") and case.path in ENDING:  # never end the page before the end
        how = "wrong" + how[5:]
    value = token if how.startswith("valid") else g.rng.choice(wrong_tokens(token, g.rng))
    place = how.partition("_")[2]
    if place == "form" and not any(h.endswith("x-www-form-urlencoded") for h in case.headers):
        place = "query"
    if how == "none":
        case.query = g.rng.choice(("", "", "foo=bar", "tok=" + token))
    elif place == "query":
        case.query = "token=" + value
    elif place == "bearer":
        choices = [f"Authorization: Bearer {value}"] * 3
        if value != token:
            choices += ["Authorization: Basic dG9rZW46dG9rZW4=", "Authorization: Bearer"]
        case.headers.append(g.rng.choice(choices))
    else:
        case.body = f"token={value}&".encode("latin-1") + case.body
    case.token_ok = how.startswith("valid")


def random_token(case: Case, g: Gen) -> None:
    kind = g.rng.choice(("none", "wrong", "valid"))
    set_token(case, "none" if kind == "none" else f"{kind}_{g.rng.choice(('query', 'bearer', 'form'))}", g)


def gen_no_token(g: Gen) -> Case:
    case = base(g, "no token", *g.rng.choice(ALLOWED))
    add_body(case, g)
    set_token(case, "none", g)
    return case


def gen_wrong_token(g: Gen) -> Case:
    case = base(g, "wrong token", *g.rng.choice(ALLOWED))
    add_body(case, g)
    set_token(case, "wrong_" + g.rng.choice(("query", "bearer", "form")), g)
    return case


def gen_valid_token(place: str) -> Callable[[Gen], Case]:
    def generate(g: Gen) -> Case:
        combos = [("POST", "/")] if place == "form" else TOKEN_SAFE
        case = base(g, f"valid token in {place}", *g.rng.choice(combos))
        add_body(case, g)
        set_token(case, "valid_" + place, g)
        return case

    return generate


def host_case(g: Gen, category: str) -> Case:
    """Mostly a request that only its Host refuses (the valid token, a path and method it takes)."""
    if g.rng.random() < 0.6:
        case = base(g, category, *g.rng.choice(TOKEN_SAFE))
        add_body(case, g)
        set_token(case, "valid_" + g.rng.choice(("query", "bearer")), g)
    else:
        case = base(g, category, g.rng.choice(METHODS), g.rng.choice(PATHS))
        add_body(case, g)
        random_token(case, g)
    return case


def gen_foreign_host(g: Gen) -> Case:
    case = host_case(g, "foreign Host")
    case.host_lines, case.host_kind = g.rng.choice(foreign_hosts(g.target.port)), "foreign"
    return case


def gen_duplicate_host(g: Gen) -> Case:
    case = host_case(g, "duplicate Host")
    case.host_lines, case.host_kind = g.rng.choice(duplicate_hosts(g.target.port)), "duplicate"
    return case


def gen_method_path(g: Gen) -> Case:
    case = base(g, "method x path", *next(g.combos))
    add_body(case, g)
    random_token(case, g)
    return case


def gen_oversize(g: Gen) -> Case:
    """Content-Length over the bound (413 before the body is read), or exactly at it (not 413)."""
    method, path = g.rng.choice(ALLOWED)
    case = base(g, "oversized Content-Length", method, path)
    random_token(case, g)
    if method == "POST" and g.rng.random() < 0.15:
        case.category, case.mode, case.timed = "Content-Length at the bound", "normal", False
        pad = b"junk=" if path == "/" else b'{"q9": "'
        case.body = pad + b"a" * (MAX_PAYLOAD_BYTES - len(pad) - (0 if path == "/" else 2))
        case.body += b"" if path == "/" else b'"}'
        case.headers.append("Content-Type: " + ("application/x-www-form-urlencoded" if path == "/"
                                                else "application/json"))
        return case
    case.length = g.rng.choice((str(MAX_PAYLOAD_BYTES + 1), str(2 * MAX_PAYLOAD_BYTES), str(100 << 20),
                                str(10 ** 15), "9" * 30))
    case.body, case.timed = b"", False
    case.mode = g.rng.choice(("oversize_wait", "oversize_stream"))
    return case


def gen_lying(g: Gen) -> Case:
    """A Content-Length shorter or longer than the body that follows."""
    method, path = g.rng.choice((("POST", "/"), ("POST", "/answers")))
    case = base(g, "lying Content-Length", method, path)
    add_body(case, g)
    case.body = case.body or b"q:q1=Lint&text:q2=soak"
    set_token(case, g.rng.choice(("none", "wrong_query", "valid_query", "valid_bearer")), g)
    case.headers = [h for h in case.headers if not h.startswith("Connection")]
    if g.rng.random() < 0.5:
        case.length_delta = -g.rng.randint(1, len(case.body))
        return case
    case.length_delta = g.rng.randint(1, 5000)
    allowed, case.rule = judge(case)
    case.expect = allowed | {400, 408, "closed"}
    case.rule += " (or 400/408/close: the body never came whole)"
    case.mode, case.timed = g.rng.choice(("lying_long_close", "hold_lying")), False
    case.hold_s = g.rng.uniform(1.0, 2.0) if g.quick else g.rng.uniform(2.0, 5.0)
    return case


def gen_bad_length(g: Gen) -> Case:
    case = base(g, "malformed Content-Length", *g.rng.choice((("POST", "/"), ("POST", "/answers"))))
    add_body(case, g)
    set_token(case, g.rng.choice(("none", "wrong_query", "valid_query")), g)
    value = g.rng.choice(("abc", "-1", "1.5", "0x10", "", "5, 5", " ", "١٢"))
    case.length = value.encode("utf-8").decode("latin-1")
    if g.rng.random() < 0.3:
        case.length, case.body = "5", b"hello"
        case.headers.append("Content-Length: 10")
    case.expect = frozenset({400, 403, 411, 413})
    case.rule = "malformed or conflicting Content-Length -> refused with 4xx (SPEC 10 is silent; RFC 9112: 400)"
    return case


def gen_bad_form(g: Gen) -> Case:
    case = base(g, "malformed form", "POST", "/")
    case.body = g.rng.choice(REFUSED_FORMS)
    case.headers.append("Content-Type: application/x-www-form-urlencoded" + g.rng.choice(("", "; charset=utf-8")))
    set_token(case, g.rng.choice(("none", "wrong_form", "valid_query", "valid_bearer", "valid_form")), g)
    return case


def gen_bad_json(g: Gen) -> Case:
    case = base(g, "malformed JSON", "POST", "/answers")
    case.body = g.rng.choice(REFUSED_JSON)
    case.headers.append(g.rng.choice(("Content-Type: application/json", "Content-Type: text/plain")))
    set_token(case, g.rng.choice(("none", "wrong_query", "valid_query", "valid_bearer")), g)
    return case


def gen_half_close(g: Gen) -> Case:
    case = base(g, "half-closed client", *g.rng.choice(ALLOWED))
    add_body(case, g)
    random_token(case, g)
    case.mode = "half_close"
    return case


def gen_reset(g: Gen) -> Case:
    """A client that resets: mid-headers, mid-body, before or during the response."""
    case = base(g, "reset by client", *g.rng.choice(TOKEN_SAFE))
    add_body(case, g)
    set_token(case, g.rng.choice(("valid_query", "wrong_query", "none")), g)
    case.mode = g.rng.choice(("reset", "reset", "reset_mid_response"))
    size = len(raw_request(finish(case)))
    case.cut = g.rng.choice((-1, g.rng.randint(1, max(1, size - 1))))
    if case.mode == "reset" and case.cut == -1 and case.length is not None and g.rng.random() < 0.5:
        case.length = str(len(case.body) + 500)  # the server waits for more body, then the reset
    case.expect, case.rule, case.timed = frozenset({"reset by client"}), "no traceback, no exit", False
    return case


def gen_idle(g: Gen) -> Case:
    case = base(g, "idle socket held open", "GET", "/")
    case.mode = g.rng.choice(("hold_silent", "hold_partial"))
    case.hold_s = g.rng.uniform(1.0, 1.5) if g.quick else g.rng.uniform(2.0, 5.0)
    case.expect, case.rule, case.timed = frozenset(), "never 5xx; others not held up", False
    return case


def gen_trickle(g: Gen) -> Case:
    case = gen_idle(g)
    case.category, case.mode = "trickling socket (a byte a second)", "hold_trickle"
    set_token(case, "wrong_query", g)
    return case


GENERATORS: Sequence[Tuple[Callable[[Gen], Case], int]] = (
    (gen_no_token, 6), (gen_wrong_token, 7), (gen_valid_token("query"), 5), (gen_valid_token("form"), 4),
    (gen_valid_token("bearer"), 4), (gen_foreign_host, 11), (gen_duplicate_host, 6), (gen_method_path, 20),
    (gen_oversize, 6), (gen_lying, 5), (gen_bad_length, 3), (gen_bad_form, 5), (gen_bad_json, 5),
    (gen_half_close, 3), (gen_reset, 5), (gen_idle, 3), (gen_trickle, 2))


def make_case(g: Gen) -> Case:
    generate = g.rng.choices([gen for gen, _ in GENERATORS], [w for _, w in GENERATORS])[0]
    return finish(generate(g))


# ---------------------------------------------------------------------------
# Raw sockets


def connect(target: Target, wait: float) -> socket.socket:
    return socket.create_connection((target.host, target.port), timeout=wait)


def send_all(sock: socket.socket, data: bytes) -> str:
    """Send; on failure say how it failed ("" when it did not)."""
    try:
        sock.sendall(data)
    except OSError as err:
        return type(err).__name__
    return ""


def reset(sock: socket.socket) -> None:
    """Close with RST: SO_LINGER on, zero seconds."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        sock.close()


def recv_some(sock: socket.socket, deadline: float) -> bytes:
    sock.settimeout(max(0.01, deadline - time.monotonic()))
    return sock.recv(65536)


def read_response(sock: socket.socket, deadline: float, head_only: bool = False) -> Reply:
    """Read one response: its status, status line and body (as far as Content-Length goes)."""
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            chunk = recv_some(sock, deadline)
            if not chunk:
                break
            buf += chunk
    except socket.timeout:
        if not buf:
            return f"timeout (no answer in {RESPONSE_WAIT_S:g} s)", "", b""
    except OSError as err:
        if not buf:
            return "reset" if isinstance(err, ConnectionResetError) else type(err).__name__, "", b""
    if not buf:
        return "closed", "", b""
    head, _, body = buf.partition(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    match = re.match(r"HTTP/\d\.\d (\d{3})", line)
    status: Status = int(match.group(1)) if match else f"garbled: {line[:40]!r}"
    if not head_only:
        body = read_body(sock, head, body, deadline)
    return status, line, body


def read_body(sock: socket.socket, head: bytes, body: bytes, deadline: float) -> bytes:
    match = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.IGNORECASE)
    want = int(match.group(1)) if match else 1 << 30
    try:
        while len(body) < want:
            chunk = recv_some(sock, deadline)
            if not chunk:
                break
            body += chunk
    except OSError:
        pass
    return body


def head_of(data: bytes) -> bytes:
    return data.partition(b"\r\n\r\n")[0] + b"\r\n\r\n"


def mode_normal(sock: socket.socket, case: Case, data: bytes, deadline: float) -> Reply:
    failed = send_all(sock, data)
    if case.mode in ("half_close", "lying_long_close"):
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    status, line, body = read_response(sock, deadline, case.method == "HEAD")
    if failed and not line:
        status = f"{status} after {failed} while sending"
    return status, line, body


def mode_oversize_wait(sock: socket.socket, case: Case, data: bytes, deadline: float) -> Reply:
    """Headers only: the 413 must come without the body ever being sent."""
    send_all(sock, head_of(data))
    status, line, body = read_response(sock, min(deadline, time.monotonic() + OVERSIZE_WAIT_S))
    if isinstance(status, str) and status.startswith("timeout"):
        status = f"no answer in {OVERSIZE_WAIT_S:g} s without the body (waiting for it?)"
    return status, line, body


def mode_oversize_stream(sock: socket.socket, case: Case, data: bytes, deadline: float) -> Reply:
    """A naive client: it writes its body (at most 64 KiB over the bound) before it reads;
    the 413 must still reach it, not a broken pipe."""
    failed = send_all(sock, head_of(data))
    chunk, sent = b"x" * 65536, 0
    total = min(declared_length(case) or 0, MAX_PAYLOAD_BYTES + len(chunk))
    while not failed and sent < total and time.monotonic() < deadline:
        failed = send_all(sock, chunk[:total - sent])
        sent += len(chunk[:total - sent])
    status, line, body = read_response(sock, deadline)
    if failed:
        status = f"{failed} while writing the body (got {status_word(status)} after {sent >> 10} KiB)"
    return status, line, body


def mode_reset(sock: socket.socket, case: Case, data: bytes, deadline: float) -> Reply:
    send_all(sock, data if case.cut < 0 else data[:case.cut])
    time.sleep(0.02)
    if case.mode == "reset_mid_response":
        try:
            recv_some(sock, time.monotonic() + 1.0)
        except OSError:
            pass
    reset(sock)
    return "reset by client", "", b""


MODES: Dict[str, Callable[[socket.socket, Case, bytes, float], Reply]] = {
    "normal": mode_normal, "half_close": mode_normal, "lying_long_close": mode_normal,
    "oversize_wait": mode_oversize_wait, "oversize_stream": mode_oversize_stream,
    "reset": mode_reset, "reset_mid_response": mode_reset,
}


def execute(target: Target, case: Case, wait: float = RESPONSE_WAIT_S) -> Tuple[Status, str, bytes, float]:
    """Send one request on a new connection; its status, status line, body and seconds."""
    data = raw_request(case)
    start = time.monotonic()
    try:
        sock = connect(target, wait)
    except OSError as err:
        return f"connect failed: {type(err).__name__}", "", b"", time.monotonic() - start
    try:
        status, line, body = MODES[case.mode](sock, case, data, start + wait)
    finally:
        sock.close()
    return status, line, body, time.monotonic() - start


class Holders:
    """Sockets held open in threads: silent, partial, trickling a byte a second, or a body that never comes."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.lock = threading.Lock()
        self.open = 0
        self.results: List[HoldResult] = []
        self.threads: List[threading.Thread] = []

    def open_count(self) -> int:
        with self.lock:
            return self.open

    def start(self, kind: str, data: bytes, hold_s: float, release: Optional[threading.Event] = None,
              sock: Optional[socket.socket] = None) -> None:
        """Hold a socket in a thread: a new one, or sock, already connected (and then counted open at once)."""
        if sock is not None:
            with self.lock:
                self.open += 1
        thread = threading.Thread(target=self._hold, args=(kind, data, hold_s, release, sock), daemon=True)
        self.threads.append(thread)
        thread.start()

    def join(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, end - time.monotonic()))
        self.threads = [t for t in self.threads if t.is_alive()]

    def _hold(self, kind: str, data: bytes, hold_s: float, release: Optional[threading.Event],
              sock: Optional[socket.socket]) -> None:
        start = time.monotonic()
        if sock is None:
            try:
                sock = connect(self.target, 2.0)
            except OSError as err:
                self._record(HoldResult(kind, "connect failed", type(err).__name__, 0.0))
                return
            with self.lock:
                self.open += 1
        try:
            outcome, status = self._watch(sock, kind, data, start + hold_s, release)
        finally:
            with self.lock:
                self.open -= 1
            sock.close()
        self._record(HoldResult(kind, outcome, status, time.monotonic() - start))

    def _watch(self, sock: socket.socket, kind: str, data: bytes, end: float,
               release: Optional[threading.Event]) -> Tuple[str, Status]:
        first, rest = (b"", data) if kind == "hold_trickle" else (data, b"")
        next_byte = time.monotonic()
        if first and send_all(sock, first):
            return "send failed", "send failed"
        while time.monotonic() < end and not (release is not None and release.is_set()):
            if rest and time.monotonic() >= next_byte:
                if send_all(sock, rest[:1]):
                    return "closed by the server (send failed)", "closed"
                rest, next_byte = rest[1:], next_byte + 1.0
            readable, _, _ = select.select([sock], [], [], 0.1)
            if readable:
                return self._ended(sock)
        return "held open until the soak closed it", "held"

    @staticmethod
    def _ended(sock: socket.socket) -> Tuple[str, Status]:
        try:
            data = sock.recv(4096)
        except OSError:
            return "reset by the server", "reset"
        if not data:
            return "closed by the server", "closed"
        match = re.match(rb"HTTP/\d\.\d (\d{3})", data)
        line = data.split(b"\r\n")[0][:40].decode("latin-1")
        return f"answered {line!r}", int(match.group(1)) if match else "garbled"

    def _record(self, result: HoldResult) -> None:
        with self.lock:
            self.results.append(result)


def held_kind_data(case: Case) -> bytes:
    if case.mode == "hold_silent":
        return b""
    if case.mode == "hold_partial":
        return raw_request(case)[:-2]  # the blank line that ends the headers never comes
    return raw_request(case)


# ---------------------------------------------------------------------------
# The soak


@dataclass
class Soak:
    """The run's state: the CLI, the page, what was sent and what broke the rules."""

    target: Target
    proc: "subprocess.Popen[bytes]"
    stderr: "StreamReader"
    stdout: "StreamReader"
    holders: Holders
    quick: bool
    counts: Dict[str, List[int]] = field(default_factory=dict)  # category: [sent, as expected, violations]
    violations: List[Violation] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    planned: int = 0
    sent: int = 0
    skipped_holds: int = 0

    def violate(self, kind: str, request: str, expected: str, got: str) -> None:
        self.violations.append(Violation(kind, request, expected, got))


class StreamReader:
    """Drains one of the CLI's pipes in a thread, so that it never blocks on a full pipe."""

    def __init__(self, stream: Any) -> None:
        self.lines: List[str] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            with self.lock:
                self.lines.append(raw.decode("utf-8", "replace"))

    def text(self) -> str:
        with self.lock:
            return "".join(self.lines)

    def wait_for(self, pattern: str, timeout: float) -> Optional["re.Match[str]"]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            match = re.search(pattern, self.text())
            if match or not self.thread.is_alive():
                return match or re.search(pattern, self.text())
            time.sleep(0.05)
        return None


def record(soak: Soak, case: Case, status: Status, line: str, body: bytes, elapsed: float, idle: int) -> None:
    """Count one answered request, and note every rule it broke."""
    counts = soak.counts.setdefault(case.category, [0, 0, 0])
    counts[0] += 1
    broken = []
    if status not in case.expect:
        broken.append((f"{case.rule}; got {status_word(status)}", line or status_word(status)))
    elif case.timed and elapsed > LATENCY_LIMIT_S:
        idle_text = f"{idle} held sockets open" if idle else "no held socket open at the time"
        broken.append((f"held up: answered after more than {LATENCY_LIMIT_S:g} s ({idle_text})",
                       f"{line} after {elapsed:.2f} s"))
    if status == 400 and case.rule.startswith("valid token") and case.path == "/answers" and not is_json_error(body):
        broken.append(("POST /answers refused without a JSON {\"error\": ...} body", f"{line} {body[:60]!r}"))
    for kind, got in broken:
        soak.violate(kind, describe(case), "/".join(map(status_word, sorted(case.expect, key=str))), got)
    counts[1 if not broken else 2] += 1


def is_json_error(body: bytes) -> bool:
    try:
        document = json.loads(body)
    except ValueError:
        return False
    return isinstance(document, dict) and isinstance(document.get("error"), str)


def run_random(soak: Soak, g: Gen, count: int, budget: float) -> None:
    """The random requests, one after another; held sockets go to threads and stay open meanwhile."""
    end = time.monotonic() + budget
    for index in range(count):
        if time.monotonic() > end:
            soak.notes.append(f"time budget ({budget:g} s) spent after {index} of {count} requests")
            return
        if soak.proc.poll() is not None:
            soak.violate("the CLI exited during the soak", f"after request {index}", "still serving",
                         f"exit code {soak.proc.returncode}")
            return
        case = make_case(g)
        if case.mode.startswith("hold_"):
            hold(soak, case)
            continue
        soak.sent += 1
        idle = soak.holders.open_count()
        status, line, body, elapsed = execute(soak.target, case)
        record(soak, case, status, line, body, elapsed, idle)


def hold(soak: Soak, case: Case) -> None:
    """Hold a socket open in a thread, unless MAX_HELD are open already (the page may bound them)."""
    if soak.holders.open_count() >= MAX_HELD:
        soak.skipped_holds += 1
        return
    soak.sent += 1
    soak.counts.setdefault(case.category, [0, 0, 0])[0] += 1
    soak.holders.start(case.mode, held_kind_data(case), case.hold_s)


def check_holders(soak: Soak, start: int, count: bool) -> None:
    """Held sockets: none may get a 5xx; in the random phase each counts as expected otherwise."""
    for result in soak.holders.results[start:]:
        category = {"hold_silent": "idle socket held open", "hold_partial": "idle socket held open",
                    "hold_trickle": "trickling socket (a byte a second)"}.get(result.kind, "lying Content-Length")
        bad = isinstance(result.status, int) and result.status >= 500
        if bad:
            soak.violate("held socket answered with a 5xx", f"[{result.kind}]", "no 5xx", result.outcome)
        if count:
            soak.counts.setdefault(category, [0, 0, 0])[2 if bad else 1] += 1


def probe_case(target: Target) -> Case:
    return Case("the person's GET", "GET", "/", f"token={target.token}", [f"Host: {target.authority}"],
                headers=["Connection: close"], token_ok=True)


def latency_phase(soak: Soak, probes: int) -> Dict[int, List[Probe]]:
    """The person's GET /?token=... while 1, 5 and 20 idle sockets are held open (fresh ones for each GET)."""
    return {level: [probe_with_idle(soak, level) for _ in range(probes)] for level in IDLE_LEVELS}


def probe_with_idle(soak: Soak, level: int) -> Probe:
    """Open level idle sockets (silent, partial, trickling), wait until all are open, then time the GET."""
    request = raw_request(finish(Case("idle", "GET", "/", "token=wrong", [f"Host: {soak.target.authority}"])))
    release = threading.Event()
    for index in range(level):  # one after another, paced: a burst would only measure the listen queue
        kind = ("hold_silent", "hold_partial", "hold_trickle")[index % 3]
        time.sleep(0.01)
        data = b"" if kind == "hold_silent" else request[:-2] if kind == "hold_partial" else request
        try:
            sock = connect(soak.target, 2.0)
        except OSError as err:
            soak.holders.results.append(HoldResult(kind, "connect failed", type(err).__name__, 0.0))
            continue
        soak.holders.start(kind, data, RESPONSE_WAIT_S + 5.0, release, sock)
    time.sleep(0.1)  # let the server accept them and start waiting on them
    try:
        return check_probe(soak, level)
    finally:
        release.set()
        soak.holders.join(5.0)


def check_probe(soak: Soak, level: int) -> Probe:
    case = probe_case(soak.target)
    still_open = soak.holders.open_count()
    status, line, _, elapsed = execute(soak.target, case)
    if status != 200 or elapsed > LATENCY_LIMIT_S:
        soak.violate(f"the person's GET held up by idle sockets (limit {LATENCY_LIMIT_S:g} s)",
                     f"{describe(case)} with {level} idle", f"200 within {LATENCY_LIMIT_S:g} s",
                     f"{line or status_word(status)} after {elapsed:.2f} s")
    return status, elapsed, still_open


# ---------------------------------------------------------------------------
# The end: the person's real submission, the grace period, the CLI's exit


@dataclass
class Final:
    answers: Dict[str, Any] = field(default_factory=dict)
    line: str = ""
    accepted: bool = False
    grace: List[Tuple[str, str, str]] = field(default_factory=list)  # what, expected, got
    exit_code: Optional[int] = None
    printed: bool = False
    traceback: str = ""


def build_answers(soak: Soak) -> Dict[str, Any]:
    """A valid answer for every required question, from GET /questions (else the example's)."""
    case = finish(Case("final", "GET", "/questions", headers=["Connection: close",
                       f"Authorization: Bearer {soak.target.token}"], host_lines=[f"Host: {soak.target.authority}"]))
    status, _, body, _ = execute(soak.target, case)
    try:
        questions = json.loads(body)["questions"] if status == 200 else []
    except (ValueError, KeyError, TypeError):
        questions = []
    answers: Dict[str, Any] = {}
    for question in questions:
        labels = [option["label"] for option in question.get("options") or []]
        if not question.get("required", True) or "id" not in question:
            continue
        if question.get("question_type") == "MultiChoice" or question.get("multiSelect"):
            answers[question["id"]] = labels[:1]
        else:
            answers[question["id"]] = labels[0] if labels else "soak test"
    return answers or dict(FALLBACK_ANSWERS)


def submission(target: Target, path: str, body: bytes, token: Optional[str] = None) -> Case:
    kind = "application/json" if path != "/" else "application/x-www-form-urlencoded"
    case = Case("final", "POST", path, f"token={target.token if token is None else token}",
                [f"Host: {target.authority}"], headers=["Connection: close", f"Content-Type: {kind}"], body=body)
    return finish(case)


def final_phase(soak: Soak) -> Final:
    final = Final(answers=build_answers(soak))
    body = json.dumps(final.answers).encode()
    status, final.line, reply, _ = execute(soak.target, submission(soak.target, "/answers", body))
    accepted_at = time.monotonic()
    try:
        final.accepted = status == 200 and json.loads(reply).get("status") == "answered"
    except (ValueError, AttributeError):
        final.accepted = False
    if not final.accepted:
        soak.violate("the person's submission was not accepted", f"POST /answers {body!r}", "200, answered",
                     final.line or status_word(status))
    else:
        grace_checks(soak, final, body, accepted_at)
    wait_exit(soak, final)
    return final


def grace_checks(soak: Soak, final: Final, body: bytes, accepted_at: float) -> None:
    """Within 2 s of the submission: the same submission again gets the same result (SPEC 12), other
    submissions 409, GET / the page that says they were sent."""
    target = soak.target
    form = "&".join(f"q:{qid}={quote(v if isinstance(v, str) else v[0])}" for qid, v in final.answers.items())
    checks = [("POST /answers again", submission(target, "/answers", body), 200),
              ("POST / (the form) again", submission(target, "/", form.encode()), 200),
              ("POST /answers, other answers", submission(target, "/answers", b'{"q0": "another answer"}'), 409),
              ("POST /dismiss", submission(target, "/dismiss", b"{}"), 409),
              ("POST /follow-up", submission(target, "/follow-up", b"{}"), 409),
              ("POST /answers, wrong token", submission(target, "/answers", body, "wrong"), 403),
              ("GET / (the page says the answers were sent)", probe_case(target), 200)]
    for what, case, expected in checks:
        if time.monotonic() - accepted_at > GRACE_S:
            soak.notes.append(f"grace check skipped (past {GRACE_S:g} s): {what}")
            continue
        status, line, reply, _ = execute(target, case, wait=2.0)
        good = status == expected and (expected != 200 or b"<fieldset" not in reply) and late_reply_is_honest(what, status, reply)
        final.grace.append((what, str(expected), line or status_word(status)))
        if not good:
            soak.violate("grace period (SPEC 10 and 12: the same again, else 409, for at least 2 s)", what,
                         str(expected), (line or status_word(status)) + ("" if status != 200 else " with the form"))


def late_reply_is_honest(what: str, status: Status, reply: bytes) -> bool:
    """A 409 says that this request's own answers were not sent and gives them back (SPEC 10);
    the form sent again with the same answers is told that they were sent."""
    if status != 409:
        return True
    if what.startswith("POST / "):
        return b"were sent" in reply and b"<fieldset" not in reply
    try:
        document = json.loads(reply)
    except ValueError:
        return False
    return str(document.get("error", "")).startswith("Conflict: your answers were not sent") and "yours" in document


def wait_exit(soak: Soak, final: Final) -> None:
    try:
        final.exit_code = soak.proc.wait(EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        soak.violate("the CLI did not exit after the submission", "", f"exit within {EXIT_WAIT_S:g} s",
                     "still running")
        return
    soak.stdout.thread.join(5.0)
    try:
        document = json.loads(soak.stdout.text())
        final.printed = document.get("status") == "answered" and "result" in document
    except (ValueError, AttributeError):
        final.printed = False
    if final.exit_code != 0 or not final.printed:
        soak.violate("the CLI's exit after the submission", "", "exit 0 and the result on stdout",
                     f"exit {final.exit_code}, stdout {soak.stdout.text()[:120]!r}")


def find_traceback(soak: Soak) -> str:
    """The tracebacks on the CLI's stderr, summed up, with the first in full; or ""."""
    soak.stderr.thread.join(5.0)
    text = soak.stderr.text()
    places = [text.find(mark) for mark in TRACEBACK_MARKS if mark in text]
    if not places:
        return ""
    lines = text.splitlines()
    ends = [line for before, line in zip(lines, lines[1:])
            if before.startswith(" ") and line[:1] not in (" ", "") and not line.startswith(TRACEBACK_MARKS)]
    tally: Dict[str, int] = {}
    for line in ends:
        tally[line[:160]] = tally.get(line[:160], 0) + 1
    summary = "; ".join(f"{line} (x{count})" for line, count in tally.items())
    return f"{text.count(TRACEBACK_MARKS[0])} tracebacks: {summary}\n" + "\n".join(first_traceback(text))


def first_traceback(text: str) -> List[str]:
    """The lines of the first traceback, up to and with its exception line."""
    lines = text.splitlines()
    start = min(i for i, line in enumerate(lines) if line.startswith(TRACEBACK_MARKS))
    shown: List[str] = []
    for line in lines[start:start + 80]:
        shown.append(line)
        if shown[1:] and line[:1] not in (" ", "") and not line.startswith(TRACEBACK_MARKS):
            break
    return shown


# ---------------------------------------------------------------------------
# The report


def print_report(soak: Soak, figures: Dict[int, List[Probe]], final: Final, seconds: float,
                 shown: int = 20) -> None:
    out = sys.stdout
    out.write(f"soak_web: {soak.sent} of {soak.planned} random requests to {soak.target.authority};"
              f" the whole soak took {seconds:.1f} s\n")
    for note in soak.notes:
        out.write(f"  note: {note}\n")
    out.write("\nper category (sent, as the rules say, violations):\n")
    for category in sorted(soak.counts):
        sent, good, bad = soak.counts[category]
        out.write(f"  {category:40} {sent:5} {good:5} {bad:5}\n")
    print_held(soak)
    print_violations(soak, shown)
    print_latency(figures)
    print_final(final)


def print_held(soak: Soak) -> None:
    tally: Dict[str, int] = {}
    for result in soak.holders.results:
        key = f"{result.kind}: {re.sub(r' after .*', '', result.outcome)}"
        tally[key] = tally.get(key, 0) + 1
    if tally:
        sys.stdout.write("\nheld sockets, how they ended:\n")
        for key in sorted(tally):
            sys.stdout.write(f"  {tally[key]:5}  {key}\n")


def print_violations(soak: Soak, shown: int) -> None:
    out = sys.stdout
    out.write(f"\nviolations: {len(soak.violations)}\n")
    for index, violation in enumerate(soak.violations[:shown], 1):
        out.write(f"  {index:2}. {violation.request}\n      expected {violation.expected}; got {violation.got}\n")
    kinds: Dict[str, List[Violation]] = {}
    for violation in soak.violations:
        kinds.setdefault(violation.kind, []).append(violation)
    if kinds:
        out.write("\nviolations by kind (count, one example):\n")
    for kind, found in sorted(kinds.items(), key=lambda item: -len(item[1])):
        out.write(f"  {len(found):5}  {kind}\n         e.g. {found[0].request[:200]} -> {found[0].got[:100]}\n")


def print_latency(figures: Dict[int, List[Probe]]) -> None:
    out = sys.stdout
    out.write(f"\nthe person's GET /?token=... while idle sockets are held open (limit {LATENCY_LIMIT_S:g} s):\n")
    for level, runs in figures.items():
        times = [seconds for _, seconds, _ in runs]
        statuses = ",".join(sorted({status_word(status) for status, _, _ in runs}))
        still = min(still_open for _, _, still_open in runs)
        out.write(f"  {level:3} idle: statuses {statuses}; median {statistics.median(times) * 1000:.0f} ms,"
                  f" max {max(times) * 1000:.0f} ms over {len(runs)} GETs ({still}+ idle still open)\n")


def print_final(final: Final) -> None:
    out = sys.stdout
    out.write(f"\nfinal submission {json.dumps(final.answers)}: {final.line or 'no answer'};"
              f" accepted: {'yes' if final.accepted else 'NO'}\n")
    for what, expected, got in final.grace:
        out.write(f"  grace: {what}: expected {expected}, got {got}\n")
    out.write(f"CLI exit code: {final.exit_code}; result printed: {'yes' if final.printed else 'no'}\n")
    out.write(f"traceback on the CLI's stderr: {'YES' if final.traceback else 'no'}\n")
    if final.traceback:
        out.write("  " + final.traceback.replace("\n", "\n  ") + "\n")


# ---------------------------------------------------------------------------
# Running it


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Soak test of askq's web page: SPEC 10's rules under hostile traffic.")
    parser.add_argument("--askq", default=os.path.join(HERE, "askq.py"), help="the askq.py to soak")
    parser.add_argument("--args", default=os.path.join(HERE, "example_args.json"), help="the call to ask")
    parser.add_argument("--requests", type=int, default=None, help="random requests (default 1000; --quick 40)")
    parser.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    parser.add_argument("--host", default="127.0.0.1", choices=("127.0.0.1", "::1", "localhost"),
                        help="where the page listens: loopback only")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="time budget of the random requests (default 300; --quick 60)")
    parser.add_argument("--quick", action="store_true", help="a few dozen requests, for the test suite")
    parser.add_argument("--all", action="store_true", help="list every violation, not only the first 20")
    args = parser.parse_args(argv)
    args.requests = args.requests if args.requests is not None else 40 if args.quick else 1000
    args.max_seconds = args.max_seconds or (60.0 if args.quick else 300.0)
    return args


def start_cli(args: argparse.Namespace) -> Tuple["subprocess.Popen[bytes]", StreamReader, StreamReader]:
    backstop = args.max_seconds + 600  # the page's idle timeout: it ends by itself even if this script dies
    command = [sys.executable, args.askq, "ask", args.args, "--web", "--host", args.host, "--port", "0",
               "--timeout", f"{backstop:g}"]
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=os.path.dirname(os.path.abspath(args.askq)))
    return proc, StreamReader(proc.stdout), StreamReader(proc.stderr)


def find_target(stderr: StreamReader) -> Optional[Target]:
    """The page's address and token, from the URL the CLI prints; loopback only."""
    match = stderr.wait_for(r"(https?://\S+)", 20.0)
    if match is None:
        return None
    url = urlsplit(match.group(1))
    token = re.search(r"(?:^|&)token=([^&\s]+)", url.query)
    host = url.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not (token and url.port and loopback):
        return None
    return Target("127.0.0.1" if host == "localhost" else host, url.port, token.group(1))


def soak_run(args: argparse.Namespace, soak: Soak) -> int:
    start = time.monotonic()
    rng = random.Random(args.seed)
    g = Gen(rng, soak.target, args.quick, method_path_cycle(random.Random(args.seed + 1)))
    run_random(soak, g, args.requests, args.max_seconds)
    if soak.skipped_holds:
        soak.notes.append(f"{soak.skipped_holds} held sockets not opened: {MAX_HELD} were open already")
    soak.holders.join(15.0)
    check_holders(soak, 0, True)
    held = len(soak.holders.results)
    figures = latency_phase(soak, 1 if args.quick else 3)
    check_holders(soak, held, False)
    final = final_phase(soak) if soak.proc.poll() is None else Final()
    if final.exit_code is None and soak.proc.poll() is not None:
        soak.violate("the CLI exited before the submission", "", "still serving", f"exit {soak.proc.returncode}")
    final.traceback = find_traceback(soak)
    if final.traceback:
        soak.violate("a Python traceback on the CLI's stderr", "", "none", final.traceback.splitlines()[0])
    print_report(soak, figures, final, time.monotonic() - start, len(soak.violations) if args.all else 20)
    return 0 if not soak.violations else 1


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    missing = [path for path in (args.askq, args.args) if not os.path.isfile(path)]
    if missing:
        sys.stderr.write(f"soak_web: no such file: {', '.join(missing)}\n")
        return 2
    proc, stdout, stderr = start_cli(args)
    try:
        target = find_target(stderr)
        if target is None:
            sys.stderr.write(f"soak_web: no loopback URL with a token on the CLI's stderr:\n{stderr.text()}\n")
            return 2
        soak = Soak(target, proc, stderr, stdout, Holders(target), args.quick, planned=args.requests)
        code = soak_run(args, soak)
        sys.stdout.write(f"\nsoak_web: {'PASSED' if code == 0 else 'FAILED'} (seed {args.seed})\n")
        return code
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5.0)


if __name__ == "__main__":
    sys.exit(main())

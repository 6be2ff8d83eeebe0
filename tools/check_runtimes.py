"""Run the real agent runtimes against a stand-in model, and check what it is told.

A harness built on OpenCode, Codex or Claude Code answers that runtime's
question tool with ``askq.harness_answers()``; the runtime then turns the
answer into the tool result its model reads.  This script runs each real
runtime (installed at pinned versions into throw-away directories) against a
small HTTP server on 127.0.0.1 that stands in for its model API.  The
stand-in model calls the runtime's question tool, the script answers it as a
person did (answered, with a note, a label holding ", " and a double quote,
typed text, skipped, left to the assistant, to discuss, more questions
wanted, dismissed after a partial answer, timed out, nobody there), and the
stand-in records the tool result it receives next.  It prints, per runtime
and outcome, exactly what the model received, and exits non-zero when that
misstates what the person did.  A runtime that cannot be installed or
started is reported as skipped, never as passed.

    python tools/check_runtimes.py [--only opencode,codex,claude] [--keep DIR]

Standard library only; the Claude Code part runs the Claude Agent SDK in a
virtual environment of its own.  Nothing but 127.0.0.1 and the package
registries is reached: each runtime is configured to the stand-in, with its
telemetry and update checks switched off.
"""

import argparse
import dataclasses
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# --askq FILE puts the file here, so that every process of one check (the
# isolated run, the SDK's) answers with the same askq.py.
ASKQ_FILE = os.environ.get("CHECK_RUNTIMES_ASKQ") or os.path.join(ROOT, "askq.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(ASKQ_FILE)))
import askq

if os.path.abspath(askq.__file__) != os.path.abspath(ASKQ_FILE):
    raise SystemExit(f"{ASKQ_FILE} must be named askq.py and come first on the path; {askq.__file__} was imported")

OPENCODE = "opencode-ai@1.18.33"
CODEX = "@openai/codex@0.169.0"
CLAUDE_SDK = "claude-agent-sdk==0.2.189"

MARKER = re.compile(r"askq-case:([a-z_]+)")


# ===========================================================================
# The stand-in model: one HTTP server, three API dialects.
#
# Each request names its case by the marker in the user's first message.  A
# request whose tool list has the question tool and whose history has no
# result for the case's call gets that call; one that has the result gets a
# closing text, and the result is recorded.  Requests without the tool (titles,
# summaries) get a short text.


class Dialect:
    """One model API: where its requests come, how it streams a tool call or
    a text, and where a tool result sits in a request."""

    paths: Tuple[str, ...] = ()

    def tool_names(self, body: Dict[str, Any]) -> List[str]:
        raise NotImplementedError

    def tool_result(self, body: Dict[str, Any], call_id: str) -> Optional[str]:
        raise NotImplementedError

    def send_call(self, reply: "Reply", body: Dict[str, Any], call_id: str, name: str, args: Dict[str, Any]) -> None:
        raise NotImplementedError

    def send_text(self, reply: "Reply", body: Dict[str, Any], text: str) -> None:
        raise NotImplementedError


class Reply:
    """An answer to one request: a JSON body, or server-sent events."""

    def __init__(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        self.handler = handler
        self.started = False

    def json(self, data: Any, status: int = 200) -> None:
        raw = json.dumps(data).encode()
        self.handler.send_response(status)
        self.handler.send_header("Content-Type", "application/json")
        self.handler.send_header("Content-Length", str(len(raw)))
        self.handler.end_headers()
        self.handler.wfile.write(raw)

    def event(self, data: Any, name: Optional[str] = None) -> None:
        if not self.started:
            self.started = True
            self.handler.send_response(200)
            self.handler.send_header("Content-Type", "text/event-stream")
            self.handler.send_header("Cache-Control", "no-cache")
            self.handler.send_header("Connection", "close")
            self.handler.end_headers()
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        self.handler.wfile.write(f"{head}data: {payload}\n\n".encode())
        self.handler.wfile.flush()


def _text_of(content: Any) -> str:
    """A message or tool result's content as one text (strings and text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_of(part.get("text", part.get("content", ""))) if isinstance(part, dict) else str(part)
                       for part in content)
    return "" if content is None else json.dumps(content)


class ChatCompletions(Dialect):
    """OpenAI Chat Completions, as OpenAI-compatible providers speak it."""

    paths = ("/v1/chat/completions", "/chat/completions")

    def tool_names(self, body: Dict[str, Any]) -> List[str]:
        return [tool.get("function", {}).get("name", "") for tool in body.get("tools") or ()]

    def tool_result(self, body: Dict[str, Any], call_id: str) -> Optional[str]:
        for message in body.get("messages") or ():
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                return _text_of(message.get("content"))
        return None

    def _chunk(self, reply: Reply, delta: Dict[str, Any], finish: Optional[str]) -> None:
        reply.event({"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": int(time.time()),
                     "model": "stand-in", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def _end(self, reply: Reply, finish: str) -> None:
        self._chunk(reply, {}, finish)
        reply.event({"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": int(time.time()),
                     "model": "stand-in", "choices": [],
                     "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        reply.event("[DONE]")

    def send_call(self, reply: Reply, body: Dict[str, Any], call_id: str, name: str, args: Dict[str, Any]) -> None:
        call = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        self._chunk(reply, {"role": "assistant", "content": None, "tool_calls": [call]}, None)
        self._end(reply, "tool_calls")

    def send_text(self, reply: Reply, body: Dict[str, Any], text: str) -> None:
        if not body.get("stream"):
            reply.json({"id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
                        "model": "stand-in", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}]})
            return
        self._chunk(reply, {"role": "assistant", "content": text}, None)
        self._end(reply, "stop")


class Responses(Dialect):
    """OpenAI Responses, as Codex speaks it."""

    paths = ("/v1/responses", "/responses")

    def tool_names(self, body: Dict[str, Any]) -> List[str]:
        return [tool.get("name", "") for tool in body.get("tools") or ()]

    def tool_result(self, body: Dict[str, Any], call_id: str) -> Optional[str]:
        for item in body.get("input") or ():
            if isinstance(item, dict) and item.get("type") == "function_call_output" and item.get("call_id") == call_id:
                return _text_of(item.get("output"))
        return None

    def _send(self, reply: Reply, item: Dict[str, Any]) -> None:
        response = {"id": "resp_standin", "object": "response", "created_at": int(time.time()), "model": "stand-in",
                    "status": "in_progress", "output": []}
        reply.event({"type": "response.created", "response": response}, "response.created")
        reply.event({"type": "response.output_item.added", "output_index": 0, "item": item}, "response.output_item.added")
        reply.event({"type": "response.output_item.done", "output_index": 0, "item": item}, "response.output_item.done")
        usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}
        done = dict(response, status="completed", output=[item], usage=usage)
        reply.event({"type": "response.completed", "response": done}, "response.completed")

    def send_call(self, reply: Reply, body: Dict[str, Any], call_id: str, name: str, args: Dict[str, Any]) -> None:
        self._send(reply, {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": name,
                           "arguments": json.dumps(args), "status": "completed"})

    def send_text(self, reply: Reply, body: Dict[str, Any], text: str) -> None:
        self._send(reply, {"type": "message", "id": "msg_standin", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})


class AnthropicMessages(Dialect):
    """Anthropic Messages, as the Claude Code CLI speaks it."""

    paths = ("/v1/messages",)

    def tool_names(self, body: Dict[str, Any]) -> List[str]:
        return [tool.get("name", "") for tool in body.get("tools") or ()]

    def tool_result(self, body: Dict[str, Any], call_id: str) -> Optional[str]:
        for message in body.get("messages") or ():
            for part in message.get("content") if isinstance(message.get("content"), list) else ():
                if isinstance(part, dict) and part.get("type") == "tool_result" and part.get("tool_use_id") == call_id:
                    flag = "[is_error] " if part.get("is_error") else ""
                    return flag + _text_of(part.get("content"))
        return None

    def _message(self, reply: Reply, block: Dict[str, Any], delta: Dict[str, Any], stop: str) -> None:
        message: Dict[str, Any] = {"id": "msg_standin", "type": "message", "role": "assistant", "model": "stand-in", "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        reply.event({"type": "message_start", "message": message}, "message_start")
        reply.event({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start")
        reply.event({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta")
        reply.event({"type": "content_block_stop", "index": 0}, "content_block_stop")
        reply.event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                     "usage": {"output_tokens": 1}}, "message_delta")
        reply.event({"type": "message_stop"}, "message_stop")

    def send_call(self, reply: Reply, body: Dict[str, Any], call_id: str, name: str, args: Dict[str, Any]) -> None:
        self._message(reply, {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                      {"type": "input_json_delta", "partial_json": json.dumps(args)}, "tool_use")

    def send_text(self, reply: Reply, body: Dict[str, Any], text: str) -> None:
        if not body.get("stream"):
            reply.json({"id": "msg_standin", "type": "message", "role": "assistant", "model": "stand-in",
                        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                        "usage": {"input_tokens": 1, "output_tokens": 1}})
            return
        self._message(reply, {"type": "text", "text": ""}, {"type": "text_delta", "text": text}, "end_turn")


DIALECTS: List[Dialect] = [ChatCompletions(), Responses(), AnthropicMessages()]


@dataclasses.dataclass
class Script:
    """What the stand-in model does in one case: call ``tool`` with ``args``."""

    tool: str
    args: Dict[str, Any]
    received: Optional[str] = None
    calls: int = 0
    got: threading.Event = dataclasses.field(default_factory=threading.Event)


class StandIn:
    """The stand-in model API on 127.0.0.1; ``scripts`` by case name."""

    def __init__(self, log_dir: str) -> None:
        self.scripts: Dict[str, Script] = {}
        self.log_dir = log_dir
        self.requests = 0
        self.lock = threading.Lock()
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                stand_in.get(self)

            def do_POST(self) -> None:
                stand_in.post(self)

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _log(self, name: str, data: Any) -> None:
        with self.lock:
            self.requests += 1
            path = os.path.join(self.log_dir, f"{self.requests:04d}-{name}.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=1)

    def get(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        # Model lists: an empty one, so that nothing is looked up elsewhere.
        self._log("get", {"path": handler.path})
        Reply(handler).json({"object": "list", "data": [], "models": []})

    def post(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        path = handler.path.split("?")[0]
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        dialect = next((d for d in DIALECTS if path in d.paths), None)
        self._log("post", {"path": handler.path, "body": body})
        if dialect is None:
            Reply(handler).json({"error": {"message": f"the stand-in has no {path}"}}, 404)
            return
        self.answer(dialect, Reply(handler), body)

    def answer(self, dialect: Dialect, reply: Reply, body: Dict[str, Any]) -> None:
        found = MARKER.search(json.dumps(body))
        script = self.scripts.get(found.group(1)) if found else None
        if script is None or script.tool not in dialect.tool_names(body):
            dialect.send_text(reply, body, "Stand-in")
            return
        call_id = "call_" + found.group(1) if found else ""
        result = dialect.tool_result(body, call_id)
        if result is None:
            script.calls += 1
            dialect.send_call(reply, body, call_id, script.tool, script.args)
            return
        if script.received is None:
            script.received = result
            script.got.set()
        dialect.send_text(reply, body, "Noted.")


# ===========================================================================
# What the person does: one case per outcome, over the same two questions.
#
# The stand-in model asks which database (one choice, a recommendation) and
# which checks (several choices where the runtime has them; one label holds
# ", " and double quotes, so that a join without quoting reads as two picks).

DATABASE = ("Which database should the service use?", "Database",
            [("Postgres (Recommended)", "Managed, grows with the service"), ("SQLite", "One file, no server")])
CHECKS = ("Which checks should run before a merge?", "Checks",
          [('Lint, "strict"', "The linter with every rule on"), ("Lint", "The linter's default rules"),
           ("Tests", "The unit tests")])
NOTE = "keep it managed, we have no DBA"
TYPED = 'MariaDB, on "fast" disks'
LATER = "ask me again after the review"
HAS_STATES = "unanswered" in {field.name for field in dataclasses.fields(askq.AnswerItem)}
HAS_FOLLOW_UP = hasattr(askq.Outcome, "FOLLOW_UP")


@dataclasses.dataclass
class Says:
    """What the person did with one question."""

    picks: Tuple[str, ...] = ()
    typed: Optional[str] = None
    note: Optional[str] = None
    state: Optional[str] = None  # skipped, you_decide, discuss

    def item(self, question_id: str) -> askq.AnswerItem:
        extra: Dict[str, Any] = {"unanswered": self.state} if self.state and HAS_STATES else {}
        return askq.AnswerItem(question_id, self.typed, list(self.picks) or None, note=self.note, **extra)


@dataclasses.dataclass
class Case:
    """One thing a person did: ``says`` per question (None: no answer), the
    outcome, and what the model must and must not be told."""

    name: str
    did: str
    status: str
    says: Tuple[Optional[Says], Optional[Says]]
    optional: Tuple[int, ...] = ()
    needs: Optional[str] = None
    must: Tuple["Rule", ...] = ()

    def available(self) -> Optional[str]:
        """Why this askq.py cannot express the case, or None."""
        if self.needs == "states" and not HAS_STATES:
            return "this askq.py has no AnswerItem.unanswered"
        if self.needs == "follow_up" and not HAS_FOLLOW_UP:
            return "this askq.py has no Outcome.FOLLOW_UP"
        return None

    def output(self, call: Dict[str, Any]) -> askq.QuestionOutput:
        """The runtime's question as askq reads it, answered as the person did."""
        out = askq.ask(call)
        for index in self.optional:
            out.questions[index].required = False
        answers = []
        for item, says in zip(out.questions, self.says):
            if says is None:
                continue
            answers.append(says.item(item.id))
        return askq.QuestionOutput(out.questions, answers, self.status)


# ---------------------------------------------------------------------------
# The rules a model's text is held to.  Each says, on failure, what the model
# was told that the person did not do (or was not told that they did).

DISMISSED = re.compile(r"dismiss|declin", re.IGNORECASE)
TIMED = re.compile(r"in time|timed? ?out|time ran out|did not respond|no response|away", re.IGNORECASE)
NOBODY = re.compile(r"nobody|no one|could not be asked|no interactive user|unavailable", re.IGNORECASE)
SKIPPED = re.compile(r"skip", re.IGNORECASE)
LEFT = re.compile(r"left (this |it |these )?(up )?to you|you decide|up to you", re.IGNORECASE)
DISCUSS = re.compile(r"discuss|talk (it|this) over", re.IGNORECASE)
MORE = re.compile(r"more questions|further questions|follow-up questions|ask (them|me) more", re.IGNORECASE)


def _shows(text: str, part: str) -> bool:
    """Whether ``part`` is in ``text`` as written or JSON-escaped."""
    return part in text or json.dumps(part)[1:-1] in text


class Rule:
    """One expectation on what the model received."""

    def failure(self, text: str) -> Optional[str]:
        raise NotImplementedError


@dataclasses.dataclass
class Shows(Rule):
    part: str
    meaning: str

    def failure(self, text: str) -> Optional[str]:
        return None if _shows(text, self.part) else f"the model is not told {self.meaning}"


@dataclasses.dataclass
class Hides(Rule):
    part: str
    meaning: str

    def failure(self, text: str) -> Optional[str]:
        return f"the model reads {self.meaning}" if _shows(text, self.part) else None


@dataclasses.dataclass
class Tells(Rule):
    words: "re.Pattern[str]"
    meaning: str

    def failure(self, text: str) -> Optional[str]:
        return None if self.words.search(text) else f"nothing tells the model {self.meaning}"


@dataclasses.dataclass
class Never(Rule):
    words: "re.Pattern[str]"
    meaning: str

    def failure(self, text: str) -> Optional[str]:
        found = self.words.search(text)
        return f"the model is told {self.meaning} ({found.group(0)!r}), which the person did not do" if found else None


ANSWERED_ONLY = (Never(DISMISSED, "that the questions were dismissed"), Never(TIMED, "that time ran out"),
                 Never(NOBODY, "that nobody could be asked"))
DB, PG, CK = DATABASE[0], "Postgres", CHECKS[0]

CASES = [
    Case("answered_note", "answered: Postgres with a note; Tests", "answered", (Says(("Postgres",), note=NOTE), Says(("Tests",))),
         must=(Shows(PG, "the pick Postgres"), Shows(NOTE, "the person's note"), Shows("Tests", "the pick Tests")) + ANSWERED_ONLY),
    Case("label_quote", 'answered: SQLite; the one label Lint, "strict"', "answered",
         (Says(("SQLite",)), Says(('Lint, "strict"',))),
         must=(Shows("SQLite", "the pick SQLite"),) + ANSWERED_ONLY),
    Case("label_split", 'answered: SQLite; the label Lint and the typed text "strict"', "answered",
         (Says(("SQLite",)), Says(("Lint",), '"strict"')),
         must=(Shows("SQLite", "the pick SQLite"), Shows('"strict"', 'the typed text "strict"')) + ANSWERED_ONLY),
    Case("typed", f"answered: typed {TYPED}; Tests", "answered", (Says(typed=TYPED), Says(("Tests",))),
         must=(Shows(TYPED, "the typed text as typed"), Hides(PG, "a pick the person did not make")) + ANSWERED_ONLY),
    Case("skipped", "answered: SQLite; skipped the optional checks", "answered",
         (Says(("SQLite",)), Says(state="skipped")), optional=(1,),
         must=(Shows("SQLite", "the pick SQLite"), Tells(SKIPPED, "that the checks were skipped")) + ANSWERED_ONLY),
    Case("skipped_note", "answered: SQLite; skipped the optional checks, with a note", "answered",
         (Says(("SQLite",)), Says(note=LATER, state="skipped")), optional=(1,), needs="states",
         must=(Shows("SQLite", "the pick SQLite"), Tells(SKIPPED, "that the checks were skipped"),
               Shows(LATER, "the person's note on the skipped question")) + ANSWERED_ONLY),
    Case("you_decide", "left the database to the assistant; Tests", "answered",
         (Says(state="you_decide"), Says(("Tests",))), needs="states",
         must=(Tells(LEFT, "that the database is left to it"), Never(DISCUSS, "that the person wants to discuss it"),
               Hides(PG, "a database pick the person did not make")) + ANSWERED_ONLY),
    Case("discuss", "wants to discuss the database first; Tests", "answered",
         (Says(state="discuss"), Says(("Tests",))), needs="states",
         must=(Tells(DISCUSS, "that the person wants to discuss the database"),
               Hides(PG, "a database pick the person did not make")) + ANSWERED_ONLY),
    Case("follow_up", "answered SQLite, then asked for more questions", "follow_up",
         (Says(("SQLite",)), None), needs="follow_up",
         must=(Shows("SQLite", "the pick SQLite"), Tells(MORE, "that the person wants more questions"),
               Never(DISMISSED, "that the questions were dismissed"))),
    Case("declined_partial", "answered SQLite, then dismissed the rest", "declined", (Says(("SQLite",)), None),
         must=(Tells(DISMISSED, "that the person dismissed the questions"), Shows("SQLite", "the partial answer SQLite"),
               Never(TIMED, "that time ran out"))),
    Case("declined_note", "answered SQLite, wrote a note on the checks, then dismissed", "declined",
         (Says(("SQLite",)), Says(note=LATER)), needs="states",
         must=(Tells(DISMISSED, "that the person dismissed the questions"), Shows("SQLite", "the partial answer SQLite"),
               Shows(LATER, "the person's note on the unanswered question"))),
    Case("timed_out_partial", "answered SQLite, then did not answer in time", "timed_out", (Says(("SQLite",)), None),
         must=(Tells(TIMED, "that time ran out"), Shows("SQLite", "the partial answer SQLite"),
               Never(DISMISSED, "that the person dismissed the questions"))),
    Case("timed_out", "did not answer in time", "timed_out", (None, None),
         must=(Tells(TIMED, "that time ran out"), Hides(PG, "the recommended option as if chosen"),
               Never(DISMISSED, "that the person dismissed the questions"))),
    Case("unavailable", "nobody could be asked", "unavailable", (None, None),
         must=(Tells(NOBODY, "that nobody could be asked"), Hides(PG, "the recommended option as if chosen"),
               Never(DISMISSED, "that the person dismissed the questions"))),
]
CASES_BY_NAME = {case.name: case for case in CASES}


def _options(spec: Tuple[str, str, List[Tuple[str, str]]]) -> List[Dict[str, str]]:
    return [{"label": label, "description": text} for label, text in spec[2]]


def call_for(style: str) -> Dict[str, Any]:
    """The stand-in model's question call in a runtime's own tool schema."""
    if style == "opencode":
        return {"questions": [{"question": spec[0], "header": spec[1], "options": _options(spec), "multiple": many}
                              for spec, many in ((DATABASE, False), (CHECKS, True))]}
    if style == "codex":
        return {"questions": [{"id": key, "header": spec[1], "question": spec[0], "options": _options(spec)}
                              for key, spec in (("database", DATABASE), ("checks", CHECKS))]}
    return {"questions": [{"question": spec[0], "header": spec[1], "options": _options(spec), "multiSelect": many}
                          for spec, many in ((DATABASE, False), (CHECKS, True))]}


def answer(case: Case, harness: str, call: Dict[str, Any], multi: bool) -> Dict[str, Any]:
    """What the harness sends back: the person's answers in the runtime's form."""
    says = case.says if multi else (_one_choice(case.says[0]), _one_choice(case.says[1]))
    single = dataclasses.replace(case, says=says)
    return askq.harness_answers(single.output(call), harness, call)


def _one_choice(says: Optional[Says]) -> Optional[Says]:
    """On a runtime without several picks, a pick beside typed text is typed text."""
    if says is None or not (says.picks and says.typed is not None):
        return says
    return Says(typed=", ".join(says.picks + (says.typed,)), note=says.note, state=says.state)


@dataclasses.dataclass
class Run:
    """One case on one runtime: the harness's form, what the model received."""

    case: str
    form: Any = None
    received: Optional[str] = None
    how: str = ""
    error: Optional[str] = None
    failures: List[str] = dataclasses.field(default_factory=list)
    limits: List[str] = dataclasses.field(default_factory=list)


class Unavailable(Exception):
    """The runtime cannot be installed or started here: a sentence saying why."""


def _run(command: List[str], timeout: float, **kwargs: Any) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise Unavailable(f"{' '.join(command[:3])} did not run: {err}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise Unavailable(f"{' '.join(command[:3])} failed: {' / '.join(tail)}")
    return str(done.stdout)


def _npm_install(package: str, where: str, binary: str) -> str:
    path = os.path.join(where, "node_modules", ".bin", binary)
    if not os.path.exists(path):
        if shutil.which("npm") is None:
            raise Unavailable("npm is not installed")
        _run(["npm", "install", "--prefix", where, "--no-audit", "--no-fund", "--silent", package], 600)
    return path


def _request(base: str, method: str, path: str, data: Any = None, timeout: float = 30) -> Any:
    raw = None if data is None else json.dumps(data).encode()
    request = urllib.request.Request(base + path, raw, {"Content-Type": "application/json"}, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text = response.read()
    return json.loads(text) if text else None


def _quiet_env(home: str) -> Dict[str, str]:
    """An environment with a home of its own, and no model keys of the caller's."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("OPENAI_", "ANTHROPIC_", "CLAUDE_", "CODEX_", "OPENCODE_", "AWS_", "GOOGLE_"))}
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), XDG_DATA_HOME=os.path.join(home, ".local/share"),
               XDG_CACHE_HOME=os.path.join(home, ".cache"), XDG_STATE_HOME=os.path.join(home, ".local/state"),
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(key, None)
    return env


class Runtime:
    """One real runtime: installed, started against the stand-in, driven
    through its own question channel for each case."""

    name = ""
    harness = ""
    tool = ""
    multi = True
    version = ""

    def install(self, where: str) -> None:
        raise NotImplementedError

    def start(self, stand_in: StandIn, where: str) -> None:
        raise NotImplementedError

    def run(self, case: Case, stand_in: StandIn) -> Run:
        raise NotImplementedError

    def stop(self) -> None:
        pass


def _wait(script: Script, seconds: float) -> bool:
    return script.got.wait(seconds)


def _end(process: "Optional[subprocess.Popen[str]]", log: Any) -> None:
    """End a runtime's server process (ours, by its handle) and close its log."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    if log is not None:
        log.close()


class OpenCode(Runtime):
    """``opencode serve`` with an OpenAI-compatible provider at the stand-in;
    its question tool answered through ``POST /question/{id}/reply`` or
    ``/reject``."""

    name, harness, tool = "OpenCode", "opencode", "question"

    def install(self, where: str) -> None:
        self.binary = _npm_install(OPENCODE, os.path.join(where, "opencode"), "opencode")
        self.version = "opencode-ai " + _run([self.binary, "--version"], 60).strip()

    def start(self, stand_in: StandIn, where: str) -> None:
        home, work = os.path.join(where, "opencode-home"), os.path.join(where, "opencode-work")
        os.makedirs(home, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        config = {"autoupdate": False, "share": "disabled", "model": "standin/stand-in", "small_model": "standin/stand-in",
                  "provider": {"standin": {"npm": "@ai-sdk/openai-compatible", "name": "Stand-in",
                                           "options": {"baseURL": stand_in.url + "/v1", "apiKey": "stand-in"},
                                           "models": {"stand-in": {"name": "Stand-in", "tool_call": True}}}}}
        env = _quiet_env(home)
        env.update(OPENCODE_CONFIG_CONTENT=json.dumps(config), OPENCODE_ENABLE_QUESTION_TOOL="1",
                   OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_SHARE="1",
                   OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
                   OPENCODE_DISABLE_CLAUDE_CODE="1", OPENCODE_DISABLE_EXTERNAL_SKILLS="1")
        self.log = open(os.path.join(where, "opencode.log"), "w")  # noqa: SIM115 (open while the server runs)
        self.process = subprocess.Popen([self.binary, "serve", "--port", "0", "--hostname", "127.0.0.1"], cwd=work,
                                        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log,
                                        text=True)
        self.base = self._listening(time.monotonic() + 60)
        threading.Thread(target=self.process.stdout.read, daemon=True).start()  # type: ignore[union-attr]

    def _listening(self, deadline: float) -> str:
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                return found.group(0)
        raise Unavailable(f"opencode serve did not start (exit {self.process.poll()}); see opencode.log")

    def _question(self, session: str, deadline: float) -> Dict[str, Any]:
        while time.monotonic() < deadline:
            for item in _request(self.base, "GET", "/question") or ():
                if item.get("sessionID") == session:
                    return dict(item)
            time.sleep(0.2)
        raise TimeoutError("OpenCode asked no question")

    def run(self, case: Case, stand_in: StandIn) -> Run:
        script = stand_in.scripts[case.name]
        result = Run(case.name)
        session = _request(self.base, "POST", "/session", {})["id"]
        _request(self.base, "POST", f"/session/{session}/prompt_async",
                 {"parts": [{"type": "text", "text": f"askq-case:{case.name} Set up the service."}]})
        asked = self._question(session, time.monotonic() + 60)
        call = {"questions": asked["questions"]}
        result.form = answer(case, self.harness, call, self.multi)
        if "answers" in result.form:
            _request(self.base, "POST", f"/question/{asked['id']}/reply", {"answers": result.form["answers"]})
        else:
            # The reject endpoint takes no body: nothing else in the form can go.
            _request(self.base, "POST", f"/question/{asked['id']}/reject", {})
        if not _wait(script, 8):
            _request(self.base, "POST", f"/session/{session}/prompt_async",
                     {"parts": [{"type": "text", "text": "What now?"}]})
            result.how = "on the user's next message (the turn had ended)"
            _wait(script, 30)
        result.received = script.received
        return result

    def stop(self) -> None:
        _end(getattr(self, "process", None), getattr(self, "log", None))


class _JsonRpc:
    """Codex app-server's JSON-RPC over standard input and output, one
    message a line: requests we send, and the requests it sends us."""

    def __init__(self, process: "subprocess.Popen[str]") -> None:
        self.process = process
        self.next_id = 100
        self.replies: Dict[int, Any] = {}
        self.asks: List[Dict[str, Any]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            with self.changed:
                if "method" in message and "id" in message:
                    self.asks.append(message)
                elif "id" in message:
                    self.replies[message["id"]] = message
                self.changed.notify_all()

    def send(self, message: Dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def call(self, method: str, params: Dict[str, Any], timeout: float = 60) -> Any:
        self.next_id += 1
        key = self.next_id
        self.send({"id": key, "method": method, "params": params})
        with self.changed:
            if not self.changed.wait_for(lambda: key in self.replies, timeout):
                raise TimeoutError(f"codex app-server did not answer {method}")
            reply = self.replies.pop(key)
        if "error" in reply:
            raise RuntimeError(f"codex app-server refused {method}: {reply['error']}")
        return reply.get("result")

    def asked(self, method: str, thread: str, timeout: float) -> Dict[str, Any]:
        """The next request of ``method`` the server sends for ``thread``."""
        def found() -> Optional[Dict[str, Any]]:
            return next((m for m in self.asks if m["method"] == method and m.get("params", {}).get("threadId") == thread), None)
        with self.changed:
            if not self.changed.wait_for(lambda: found() is not None, timeout):
                raise TimeoutError(f"Codex sent no {method}")
            message = found()
            assert message is not None
            self.asks.remove(message)
        return message


class Codex(Runtime):
    """``codex app-server`` with a Responses provider at the stand-in, in Plan
    mode; ``request_user_input`` answered on ``item/tool/requestUserInput``."""

    name, harness, tool, multi = "Codex", "codex", "request_user_input", False

    def install(self, where: str) -> None:
        self.binary = _npm_install(CODEX, os.path.join(where, "codex"), "codex")
        self.version = _run([self.binary, "--version"], 60).strip()

    def start(self, stand_in: StandIn, where: str) -> None:
        home, self.work = os.path.join(where, "codex-home"), os.path.join(where, "codex-work")
        os.makedirs(os.path.join(home, "codex"), exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        with open(os.path.join(home, "codex", "config.toml"), "w", encoding="utf-8") as file:
            file.write(CODEX_CONFIG.format(url=stand_in.url))
        env = _quiet_env(home)
        env.update(CODEX_HOME=os.path.join(home, "codex"), STANDIN_API_KEY="stand-in")
        self.log = open(os.path.join(where, "codex.log"), "w")  # noqa: SIM115 (open while the server runs)
        self.process = subprocess.Popen([self.binary, "app-server"], cwd=self.work, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.rpc = _JsonRpc(self.process)
        try:
            self.rpc.call("initialize", {"clientInfo": {"name": "askq-check", "version": "1"},
                                         "capabilities": {"experimentalApi": True}})
        except (TimeoutError, RuntimeError) as err:
            raise Unavailable(f"codex app-server did not start: {err}") from None
        self.rpc.send({"method": "initialized"})

    def run(self, case: Case, stand_in: StandIn) -> Run:
        script = stand_in.scripts[case.name]
        result = Run(case.name)
        thread = self.rpc.call("thread/start", {"cwd": self.work, "approvalPolicy": "never", "sandbox": "read-only",
                                                "ephemeral": True})["thread"]["id"]
        plan = {"mode": "plan", "settings": {"model": "stand-in", "developer_instructions": None}}
        self.rpc.call("turn/start", {"threadId": thread, "collaborationMode": plan,
                                     "input": [{"type": "text", "text": f"askq-case:{case.name} Set up the service."}]})
        asked = self.rpc.asked("item/tool/requestUserInput", thread, 60)
        call = {"questions": asked["params"]["questions"]}
        result.form = answer(case, self.harness, call, self.multi)
        self.rpc.send({"id": asked["id"], "result": result.form})
        _wait(script, 30)
        result.received = script.received
        return result

    def stop(self) -> None:
        _end(getattr(self, "process", None), getattr(self, "log", None))


# The provider is the stand-in; the update check, analytics and feedback are off.
CODEX_CONFIG = """\
model = "stand-in"
model_provider = "standin"
check_for_update_on_startup = false

[model_providers.standin]
name = "Stand-in"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"

[analytics]
enabled = false

[feedback]
enabled = false
"""


class ClaudeCode(Runtime):
    """The Claude Code CLI bundled in the Claude Agent SDK, driven by the SDK
    (in a virtual environment of its own) with ANTHROPIC_BASE_URL at the
    stand-in; ``AskUserQuestion`` answered by the ``can_use_tool`` callback."""

    name, harness, tool = "Claude Code", "claude-code", "AskUserQuestion"

    def install(self, where: str) -> None:
        venv = os.path.join(where, "claude-sdk")
        self.python = os.path.join(venv, "bin", "python")
        if not os.path.exists(self.python):
            _run([sys.executable, "-m", "venv", venv], 300)
            _run([self.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", CLAUDE_SDK], 900)
        probe = "import claude_agent_sdk as s, os; print(s.__version__); print(os.path.dirname(s.__file__))"
        version, package = _run([self.python, "-c", probe], 120).split()
        cli = os.path.join(package, "_bundled", "claude")
        if not os.path.exists(cli):
            raise Unavailable("claude-agent-sdk has no bundled CLI on this platform")
        self.version = f"claude-agent-sdk {version}, bundled CLI {_run([cli, '--version'], 60).strip()}"

    def start(self, stand_in: StandIn, where: str) -> None:
        self.where = where
        self.home = os.path.join(where, "claude-home")
        os.makedirs(self.home, exist_ok=True)

    def run_all(self, cases: List[Case], stand_in: StandIn) -> List[Run]:
        """All cases in one SDK process: each a client session of its own."""
        env = _quiet_env(self.home)
        env.update(CLAUDE_ENV, ANTHROPIC_BASE_URL=stand_in.url, CLAUDE_CONFIG_DIR=os.path.join(self.home, ".claude"))
        command = [self.python, os.path.abspath(__file__), "--claude-child", os.path.join(self.where, "claude-work"),
                   ",".join(case.name for case in cases)]
        with open(os.path.join(self.where, "claude.log"), "w") as log:
            try:
                done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
                                      timeout=120 + 60 * len(cases), check=False)
                printed, ended = done.stdout, f"the SDK process ended (exit {done.returncode})"
            except subprocess.TimeoutExpired as err:
                printed, ended = str(err.stdout or ""), "the SDK process was stopped: it ran past its time"
        lines = [json.loads(line) for line in printed.splitlines() if line.startswith("{")]
        by_case = {line["case"]: line for line in lines}
        runs = []
        for case in cases:
            line = by_case.get(case.name, {"error": f"{ended}; see claude.log"})
            script = stand_in.scripts[case.name]
            _wait(script, 5 if "form" in line else 0)
            runs.append(Run(case.name, line.get("form"), script.received, error=line.get("error")))
        return runs


# The CLI's own switches for traffic that is not the model's, and for updates.
CLAUDE_ENV = {"ANTHROPIC_API_KEY": "stand-in", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
              "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1",
              "CLAUDE_CODE_ENABLE_TELEMETRY": "0"}


def claude_child(work: str, names: List[str]) -> int:
    """In the SDK's virtual environment: one session per case, the question
    answered in can_use_tool with harness_answers; one JSON line per case."""
    import asyncio

    from claude_agent_sdk import (  # type: ignore[import-not-found, unused-ignore]
        ClaudeAgentOptions,
        ClaudeSDKClient,
        PermissionResultAllow,
        PermissionResultDeny,
        ResultMessage,
    )

    os.makedirs(work, exist_ok=True)

    async def one(case: Case) -> Dict[str, Any]:
        line: Dict[str, Any] = {"case": case.name}

        async def can_use_tool(name: str, data: Dict[str, Any], context: Any) -> Any:
            if name != "AskUserQuestion":
                return PermissionResultDeny(message="Only questions are allowed here.")
            form = answer(case, "claude-code", data, True)
            line["form"] = form
            if form.get("behavior") == "allow":
                return PermissionResultAllow(updated_input=form.get("updatedInput"))
            return PermissionResultDeny(message=form.get("message", ""), interrupt=bool(form.get("interrupt")))

        options = ClaudeAgentOptions(can_use_tool=can_use_tool, cwd=work, setting_sources=[], model="claude-sonnet-4-5",
                                     env=dict(os.environ))
        async with ClaudeSDKClient(options=options) as client:
            await client.query(f"askq-case:{case.name} Set up the service.")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    break
        return line

    async def main() -> None:
        for name in names:
            try:
                line = await asyncio.wait_for(one(CASES_BY_NAME[name]), 60)
            except Exception as err:  # noqa: BLE001 (whatever broke, report it for this case and go on)
                line = {"case": name, "error": f"{type(err).__name__}: {err}"}
            print(json.dumps(line), flush=True)

    asyncio.run(main())
    return 0


RUNTIMES: Dict[str, Callable[[], Runtime]] = {"opencode": OpenCode, "codex": Codex, "claude": ClaudeCode}

# What a runtime cannot carry: reported beside the table, never counted as
# passed or failed.  A dismissal is OpenCode's reject, which ends the turn as
# a dismissal means but takes no words, so nothing said before it reaches
# the model.  Keyed by runtime, case and the meaning the model misses.
LIMITS = {
    ("opencode", "declined_partial", "the partial answer SQLite"): "OpenCode's reject takes no words",
    ("opencode", "declined_note", "the partial answer SQLite"): "OpenCode's reject takes no words",
    ("opencode", "declined_note", "the person's note on the unanswered question"): "OpenCode's reject takes no words",
    ("opencode", "declined_note", "apart from declined_partial"): "OpenCode's reject takes no words",
}


# ===========================================================================
# Running: install, start, one case after another; then the checks.


def run_runtime(key: str, where: str, cases: List[Case]) -> Dict[str, Any]:
    """One runtime's runs, or why it was skipped, as JSON data."""
    runtime = RUNTIMES[key]()
    report: Dict[str, Any] = {"runtime": key, "name": runtime.name, "version": "", "skipped": None, "runs": []}
    stand_in = StandIn(tempfile.mkdtemp(prefix=f"standin-{key}-", dir=where))
    report["requests"] = stand_in.log_dir
    try:
        runtime.install(where)
        report["version"] = runtime.version
        runtime.start(stand_in, where)
        for case in cases:
            stand_in.scripts[case.name] = Script(runtime.tool, call_for(runtime.harness))
        runs = runtime.run_all(cases, stand_in) if isinstance(runtime, ClaudeCode) else [
            _one(runtime, case, stand_in) for case in cases]
        report["runs"] = [dataclasses.asdict(run) for run in runs]
    except Unavailable as err:
        report["skipped"] = str(err)
    finally:
        runtime.stop()
        stand_in.close()
    return report


def _one(runtime: Runtime, case: Case, stand_in: StandIn) -> Run:
    try:
        return runtime.run(case, stand_in)
    except (TimeoutError, RuntimeError, OSError, urllib.error.URLError, askq.QuestionError) as err:
        script = stand_in.scripts[case.name]
        return Run(case.name, received=script.received, error=f"{type(err).__name__}: {err}")


def check(report: Dict[str, Any]) -> None:
    """Hold each run's received text to its case's rules, and every two
    cases' texts apart; failures and limits are put into the runs."""
    seen: Dict[str, str] = {}
    for run in report["runs"]:
        case = CASES_BY_NAME[run["case"]]
        failures, limits = [], []
        text = run["received"]
        if run["error"]:
            failures.append(f"the round trip did not complete: {run['error']}")
        if text is None:
            failures.append("the model received no tool result")
        else:
            for rule in case.must:
                failure = rule.failure(text)
                limit = LIMITS.get((report["runtime"], case.name, getattr(rule, "meaning", "")))
                if failure and limit:
                    limits.append(f"{failure}: {limit}")
                elif failure:
                    failures.append(failure)
            if text in seen:
                failure = f"the model reads this exactly as it reads {seen[text]}: it cannot tell them apart"
                limit = LIMITS.get((report["runtime"], case.name, f"apart from {seen[text]}"))
                (limits if limit else failures).append(f"{failure}: {limit}" if limit else failure)
            seen.setdefault(text, case.name)
        run["failures"], run["limits"] = failures, limits


def verdict(run: Dict[str, Any]) -> str:
    if run["failures"]:
        return "MISMATCH"
    return "ok (limit)" if run["limits"] else "ok"


def _compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def print_report(reports: List[Dict[str, Any]], unexpressed: Dict[str, str]) -> None:
    print(f"askq: {ASKQ_FILE}")
    print("What each runtime's model received as the question tool's result, verbatim, as a JSON string"
          " ([is_error] starts a result the runtime marked as an error), after the harness sent askq's form.")
    for report in reports:
        print(f"\n== {report['name']} ({report['version'] or 'not installed'}) ==")
        if report["skipped"]:
            print(f"  skipped: {report['skipped']}")
            continue
        if report.get("broken"):
            print(f"  FAILED: {report['broken']}")
            continue
        for run in report["runs"]:
            case = CASES_BY_NAME[run["case"]]
            print(f"[{case.name}] {case.did}: {verdict(run)}")
            print(f"  harness sent:   {_compact(run['form'])}")
            how = f" ({run['how']})" if run["how"] else ""
            print(f"  model received{how}: {_compact(run['received'])}")
            for failure in run["failures"]:
                print(f"  MISMATCH: {failure}")
            for limit in run["limits"]:
                print(f"  limit: {limit}")
    for name, why in unexpressed.items():
        print(f"\n[{name}] not run on any runtime: {why}")
    print_matrix(reports, unexpressed)


def print_matrix(reports: List[Dict[str, Any]], unexpressed: Dict[str, str]) -> None:
    columns = [report["name"] for report in reports]
    print("\n" + " | ".join(["case".ljust(17)] + [name.ljust(11) for name in columns]))
    for case in CASES:
        cells = []
        for report in reports:
            run = next((r for r in report["runs"] if r["case"] == case.name), None)
            cells.append("skipped" if report["skipped"] else "FAILED" if report.get("broken")
                         else "n/a" if case.name in unexpressed
                         else verdict(run) if run else "-")
        print(" | ".join([case.name.ljust(17)] + [cell.ljust(11) for cell in cells]))


def summary(reports: List[Dict[str, Any]]) -> Tuple[int, int, int]:
    runs = [run for report in reports for run in report["runs"]]
    failed = sum(1 for run in runs if run["failures"])
    broken = sum(1 for report in reports if report.get("broken"))
    skipped = sum(len(CASES) for report in reports if report["skipped"])
    return len(runs) - failed, failed + broken, skipped


def isolation() -> Optional[List[str]]:
    """A command prefix that runs its command with loopback as the only
    network, or None where this machine cannot make one."""
    prefix = ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return None
    try:
        done = subprocess.run(prefix + ["true"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return prefix if done.returncode == 0 else None


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(RUNTIMES), help="runtimes to run: " + ", ".join(RUNTIMES))
    parser.add_argument("--keep", help="install into and keep this directory (reused on the next run)")
    parser.add_argument("--report", help="write what each model received, as JSON, to this file")
    parser.add_argument("--no-isolate", action="store_true", help="do not run the runtimes in a network namespace")
    parser.add_argument("--askq", help="answer with this askq.py instead of the one beside tools/")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--claude-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.askq and os.path.abspath(args.askq) != os.path.abspath(ASKQ_FILE):
        os.environ["CHECK_RUNTIMES_ASKQ"] = os.path.abspath(args.askq)
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
    if args.claude_child:
        return claude_child(args.claude_child[0], args.claude_child[1].split(","))
    keys = [key for key in args.only.split(",") if key]
    unknown = [key for key in keys if key not in RUNTIMES]
    if unknown:
        parser.error(f"unknown runtime {unknown[0]!r}; the runtimes are: {', '.join(RUNTIMES)}")
    unexpressed = {case.name: why for case in CASES for why in [case.available()] if why}
    cases = [case for case in CASES if case.name not in unexpressed]
    if args.run:
        reports = [run_runtime(key, args.run, cases) for key in keys]
        with open(args.report, "w", encoding="utf-8") as file:
            json.dump(reports, file)
        return 0
    where = args.keep or tempfile.mkdtemp(prefix="askq-runtimes-")
    os.makedirs(where, exist_ok=True)
    try:
        reports = run_everything(keys, where, args.no_isolate)
    finally:
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)
    for report in reports:
        check(report)
    print_report(reports, unexpressed)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as file:
            json.dump({"reports": reports, "not_run": unexpressed}, file, indent=1, ensure_ascii=False)
    passed, failed, skipped = summary(reports)
    print(f"runtimes: {passed} passed, {failed} failed, {skipped} skipped")
    if failed:
        return 1
    return 3 if skipped or unexpressed else 0


def run_everything(keys: List[str], where: str, no_isolate: bool) -> List[Dict[str, Any]]:
    """Install each runtime (the registries are reached here), then run them
    all with loopback as the only network where the machine allows it."""
    reports: List[Dict[str, Any]] = []
    ready: List[str] = []
    for key in keys:
        runtime = RUNTIMES[key]()
        try:
            runtime.install(where)
            ready.append(key)
        except Unavailable as err:
            reports.append({"runtime": key, "name": runtime.name, "version": "", "skipped": str(err), "runs": []})
    if ready:
        prefix = None if no_isolate else isolation()
        print("network for the runtimes: " + ("loopback only (a network namespace of their own)" if prefix else
              "not isolated (no network namespace here): each runtime is configured to the stand-in only"))
        out = os.path.join(where, "reports.json")
        command = (prefix or []) + [sys.executable, os.path.abspath(__file__), "--run", where, "--only", ",".join(ready),
                                    "--report", out]
        if os.path.exists(out):
            os.remove(out)
        try:
            ended = f"exit {subprocess.run(command, timeout=3600, check=False).returncode}"
        except subprocess.TimeoutExpired:
            ended = "no end within an hour"
        if not os.path.exists(out):
            reports += [{"runtime": key, "name": RUNTIMES[key]().name, "version": "", "runs": [], "skipped": None,
                         "broken": f"the check's run ended ({ended}) before reporting"} for key in ready]
        else:
            with open(out, encoding="utf-8") as file:
                reports += json.load(file)
    order = {key: index for index, key in enumerate(keys)}
    return sorted(reports, key=lambda report: order[report["runtime"]])


if __name__ == "__main__":
    sys.exit(main())

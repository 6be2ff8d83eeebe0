"""Benchmark askq against the floor of any pure-Python decoder: json.loads.

    python tools/bench_askq.py                 # one table
    python tools/bench_askq.py --json          # the same figures as JSON
    python tools/bench_askq.py --against DIR   # also the askq.py in DIR, in the same rounds
    python tools/bench_askq.py --reader        # the tolerant reader on 1 MiB broken texts
    python tools/bench_askq.py --markup        # the envelope reader: 1 MB against 100 KB, at most 12 x
    python tools/bench_askq.py --transport     # a tools/call round trip: stdio against serve --http

``--against`` compares two versions fairly: give it a folder holding the
askq.py to compare with (``git worktree add /tmp/old HEAD~3`` makes one), and
its example figures are measured in the same rounds as this one's.

Every figure is a median over several rounds in which every case takes its
turn, so that they are measured side by side in the same run; a ratio is the
median of the ratios within each round.  pydantic and jsonschema are measured only when installed.
"""

import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from functools import partial
from typing import Any, Callable, Dict, List, Optional

# The project's root, where askq.py stands: this file is in its tools folder.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

import askq  # found through the root put on the path above

ROUNDS = 15
BATCH_SECONDS = 0.02


def side_by_side(cases: Dict[str, Callable[[], Any]]) -> Dict[str, List[float]]:
    """Seconds per call of each case, one sample per round.

    The cases take turns within every round, so that a slow spell of the
    machine touches all of them alike and the ratios between them hold.
    """
    numbers = {}
    for name, function in cases.items():
        number, seconds = timeit.Timer(function).autorange()  # at least 0.2 s
        numbers[name] = max(1, int(number * BATCH_SECONDS / seconds))
    samples: Dict[str, List[float]] = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, function in cases.items():
            samples[name].append(timeit.Timer(function).timeit(numbers[name]) / numbers[name])
    return samples


def median_ratio(samples: Dict[str, List[float]], name: str, floor: str) -> float:
    """The median over rounds of one case's time over another's in the same round."""
    return statistics.median(a / b for a, b in zip(samples[name], samples[floor]))


def median_us(samples: Dict[str, List[float]], name: str) -> float:
    return statistics.median(samples[name]) * 1e6


def bounds_payload() -> Dict[str, Any]:
    """A call at the documented bounds: the most questions, the most options each."""
    return {
        "questions": [
            {
                "question": f"Question number {q}: which of these should we use?",
                "header": f"Item {q}",
                "purpose": "Measures askq at its bounds.",
                "multiSelect": q % 2 == 1,
                "options": [
                    {"label": f"Option {o}" + (" (Recommended)" if o == 3 else ""),
                     "description": f"What option {o} of question {q} means"}
                    for o in range(askq.MAX_OPTIONS)
                ],
            }
            for q in range(askq.MAX_QUESTIONS)
        ]
    }


def broken_text(text: str) -> str:
    """The example as models break it: unquoted values, trailing commas, a
    wrong bracket, cut off at the end (SPEC 4a repairs each)."""
    broken = text.replace('"header": "Database"', '"header": Database').replace('"}\n      ]', '"},\n      ]')
    broken = broken.replace('"description": "ruff, under a second"}', '"description": "ruff, under a second"]')
    return broken[: broken.rindex('"required"')]


def option_count(payload: Dict[str, Any]) -> int:
    return sum(len(question.get("options") or []) for question in payload["questions"])


def pydantic_model() -> Optional[Any]:
    try:
        from pydantic import BaseModel, ConfigDict
    except ImportError:
        return None

    strict = ConfigDict(strict=True)

    class Option(BaseModel):
        model_config = strict
        label: str
        description: Optional[str] = None

    class Question(BaseModel):
        model_config = strict
        question: str
        header: Optional[str] = None
        options: Optional[List[Option]] = None
        multiSelect: bool = False
        purpose: Optional[str] = None
        required: bool = True

    class Call(BaseModel):
        model_config = strict
        questions: List[Question]

    return Call


def jsonschema_validator() -> Optional[Any]:
    try:
        import jsonschema
    except ImportError:
        return None
    schema = askq.tool_description()["inputSchema"]
    return jsonschema.validators.validator_for(schema)(schema)


def import_self_times(folders: List[str], repeats: int = 15) -> List[Optional[float]]:
    """Median self time of importing the askq in each folder, in seconds, from
    a compiled .pyc, the folders taking turns (None where the interpreter has
    no -X importtime)."""
    command = [sys.executable, "-X", "importtime", "-c", "import askq"]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    for folder in folders:
        subprocess.run(command, cwd=folder, capture_output=True, check=True, env=env)  # writes the .pyc
    times: List[List[float]] = [[] for _ in folders]
    for _ in range(repeats):
        for folder, samples in zip(folders, times):
            lines = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=True, env=env).stderr
            for line in lines.splitlines():
                fields = [field.strip() for field in line.split("|")]
                if len(fields) == 3 and fields[2] == "askq":
                    samples.append(int(fields[0].split(":")[-1]) / 1e6)
    return [statistics.median(samples) if samples else None for samples in times]


def load_against(folder: str) -> Any:
    """The askq.py in another folder, as a module of its own name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("askq_against", os.path.join(folder, "askq.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["askq_against"] = module
    spec.loader.exec_module(module)
    return module


def answer_round(module: Any, text: str) -> Callable[[], str]:
    """One round of checking the example's answers and writing the result."""
    output = module.ask(text)
    raw_answers = {"q0": "SQLite", "q1": ["Lint", "and docs"], "q2": "billing"}

    def run() -> str:
        output.answers = module.collect_answers(output, raw_answers)
        return str(module.result_text(output))

    return run


READER_BYTES = 1024 * 1024 - 64  # just inside MAX_PAYLOAD_BYTES


def reader_texts() -> Dict[str, str]:
    """1 MiB texts that only the tolerant reader reads: the example's
    questions repeated and broken as models break them, and the densest
    damage found for each of the reader's steps."""
    with open(os.path.join(HERE, "example_args.json"), encoding="utf-8") as stream:
        questions = json.load(stream)["questions"]
    texts = {}
    for name, indent in (("broken calls, compact", None), ("broken calls, indented", 2)):
        copies = READER_BYTES // len(json.dumps({"questions": questions}, indent=indent))
        text = json.dumps({"questions": questions * copies}, indent=indent)
        text = text.replace('"header": "Database"', '"header": Database').replace('"required": false', '"required": false"')
        texts[name] = text.replace('"description": "ruff, under a second"}', '"description": "ruff, under a second"]')[:-5]

    def filled(head: str, unit: str, tail: str) -> str:
        return head + unit * ((READER_BYTES - len(head) - len(tail)) // len(unit.encode())) + tail

    dense = {
        "a stray quote after every number": ("[", '1", ', "]"),
        "numbers with no commas": ("[", "12 ", "]"),
        "empty arrays with no commas": ("[", "[]", "]"),
        "empty objects with no commas": ("[", "{}", "]"),
        "a wrong bracket in every option": ("[", '{"label": "Custom"]}, ', "]"),
        "an invalid escape in every string": ("[", '"\\u44\u043b\\q", ', "]"),
        "an unquoted value in every member": ("{", '"label": +6 dB, ', "}"),
        "a missing opening quote in every member": ("{", '"header":Next step", ', "}"),
    }
    for name, parts in dense.items():
        texts[name] = filled(*parts)
    return texts


def reader_seconds(module: Any, text: str, repeats: int = 3) -> float:
    """The best of a few runs of ask() on a text the strict parse refuses."""
    best = float("inf")
    for _ in range(repeats):
        started = timeit.default_timer()
        try:
            module.ask(text)
        except module.QuestionError:
            pass  # read, then refused for its size in questions: the reading is what is timed
        best = min(best, timeit.default_timer() - started)
    return best


def reader_table(against: Optional[str] = None) -> str:
    other = None if against is None else load_against(against)
    rows = [f"the tolerant reader on {READER_BYTES} characters, ask(text), best of 3 (s)"
            + ("" if other is None else f"; against {against}")]
    for name, text in reader_texts().items():
        row = f"  {name:45} {reader_seconds(askq, text):6.3f}"
        if other is not None:
            row += f"   {reader_seconds(other, text):6.3f}"
        rows.append(row)
    return "\n".join(rows)


def measure(against: Optional[str] = None) -> Dict[str, Any]:
    with open(os.path.join(HERE, "example_args.json"), encoding="utf-8") as stream:
        example_text = stream.read()
    example = json.loads(example_text)
    bounds = bounds_payload()
    bounds_text = json.dumps(bounds)

    cases: Dict[str, Callable[[], Any]] = {}
    for name, text, data in (("example", example_text, example), ("bounds", bounds_text, bounds)):
        cases[f"{name}.json_loads"] = partial(json.loads, text)
        cases[f"{name}.ask_text"] = partial(askq.ask, text)
        cases[f"{name}.ask_dict"] = partial(askq.ask, data)
    # Where ask()'s time goes: decoding alone, and normalization (the rest).
    cases["example.decode_text"] = partial(askq.decode, example_text)
    cases["example.decode_dict"] = partial(askq.decode, example)
    cases["answers"] = answer_round(askq, example_text)
    # A broken call of the example's size: what mending it costs.
    broken = broken_text(example_text)
    cases["broken.ask_text"] = partial(askq.ask, broken)
    other = None if against is None else load_against(against)
    if other is not None:
        cases["against.ask_text"] = partial(other.ask, example_text)
        cases["against.ask_dict"] = partial(other.ask, example)
        cases["against.answers"] = answer_round(other, example_text)
    model = pydantic_model()
    if model is not None:
        cases["pydantic"] = partial(model.model_validate_json, example_text)
    validator = jsonschema_validator()
    if validator is not None:
        cases["jsonschema"] = lambda: validator.validate(json.loads(example_text))
    samples = side_by_side(cases)

    figures: Dict[str, Any] = {"python": sys.version.split()[0], "implementation": sys.implementation.name}
    for name, data in (("example", example), ("bounds", bounds)):
        options = option_count(data)
        figures[name] = {
            "bytes": len(json.dumps(data).encode()) if name == "bounds" else len(example_text.encode()),
            "options": options,
            "json_loads_us": median_us(samples, f"{name}.json_loads"),
            "ask_text_us": median_us(samples, f"{name}.ask_text"),
            "ask_dict_us": median_us(samples, f"{name}.ask_dict"),
            "ask_text_ratio": median_ratio(samples, f"{name}.ask_text", f"{name}.json_loads"),
            "ask_dict_ratio": median_ratio(samples, f"{name}.ask_dict", f"{name}.json_loads"),
            "ask_text_us_per_option": median_us(samples, f"{name}.ask_text") / options,
        }
    figures["example"]["decode_text_ratio"] = median_ratio(samples, "example.decode_text", "example.json_loads")
    figures["example"]["decode_dict_ratio"] = median_ratio(samples, "example.decode_dict", "example.json_loads")
    figures["bounds_per_option_vs_example"] = statistics.median(
        (b / option_count(bounds)) / (e / option_count(example))
        for b, e in zip(samples["bounds.ask_text"], samples["example.ask_text"])
    )
    figures["answers_and_result_us"] = median_us(samples, "answers")
    figures["broken"] = {"bytes": len(broken.encode()), "ask_text_us": median_us(samples, "broken.ask_text"),
                         "ask_text_ratio": median_ratio(samples, "broken.ask_text", "example.json_loads")}
    if model is not None:
        figures["pydantic_strict_us"] = median_us(samples, "pydantic")
        figures["ask_text_vs_pydantic"] = median_ratio(samples, "example.ask_text", "pydantic")
    if validator is not None:
        figures["jsonschema_us"] = median_us(samples, "jsonschema")
        figures["jsonschema_vs_ask_text"] = median_ratio(samples, "jsonschema", "example.ask_text")
    folders = [HERE] if against is None else [HERE, against]
    seconds = import_self_times(folders)
    figures["import_self_ms"] = None if seconds[0] is None else seconds[0] * 1e3
    if other is not None:
        figures["against"] = {
            "folder": against,
            "ask_text_ratio": median_ratio(samples, "against.ask_text", "example.json_loads"),
            "ask_dict_ratio": median_ratio(samples, "against.ask_dict", "example.json_loads"),
            "answers_and_result_us": median_us(samples, "against.answers"),
            "import_self_ms": None if seconds[1] is None else seconds[1] * 1e3,
        }
    return figures


def table(figures: Dict[str, Any]) -> str:
    title = (f"askq benchmark on {figures['implementation']} {figures['python']}"
             f" (medians of {ROUNDS} rounds, every case in each round)")
    rows = [title, ""]
    for name in ("example", "bounds"):
        f = figures[name]
        rows += [
            f"{name} payload: {f['bytes']} bytes, {f['options']} options",
            f"  json.loads(text)        {f['json_loads_us']:10.1f} us   1.00 x (the floor)",
            f"  ask(text)               {f['ask_text_us']:10.1f} us   {f['ask_text_ratio']:.2f} x",
            f"  ask(dict)               {f['ask_dict_us']:10.1f} us   {f['ask_dict_ratio']:.2f} x",
            f"  ask(text) per option    {f['ask_text_us_per_option']:10.2f} us",
        ]
        if "decode_dict_ratio" in f:
            rows.append(f"  of which decode(text) {f['decode_text_ratio']:.2f} x, decode(dict) {f['decode_dict_ratio']:.2f} x;"
                        " normalization is the rest")
    rows.append(f"per option, bounds / example: {figures['bounds_per_option_vs_example']:.2f} x")
    rows.append(f"collect_answers + result_text (example): {figures['answers_and_result_us']:.1f} us")
    broken = figures["broken"]
    rows.append(f"a broken call of the example's size ({broken['bytes']} bytes), mended: ask(text)"
                f" {broken['ask_text_us']:.1f} us, {broken['ask_text_ratio']:.2f} x json.loads of the example")
    if "pydantic_strict_us" in figures:
        rows.append(f"pydantic strict model_validate_json: {figures['pydantic_strict_us']:.1f} us;"
                    f" ask(text) is {figures['ask_text_vs_pydantic']:.2f} x that")
    if "jsonschema_us" in figures:
        rows.append(f"jsonschema validation of schema.json: {figures['jsonschema_us']:.1f} us;"
                    f" {figures['jsonschema_vs_ask_text']:.2f} x ask(text)")
    if figures["import_self_ms"] is not None:
        rows.append(f"import askq, self time from .pyc: {figures['import_self_ms']:.2f} ms")
    if "against" in figures:
        a = figures["against"]
        rows += [
            "",
            f"against {a['folder']}, in the same rounds (this one -> that one):",
            f"  example ask(text)   {figures['example']['ask_text_ratio']:.2f} x -> {a['ask_text_ratio']:.2f} x",
            f"  example ask(dict)   {figures['example']['ask_dict_ratio']:.2f} x -> {a['ask_dict_ratio']:.2f} x",
            "  collect_answers + result_text   "
            + f"{figures['answers_and_result_us']:.1f} us -> {a['answers_and_result_us']:.1f} us",
        ]
        if a["import_self_ms"] is not None and figures["import_self_ms"] is not None:
            rows.append(f"  import self time   {figures['import_self_ms']:.2f} ms -> {a['import_self_ms']:.2f} ms")
    return "\n".join(rows)


# A tools/call round trip through a form, over stdio and over HTTP (serve
# --http): the call, the form, the person's answer (given at once), the result.

TRANSPORT_ROUNDS = 200
ANSWER = {"action": "accept", "content": {"q0": "SQLite", "q1": ["Lint"], "q2": "billing"}}
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "bench"}}}


class StdioClient:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "askq.py"), "serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.exchange(INITIALIZE)

    def exchange(self, message: Dict[str, Any]) -> Dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return dict(json.loads(self.process.stdout.readline()))

    def call(self, call_id: int, arguments: Any) -> Dict[str, Any]:
        form = self.exchange({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                              "params": {"name": "ask_questions", "arguments": arguments}})
        return self.exchange({"jsonrpc": "2.0", "id": form["id"], "result": ANSWER})

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


class HttpClient:
    def __init__(self) -> None:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "askq.py"), "serve", "--http", "--port",
                                         str(self.port)], stderr=subprocess.DEVNULL)
        self.session = ""
        response = None
        for _ in range(200):  # until the server listens
            try:
                response = self.post(INITIALIZE)
                break
            except OSError:
                time.sleep(0.05)
        if response is None:
            raise SystemExit("bench_askq: serve --http did not start")
        self.session = response.headers["Mcp-Session-Id"]
        response.read()

    def post(self, message: Dict[str, Any]) -> Any:
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        connection.request("POST", "/mcp", json.dumps(message).encode(), headers)
        return connection.getresponse()

    @staticmethod
    def event(stream: Any) -> Dict[str, Any]:
        data = b""
        while True:
            line = stream.readline()
            if line.startswith(b"data:"):
                data += line[5:]
            elif not line.strip() and data:
                return dict(json.loads(data))

    def call(self, call_id: int, arguments: Any) -> Dict[str, Any]:
        stream = self.post({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                            "params": {"name": "ask_questions", "arguments": arguments}})
        form = self.event(stream)
        self.post({"jsonrpc": "2.0", "id": form["id"], "result": ANSWER}).read()
        result = self.event(stream)
        stream.close()
        return result

    def close(self) -> None:
        self.process.terminate()
        self.process.wait()


def transport_table() -> str:
    """The round trip's median and 90th percentile over each transport, the
    two taking turns so that a slow spell touches both alike."""
    with open(os.path.join(HERE, "example_args.json"), encoding="utf-8") as stream:
        arguments = json.load(stream)
    clients = {"stdio": StdioClient(), "http": HttpClient()}
    seconds: Dict[str, List[float]] = {name: [] for name in clients}
    try:
        for call_id in range(1, TRANSPORT_ROUNDS + 1):
            for name, client in clients.items():
                started = timeit.default_timer()
                result = client.call(call_id, arguments)
                seconds[name].append(timeit.default_timer() - started)
                assert "The user answered" in result["result"]["content"][0]["text"], result
    finally:
        for client in clients.values():
            client.close()
    rows = [f"tools/call through a form, answered at once ({TRANSPORT_ROUNDS} round trips each, taking turns):"]
    for name, figures in seconds.items():
        figures.sort()
        rows.append(f"  {name:<6} median {1000 * statistics.median(figures):7.3f} ms,"
                    f" p90 {1000 * figures[int(len(figures) * 0.9)]:7.3f} ms")
    ratio = statistics.median(h / s for h, s in zip(seconds["http"], seconds["stdio"]))
    rows.append(f"  http / stdio: {ratio:.2f} x (the median of the ratios)")
    return "\n".join(rows)


MARKUP_SIZES = (100_000, 1_000_000)
MARKUP_MOST = 12.0  # the longest time 1 MB may take, in times 100 KB's: linear, with room for the machine


def markup_text(size: int, style: str) -> str:
    """A whole call in a tool-call envelope, ``size`` characters long: the
    example's questions repeated in its questions parameter, then short
    parameters until the size is reached, cut off there as a model's output
    is; or ("cut off") the questions alone, cut off inside their JSON."""
    with open(os.path.join(HERE, "example_args.json"), encoding="utf-8") as stream:
        questions = json.load(stream)["questions"]
    body = json.dumps(questions * max(1, size // 2 // len(json.dumps(questions))))
    prefix = "ns:"
    if style == "cut off":  # the questions themselves end early: the tolerant reader closes them
        body = json.dumps(questions * (size // len(json.dumps(questions)) + 1))
        return ("<tool_call>\n<function=question>\n<parameter=questions>\n" + body)[:size]
    if style == "qwen":
        head = "<tool_call>\n<function=question>\n<parameter=questions>\n" + body + "\n"
        extra = "<parameter=note>\nA note beside the questions, with no closing tag.\n"
    else:
        head = (f"<{prefix}function_calls>\n<{prefix}invoke name=\"AskUserQuestion\">\n"
                f"<{prefix}parameter name=\"questions\">{body}</{prefix}parameter>\n")
        extra = f"<{prefix}parameter name=\"note\">A note beside the questions.</{prefix}parameter>\n"
    text = head + extra * ((size - len(head)) // len(extra) + 1)
    return text[:size]


def markup_seconds(text: str, repeats: int = 3) -> float:
    """The best of a few runs of the envelope reader on a text."""
    best = float("inf")
    for _ in range(repeats):
        started = timeit.default_timer()
        call = askq._envelope_markup(text)
        best = min(best, timeit.default_timer() - started)
        assert call is not None and isinstance(call.get("questions"), list), "the envelope was not read"
    return best


def markup_table() -> "tuple[str, bool]":
    """The envelope reader on 100 KB and on 1 MB; whether 1 MB took at most MARKUP_MOST times as long."""
    rows = [f"the envelope reader, best of 3 (s): {MARKUP_SIZES[0]} chars, {MARKUP_SIZES[1]} chars, ratio (at most {MARKUP_MOST:g})"]
    linear = True
    for style in ("qwen", "anthropic", "cut off"):
        small, large = (markup_seconds(markup_text(size, style)) for size in MARKUP_SIZES)
        ratio = large / small
        linear = linear and ratio <= MARKUP_MOST
        rows.append(f"  {style:10} {small:8.4f} {large:8.4f} {ratio:6.2f} x" + ("" if ratio <= MARKUP_MOST else "  TOO SLOW"))
    return "\n".join(rows), linear


def main(argv: List[str]) -> int:
    against = argv[argv.index("--against") + 1] if "--against" in argv else None
    if "--reader" in argv:
        print(reader_table(against))
        return 0
    if "--markup" in argv:
        text, linear = markup_table()
        print(text)
        return 0 if linear else 1
    if "--transport" in argv:
        print(transport_table())
        return 0
    figures = measure(against)
    print(json.dumps(figures, indent=2) if "--json" in argv else table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

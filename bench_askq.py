"""Benchmark askq against the floor of any pure-Python decoder: json.loads.

    python bench_askq.py          # one table
    python bench_askq.py --json   # the same figures as JSON

Every figure is the median over several repeats, measured side by side in
the same run.  pydantic and jsonschema are measured only when installed.
"""

import json
import os
import statistics
import subprocess
import sys
import timeit
from functools import partial
from typing import Any, Callable, Dict, List, Optional

import askq

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = 7


def per_call(function: Callable[[], Any], repeats: int = REPEATS) -> float:
    """Median seconds per call."""
    timer = timeit.Timer(function)
    number, _ = timer.autorange()
    number = max(number, 1) * 2
    return statistics.median(t / number for t in timer.repeat(repeats, number))


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


def import_self_time(repeats: int = 9) -> Optional[float]:
    """Median self time of importing askq, in seconds, from a compiled .pyc
    (None where the interpreter has no -X importtime)."""
    command = [sys.executable, "-X", "importtime", "-c", "import askq"]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    subprocess.run(command, cwd=HERE, capture_output=True, check=True, env=env)  # writes the .pyc
    times = []
    for _ in range(repeats):
        lines = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=True, env=env).stderr
        for line in lines.splitlines():
            fields = [field.strip() for field in line.split("|")]
            if len(fields) == 3 and fields[2] == "askq":
                times.append(int(fields[0].split(":")[-1]) / 1e6)
    return statistics.median(times) if times else None


def measure() -> Dict[str, Any]:
    with open(os.path.join(HERE, "example_args.json"), encoding="utf-8") as stream:
        example_text = stream.read()
    example = json.loads(example_text)
    bounds = bounds_payload()
    bounds_text = json.dumps(bounds)
    output = askq.ask(example_text)
    raw_answers = {"q0": "SQLite", "q1": ["Lint", "and docs"], "q2": "billing"}

    def answer_round() -> str:
        output.answers = askq.collect_answers(output, raw_answers)
        return askq.result_text(output)

    figures: Dict[str, Any] = {"python": sys.version.split()[0], "implementation": sys.implementation.name}
    for name, text, data in (("example", example_text, example), ("bounds", bounds_text, bounds)):
        floor = per_call(partial(json.loads, text))
        ask_text = per_call(partial(askq.ask, text))
        ask_dict = per_call(partial(askq.ask, data))
        figures[name] = {
            "bytes": len(text.encode()),
            "options": option_count(data),
            "json_loads_us": floor * 1e6,
            "ask_text_us": ask_text * 1e6,
            "ask_dict_us": ask_dict * 1e6,
            "ask_text_ratio": ask_text / floor,
            "ask_dict_ratio": ask_dict / floor,
            "ask_text_us_per_option": ask_text * 1e6 / option_count(data),
        }
    figures["bounds_per_option_vs_example"] = (
        figures["bounds"]["ask_text_us_per_option"] / figures["example"]["ask_text_us_per_option"]
    )
    figures["answers_and_result_us"] = per_call(answer_round) * 1e6
    model = pydantic_model()
    if model is not None:
        strict = per_call(lambda: model.model_validate_json(example_text))
        figures["pydantic_strict_us"] = strict * 1e6
        figures["ask_text_vs_pydantic"] = figures["example"]["ask_text_us"] / figures["pydantic_strict_us"]
    validator = jsonschema_validator()
    if validator is not None:
        checked = per_call(lambda: validator.validate(json.loads(example_text)))
        figures["jsonschema_us"] = checked * 1e6
        figures["jsonschema_vs_ask_text"] = figures["jsonschema_us"] / figures["example"]["ask_text_us"]
    seconds = import_self_time()
    figures["import_self_ms"] = None if seconds is None else seconds * 1e3
    return figures


def table(figures: Dict[str, Any]) -> str:
    rows = [f"askq benchmark on {figures['implementation']} {figures['python']} (medians of {REPEATS} repeats)", ""]
    for name in ("example", "bounds"):
        f = figures[name]
        rows += [
            f"{name} payload: {f['bytes']} bytes, {f['options']} options",
            f"  json.loads(text)        {f['json_loads_us']:10.1f} us   1.00 x (the floor)",
            f"  ask(text)               {f['ask_text_us']:10.1f} us   {f['ask_text_ratio']:.2f} x",
            f"  ask(dict)               {f['ask_dict_us']:10.1f} us   {f['ask_dict_ratio']:.2f} x",
            f"  ask(text) per option    {f['ask_text_us_per_option']:10.2f} us",
        ]
    rows.append(f"per option, bounds / example: {figures['bounds_per_option_vs_example']:.2f} x")
    rows.append(f"collect_answers + result_text (example): {figures['answers_and_result_us']:.1f} us")
    if "pydantic_strict_us" in figures:
        rows.append(f"pydantic strict model_validate_json: {figures['pydantic_strict_us']:.1f} us;"
                    f" ask(text) is {figures['ask_text_vs_pydantic']:.2f} x that")
    if "jsonschema_us" in figures:
        rows.append(f"jsonschema validation of schema.json: {figures['jsonschema_us']:.1f} us;"
                    f" {figures['jsonschema_vs_ask_text']:.2f} x ask(text)")
    if figures["import_self_ms"] is not None:
        rows.append(f"import askq, self time from .pyc: {figures['import_self_ms']:.2f} ms")
    return "\n".join(rows)


def main(argv: List[str]) -> int:
    figures = measure()
    print(json.dumps(figures, indent=2) if "--json" in argv else table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

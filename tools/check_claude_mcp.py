"""Claude Code with askq as its MCP server: what its model reads for each outcome.

The Claude Code CLI bundled in the Claude Agent SDK (pinned, in a virtual
environment of its own) runs against the stand-in model API of
tools/check_runtimes.py, with ``askq.py serve`` as its stdio MCP server and
``ENABLE_TOOL_SEARCH=false`` (so that the model's tool list holds askq's tool).
The stand-in model calls ``mcp__askq__ask_questions``; askq asks through the
CLI's form, which a harness answers with a command hook for ``Elicitation``
in the CLI's settings, as the README shows; the stand-in records the tool
result in the model's next request.  For each outcome, that request must hold
askq's own words for it (the CLI hands its model the structured part only).

    python tools/check_claude_mcp.py [--keep DIR] [--no-isolate]

Exits 0 when every outcome's words reached the model, 1 on a mismatch, 3 when
the SDK could not be installed or started (said as skipped, never as passed).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_runtimes as runtimes

askq = runtimes.askq
TOOL = "mcp__askq__ask_questions"
CHOICES = {"questions": [
    {"question": "Which database should the service use?", "header": "Database",
     "options": [{"label": "Postgres (Recommended)", "description": "Managed"}, {"label": "SQLite", "description": "One file"}]},
    {"question": "Which checks should run before a merge?", "header": "Checks", "multiSelect": True,
     "options": ["Lint", {"label": "Tests (Recommended)", "description": "pytest"}]}]}
# Every choice's title as the person must see it: the badge, the description.
TITLES = {"q0": ["Postgres (Recommended) - Managed", "SQLite - One file"], "q1": ["Lint", "Tests (Recommended) - pytest"]}
NUMBER = {"questions": [{"question": "How many replicas?", "type": "number", "minimum": 1, "maximum": 9, "step": 1}]}
OTHER = askq.CUSTOM_RESPONSE_LABEL

# Each case: what the person did, the model's call, the hook's answer to the
# form (None: no form is drawn), and words of askq's that the model must read.
CASES: List[Tuple[str, str, Dict[str, Any], Optional[Dict[str, Any]], Tuple[str, ...]]] = [
    ("picks", "picked SQLite, and Lint and Tests", CHOICES,
     {"action": "accept", "content": {"q0": "SQLite", "q1": ["Lint", "Tests"]}},
     ("The user answered your questions.", 'picked: "SQLite"', 'picked: "Lint", "Tests"')),
    ("typed", "typed MariaDB for the database, and a check of their own beside Tests", CHOICES,
     {"action": "accept", "content": {"q0": OTHER, "q0_other": "MariaDB", "q1": ["Tests", OTHER], "q1_other": "a changelog check"}},
     ('typed: "MariaDB"', 'typed: "a changelog check"')),
    ("you_decide", "left the database to the assistant", CHOICES,
     {"action": "accept", "content": {"q0": "You decide", "q1": ["Tests"]}},
     ("choose, and say in your reply what you chose and why",)),
    ("discuss", "wants to discuss the database first", CHOICES,
     {"action": "accept", "content": {"q0": "Let's discuss", "q1": ["Tests"]}},
     ("do not decide it yourself",)),
    ("declined", "dismissed the form", CHOICES, {"action": "decline"},
     ("wait for the user's next message",)),
    ("cancelled", "closed the form", CHOICES, {"action": "cancel"},
     ("wait for the user's next message",)),
    ("number", "typed 3 replicas", NUMBER, {"action": "accept", "content": {"q0": 3}},
     ('typed: "3"',)),
    ("refused", "nothing: the call had no questions", {"questions": []}, None,
     ("No questions provided. Ask at least one question.",)),
]
CASES_BY_NAME = {case[0]: case for case in CASES}


def expected_text(name: str) -> str:
    """askq's whole result text for a case, as its form answer gives it."""
    _, _, call, response, _ = CASES_BY_NAME[name]
    try:
        output = askq.ask(call)
    except askq.QuestionError as err:
        return askq.error_text(err)
    answers = askq.from_elicitation(output, response)[1]
    if answers is None:
        return askq.declined_text()
    return askq.result_text(askq.QuestionOutput(output.questions, answers, "answered"))


def readme_hook_output() -> Any:
    """The README's hook_output(), from its example, so that what the README
    shows is what the real CLI is answered with."""
    with open(os.path.join(runtimes.ROOT, "README.md"), encoding="utf-8") as file:
        text = file.read()
    start = text.index("# example: claude-agent-sdk-elicitation-hook\n")
    names: Dict[str, Any] = {"__name__": "readme_elicitation_hook"}
    exec(compile(text[start: text.index("```", start)], "README.md (elicitation hook)", "exec"), names)  # noqa: S102
    return names["hook_output"]


def hook(name: str, record: str) -> int:
    """The Elicitation command hook: the person's answer to the form, as the
    hook's JSON output; what the CLI handed the hook is kept in ``record``."""
    asked = json.load(sys.stdin)
    with open(record, "w", encoding="utf-8") as file:
        json.dump(asked, file)
    response = CASES_BY_NAME[name][3] or {"action": "cancel"}
    print(json.dumps(readme_hook_output()(response)))
    return 0


def _settings(work: str, name: str, python: str, record: str) -> str:
    """The CLI's settings for one case: the Elicitation command hook, for
    askq's server, as a harness writes it."""
    command = " ".join(json.dumps(part) for part in (python, os.path.abspath(__file__), "--hook", name, record))
    path = os.path.join(work, f"settings-{name}.json")
    with open(path, "w", encoding="utf-8") as file:
        json.dump({"hooks": {"Elicitation": [{"matcher": "askq", "hooks": [
            {"type": "command", "command": command, "timeout": 60}]}]}}, file)
    return path


def _recorded(record: str) -> Any:
    """What the CLI handed the hook, or None when the hook never ran."""
    if not os.path.exists(record):
        return None
    with open(record, encoding="utf-8") as file:
        return json.load(file)


def child(work: str, python: str) -> int:
    """In the SDK's virtual environment: one session per case, askq as the
    MCP server, the form answered by the settings' command hook."""
    import asyncio

    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage  # type: ignore[import-not-found, unused-ignore]

    async def one(name: str) -> Dict[str, Any]:
        record = os.path.join(work, f"form-{name}.json")
        settings = _settings(work, name, python, record)
        options = ClaudeAgentOptions(
            mcp_servers={"askq": {"type": "stdio", "command": python, "args": [runtimes.ASKQ_FILE, "serve"]}},
            settings=settings, allowed_tools=[TOOL], setting_sources=[], cwd=work, model="claude-sonnet-4-5",
            env=dict(os.environ))
        async with ClaudeSDKClient(options=options) as client:
            await client.query(f"askq-case:{name} Set up the service.")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    break
        return {"case": name, "form": _recorded(record)}

    async def main() -> None:
        for name in CASES_BY_NAME:
            try:
                line = await asyncio.wait_for(one(name), 90)
            except Exception as err:  # noqa: BLE001 (whatever broke, report it for this case and go on)
                line = {"case": name, "error": f"{type(err).__name__}: {err}"}
            print(json.dumps(line), flush=True)

    asyncio.run(main())
    return 0


def install_and_run(where: str, no_isolate: bool) -> int:
    """Install the SDK (the registries are reached here), then run the cases
    with loopback as the only network where the machine allows it."""
    claude = runtimes.ClaudeCode()
    try:
        claude.install(where)
    except runtimes.Unavailable as err:
        print(f"Claude Code with askq as its MCP server: skipped: {err}")
        return 3
    print(f"Claude Code with askq as its MCP server ({claude.version})")
    prefix = None if no_isolate else runtimes.isolation()
    print("network for the CLI: " + ("loopback only (a network namespace of its own)" if prefix else
          "not isolated (no network namespace here): the CLI is configured to the stand-in only"), flush=True)
    command = (prefix or []) + [sys.executable, os.path.abspath(__file__), "--run", where]
    try:
        return subprocess.run(command, timeout=300 + 90 * len(CASES), check=False).returncode
    except subprocess.TimeoutExpired:
        print("claude-mcp: the run did not end in time")
        return 1


def run(where: str) -> int:
    claude = runtimes.ClaudeCode()
    claude.install(where)  # installed already: this finds it
    stand_in = runtimes.StandIn(tempfile.mkdtemp(prefix="standin-claude-mcp-", dir=where))
    for name, _, call, _, _ in CASES:
        stand_in.scripts[name] = runtimes.Script(TOOL, call)
    work = os.path.join(where, "claude-mcp-work")
    os.makedirs(work, exist_ok=True)
    home = os.path.join(where, "claude-mcp-home")
    env = runtimes._quiet_env(home)
    env.update(runtimes.CLAUDE_ENV, ANTHROPIC_BASE_URL=stand_in.url, ENABLE_TOOL_SEARCH="false",
               CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"), CHECK_RUNTIMES_ASKQ=runtimes.ASKQ_FILE)
    command = [claude.python, os.path.abspath(__file__), "--child", work, claude.python]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=120 + 90 * len(CASES), check=False)
        printed = done.stdout
        if done.returncode != 0:
            print(f"  the SDK process ended with exit {done.returncode}: {done.stderr.strip()[-1500:]}")
    except subprocess.TimeoutExpired as err:
        printed = str(err.stdout or "")
    finally:
        stand_in.close()
    lines = {line["case"]: line for line in map(json.loads, filter(None, printed.splitlines())) if "case" in line}
    return report(stand_in, lines)


def titles_lost(schema: Dict[str, Any]) -> List[str]:
    """What of the choices' titles the CLI's reading of the form dropped
    before it handed the form to its host (the hook)."""
    properties = schema.get("properties") or {}
    choices = {"q0": (properties.get("q0") or {}).get("oneOf") or [],
               "q1": ((properties.get("q1") or {}).get("items") or {}).get("anyOf") or []}
    return [f"the form reached the hook without {key}'s titles: {runtimes._compact(properties.get(key))}"
            for key, wanted in TITLES.items() if [choice.get("title") for choice in choices[key]][:2] != wanted]


def report(stand_in: Any, lines: Dict[str, Dict[str, Any]]) -> int:
    bad = 0
    for name, did, call, response, words in CASES:
        line = lines.get(name, {"error": "the SDK process gave no line for it"})
        received = stand_in.scripts[name].received
        problems = [line["error"]] if line.get("error") else []
        if received is None:
            problems.append("the model received no tool result")
        else:
            problems += [f"the model does not read {word!r}" for word in words if not runtimes._shows(received, word)]
            if not runtimes._shows(received, expected_text(name)):
                problems.append("the model does not read askq's whole result text")
        if response is not None and line.get("form") is None and not line.get("error"):
            problems.append("the Elicitation hook was never run: no form reached the harness")
        if call is CHOICES and line.get("form"):
            problems += titles_lost(line["form"].get("requested_schema") or {})
        print(f"[{name}] {did}: {'MISMATCH' if problems else 'ok'}")
        if line.get("form"):
            schema = line["form"].get("requested_schema") or {}
            print(f"  form the hook got: {runtimes._compact(line['form'].get('message'))}, fields {sorted(schema.get('properties', {}))}")
        print(f"  hook answered:     {runtimes._compact(response)}")
        print(f"  model received:    {runtimes._compact(received)}")
        for problem in problems:
            print(f"  MISMATCH: {problem}")
        bad += bool(problems)
    print(f"claude-mcp: {len(CASES) - bad} passed, {bad} failed")
    return 1 if bad else 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", help="install into and keep this directory (reused on the next run)")
    parser.add_argument("--no-isolate", action="store_true", help="do not run the CLI in a network namespace")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--hook", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.hook:
        return hook(*args.hook)
    if args.child:
        return child(*args.child)
    if args.run:
        return run(args.run)
    where = args.keep or tempfile.mkdtemp(prefix="askq-claude-mcp-")
    os.makedirs(where, exist_ok=True)
    try:
        return install_and_run(where, args.no_isolate)
    finally:
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

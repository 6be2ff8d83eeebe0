"""Tests of the runtime check itself: the stand-in's three API dialects, the
rules it holds what a model received to, and the harness side of each case.
They need no runtime: ``python -m unittest tools/test_check_runtimes.py``."""

import json
import os
import sys
import tempfile
import unittest
import urllib.request
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_runtimes as check


def post(url: str, body: Dict[str, Any]) -> str:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(response.read().decode())


def events(stream: str) -> List[Any]:
    found = []
    for line in stream.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            found.append(json.loads(line[len("data: "):]))
    return found


class StandInTests(unittest.TestCase):
    """A request with the question tool gets the case's call; the next one,
    with its result, gets a closing text, and the result is recorded."""

    def setUp(self) -> None:
        self.logs = tempfile.TemporaryDirectory()
        self.stand_in = check.StandIn(self.logs.name)
        self.addCleanup(self.logs.cleanup)
        self.addCleanup(self.stand_in.close)
        self.args = {"questions": [{"question": "Which?", "options": [{"label": "A", "description": ""}]}]}

    def script(self, tool: str) -> check.Script:
        script = check.Script(tool, self.args)
        self.stand_in.scripts["probe"] = script
        return script

    def test_chat_completions(self) -> None:
        script = self.script("question")
        body: Dict[str, Any] = {"stream": True, "tools": [{"type": "function", "function": {"name": "question"}}],
                                "messages": [{"role": "user", "content": "askq-case:probe go"}]}
        chunks = events(post(self.stand_in.url + "/v1/chat/completions", body))
        call = chunks[0]["choices"][0]["delta"]["tool_calls"][0]
        self.assertEqual((call["id"], call["function"]["name"]), ("call_probe", "question"))
        self.assertEqual(json.loads(call["function"]["arguments"]), self.args)
        body["messages"] += [{"role": "assistant", "tool_calls": [call]},
                             {"role": "tool", "tool_call_id": "call_probe", "content": "picked A"}]
        closing = events(post(self.stand_in.url + "/v1/chat/completions", body))
        self.assertEqual(closing[0]["choices"][0]["delta"]["content"], "Noted.")
        self.assertEqual(script.received, "picked A")

    def test_responses(self) -> None:
        script = self.script("request_user_input")
        body: Dict[str, Any] = {"tools": [{"type": "function", "name": "request_user_input"}],
                                "input": [{"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": "askq-case:probe go"}]}]}
        done = [e for e in events(post(self.stand_in.url + "/v1/responses", body)) if e["type"] == "response.output_item.done"]
        self.assertEqual(done[0]["item"]["call_id"], "call_probe")
        body["input"].append({"type": "function_call_output", "call_id": "call_probe", "output": '{"answers":{}}'})
        post(self.stand_in.url + "/v1/responses", body)
        self.assertEqual(script.received, '{"answers":{}}')

    def test_anthropic_messages_marks_an_error_result(self) -> None:
        script = self.script("AskUserQuestion")
        body: Dict[str, Any] = {"stream": True, "tools": [{"name": "AskUserQuestion"}],
                                "messages": [{"role": "user", "content": "askq-case:probe go"}]}
        started = [e for e in events(post(self.stand_in.url + "/v1/messages", body)) if e["type"] == "content_block_start"]
        self.assertEqual(started[0]["content_block"]["id"], "call_probe")
        result = {"type": "tool_result", "tool_use_id": "call_probe", "is_error": True,
                  "content": [{"type": "text", "text": "dismissed"}]}
        body["messages"].append({"role": "user", "content": [result]})
        post(self.stand_in.url + "/v1/messages", body)
        self.assertEqual(script.received, "[is_error] dismissed")

    def test_a_request_without_the_tool_gets_text_and_records_nothing(self) -> None:
        script = self.script("question")
        body = {"messages": [{"role": "user", "content": "askq-case:probe go"}]}
        reply = json.loads(post(self.stand_in.url + "/v1/chat/completions", body))
        self.assertEqual(reply["choices"][0]["message"]["content"], "Stand-in")
        self.assertEqual((script.calls, script.received), (0, None))


def report(runtime: str, received: Dict[str, str]) -> Dict[str, Any]:
    runs: List[Dict[str, Any]] = [{"case": name, "form": {}, "received": text, "how": "", "error": None, "failures": [], "limits": []}
            for name, text in received.items()]
    return {"runtime": runtime, "runs": runs}


class RuleTests(unittest.TestCase):
    """What a model read is failed where it misstates what the person did."""

    def failures(self, runtime: str, received: Dict[str, str]) -> Dict[str, List[str]]:
        data = report(runtime, received)
        check.check(data)
        return {run["case"]: run["failures"] for run in data["runs"]}

    def test_a_timeout_read_as_a_dismissal_fails(self) -> None:
        found = self.failures("codex", {"timed_out": "The user dismissed this question"})["timed_out"]
        self.assertTrue(any("time ran out" in failure for failure in found), found)
        self.assertTrue(any("dismiss" in failure for failure in found), found)

    def test_a_timeout_that_names_the_recommended_option_fails(self) -> None:
        found = self.failures("codex", {"timed_out": "The user did not respond in time. Picked: Postgres"})
        self.assertEqual(len(found["timed_out"]), 1, found)

    def test_two_cases_read_alike_fail(self) -> None:
        text = 'User has answered: "Checks"="Lint, "strict"", "Database"="SQLite"'
        found = self.failures("opencode", {"label_quote": text, "label_split": text})
        self.assertEqual(found["label_quote"], [])
        self.assertIn("cannot tell them apart", found["label_split"][0])

    def test_an_answer_with_its_note_passes(self) -> None:
        text = f'"Which database?"="Postgres (Recommended)" notes: {check.NOTE}, "Which checks?"="Tests"'
        self.assertEqual(self.failures("claude", {"answered_note": text})["answered_note"], [])

    def test_escaped_text_counts_as_shown(self) -> None:
        text = json.dumps({"answers": {"database": {"answers": ["user_note: " + check.TYPED]}, "checks": ["Tests"]}})
        self.assertEqual(self.failures("codex", {"typed": text})["typed"], [])

    def test_no_result_fails(self) -> None:
        self.assertEqual(self.failures("codex", {"unavailable": None})["unavailable"],  # type: ignore[dict-item]
                         ["the model received no tool result"])

    def test_a_runtime_limit_is_reported_apart(self) -> None:
        data = report("opencode", {"declined_partial": "The user dismissed this question"})
        check.check(data)
        run = data["runs"][0]
        self.assertEqual(run["failures"], [])
        self.assertIn("reject takes no words", run["limits"][0])
        self.assertEqual(check.verdict(run), "ok (limit)")


class HarnessSideTests(unittest.TestCase):
    """Every case this askq.py can express is written in every runtime's form."""

    def test_every_case_in_every_form(self) -> None:
        for style, harness, multi in (("opencode", "opencode", True), ("codex", "codex", False),
                                      ("claude", "claude-code", True)):
            for case in check.CASES:
                if case.available() is None:
                    with self.subTest(harness=harness, case=case.name):
                        form = check.answer(case, harness, check.call_for(style), multi)
                        self.assertIsInstance(form, dict)

    def test_a_pick_beside_typed_text_is_typed_text_on_one_choice(self) -> None:
        says = check._one_choice(check.Says(("Lint",), '"strict"'))
        self.assertEqual((says.picks, says.typed) if says else None, ((), 'Lint, "strict"'))


if __name__ == "__main__":
    unittest.main()

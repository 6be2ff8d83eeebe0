"""askq as an installed MCP server: the command the wheel installed, started
by the mcp SDK's Python client over stdio, completes a call answered through
a form.

    VENV/bin/python .ci/install_check.py VENV/bin/askq

Run with the Python of a fresh venv that holds the askq wheel and the `mcp`
package, and with the path of the `askq` command that wheel installed.  It
runs in an empty folder, so that nothing of the checkout is imported, and
checks that the installed module serves the tool's schema from its built-in
copy (the wheel holds no schema.json), that `askq --help` names the command
`askq`, and that a call comes back with what the person picked.  Prints one
line per check; exits 1 on the first that fails.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def fail(sentence: str) -> None:
    print(f"install check: FAILED: {sentence}")
    sys.exit(1)


def field(record: object, name: str, python_name: str) -> object:
    """A field of an SDK record: the mcp SDK 2.x names fields in Python's
    way, 1.x as the protocol does."""
    return getattr(record, python_name, getattr(record, name, None))


def check_help(command: str, folder: str) -> None:
    done = subprocess.run([command, "--help"], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          check=False, timeout=60)
    text = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0 or not text.startswith("usage: askq "):
        fail(f"`askq --help` exited {done.returncode} and began {text[:60]!r}, not 'usage: askq'")
    print("install check: askq --help names the command askq")


async def session(command: str, folder: str, arguments: "dict[str, object]") -> "tuple[object, object, list]":
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client

    forms: list = []

    async def person(context: object, params: object) -> object:
        forms.append(params)
        return types.ElicitResult(action="accept", content={"q0": "SQLite", "q1": ["Lint"], "q2": "billing"})

    server = StdioServerParameters(command=command, args=["serve"], cwd=folder)
    async with stdio_client(server) as (read, write), \
            ClientSession(read, write, elicitation_callback=person) as client:
        await client.initialize()
        tools = await client.list_tools()
        result = await client.call_tool("ask_questions", arguments)
    return tools, result, forms


def main() -> int:
    command = os.path.abspath(sys.argv[1])
    with open(os.path.join(ROOT, "schema.json"), encoding="utf-8") as stream:
        schema = json.load(stream)
    with open(os.path.join(ROOT, "example_args.json"), encoding="utf-8") as stream:
        arguments = json.load(stream)
    with tempfile.TemporaryDirectory() as folder:
        check_help(command, folder)
        tools, result, forms = asyncio.run(session(command, folder, arguments))
    tool = tools.tools[0]
    if tool.name != "ask_questions" or field(tool, "inputSchema", "input_schema") != schema:
        fail("the installed server's tool is not ask_questions with the checkout's schema.json")
    print("install check: tools/list gives ask_questions, with the schema built into the installed module")
    if len(forms) != 1:
        fail(f"the client was sent {len(forms)} forms, not one")
    text = result.content[0].text
    if field(result, "isError", "is_error") or 'picked: "SQLite"' not in text or 'picked: "Lint"' not in text:
        fail(f"the call's result does not carry the form's answers: {text}")
    status = field(result, "structuredContent", "structured_content")["status"]  # type: ignore[index]
    print(f"install check: a call through the installed askq serve completed: {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

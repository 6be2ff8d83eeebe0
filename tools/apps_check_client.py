"""The mcp SDK's client with a URL handler, for tools/apps_check.mjs.

    python tools/apps_check_client.py MODE TARGET ASKQ [TOKEN]

MODE is the SDK's "legacy" (2025-11-25) or "auto" (2026-07-28); TARGET is
"stdio" (the client starts ``ASKQ serve``) or the URL of a ``serve --http``.
The client calls ask_questions with a secret question.  Its URL handler
writes the request it got as one JSON line ({"asked": ...}) and waits for a
line on standard input, written once the page is open where the person is;
then it says the page was opened.  At the end it writes {"text", "version",
"notes", "blocks"}: what the model read, the version spoken, the notifications
seen, and the result's content blocks (an image's type and size).
"""

import asyncio
import base64
import json
import sys

import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

CALL = {"questions": [{"question": "Which region?", "options": ["eu-west-1", "us-east-1"]},
                      {"question": "The deploy token?", "isSecret": True}]}


async def main(mode: str, target: str, askq: str, token: str) -> None:
    notes = []

    async def elicitation_callback(context, params):
        print(json.dumps({"asked": params.model_dump(mode="json", by_alias=True, exclude_none=True)}), flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        return mcp_types.ElicitResult(action="accept")

    async def message_handler(message):
        notes.append(message.model_dump(mode="json", by_alias=True, exclude_none=True)
                     if hasattr(message, "model_dump") else repr(message))

    if target == "stdio":
        server = StdioServerParameters(command=sys.executable, args=[askq, "serve"])
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        server = streamable_http_client(target, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}))
    async with Client(server, mode=mode, elicitation_callback=elicitation_callback, message_handler=message_handler) as client:
        result = await client.call_tool("ask_questions", CALL)
        session = client.session
        version = getattr(session, "protocol_version", None) or getattr(session, "_negotiated_version", None)
    blocks = [{"type": block.type, **({"mimeType": block.mime_type, "bytes": len(base64.b64decode(block.data))}
                                        if block.type == "image" else {})} for block in result.content]
    print(json.dumps({"text": result.content[0].text, "version": version, "notes": notes, "blocks": blocks}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4], sys.argv[4] if len(sys.argv) > 4 else ""))

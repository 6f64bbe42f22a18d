"""A client of a toolnexus MCP gateway written with the Python `mcp` SDK, the peer of
tests/mcp_gateway.rs. It prints one JSON object with what it saw. Every mode runs with the
1.x SDK; the question modes (accept, decline, plain) with the 2.x SDK too, whose names are
snake_case and whose transport does not expose the session id ("session" is then null).

Usage: gateway_client.py URL progress | cancel | list_changed | accept | decline | plain
  progress  call `py_slow` (3 steps) with a progress callback: the relayed progress and result.
  cancel    call `py_slow` (100 steps), and after its first progress report send
            notifications/cancelled for that request: the progress seen before the cancel.
  list_changed  have the upstream server add a tool (`py_add_tool`), wait for the gateway's
            notifications/tools/list_changed, list again and call the new tool.
  accept, decline  call the `question` tool with an elicitation callback that accepts
            (answering "Oslo") or declines: what the client was asked, and the result.
  plain     call `question` without an elicitation callback (no capability declared).
  city_accept, city_decline, city_plain  call `py_ask_city`, whose upstream server asks
            its client by elicitation/create, with a callback that accepts ("Oslo") or
            declines, or without one: what the client was asked, and the result.
"""

import json
import sys

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

URL, MODE = sys.argv[1], sys.argv[2]


async def progress(session: ClientSession) -> dict:
    seen = []

    async def on_progress(progress, total, message):
        seen.append([progress, total, message])

    result = await session.call_tool(
        "py_slow", {"steps": 3, "delay_ms": 50}, progress_callback=on_progress
    )
    return {"progress": seen, "result": [c.text for c in result.content], "isError": result.isError}


async def cancel(session: ClientSession) -> dict:
    first = anyio.Event()
    seen = []

    async def on_progress(progress, total, message):
        seen.append([progress, total, message])
        first.set()

    # The id the SDK gives the next request: the call below.
    request_id = session._request_id
    async with anyio.create_task_group() as tg:

        async def slow():
            await session.call_tool(
                "py_slow", {"steps": 100, "delay_ms": 100}, progress_callback=on_progress
            )

        tg.start_soon(slow)
        with anyio.fail_after(30):
            await first.wait()
        await session.send_notification(
            types.ClientNotification(
                types.CancelledNotification(
                    params=types.CancelledNotificationParams(requestId=request_id, reason="stop")
                )
            )
        )
        tg.cancel_scope.cancel()
    return {"progress_before_cancel": seen[:1]}


CHANGED = anyio.Event()


async def on_message(message) -> None:
    if isinstance(message, types.ServerNotification) and isinstance(
        message.root, types.ToolListChangedNotification
    ):
        CHANGED.set()


async def list_changed(session: ClientSession) -> dict:
    before = [t.name for t in (await session.list_tools()).tools]
    added = await session.call_tool("py_add_tool", {"name": "fresh"})
    with anyio.fail_after(30):
        await CHANGED.wait()
    after = [t.name for t in (await session.list_tools()).tools]
    fresh = await session.call_tool("py_fresh", {})
    return {
        "fresh_before": "py_fresh" in before,
        "added": [c.text for c in added.content],
        "new_tools": sorted(set(after) - set(before)),
        "fresh": [c.text for c in fresh.content],
    }


ASKED = []


def either(obj, snake: str, camel: str):
    """An attribute by its 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def plain(value):
    return value.model_dump(by_alias=True, exclude_none=True) if hasattr(value, "model_dump") else value


async def on_elicit(context, params):
    schema = either(params, "requested_schema", "requestedSchema")
    ASKED.append({"message": params.message, "schema": plain(schema)})
    if MODE == "accept":
        return types.ElicitResult(action="accept", content={"answer_1": "Oslo"})
    if MODE == "city_accept":
        return types.ElicitResult(action="accept", content={"city": "Oslo"})
    return types.ElicitResult(action="decline")


async def question(session: ClientSession) -> dict:
    result = await session.call_tool(
        "question", {"questions": [{"question": "Which city?", "options": ["Chennai", "Oslo"]}]}
    )
    return {
        "asked": ASKED,
        "result": [c.text for c in result.content],
        "isError": either(result, "is_error", "isError"),
    }


async def city(session: ClientSession) -> dict:
    result = await session.call_tool("py_ask_city", {})
    return {
        "asked": ASKED,
        "result": [c.text for c in result.content],
        "isError": either(result, "is_error", "isError"),
    }


MODES = {
    "progress": progress,
    "cancel": cancel,
    "list_changed": list_changed,
    "accept": question,
    "decline": question,
    "plain": question,
    "city_accept": city,
    "city_decline": city,
    "city_plain": city,
}


async def main() -> None:
    with anyio.fail_after(60):
        async with streamable_http_client(URL) as streams:
            read, write = streams[0], streams[1]
            asks = ("accept", "decline", "city_accept", "city_decline")
            callback = on_elicit if MODE in asks else None
            async with ClientSession(
                read, write, message_handler=on_message, elicitation_callback=callback
            ) as session:
                await session.initialize()
                out = await MODES[MODE](session)
                out["session"] = streams[2]() is not None if len(streams) > 2 else None
    print(json.dumps(out))


anyio.run(main)

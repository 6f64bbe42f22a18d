"""A real MCP server written with the Python `mcp` SDK (2.x `MCPServer`), the peer of
tests/mcp_python.rs: it lets a test kill it, change its tool list, report progress and
record a cancellation, and ask its client a question (elicitation).

Usage: server.py LOG [stdio | sse PORT | streamable-http PORT]
Every event the test checks is appended to LOG as one JSON line. With PEER_ONCE=PATH in the
environment the server starts only once: a second start finds PATH and exits with status 3
(a server that cannot be restarted).
"""

import json
import os
import sys

ONCE = os.environ.get("PEER_ONCE")
if ONCE:
    if os.path.exists(ONCE):
        print("refusing a second start", file=sys.stderr)
        sys.exit(3)
    open(ONCE, "w").close()

import anyio
from pydantic import BaseModel
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp import types
from mcp.types import ToolAnnotations
from mcp.shared.exceptions import MCPError

LOG = sys.argv[1]
server = MCPServer("py-peer")


def record(event: str, **fields) -> None:
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"event": event, "pid": os.getpid(), **fields}) + "\n")


# A 1x1 PNG, 70 bytes.
DOT_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63f8cfc0f01f000500"
    "01ff89993d1d0000000049454e44ae426082"
)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False))
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def dot() -> Image:
    """A 1x1 PNG, as an image content part alone."""
    return Image(data=DOT_PNG, format="png")


@server.tool()
def pid() -> int:
    """The server process's id."""
    return os.getpid()


@server.tool()
def session(ctx: Context) -> str:
    """The HTTP session id this call came on (streamable HTTP), else "none"."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None) or {}
    return headers.get("mcp-session-id", "none")


@server.tool()
def backend_down() -> str:
    """Fail with a JSON-RPC error (code -32603), not an isError result."""
    raise MCPError(code=-32603, message="the backend is down")


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a tool called NAME that answers its own name, then announce the change."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description=f"added at run time: {name}")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@server.tool()
async def slow(steps: int, ctx: Context, delay_ms: int = 200) -> str:
    """Report progress STEPS times, DELAY_MS apart, then finish; a cancel is recorded."""
    try:
        for step in range(1, steps + 1):
            await anyio.sleep(delay_ms / 1000)
            await ctx.report_progress(step, steps, f"step {step}")
        return f"done after {steps} steps"
    except anyio.get_cancelled_exc_class():
        record("cancelled", tool="slow")
        raise


class City(BaseModel):
    city: str


@server.tool()
async def ask_city(ctx: Context) -> str:
    """Ask the client which city (MCP elicitation/create) and say what came back; a client
    that did not declare elicitation is not asked, as the protocol requires."""
    asks = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    if not ctx.session.check_client_capability(asks):
        return "no city (the client cannot be asked)"
    answer = await ctx.elicit("Which city?", City)
    if answer.action == "accept":
        return f"city: {answer.data.city}"
    return f"no city ({answer.action})"


if __name__ == "__main__":
    record("started")
    transport = sys.argv[2] if len(sys.argv) > 2 else "stdio"
    if transport == "stdio":
        server.run()
    else:
        server.run(transport, host="127.0.0.1", port=int(sys.argv[3]))

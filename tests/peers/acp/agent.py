"""A real ACP agent, written with the Python ACP SDK (`agent-client-protocol`, pinned in
.ci/run), that the Rust ACP client is tested against (tests/acp.rs, examples/acp_model.rs).

What it does on a turn depends on a word in the prompt's last line (the client's
`SUPERSEDES-ALL-PRIOR: <latest user text>` marker):

  permission  asks the client for permission (reject first, then allow) and replies with the
              option id it was given
  crash       streams one chunk, writes to stderr, then exits with status 3 mid-turn
  hang        never answers and never speaks again, until `session/cancel` releases the turn
  fs          asks the client to read a file (the client declares no fs capability and
              refuses) and replies with the error it got
  whoami      replies with the session's cwd, mode, the ACP_TEST_TAG variable and its pid
  anything    a thought chunk and tool narration (which must not reach the reply), then the
  else        reply `turn N: <latest user text>` in two chunks, plus `marker ok` when the
              prompt carried the supersedes marker
"""

import asyncio
import os
import sys

from acp import (
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    start_tool_call,
    text_block,
    update_agent_message_text,
    update_agent_thought_text,
)
from acp.schema import PermissionOption, ToolCallUpdate

MARKER = "SUPERSEDES-ALL-PRIOR: "


class TestAgent(Agent):
    def __init__(self):
        self.conn = None
        self.turns = 0
        self.cwd = ""
        self.mode = "default"
        self.cancelled = {}

    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd, mcp_servers=None, **kwargs):
        self.cwd = cwd
        return NewSessionResponse(session_id="sess-1")

    async def set_session_mode(self, session_id, mode_id, **kwargs):
        self.mode = mode_id
        return None

    async def cancel(self, session_id, **kwargs):
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()

    async def say(self, session_id, update):
        await self.conn.session_update(session_id=session_id, update=update)

    async def prompt(self, prompt, session_id, **kwargs):
        self.turns += 1
        text = "".join(block.text for block in prompt if getattr(block, "type", "") == "text")
        last = text.rsplit("\n", 1)[-1]
        latest = last[len(MARKER):] if last.startswith(MARKER) else last

        if "permission" in latest:
            tool = ToolCallUpdate(tool_call_id="call-1", title="write a file", kind="edit", status="pending")
            options = [
                PermissionOption(option_id="reject-it", name="Reject", kind="reject_once"),
                PermissionOption(option_id="allow-it", name="Allow", kind="allow_once"),
            ]
            answer = await self.conn.request_permission(session_id=session_id, tool_call=tool, options=options)
            outcome = answer.outcome
            chosen = getattr(outcome, "option_id", None) or outcome.outcome
            await self.say(session_id, update_agent_message_text(f"permission: {chosen}"))
        elif "crash" in latest:
            await self.say(session_id, update_agent_message_text("partial "))
            sys.stderr.write("agent crashed on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        elif "hang" in latest:
            event = asyncio.Event()
            self.cancelled[session_id] = event
            await event.wait()
            return PromptResponse(stop_reason="cancelled")
        elif "fs" in latest:
            try:
                await self.conn.read_text_file(session_id=session_id, path="/etc/hostname")
                await self.say(session_id, update_agent_message_text("fs: read"))
            except RequestError as e:
                await self.say(session_id, update_agent_message_text(f"fs refused: {e.code}"))
        elif "whoami" in latest:
            tag = os.environ.get("ACP_TEST_TAG", "")
            await self.say(session_id, update_agent_message_text(f"cwd={self.cwd} mode={self.mode} tag={tag} pid={os.getpid()}"))
        else:
            await self.say(session_id, update_agent_thought_text("THOUGHT: must not leak"))
            await self.say(session_id, start_tool_call("t1", "NARRATION: must not leak", kind="read", status="pending"))
            await self.say(session_id, update_agent_message_text(f"turn {self.turns}: "))
            marker = " (marker ok)" if last.startswith(MARKER) else ""
            await self.say(session_id, update_agent_message_text(latest + marker))
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(TestAgent()))

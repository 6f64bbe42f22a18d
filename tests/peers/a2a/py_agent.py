"""An A2A agent written with the Python SDK's server side (a2a-sdk 1.x, Starlette + uvicorn),
the peer toolnexus's outbound A2A tools call in tests/a2a_peers.rs.

    python py_agent.py    → prints "listening <base url>", serves until killed

Its one skill `echo` answers by the task text:
    "fail…"  → the task fails with the status message "the Python agent failed on purpose"
    "hang…"  → the task keeps working until cancelled; a CancelTask prints "CANCEL <task id>"
    else     → completed, one artifact "py echo: <text>"
"""
import asyncio
import socket

import uvicorn
from starlette.applications import Starlette

from a2a.helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill


class Echo(AgentExecutor):
    async def execute(self, context, event_queue):
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        await updater.start_work()
        if text.startswith("fail"):
            await updater.failed(updater.new_agent_message([new_text_part("the Python agent failed on purpose")]))
        elif text.startswith("hang"):
            await asyncio.Event().wait()  # until CancelTask cancels this coroutine
        else:
            await updater.add_artifact([new_text_part(f"py echo: {text}")])
            await updater.complete()

    async def cancel(self, context, event_queue):
        print(f"CANCEL {context.task_id}", flush=True)
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    card = AgentCard(
        name="py echo agent",
        description="Echoes, fails or hangs on request",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes the task", tags=["test"])],
    )
    handler = DefaultRequestHandlerV2(agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/"))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(f"listening {base}", flush=True)
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()

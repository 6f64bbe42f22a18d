"""The Python SDK's client (a2a-sdk 1.x) against an A2A agent, for tests/a2a_peers.rs.

    python py_client.py <base url> <task text>

Resolves the agent card, sends the text (returnImmediately), polls GetTask until the task
ends (at most 60 s), and prints one JSON object: the card's name and skills, the final
state, the artifact text and the status message text.
"""
import asyncio
import json
import sys

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import get_artifact_text, get_message_text
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

ENDED = {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED,
         TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_INPUT_REQUIRED}


async def main(base, text):
    http = httpx.AsyncClient(timeout=30)
    card = await A2ACardResolver(http, base).get_agent_card()
    client = ClientFactory(ClientConfig(streaming=False, polling=True, httpx_client=http)).create(card)
    request = SendMessageRequest(message=Message(role=Role.ROLE_USER, message_id="py-client-1", parts=[Part(text=text)]))
    task = None
    async for event in client.send_message(request):
        task = event.task
    submitted = TaskState.Name(task.status.state)
    for _ in range(600):
        if task.status.state in ENDED:
            break
        await asyncio.sleep(0.1)
        task = await client.get_task(GetTaskRequest(id=task.id))
    print(json.dumps({
        "card": {"name": card.name, "skills": [s.id for s in card.skills]},
        "submitted": submitted,
        "state": TaskState.Name(task.status.state),
        "text": "\n".join(get_artifact_text(a) for a in task.artifacts),
        "status": get_message_text(task.status.message) if task.status.HasField("message") else "",
    }))
    await client.close()
    await http.aclose()


asyncio.run(main(sys.argv[1], sys.argv[2]))

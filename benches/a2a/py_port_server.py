"""The Python port's A2A server (PyPI `toolnexus` 0.21.0) for BENCHMARKS.md's A2A round: a
toolkit with no tools served as an A2A agent, fulfilled by the model at MOCK_URL.

    python py_port_server.py MOCK_URL   → prints "listening <base url>", serves until killed
"""
import asyncio
import sys

from toolnexus import create_client, create_toolkit


async def main(mock_url):
    toolkit = await create_toolkit(builtins=False)
    client = create_client(base_url=mock_url, style="openai", model="mock-model", api_key="not-needed")
    handle = await toolkit.serve("127.0.0.1:0", client=client, a2a={"name": "python-port"})
    print(f"listening {handle.url}", flush=True)
    await asyncio.Event().wait()


asyncio.run(main(sys.argv[1]))

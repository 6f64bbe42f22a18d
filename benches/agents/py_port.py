"""The Python port's agents runtime (0.21.0) on the Rust agents_bench scenario: a coordinator
delegating 100 `task` calls in one turn under max_concurrent=8, against the same embedded
mock model (toolnexus-mock, Planner scenario) on 127.0.0.1; and one agent run
(spawn -> wake -> wait) vs a bare client run, p50.

Run: PYTHONPATH=<the port's source or site-packages> python py_port.py http://127.0.0.1:PORT/v1 [RUNS]
with `toolnexus-mock --addr 127.0.0.1:PORT` serving the model."""
import asyncio, json, statistics, sys, time, types
try:
    import yaml  # noqa: F401
except ImportError:  # only SKILL.md frontmatter needs it; nothing here does
    sys.modules["yaml"] = types.ModuleType("yaml")
from toolnexus.agents import agent, Budget
from toolnexus.agents.runtime import AgentRuntime
from toolnexus.client import create_client
from toolnexus.toolkit import create_toolkit
from toolnexus.types import Tool, ToolResult

base = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
LLM = {"base_url": base, "style": "openai", "model": "mock-model", "api_key": "k"}

async def lookup_exec(args=None, ctx=None):
    return ToolResult(output=f"docs({(args or {}).get('q')})", is_error=False)

lookup = Tool(name="lookup", description="Look a term up.",
              input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
              source="native", execute=lookup_exec)

async def main():
    explore = agent("explore", does="research", uses={"tools": [lookup]})
    coord = agent("coordinator", does="delegates", team=[explore],
                  budget=Budget(max_concurrent=8, max_children=100, max_turns=3))
    prompt = 'lookup {"q":"cache"}'
    client = create_client(base_url=base, style="openai", model="mock-model", api_key="k")
    tk = await create_toolkit(builtins=False, extra_tools=[lookup])
    rt = AgentRuntime(registry=explore.registry(), llm=LLM)
    bare, ag = [], []
    for i in range(runs + 20):
        t = time.perf_counter(); r = await client.run(prompt, toolkit=tk); b = time.perf_counter() - t
        assert r.text == "Here is what the tools returned:\n- lookup: docs(cache)", r.text
        t = time.perf_counter()
        h = rt.spawn(rt.root, "explore"); rt.wake(h, prompt); r2 = await rt.wait(h); await rt.close(h)
        a = time.perf_counter() - t
        assert r2.status == "done", r2
        if i >= 20: bare.append(b * 1e3); ag.append(a * 1e3)
    pb, pa = statistics.median(bare), statistics.median(ag)
    print(json.dumps({"name": "task_overhead", "port": "python", "n": runs, "bare_client_p50_ms": pb, "agent_run_p50_ms": pa, "overhead_p50_ms": pa - pb}))
    rt = AgentRuntime(registry=coord.registry(), llm=LLM, max_concurrent_turns=8)
    calls = " ".join('task {"agent":"explore","prompt":"lookup {\\"q\\":\\"%d\\"}"}' % i for i in range(100))
    t = time.perf_counter()
    h = rt.spawn(rt.root, "coordinator"); rt.wake(h, calls); r = await rt.wait(h)
    wall = (time.perf_counter() - t) * 1e3
    assert r.status == "done", r
    assert r.text.count("- task: Here is what the tools returned:") == 100, r.text[:300]
    print(json.dumps({"name": "fanout", "port": "python", "children": 100, "max_concurrent": 8, "wall_ms": wall, "total_tokens": r.total_tokens}))

asyncio.run(main())

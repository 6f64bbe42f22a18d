# Prints the Python port's view of a skills tree as JSON, with the tree's root path replaced
# by {ROOT}: inventory (skills + skip reasons), prompt, every skill's tool output and a
# not-found result. tests/skills.rs prints the same shape from the Rust port.
# Usage: python skills_reference.py ROOT [sample_limit]
import asyncio, json, sys
from toolnexus import list_skills, load_skills

root = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 0
sub = lambda s: s.replace(root, "{ROOT}") if isinstance(s, str) else s
inv = list_skills(root)
src = load_skills(root, sample_limit=limit)

async def outputs():
    out = {}
    for name in sorted(list(src.skills.keys()) + ["nope"]):
        r = await src.tool.execute({"name": name})
        out[name] = {"output": sub(r.output), "isError": r.is_error,
                     "metadata": {k: sub(v) for k, v in (r.metadata or {}).items()}}
    return out

print(json.dumps({
    "skills": [{"name": s.name, "description": s.description, "location": sub(s.location)} for s in inv.skills],
    "skipped": [{"location": sub(s.location), "reason": s.reason} for s in inv.skipped],
    "prompt": src.prompt(),
    "tool": asyncio.run(outputs()),
}, ensure_ascii=False, separators=(",", ":")))

#!/usr/bin/env python3
"""Which crates' machine code a running process keeps resident (BENCHMARKS.md, "Where our
resident memory goes").

    benches/upstream/resident.py PID BINARY [TOP]

BINARY is the executable PID runs, with its symbol table (not stripped). Each resident page
of its executable mapping (present in /proc/PID/pagemap: touched, or mapped by fault-around)
is split among the function symbols it holds, and each symbol is attributed to the first
crate of its demangled path (`<serde_json::de::X as serde::de::Deserializer>::f` is
serde_json's; `core::ptr::drop_in_place<rmcp::…>` is core's). Prints, per crate, resident
KB of its KB of functions. Linux only; reading another process's pagemap needs the same user.
"""
import bisect
import collections
import re
import struct
import subprocess
import sys

PAGE = 4096


def crate_of(symbol):
    name = symbol.lstrip("<&*").replace("dyn ", "").replace("mut ", "")
    name = re.sub(r"^(impl |\[|\()", "", name)
    return re.split(r"::|<| |\[", name)[0] or symbol[:20]


def load_segments(binary):
    """(file offset, virtual address, file size) of each LOAD segment."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    segments = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segments.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segments


def functions(binary):
    """Sorted (address, size, demangled name) of the binary's defined functions."""
    out = subprocess.run(["nm", "-S", "-C", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"([0-9a-f]+) ([0-9a-f]+) [tTwW] (.*)", line)
        if m:
            found.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return sorted(found)


def main():
    pid, binary = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    segments = load_segments(binary)
    syms = functions(binary)
    starts = [s[0] for s in syms]
    size_of = collections.Counter()
    for _, size, name in syms:
        size_of[crate_of(name)] += size
    resident = collections.Counter()
    total = 0
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap, open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            f = line.split()
            if len(f) < 6 or "x" not in f[1] or not binary.endswith(f[5].rsplit("/", 1)[-1]):
                continue
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            offset = int(f[2], 16)
            pages = (hi - lo) // PAGE
            pagemap.seek(lo // PAGE * 8)
            entries = pagemap.read(pages * 8)
            for i in range(pages):
                if not struct.unpack_from("<Q", entries, i * 8)[0] >> 63:
                    continue
                total += PAGE
                file_offset = offset + i * PAGE
                vaddr = next((v + file_offset - o for o, v, n in segments if o <= file_offset < o + n), None)
                if vaddr is None:
                    continue
                j = max(bisect.bisect_right(starts, vaddr) - 1, 0)
                while j < len(syms) and syms[j][0] < vaddr + PAGE:
                    addr, size, name = syms[j]
                    overlap = min(addr + size, vaddr + PAGE) - max(addr, vaddr)
                    if overlap > 0:
                        resident[crate_of(name)] += overlap
                    j += 1
    print(f"resident machine code: {total / 1024:.0f} KB")
    for crate, size in resident.most_common(top):
        print(f"{crate:28s} {size / 1024:7.1f} KB resident of {size_of[crate] / 1024:7.1f} KB")


if __name__ == "__main__":
    main()

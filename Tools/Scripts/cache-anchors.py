#!/usr/bin/env python3
"""libCacheSim's hit ratios on the key streams `baton bench cache` measures Baton's caches on.

Usage: cache-anchors.py [--warm-up N] TRACE:CAPACITY [TRACE:CAPACITY ...]

Each TRACE is a file of little-endian unsigned 32-bit keys, one request each, in order (the
bench writes them). Every request is a get of a size-1 object; a miss inserts it (libCacheSim's
read-through `get`), as the bench's Baton caches do. The first N requests of each trace
(--warm-up, 0 by default) fill the cache and their hits are not counted, as the bench counts
Baton's. Prints one JSON object on stdout:

  {"libcachesim": "0.3.5", "results": [{"trace": PATH, "capacity": N, "policy": "S3-FIFO",
   "hit_ratio": 0.45}, ...]}

Exit status: 0 on success, 3 if the libcachesim module cannot be imported, 2 on bad usage.
"""

import array
import json
import sys

# libCacheSim's classes, by the names the bench prints; defaults as libCacheSim sets them
# (S3-FIFO: 10% small FIFO, ghost 90%; W-TinyLFU: 1% window, SLRU main).
POLICIES = [("S3-FIFO", "S3FIFO"), ("ARC", "ARC"), ("W-TinyLFU", "WTinyLFU")]


def hit_ratio(lcs, cls, capacity, keys, warm_up):
    cache = cls(cache_size=capacity)
    request = lcs.Request()
    request.obj_size = 1
    hits = 0
    get = cache.get
    for index, key in enumerate(keys):
        # Object ids start at 1: id 0 is not a valid object in every libCacheSim structure.
        request.obj_id = key + 1
        if get(request) and index >= warm_up:
            hits += 1
    return hits / max(1, len(keys) - warm_up)


def main(argv):
    warm_up = 0
    specs = list(argv)
    if len(specs) >= 2 and specs[0] == "--warm-up" and specs[1].isdigit():
        warm_up = int(specs[1])
        specs = specs[2:]
    if not specs or any(":" not in s or s.startswith("-") or not s.rsplit(":", 1)[1].isdigit() for s in specs):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import libcachesim as lcs
    except ImportError as error:
        print(f"libcachesim is not importable ({error}); pip install libcachesim", file=sys.stderr)
        return 3
    try:
        from importlib.metadata import version
        lcs_version = version("libcachesim")
    except Exception:
        lcs_version = "unknown"
    results = []
    for spec in specs:
        path, capacity = spec.rsplit(":", 1)
        keys = array.array("I")
        with open(path, "rb") as trace:
            keys.frombytes(trace.read())
        if sys.byteorder != "little":
            keys.byteswap()
        for name, class_name in POLICIES:
            ratio = hit_ratio(lcs, getattr(lcs, class_name), int(capacity), keys, min(warm_up, len(keys)))
            results.append({"trace": path, "capacity": int(capacity), "policy": name, "hit_ratio": ratio})
    json.dump({"libcachesim": lcs_version, "results": results}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

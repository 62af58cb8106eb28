"""--ranks all (or a list, 0,3): every rank of the job simulated, each in a process of its own
(python3 -m matmulviz.simulate ... --rank R), --jobs at once; prints each rank's peak allocated
and reserved memory, and where a rank ran out of memory. With --report PATH each rank writes its
own report: PATH with "{rank}" replaced by the rank, or run.json as run.rank0.json ... ."""

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

# Options a rank's process gets as they were given (--ranks and --jobs are this command's).
PASSED = ("gpu", "capacity", "values", "pytorch", "host", "nnodes", "nproc-per-node")


def parse_ranks(text, world_size):
    """"all" or "0,3,5" -> the ranks, in order; raises ValueError naming what is wrong."""
    if text == "all":
        return list(range(world_size))
    try:
        ranks = sorted({int(r) for r in text.split(",")})
    except ValueError:
        raise ValueError(f"--ranks {text}: give all or ranks separated by commas (0,3)") from None
    bad = [r for r in ranks if not 0 <= r < world_size]
    if bad:
        raise ValueError(f"--ranks {text}: the job has ranks 0 to {world_size - 1}")
    return ranks


def report_path(path, rank):
    """Rank `rank`'s report: `path` with {rank} replaced, else the rank before the extension."""
    if "{rank}" in path:
        return path.replace("{rank}", str(rank))
    root, ext = os.path.splitext(path)
    return f"{root}.rank{rank}{ext or '.json'}"


def _size(n):
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.2f} MiB"


def run_rank(rank, script, args, opts):
    """Runs rank `rank` in a process of its own; returns its --stats dict (with "seconds" and,
    for a run that wrote none, "error")."""
    passed = [x for name in PASSED if name in opts for x in ("--" + name, opts[name])]
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "stats.json")
        cmd = [sys.executable, "-m", "matmulviz.simulate", script, *args, *passed,
               "--rank", str(rank), "--stats", stats]
        if "report" in opts:
            cmd += ["--report", report_path(opts["report"], rank)]
        start = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        try:
            with open(stats) as f:
                s = json.load(f)
        except (OSError, ValueError):
            s = {"status": p.returncode, "oom": False, "where": None, "peak_allocated": 0,
                 "peak_reserved": 0,
                 "error": (p.stderr.strip().splitlines() or ["no output"])[-1]}
    s["seconds"] = seconds
    s["rank"] = rank
    s["stderr"] = p.stderr
    return s


def main(script, args, opts, world):
    """The --ranks command; returns the exit status: 0 when every rank ran to its end, 1 when
    one ran out of memory or failed, 2 for bad input."""
    if "search" in opts or "snapshot" in opts:
        print("matmulviz.simulate: --ranks runs one process per rank: --search and --snapshot "
              "take one rank (--rank R)", file=sys.stderr)
        return 2
    if "rank" in opts:
        print("matmulviz.simulate: give --rank R (one rank) or --ranks (several), not both",
              file=sys.stderr)
        return 2
    try:
        ranks = parse_ranks(opts["ranks"], world.world_size)
        jobs = int(opts.get("jobs", os.cpu_count() or 1))
        if jobs < 1:
            raise ValueError(f"--jobs {opts['jobs']}: give a whole number from 1")
    except ValueError as e:
        print(f"matmulviz.simulate: {e}", file=sys.stderr)
        return 2
    print(f"{'rank':>6}  {'result':<14}{'peak allocated':>16}{'peak reserved':>16}{'time':>9}")
    start = time.perf_counter()
    results = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for s in pool.map(lambda r: run_rank(r, script, args, opts), ranks):
            result = ("fits" if s["status"] == 0 else
                      "out of memory" if s.get("oom") else "error")
            print(f"{s['rank']:>6}  {result:<14}{_size(s['peak_allocated']):>16}"
                  f"{_size(s['peak_reserved']):>16}{s['seconds']:>8.1f}s", flush=True)
            results.append(s)
    seconds = time.perf_counter() - start
    failed = [s for s in results if s["status"] != 0]
    for s in failed:
        what = "ran out of memory" if s.get("oom") else "failed"
        print(f"rank {s['rank']} {what} at {s.get('where')}: {s.get('error')}")
    top = max(results, key=lambda s: s["peak_allocated"])
    print(f"{len(results)} of {world.world_size} ranks simulated in {seconds:.1f} s; the "
          f"highest peak is rank {top['rank']}'s, {_size(top['peak_allocated'])} allocated"
          + (f"; reports in {report_path(opts['report'], '{rank}')}" if "report" in opts else ""))
    return 1 if failed else 0

"""--search LO:HI: the largest value of one of a script's own arguments whose simulated run fits
the GPU. The script's arguments hold "{}" where the value goes (`--batch_size={}`,
`--batch-size {}`); each trial is a run of the script under matmulviz.simulate in a process of
its own, with the value in place, on the GPU (--gpu) or capacity (--capacity) given. A trial
fits when the script ends without torch.cuda.OutOfMemoryError; a trial that fails otherwise
stops the search with its error.

The search doubles from LO until a value fails (or HI), then narrows the last interval: each
round runs up to --jobs trials at once, at values spread evenly over what is left, so with J
jobs a round divides the interval by J + 1. Assumes memory grows with the value (a value
between two that fit fits); every trial's numbers are printed, so a run that breaks the rule
shows it."""

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

MiB = 2**20


def parse_range(text):
    """"LO:HI" (1 <= LO <= HI) -> (LO, HI); raises ValueError naming what is wrong."""
    try:
        lo, hi = (int(v) for v in text.split(":"))
    except ValueError:
        raise ValueError(f"--search {text}: give LO:HI, two whole numbers (1:4096)") from None
    if not 1 <= lo <= hi:
        raise ValueError(f"--search {text}: needs 1 <= LO <= HI")
    return lo, hi


class Trial:
    """One run at `value`: fits (None before it ran), peak allocated and reserved bytes, where
    it ran out of memory, seconds, and the error of a run that failed otherwise."""

    def __init__(self, value):
        self.value = value
        self.fits = None
        self.peak_allocated = self.peak_reserved = 0
        self.where = None
        self.seconds = 0.0
        self.error = None


def run_trial(value, script, args, sim_args, env=None):
    """Runs `script` with "{}" in `args` replaced by `value` under matmulviz.simulate with
    `sim_args` (--gpu ...), in a process of its own; returns its Trial."""
    trial = Trial(value)
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "stats.json")
        argv = [a.replace("{}", str(value)) for a in args]
        start = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "matmulviz.simulate", script, *argv, *sim_args,
                            "--stats", stats], capture_output=True, text=True, env=env)
        trial.seconds = time.perf_counter() - start
        try:
            with open(stats) as f:
                s = json.load(f)
        except (OSError, ValueError):
            trial.error = (p.stderr.strip().splitlines() or ["no output"])[-1]
            return trial
    trial.peak_allocated, trial.peak_reserved = s["peak_allocated"], s["peak_reserved"]
    trial.where = s.get("where")
    if s["oom"]:
        trial.fits = False
    elif s["status"] == 0:
        trial.fits = True
    else:
        trial.error = s.get("error") or (p.stderr.strip().splitlines() or ["failed"])[-1]
    return trial


def _spread(lo, hi, n):
    """Up to n distinct values strictly between lo and hi, evenly spread."""
    if hi - lo <= 1:
        return []
    n = min(n, hi - lo - 1)
    return sorted({lo + (hi - lo) * (i + 1) // (n + 1) for i in range(n)} - {lo, hi})


def search(lo, hi, jobs, trial_of, on_trial=lambda t: None):
    """The largest value in [lo, hi] whose trial fits (None if lo does not), and every Trial
    run, by value. `trial_of(value)` runs one; `on_trial(trial)` is told of each as it ends.
    Raises RuntimeError with the trial's error when a run fails otherwise."""
    trials = {}
    jobs = max(1, jobs)

    def run_all(values):
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for t in pool.map(trial_of, values):
                trials[t.value] = t
                on_trial(t)
                if t.error:
                    raise RuntimeError(f"the run at {t.value} failed: {t.error}")

    # Doubling: lo, 2 lo, 4 lo ... and hi, `jobs` at a time, until one fails.
    ladder = [lo]
    while ladder[-1] < hi:
        ladder.append(min(2 * ladder[-1], hi))
    bad = None
    for i in range(0, len(ladder), jobs):
        run_all(ladder[i:i + jobs])
        bad = min((v for v in ladder[i:i + jobs] if not trials[v].fits), default=None)
        if bad is not None:
            break
    if bad is None:
        return hi, trials
    fitting = [v for v, t in trials.items() if t.fits and v < bad]
    if not fitting:
        return None, trials
    good = max(fitting)
    # Narrowing: values spread over (good, bad), `jobs` at a time.
    while bad - good > 1:
        values = _spread(good, bad, jobs)
        run_all(values)
        for v in values:
            if trials[v].fits:
                good = max(good, v)
        bad = min([v for v in values if not trials[v].fits and v > good] + [bad])
    return good, trials


def _size(n):
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / MiB:.2f} MiB"


def write_results(path, name, lo, hi, capacity_bytes, best, trials, seconds, error=None):
    """--search with --stats PATH: the search as JSON, {"search": {"argument", "range" [lo, hi],
    "capacity_bytes" (null: unknown), "largest" (null: not even lo fits), "seconds", "error",
    "trials": [{"value", "fits", "peak_allocated", "peak_reserved" (bytes), "where", "seconds",
    "error"}] by value}} (what the app's batch-search chart reads)."""
    rows = [{"value": t.value, "fits": bool(t.fits), "peak_allocated": t.peak_allocated,
             "peak_reserved": t.peak_reserved, "where": t.where, "seconds": round(t.seconds, 3),
             "error": t.error} for _, t in sorted(trials.items())]
    with open(path, "w") as f:
        json.dump({"search": {"argument": name, "range": [lo, hi], "capacity_bytes": capacity_bytes,
                              "largest": best, "seconds": round(seconds, 3), "error": error,
                              "trials": rows}}, f, indent=1)


def main(script, args, sim_args, text_range, jobs, capacity_text, results_path=None,
         capacity_bytes=None):
    """The --search command: prints each trial as it ends, then the answer (and writes them to
    `results_path` as JSON: write_results). Returns the exit status: 0 with an answer, 1 when
    even LO does not fit or a run failed, 2 for bad input."""
    try:
        lo, hi = parse_range(text_range)
    except ValueError as e:
        print(f"matmulviz.simulate: {e}", file=sys.stderr)
        return 2
    if not any("{}" in a for a in args):
        print("matmulviz.simulate: --search: put {} in the script's arguments where the value "
              "goes (for example --batch_size={})", file=sys.stderr)
        return 2
    if not any(a in sim_args for a in ("--gpu", "--capacity")):
        print("matmulviz.simulate: --search needs the GPU (--gpu h100) or --capacity to fit",
              file=sys.stderr)
        return 2
    i = next(i for i, a in enumerate(args) if "{}" in a)
    name = args[i].replace("{}", "").strip("=") or (
        args[i - 1] if i > 0 and args[i - 1].startswith("-") else "value")
    print(f"{name:>14}  {'result':<14}{'peak allocated':>16}{'peak reserved':>16}{'time':>9}")

    def show(t):
        result = "fits" if t.fits else ("error" if t.error else "out of memory")
        print(f"{t.value:>14}  {result:<14}{_size(t.peak_allocated):>16}"
              f"{_size(t.peak_reserved):>16}{t.seconds:>8.1f}s", flush=True)

    start = time.perf_counter()
    trials = {}

    def noted(t):
        trials[t.value] = t
        show(t)

    try:
        best, trials = search(lo, hi, jobs, lambda v: run_trial(v, script, args, sim_args), noted)
    except RuntimeError as e:
        print(f"matmulviz.simulate: --search: {e}", file=sys.stderr)
        if results_path:
            write_results(results_path, name, lo, hi, capacity_bytes, None, trials,
                          time.perf_counter() - start, str(e))
        return 1
    seconds = time.perf_counter() - start
    if results_path:
        write_results(results_path, name, lo, hi, capacity_bytes, best, trials, seconds)
    where = f" on {capacity_text}" if capacity_text else ""
    if best is None:
        t = trials[lo]
        print(f"not even {name} {lo} fits{where}: out of memory at {t.where} "
              f"({len(trials)} runs, {seconds:.1f} s)")
        return 1
    over = min((v for v, t in trials.items() if not t.fits and v > best), default=None)
    line = (f"largest {name} that fits{where}: {best} (peak allocated "
            f"{_size(trials[best].peak_allocated)}, reserved {_size(trials[best].peak_reserved)})")
    if over is not None:
        line += f"; {over} runs out of memory at {trials[over].where}"
    elif best == hi:
        line += f"; {hi} is the top of the range searched"
    print(f"{line} ({len(trials)} runs, {seconds:.1f} s)")
    return 0

"""--search: the largest value of a script's own argument whose simulated run fits the GPU.
The search itself (doubling, then narrowing, --jobs trials a round) on a known threshold, and the
command on a script whose memory is its argument in MiB: with 100 MiB of capacity the largest
that fits is 100 (a 100 MiB request takes a segment of exactly 100 MiB; 101 MiB rounds to a
102 MiB segment, c10's large-segment rule)."""


import json

import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch")

from matmulviz.simulate import _search  # noqa: E402
from simulate_cli import simulate as simulate_in  # noqa: E402


def fake_trial(threshold):
    def run(value):
        t = _search.Trial(value)
        t.fits = value <= threshold
        t.where = "x.py:3"
        return t
    return run


@pytest.mark.parametrize("lo,hi,threshold,jobs", [
    (1, 1000, 1, 1), (1, 1000, 37, 1), (1, 1000, 37, 3), (1, 1000, 999, 2), (1, 1000, 1000, 2),
    (8, 8, 8, 4), (3, 500, 64, 8), (1, 2**20, 12032, 2)])
def test_the_search_finds_the_threshold(lo, hi, threshold, jobs):
    best, trials = _search.search(lo, hi, jobs, fake_trial(threshold))
    assert best == threshold
    assert trials[best].fits and (best == hi or not trials[best + 1].fits)


def test_the_search_says_when_nothing_fits():
    best, trials = _search.search(4, 100, 2, fake_trial(3))
    assert best is None and not trials[4].fits


def test_a_failing_run_stops_the_search():
    def broken(value):
        t = _search.Trial(value)
        t.error = "ValueError: boom"
        return t
    with pytest.raises(RuntimeError, match="at 1 failed: ValueError: boom"):
        _search.search(1, 10, 1, broken)


def simulate(tmp_path, *args):
    return simulate_in(list(args), tmp_path, timeout=900)


SCRIPT = """\
import argparse
import torch
p = argparse.ArgumentParser()
p.add_argument("--mib", type=int, required=True)
x = torch.empty(p.parse_args().mib, 2**20, dtype=torch.uint8, device="cuda")
"""


def test_the_largest_value_that_fits(tmp_path):
    (tmp_path / "grow.py").write_text(SCRIPT)
    p = simulate(tmp_path, "grow.py", "--mib", "{}", "--capacity", "100MiB", "--search", "1:4096",
                 "--jobs", "2", "--stats", "search.json")
    assert p.returncode == 0, p.stderr
    # --stats with --search: the trials and the answer as JSON (what the app's chart reads)
    search = json.loads((tmp_path / "search.json").read_text())["search"]
    assert (search["argument"], search["range"], search["largest"]) == ("--mib", [1, 4096], 100)
    assert search["capacity_bytes"] == 100 * 2**20
    values = [t["value"] for t in search["trials"]]
    assert values == sorted(values) and {64, 100, 101} <= set(values)
    over = next(t for t in search["trials"] if t["value"] == 101)
    assert not over["fits"] and over["where"] == "grow.py:5" and over["error"] is None
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("largest --mib that fits on 100MiB: 100 (peak allocated 100.00 MiB"), last
    assert "101 runs out of memory at grow.py:5" in last, last
    rows = {line.split()[0]: line.split()[1] for line in p.stdout.splitlines()[1:-1]}
    assert rows["100"] == "fits" and rows["101"] == "out" and rows["64"] == "fits"


def test_search_refuses_what_it_cannot_use(tmp_path):
    (tmp_path / "grow.py").write_text(SCRIPT)
    no_mark = simulate(tmp_path, "grow.py", "--mib", "8", "--gpu", "h100", "--search", "1:8")
    assert no_mark.returncode == 2 and "put {} in the script's arguments" in no_mark.stderr
    no_gpu = simulate(tmp_path, "grow.py", "--mib", "{}", "--search", "1:8")
    assert no_gpu.returncode == 2 and "--gpu" in no_gpu.stderr
    bad = simulate(tmp_path, "grow.py", "--mib", "{}", "--gpu", "h100", "--search", "8:1")
    assert bad.returncode == 2 and "1 <= LO <= HI" in bad.stderr

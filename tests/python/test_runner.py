"""python3 -m matmulviz SCRIPT --report PATH and matmulviz.record: the report names the Python
line of each allocation; a failing script exits non-zero and still leaves a complete file."""

import os
import subprocess
import sys

import matmulviz
import matmulviz.torch as torch
from matmulviz import report as reports


def run(args, cwd):
    return subprocess.run([sys.executable, "-m", "matmulviz", *args], cwd=cwd, env=os.environ,
                          capture_output=True, text=True, timeout=300)


SCRIPT = """\
import matmulviz.torch as torch
c = torch.zeros(256, 64, 64, device="cuda")
q = torch.arange(256)
def gather(c, q):
    return c[q]
g = gather(c, q)
"""


def test_report_names_the_line_of_each_allocation(tmp_path):
    (tmp_path / "s.py").write_text(SCRIPT)
    r = run(["s.py", "--report", "run.json"], tmp_path)
    assert r.returncode == 0, r.stderr
    report = reports.load(tmp_path / "run.json")
    assert report["format"] == "matmulviz-report" and report["version"] == 1
    assert report["complete"] is True and report["error"] is None
    frames = report["frames"]
    allocations = reports.rows(report["allocations"])
    lines = {(frames[a["frame"]]["line"], frames[a["frame"]]["function"])
             for a in allocations if a["frame"] is not None}
    assert (2, "<module>") in lines  # torch.zeros
    assert (5, "gather") in lines    # c[q]
    peak = report["peak"]
    assert peak["allocated_bytes"] == report["memory_stats"]["allocated_bytes.all.peak"]
    at_peak = {(op, frame["line"], frame["code"]) for size, label, op, frame in
               reports.peak_lines(report)}
    assert ("index", 5, "return c[q]") in at_peak


def test_failing_script_exits_1_and_writes_an_incomplete_report(tmp_path):
    (tmp_path / "bad.py").write_text(SCRIPT + "raise ValueError('boom')\n")
    r = run(["bad.py", "--report", "run.json"], tmp_path)
    assert r.returncode == 1
    assert "ValueError: boom" in r.stderr
    report = reports.load(tmp_path / "run.json")
    assert report["complete"] is False and "ValueError: boom" in report["error"]
    assert not (tmp_path / "run.json.tmp").exists()


def test_missing_script_exits_2(tmp_path):
    r = run(["nope.py", "--report", "run.json"], tmp_path)
    assert r.returncode == 2 and "no such script" in r.stderr
    assert not (tmp_path / "run.json").exists()


def test_record_context_manager(tmp_path):
    path = tmp_path / "r.json"
    with matmulviz.record(path):
        x = torch.ones(1000, device="cuda")
        del x
    report = reports.load(path)
    events = report["events"]
    kinds = {events["kinds"][row[0]] for row in events["rows"]}
    assert kinds >= {"alloc", "free"}

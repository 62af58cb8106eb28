"""python3 -m matmulviz SCRIPT --report PATH and matmulviz.record: the report names the Python
line of each allocation; a failing script exits non-zero and still leaves a complete file."""

import os
import subprocess
import sys

import pytest

import matmulviz
import matmulviz.torch as torch
from matmulviz import report as reports


# The package's folder, absolute, so that a script run from another folder finds it.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
ENV = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
# matmulviz-cli of this build tree, set by CTest; the CLI tests skip without it.
CLI = os.environ.get("MATMULVIZ_CLI")


def run(args, cwd):
    return subprocess.run([sys.executable, "-m", "matmulviz", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=300)


def run_cli(args, cwd):
    if not CLI:
        pytest.skip("MATMULVIZ_CLI is not set (CTest sets it to this build's matmulviz-cli)")
    return subprocess.run([CLI, *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=300)


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
    # The script's variables when it ended, by the block they held (q stays on the host).
    named = {n: int(i) for i, ns in report["variables"].items() for n in ns}
    assert set(named) == {"c", "g"}
    assert allocations[[a["id"] for a in allocations].index(named["g"])]["op"] == \
        report["ops"].index("index")


SAVED = """\
import matmulviz.torch as torch
a = torch.zeros(512, 1, 64, device="cuda").requires_grad_()
c = torch.zeros(32, 64, 64, device="cuda")
q = torch.randint(0, 32, (512,))
out = torch.matmul(a, c[q])
out.sum().backward()
del out
"""


def test_peak_names_what_autograd_held_then(tmp_path):
    # c[q] is saved for BmmBackward0 at the peak and freed by backward: the top-level
    # kept_alive_by (the end) has nothing, peak.kept_alive_by names the node.
    (tmp_path / "s.py").write_text(SAVED)
    r = run(["s.py", "--report", "run.json"], tmp_path)
    assert r.returncode == 0, r.stderr
    report = reports.load(tmp_path / "run.json")
    assert report["kept_alive_by"] == {}
    allocations = {a["id"]: a for a in reports.rows(report["allocations"])}
    held = report["peak"]["kept_alive_by"]
    gathered = [i for i in report["peak"]["live"] if allocations[i]["op"] ==
                report["ops"].index("index") and allocations[i]["block_bytes"] == 512 * 64 * 64 * 4]
    assert len(gathered) == 1
    assert any("BmmBackward0" in h["why"] for h in held[str(gathered[0])])
    assert set(held) <= {str(i) for i in report["peak"]["live"]}


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


def test_cli_run_writes_the_same_report(tmp_path):
    (tmp_path / "s.py").write_text(SCRIPT)
    r = run_cli(["run", "s.py", "--report", "run.json"], tmp_path)
    assert r.returncode == 0, r.stderr
    report = reports.load(str(tmp_path / "run.json"))
    assert report["kind"] == "python" and report["complete"]
    lines = {f["line"] for f in report["frames"]}
    assert {2, 5} <= lines  # zeros at line 2, c[q] inside gather() at line 5


def test_cli_run_passes_the_scripts_exit_status(tmp_path):
    (tmp_path / "bad.py").write_text("raise SystemExit(3)\n")
    assert run_cli(["run", "bad.py"], tmp_path).returncode == 3
    r = run_cli(["run", "missing.py"], tmp_path)
    assert r.returncode == 2 and "no such script" in r.stderr


def test_one_reader_reads_the_strategies_report(tmp_path):
    r = run_cli(["strategies", "--n", "64", "--m", "16", "--strategies", "strategy1,direct",
                 "--json", "s.json"], tmp_path)
    assert r.returncode == 0, r.stderr
    report = reports.load(str(tmp_path / "s.json"))
    assert (report["format"], report["version"], report["kind"]) == (
        "matmulviz-report", 1, "strategies")
    assert [run["strategy"] for run in report["runs"]] == ["strategy1", "direct"]
    assert reports.peak_lines(report) == []


def test_reader_refuses_a_newer_version_and_other_files(tmp_path):
    (tmp_path / "new.json").write_text('{"format": "matmulviz-report", "version": 9, '
                                       '"kind": "python"}')
    with pytest.raises(ValueError, match="version 9"):
        reports.load(str(tmp_path / "new.json"))
    (tmp_path / "other.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a matmulviz report"):
        reports.load(str(tmp_path / "other.json"))

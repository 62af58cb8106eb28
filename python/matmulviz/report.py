"""Reading a matmulviz report (docs/report-format.md) from Python."""

import json

SUPPORTED_VERSION = 1


KINDS = ("python", "strategies", "multihead", "einsum", "budget", "budget-graph")


def load(path):
    """The report at `path` as a dict: a Python run's (kind "python"), or what
    `matmulviz-cli strategies|multihead|einsum|budget --json` wrote (the kind is the command's
    name), or a traced joint graph (kind "budget-graph", `matmulviz-cli budget --graph-out`).
    Raises ValueError for a file that is
    not a matmulviz report, has a newer version than this reader knows, or a kind it does not
    know."""
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    if not isinstance(report, dict) or report.get("format") != "matmulviz-report":
        raise ValueError(f"{path}: not a matmulviz report (no \"format\": \"matmulviz-report\")")
    if report.get("version", 0) > SUPPORTED_VERSION:
        raise ValueError(f"{path}: report version {report['version']}; this reader knows "
                         f"version {SUPPORTED_VERSION}")
    if report.get("kind") not in KINDS:
        raise ValueError(f"{path}: report kind {report.get('kind')!r}; this reader knows "
                         f"{', '.join(KINDS)}")
    return report


def rows(table):
    """A table of the report ({"columns", "rows"}) as a list of dicts."""
    columns = table["columns"]
    return [dict(zip(columns, row)) for row in table["rows"]]


def peak_lines(report, top=3):
    """The blocks alive at the peak, largest first: (block_bytes, label, op, frame or None)."""
    if isinstance(report, str):
        report = load(report)
    if report.get("kind") != "python" or report.get("peak") is None:
        return []
    allocations = {a["id"]: a for a in rows(report["allocations"])}
    live = [allocations[i] for i in report["peak"]["live"] if i in allocations]
    live.sort(key=lambda a: -a["block_bytes"])
    frames = report["frames"]
    return [(a["block_bytes"], a["label"], report["ops"][a["op"]],
             None if a["frame"] is None else frames[a["frame"]]) for a in live[:top]]

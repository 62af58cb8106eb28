"""matmulviz.record: the allocator timeline of a block of code, written as a report file."""

import contextlib
import os
import sys

from matmulviz import _C

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _variables(namespace):
    """{allocation id (str): [names]}: the CUDA blocks that the names of `namespace` (a script's
    module-level variables) hold: a tensor ("c"), its gradient ("a.grad"), and tensors in a list,
    tuple or dict ("parts[3]", "cache['k']")."""
    out = {}

    def note(name, value):
        if isinstance(value, _C.Tensor) and value.device.type == "cuda":
            block = value._allocation_id()
            if block >= 0:
                out.setdefault(str(block), []).append(name)

    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(value, _C.Tensor):
            note(name, value)
            if value.grad is not None:
                note(name + ".grad", value.grad)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value[:10000]):
                note(f"{name}[{i}]", item)
        elif isinstance(value, dict):
            for key, item in list(value.items())[:10000]:
                note(f"{name}[{key!r}]", item)
    return out


class _Recording:
    """What `with record(...) as r` gives: r.name_variables(namespace) notes which blocks the
    variables of `namespace` hold now (the report's "variables")."""

    def __init__(self, extra):
        self._extra = extra

    def name_variables(self, namespace):
        self._extra["variables"] = _variables(namespace)

    def set_extra(self, key, value):
        """One more top-level entry of the report (matmulviz.simulate's "value_reads")."""
        self._extra[key] = value

    def set_variables(self, variables):
        """The report's "variables" as given: {allocation id (str): [names]} (matmulviz.simulate
        names real PyTorch tensors, modules and optimizers itself)."""
        self._extra["variables"] = variables


@contextlib.contextmanager
def record(path, script=None, argv=None, skip_dirs=()):
    """Records every CUDA allocation made inside the block, with the Python file:line and
    function that made it, and writes the report to `path` (docs/report-format.md) when the
    block ends, also when it raises (then marked "complete": false with the error). The file
    appears whole or not at all. The runner calls name_variables on what this yields with the
    script's globals when it ends, so the report names the variables that held blocks then.
    `skip_dirs`: more folders whose frames are not the program's (the installed PyTorch's)."""
    _C._record_start(_PACKAGE_DIR + os.sep, list(skip_dirs))
    extra = {"script": script, "argv": list(argv) if argv is not None else list(sys.argv),
             "complete": True, "error": None, "variables": {}}
    try:
        yield _Recording(extra)
    except BaseException as e:  # written, then re-raised
        import traceback
        extra["complete"] = False
        extra["error"] = "".join(traceback.format_exception(e)).rstrip()
        raise
    finally:
        _C._record_stop()
        extra["memory_stats"] = _C.memory_stats()
        _C._record_write(os.fspath(path), extra)

"""matmulviz.record: the allocator timeline of a block of code, written as a report file."""

import contextlib
import os
import sys

from matmulviz import _C

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


@contextlib.contextmanager
def record(path, script=None, argv=None):
    """Records every CUDA allocation made inside the block, with the Python file:line and
    function that made it, and writes the report to `path` (docs/report-format.md) when the
    block ends, also when it raises (then marked "complete": false with the error). The file
    appears whole or not at all."""
    _C._record_start(_PACKAGE_DIR + os.sep)
    extra = {"script": script, "argv": list(argv) if argv is not None else list(sys.argv),
             "complete": True, "error": None}
    try:
        yield
    except BaseException as e:  # written, then re-raised
        import traceback
        extra["complete"] = False
        extra["error"] = "".join(traceback.format_exception(e)).rstrip()
        raise
    finally:
        _C._record_stop()
        extra["memory_stats"] = _C.memory_stats()
        _C._record_write(os.fspath(path), extra)

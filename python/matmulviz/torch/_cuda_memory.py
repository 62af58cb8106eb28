"""torch.cuda.memory: the call a program makes where a real GPU starts recording its snapshot."""

from matmulviz import _C


def _record_memory_history(enabled="all", *args, **kwargs):
    """Where PyTorch starts (or, with enabled=None, stops) recording the allocator's events for
    torch.cuda.memory._dump_snapshot(). Here the recording is the run's report
    (`python3 -m matmulviz SCRIPT --report PATH`): a call that starts one marks the moment in it
    (a mark named "_record_memory_history"), and `matmulviz-cli compare RUN.json SNAPSHOT.pickle`
    starts the run's allocation sequence there, as the snapshot's trace starts. The other
    arguments (context, stacks, max_entries, ...) choose what PyTorch keeps and change nothing
    here; enabled=None leaves no mark."""
    if enabled is not None and _C._record_active():
        _C._record_mark("_record_memory_history")

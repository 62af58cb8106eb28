"""torch.cuda: the simulated CUDA device's memory, as PyTorch's caching allocator reports it."""

from matmulviz import _C
from matmulviz.torch import _cuda_memory as memory

OutOfMemoryError = _C.OutOfMemoryError


def is_available():
    """True: the simulated CUDA device is always there."""
    return True


def device_count():
    return 1


def current_device():
    return 0


def get_device_name(device=None):
    return "matmulviz simulated CUDA device"


def synchronize(device=None):
    """Nothing to wait for: the simulated device computes synchronously."""


def memory_allocated(device=None):
    return _C.memory_allocated()


def max_memory_allocated(device=None):
    return _C.max_memory_allocated()


def memory_reserved(device=None):
    return _C.memory_reserved()


def max_memory_reserved(device=None):
    return _C.max_memory_reserved()


def memory_stats(device=None):
    return dict(_C.memory_stats())


def reset_peak_memory_stats(device=None):
    _C.reset_peak_memory_stats()
    if _C._record_active():
        _C._record_mark("reset_peak_memory_stats")


def empty_cache():
    _C.empty_cache()


def set_per_process_memory_fraction(fraction, device=None):
    if _C.device_capacity() is None:
        raise RuntimeError("set_per_process_memory_fraction needs the simulated GPU's capacity: "
                           "call matmulviz.set_device_capacity(\"80GiB\") first")
    _C.set_per_process_memory_fraction(float(fraction))


def memory_summary(device=None, abbreviated=False):
    s = memory_stats()

    def mib(b):
        return f"{b / 2**20:10.1f} MiB"

    rows = [("Allocated memory", "allocated_bytes"), ("Requested memory", "requested_bytes"),
            ("Reserved memory", "reserved_bytes")]
    lines = ["|" + "=" * 75 + "|",
             "|                  matmulviz simulated CUDA memory summary" + " " * 17 + "|",
             "|" + "-" * 75 + "|",
             f"|{'Metric':<27}|{'Cur Usage':>15} |{'Peak Usage':>15} |{'':>13}|",
             "|" + "-" * 75 + "|"]
    for title, key in rows:
        for pool in ("all", "large_pool", "small_pool"):
            label = title if pool == "all" else f"      from {pool.replace('_', ' ')}"
            lines.append(f"|{label:<27}|{mib(s[f'{key}.{pool}.current']):>15} |"
                         f"{mib(s[f'{key}.{pool}.peak']):>15} |{'':>13}|")
        lines.append("|" + "-" * 75 + "|")
    lines.append(f"|{'Segments':<27}|{s['segment.all.current']:>15} |"
                 f"{s['segment.all.peak']:>15} |{'':>13}|")
    lines.append(f"|{'Allocation retries / OOMs':<27}|{s['num_alloc_retries']:>15} |"
                 f"{s['num_ooms']:>15} |{'':>13}|")
    lines.append("|" + "=" * 75 + "|")
    return "\n".join(lines) + "\n"

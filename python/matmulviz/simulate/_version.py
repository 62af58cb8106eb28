"""Where PyTorch 1.13 and 2.x differ for the simulation, one function each, chosen by what the
installed PyTorch has (both under test: Debian's 1.13 and 2.11)."""

import torch


def storage_of(t):
    """The storage `t` views: 2.x's untyped storage, or 1.13's (no untyped_storage()) storage."""
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


def storage_key(t):
    """An id of the storage that `t` (a meta tensor) views: equal for views of one storage while
    it lives. 2.x: the untyped storage's StorageImpl; 1.13 (no untyped_storage()): the same
    StorageImpl reached through the typed storage."""
    return storage_of(t)._cdata


def storage_nbytes(t):
    """The bytes of the storage `t` views (what the CUDA caching allocator is asked for)."""
    return storage_of(t).nbytes()


def out_of_memory_error():
    """torch.cuda.OutOfMemoryError (1.13 and 2.x have it); RuntimeError before it existed."""
    return getattr(torch.cuda, "OutOfMemoryError", RuntimeError)


def version():
    """(major, minor) of the installed PyTorch."""
    parts = torch.__version__.split(".")
    return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)

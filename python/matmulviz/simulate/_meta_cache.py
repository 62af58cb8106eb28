"""A cache of meta kernels' results: the sizes, strides and dtypes of the fresh outputs an aten op
gives for arguments of given sizes, strides, dtypes and values, kept the first time PyTorch's
own meta kernel runs (many are Python, torch/_meta_registrations.py, at tens of microseconds each)
and rebuilt as new meta tensors after that. The same idea as FakeTensorMode's dispatch cache
(torch/_subclasses/fake_tensor.py, _cached_dispatch_impl), and the same exclusions: an op whose
results alias its arguments or that mutates them, that is random, that has a dynamic output
shape, or whose outputs share a storage or do not start at their storage's beginning, runs its
meta kernel every time. Only for tensors without values (values="none")."""

import torch

from matmulviz.simulate._version import storage_key, storage_nbytes

_SCALARS = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout,
            torch.memory_format)


# Namespaces of ops with effects beyond their outputs: torch.distributed's collectives (c10d) and
# the functional ones, which register their work for wait_tensor (_c10d_functional).
_EFFECTFUL = {"c10d", "_c10d_functional", "_c10d_functional_autograd"}


def _cacheable_op(func):
    if func.namespace in _EFFECTFUL:
        return False
    schema = func._schema
    if any(r.alias_info is not None for r in schema.returns):
        return False
    if any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments):
        return False
    tags = set(getattr(func, "tags", ()))
    tag = getattr(torch, "Tag", None)
    bad = {getattr(tag, t, None) for t in ("dynamic_output_shape", "inplace_view",
                                           "data_dependent_output")} if tag else set()
    return not (tags & (bad - {None}))


def _key_of(x):
    if isinstance(x, torch.Tensor):
        if x.device.type != "meta" or x.is_sparse or x.layout != torch.strided:
            raise _Uncacheable
        # No storage offset: a fresh output's sizes and strides do not depend on it.
        return (x.dtype, tuple(x.shape), x.stride(), x.requires_grad)
    if isinstance(x, _SCALARS):
        return (type(x), x)
    if type(x) in (list, tuple):
        return (type(x), tuple(_key_of(v) for v in x))
    raise _Uncacheable


class _Uncacheable(Exception):
    pass


class MetaCache:
    def __init__(self):
        self._ops = {}      # func -> whether its results can be cached
        self._results = {}  # (func, argument keys) -> [(dtype, sizes, strides)] or None

    def key(self, func, args, kwargs):
        """The cache key of a call (args, kwargs: meta tensors and plain values), or None."""
        ok = self._ops.get(func)
        if ok is None:
            ok = self._ops[func] = _cacheable_op(func)
        if not ok:
            return None
        try:
            return (func, tuple(_key_of(a) for a in args),
                    tuple((k, _key_of(v)) for k, v in kwargs.items()))
        except _Uncacheable:
            return None

    def lookup(self, key):
        """The outputs of a cached call, as new meta tensors in the op's result's structure; or
        None when the call is not cached (or cannot be)."""
        entry = self._results.get(key)
        if entry is None:
            return None
        kind, specs = entry
        outs = [torch.empty_strided(sizes, strides, dtype=dtype, device="meta")
                if dtype is not None else value for dtype, sizes, strides, value in specs]
        return outs[0] if kind is None else kind(outs)

    def store(self, key, out, inputs):
        """Keeps `out` (the meta kernel's result for `key`; `inputs`: the call's arguments,
        flattened) when its tensors are fresh: none on an input's storage (an op such as
        _unsafe_view aliases its input without saying so in its schema), one per storage, each
        starting at its storage's beginning and filling it exactly. Otherwise the op is not
        cached again."""
        kind = type(out) if type(out) in (list, tuple) else None
        items = list(out) if kind is not None else [out]
        storages = {storage_key(x) for x in inputs
                    if isinstance(x, torch.Tensor) and x.device.type == "meta"}
        specs = []
        for o in items:
            if isinstance(o, torch.Tensor) and o.device.type == "meta" and storage_key(o) in storages:
                self._ops[key[0]] = False  # it aliases: never cache it
                return
        for o in items:
            if isinstance(o, torch.Tensor):
                if o.device.type != "meta" or o.layout != torch.strided or o.storage_offset():
                    return
                if storage_key(o) in storages:
                    return
                storages.add(storage_key(o))
                fresh = torch.empty_strided(o.shape, o.stride(), dtype=o.dtype, device="meta")
                if storage_nbytes(fresh) != storage_nbytes(o):
                    return
                specs.append((o.dtype, tuple(o.shape), o.stride(), None))
            elif isinstance(o, _SCALARS):
                specs.append((None, None, None, o))
            else:
                return
        self._results[key] = (kind, specs)

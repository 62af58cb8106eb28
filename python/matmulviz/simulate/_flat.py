"""Flattening an aten op's arguments and results to a list and back, for the simulation's hot
path. An aten schema nests at most one level (a Tensor[] or int[] argument; a tuple or list of
tensors as the result), so this is a plain loop; PyTorch's general torch.utils._pytree costs
about as much as the rest of an op's simulation. Anything nested deeper goes through pytree."""

from torch.utils._pytree import tree_flatten, tree_unflatten

_SEQUENCES = (list, tuple)


def _shallow(values):
    """(flat, spec) of a sequence whose items are leaves or flat lists/tuples of leaves, or
    None when one nests deeper."""
    flat, spec = [], []
    for v in values:
        if type(v) in _SEQUENCES:
            for x in v:
                if type(x) in _SEQUENCES or type(x) is dict:
                    return None
            spec.append((type(v), len(v)))
            flat.extend(v)
        elif type(v) is dict:
            return None
        else:
            spec.append(None)
            flat.append(v)
    return flat, spec


def _rebuild(flat, spec, start=0):
    out, i = [], start
    for s in spec:
        if s is None:
            out.append(flat[i])
            i += 1
        else:
            kind, n = s
            out.append(kind(flat[i:i + n]))
            i += n
    return out, i


def flatten_args(args, kwargs):
    """(flat, spec) of an op's (args, kwargs); unflatten_args(flat, spec) rebuilds them."""
    shallow = _shallow(tuple(args) + tuple(kwargs.values()))
    if shallow is None:
        flat, spec = tree_flatten((args, kwargs))
        return flat, ("pytree", spec)
    flat, spec = shallow
    return flat, (len(args), tuple(kwargs), spec)


def unflatten_args(flat, spec):
    if spec[0] == "pytree":
        return tree_unflatten(flat, spec[1])
    nargs, keys, inner = spec
    values, _ = _rebuild(flat, inner)
    return tuple(values[:nargs]), dict(zip(keys, values[nargs:]))


def flatten_result(out):
    """(flat, spec) of an op's result: a leaf, or a list/tuple of leaves (one level)."""
    if type(out) in _SEQUENCES:
        shallow = _shallow(out)
        if shallow is not None:
            return shallow[0], (type(out), shallow[1])
    if isinstance(out, (list, tuple, dict)):  # deeper, or a named tuple
        flat, spec = tree_flatten(out)
        return flat, ("pytree", spec)
    return [out], None


def unflatten_result(flat, spec):
    if spec is None:
        return flat[0]
    if spec[0] == "pytree":
        return tree_unflatten(flat, spec[1])
    kind, inner = spec
    values, _ = _rebuild(flat, inner)
    return kind(values)

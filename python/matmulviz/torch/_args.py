"""PyTorch's argument parser, as far as its errors go: the TypeErrors torch raises for arguments
of the wrong type (torch/csrc/utils/python_arg_parser.cpp), worded the same."""

import builtins


def type_name(obj):
    """The name torch's parser gives an argument's type ("int", "str", "Tensor", "NoneType")."""
    return type(obj).__name__


def invalid_combination(fn, args, kwargs=None, signatures=()):
    """TypeError "fn() received an invalid combination of arguments - got (int, dtype=str), but
    expected one of:" followed by the signatures, one a line."""
    got = [type_name(a) for a in args]
    got += [f"{k}={type_name(v)}" for k, v in sorted((kwargs or {}).items())]
    lines = [f"{fn}() received an invalid combination of arguments - got ({', '.join(got)}), "
             "but expected one of:"]
    lines += [f" * {s}" for s in signatures]
    return TypeError("\n".join(lines))


def passed(**kwargs):
    """The keyword arguments a caller gave (those not left at None/False), for
    invalid_combination."""
    return {k: v for k, v in kwargs.items() if v is not None and v is not False}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, builtins.bool) or \
        (hasattr(v, "__index__") and not isinstance(v, (float, builtins.bool)) and
         type(v).__name__ != "Tensor")


def size_args(size, fn, name="size", kind="SymInts", kwargs=None, signatures=()):
    """The sizes of fn(*size) or fn(size): a list of ints. A non-int element is "fn(): argument
    'size' must be tuple of SymInts, but found element of type str at pos 2"; a lone argument
    that is neither an int nor a sequence is an invalid combination."""
    items = size
    if len(size) == 1 and not is_int(size[0]):
        if not isinstance(size[0], (tuple, list)):
            raise invalid_combination(fn, size, kwargs, signatures)
        items = size[0]
    out = []
    for pos, s in enumerate(items, 1):
        if not is_int(s):
            raise TypeError(f"{fn}(): argument '{name}' must be tuple of {kind}, but found element "
                            f"of type {type_name(s)} at pos {pos}")
        out.append(int(s))
    return out


def check_tensor(fn, name, pos, value, tensor_type):
    if not isinstance(value, tensor_type):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type_name(value)}")

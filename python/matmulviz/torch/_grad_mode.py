"""no_grad, enable_grad, set_grad_enabled, inference_mode: context managers and decorators over
the engine's grad mode."""

import functools

from matmulviz import _C


def is_grad_enabled():
    return _C.is_grad_enabled()


class _GradModeContext:
    _enabled = True

    def __enter__(self):
        self._previous = _C.is_grad_enabled()
        _C.set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self._previous)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    _enabled = False


class enable_grad(_GradModeContext):
    _enabled = True


class inference_mode(_GradModeContext):
    """As no_grad here: the engine has no separate inference tensors."""

    def __init__(self, mode=True):
        self._enabled = not mode


class set_grad_enabled(_GradModeContext):
    """Sets grad mode at once (as a function) and restores it when used as a context manager."""

    def __init__(self, mode):
        self._previous = _C.is_grad_enabled()
        self._enabled = bool(mode)
        _C.set_grad_enabled(self._enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self._previous)
        return False

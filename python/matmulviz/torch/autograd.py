"""torch.autograd: backward and grad over the engine's autograd."""

from matmulviz import _C
from matmulviz.torch._grad_mode import enable_grad, no_grad, set_grad_enabled  # noqa: F401


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    if create_graph:
        raise NotImplementedError("torch.autograd.backward(create_graph=True) is not supported by "
                                  "matmulviz.torch; see docs/python.md")
    if inputs is not None:
        raise NotImplementedError("torch.autograd.backward(inputs=...) is not supported by "
                                  "matmulviz.torch; see docs/python.md")
    tensors = [tensors] if isinstance(tensors, _C.Tensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, _C.Tensor):
        grad_tensors = [grad_tensors]
    for t, g in zip(tensors, grad_tensors):
        _C._backward(t, g, bool(retain_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    if create_graph:
        raise NotImplementedError("torch.autograd.grad(create_graph=True) is not supported by "
                                  "matmulviz.torch; see docs/python.md")
    if not isinstance(outputs, _C.Tensor):
        outputs = list(outputs)
        if len(outputs) != 1:
            raise NotImplementedError("torch.autograd.grad with several outputs is not supported "
                                      "by matmulviz.torch; see docs/python.md")
        outputs = outputs[0]
    if isinstance(grad_outputs, (list, tuple)):
        grad_outputs = grad_outputs[0] if grad_outputs else None
    single = isinstance(inputs, _C.Tensor)
    inputs = [inputs] if single else list(inputs)
    return tuple(_C._grad(outputs, inputs, grad_outputs, bool(retain_graph), allow_unused))

"""What each block of a simulated run holds, in the categories of PyTorch's memory profiler
(torch/profiler/_memory_profiler.py, Category), the vocabulary the snapshot reader uses too
(core/io/snapshot_categories.h):

- parameter: a module's parameters (nn.Parameter of a simulated tensor, Module.cuda()'s copies)
- optimizer state: the tensors an optimizer keeps in its `state` (Adam's exp_avg, exp_avg_sq,
  step), found after each step (2.x's global step hook) and before each backward
- inputs: a CPU tensor copied to the device (a batch's .cuda() / .to("cuda"))
- gradients: a parameter's .grad after a backward
- autograd detail: the rest of what a backward allocates
- activation: what autograd saved for the backward and no variable holds (the report's writer)
- temporary: made and freed within one call of an op (the report's writer)
- cuBLAS workspace, and other for anything else.
A block keeps the category it was last given: a parameter first copied as an input is a
parameter."""

import weakref

import torch

from matmulviz import _C
from matmulviz.simulate import _cuda_api
from matmulviz.simulate._tensor import TENSOR_BASE


class Categories:
    def __init__(self, sim):
        self._sim = sim
        self._parameters = weakref.WeakSet()
        self._optimizers = weakref.WeakSet()

    def set(self, t, category):
        """Gives simulated tensor `t`'s block `category` (a memory category's name)."""
        block_id = self._sim.block_id(t)
        if block_id >= 0:
            _C._sim_set_category(block_id, category)

    def parameter(self, t):
        self._parameters.add(t)
        self.set(t, "parameter")

    def copied_to_device(self, source, copy):
        """`copy` is the device copy of CPU tensor `source`: a parameter's or an input."""
        self.set(copy, "parameter" if isinstance(source, torch.nn.Parameter) else "inputs")

    def after_backward(self):
        for p in list(self._parameters):
            g = TENSOR_BASE.grad.__get__(p)
            if g is not None:
                self.set(g, "gradients")

    def before_backward(self):
        for optimizer in list(self._optimizers):
            self.optimizer_state(optimizer)

    def optimizer_state(self, optimizer):
        for state in getattr(optimizer, "state", {}).values():
            for value in state.values() if isinstance(state, dict) else ():
                if isinstance(value, torch.Tensor):
                    self.set(value, "optimizer state")


def install(categories):
    """Notes each optimizer made during the run, and its state after each step where PyTorch
    has a global step hook (2.x); returns what uninstall() restores."""
    saved = [_cuda_api.saved_attribute(torch.optim.Optimizer, "__init__")]
    init = torch.optim.Optimizer.__init__

    def noted_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        categories._optimizers.add(self)

    torch.optim.Optimizer.__init__ = noted_init
    handles = []
    import torch.optim.optimizer as optimizer_module  # 1.13 does not import it as an attribute
    register = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
    if register is not None:
        handles.append(register(lambda optimizer, args, kwargs:
                                categories.optimizer_state(optimizer)))
    return saved, handles


def uninstall(installed):
    saved, handles = installed
    for handle in handles:
        handle.remove()
    _cuda_api.uninstall(saved)

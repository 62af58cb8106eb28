"""The device a simulated CUDA tensor is to PyTorch's C++, and what a machine without a GPU must
be given for that.

On a CUDA build of PyTorch 2.x (the package index's torch), a SimTensor is a CUDA tensor to C++:
it carries CUDA's dispatch keys over a meta tensor's storage-less data, as PyTorch's own fake
tensors are made (torch/_subclasses/fake_tensor.py). So every branch PyTorch takes by device
takes the GPU's, in PyTorch's own code: autocast's casts by its own op lists and its cache of cast
weights (aten/src/ATen/autocast_mode.cpp), dropout's fused kernel (Dropout.cpp,
is_fused_kernel_acceptable), batch norm's cuDNN kernel (Normalization.cpp,
_batch_norm_impl_index), and scaled-dot-product attention's fused kernels, whose choice
(_fused_sdp_choice) the simulation answers with core's rule for the simulated GPU. Two things
such a machine lacks are supplied by PyTorch's own means:

- A CUDA device guard that needs no driver: torch._C._ensureCUDADeviceGuardSet() (what
  FakeTensorMode installs on a machine without a GPU; c10/core/impl/DeviceGuardImplInterface.h,
  NoOpDeviceGuardImpl), so that autograd can record a CUDA tensor's stream.
- An autograd engine that does not ask the driver: torch/csrc/autograd/engine.cpp,
  GraphTask::stash_current_streams, asks CUDA for a primary context on every device the guard
  counts (hasPrimaryContext, which throws without a GPU) whenever a node of the graph has a stream
  of the accelerator. A backend registered for PrivateUse1 in Python
  (torch.utils.backend_registration._setup_privateuseone_for_python_backend) becomes the
  accelerator (at::getAccelerator prefers it), so CUDA nodes carry no stream the engine would
  synchronise. Then Engine::evaluate_function requires a stream for every accelerator tensor in a
  node's input buffer, so the gradients are meta tensors to C++ (their Python device stays
  cuda:0): the root gradient is made so (Simulation.in_backward), and what an op computes from a
  meta tensor, or a factory makes inside a backward, is meta too (Simulation.run_op). Backward
  runs on the calling thread (torch.autograd.set_multithreading_enabled(False)), as it does for
  meta tensors.

The registration is for the process: after the first simulation, PyTorch's accelerator is that
backend (torch.accelerator answers "cuda" while a simulation runs), so a process that also
trains on a real GPU should run its simulations in another process (python3 -m
matmulviz.simulate). On Debian's PyTorch 1.13 and on CPU-only builds there is no CUDA device
type to carry: a SimTensor is a meta tensor to C++ there, and the simulation takes the device
branches it knows (dropout) itself."""

import torch

# The C++ tensor's own attributes, which a SimTensor's Python properties override (1.13's name).
TENSOR_BASE = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase

META = torch.device("meta")
CUDA = torch.device("cuda", 0)

# The PrivateUse1 backend's name (torch._C._get_privateuse1_backend_name() once registered).
BACKEND = "matmulviz_sim"

_prepared = False


def cuda_keys():
    """Whether SimTensors are CUDA tensors to C++ in this PyTorch: a CUDA build of 2.x with the
    hooks above."""
    return (torch.version.cuda is not None
            and hasattr(torch._C, "_ensureCUDADeviceGuardSet")
            and hasattr(torch.autograd, "set_multithreading_enabled")
            and hasattr(torch.utils, "backend_registration"))


def prepare():
    """Installs the guard and the backend above, once per process (cuda_keys() must be True)."""
    global _prepared
    if _prepared:
        return
    if torch._C._get_privateuse1_backend_name() == "privateuseone":
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend
        _setup_privateuseone_for_python_backend(BACKEND)
    torch._C._ensureCUDADeviceGuardSet()
    _prepared = True


def cpp_device(t):
    """The device C++ sees for tensor `t` (a SimTensor's Python .device always says cuda:0)."""
    return TENSOR_BASE.device.__get__(t)


def is_meta(t):
    """Whether C++ sees tensor `t` as a meta tensor."""
    return TENSOR_BASE.is_meta.__get__(t)

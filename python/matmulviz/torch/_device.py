"""torch.device, and the device strings the engine accepts ("cpu", "cuda", "cuda:0")."""


# Device types PyTorch knows and matmulviz does not simulate.
_OTHER_TYPES = ("ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "ort",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "privateuseone")


class device:
    """torch.device("cuda"), torch.device("cuda", 0), torch.device("cpu")."""

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            type, _, idx = type.partition(":")
            index = int(idx)
        if type in _OTHER_TYPES:
            raise NotImplementedError(f"torch.device('{type}') is not supported by "
                                      "matmulviz.torch (it has the cpu and a simulated cuda)")
        if type not in ("cpu", "cuda"):
            raise RuntimeError("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, "
                               "ideep, hip, ve, fpga, ort, xla, lazy, vulkan, mps, meta, hpu, "
                               f"privateuseone device type at start of device string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


_default = "cpu"


def set_default(d):
    """torch.set_default_device: the device factories use when given none (None: the CPU)."""
    global _default
    _default = "cpu" if d is None else normalize(device(d) if not isinstance(d, device) else d)


def default():
    return _default


def normalize(d):
    """The engine's device string for a device argument (None: the default device, the CPU
    unless torch.set_default_device changed it)."""
    if d is None:
        return _default
    if isinstance(d, str):
        return d
    if isinstance(d, int):
        return f"cuda:{d}"
    return str(d)

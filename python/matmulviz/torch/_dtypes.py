"""torch.float32 and friends: the engine's dtypes, printed as PyTorch prints them."""

from matmulviz import _C

dtype = _C.dtype
float32 = float = _C.dtype.float32
float16 = half = _C.dtype.float16
bfloat16 = _C.dtype.bfloat16
float64 = double = _C.dtype.float64
int64 = long = _C.dtype.int64
bool = _C.dtype.bool

# pybind11's enum prints "dtype.float32"; PyTorch prints "torch.float32".
_NAMES = {member: "torch." + key for key, member in _C.dtype.__members__.items()}
_C.dtype.__repr__ = _C.dtype.__str__ = lambda self: _NAMES[self]

"""In-place writes after a tensor was saved for backward: PyTorch's version counter. A backward
that would read the modified values fails with PyTorch's message; one that needs none of them
runs (torch/csrc/autograd/saved_variable.cpp)."""

import pytest

import matmulviz.torch as torch

MESSAGE = ("one of the variables needed for gradient computation has been modified by an "
           "inplace operation: [{type} [{sizes}]]{producer}, is at version 1; expected version "
           "0 instead. Hint: enable anomaly detection to find the operation that failed to "
           "compute its gradient, with torch.autograd.set_detect_anomaly(True).")


def test_saved_output_modified_in_place():
    x = torch.ones(3, requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its result, y
    y[0] = 0
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value) == MESSAGE.format(type="torch.FloatTensor", sizes="3",
                                          producer=", which is output 0 of ExpBackward0")


def test_saved_input_modified_in_place_on_cuda():
    a = torch.ones(2, 3, requires_grad=True, device="cuda")
    c = torch.ones(3, 2, device="cuda").clone()
    out = a @ c  # MmBackward0 saves c as mat2 for a's gradient
    c[0, 0] = 5
    with pytest.raises(RuntimeError) as e:
        out.sum().backward()
    assert str(e.value) == MESSAGE.format(type="torch.cuda.FloatTensor", sizes="3, 2", producer="")


def test_a_view_shares_the_counter():
    a = torch.ones(2, 3, requires_grad=True)
    c = torch.ones(3, 2)
    out = a @ c
    c.t()[1, 1] = 7  # written through a view: the same storage, the same counter
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        out.sum().backward()


def test_nothing_saved_nothing_refused():
    z = torch.ones(3, requires_grad=True)
    w = z * 2  # a number: MulBackward0 saves no tensor
    w[0] = 1
    w.sum().backward()
    assert z.grad.tolist() == [0.0, 2.0, 2.0]

"""FLOP counts of matmulviz.torch.utils.flop_counter.FlopCounterMode.

Debian's PyTorch 1.13 has no torch.utils.flop_counter, so the expected counts are computed here
from the formulas of PyTorch's torch/utils/flop_counter.py: mm_flop([m, k], [k, n]) =
2 * m * n * k (addmm the same), bmm_flop([b, m, k], [b, k, n]) = 2 * b * m * n * k (baddbmm
the same); ops without a registered formula (aten.dot, aten.mv, pointwise ops, reductions)
count 0; matmul and einsum count through the ops they decompose to; backward through the
mm/bmm of the backward formulas.
"""

import warnings

import pytest

import matmulviz.torch as torch
from matmulviz.torch.utils.flop_counter import FlopCounterMode

pytestmark = pytest.mark.usefixtures("empty_device")

aten = torch.ops.aten


def mm_flop(m, k, n):
    return 2 * m * n * k


def bmm_flop(b, m, k, n):
    return 2 * b * m * n * k


def counts_of(fn):
    with FlopCounterMode(display=False) as mode:
        fn()
    return mode.get_total_flops(), mode.get_flop_counts().get("Global", {})


def test_op_handles_print_and_hash_as_pytorch():
    assert str(aten.mm) == "aten.mm" and repr(aten.bmm) == "aten.bmm"
    assert {aten.mm: 1, aten.bmm: 2, aten.addmm: 3, aten.baddbmm: 4}[aten.mm] == 1
    assert torch.ops.aten.mm is aten.mm


def test_mm():
    a, b = torch.randn(3, 5, device="cuda"), torch.randn(5, 7, device="cuda")
    total, counts = counts_of(lambda: torch.mm(a, b))
    assert total == mm_flop(3, 5, 7) == 210
    assert counts == {aten.mm: 210}


def test_bmm():
    a, b = torch.randn(2, 3, 5, device="cuda"), torch.randn(2, 5, 7, device="cuda")
    total, counts = counts_of(lambda: torch.bmm(a, b))
    assert total == bmm_flop(2, 3, 5, 7)
    assert counts == {aten.bmm: bmm_flop(2, 3, 5, 7)}


@pytest.mark.parametrize("sa,sb,op,flops", [
    ((4,), (4,), None, 0),                              # aten.dot: not registered
    ((3, 4), (4,), None, 0),                            # aten.mv: not registered
    ((4,), (4, 5), "mm", mm_flop(1, 4, 5)),             # unsqueeze(0).mm(...)
    ((3, 4), (4, 5), "mm", mm_flop(3, 4, 5)),
    ((2, 3, 4), (4, 5), "mm", mm_flop(6, 4, 5)),        # folded into one mm
    ((2, 3, 4), (4,), None, 0),                         # folded into one mv
    ((2, 3, 4), (2, 4, 5), "bmm", bmm_flop(2, 3, 4, 5)),
    ((3, 4), (2, 4, 5), "bmm", bmm_flop(2, 3, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6), "bmm", bmm_flop(10, 3, 4, 6)),  # broadcast batch [2, 5]
])
def test_matmul_counts_what_it_decomposes_to(sa, sb, op, flops):
    a, b = torch.randn(*sa, device="cuda"), torch.randn(*sb, device="cuda")
    total, counts = counts_of(lambda: torch.matmul(a, b))
    assert total == flops
    assert counts == ({getattr(aten, op): flops} if op else {})


def test_einsum_counts_its_bmm():
    a, b = torch.randn(2, 3, 4, device="cuda"), torch.randn(2, 4, 5, device="cuda")
    total, counts = counts_of(lambda: torch.einsum("bik,bkj->bij", a, b))
    assert total == bmm_flop(2, 3, 4, 5)
    assert counts == {aten.bmm: bmm_flop(2, 3, 4, 5)}


def test_pointwise_and_reductions_count_zero():
    a = torch.randn(3, 4, device="cuda")
    total, counts = counts_of(lambda: (a * a + a).cos().sum())
    assert total == 0 and counts == {}


@pytest.mark.parametrize("x_grad,w_grad,backward_mms", [(True, True, 2), (True, False, 1),
                                                        (False, True, 1)])
def test_forward_and_backward(x_grad, w_grad, backward_mms):
    m, k, n = 8, 16, 4
    x = torch.randn(m, k, device="cuda", requires_grad=x_grad)
    w = torch.randn(k, n, device="cuda", requires_grad=w_grad)
    with FlopCounterMode(display=False) as forward:
        y = (x @ w).sum()
    with FlopCounterMode(display=False) as backward:
        y.backward()
    assert forward.get_total_flops() == 2 * m * n * k
    assert backward.get_total_flops() == backward_mms * 2 * m * n * k
    assert backward.get_flop_counts() == {"Global": {aten.mm: backward_mms * 2 * m * n * k}}
    with FlopCounterMode(display=False) as both:
        (x @ w).sum().backward()
    assert both.get_total_flops() == (1 + backward_mms) * 2 * m * n * k


# The forum post's strategies (examples/forum_strategies.py), a [N, 1, D], c [M, D, D]: every
# one computes N products [1, D] @ [D, D]; they differ in the op that does it.
N, M, D = 8, 5, 64


def strategy1(a, c):
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[i, :, :]) for i in range(a.shape[0])],
                     dim=0)


def strategy2(a, c, q):
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[q[i]]) for i in range(a.shape[0])],
                     dim=0)


def strategy3(a, c, q, b=4):
    return torch.cat([torch.matmul(a[i * b:(i + 1) * b], c[q[i * b:(i + 1) * b]])
                      for i in range((a.shape[0] + b - 1) // b)], dim=0)


@pytest.mark.parametrize("name,op", [("strategy1", "mm"), ("strategy2", "mm"),
                                     ("strategy3", "bmm"), ("direct", "bmm")])
def test_forum_strategies(name, op):
    torch.manual_seed(0)
    a = torch.rand(N, 1, D, device="cuda", requires_grad=True)
    c = torch.rand(M, D, D, device="cuda")
    q = torch.randint(0, M, (N,))
    run = {"strategy1": lambda: strategy1(a, c[q]), "strategy2": lambda: strategy2(a, c, q),
           "strategy3": lambda: strategy3(a, c, q), "direct": lambda: torch.matmul(a, c[q])}[name]
    with FlopCounterMode(display=False) as forward:
        out = run()
    expected = N * mm_flop(1, D, D)  # == bmm_flop(N, 1, D, D)
    assert forward.get_flop_counts() == {"Global": {getattr(aten, op): expected}}
    with FlopCounterMode(display=False) as backward:
        out.sum().backward()  # only a needs a gradient: one product per row again
    assert backward.get_flop_counts() == {"Global": {getattr(aten, op): expected}}


def test_display_table_as_pytorch(capsys):
    a, b = torch.randn(128, 128, device="cuda"), torch.randn(128, 128, device="cuda")
    with FlopCounterMode():
        torch.mm(a, b)
    # PyTorch's get_table: suffix from the total's digits with one digit of overflow (4194304
    # shows as 4194.304K), three decimals, tabulate's layout.
    assert capsys.readouterr().out == (
        "Module           FLOP    % Total\n"
        "----------  ---------  ---------\n"
        "Global      4194.304K    100.00%\n"
        " - aten.mm  4194.304K    100.00%\n")
    with FlopCounterMode():
        pass
    assert capsys.readouterr().out == (
        "Module      FLOP    % Total\n"
        "--------  ------  ---------\n"
        "Global         0         0%\n")
    small = torch.randn(4, 4, device="cuda")
    with FlopCounterMode() as mode:
        torch.bmm(small.unsqueeze(0), small.unsqueeze(0))
        torch.mm(small, small)
    assert capsys.readouterr().out == mode.get_table() + "\n" == (
        "Module         FLOP    % Total\n"
        "-----------  ------  ---------\n"
        "Global          256    100.00%\n"
        " - aten.bmm     128     50.00%\n"
        " - aten.mm      128     50.00%\n")


def test_arguments_as_pytorch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FlopCounterMode(mods=[], display=False)
    assert "mods argument is not needed anymore" in str(caught[0].message)
    with pytest.raises(NotImplementedError, match="custom_mapping"):
        FlopCounterMode(custom_mapping={aten.mm: lambda *a, **k: 0})
    # PyTorch's counts are a defaultdict: reading the total creates the empty "Global" entry.
    with FlopCounterMode(display=False) as mode:
        pass
    assert mode.get_flop_counts() == {}
    assert mode.get_total_flops() == 0 and mode.get_flop_counts() == {"Global": {}}
    with mode:
        pass
    assert mode.get_flop_counts() == {}


def test_gather_bmm_counts_as_the_bmm_it_replaces():
    import matmulviz

    a = torch.randn(4, 2, 3, device="cuda", requires_grad=True)
    c = torch.randn(5, 3, 6, device="cuda", requires_grad=True)
    q = torch.tensor([0, 4, 2, 0])
    with FlopCounterMode(display=False) as forward:
        out = matmulviz.gather_bmm(a, c, q)
    assert forward.get_flop_counts() == {
        "Global": {torch.ops.matmulviz.gather_bmm: bmm_flop(4, 2, 3, 6)}}
    assert str(torch.ops.matmulviz.gather_bmm) == "matmulviz.gather_bmm"
    with FlopCounterMode(display=False) as backward:
        out.sum().backward()  # dA and dC: one bmm-sized product each
    assert backward.get_flop_counts() == {
        "Global": {torch.ops.matmulviz.gather_bmm_backward: 2 * bmm_flop(4, 2, 3, 6)}}

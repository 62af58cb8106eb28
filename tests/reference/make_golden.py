#!/usr/bin/python3
"""Writes the golden fixtures of tests/reference/golden/ with the real PyTorch.

Run once (needs Debian's python3-torch and python3-numpy: `scripts/setup --reference`):

    /usr/bin/python3 tests/reference/make_golden.py

and commit the JSON files it writes. CI never runs this script; the C++ tests
(tests/core/test_multihead_golden.cpp, test_einsum.cpp) read the fixtures.

The Python module's fixture (golden/python_api.json, the cases of tests/python/cases.py) is
written by its own script, tests/reference/make_python_golden.py.

Every value is stored as a JSON number that round-trips exactly (Python's repr of a
float64); float16/bfloat16 values are exact in float64. Inputs are rounded to the case's
dtype before anything is computed, so the C++ side starts from the same bits.

float16/bfloat16 products: PyTorch's CPU build has no float16 matmul ("addmm_impl_cpu_" not
implemented for 'Half'), so 16-bit cases are computed in float32 from the 16-bit inputs and
rounded once to the dtype at the end: what cuBLAS does (float32 accumulation, one rounding),
and what the engine does. Each product here is rounded once in PyTorch too, so the only
difference is the order of the float32 accumulation.
"""

import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def flat(t):
    return [float(v) for v in t.detach().double().reshape(-1).tolist()]


def important_mask(P, top_p, top_k):
    """P >= top_p (compared in P's dtype, as PyTorch does for a Python float) AND among the
    top_k of its row; ties at the boundary: the lower index wins (a stable descending sort)."""
    s = P.shape[1]
    k = s if top_k is None else top_k
    order = torch.sort(P.float(), dim=-1, descending=True, stable=True).indices[:, :k]
    in_top_k = torch.zeros(P.shape, dtype=torch.bool).scatter_(1, order, True)
    return in_top_k & (P >= top_p)


def multi_head(A, W1, nh):
    """[..., h] @ per-head [hd, e] -> [..., nh, e], in float32."""
    h, e = W1.shape
    A2 = A.reshape(*A.shape[:-1], nh, h // nh)
    W2 = W1.reshape(nh, h // nh, e)
    return torch.einsum("...nd,nde->...ne", A2, W2)


def importance_case(name, dtype, b, s, h, e, nh, top_p, top_k, backward, seed, P=None):
    dt = DTYPES[dtype]
    g = torch.Generator().manual_seed(seed)
    A1 = torch.randn(b, s, h, generator=g).to(dt)
    W1 = torch.randn(h, e, generator=g).to(dt)
    if P is None:
        P = torch.rand(b, s, generator=g)
    P = torch.as_tensor(P, dtype=torch.float32).reshape(b, s).to(dt)
    mask = important_mask(P, top_p, top_k)
    t = int(mask.sum())
    A1f = A1.float().requires_grad_(backward)
    W1f = W1.float().requires_grad_(backward)
    O2 = multi_head(A1.float(), W1.float(), nh).to(dt)
    O3f = multi_head(A1f[mask], W1f, nh)
    case = {
        "name": name, "dtype": dtype, "b": b, "s": s, "h": h, "e": e, "num_heads": nh,
        "top_p": top_p, "top_k": top_k, "A1": flat(A1), "P": flat(P), "W1": flat(W1),
        "O2": flat(O2), "t": t, "mask": [int(v) for v in mask.reshape(-1).tolist()],
        "O3": flat(O3f.to(dt)), "grad_output": None, "dA1": None, "dW1": None,
    }
    if backward:
        gO = torch.randn(t, nh, e, generator=g).to(dt)
        O3f.backward(gO.float())
        case["grad_output"] = flat(gO)
        case["dA1"] = flat(A1f.grad.to(dt))
        case["dW1"] = flat(W1f.grad.to(dt))
    return case


def importance_cases():
    cases = []
    seed = 100
    for dtype in DTYPES:
        grid = [
            # name, b, s, h, e, nh, top_p, top_k
            ("odd", 3, 7, 6, 5, 3, 0.3, 4),
            ("all_tokens", 2, 5, 8, 3, 2, 0.0, None),
            ("top_k_1", 2, 9, 4, 3, 4, 0.0, 1),
            ("top_k_s", 2, 6, 9, 2, 3, 0.5, 6),
            ("top_p_1", 2, 5, 4, 4, 1, 1.0, None),
            ("one_head", 1, 3, 5, 7, 1, 0.2, 2),
            ("heads_eq_h", 2, 4, 6, 3, 6, 0.4, 3),
        ]
        for name, b, s, h, e, nh, top_p, top_k in grid:
            for backward in (False, True):
                seed += 1
                suffix = "_grad" if backward else ""
                cases.append(importance_case(f"{dtype}_{name}{suffix}", dtype, b, s, h, e, nh,
                                             top_p, top_k, backward, seed))
        # Probabilities exactly equal to top_p (0.1 is inexact in every dtype: the comparison
        # happens after rounding top_p to P's dtype), no ties at the top_k boundary.
        P = [0.1, 0.05, 0.1, 0.7, 0.1, 0.2, 0.09, 0.1]
        seed += 1
        cases.append(importance_case(f"{dtype}_p_equals_top_p_grad", dtype, 2, 4, 4, 3, 2, 0.1,
                                     None, True, seed, P=P))
        # No important token at all: t = 0.
        seed += 1
        cases.append(importance_case(f"{dtype}_none_important_grad", dtype, 2, 5, 6, 4, 3, 0.99,
                                     2, True, seed, P=[0.5] * 10))
    return cases


EINSUM = [
    # name, equation, shapes
    ("mm", "ik,kj->ij", [[5, 7], [7, 3]]),
    ("outer_k", "ik,kj->ikj", [[5, 7], [7, 3]]),
    ("multihead", "bsnd,nde->bsne", [[2, 3, 4, 5], [4, 5, 6]]),
    ("implicit_mm", "ij,jk", [[3, 4], [4, 2]]),
    ("implicit_transpose", "ba", [[3, 4]]),
    ("diagonal", "ii->i", [[5, 5]]),
    ("trace", "ii", [[4, 4]]),
    ("sum_all", "ij->", [[3, 5]]),
    ("sum_rows", "ij->i", [[3, 5]]),
    ("transpose", "ij->ji", [[3, 5]]),
    ("batch_mm", "bij,bjk->bik", [[3, 2, 5], [3, 5, 4]]),
    ("ellipsis_bmm", "...ij,...jk->...ik", [[2, 3, 4, 5], [3, 5, 2]]),
    ("ellipsis_broadcast", "...ij,jk", [[2, 1, 3, 4], [4, 5]]),
    ("ellipsis_sum", "i...->...", [[3, 2, 4]]),
    ("dot", "i,i->", [[7], [7]]),
    ("outer", "i,j->ij", [[3], [4]]),
    ("broadcast_mul", "ij,ij->ij", [[3, 4], [3, 4]]),
    ("three_operands", "ij,jk,kl->il", [[3, 4], [4, 5], [5, 2]]),
    ("bilinear", "bn,anm,bm->ba", [[2, 3], [4, 3, 5], [2, 5]]),
    ("repeated_two_ops", "iij,jk->ik", [[3, 3, 4], [4, 2]]),
    ("upper_labels", "Ab,bC->AC", [[3, 4], [4, 2]]),
    ("spaces", "i j , j k -> i k", [[2, 3], [3, 4]]),
    ("size_one_broadcast", "ij,jk->ik", [[3, 1], [4, 5]]),
    ("empty_dim", "ik,kj->ij", [[0, 3], [3, 4]]),
    ("empty_contraction", "ik,kj->ij", [[2, 0], [0, 4]]),
]


def einsum_cases():
    cases = []
    seed = 1000
    for dtype in DTYPES:
        for name, eq, shapes in EINSUM:
            if dtype != "float32" and name not in ("mm", "multihead", "three_operands",
                                                     "sum_rows", "ellipsis_bmm"):
                continue
            seed += 1
            g = torch.Generator().manual_seed(seed)
            ops = [torch.randn(*sh, generator=g).to(DTYPES[dtype]) for sh in shapes]
            out = torch.einsum(eq, *[o.float() for o in ops]).to(DTYPES[dtype])
            cases.append({"name": f"{dtype}_{name}", "dtype": dtype, "equation": eq,
                          "shapes": shapes, "operands": [flat(o) for o in ops],
                          "out_shape": list(out.shape), "out": flat(out)})
    return cases


def einsum_errors():
    """Malformed equations and mismatched sizes: PyTorch's messages (RuntimeError text)."""
    bad = [
        ("ik,kj->ij", [[2, 3]]),
        ("ik->ik", [[2, 3], [3, 2]]),
        ("ik,kj->ij", [[2, 3], [4, 2]]),
        ("ijk,kj->ij", [[2, 3], [3, 2]]),
        ("i1,1j->ij", [[2, 3], [3, 2]]),
        ("ik,kj->iz", [[2, 3], [3, 2]]),
        ("ik,kj->ii", [[2, 3], [3, 2]]),
        ("ii->i", [[2, 3]]),
        ("i..,j->ij", [[2, 3], [3]]),
        ("...i,...i->......", [[2, 3], [2, 3]]),
    ]
    out = []
    for eq, shapes in bad:
        ops = [torch.zeros(*sh) for sh in shapes]
        try:
            torch.einsum(eq, *ops)
            raise SystemExit(f"expected an error for {eq}")
        except RuntimeError as e:
            out.append({"equation": eq, "shapes": shapes, "message": str(e).split("\n")[0]})
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {"generator": "tests/reference/make_golden.py", "torch": torch.__version__}
    for fname, payload in (("importance.json", {"cases": importance_cases()}),
                           ("einsum.json", {"cases": einsum_cases(), "errors": einsum_errors()})):
        payload = {**meta, **payload}
        with open(os.path.join(OUT, fname), "w") as f:
            json.dump(payload, f, separators=(",", ":"), allow_nan=False)
            f.write("\n")
        print(f"wrote {fname}: {os.path.getsize(os.path.join(OUT, fname))} bytes")


if __name__ == "__main__":
    main()

# Multi-head matmul and matmul over "important" tokens, with their gradients: a multi-head
# matmul course assignment, solved with the PyTorch API on matmulviz's simulated CUDA device.
#
# Shapes: A1 [b, s, h] (a batch of sequences of hidden vectors), W1 [h, e], nh heads of
# hd = h / nh columns each. Head n multiplies columns n*hd:(n+1)*hd of every token by rows
# n*hd:(n+1)*hd of W1, so the output has one e-vector per token and head.
#
# Task 1, matmul_with_multi_head(A, W1, nh) -> [b, s, nh, e]: all tokens. Viewing A1 as
#   [b*s, nh, hd] and W1 as [nh, hd, e] turns it into one batched product over the heads; the
#   permutes and views around it copy nothing.
# Task 2, matmul_with_importance(A, P, W1, top_p, top_k, nh) -> O3 [t, nh, e]: only the t
#   important tokens. A token is important when its probability P[i, j] is at least top_p AND
#   it is among the top_k of its row (ties at the top_k boundary: the lower position wins, the
#   rule this repository's engine and its PyTorch fixtures use). The important rows are
#   gathered (A1[mask], a copy of t rows) and multiplied as in task 1.
# Task 3, with a grad_output for O3: backward gives dA1 (zero at unimportant tokens) and dW1.
#
# What autograd keeps is the point of the memory numbers printed at the end: for dW1 it must
# save the gathered rows, for dA1 the weights.
#
# Usage: scripts/python examples/multihead.py [--b 2 --s 8 --h 16 --e 4 --heads 4
#                                              --top-p 0.1 --top-k 3 --device cuda]
import matmulviz.torch as torch

import argparse
import math

import numpy as np

import matmulviz


def heads_product(rows, W1, nh):
    """rows [r, h] times each head's block of W1 -> [r, nh, e], with one bmm."""
    r, h = rows.shape
    e = W1.shape[1]
    hd = h // nh
    A2 = rows.view(r, nh, hd).permute(1, 0, 2)  # [nh, r, hd], a view
    W2 = W1.reshape(nh, hd, e)                  # [nh, hd, e], a view
    return torch.bmm(A2, W2).permute(1, 0, 2)   # [r, nh, e], a view of bmm's output


def matmul_with_multi_head(A, W1, nh):
    b, s, h = A.shape
    assert h % nh == 0, f"{nh} heads do not divide h = {h}"
    O = heads_product(A.reshape(b * s, h), W1, nh)
    return O.view(b, s, nh, W1.shape[1])


def important_mask(P, top_p, top_k):
    """[b, s] bool mask: P >= top_p (compared in P's dtype) and among the top_k of the row.
    Chosen on the host, as the decision is a handful of comparisons on b*s numbers; a
    stable sort of -P gives the descending order with the lower position first among ties."""
    p = P.detach().cpu().numpy()
    k = p.shape[1] if top_k is None else top_k
    order = np.argsort(-p, axis=1, kind="stable")[:, :k]
    in_top_k = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(in_top_k, order, True, axis=1)
    mask = in_top_k & (p >= np.array(top_p, dtype=p.dtype))
    return torch.from_numpy(mask).to(P.device)


def matmul_with_importance(A, P, W1, top_p, top_k, nh, grad_output=None):
    """Returns (O3, dA1, dW1); the gradients are None without grad_output. The caller's A
    and W1 are left as they are: the graph is built on detached aliases of them."""
    mask = important_mask(P, top_p, top_k)
    if grad_output is None:
        with torch.no_grad():
            return heads_product(A[mask], W1, nh), None, None
    a = A.detach().requires_grad_()
    w = W1.detach().requires_grad_()
    O3 = heads_product(a[mask], w, nh)
    O3.backward(grad_output)
    return O3.detach(), a.grad, w.grad


def norm(t):
    return math.sqrt((t * t).sum().item())


def size(nbytes):
    """Bytes, exact: these tensors are small, and every block is a multiple of 512 bytes."""
    return f"{nbytes} B" if nbytes < 2**20 else f"{nbytes} B ({nbytes / 2**20:.1f} MiB)"


def main():
    parser = argparse.ArgumentParser(description="The multi-head matmul assignment.")
    for name, default in (("b", 2), ("s", 8), ("h", 16), ("e", 4), ("heads", 4), ("top-k", 3)):
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--top-p", type=float, default=0.1)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    b, s, h, e, nh, dev = args.b, args.s, args.h, args.e, args.heads, args.device
    # The important tokens are chosen from P's values, so "cuda" must hold data (not meta).
    matmulviz.set_cuda_mode("data")

    # Deterministic inputs; P is a softmax over each sequence, so its rows sum to 1.
    A1 = torch.cos(torch.arange(b * s * h, dtype=torch.float32, device=dev) / 3).view(b, s, h)
    W1 = torch.sin(torch.arange(h * e, dtype=torch.float32, device=dev) / 5).view(h, e)
    P = torch.softmax(torch.cos(torch.arange(b * s, dtype=torch.float32, device=dev)).view(b, s) * 2,
                      dim=-1)

    O2 = matmul_with_multi_head(A1, W1, nh)
    ref = torch.einsum("bsnd,nde->bsne", A1.view(b, s, nh, h // nh), W1.view(nh, h // nh, e))
    print(f"task 1: O2 {list(O2.shape)}, contiguous: {O2.is_contiguous()}, "
          f"check against einsum: {torch.allclose(O2, ref, rtol=1e-5, atol=1e-6)}")

    mask = important_mask(P, args.top_p, args.top_k)
    t = int(mask.sum().item())
    O3, _, _ = matmul_with_importance(A1, P, W1, args.top_p, args.top_k, nh)
    print(f"task 2: top_p {args.top_p}, top_k {args.top_k}: t = {t} important tokens of {b * s}; "
          f"O3 {list(O3.shape)}, check against O2[mask]: {torch.allclose(O3, O2[mask])}")

    gO = torch.cos(torch.arange(t * nh * e, dtype=torch.float32, device=dev) / 2).view(t, nh, e)
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    O3, dA1, dW1 = matmul_with_importance(A1, P, W1, args.top_p, args.top_k, nh, gO)
    print(f"task 3: dA1 {list(dA1.shape)} norm {norm(dA1):.6f}, "
          f"dW1 {list(dW1.shape)} norm {norm(dW1):.6f}")
    # Task 3's own memory: the inputs, O3, dA1 and dW1 stay; the peak also counts what the
    # graph held until backward was done.
    print(f"memory after task 3: allocated {size(torch.cuda.memory_allocated())} "
          f"(before: {size(before)}), peak {size(torch.cuda.max_memory_allocated())}, "
          f"reserved {size(torch.cuda.memory_reserved())}")

    # The same gradients from einsum's own backward, with torch.autograd.grad.
    a = A1.detach().requires_grad_()
    w = W1.detach().requires_grad_()
    O3_ref = torch.einsum("tnd,nde->tne", a[mask].view(t, nh, h // nh), w.view(nh, h // nh, e))
    ga, gw = torch.autograd.grad(O3_ref, [a, w], grad_outputs=gO)
    print(f"check gradients against einsum's: dA1 {torch.allclose(dA1, ga, rtol=1e-5, atol=1e-6)}, "
          f"dW1 {torch.allclose(dW1, gw, rtol=1e-5, atol=1e-6)}")

    # What autograd saved for the product of task 3, on a graph kept alive for a look.
    a = A1.detach().requires_grad_()
    w = W1.detach().requires_grad_()
    fn = heads_product(a[mask], w, nh).grad_fn
    while fn is not None and fn.name() != "BmmBackward0":
        fn = fn.next_functions[0][0]
    if fn is not None:
        print(f"saved by {fn.name()}: self {list(fn._saved_self.shape)} (the gathered rows, "
              f"for dW1), mat2 {list(fn._saved_mat2.shape)} (W1's heads, for dA1)")
    del fn, a, w


if __name__ == "__main__":
    main()

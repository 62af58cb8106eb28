# A CUDA kernel launch emulated in plain Python, after the fast.ai lesson "Finishing up Matmul".
#
# The lesson explains how a GPU splits a matrix product: the output is cut into blocks of
# TPB x TPB threads, every thread computes one element C[r, c], and threads that fall outside
# the matrix (the last block is usually only partly used) return at once. Before writing real
# CUDA, it runs the same kernel function from Python loops: `launch_kernel` calls the kernel
# once per (block, thread) pair, passing blockIdx, threadIdx and blockDim as small
# namespaces with .x and .y, as CUDA would.
#
# The lesson multiplied 5 MNIST images (5 x 784) by a 784 x 10 weight matrix. Here the inputs
# are deterministic instead (cosines and sines of a counter), so the output is reproducible.
# As in the lesson, the kernel sees flattened tensors and computes flat offsets itself
# (m.flatten(), out[r * w + c] = tmp): the kernel only knows pointers and sizes.
#
# Usage: scripts/python examples/launch_kernel.py [--device cpu|cuda] [--tpb 16]
import matmulviz.torch as torch

import argparse
import math
from types import SimpleNamespace

import matmulviz

TPB = 16  # threads per block along each axis


def launch_kernel(kernel, grid_x, grid_y, *args):
    """Runs kernel(blockIdx, threadIdx, blockDim, *args) for every thread of a
    grid_x x grid_y grid of TPB x TPB blocks, one after another."""
    blockDim = SimpleNamespace(x=TPB, y=TPB)
    for by in range(grid_y):
        for bx in range(grid_x):
            blockIdx = SimpleNamespace(x=bx, y=by)
            for ty in range(blockDim.y):
                for tx in range(blockDim.x):
                    threadIdx = SimpleNamespace(x=tx, y=ty)
                    kernel(blockIdx, threadIdx, blockDim, *args)


def matmul_bk(blockidx, threadidx, blockdim, m, n, out, h, w, k):
    """One thread: out[r, c] = sum over i of m[r, i] * n[i, c], on flattened tensors.
    x runs along the columns of the output and y along its rows, as in CUDA."""
    r = blockidx.y * blockdim.y + threadidx.y
    c = blockidx.x * blockdim.x + threadidx.x
    if r >= h or c >= w:  # a thread past the edge of the output does nothing
        return
    tmp = 0.0
    for i in range(k):
        tmp += m[r * k + i] * n[i * w + c]
    out[r * w + c] = tmp


def matmul_2d(m, n):
    h, k = m.shape
    k2, w = n.shape
    assert k == k2, f"size mismatch: {k} != {k2}"
    out = torch.zeros(h, w, dtype=m.dtype, device=m.device)
    # Blocks along x cover the columns (w), blocks along y the rows (h).
    grid_x, grid_y = math.ceil(w / TPB), math.ceil(h / TPB)
    threads = grid_x * grid_y * TPB * TPB
    print(f"grid: {grid_y} x {grid_x} blocks (rows x columns: ceil({h}/{TPB}) x ceil({w}/{TPB}))")
    print(f"block: {TPB} x {TPB} threads; {threads} threads for {h * w} outputs, "
          f"{threads - h * w} return at the bounds check")
    # out.flatten() is a view of out: the kernel's writes land in out.
    launch_kernel(matmul_bk, grid_x, grid_y, m.flatten(), n.flatten(), out.flatten(), h, w, k)
    return out


def main():
    global TPB
    parser = argparse.ArgumentParser(description="The lesson's emulated CUDA matmul launch.")
    parser.add_argument("--device", default="cpu", help="where the tensors live (cpu or cuda)")
    parser.add_argument("--tpb", type=int, default=TPB, help=f"threads per block axis ({TPB})")
    parser.add_argument("--rows", type=int, default=5, help="rows of m (the lesson's 5 images)")
    args = parser.parse_args()
    TPB = args.tpb
    matmulviz.set_cuda_mode("data")  # the kernel reads values, even on the simulated "cuda"

    h, k, w = args.rows, 784, 10
    m = torch.cos(torch.arange(h * k, dtype=torch.float32, device=args.device) / 7).view(h, k)
    n = torch.sin(torch.arange(k * w, dtype=torch.float32, device=args.device) / 5).view(k, w)
    print(f"m {list(m.shape)} @ n {list(n.shape)} -> out [{h}, {w}]")
    out = matmul_2d(m, n)
    ref = m @ n
    # Each thread adds its 784 products one at a time in float32; BLAS adds them in another
    # order, so the two agree to float32 rounding, not bit for bit.
    ok = torch.allclose(out, ref, rtol=1e-4, atol=1e-4)
    print(f"out[0, :3] = {[round(v, 4) for v in out[0, :3].tolist()]}")
    print(f"check: torch.allclose(out, m @ n) = {ok}")
    if not ok:
        raise SystemExit("the emulated kernel disagrees with m @ n")


if __name__ == "__main__":
    main()

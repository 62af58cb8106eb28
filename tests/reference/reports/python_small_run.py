# Written to python_small_run.json by: cd tests/reference/reports && ../../../scripts/python -m matmulviz python_small_run.py --report python_small_run.json
# A gathered matmul: c[q] is copied, then bmm; a small report of kind "python" for the loaders' tests.
import matmulviz.torch as torch

a = torch.randn(8, 1, 4, device="cuda", requires_grad=True)
c = torch.randn(3, 4, 2, device="cuda")
q = torch.tensor([0, 2, 1, 0, 1, 2, 2, 0], device="cuda")
out = torch.bmm(a, c[q])

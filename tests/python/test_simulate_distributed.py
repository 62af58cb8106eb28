"""torch.distributed under matmulviz.simulate (simulate/_distributed.py): a torchrun script,
unchanged, as one rank of its job or as every rank (--ranks), on PyTorch's fake process group;
DDP's gradient buckets and FSDP2's shards in the allocator model, checked against sums of their
rules' blocks computed here by hand. PyTorch 2.x only (1.13 has no fake process group)."""

import json

import pytest

torch = pytest.importorskip("torch")
from simulate_cli import ENV, simulate_source  # noqa: E402

pytestmark = pytest.mark.skipif(
    not hasattr(getattr(torch, "distributed", None), "Backend")
    or not hasattr(torch.distributed.Backend, "FAKE"),
    reason="needs PyTorch 2.x's fake process group")

NO_WORKSPACE = dict(ENV, CUBLAS_WORKSPACE_CONFIG=":0:0")
MiB = 2**20

DDP_SCRIPT = '''
import os, json, sys, torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).cuda()
before = torch.cuda.memory_allocated()
net = DDP(model, device_ids=[local_rank]) if sys.argv[1] == "ddp" else model
buckets = torch.cuda.memory_allocated() - before
opt = torch.optim.AdamW(net.parameters())
for step in range(2):
    net(torch.randn(64, 1024, device="cuda")).sum().backward()
    opt.step(); opt.zero_grad()
json.dump({"rank": dist.get_rank(), "world": dist.get_world_size(), "env": os.environ["RANK"],
           "backend": dist.get_backend(), "buckets": buckets,
           "peak": torch.cuda.max_memory_allocated()}, open(sys.argv[2], "w"))
'''

FSDP_SCRIPT = '''
import os, json, sys, torch, torch.nn as nn, torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.distributed.device_mesh import init_device_mesh
mesh = init_device_mesh("cuda", (int(os.environ["WORLD_SIZE"]),))
class Block(nn.Module):  # a Llama-style MLP block: up, activation, down, residual
    def __init__(self, d):
        super().__init__(); self.up = nn.Linear(d, 4 * d); self.down = nn.Linear(4 * d, d)
    def forward(self, x):
        return x + self.down(torch.nn.functional.silu(self.up(x)))
model = nn.Sequential(*[Block(1024) for _ in range(4)]).cuda()
for block in model:
    fully_shard(block, mesh=mesh)
fully_shard(model, mesh=mesh)
sharded = torch.cuda.memory_allocated()
opt = torch.optim.AdamW(model.parameters())
batch = int(sys.argv[2])
model(torch.randn(batch, 1024, device="cuda")).sum().backward()
before_step = torch.cuda.memory_allocated()
opt.step()
json.dump({"rank": dist.get_rank(), "sharded": sharded,
           "optimizer_states": torch.cuda.memory_allocated() - before_step,
           "peak": torch.cuda.max_memory_allocated()}, open(sys.argv[1], "w"))
'''


def _round(n):  # the caching allocator's block size for a request of n bytes (>= 512)
    return (n + 511) // 512 * 512


def test_ddp_over_two_ranks_adds_its_gradient_buckets_to_each_rank(tmp_path):
    out = {}
    for rank in (0, 1):
        for mode in ("ddp", "plain"):
            path = tmp_path / f"{mode}{rank}.json"
            p = simulate_source(tmp_path, DDP_SCRIPT, mode, str(path), "--nproc-per-node", "2",
                                "--rank", str(rank), env=NO_WORKSPACE)
            assert p.returncode == 0, p.stderr
            out[mode, rank] = json.loads(path.read_text())
            assert f"rank {rank} of 2" in p.stderr
    # The Reducer's buckets (reducer.cpp, compute_bucket_assignment_by_size over the parameters
    # in reverse, the first bucket capped at 1 MiB, the rest at bucket_cap_mb = 25): [down's
    # bias, down's weight] and [up's bias, up's weight], one block each.
    buckets = _round(4 * (1024 + 4096 * 1024)) + _round(4 * (4096 + 1024 * 4096))
    for rank in (0, 1):
        ddp = out["ddp", rank]
        assert (ddp["rank"], ddp["world"], ddp["env"], ddp["backend"]) == (rank, 2, str(rank), "fake")
        assert ddp["buckets"] == buckets
        # Nothing else DDP keeps is on the device: its peak is the plain model's plus buckets.
        assert ddp["peak"] == out["plain", rank]["peak"] + buckets


def _shard_bytes(world):
    """One rank's shard of the model: FSDP2 shards each parameter on dim 0, padded to a
    multiple of the world size (torch/distributed/fsdp/_fully_shard/_fsdp_param.py,
    _init_sharded_param), one block per parameter."""
    per_block = [(4096, 1024), (4096,), (1024, 4096), (1024,)]
    total = 0
    for shape in per_block:
        rows = -(-shape[0] // world)
        total += _round(4 * rows * (shape[1] if len(shape) > 1 else 1))
    return 4 * total


def test_fsdp2_over_eight_ranks_keeps_each_rank_one_eighth(tmp_path):
    path = tmp_path / "fsdp.json"
    p = simulate_source(tmp_path, FSDP_SCRIPT, str(path), "8", "--nproc-per-node", "8",
                        "--rank", "5", env=NO_WORKSPACE)
    assert p.returncode == 0, p.stderr
    r = json.loads(path.read_text())
    assert r["rank"] == 5
    shards = _shard_bytes(8)
    assert r["sharded"] == shards == 4 * (2 * MiB + 2 * MiB + 2048 + 512)
    # AdamW's exp_avg and exp_avg_sq: one block per parameter shard each.
    assert r["optimizer_states"] == 2 * shards
    assert r["peak"] > shards


def test_every_rank_in_parallel_with_a_report_each_and_a_rank_out_of_memory(tmp_path):
    out = tmp_path / "r.json"
    p = simulate_source(tmp_path, FSDP_SCRIPT, str(out), "8", "--nproc-per-node", "4",
                        "--nnodes", "2", "--ranks", "all", "--jobs", "2",
                        "--report", str(tmp_path / "run.json"), env=NO_WORKSPACE, timeout=900)
    assert p.returncode == 0, p.stderr + p.stdout
    lines = [line.split() for line in p.stdout.splitlines()[1:9]]
    assert [int(line[0]) for line in lines] == list(range(8))
    assert all(line[1] == "fits" for line in lines)
    assert "8 of 8 ranks simulated" in p.stdout
    for rank in range(8):
        report = json.loads((tmp_path / f"run.rank{rank}.json").read_text())
        assert report["distributed"]["rank"] == rank
        assert report["distributed"]["world_size"] == 8
    peak = json.loads(out.read_text())["peak"]
    # A capacity below the peak: every rank runs out of memory at the script's own line.
    p = simulate_source(tmp_path, FSDP_SCRIPT, str(out), "8", "--nproc-per-node", "2",
                        "--ranks", "0,1", "--capacity", str(peak - MiB), env=NO_WORKSPACE)
    assert p.returncode == 1
    assert p.stdout.count("out of memory") >= 2
    assert "rank 1 ran out of memory at script.py:" in p.stdout


def test_bad_distributed_options_exit_2(tmp_path):
    for args in (["--nproc-per-node", "two"], ["--nproc-per-node", "2", "--rank", "2"],
                 ["--nproc-per-node", "2", "--ranks", "0,5"]):
        p = simulate_source(tmp_path, "print(1)\n", *args)
        assert p.returncode == 2, (args, p.stderr)
        assert "matmulviz.simulate:" in p.stderr


def test_the_fsdp2_llama_example_runs_as_a_rank(tmp_path):
    """examples/torch_fsdp2_llama.py (meta-device init, to_empty, bfloat16 autocast, SDPA), small:
    its own print of the peak is the simulation's."""
    import os
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                           "torch_fsdp2_llama.py")
    p = simulate_source(tmp_path, open(example).read(), "--batch", "2", "--seq", "256",
                        "--layers", "2", "--dim", "512", "--heads", "8", "--vocab", "1000",
                        "--nproc-per-node", "8", "--rank", "3", "--gpu", "h100")
    assert p.returncode == 0, p.stderr
    printed = p.stdout.strip().splitlines()[-1]
    assert printed.startswith("rank 3: peak ")
    summary = next(line for line in p.stderr.splitlines() if "rank 3 of 8" in line)
    value, unit = summary.split("peak allocated ")[1].split(",")[0].split()
    summary_gib = float(value) / (1 if unit == "GiB" else 1024)
    assert abs(summary_gib - float(printed.split()[-2])) < 0.006
    assert summary_gib > 0.05  # the shards, the all-gathered layers, the activations

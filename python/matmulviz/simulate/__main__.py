"""python3 -m matmulviz.simulate SCRIPT [ARGS...] [--report PATH] [--gpu NAME] [--capacity SIZE]
                                  [--snapshot PATH] [--values none|cpu] [--pytorch 2.x|forum]
                                  [--host cpu|meta] [--search LO:HI [--jobs N]]
                                  [--nnodes N --nproc-per-node N [--rank R | --ranks all]]

Runs SCRIPT as __main__ with the installed PyTorch, its CUDA tensors simulated: data-less
tensors whose memory is matmulviz's model of PyTorch's CUDA caching allocator (no GPU needed).
--report PATH   the report of its allocations (the app and matmulviz-cli export open it)
--gpu NAME      the GPU whose memory is the capacity and whose architecture sizes the cuBLAS
                workspace and topk's buffers (h200, h100, a100, a100-40gb); default: the
                capacity unlimited, the architecture h200 (or MATMULVIZ_GPU)
--capacity SIZE the capacity in bytes or as 80GiB, 512MiB (overrides --gpu); default unlimited
--snapshot PATH the run as a PyTorch memory snapshot (pickle; memory_viz opens it)
--values MODE   none (default): tensors without values: .item(), float(), bool(), .tolist(),
                .cpu() return placeholders (zeros, False), listed by line at the end and in
                the report; nonzero, unique and boolean masks stop with the line named;
                cpu: the values are computed on the CPU as well (slower; the memory
                accounted is the same)
--pytorch MODEL 2.x (default, or MATMULVIZ_PYTORCH): one cuBLAS workspace per thread through
                the caching allocator (32 MiB on sm_90; CUBLAS_WORKSPACE_CONFIG honoured), the
                main thread's at its first matmul, the autograd thread's at the first backward
                matmul; forum: the forum post's PyTorch (1.x), no workspace counted. The report
                names the model, whatever PyTorch runs the script.
--host MODE     cpu (default): the script's CPU tensors are real; meta: they are simulated
                too, without values (a model built on the CPU before .cuda() takes no RAM);
                their bytes are counted as host memory and the peak printed at the end
--search LO:HI  the largest value of one of the script's own arguments that fits the GPU
                (--gpu or --capacity): write {} where it goes (--batch_size={}); each trial
                is a simulated run of its own, --jobs N at once (default: the CPU count),
                doubling from LO, then narrowing; prints each trial's peak allocated and
                reserved memory and the answer, with the line where the next value runs out
--stats PATH    writes the run's status and peaks as JSON (what --search reads); with
                --search, the search's trials and answer (what the app's chart reads)
--nnodes N, --nproc-per-node N
                a torchrun job (torchrun's options; PyTorch 2.x): SCRIPT runs as one of its
                ranks with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
                MASTER_PORT ...); init_process_group("nccl") and DeviceMesh get PyTorch's fake
                process group (no port opened, no collective run: outputs keep their values);
                DDP's buckets and FSDP2's shards, all-gathers and reduce-scatters are allocated
                as PyTorch allocates them; NCCL's own buffers are not modelled
--rank R        the rank simulated (default 0); --search searches that rank
--ranks all     every rank (or a list: 0,3), each in a process of its own, --jobs at once;
                prints each rank's peaks; --report run.json writes run.rank0.json ... (or
                put {rank} in the path)
A script that raises (out of memory included) exits with status 1 after its traceback; the
report of what ran is still written, marked incomplete. Bad options exit with status 2."""

import gc
import os
import runpy
import sys

USAGE = ("usage: python3 -m matmulviz.simulate SCRIPT [ARGS...] [--report PATH] [--gpu NAME] "
         "[--capacity SIZE] [--snapshot PATH] [--values none|cpu] [--pytorch 2.x|forum] "
         "[--host cpu|meta] [--search LO:HI [--jobs N]] "
         "[--nnodes N --nproc-per-node N [--rank R | --ranks all]]")
OPTIONS = ("--report", "--gpu", "--capacity", "--snapshot", "--values", "--pytorch", "--host",
           "--search", "--jobs", "--stats", "--nnodes", "--nproc-per-node", "--rank", "--ranks")
# torchrun spells its options both ways (torch/distributed/run.py).
ALIASES = {"--nproc_per_node": "--nproc-per-node"}


def _options(argv):
    """(the script and its arguments, {option name: value}); options may come anywhere, as
    `--name value` or `--name=value`."""
    args = []
    for a in argv:
        name, eq, value = a.partition("=")
        name = ALIASES.get(name, name)
        args += [name, value] if eq and name in OPTIONS else [ALIASES.get(a, a)]
    opts = {}
    for name in OPTIONS:
        while name in args:
            i = args.index(name)
            if i + 1 >= len(args):
                raise ValueError(f"{name} needs a value")
            opts[name[2:]] = args[i + 1]
            del args[i:i + 2]
    return args, opts


def main(argv):
    try:
        args, opts = _options(argv)
    except ValueError as e:
        print(f"matmulviz.simulate: {e}\n{USAGE}", file=sys.stderr)
        return 2
    if not args or args[0] in ("-h", "--help"):
        print(USAGE + "\n\n" + __doc__.split("\n", 4)[4], file=sys.stderr if not args else sys.stdout)
        return 0 if args else 2
    script = args[0]
    if not os.path.isfile(script):
        print(f"matmulviz.simulate: no such script: {script}", file=sys.stderr)
        return 2
    try:
        import torch  # is PyTorch there? (its version goes into the report)
    except ImportError:
        print("matmulviz.simulate: PyTorch is not installed (Debian: apt install python3-torch)",
              file=sys.stderr)
        return 2
    try:
        world = _world(opts)
    except ValueError as e:
        print(f"matmulviz.simulate: {e}", file=sys.stderr)
        return 2
    if "ranks" in opts:
        from matmulviz.simulate import _ranks
        return _ranks.main(script, args[1:], opts, world)
    if "search" in opts:
        return _search_command(script, args[1:], opts)
    from contextlib import nullcontext

    from matmulviz import record
    from matmulviz.simulate import simulate
    from matmulviz.simulate._simulation import _TORCH_DIR
    from matmulviz.simulate._variables import variables
    try:
        sim = simulate(gpu=opts.get("gpu"), capacity=opts.get("capacity"),
                       values=opts.get("values", "none"), pytorch=opts.get("pytorch"),
                       host=opts.get("host", "cpu"), world=world)
    except ValueError as e:
        print(f"matmulviz.simulate: {e}", file=sys.stderr)
        return 2
    report = opts.get("report")
    snapshot = None
    if "snapshot" in opts:
        from matmulviz.simulate._snapshot import SnapshotRecorder
        snapshot = SnapshotRecorder()
    sys.argv = args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    status = 0
    failure = None  # what the script raised
    peaks = (0, 0)  # max_memory_allocated and max_memory_reserved at the end (--stats)
    with sim:
        recording = (record(report, script=script, argv=args, skip_dirs=[_TORCH_DIR])
                     if report else nullcontext())
        try:
            with recording as rec, (snapshot if snapshot else nullcontext()):
                try:
                    namespace = runpy.run_path(script, run_name="__main__")
                    if rec is not None:
                        rec.set_variables(variables(sim, namespace))
                    # The script's objects die inside the recording, as they would at its end.
                    del namespace
                    gc.collect()
                finally:
                    if rec is not None:  # the report is written as the recording ends
                        rec.set_extra("value_reads", sim.value_reads.report())
                        if sim.pinned.requests:
                            rec.set_extra("pinned_host", sim.pinned.report())
                        if sim.host is not None:
                            rec.set_extra("host_tensors", sim.host.report())
                        if world is not None:
                            rec.set_extra("distributed", world.report())
                        rec.set_extra("torch", {"version": torch.__version__,
                                                "cuda_branches": sim.cuda_keys})
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException as e:
            import traceback
            traceback.print_exc()
            failure = e
            if report is not None:
                print(f"matmulviz.simulate: the script failed; the report of what ran is in "
                      f"{report} (marked incomplete)", file=sys.stderr)
            status = 1
        finally:
            if snapshot is not None:
                snapshot.write(opts["snapshot"])
            # Read while the simulated device is the run's (leaving may change the GPU, which
            # starts a fresh device).
            peaks = (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved())
    host = sim.host.summary() if sim.host is not None else []
    for line in sim.value_reads.summary() + sim.pinned.summary() + host:
        print(line, file=sys.stderr)
    if world is not None:
        print(f"matmulviz.simulate: {world.describe()}: peak allocated {_size(peaks[0])}, "
              f"reserved {_size(peaks[1])}", file=sys.stderr)
    if report is not None and status == 0:
        print(f"matmulviz.simulate: wrote {report} ({sim.model})", file=sys.stderr)
    if "stats" in opts:
        _write_stats(opts["stats"], status, failure, peaks)
    return status


def _size(n):
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.2f} MiB"


def _world(opts):
    """The distributed job of --nnodes, --nproc-per-node and --rank (a _distributed.World), or
    None when none is given. Raises ValueError for a bad value or a PyTorch without the fake
    process group."""
    if not any(k in opts for k in ("nnodes", "nproc-per-node", "rank", "ranks")):
        return None
    values = {}
    for name, default in (("nnodes", 1), ("nproc-per-node", 1), ("rank", 0)):
        text = opts.get(name, str(default))
        try:
            values[name] = int(text)
        except ValueError:
            raise ValueError(f"--{name} {text}: give a whole number") from None
    from matmulviz.simulate import _distributed
    if not _distributed.available():
        import torch
        raise ValueError(f"--nnodes/--nproc-per-node need PyTorch 2.x's fake process group "
                         f"(torch.distributed.Backend.FAKE); this is PyTorch {torch.__version__}")
    return _distributed.World(values["nnodes"], values["nproc-per-node"], values["rank"])


def _write_stats(path, status, failure, peaks):
    """--stats: {"status", "oom", "where" (file:line of the script's frame that ran out of
    memory, or of the failure), "error" (its last line), "peak_allocated", "peak_reserved"}."""
    import json
    import traceback

    from matmulviz.simulate._simulation import _TORCH_DIR
    from matmulviz.simulate._version import out_of_memory_error
    where = error = None
    if failure is not None:
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        frames = [f for f in traceback.extract_tb(failure.__traceback__)
                  if not f.filename.startswith((_TORCH_DIR, package)) and "<frozen" not in f.filename]
        if frames:
            where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}"
        error = (traceback.format_exception_only(type(failure), failure) or [""])[-1].strip()
    with open(path, "w") as f:
        json.dump({"status": status, "oom": isinstance(failure, out_of_memory_error()),
                   "where": where, "error": error,
                   "peak_allocated": peaks[0], "peak_reserved": peaks[1]}, f)


def _search_command(script, args, opts):
    """--search: runs trials of the script (simulate/_search.py)."""
    from matmulviz.simulate import _search
    from matmulviz.simulate._gpus import capacity_of
    if "report" in opts or "snapshot" in opts:
        print("matmulviz.simulate: --search runs many trials: --report and --snapshot belong to "
              "single runs", file=sys.stderr)
        return 2
    try:
        jobs = int(opts.get("jobs", os.cpu_count() or 1))
        if jobs < 1:
            raise ValueError
    except ValueError:
        print(f"matmulviz.simulate: --jobs {opts['jobs']}: give a whole number from 1",
              file=sys.stderr)
        return 2
    sim_args = [x for name in ("gpu", "capacity", "values", "pytorch", "host", "nnodes",
                               "nproc-per-node", "rank") if name in opts
                for x in ("--" + name, opts[name])]
    capacity = None
    if "capacity" in opts:
        from matmulviz import _parse_size
        where = opts["capacity"]
        try:
            capacity = _parse_size(opts["capacity"])
        except ValueError as e:
            print(f"matmulviz.simulate: --capacity: {e}", file=sys.stderr)
            return 2
    elif "gpu" in opts:
        try:
            capacity = capacity_of(opts["gpu"])
            where = f"{opts['gpu']} ({capacity / 2**30:.2f} GiB)"
        except ValueError as e:
            print(f"matmulviz.simulate: {e}", file=sys.stderr)
            return 2
    else:
        where = None
    return _search.main(script, args, sim_args, opts["search"], jobs, where,
                        results_path=opts.get("stats"), capacity_bytes=capacity)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""GPU names for --gpu: each one's memory as torch.cuda.get_device_properties().total_memory
reports it (the simulated device's capacity), and the engine's GPU architecture key
(matmulviz.set_gpu) whose properties size the cuBLAS workspace and topk's buffers."""

MIB = 1 << 20

# total_memory in bytes. h200: 143771 MiB, measured on one (PyTorch 2.11.0+cu130, 2026-11-28);
# the others are the 80 GB and 40 GB boards' nominal sizes as the driver reports them.
GPUS = {
    "h200": 143771 * MIB,
    "h100": 81559 * MIB,
    "a100": 81038 * MIB,
    "a100-40gb": 40537 * MIB,
}

# --gpu name -> the engine's architecture key (core/memory/pytorch_model.h, gpuArchitectures()).
ARCHITECTURES = {"h200": "h200", "h100": "h100", "a100": "a100", "a100-40gb": "a100"}


def architecture_of(gpu):
    """The engine's architecture key of GPU `gpu` (a key of GPUS, any case)."""
    capacity_of(gpu)  # raises for an unknown name
    return ARCHITECTURES[gpu.lower()]


def capacity_of(gpu):
    """Bytes of GPU `gpu` (a key of GPUS, any case). Raises ValueError naming the known ones."""
    try:
        return GPUS[gpu.lower()]
    except KeyError:
        raise ValueError(f"unknown GPU {gpu!r}: one of {', '.join(sorted(GPUS))}, "
                         "or give --capacity SIZE") from None

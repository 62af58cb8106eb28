"""Which blocks a script's module-level names hold when it ends, for the report's "variables":
tensors, their gradients, tensors in lists/tuples/dicts, an nn.Module's parameters, gradients and
buffers ("model.0.weight", "model.0.weight.grad") and an optimizer's state
("opt.state[model.0.weight]['exp_avg']")."""

import torch


def variables(sim, namespace):
    """{allocation id (str): [names]} for the SimTensors that `namespace` reaches."""
    out = {}
    param_names = {}

    def note(name, value):
        if isinstance(value, torch.Tensor) and hasattr(value, "_elem"):
            block = sim.block_id(value)
            if block >= 0 and name not in out.setdefault(str(block), []):
                out[str(block)].append(name)
            if value.is_leaf and value.grad is not None:
                note(name + ".grad", value.grad)

    items = [(k, v) for k, v in namespace.items() if not k.startswith("__")]
    for name, value in items:
        if isinstance(value, torch.nn.Module):
            for pname, p in value.named_parameters():
                param_names[id(p)] = f"{name}.{pname}"
                note(f"{name}.{pname}", p)
            for bname, b in value.named_buffers():
                note(f"{name}.{bname}", b)
    for name, value in items:
        if isinstance(value, torch.Tensor):
            note(name, value)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value[:10000]):
                note(f"{name}[{i}]", item)
        elif isinstance(value, dict):
            for key, item in list(value.items())[:10000]:
                note(f"{name}[{key!r}]", item)
        elif isinstance(value, torch.optim.Optimizer):
            for i, (p, state) in enumerate(value.state.items()):
                pname = param_names.get(id(p), f"param {i}")
                for key, item in state.items():
                    note(f"{name}.state[{pname}][{key!r}]", item)
    return out

"""The aten ops of one LoRA training step, and which of them accel does not run natively.

The step is the workload the project promises to run with no CPU fallback: the demo model
(lora_model.py, at a fixed size), the causal-LM loss, backward, ``clip_grad_norm_`` and an
AdamW step. It is run in float32 and under bfloat16 autocast (no GradScaler: bf16 has
float32's range).

``trace_ops()`` records, per mode, every aten overload the step dispatches on CPU.
``not_native_ops()`` lists the traced ops that reach the CPU fallback (or fail) on accel;
``run_on_accel()`` runs the step on accel and CPU and reports the ops that fell back.
``python -m torch_accel trace`` writes the trace to a JSON file (tests/traced_ops.json).
"""

import collections
import contextlib
import copy
import json

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from .lora_model import LORA_TARGETS, llama_config, lora_config

MODES = ("float32", "bfloat16")

MODEL_CONFIG = llama_config(vocab_size=256, hidden=64, layers=2, max_positions=64)
LORA_RANK = 8
BATCH, SEQ = 2, 16


def build_lora_model(seed: int = 0) -> torch.nn.Module:
    """The LoRA-wrapped causal LM on CPU, deterministic for a seed."""
    from peft import get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(**MODEL_CONFIG)
    # Eager attention: with "sdpa" a CPU trace records CPU-only fused kernels
    # (_scaled_dot_product_flash_attention_for_cpu) that say nothing about another device.
    config._attn_implementation = "eager"
    model = get_peft_model(LlamaForCausalLM(config), lora_config(LORA_RANK))
    # peft starts lora_B at zero; perturb it so the first step's loss and gradients
    # exercise the adapter path, not only the frozen base weights.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.02)
    return model


def make_batch(seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, MODEL_CONFIG["vocab_size"], (BATCH, SEQ), generator=g)


def training_step(
    model: torch.nn.Module, input_ids: torch.Tensor, mode: str, device: str
) -> tuple[float, float]:
    """One step of ``model`` (already on ``device``; it is updated); returns the loss
    before the step and the loss of a forward pass after it (which checks the update)."""
    model.train()
    input_ids = input_ids.to(device)
    # foreach=True: what AdamW picks by itself on accel (a foreach device); CPU would
    # otherwise trace the per-parameter loop.
    opt = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=1e-2, foreach=True
    )

    def autocast():
        if mode == "float32":
            return contextlib.nullcontext()
        return torch.autocast(torch.device(device).type, dtype=torch.bfloat16)

    with autocast():
        loss = model(input_ids=input_ids, labels=input_ids).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    with torch.no_grad(), autocast():
        after = model(input_ids=input_ids, labels=input_ids).loss
    return loss.item(), after.item()


class OpRecorder(TorchDispatchMode):
    """Counts every aten overload dispatched while active, by its schema name (other
    namespaces, such as the profiler's record_function markers, are no device work), and
    keeps a copy of each op's first arguments so the op can be replayed on accel."""

    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()
        self.examples = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = op_name(func)
        kwargs = kwargs or {}
        if name.startswith("aten::"):
            self.counts[name] += 1
            if name not in self.examples:  # (the mode is off inside this handler)
                self.examples[name] = (func, *tree_map(_copy_tensor, (args, kwargs)))
        return func(*args, **kwargs)


def _copy_tensor(x, device="cpu"):
    return x.detach().to(device, copy=True) if isinstance(x, torch.Tensor) else x


def op_name(func) -> str:
    """ "aten::add.Tensor", "aten::mm" (the form fallback_counts() uses too)."""
    schema = func._schema
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def trace_ops(modes=MODES) -> tuple[dict, dict]:
    """({op: {mode: calls}}, {op: (func, args, kwargs) of its first call}) over the CPU
    training step in each mode."""
    model, batch = build_lora_model(), make_batch()
    ops: dict = collections.defaultdict(dict)
    examples: dict = {}
    for mode in modes:
        recorder = OpRecorder()
        step_model = copy.deepcopy(model)  # outside the recorder: not part of the step
        with recorder:
            training_step(step_model, batch, mode, "cpu")
        for name, n in recorder.counts.items():
            ops[name][mode] = n
        examples = {**recorder.examples, **examples}
    return {name: ops[name] for name in sorted(ops)}, examples


def not_native_ops(examples: dict) -> dict:
    """{op: what it reaches on accel} for the traced ops accel does not run natively: the
    fallback ops it called, or the error it raised. An op with an accel kernel, or a
    CompositeImplicitAutograd one (it decomposes before dispatch), is native; any other op
    (CompositeExplicitAutograd ones decompose into ops that may fall back) is replayed on
    accel with the arguments of its first traced call, the fallback counted."""
    import torch_accel

    has = torch._C._dispatch_has_kernel_for_dispatch_key
    missing = {}
    mode = torch_accel.fallback_mode()
    torch_accel.set_fallback_mode("silent")
    try:
        for name, (func, args, kwargs) in sorted(examples.items()):
            if has(name, "PrivateUse1") or has(name, "CompositeImplicitAutograd"):
                continue
            torch_accel.reset_fallback_counts()
            try:
                args, kwargs = tree_map(lambda x: _copy_tensor(x, "accel"), (args, kwargs))
                func(*args, **kwargs)
                torch.accel.synchronize()
                reached = sorted(torch_accel.fallback_counts())
            except Exception as e:
                reached = [f"error: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}"]
            if reached:
                missing[name] = reached
    finally:
        torch_accel.set_fallback_mode(mode)
        torch_accel.reset_fallback_counts()
    return missing


def run_on_accel(mode: str) -> dict:
    """The step on CPU and on accel from the same model and batch: {"cpu": losses,
    "accel": losses, "fallback": fallback_counts()} or, if accel raised, "error" instead of
    "accel". Under TORCH_ACCEL_FALLBACK=silent "fallback" names every op that is not native;
    under =error the first one raises."""
    import torch_accel

    model, batch = build_lora_model(), make_batch()
    out = {"cpu": training_step(copy.deepcopy(model), batch, mode, "cpu")}
    torch_accel.reset_fallback_counts()
    try:
        out["accel"] = training_step(copy.deepcopy(model).to("accel"), batch, mode, "accel")
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
    out["fallback"] = torch_accel.fallback_counts()
    return out


def load_trace(path: str) -> dict:
    with open(path) as f:
        return json.load(f)["ops"]


def write_trace(path: str) -> tuple[dict, dict]:
    ops, examples = trace_ops()
    doc = {
        "about": "aten ops of one LoRA training step on CPU (python -m torch_accel trace)",
        "torch": torch.__version__,
        "model": MODEL_CONFIG,
        "lora_rank": LORA_RANK,
        "lora_targets": LORA_TARGETS,
        "batch": [BATCH, SEQ],
        "modes": list(MODES),
        "ops": ops,
    }
    # One line per op, so a diff of the checked-in trace reads op by op.
    head = json.dumps({k: v for k, v in doc.items() if k != "ops"}, indent=1)[:-2]
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in ops.items())
    with open(path, "w") as f:
        f.write(head + ',\n "ops": {\n' + body + "\n }\n}\n")
    return ops, examples

"""The aten ops of one LoRA training step, and which of them accel does not run natively.

The step is the workload the project promises to run with no CPU fallback: a small
Llama-style causal LM (transformers, random init) with LoRA adapters (peft) on every
projection, the causal-LM loss, backward, ``clip_grad_norm_`` and an AdamW step. It is run
in float32 and under bfloat16 autocast (no GradScaler: bf16 has float32's range).

``trace_ops()`` records, per mode, every aten overload the step dispatches on CPU.
``not_native_ops()`` lists the traced ops that have no accel kernel and do not decompose.
``python -m torch_accel trace`` writes the trace to a JSON file (tests/traced_ops.json).
"""
import collections
import copy
import json

import torch
from torch.utils._python_dispatch import TorchDispatchMode

MODES = ("float32", "bfloat16")

# Eager attention: with "sdpa" a CPU trace records CPU-only fused kernels
# (_scaled_dot_product_flash_attention_for_cpu) that say nothing about another device.
MODEL_CONFIG = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=4, vocab_size=256, intermediate_size=128,
                    max_position_embeddings=64)
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
BATCH, SEQ = 2, 16


def build_lora_model(seed: int = 0) -> torch.nn.Module:
    """The LoRA-wrapped causal LM on CPU, deterministic for a seed."""
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(**MODEL_CONFIG)
    config._attn_implementation = "eager"
    model = LlamaForCausalLM(config)
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                                             target_modules=LORA_TARGETS))
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


def training_step(model: torch.nn.Module, input_ids: torch.Tensor, mode: str,
                  device: str) -> tuple[float, float]:
    """One step of ``model`` (already on ``device``; it is updated); returns the loss
    before the step and the loss of a forward pass after it (which checks the update)."""
    model.train()
    input_ids = input_ids.to(device)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    autocast = torch.autocast(torch.device(device).type, dtype=torch.bfloat16,
                              enabled=(mode == "bfloat16"))
    with autocast:
        loss = model(input_ids=input_ids, labels=input_ids).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    with torch.no_grad(), autocast:
        after = model(input_ids=input_ids, labels=input_ids).loss
    return loss.item(), after.item()


class OpRecorder(TorchDispatchMode):
    """Counts every aten overload dispatched while active, by its schema name (other
    namespaces, such as the profiler's record_function markers, are no device work)."""

    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = op_name(func)
        if name.startswith("aten::"):
            self.counts[name] += 1
        return func(*args, **(kwargs or {}))


def op_name(func) -> str:
    """"aten::add.Tensor", "aten::mm" (the form fallback_counts() uses too)."""
    schema = func._schema
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def trace_ops(modes=MODES) -> dict:
    """{op: {mode: calls}} over the CPU training step in each mode."""
    model, batch = build_lora_model(), make_batch()
    ops: dict = collections.defaultdict(dict)
    for mode in modes:
        recorder = OpRecorder()
        step_model = copy.deepcopy(model)  # outside the recorder: not part of the step
        with recorder:
            training_step(step_model, batch, mode, "cpu")
        for name, n in recorder.counts.items():
            ops[name][mode] = n
    return {name: ops[name] for name in sorted(ops)}


def is_native(name: str) -> bool:
    """Whether accel runs the op without the CPU fallback, judged from the dispatcher:
    a PrivateUse1 kernel, or a composite kernel (which decomposes into other ops; a
    CompositeExplicitAutograd one may still reach the fallback through those)."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return any(has(name, key) for key in
               ("PrivateUse1", "CompositeImplicitAutograd", "CompositeExplicitAutograd"))


def not_native_ops(traced: dict) -> list[str]:
    """The traced ops accel would send to the CPU fallback, by the dispatcher's tables."""
    import torch_accel  # noqa: F401  (registers the PrivateUse1 kernels)
    return sorted(name for name in traced if not is_native(name))


def load_trace(path: str) -> dict:
    with open(path) as f:
        return json.load(f)["ops"]


def write_trace(path: str) -> dict:
    ops = trace_ops()
    doc = {
        "about": "aten ops of one LoRA training step on CPU (python -m torch_accel trace)",
        "torch": torch.__version__,
        "model": MODEL_CONFIG, "lora_targets": LORA_TARGETS, "batch": [BATCH, SEQ],
        "modes": list(MODES),
        "ops": ops,
    }
    # One line per op, so a diff of the checked-in trace reads op by op.
    head = json.dumps({k: v for k, v in doc.items() if k != "ops"}, indent=1)[:-2]
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in ops.items())
    with open(path, "w") as f:
        f.write(head + ',\n "ops": {\n' + body + "\n }\n}\n")
    return ops

"""LoRA fine-tuning of a causal language model on accel (or cpu), with transformers + peft.

    python examples/lora_finetune.py                      # small Llama, generated task, accel
    python examples/lora_finetune.py --device cpu --steps 50
    python examples/lora_finetune.py --model DIR --data notes.txt --bf16
    torchrun --nproc-per-node 2 examples/lora_finetune.py          # DDP over 2 accel devices
    torchrun --nproc-per-node 2 examples/lora_finetune.py --fsdp   # FSDP2 instead

Without --model it builds a small Llama-style model from a config (random init, nothing is
downloaded). Without --data it trains on a generated task where learning is visible: each
sequence walks a fixed, secret permutation of letters, so the next letter is a function of the
current one. The base model is frozen; only the LoRA adapters on the attention and MLP
projections learn the permutation, and the script reports how often they predict it.

Under torchrun each rank trains on its share of every global batch (--batch-size rows in
all), so the losses are those of the single-process run; rank 0 alone writes the adapter, the
plots and the summary.
"""

import argparse
import contextlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass

import torch

ALPHABET = "abcdefghijklmnopqrstuvwx"


class UsageError(Exception):
    """A problem with the command line or its files: reported in one line, exit status 2."""


# --- data -------------------------------------------------------------------------------


class CharTokenizer:
    """One token per character, for the generated task and for --data without --model."""

    def __init__(self, text: str):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list:
        return [self.index[c] for c in text if c in self.index]


def permutation_task(seq_len: int, count: int, seed: int):
    """Sequences that follow next = perm[current] over ALPHABET; returns (tokenizer, ids)."""
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(ALPHABET), generator=g)
    starts = torch.randint(0, len(ALPHABET), (count,), generator=g)
    rows = []
    for s in starts.tolist():
        row = [s]
        for _ in range(seq_len - 1):
            row.append(int(perm[row[-1]]))
        rows.append(row)
    return CharTokenizer(ALPHABET), torch.tensor(rows, dtype=torch.long)


def read_text(path: str) -> str:
    """A .jsonl file contributes each record's "text" field; any other file is plain text."""
    if not os.path.isfile(path):
        raise UsageError(f"--data {path}: no such file")
    try:
        with open(path, encoding="utf-8") as f:
            raw = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--data {path}: cannot read it ({e})") from e
    if path.endswith(".jsonl"):
        try:
            return "\n".join(json.loads(line)["text"] for line in raw.splitlines() if line.strip())
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise UsageError(
                f"--data {path}: each line must be a JSON object with a 'text' field"
            ) from e
    return raw


def file_dataset(path: str, tokenizer, seq_len: int):
    """Token ids of the file cut into rows of seq_len."""
    text = read_text(path)
    ids = tokenizer.encode(text)
    if hasattr(ids, "input_ids"):
        ids = ids.input_ids
    rows = len(ids) // seq_len
    if rows < 2:
        raise UsageError(f"--data {path}: needs at least {2 * seq_len} tokens, has {len(ids)}")
    return torch.tensor(ids[: rows * seq_len], dtype=torch.long).view(rows, seq_len)


# --- model ------------------------------------------------------------------------------


def build_base(args, vocab_size: int):
    """The frozen base: --model from disk, or a small Llama from the seed (same seed, same
    weights)."""
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(args.seed)
    if args.model:
        try:
            base = AutoModelForCausalLM.from_pretrained(args.model, local_files_only=True)
        except (OSError, ValueError) as e:
            raise UsageError(f"--model {args.model}: cannot load a causal LM from it ({e})") from e
    else:
        from torch_accel.devtools.lora_model import llama_config

        config = llama_config(vocab_size, args.hidden, args.layers, max(64, args.seq_len))
        base = LlamaForCausalLM(LlamaConfig(**config))
    return base


def build_model(args, vocab_size: int):
    from peft import get_peft_model

    from torch_accel.devtools.lora_model import lora_config

    return get_peft_model(build_base(args, vocab_size), lora_config(args.rank))


def load_tokenizer(args):
    from transformers import AutoTokenizer

    if not os.path.isdir(args.model):
        raise UsageError(f"--model {args.model}: not a directory")
    try:
        return AutoTokenizer.from_pretrained(args.model, local_files_only=True)
    except (OSError, ValueError) as e:
        raise UsageError(f"--model {args.model}: has no usable tokenizer ({e})") from e


# --- distributed (torchrun) --------------------------------------------------------------


@dataclass
class Ranks:
    """This process's place in a torchrun job (rank 0 of 1 without torchrun)."""

    rank: int = 0
    world: int = 1
    local: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0


SINGLE_PROCESS = Ranks()


def init_ranks(args, device: torch.device) -> tuple:
    """Joins the torchrun job, if any: (ranks, the device of this rank)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return Ranks(), device
    import torch.distributed as dist

    if args.batch_size % world:
        raise UsageError(f"--batch-size {args.batch_size}: must divide by the {world} ranks")
    ranks = Ranks(int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0")))
    if device.type == "accel":
        device = torch.device("accel", ranks.local)
        torch.accel.set_device(device)
        dist.init_process_group(device_id=device)  # the accel device's backend, accl
    else:
        dist.init_process_group("gloo")
    return ranks, device


def wrap_for_ranks(args, model, ranks: Ranks, device: torch.device):
    """DDP (or FSDP2's fully_shard with --fsdp) over the ranks; the model itself alone."""
    if ranks.world == 1:
        return model
    if args.fsdp:
        from torch.distributed.fsdp import fully_shard

        for layer in model.base_model.model.model.layers:
            fully_shard(layer)
        return fully_shard(model)
    from torch.nn.parallel import DistributedDataParallel as DDP

    return DDP(model, device_ids=[device.index] if device.type == "accel" else None)


def mean_over_ranks(value: torch.Tensor, ranks: Ranks) -> torch.Tensor:
    """The mean over the ranks (equal shares, so the loss of the whole global batch)."""
    if ranks.world == 1:
        return value
    import torch.distributed as dist

    total = value.detach().clone()
    dist.all_reduce(total)
    return total / ranks.world


# --- training ---------------------------------------------------------------------------


@dataclass
class Result:
    losses: list
    memory: list  # allocated bytes after each step
    step_peaks: list  # peak allocated bytes during each step
    tokens_per_s: float
    peak_memory: int
    accuracy: float
    eval_loss: float
    fallback_calls: int


def check_device(name: str) -> torch.device:
    if name == "cpu":
        return torch.device("cpu")
    if name == "accel":
        import torch_accel  # noqa: F401

        if not torch.accel.is_available():
            raise UsageError("--device accel: no accel device is available")
        return torch.device("accel")
    raise UsageError(f"--device {name}: must be accel or cpu")


def autocast_dtype(args):
    return torch.bfloat16 if args.bf16 else torch.float16 if args.fp16 else None


def autocast(device: torch.device, dtype):
    """Autocast to dtype, or nothing when training in float32."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def eval_metrics(model, batch: torch.Tensor, device: torch.device, dtype) -> tuple:
    """(loss, next-token accuracy) on a fixed batch, without gradients."""
    model.eval()
    with torch.no_grad(), autocast(device, dtype):
        out = model(input_ids=batch, labels=batch)
        pred = out.logits[:, :-1].argmax(-1)
        accuracy = (pred == batch[:, 1:]).float().mean()
    model.train()
    return out.loss.float().item(), accuracy.item()


def train(
    args, model, data: torch.Tensor, device: torch.device, log=print, ranks: Ranks = SINGLE_PROCESS
) -> Result:
    """Trains the LoRA adapters for args.steps steps; batches come from data in a fixed order
    (each rank takes its share of every batch)."""
    model.to(device)
    model = wrap_for_ranks(args, model, ranks, device)
    dtype = autocast_dtype(args)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    if args.compile:  # the optimizer step too (the model is compiled by the caller)
        opt.step = torch.compile(opt.step)
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
    eval_batch = data[-args.batch_size :].to(device)
    train_rows = data[: max(args.batch_size, len(data) - args.batch_size)]
    is_accel = device.type == "accel"
    if is_accel:
        import torch_accel

        torch_accel.reset_fallback_counts()
        torch.accel.reset_peak_memory_stats()

    losses, memory, step_peaks = [], [], []
    tokens = 0
    peak = 0
    progress = make_progress(args.steps, log) if ranks.main else (lambda **_: None)
    start = time.perf_counter()
    for step in range(args.steps):
        idx = torch.arange(step * args.batch_size, (step + 1) * args.batch_size) % len(train_rows)
        batch = train_rows[idx[ranks.rank :: ranks.world]].to(device)
        with autocast(device, dtype):
            loss = model(input_ids=batch, labels=batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        losses.append(mean_over_ranks(loss, ranks).item())  # synchronises: honest timing
        tokens += batch.numel() * ranks.world
        memory.append(torch.accel.memory_allocated() if is_accel else 0)
        step_peaks.append(torch.accel.max_memory_allocated() if is_accel else 0)
        peak = max(peak, step_peaks[-1])
        if is_accel:
            torch.accel.reset_peak_memory_stats()
        rate = tokens / (time.perf_counter() - start)
        progress(loss=losses[-1], rate=rate, mem=memory[-1])
    elapsed = time.perf_counter() - start
    eval_loss, accuracy = eval_metrics(model, eval_batch, device, dtype)
    fallback = sum(torch_accel.fallback_counts().values()) if is_accel else 0
    return Result(losses, memory, step_peaks, tokens / elapsed, peak, accuracy, eval_loss, fallback)


def make_progress(total: int, log):
    """A tqdm bar showing loss, tokens/s and device memory; plain lines without tqdm."""
    try:
        from tqdm import tqdm

        bar = tqdm(total=total, desc="lora", unit="step", file=sys.stderr)

        def update(loss, rate, mem):
            bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{rate:,.0f}", mem=f"{mem / 2**20:.1f}MiB")
            bar.update(1)
            if bar.n == total:
                bar.close()

        return update
    except ImportError:
        step = [0]

        def update(loss, rate, mem):
            step[0] += 1
            if step[0] % 10 == 0 or step[0] == total:
                log(
                    f"step {step[0]}/{total} loss {loss:.3f} tok/s {rate:,.0f} "
                    f"mem {mem / 2**20:.1f} MiB"
                )

        return update


def round_trip_adapter(
    args, model, vocab_size, eval_batch, device, out_dir, ranks: Ranks = SINGLE_PROCESS
) -> float:
    """Saves the adapter, loads it onto a fresh base model, returns that model's eval loss
    (rank 0 only; NaN on the other ranks)."""
    from peft import PeftModel

    state = None
    if args.fsdp and ranks.world > 1:  # every rank gathers the sharded LoRA weights
        state = {
            k: v.full_tensor() if hasattr(v, "full_tensor") else v
            for k, v in model.state_dict().items()
            if "lora_" in k
        }
    if not ranks.main:
        return math.nan
    adapter_dir = os.path.join(out_dir, "adapter")
    model.save_pretrained(adapter_dir, state_dict=state)
    fresh = build_base(args, vocab_size)
    reloaded = PeftModel.from_pretrained(fresh, adapter_dir).to(device)
    return eval_metrics(reloaded, eval_batch, device, autocast_dtype(args))[0]


def write_plots(result: Result, out_dir: str, device: torch.device) -> list:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(range(1, len(result.losses) + 1), result.losses)
    ax.set(xlabel="step", ylabel="training loss", title=f"LoRA fine-tune on {device.type}")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    paths.append(os.path.join(out_dir, "loss_curve.png"))
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps = range(1, len(result.memory) + 1)
    ax.plot(steps, [m / 2**20 for m in result.step_peaks], label="peak during the step")
    ax.plot(steps, [m / 2**20 for m in result.memory], label="allocated after the step")
    ax.set(xlabel="step", ylabel="MiB", title=f"{device.type} memory per training step")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    paths.append(os.path.join(out_dir, "memory_timeline.png"))
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def preflight_step(argv):
    """For `python -m torch_accel preflight examples/lora_finetune.py [args]`: builds the model
    and a batch on the CPU and returns one training step that moves them to the device."""
    args = parse_args(argv)
    tokenizer, data = permutation_task(args.seq_len, 2 * args.batch_size, args.seed)
    model = build_model(args, tokenizer.vocab_size)
    batch = data[: args.batch_size]
    dtype = autocast_dtype(args)

    def step():
        device = torch.device(args.device)
        model.to(device)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=args.lr)
        inputs = batch.to(device)
        with autocast(device, dtype):
            loss = model(input_ids=inputs, labels=inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    return step


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--device", default="accel", help="accel or cpu")
    p.add_argument("--model", help="a local Hugging Face causal LM directory")
    p.add_argument("--data", help="a local .txt or .jsonl file (JSONL: a 'text' field per line)")
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--rank", type=int, default=8, help="LoRA rank")
    p.add_argument("--hidden", type=int, default=128, help="hidden size of the generated model")
    p.add_argument("--layers", type=int, default=2, help="layers of the generated model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast")
    p.add_argument("--fp16", action="store_true", help="float16 autocast with a GradScaler")
    p.add_argument(
        "--compile", action="store_true", help="torch.compile the model and the optimizer step"
    )
    p.add_argument(
        "--fsdp",
        action="store_true",
        help="under torchrun: shard the model with FSDP2 instead of DDP",
    )
    p.add_argument("--out", default="lora-out", help="folder for the adapter, plots and summary")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        device = check_device(args.device)
        ranks, device = init_ranks(args, device)
        if args.model:
            tokenizer = load_tokenizer(args)
        if args.data:
            if not args.model:
                tokenizer = CharTokenizer(read_text(args.data))
            data = file_dataset(args.data, tokenizer, args.seq_len)
            vocab = len(tokenizer) if args.model else tokenizer.vocab_size
        else:
            tokenizer, data = permutation_task(args.seq_len, 64 * args.batch_size, args.seed)
            vocab = tokenizer.vocab_size
        model = build_model(args, vocab)
        if args.compile:
            model = torch.compile(model)
        os.makedirs(args.out, exist_ok=True)
        result = train(args, model, data, device, ranks=ranks)
        eval_batch = data[-args.batch_size :].to(device)
        reloaded_loss = round_trip_adapter(args, model, vocab, eval_batch, device, args.out, ranks)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except torch.OutOfMemoryError as e:
        first = str(e).splitlines()[0]
        print(
            f"error: out of device memory ({first}). Try a smaller --batch-size or --seq-len, "
            "or --bf16.",
            file=sys.stderr,
        )
        return 3
    if ranks.world > 1:
        import torch.distributed as dist

        dist.destroy_process_group()
    if not ranks.main:
        return 0
    plots = write_plots(result, args.out, device)
    drop = 1 - result.losses[-1] / result.losses[0]
    summary = {
        "device": device.type,
        "steps": args.steps,
        "first_loss": result.losses[0],
        "final_loss": result.losses[-1],
        "loss_drop": drop,
        "eval_loss": result.eval_loss,
        "reloaded_eval_loss": reloaded_loss,
        "task_accuracy": result.accuracy,
        "tokens_per_s": result.tokens_per_s,
        "peak_memory_bytes": result.peak_memory,
        "fallback_calls": result.fallback_calls,
        "plots": plots,
        "losses": result.losses,
        "ranks": ranks.world,
        "parallel": ("fsdp" if args.fsdp else "ddp") if ranks.world > 1 else None,
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(
        f"steps {args.steps}  loss {result.losses[0]:.3f} -> {result.losses[-1]:.3f} "
        f"({drop:.0%} lower)  task accuracy {result.accuracy:.1%}"
    )
    print(
        f"tokens/s {result.tokens_per_s:,.0f}  peak memory {result.peak_memory / 2**20:.1f} MiB  "
        f"fallback calls {result.fallback_calls}"
    )
    same = math.isclose(reloaded_loss, result.eval_loss, rel_tol=1e-4, abs_tol=1e-5)
    print(
        f"adapter saved and reloaded: eval loss {result.eval_loss:.4f} vs {reloaded_loss:.4f} "
        f"({'same' if same else 'DIFFERENT'})"
    )
    print(f"plots: {', '.join(plots)}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

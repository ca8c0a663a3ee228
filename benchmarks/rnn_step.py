"""Training step of nn.LSTM and nn.GRU language models (embedding, two recurrent layers, linear
head, cross-entropy, AdamW): median step time on accel and on CPU eager, the two timed in
turns in one run.

    python benchmarks/rnn_step.py [--out DIR] [--steps N] [--seq 32] [--batch 16] [--hidden 128]
"""

import argparse

import torch
import torch.nn.functional as F

import torch_accel
from common import medians_in_turns, write_result

VOCAB = 256


def stepper(kind: str, device: str, args):
    """One training step of the model on ``device``, synchronised."""
    torch.manual_seed(0)
    rnn = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind]
    model = torch.nn.ModuleDict(
        {
            "emb": torch.nn.Embedding(VOCAB, args.hidden),
            "rnn": rnn(args.hidden, args.hidden, num_layers=2),
            "head": torch.nn.Linear(args.hidden, VOCAB),
        }
    ).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (args.seq + 1, args.batch), generator=gen).to(device)
    sync = torch.accel.synchronize if device == "accel" else (lambda: None)

    def step():
        out, _ = model["rnn"](model["emb"](tokens[:-1]))
        loss = F.cross_entropy(model["head"](out).flatten(0, 1), tokens[1:].flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=128)
    args = parser.parse_args()
    torch_accel.reset_fallback_counts()
    rows = {}
    for kind in ("lstm", "gru"):
        t = medians_in_turns(
            {d: stepper(kind, d, args) for d in ("accel", "cpu")}, args.steps, warmup=2
        )
        a, c = t["accel"], t["cpu"]
        rows[kind] = {"accel_ms": a * 1e3, "cpu_ms": c * 1e3, "accel_time_vs_cpu": a / c}
    result = {
        "benchmark": "LSTM/GRU language-model training step, accel vs CPU eager",
        "driver": torch_accel.driver(),
        "shape": {"seq": args.seq, "batch": args.batch, "hidden": args.hidden, "layers": 2},
        "models": rows,
        "accel_fallback_calls": sum(torch_accel.fallback_counts().values()),
    }
    write_result(args.out, "rnn_step", result)


if __name__ == "__main__":
    main()

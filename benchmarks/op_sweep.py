"""Everyday ops at the sizes a small model's step uses (transformer, vision, sampling),
accel vs CPU eager on the host driver in one run: each op's median time over repeats of 5
back-to-back calls (accel synchronised at the end of each), and the ratio accel time / CPU
time (below 1: accel faster). A sweep to find the ops far behind CPU, not a goal.

    python benchmarks/op_sweep.py [--out DIR] [--repeats N] [names ...]
"""

import argparse
import os
import statistics

import torch
import torch.nn.functional as F

import torch_accel
from common import median_seconds, write_result

CALLS = 5  # per timed sample, back to back
cases = {}


def case(name, fn, make):
    cases[name] = (fn, make)


def T(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


B, S, H, NH = 8, 128, 256, 4
case("softmax last 32", lambda x: x.softmax(-1), lambda: [T(16, 4, 32, 32)])
case("softmax last 128", lambda x: x.softmax(-1), lambda: [T(8, 4, 128, 128)])
case("softmax last 32000", lambda x: x.softmax(-1), lambda: [T(8, 32000)])
case(
    "log_softmax bwd 128",
    lambda x: torch.autograd.grad(x.log_softmax(-1).sum(), x),
    lambda: [T(512, 128).requires_grad_()],
)
case(
    "layer_norm 256", lambda x, w, b: F.layer_norm(x, (H,), w, b), lambda: [T(B * S, H), T(H), T(H)]
)
case(
    "layer_norm fwd+bwd",
    lambda x, w, b: torch.autograd.grad(F.layer_norm(x, (H,), w, b).sum(), (x, w, b)),
    lambda: [T(B * S, H).requires_grad_(), T(H).requires_grad_(), T(H).requires_grad_()],
)
case("rms_norm", lambda x, w: F.rms_norm(x, (H,), w), lambda: [T(B * S, H), T(H)])
case("gelu", lambda x: F.gelu(x), lambda: [T(B * S, 4 * H)])
case("gelu tanh", lambda x: F.gelu(x, approximate="tanh"), lambda: [T(B * S, 4 * H)])
case("silu*mul", lambda x, y: F.silu(x) * y, lambda: [T(B * S, 4 * H), T(B * S, 4 * H)])
case(
    "transpose contiguous", lambda x: x.transpose(1, 2).contiguous(), lambda: [T(B, S, NH, H // NH)]
)
case(
    "permute 0213 contiguous",
    lambda x: x.permute(0, 2, 1, 3).contiguous(),
    lambda: [T(B, NH, S, H // NH)],
)
case("cat dim -1", lambda x, y: torch.cat([x, y], -1), lambda: [T(B, S, H), T(B, S, H)])
case("cat dim 0 many", lambda *xs: torch.cat(xs, 0), lambda: [T(64, H) for _ in range(16)])
case("stack", lambda *xs: torch.stack(xs), lambda: [T(S, H) for _ in range(8)])
case(
    "rotary (half rotate)",
    lambda x, c, s: x * c + torch.cat([-x[..., 32:], x[..., :32]], -1) * s,
    lambda: [T(B, NH, S, 64), T(S, 64), T(S, 64)],
)
case(
    "where mask",
    lambda m, x: torch.where(m, x, -1e9),
    lambda: [torch.rand(B, 1, S, S) > 0.5, T(B, NH, S, S)],
)
case(
    "masked_fill",
    lambda x, m: x.masked_fill(m, 0.0),
    lambda: [T(B, NH, S, S), torch.rand(B, 1, S, S) > 0.5],
)
case("triu mask", lambda x: torch.triu(x, 1), lambda: [T(S * 4, S * 4)])
case("topk 50", lambda x: x.topk(50, -1), lambda: [T(8, 32000)])
case("sort", lambda x: x.sort(-1), lambda: [T(64, 4096)])
case("argsort", lambda x: x.argsort(-1), lambda: [T(64, 4096)])
case("cumsum", lambda x: x.cumsum(-1), lambda: [T(64, 4096)])
case("argmax", lambda x: x.argmax(-1), lambda: [T(8, 32000)])
case("multinomial", lambda x: torch.multinomial(x, 1), lambda: [torch.rand(8, 32000)])
case(
    "gather dim -1",
    lambda x, i: x.gather(-1, i),
    lambda: [T(B * S, 32000 // 8), torch.randint(0, 4000, (B * S, 1))],
)
case(
    "scatter_add rows",
    lambda x, i, s: x.scatter_add(0, i, s),
    lambda: [T(1000, 64), torch.randint(0, 1000, (4096, 64)), T(4096, 64)],
)
case(
    "index_put acc",
    lambda x, i, v: x.index_put((i,), v, accumulate=True),
    lambda: [T(1000, 64), torch.randint(0, 1000, (4096,)), T(4096, 64)],
)
case(
    "cross_entropy fwd+bwd",
    lambda x, y: torch.autograd.grad(F.cross_entropy(x, y), x),
    lambda: [T(B * S, 8000).requires_grad_(), torch.randint(0, 8000, (B * S,))],
)
case(
    "nll_loss",
    lambda x, y: F.nll_loss(x, y),
    lambda: [T(B * S, 8000), torch.randint(0, 8000, (B * S,))],
)
case(
    "mse fwd+bwd",
    lambda x, y: torch.autograd.grad(F.mse_loss(x, y), x),
    lambda: [T(B * S, H).requires_grad_(), T(B * S, H)],
)
case("bmm", lambda a, b: a @ b, lambda: [T(32, 128, 64), T(32, 64, 128)])
case("linear", lambda x, w, b: F.linear(x, w, b), lambda: [T(B * S, H), T(4 * H, H), T(4 * H)])
case(
    "linear bwd",
    lambda x, w: torch.autograd.grad(F.linear(x, w).sum(), (x, w)),
    lambda: [T(B * S, H).requires_grad_(), T(4 * H, H).requires_grad_()],
)
case("matmul broadcast", lambda a, b: a @ b, lambda: [T(B, S, H), T(H, H)])
case(
    "einsum bhqd,bhkd",
    lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k),
    lambda: [T(B, NH, S, 64), T(B, NH, S, 64)],
)
case(
    "sdpa causal",
    lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    lambda: [T(B, NH, S, 64), T(B, NH, S, 64), T(B, NH, S, 64)],
)
case(
    "sdpa causal fwd+bwd",
    lambda q, k, v: torch.autograd.grad(
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum(), (q, k, v)
    ),
    lambda: [
        T(B, NH, S, 64).requires_grad_(),
        T(B, NH, S, 64).requires_grad_(),
        T(B, NH, S, 64).requires_grad_(),
    ],
)
case(
    "conv2d 3x3",
    lambda x, w: F.conv2d(x, w, padding=1),
    lambda: [T(8, 32, 32, 32), T(32, 32, 3, 3)],
)
case("conv2d 1x1", lambda x, w: F.conv2d(x, w), lambda: [T(8, 64, 32, 32), T(64, 64, 1, 1)])
case(
    "conv2d depthwise",
    lambda x, w: F.conv2d(x, w, padding=1, groups=64),
    lambda: [T(8, 64, 32, 32), T(64, 1, 3, 3)],
)
case(
    "conv2d fwd+bwd",
    lambda x, w: torch.autograd.grad(F.conv2d(x, w, padding=1).sum(), (x, w)),
    lambda: [T(8, 32, 32, 32).requires_grad_(), T(32, 32, 3, 3).requires_grad_()],
)
case("conv1d", lambda x, w: F.conv1d(x, w, padding=1), lambda: [T(8, 64, 1024), T(64, 64, 3)])
case(
    "conv_transpose2d",
    lambda x, w: F.conv_transpose2d(x, w, stride=2),
    lambda: [T(8, 32, 16, 16), T(32, 16, 2, 2)],
)
case("max_pool2d", lambda x: F.max_pool2d(x, 2), lambda: [T(8, 64, 32, 32)])
case("max_pool2d 3s2", lambda x: F.max_pool2d(x, 3, 2, 1), lambda: [T(8, 64, 32, 32)])
case("avg_pool2d", lambda x: F.avg_pool2d(x, 2), lambda: [T(8, 64, 32, 32)])
case("adaptive_avg_pool2d 1", lambda x: F.adaptive_avg_pool2d(x, 1), lambda: [T(8, 256, 16, 16)])
case(
    "batch_norm train",
    lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    lambda: [T(8, 64, 32, 32), T(64), T(64)],
)
case(
    "group_norm", lambda x, w, b: F.group_norm(x, 8, w, b), lambda: [T(8, 64, 32, 32), T(64), T(64)]
)
case(
    "interpolate nearest 2x", lambda x: F.interpolate(x, scale_factor=2), lambda: [T(8, 32, 32, 32)]
)
case(
    "interpolate bilinear 2x",
    lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    lambda: [T(8, 32, 32, 32)],
)
case("pad reflect", lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"), lambda: [T(8, 32, 32, 32)])
case("pad constant", lambda x: F.pad(x, (1, 1, 1, 1)), lambda: [T(8, 32, 32, 32)])
case("unfold", lambda x: F.unfold(x, 3, padding=1), lambda: [T(4, 32, 32, 32)])
case("dropout", lambda x: F.dropout(x, 0.1), lambda: [T(B * S, 4 * H)])
case("randn", lambda: torch.randn(B * S, 4 * H), lambda: [])
case("rand_like", lambda x: torch.rand_like(x), lambda: [T(B * S, 4 * H)])
case("arange", lambda: torch.arange(1 << 20), lambda: [])
case("mean dim -1", lambda x: x.mean(-1), lambda: [T(B * S, 4 * H)])
case("sum dim 0", lambda x: x.sum(0), lambda: [T(B * S, 4 * H)])
case("var dim -1", lambda x: x.var(-1), lambda: [T(B * S, 4 * H)])
case("norm", lambda x: x.norm(), lambda: [T(B * S, 4 * H)])
case("max dim -1", lambda x: x.max(-1), lambda: [T(B * S, 4 * H)])
case("pow 2", lambda x: x.pow(2), lambda: [T(B * S, 4 * H)])
case("rsqrt", lambda x: x.abs().rsqrt(), lambda: [T(B * S, 4 * H)])
case("clamp", lambda x: x.clamp(-1, 1), lambda: [T(B * S, 4 * H)])
case("to bf16", lambda x: x.to(torch.bfloat16), lambda: [T(B * S, 4 * H)])
case(
    "bf16 linear",
    lambda x, w: F.linear(x, w),
    lambda: [T(B * S, H, dtype=torch.bfloat16), T(4 * H, H, dtype=torch.bfloat16)],
)
case("bf16 softmax", lambda x: x.softmax(-1), lambda: [T(B, NH, S, S, dtype=torch.bfloat16)])
case(
    "bf16 layer_norm", lambda x: F.layer_norm(x, (H,)), lambda: [T(B * S, H, dtype=torch.bfloat16)]
)
case("repeat", lambda x: x.repeat(1, 4, 1), lambda: [T(B, S, H)])
case(
    "expand contiguous",
    lambda x: x[:, :, None].expand(B, NH, 4, S, 64).reshape(B, NH * 4, S, 64),
    lambda: [T(B, NH, S, 64)],
)
case("repeat_interleave", lambda x: x.repeat_interleave(4, dim=1), lambda: [T(B, NH, S, 64)])
case("flip", lambda x: x.flip(-1), lambda: [T(B * S, 4 * H)])
case("roll", lambda x: x.roll(3, -1), lambda: [T(B * S, 4 * H)])
case("nonzero", lambda x: (x > 0).nonzero(), lambda: [T(B * S, H)])
case("unique", lambda x: torch.unique(x), lambda: [torch.randint(0, 1000, (1 << 16,))])
case("bincount", lambda x: torch.bincount(x), lambda: [torch.randint(0, 1000, (1 << 16,))])
case("one_hot", lambda x: F.one_hot(x, 1000), lambda: [torch.randint(0, 1000, (1024,))])
case(
    "embedding bag",
    lambda i, w, o: F.embedding_bag(i, w, o),
    lambda: [torch.randint(0, 1000, (4096,)), T(1000, 64), torch.arange(0, 4096, 16)],
)
case(
    "embedding 512 x 128",
    lambda i, w: F.embedding(i, w),
    lambda: [torch.randint(0, 24, (512,)), T(24, 128)],
)
case(
    "lstm step",
    lambda x, h, c, w1, w2: torch.lstm_cell(x, (h, c), w1, w2),
    lambda: [T(64, 128), T(64, 128), T(64, 128), T(512, 128), T(512, 128)],
)


def timed(fn, args, sync, repeats):
    def run():
        for _ in range(CALLS):
            fn(*args)

    return median_seconds(run, repeats=repeats, sync=sync) / CALLS


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("names", nargs="*", help="ops to time (default: all)")
    args = p.parse_args()
    torch_accel.set_fallback_mode("silent")
    rows = {}
    for name in args.names or list(cases):
        fn, make = cases[name]
        torch.manual_seed(0)
        cpu_args = make()
        acc_args = [
            a.detach().to("accel").requires_grad_(a.requires_grad) if torch.is_tensor(a) else a
            for a in cpu_args
        ]
        torch_accel.reset_fallback_counts()
        if cpu_args:
            t_acc = timed(fn, acc_args, torch.accel.synchronize, args.repeats)
        else:
            with torch.device("accel"):
                t_acc = timed(fn, [], torch.accel.synchronize, args.repeats)
        fallback = dict(torch_accel.fallback_counts())
        t_cpu = timed(fn, cpu_args, None, args.repeats)
        rows[name] = {
            "cpu_us": t_cpu * 1e6,
            "accel_us": t_acc * 1e6,
            "accel_time_vs_cpu": t_acc / t_cpu,
            "fallback_calls": fallback,
        }
        print(
            f"{name:28s} cpu {t_cpu * 1e6:9.1f} us  accel {t_acc * 1e6:9.1f} us  "
            f"{t_acc / t_cpu:5.2f}x",
            flush=True,
        )
    ratios = sorted(r["accel_time_vs_cpu"] for r in rows.values())
    write_result(
        args.out,
        "op_sweep",
        {
            "benchmark": "everyday ops, accel vs CPU eager (host driver)",
            "ops": rows,
            "median_accel_time_vs_cpu": statistics.median(ratios),
            "worst": sorted(rows, key=lambda n: -rows[n]["accel_time_vs_cpu"])[:10],
            "load_average": os.getloadavg(),
        },
    )


if __name__ == "__main__":
    main()

"""The LoRA fine-tuning example on accel: parity with CPU, no fallback, no leak, adapter I/O."""

import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import LORA_SMALL_ARGS, ROOT, run_python

sys.path.insert(0, os.path.join(ROOT, "examples"))
import lora_finetune as lf  # noqa: E402


def run_steps(device: str, steps: int, extra=()):
    args = lf.parse_args(LORA_SMALL_ARGS + ["--steps", str(steps), *extra])
    tokenizer, data = lf.permutation_task(args.seq_len, 16 * args.batch_size, args.seed)
    model = lf.build_model(args, tokenizer.vocab_size)
    result = lf.train(args, model, data, torch.device(device), log=lambda *_: None)
    return model, result


def test_float32_losses_match_cpu():
    _, cpu = run_steps("cpu", 6)
    _, acc = run_steps("accel", 6)
    torch.testing.assert_close(
        torch.tensor(acc.losses), torch.tensor(cpu.losses), rtol=1e-4, atol=0
    )
    assert acc.losses[-1] < acc.losses[0]


def test_bf16_autocast_losses_match_cpu():
    # bfloat16 keeps 8 significant bits (relative step 2**-8 = 0.4%); CPU and accel round the
    # same products in a different order, and the difference compounds over the steps. Five
    # bf16 ulps (2%) separates a real bug (which moves the loss by far more) from that.
    _, cpu = run_steps("cpu", 4, ["--bf16"])
    _, acc = run_steps("accel", 4, ["--bf16"])
    torch.testing.assert_close(
        torch.tensor(acc.losses), torch.tensor(cpu.losses), rtol=2e-2, atol=0
    )


def test_only_lora_weights_change():
    model, _ = run_steps("accel", 3)
    fresh = lf.build_model(lf.parse_args(LORA_SMALL_ARGS), len(lf.ALPHABET))
    trained = {n: p.detach().cpu() for n, p in model.named_parameters()}
    changed_lora = changed_base = 0
    for name, p in fresh.named_parameters():
        same = torch.equal(trained[name], p.detach())
        if "lora_" in name:
            changed_lora += not same
        else:
            changed_base += not same
    assert changed_lora > 0 and changed_base == 0


def test_memory_returns_to_its_level():
    args = lf.parse_args(LORA_SMALL_ARGS + ["--steps", "100"])
    tokenizer, data = lf.permutation_task(args.seq_len, 16 * args.batch_size, args.seed)
    result = lf.train(
        args,
        lf.build_model(args, tokenizer.vocab_size),
        data,
        torch.device("accel"),
        log=lambda *_: None,
    )
    after_warmup = result.memory[9]
    assert result.memory[-1] == after_warmup, (after_warmup, result.memory[-5:])
    assert max(result.memory[10:]) == after_warmup


def test_no_fallback_in_any_step():
    proc = run_python(
        "import sys; sys.path.insert(0, 'examples')\n"
        "import torch, torch_accel, lora_finetune as lf\n"
        f"args = lf.parse_args({LORA_SMALL_ARGS!r} + ['--steps', '3'])\n"
        "tok, data = lf.permutation_task(args.seq_len, 64, 0)\n"
        "r = lf.train(args, lf.build_model(args, tok.vocab_size), data, torch.device('accel'),\n"
        "             log=lambda *_: None)\n"
        "print('FALLBACK', r.fallback_calls, torch_accel.fallback_counts())\n",
        env={"TORCH_ACCEL_FALLBACK": "error"},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "FALLBACK 0 {}" in proc.stdout


def test_script_end_to_end_with_adapter_round_trip(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            "examples/lora_finetune.py",
            *LORA_SMALL_ARGS,
            "--steps",
            "5",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["device"] == "accel" and summary["steps"] == 5
    assert summary["reloaded_eval_loss"] == pytest.approx(summary["eval_loss"], rel=1e-4)
    assert (out / "adapter" / "adapter_config.json").exists()
    assert (out / "loss_curve.png").stat().st_size > 0 and (out / "memory_timeline.png").exists()
    assert "fallback calls" in proc.stdout


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--model", "/nonexistent/model"], "--model /nonexistent/model: not a directory"),
        (["--data", "/nonexistent/data.txt"], "--data /nonexistent/data.txt: no such file"),
        (["--device", "tpu"], "--device tpu: must be accel or cpu"),
    ],
)
def test_bad_arguments_exit_cleanly(argv, message):
    proc = subprocess.run(
        [sys.executable, "examples/lora_finetune.py", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr

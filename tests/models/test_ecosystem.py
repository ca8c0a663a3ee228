"""What users reach accel through besides their own loops: HF Trainer + peft LoRA with the
device from accelerate, from_pretrained(..., device_map="accel"), and pipeline(device="accel").
Each run is compared with the same run on CPU."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from zoo import VOCAB, FallbackMode, build

import torch_accel

HERE = Path(__file__).parent


def _run_trainer(env: dict, *args: str, launcher=(sys.executable,)):
    done = subprocess.run(
        [*launcher, str(HERE / "trainer_run.py"), *args],
        env=env,
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _trainer(device: str, *flags: str) -> dict:
    env = dict(os.environ, TORCH_ACCEL_FALLBACK="error")
    env.pop("ACCELERATE_TORCH_DEVICE", None)
    if device == "accel":
        env["ACCELERATE_TORCH_DEVICE"] = "accel"
    done = _run_trainer(env, device, *flags)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_trainer_with_peft_lora_trains_on_accel_like_cpu():
    cpu, accel = _trainer("cpu"), _trainer("accel")
    assert cpu["device"] == "cpu" and accel["device"].startswith("accel")
    assert accel["params"] == ["accel:0"]
    assert accel["fallback"] == {}
    assert len(accel["losses"]) == len(cpu["losses"]) == 3
    for a, c in zip(accel["losses"], cpu["losses"]):
        assert a == pytest.approx(c, rel=1e-4)


def test_trainer_in_bf16_trains_on_accel_like_cpu():
    """TrainingArguments(bf16=True): transformers' own bfloat16 check lets accel through, and
    the steps run under bfloat16 autocast. The losses of three steps agree to 1e-3 relative
    (1.2e-5 measured): both sides round the same bfloat16 operands, but their GEMMs sum in
    other orders, and a bfloat16 step (2^-8) in a LoRA weight moves the loss by about 1e-4."""
    cpu, accel = _trainer("cpu", "--bf16"), _trainer("accel", "--bf16")
    assert accel["device"].startswith("accel") and accel["fallback"] == {}
    assert len(accel["losses"]) == len(cpu["losses"]) == 3
    for a, c in zip(accel["losses"], cpu["losses"]):
        assert a == pytest.approx(c, rel=1e-3)


def test_trainer_under_torchrun_says_accelerate_does_not_distribute_on_accel():
    """accelerate's distributed types are a fixed list without out-of-tree devices: under a
    2-process launch it resolves DistributedType.NO on accel, and each process trains its own
    replica. torch_accel says so in each process instead of leaving it silent."""
    env = dict(os.environ, TORCH_ACCEL_FALLBACK="error", ACCELERATE_TORCH_DEVICE="accel")
    torchrun = (sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2")
    done = _run_trainer(env, launcher=torchrun)
    said = done.stderr.count("accelerate 1.")
    assert said == 2, done.stderr[-3000:]
    assert "this launch of 2 processes runs DistributedType.NO" in done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"')]
    # What the warning describes: two whole replicas, each on the process's current device.
    assert len(results) == 2 and results[0]["losses"] == results[1]["losses"]
    assert all(r["device"].startswith("accel") for r in results)
    # A single process says nothing.
    assert "DistributedType.NO" not in _run_trainer(env).stderr


def test_from_pretrained_with_device_map_loads_to_accel(tmp_path):
    from transformers import AutoModelForCausalLM

    model = build("gpt2").eval()  # tied embeddings: they must stay tied through loading
    model.save_pretrained(tmp_path)
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path, device_map="accel")
    assert {p.device.type for p in loaded.parameters()} == {"accel"}
    assert loaded.lm_head.weight is loaded.transformer.wte.weight
    ids = torch.randint(1, VOCAB, (2, 7), generator=torch.Generator().manual_seed(3))
    torch_accel.reset_fallback_counts()
    with torch.no_grad(), FallbackMode("error"):
        got = loaded(ids.to("accel")).logits.cpu()
    with torch.no_grad():
        want = model(ids).logits
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = Tokenizer(models.WordLevel(vocab={f"w{i}": i for i in range(VOCAB)}, unk_token="w1"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=words, unk_token="w1", pad_token="w0", eos_token="w0", bos_token="w0"
    )


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_text_generation_pipeline_on_accel_answers_like_cpu(name):
    from transformers import pipeline

    def answer(device):
        generate = pipeline(
            "text-generation", model=build(name).eval(), tokenizer=_tokenizer(), device=device
        )
        assert generate.device.type == device
        return generate("w5 w6 w7", max_new_tokens=6, min_new_tokens=6, do_sample=False)

    want = answer("cpu")
    torch_accel.reset_fallback_counts()
    with FallbackMode("error"):
        got = answer("accel")
    assert got == want
    assert torch_accel.fallback_counts() == {}

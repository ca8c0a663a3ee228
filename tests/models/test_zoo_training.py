"""Each zoo model (zoo.py) trains on accel as on CPU: the same parameters (tied ones stay
tied), the first backward's gradients and three AdamW steps' losses match, and no op reaches
the CPU fallback (the accel run is under its "error" mode)."""

import functools

import pytest
import torch
from zoo import ZOO, build, train


@functools.cache
def runs(name: str, bf16: bool = False):
    model = build(name)
    return train(name, model, "cpu", bf16), train(name, model, "accel", bf16)


MODELS = sorted(ZOO)


@pytest.mark.parametrize("name", MODELS)
def test_same_parameters_and_ties(name):
    cpu, acc = runs(name)
    assert acc.names == cpu.names
    assert acc.tied == cpu.tied


def test_tied_models_have_ties():
    # The ties the parameter test must keep are really there (embedding and LM head).
    for name in ("gpt2", "bert", "t5", "whisper"):
        assert any(len(g) > 1 for g in runs(name)[0].tied), name


@pytest.mark.parametrize("name", MODELS)
def test_first_gradients_match_cpu(name):
    cpu, acc = runs(name)
    scale = max(g.abs().max().item() for g in cpu.grads.values() if g is not None)
    assert scale > 0
    for n, want in cpu.grads.items():
        got = acc.grads[n]
        assert (got is None) == (want is None), n
        if want is not None:
            torch.testing.assert_close(got, want, rtol=0, atol=1e-4 * scale, msg=n)


@pytest.mark.parametrize("name", MODELS)
def test_adamw_losses_match_cpu(name):
    cpu, acc = runs(name)
    torch.testing.assert_close(
        torch.tensor(acc.losses), torch.tensor(cpu.losses), rtol=1e-4, atol=0
    )
    assert acc.losses[-1] < acc.losses[0]  # the steps train


@pytest.mark.parametrize("name", MODELS)
def test_no_fallback(name):
    _, acc = runs(name)
    assert acc.fallback == {}


@pytest.mark.parametrize("name", MODELS)
def test_bf16_autocast_losses_match_cpu(name):
    # bfloat16 keeps 8 significant bits (a relative step of 2**-8 = 0.4%); CPU and accel round
    # the same products in another order. A loss averages many such values, so the runs part
    # by far less (at most 1.4e-3 measured, ViT); 1e-2 leaves room for that while a wrong
    # kernel moves the loss by far more.
    cpu, acc = runs(name, bf16=True)
    torch.testing.assert_close(
        torch.tensor(acc.losses), torch.tensor(cpu.losses), rtol=1e-2, atol=0
    )
    assert acc.fallback == {}

"""Shared (tied) parameters stay one Parameter across device moves, as on CUDA.

Module._apply keeps a Parameter object (and so its sharing) only when the old and new tensors
may swap data in place (torch._has_compatible_shallow_copy_type)."""

import pytest
import torch

import torch_accel  # noqa: F401


def _tied():
    torch.manual_seed(0)
    m = torch.nn.Module()
    m.a = torch.nn.Linear(4, 4)
    m.b = torch.nn.Linear(4, 4)
    m.b.weight = m.a.weight
    return m


@pytest.mark.parametrize(
    "moves",
    [["accel"], ["accel", "cpu"], ["accel", "accel:1"], ["accel:1", "accel:0", "cpu"]],
    ids="-".join,
)
def test_tied_weight_is_one_parameter_after_moves(moves):
    m = _tied()
    ref = m.a.weight.detach().clone()
    param = m.a.weight
    for dev in moves:
        m.to(dev)
        assert m.a.weight is m.b.weight
        assert m.a.weight is param  # the Parameter object itself survives, data swapped
        want = torch.device(dev)
        assert m.a.weight.device.type == want.type
        assert want.index is None or m.a.weight.device.index == want.index
        assert isinstance(m.a.weight, torch.nn.Parameter)
    torch.testing.assert_close(m.a.weight.detach().cpu(), ref, rtol=0, atol=0)
    assert len(list(m.parameters())) == 3  # weight (shared), a.bias, b.bias


def test_gradient_moves_with_parameter():
    m = _tied()
    m.a.weight.grad = torch.ones(4, 4)
    m.to("accel")
    assert m.a.weight.grad.device.type == "accel"
    assert m.b.weight.grad is m.a.weight.grad
    torch.testing.assert_close(m.a.weight.grad.cpu(), torch.ones(4, 4))


def test_dtype_and_device_move_together_keep_tie():
    m = _tied().to("accel", torch.float64)
    assert m.a.weight is m.b.weight and m.a.weight.dtype == torch.float64


def test_tied_training_matches_cpu():
    """Both uses of the shared weight accumulate into one gradient, so five SGD steps on
    accel follow the CPU run (an untied copy would diverge from the second step)."""

    def run(device):
        m = _tied().to(device)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        x = torch.randn(8, 4, generator=torch.Generator().manual_seed(1)).to(device)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = m.b(torch.tanh(m.a(x))).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, m.a.weight.detach().cpu()

    cpu_losses, cpu_w = run("cpu")
    accel_losses, accel_w = run("accel")
    torch.testing.assert_close(accel_losses, cpu_losses, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(accel_w, cpu_w, rtol=1e-5, atol=1e-6)


def test_incompatible_types_are_still_refused():
    """Only dense CPU/accel pairs are declared compatible; sparse stays as c10 decides."""
    dense = torch.zeros(2, 2, device="accel")
    sparse = torch.zeros(2, 2).to_sparse()
    assert not torch._has_compatible_shallow_copy_type(dense, sparse)
    assert torch._has_compatible_shallow_copy_type(dense, torch.zeros(2, 2))
    assert torch._has_compatible_shallow_copy_type(torch.zeros(2, 2), dense)


def test_hf_tied_embeddings_stay_tied():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=16)
    model = transformers.GPT2LMHeadModel(cfg)
    assert model.lm_head.weight is model.transformer.wte.weight
    model.to("accel")
    assert model.lm_head.weight is model.transformer.wte.weight
    assert model.lm_head.weight.device.type == "accel"

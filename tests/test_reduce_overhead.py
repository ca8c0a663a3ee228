"""torch.compile(mode="reduce-overhead") on accel: compiled graphs recorded and replayed as
accel graphs (torch_accel/_inductor/graph_trees.py), every value checked against CPU."""

import copy
import warnings

import pytest
import torch

from torch_accel._inductor import graph_trees

pytestmark = pytest.mark.skipif(
    not graph_trees.routed(), reason="this torch's Inductor lacks what accel graphs replace"
)


@pytest.fixture(autouse=True)
def fresh_compile():
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False):
        yield
    torch._dynamo.reset()


def _counts():
    return graph_trees.stats()


def _since(before):
    now = _counts()
    return {k: now[k] - before[k] for k in now}


def _inputs(n, shape=(64,)):
    return [torch.randn(*shape, generator=torch.Generator().manual_seed(i)) for i in range(n)]


def test_replays_graphs_and_every_call_returns_its_own_result():
    def f(x):
        return (x.sin() + 1) * x.cos(), x.exp().sum()

    compiled = torch.compile(f, mode="reduce-overhead")
    before = _counts()
    xs = _inputs(6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "without graphs" warning
        outs = [compiled(x.to("accel")) for x in xs]
    # Kept results are never overwritten by a later replay.
    for x, (a, b) in zip(xs, outs):
        ref_a, ref_b = f(x)
        torch.testing.assert_close(a.cpu(), ref_a)
        torch.testing.assert_close(b.cpu(), ref_b)
    counts = _since(before)
    assert counts["recorded"] >= 1 and counts["replayed"] == 5 and counts["eager"] == 1


def test_a_dropped_result_lets_one_recording_serve_every_call():
    compiled = torch.compile(lambda x: x * 2 + 1, mode="reduce-overhead")
    before = _counts()
    for x in _inputs(6):
        torch.testing.assert_close(compiled(x.to("accel")).cpu(), x * 2 + 1)
    assert _since(before) == {"recorded": 1, "replayed": 5, "eager": 1}


def test_training_with_compiled_model_and_optimizer_step_matches_cpu():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    model = copy.deepcopy(ref).to("accel")
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, capturable=True)
    compiled = torch.compile(model, mode="reduce-overhead")

    @torch.compile(mode="reduce-overhead")
    def opt_step():
        opt.step()

    before = _counts()
    gen = torch.Generator().manual_seed(1)
    for _ in range(6):
        x, y = torch.randn(8, 16, generator=gen), torch.randn(8, 4, generator=gen)
        loss = torch.nn.functional.mse_loss(compiled(x.to("accel")), y.to("accel"))
        loss.backward()
        opt_step()
        opt.zero_grad()
        ref_loss = torch.nn.functional.mse_loss(ref(x), y)
        ref_loss.backward()
        opt_ref.step()
        opt_ref.zero_grad()
        torch.testing.assert_close(loss.detach().cpu(), ref_loss.detach(), rtol=1e-4, atol=1e-5)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5)
    # Forward, backward and the optimizer step each replayed.
    assert _since(before)["replayed"] >= 3 * 3


def test_dropout_draws_fresh_numbers_on_every_replay():
    compiled = torch.compile(
        lambda x: torch.nn.functional.dropout(x, 0.5, training=True), mode="reduce-overhead"
    )
    x = torch.ones(4096, device="accel")
    before = _counts()
    masks = [compiled(x).cpu() for _ in range(5)]
    assert _since(before)["replayed"] == 4
    for m in masks:
        assert set(m.unique().tolist()) <= {0.0, 2.0}
        assert 0.4 < (m == 0).float().mean().item() < 0.6
    for a, b in zip(masks[1:], masks[2:]):
        assert not torch.equal(a, b)


def test_a_mutated_input_is_written_back():
    def f(x):
        x.mul_(2)
        return x + 1

    compiled = torch.compile(f, mode="reduce-overhead")
    cpu = torch.arange(8.0)
    acc = cpu.to("accel")
    before = _counts()
    for _ in range(4):
        out = compiled(acc)
        ref = f(cpu)
        torch.testing.assert_close(acc.cpu(), cpu)
        torch.testing.assert_close(out.cpu(), ref)
    assert _since(before)["replayed"] >= 2


def test_each_input_shape_gets_its_own_recording():
    compiled = torch.compile(lambda x: x.softmax(-1) * x.shape[0], mode="reduce-overhead")
    before = _counts()
    for rows in (2, 5, 2, 5, 3, 5):
        x = torch.randn(rows, 16, generator=torch.Generator().manual_seed(rows))
        torch.testing.assert_close(compiled(x.to("accel")).cpu(), x.softmax(-1) * rows)
    assert _since(before)["replayed"] >= 2


def test_results_kept_past_the_recording_limit_run_without_graphs_and_stay_right():
    compiled = torch.compile(lambda x: x.cos() - x, mode="reduce-overhead")
    xs = _inputs(graph_trees.MAX_RECORDINGS + 4)
    graph_trees._warned.clear()
    with pytest.warns(UserWarning, match="recorded .* graphs of one compiled graph"):
        outs = [compiled(x.to("accel")) for x in xs]
    for x, out in zip(xs, outs):
        torch.testing.assert_close(out.cpu(), x.cos() - x)


def test_batch_norm_training_updates_its_running_stats_in_place():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU())
    model = copy.deepcopy(ref).to("accel")
    compiled = torch.compile(model, mode="reduce-overhead")
    before = _counts()
    gen = torch.Generator().manual_seed(3)
    for _ in range(5):
        x = torch.randn(4, 3, 8, 8, generator=gen)
        out = compiled(x.to("accel"))
        out.sum().backward()
        want = ref(x)
        want.sum().backward()
        torch.testing.assert_close(out.detach().cpu(), want.detach(), rtol=1e-4, atol=1e-4)
    bn, bn_ref = model[1], ref[1]
    torch.testing.assert_close(bn.running_mean.cpu(), bn_ref.running_mean, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(bn.running_var.cpu(), bn_ref.running_var, rtol=1e-4, atol=1e-5)
    assert bn.num_batches_tracked.item() == 5
    grad, grad_ref = model[0].weight.grad.cpu(), ref[0].weight.grad
    torch.testing.assert_close(grad, grad_ref, rtol=1e-3, atol=1e-4)
    assert _since(before)["replayed"] >= 2


def test_an_output_viewing_a_parameter_is_that_parameter():
    lin = torch.nn.Linear(4, 4).to("accel")
    compiled = torch.compile(lambda x: (lin(x), lin.weight.t()), mode="reduce-overhead")
    before = _counts()
    for x in _inputs(4, (2, 4)):
        out, weight_t = compiled(x.to("accel"))
        assert weight_t.data_ptr() == lin.weight.data_ptr()
        want = x @ lin.weight.detach().cpu().t() + lin.bias.detach().cpu()
        torch.testing.assert_close(out.detach().cpu(), want)
    assert _since(before)["replayed"] >= 2

"""Graph capture and replay (torch.accel.graph, torch.accelerator.Graph), graph memory pools,
MemPool, and the capture errors: every value is checked against CPU PyTorch."""

import os
import sys
import threading

import pytest
import torch

from conftest import LORA_SMALL_ARGS, ROOT

accel = torch.accel


def _capture(fn, *static_inputs, **kwargs):
    g = accel.Graph()
    with accel.graph(g, **kwargs):
        out = fn(*static_inputs)
    return g, out


def _chain(x):
    return ((x * 2 + 1).sin() * x).relu() - x / 3


def test_replay_recomputes_on_new_inputs_like_cpu():
    static_x = torch.zeros(64, device="accel")
    g, out = _capture(_chain, static_x)
    assert accel.is_current_stream_capturing() is False
    for seed in range(3):
        x = torch.randn(64, generator=torch.Generator().manual_seed(seed))
        static_x.copy_(x)
        g.replay()
        torch.testing.assert_close(out.cpu(), _chain(x))


def test_capture_records_without_running():
    x = torch.ones(8, device="accel")
    g = accel.Graph()
    with accel.graph(g):
        x.add_(1)
    torch.testing.assert_close(x.cpu(), torch.full((8,), 1.0))  # nothing ran yet
    for _ in range(3):
        g.replay()
    torch.testing.assert_close(x.cpu(), torch.full((8,), 4.0))


def test_replay_allocates_nothing():
    static_x = torch.randn(32, device="accel")
    g, out = _capture(_chain, static_x)
    g.replay()
    accel.synchronize()
    before = accel.memory_stats()
    for _ in range(10):
        g.replay()
    accel.synchronize()
    after = accel.memory_stats()
    assert after["allocation.all.allocated"] == before["allocation.all.allocated"]
    assert after["segment.all.allocated"] == before["segment.all.allocated"]
    torch.testing.assert_close(out.cpu(), _chain(static_x.cpu()))


def test_memory_of_the_capture_is_private_until_reset():
    static_x = torch.randn(1024, device="accel")
    g, out = _capture(lambda x: (x + 1) * 2, static_x)
    ptr = out.data_ptr()
    # Eager allocations of the same size never land in the graph's memory.
    others = [torch.empty(1024, device="accel") for _ in range(8)]
    assert all(o.data_ptr() != ptr for o in others)
    g.replay()
    torch.testing.assert_close(out.cpu(), (static_x.cpu() + 1) * 2)
    del out, others
    g.reset()
    accel.empty_cache()
    assert accel.memory_stats()["segment.all.current"] <= 1  # only static_x's segment


def test_replay_after_reset_is_an_error_and_recapture_works():
    x = torch.zeros(4, device="accel")
    g = accel.Graph()
    with accel.graph(g):
        x.add_(1)
    g.reset()
    with pytest.raises(RuntimeError, match="after reset"):
        g.replay()
    with pytest.raises(RuntimeError, match="holds no capture"):
        accel.Graph().replay()
    with accel.graph(g):
        x.add_(10)
    g.replay()
    torch.testing.assert_close(x.cpu(), torch.full((4,), 10.0))


def test_an_index_out_of_range_at_replay_is_a_device_error_and_the_device_stays_usable():
    # A capture cannot read indices back to check them: the kernel refuses a bad one itself,
    # as CUDA's device-side assert, and leaves the destination unwritten.
    w = torch.randn(6, 64)
    wa, idx = w.to("accel"), torch.tensor([1, 2], device="accel")
    g, out = _capture(lambda: wa.index_select(0, idx))
    g.replay()
    assert torch.equal(out.cpu(), w[[1, 2]])
    idx.fill_(9)
    g.replay()
    with pytest.raises(torch.AcceleratorError, match="index out of bounds"):
        accel.synchronize()
    assert torch.equal((wa + 1).cpu(), w + 1)


def test_capture_on_the_default_stream_is_refused():
    g = accel.Graph()
    with pytest.raises(RuntimeError, match="default stream"):
        g.capture_begin()
    assert not accel.is_current_stream_capturing()


def test_nested_capture_on_one_stream_is_refused():
    x = torch.zeros(4, device="accel")
    outer, inner = accel.Graph(), accel.Graph()
    with accel.graph(outer):
        x.add_(1)
        with pytest.raises(RuntimeError, match="nested captures"):
            inner.capture_begin()
        x.add_(1)
    outer.replay()
    torch.testing.assert_close(x.cpu(), torch.full((4,), 2.0))


@pytest.mark.parametrize(
    "op, name",
    [
        (lambda t: t.sum().item(), "_local_scalar_dense"),
        (lambda t: t.cpu(), "copy_"),
        (lambda t: torch.nonzero(t), "nonzero"),
        (lambda t: torch.special.airy_ai(t), "special_airy_ai"),  # no native kernel: CPU fallback
        (lambda t: accel.synchronize(), "synchronize"),
        (lambda t: accel.current_stream().synchronize(), "synchronize"),
    ],
)
def test_host_synchronising_ops_are_capture_errors(op, name):
    x = torch.randn(16, device="accel")
    stats_before = accel.memory_stats()["reserved_bytes.all.current"]
    g = accel.Graph()
    with pytest.raises(RuntimeError, match=name) as info:
        with accel.graph(g):
            y = x * 2
            op(y)
    assert "captured" in str(info.value)
    # The capture is gone; the stream, the allocator and the device work as before.
    assert not accel.is_current_stream_capturing()
    with accel.stream(accel.graph.default_capture_stream):
        assert not accel.is_current_stream_capturing()
    torch.testing.assert_close((x + 1).cpu(), x.cpu() + 1)
    with pytest.raises(RuntimeError, match="holds no capture"):
        g.replay()
    with accel.graph(g):
        z = x * 3
    g.replay()
    torch.testing.assert_close(z.cpu(), x.cpu() * 3)
    del z, y, info  # the traceback holds the failed region's tensors
    g.reset()
    accel.empty_cache()
    assert accel.memory_stats()["reserved_bytes.all.current"] <= stats_before


def test_a_sync_that_the_region_catches_still_fails_capture_end():
    x = torch.randn(4, device="accel")
    g = accel.Graph()
    s = accel.Stream()
    with accel.stream(s):
        g.capture_begin()
        with pytest.raises(RuntimeError, match="_local_scalar_dense"):
            x.sum().item()
        with pytest.raises(RuntimeError, match="capture on accel:0 failed.*_local_scalar_dense"):
            g.capture_end()
    assert not accel.is_current_stream_capturing()


def test_global_mode_refuses_syncs_from_other_threads_relaxed_does_not():
    x = torch.randn(4, device="accel")

    def item_in_thread():
        result = {}

        def run():
            try:
                result["value"] = x.sum().item()
            except RuntimeError as e:
                result["error"] = str(e)

        t = threading.Thread(target=run)
        t.start()
        t.join()
        return result

    g = accel.Graph()
    with pytest.raises(RuntimeError, match="failed"):
        with accel.graph(g):
            y = x + 1
            seen = item_in_thread()
    assert "_local_scalar_dense" in seen["error"]
    g2 = accel.Graph()
    with accel.graph(g2, capture_error_mode="relaxed"):
        y = x + 1
        seen = item_in_thread()  # another thread, on its own (default) stream
    assert seen["value"] == pytest.approx(x.sum().item())
    g2.replay()
    torch.testing.assert_close(y.cpu(), x.cpu() + 1)
    with pytest.raises(ValueError, match="capture_error_mode"):
        accel.Graph().capture_begin(capture_error_mode="loose")


def test_side_streams_join_the_capture_through_events():
    x = torch.randn(256, device="accel")
    g = accel.Graph()
    side = accel.Stream()
    with accel.graph(g):
        a = x * 2
        side.wait_stream(accel.current_stream())
        with accel.stream(side):
            b = a.exp()  # on the side stream, after a
        accel.current_stream().wait_stream(side)
        c = a + b
    for _ in range(2):
        x.copy_(torch.randn(256))
        g.replay()
        ref = x.cpu() * 2
        torch.testing.assert_close(c.cpu(), ref + ref.exp())


def test_a_side_stream_that_never_rejoins_fails_the_capture():
    x = torch.randn(8, device="accel")
    side = accel.Stream()
    g = accel.Graph()
    with pytest.raises(RuntimeError, match="did not rejoin"):
        with accel.graph(g):
            y = x + 1
            side.wait_stream(accel.current_stream())
            with accel.stream(side):
                z = y * 2  # noqa: F841
    # Both streams run eagerly again.
    with accel.stream(side):
        w = x * 5
    side.synchronize()
    torch.testing.assert_close(w.cpu(), x.cpu() * 5)


def test_random_ops_draw_fresh_numbers_on_each_replay_as_eager_would():
    accel.manual_seed(1234)
    eager = [torch.rand(1000, device="accel").cpu() for _ in range(3)]
    accel.manual_seed(1234)
    g = accel.Graph()
    with accel.graph(g):
        r = torch.rand(1000, device="accel")
    replays = []
    for _ in range(3):
        g.replay()
        replays.append(r.cpu())
    # The generator advances by the graph's draws on each replay, as eager calls would.
    for got, want in zip(replays, eager):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert not torch.equal(replays[0], replays[1])
    after = torch.rand(1000, device="accel").cpu()
    accel.manual_seed(1234)
    for _ in range(3):
        torch.rand(1000, device="accel")
    torch.testing.assert_close(after, torch.rand(1000, device="accel").cpu(), rtol=0, atol=0)


def test_dropout_in_a_graph_draws_a_new_mask_each_replay():
    x = torch.ones(4000, device="accel")
    g = accel.Graph()
    with accel.graph(g):
        y = torch.nn.functional.dropout(x, p=0.25, training=True)
    masks = []
    for _ in range(3):
        g.replay()
        v = y.cpu()
        kept = v != 0
        torch.testing.assert_close(v[kept], torch.full((int(kept.sum()),), 1 / 0.75))
        assert 0.7 < kept.float().mean().item() < 0.8
        masks.append(kept)
    assert not torch.equal(masks[0], masks[1]) and not torch.equal(masks[1], masks[2])


def test_graphs_share_a_pool_through_a_handle():
    pool = accel.graph_pool_handle()
    x = torch.randn(100, device="accel")
    g1, y = _capture(lambda t: t * 2, x, pool=pool)
    g2, z = _capture(lambda t: t + 1, y, pool=g1.pool())
    assert g1.pool() == g2.pool() == pool
    g1.replay()
    g2.replay()
    torch.testing.assert_close(z.cpu(), x.cpu() * 2 + 1)


def test_mem_pool_routes_allocations_and_is_released():
    pool = accel.MemPool()
    assert pool.use_count() == 1
    outside = torch.empty(1000, device="accel")
    with accel.use_mem_pool(pool):
        assert pool.use_count() == 2
        inside = torch.arange(1000.0).to("accel") * 2
    assert pool.use_count() == 1
    later = [torch.empty(1000, device="accel") for _ in range(4)]
    assert all(t.data_ptr() != inside.data_ptr() for t in later + [outside])
    torch.testing.assert_close(inside.cpu(), torch.arange(1000.0) * 2)
    reserved = accel.memory_reserved()
    del inside, pool
    accel.empty_cache()
    assert accel.memory_reserved() < reserved
    with pytest.raises(NotImplementedError, match="custom allocators"):
        accel.MemPool(allocator=object())


def test_a_graph_keeps_its_mem_pool_alive():
    pool = accel.MemPool()
    x = torch.randn(64, device="accel")
    g, y = _capture(lambda t: t.exp() + 1, x, pool=pool.id)
    assert pool.use_count() == 2
    del pool
    accel.empty_cache()
    x.copy_(torch.randn(64))
    g.replay()
    torch.testing.assert_close(y.cpu(), x.cpu().exp() + 1)


def test_torch_accelerator_graph_uses_accel_graphs():
    if not hasattr(torch.accelerator, "Graph"):
        pytest.skip("torch.accelerator.Graph needs torch 2.12+")
    x = torch.zeros(16, device="accel")
    g = torch.accelerator.Graph()
    with accel.stream(accel.Stream()):
        g.capture_begin()
        x += 1
        assert accel.is_current_stream_capturing()
        assert torch.accelerator.current_stream().is_capturing()
        g.capture_end()
    for _ in range(3):
        g.replay()
    torch.testing.assert_close(x.cpu(), torch.full((16,), 3.0))
    assert isinstance(g.pool(), tuple)
    g.reset()
    with pytest.raises(RuntimeError, match="after reset"):
        g.replay()


def test_torch_accelerator_graph_with_form():
    if not hasattr(torch.accelerator, "Graph"):
        pytest.skip("torch.accelerator.Graph needs torch 2.12+")
    # The `with` form empties the host cache through accel's registered host allocator.
    pinned = torch.arange(16.0).pin_memory()
    x = torch.zeros(16, device="accel")
    g = torch.accelerator.Graph()
    with accel.stream(accel.Stream()):
        with g:
            x.add_(2)
    g.replay()
    g.replay()
    torch.testing.assert_close(x.cpu(), torch.full((16,), 4.0))
    torch.testing.assert_close(pinned, torch.arange(16.0))  # still usable after the emptying


def test_pinned_source_of_a_captured_copy_is_held_until_reset():
    # Every replay reads the pinned source again: its block is not reused while the graph lives.
    def active():
        return accel.host_memory_stats()["active_requests.current"]

    base = active()
    src = torch.arange(1024.0).pin_memory()
    ptr = src.data_ptr()
    x = torch.zeros(1024, device="accel")
    g = accel.Graph()
    with accel.graph(g):
        x.copy_(src, non_blocking=True)
    del src
    assert active() == base + 1  # held by the graph
    other = torch.empty(1024).pin_memory()
    assert other.data_ptr() != ptr
    other.fill_(-1.0)
    g.replay()
    accel.synchronize()
    torch.testing.assert_close(x.cpu(), torch.arange(1024.0))
    del other
    g.reset()
    accel.synchronize()
    again = torch.empty(1024).pin_memory()  # the cache hands the last released block out first
    assert again.data_ptr() == ptr
    assert active() == base + 1  # `again` alone


def test_torch_accelerator_host_memory_calls():
    if not hasattr(torch.accelerator, "empty_host_cache"):
        pytest.skip("torch.accelerator.empty_host_cache needs a newer torch")
    del_me = torch.empty(1 << 12).pin_memory()
    del del_me
    assert torch.accel.host_memory_stats()["allocations.current"] >= 1
    torch.accelerator.empty_host_cache()
    assert torch.accel.host_memory_stats()["allocations.current"] == 0


def test_debug_dump_lists_the_recorded_nodes(tmp_path):
    x = torch.randn(4, device="accel")
    g = accel.Graph()
    g.enable_debug_mode()
    with accel.graph(g):
        y = x + 1
        y.mul_(2)
    path = tmp_path / "graph.dot"
    g.debug_dump(str(path))
    text = path.read_text()
    assert text.startswith("digraph") and "n1 [label" in text
    with pytest.raises(RuntimeError, match="enable_debug_mode"):
        accel.Graph().debug_dump(str(path))


def _mlp(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))


def test_make_graphed_callables_matches_eager_forward_and_backward():
    ref = _mlp(0)
    model = _mlp(0).to("accel")
    x = torch.randn(8, 16, requires_grad=True)
    graphed = accel.make_graphed_callables(model, (x.to("accel").detach().requires_grad_(),))
    for step in range(3):
        inp = torch.randn(8, 16, generator=torch.Generator().manual_seed(step))
        a = inp.clone().requires_grad_()
        b = inp.to("accel").requires_grad_()
        ref.zero_grad()
        model.zero_grad()
        ref(a).square().sum().backward()
        graphed(b).square().sum().backward()
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-5)
        for p_ref, p in zip(ref.parameters(), model.parameters()):
            torch.testing.assert_close(p.grad.cpu(), p_ref.grad, rtol=1e-4, atol=1e-5)
    model.eval()  # another training mode runs the module's own forward
    torch.testing.assert_close(
        model(b.detach()).cpu(), ref.eval()(a.detach()), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_a_whole_training_step_with_adamw_captures_and_matches_eager(compiled):
    # Compiled: torch.compile's C++ kernels are stream launches on the host driver (not host
    # syncs), so a compiled forward, backward and AdamW step record into a graph like eager
    # kernels, and the compiled call passes the sync debug mode's "error".
    ref = _mlp(1)
    model = _mlp(1).to("accel")
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, capturable=True)
    data = [torch.randn(8, 16, generator=torch.Generator().manual_seed(i)) for i in range(6)]
    static_x = data[0].to("accel")
    forward, opt_step = (lambda x: model(x).square().mean()), opt.step
    if compiled:
        torch._dynamo.reset()
        forward, opt_step = torch.compile(forward), torch.compile(opt_step)

    def step():
        opt.zero_grad(set_to_none=False)
        forward(static_x).backward()
        opt_step()

    warmups = 2 if compiled else 1
    with torch._inductor.config.patch(fx_graph_cache=False):
        # Warm up on a side stream (optimizer state, autograd buffers, compilation), as with
        # CUDA graphs.
        side = accel.Stream()
        side.wait_stream(accel.current_stream())
        with accel.stream(side):
            step()
            if compiled:
                accel.set_sync_debug_mode("error")
                try:
                    step()  # neither drains the stream nor runs on the caller
                finally:
                    accel.set_sync_debug_mode(0)
        accel.current_stream().wait_stream(side)
        g = accel.Graph()
        with accel.graph(g):
            step()
    for _ in range(warmups):  # the warm-up steps, on data[0]
        opt_ref.zero_grad()
        ref(data[0]).square().mean().backward()
        opt_ref.step()
    for x in data[1:]:
        static_x.copy_(x)
        g.replay()
        opt_ref.zero_grad()
        ref(x).square().mean().backward()
        opt_ref.step()
    for p_ref, p in zip(ref.parameters(), model.parameters()):
        torch.testing.assert_close(p.detach().cpu(), p_ref.detach(), rtol=1e-4, atol=1e-5)


def test_the_lora_step_captured_whole_trains_like_eager():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import lora_finetune as lf

    args = lf.parse_args(LORA_SMALL_ARGS)
    _, data = lf.permutation_task(args.seq_len, 4 * args.batch_size, args.seed)
    batches = [data[i * args.batch_size : (i + 1) * args.batch_size] for i in range(4)]

    def setup():
        model = lf.build_model(args, len(lf.ALPHABET)).to("accel")
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=args.lr, capturable=True)
        static = batches[0].to("accel")

        def step():
            loss = model(input_ids=static, labels=static).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=False)
            return loss

        return model, static, step

    eager_model, eager_static, eager_step = setup()
    eager_losses = []
    for b in batches:
        eager_static.copy_(b)
        eager_losses.append(eager_step().item())

    model, static, step = setup()
    losses = [step().item()]  # warm-up on batch 0 (optimizer state), as the first eager step
    g = accel.Graph()
    with accel.graph(g):
        loss = step()
    for b in batches[1:]:
        static.copy_(b)
        g.replay()
        losses.append(loss.item())
    torch.testing.assert_close(
        torch.tensor(losses), torch.tensor(eager_losses), rtol=1e-4, atol=1e-5
    )
    for p, q in zip(model.parameters(), eager_model.parameters()):
        if p.requires_grad:
            torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(), rtol=1e-4, atol=1e-5)

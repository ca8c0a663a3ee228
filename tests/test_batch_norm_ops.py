"""Native batch norm (training with running stats, eval, no stats) and its backward against
CPU: values, gradients, running statistics, non-contiguous inputs, bad input; instance norm,
which ATen runs as a batch norm over (1, N * C, ...)."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
}


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def run(device, x, training, affine, stats, dtype, momentum=0.1):
    g = torch.Generator().manual_seed(1)
    c = x.shape[1]
    w = (torch.rand(c, generator=g) + 0.5).requires_grad_() if affine else None
    b = torch.randn(c, generator=g).requires_grad_() if affine else None
    rm = torch.randn(c, generator=g) if stats else None
    rv = (torch.rand(c, generator=g) + 0.5) if stats else None
    # float64 runs all in float64; bfloat16 input keeps float32 parameters (mixed, as AMP has).
    pdtype = torch.float64 if dtype == torch.float64 else torch.float32
    moved = [
        t.to(device, pdtype).detach().requires_grad_() if t is not None else None for t in (w, b)
    ]
    rm, rv = [t.to(device, pdtype) if t is not None else None for t in (rm, rv)]
    xd = x.to(device=device, dtype=dtype).detach().requires_grad_()  # keeps x's strides
    assert xd.is_contiguous() == x.is_contiguous()
    y = F.batch_norm(xd, rm, rv, moved[0], moved[1], training, momentum, 1e-5)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(2)).to(device, dtype)
    (y * gy).sum().backward()
    out = (
        [y, xd.grad]
        + [t.grad for t in moved if t is not None]
        + [t for t in (rm, rv) if t is not None]
    )
    return [t.detach().cpu() for t in out]


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 4, 5, 6), (2, 2, 3, 2, 3)])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_batch_norm_matches_cpu(shape, training, affine):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 3 + 1
    want = run("cpu", x, training, affine, True, torch.float32)
    got = run("accel", x, training, affine, True, torch.float32)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOL[torch.float32])
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_batch_norm_dtypes(dtype):
    x = torch.randn(3, 4, 5, 5, generator=torch.Generator().manual_seed(3))
    want = run("cpu", x, True, True, True, dtype)
    got = run("accel", x, True, True, True, dtype)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, **TOL[dtype])
    no_fallback()


def test_batch_norm_without_running_stats_and_non_contiguous():
    x = torch.randn(3, 4, 6, 5, generator=torch.Generator().manual_seed(4)).transpose(2, 3)
    assert not x.is_contiguous()
    want = run("cpu", x, True, True, False, torch.float32)
    got = run("accel", x, True, True, False, torch.float32)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOL[torch.float32])
    no_fallback()


def test_batch_norm_module_running_stats_over_steps():
    torch.manual_seed(5)
    cpu = torch.nn.BatchNorm2d(3, momentum=0.3)
    acc = torch.nn.BatchNorm2d(3, momentum=0.3).to("accel")
    acc.load_state_dict(cpu.state_dict())
    for step in range(3):
        x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(step))
        torch.testing.assert_close(acc(x.to("accel")).cpu(), cpu(x), rtol=1e-5, atol=1e-5)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(acc, name).cpu(), getattr(cpu, name))
    acc.eval()
    cpu.eval()
    x = torch.randn(2, 3, 4, 4)
    torch.testing.assert_close(acc(x.to("accel")).cpu(), cpu(x), rtol=1e-5, atol=1e-5)
    no_fallback()


def test_batch_norm_bad_input_raises_like_cpu():
    # One value per channel in training (F.batch_norm's ValueError), and stats of the wrong
    # length (ATen's RuntimeError).
    for x, c in [(torch.randn(1, 3), 3), (torch.randn(2, 3, 4), 5)]:
        args = (torch.zeros(c), torch.ones(c))
        with pytest.raises((RuntimeError, ValueError)) as cpu_err:
            F.batch_norm(x, *args, training=True)
        with pytest.raises(cpu_err.type):
            F.batch_norm(x.to("accel"), *(a.to("accel") for a in args), training=True)
    x = torch.randn(4, 3)
    torch.testing.assert_close(
        F.batch_norm(x.to("accel"), None, None, training=True).cpu(),
        F.batch_norm(x, None, None, training=True),
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("stats", [False, True], ids=["no-stats", "running-stats"])
def test_instance_norm_matches_cpu(dtype, stats):
    x = torch.randn(3, 4, 6, 5, generator=torch.Generator().manual_seed(4)).transpose(2, 3)
    res = []
    for device in ("accel", "cpu"):
        g = torch.Generator().manual_seed(1)
        w = (torch.rand(4, generator=g) + 0.5).to(device).requires_grad_()
        b = torch.randn(4, generator=g).to(device).requires_grad_()
        rm = torch.randn(4, generator=g).to(device) if stats else None
        rv = (torch.rand(4, generator=g) + 0.5).to(device) if stats else None
        xd = x.to(device, dtype).requires_grad_()
        y = F.instance_norm(xd, rm, rv, w, b, use_input_stats=True, momentum=0.2)
        gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(2)).to(device, dtype)
        (y * gy).sum().backward()
        res.append(
            [t.detach().cpu() for t in (y, xd.grad, w.grad, b.grad) + ((rm, rv) if stats else ())]
        )
    for got, want in zip(*res):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, **TOL[dtype])
    # Eval with running stats: the stats normalise, as batch norm's eval.
    if stats:
        rm, rv = torch.randn(4), torch.rand(4) + 0.5
        torch.testing.assert_close(
            F.instance_norm(
                x.to("accel"), rm.to("accel"), rv.to("accel"), use_input_stats=False
            ).cpu(),
            F.instance_norm(x, rm, rv, use_input_stats=False),
            **TOL[torch.float32],
        )
    no_fallback()


def test_the_traced_batch_norm_forms_match_cpu():
    """_batch_norm_with_update / _batch_norm_no_update / batch_norm_backward: the forms
    torch.export and torch.compile record batch norm as."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 3, 5, 5, generator=g)
    w, b = torch.rand(3, generator=g) + 0.5, torch.randn(3, generator=g)
    rm, rv = torch.randn(3, generator=g), torch.rand(3, generator=g) + 0.5
    dev = [t.to("accel") for t in (x, w, b, rm.clone(), rv.clone())]
    want = torch.ops.aten._batch_norm_with_update(
        x, w, b, rm_c := rm.clone(), rv_c := rv.clone(), 0.1, 1e-5
    )
    got = torch.ops.aten._batch_norm_with_update(*dev, 0.1, 1e-5)
    for a, e in zip(got, want):
        torch.testing.assert_close(a.cpu(), e, **TOL[torch.float32])
    torch.testing.assert_close(dev[3].cpu(), rm_c, **TOL[torch.float32])
    torch.testing.assert_close(dev[4].cpu(), rv_c, **TOL[torch.float32])
    go = torch.randn(4, 3, 5, 5, generator=g)
    want_g = torch.ops.aten.batch_norm_backward(
        go, x, w, rm_c, rv_c, want[1], want[2], True, 1e-5, [True, True, True], want[3]
    )
    got_g = torch.ops.aten.batch_norm_backward(
        go.to("accel"),
        dev[0],
        dev[1],
        dev[3],
        dev[4],
        got[1],
        got[2],
        True,
        1e-5,
        [True, True, True],
        got[3],
    )
    for a, e in zip(got_g, want_g):
        torch.testing.assert_close(a.cpu(), e, **TOL[torch.float32])
    # (CPU's own kernel crashes without running statistics, so only with them.)
    want = torch.ops.aten._batch_norm_no_update(x, w, b, rm, rv, 0.1, 1e-5)
    got = torch.ops.aten._batch_norm_no_update(*dev[:3], rm.to("accel"), rv.to("accel"), 0.1, 1e-5)
    torch.testing.assert_close(got[0].cpu(), want[0], **TOL[torch.float32])


# The batch norm kernels (kernels/batch_norm.h) take any [N, C, *spatial] strides whose spatial
# dimensions collapse into one (channels-last, a sliced last dimension) without a copy, and
# split a long channel into chunks whose statistics merge pairwise.
def run_layout(device, x, gy, training, pdtype, weight=True, bias=True):
    g = torch.Generator().manual_seed(1)
    c = x.shape[1]
    params = [
        (torch.rand(c, generator=g) + 0.5) if weight else None,
        torch.randn(c, generator=g) if bias else None,
    ]
    params = [p.to(device, pdtype).requires_grad_() if p is not None else None for p in params]
    rm = torch.randn(c, generator=g).to(device, pdtype)
    rv = (torch.rand(c, generator=g) + 0.5).to(device, pdtype)
    xd = x.to(device).detach().requires_grad_()
    y = F.batch_norm(xd, rm, rv, params[0], params[1], training, 0.2, 1e-5)
    y.backward(gy.to(device))
    grads = [p.grad for p in params if p is not None]
    return [t.detach().cpu() for t in [y, xd.grad, *grads, rm, rv]]


def layouts():
    g = torch.Generator().manual_seed(7)
    base = torch.randn(3, 5, 6, 7, generator=g) * 2 + 0.5
    return {
        "channels_last": base.to(memory_format=torch.channels_last),
        "channels_last_3d": torch.randn(2, 3, 4, 5, 3, generator=g).to(
            memory_format=torch.channels_last_3d
        ),
        "sliced_last_dim": torch.randn(3, 4, 5, 12, generator=g)[..., ::2],
        "sliced_channels": torch.randn(3, 8, 5, 6, generator=g)[:, 1::2],
        "odd_1d": torch.randn(3, 5, 7, generator=g),
        "no_spatial": torch.randn(7, 3, generator=g),
        "long_channel": torch.randn(4, 2, 160, 160, generator=g),  # chunks merged
    }


@pytest.mark.parametrize("layout", list(layouts()))
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_layouts_match_cpu(layout, training):
    x = layouts()[layout]
    # A transposed gradient too: dy's strides need not be x's.
    gy = torch.randn(x.shape[::-1], generator=torch.Generator().manual_seed(2)).permute(
        *reversed(range(x.dim()))
    )
    want = run_layout("cpu", x, gy, training, torch.float32)
    got = run_layout("accel", x, gy, training, torch.float32)
    assert got[0].stride() == want[0].stride()
    tol = dict(rtol=1e-4, atol=1e-4) if layout == "long_channel" else TOL[torch.float32]
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **tol)
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("pdtype", ["same", "float32"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_reduced_precision_matches_cpu(dtype, pdtype, training):
    x = (torch.randn(4, 3, 5, 6, generator=torch.Generator().manual_seed(8)) * 2 + 1).to(dtype)
    gy = torch.randn(x.shape, generator=torch.Generator().manual_seed(9)).to(dtype)
    p = dtype if pdtype == "same" else torch.float32
    want = run_layout("cpu", x, gy, training, p)
    got = run_layout("accel", x, gy, training, p)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=5e-3, atol=5e-3)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, **tol)
    # The saved statistics have the parameters' dtype.
    xd = x.to("accel")
    w, b = torch.ones(3, dtype=p), torch.zeros(3, dtype=p)
    outs = [torch.native_batch_norm(t, w, b, None, None, True, 0.1, 1e-5) for t in (x, xd)]
    for want_t, got_t in zip(*outs):
        assert got_t.dtype == want_t.dtype
        torch.testing.assert_close(got_t.cpu(), want_t, **tol)
    no_fallback()


@pytest.mark.parametrize("weight,bias", [(True, False), (False, True), (False, False)])
def test_batch_norm_partial_affine_matches_cpu(weight, bias):
    x = torch.randn(4, 3, 5, generator=torch.Generator().manual_seed(10))
    gy = torch.randn(x.shape, generator=torch.Generator().manual_seed(11))
    want = run_layout("cpu", x, gy, True, torch.float32, weight, bias)
    got = run_layout("accel", x, gy, True, torch.float32, weight, bias)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOL[torch.float32])
    no_fallback()


def test_batch_norm_float64_long_channel_is_exact_to_cpu():
    # Chunked statistics in double agree with CPU's two-pass to double precision.
    g = torch.Generator().manual_seed(12)
    x = torch.randn(4, 2, 160, 160, generator=g, dtype=torch.float64)
    gy = torch.randn(x.shape, generator=g, dtype=torch.float64)
    want = run_layout("cpu", x, gy, True, torch.float64)
    got = run_layout("accel", x, gy, True, torch.float64)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOL[torch.float64])
    no_fallback()

"""torch.autocast("accel"): CUDA's policy on AutocastPrivateUse1. Lower-precision ops produce
the autocast dtype, fp32 ops produce fp32, promote ops the widest type, and values match
CPU computing with CUDA's policy (inputs rounded the same way)."""

import pytest
import torch
import torch.nn.functional as F

import torch_accel

LOW = [torch.bfloat16, torch.float16]


def test_device_module_and_defaults():
    assert set(torch.accel.get_amp_supported_dtype()) == {torch.bfloat16, torch.float16}
    assert torch.get_autocast_dtype("accel") == torch.float16  # CUDA's default
    assert not torch.is_autocast_enabled("accel")
    with torch.autocast("accel", dtype=torch.bfloat16):
        assert torch.is_autocast_enabled("accel")
        assert torch.get_autocast_dtype("accel") == torch.bfloat16
        assert torch.accel.get_autocast_dtype() == torch.bfloat16
    assert not torch.is_autocast_enabled("accel")


@pytest.mark.parametrize("dtype", LOW)
def test_matrix_products_run_in_lower_precision(dtype):
    a, b, bias = torch.randn(8, 16), torch.randn(16, 4), torch.randn(4)
    A, B, BIAS = a.to("accel"), b.to("accel"), bias.to("accel")
    with torch.autocast("accel", dtype=dtype):
        outs = {
            "mm": torch.mm(A, B),
            "matmul": A @ B,
            "addmm": torch.addmm(BIAS, A, B),
            "linear": F.linear(A, B.t(), BIAS),
            "bmm": torch.bmm(A[None], B[None]),
        }
    # the reference: CPU products of the same inputs rounded to dtype, in fp32
    ref = a.to(dtype).float() @ b.to(dtype).float()
    for name, out in outs.items():
        assert out.dtype == dtype, name
        expected = ref + bias.to(dtype).float() if name in ("addmm", "linear") else ref
        torch.testing.assert_close(
            out.cpu().float().reshape(expected.shape), expected, atol=0.1, rtol=2e-2, msg=name
        )
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", LOW)
def test_fp32_ops_and_promotion(dtype):
    x = torch.randn(4, 10, dtype=dtype)
    X = x.to("accel")
    with torch.autocast("accel", dtype=dtype):
        sm = torch.softmax(X, dim=-1)
        lsm = torch.log_softmax(X, dim=-1)
        e = torch.exp(X)
        ln = F.layer_norm(X, (10,))
        s = torch.sum(X)
        # promote: a lower-precision product and an fp32 tensor meet at fp32
        y = torch.addcmul(torch.randn(4, 10, device="accel"), X, X)
    for t in (sm, lsm, e, ln, s, y):
        assert t.dtype == torch.float32
    torch.testing.assert_close(sm.cpu(), torch.softmax(x.float(), dim=-1))
    torch.testing.assert_close(e.cpu(), torch.exp(x.float()))


def test_small_model_matches_cuda_policy_on_cpu():
    # CPU autocast has its own policy (its softmax stays in bf16); the reference follows
    # CUDA's by hand: linear layers in bf16, log_softmax in fp32.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5))
    x = torch.randn(6, 16)
    with torch.no_grad():
        expected = model.to(torch.bfloat16)(x.to(torch.bfloat16)).float().log_softmax(-1)
        model = model.float()
    model_a = model.to("accel")
    with torch.autocast("accel", dtype=torch.bfloat16):
        got = model_a(x.to("accel")).log_softmax(-1)
    assert got.dtype == expected.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), expected, atol=5e-2, rtol=2e-2)


def test_disabled_and_nested():
    A = torch.randn(4, 4, device="accel")
    with torch.autocast("accel", dtype=torch.bfloat16):
        assert (A @ A).dtype == torch.bfloat16
        with torch.autocast("accel", enabled=False):
            assert (A @ A).dtype == torch.float32
    with torch.autocast("accel", dtype=torch.bfloat16, enabled=False):
        assert (A @ A).dtype == torch.float32
    # autocast for another device type leaves accel alone
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (A @ A).dtype == torch.float32


def test_binary_cross_entropy_is_banned_like_cuda():
    p = torch.rand(4, device="accel")
    with torch.autocast("accel", dtype=torch.float16):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, p)


def test_grad_scaler_constructs():
    scaler = torch.amp.GradScaler("accel")
    assert scaler.is_enabled()
    assert scaler.get_scale() == 65536.0


def test_torch_cuda_amp_spellings_run_on_accel():
    """torch.accel.amp.autocast / GradScaler / custom_fwd / custom_bwd: torch.cuda.amp's older
    names, deprecated as there, doing what torch.amp does for "accel"."""
    g = torch.Generator().manual_seed(5)
    a, b = (torch.randn(8, 8, generator=g).to("accel") for _ in range(2))
    with pytest.warns(FutureWarning, match="torch.amp.autocast"):
        ctx = torch.accel.amp.autocast()
    with ctx:
        got = a @ b
    with torch.autocast("accel", dtype=torch.float16):
        want = a @ b
    assert got.dtype == torch.float16 and torch.equal(got.cpu(), want.cpu())

    def train(make_scaler):
        torch.manual_seed(0)
        lin = torch.nn.Linear(8, 2).to("accel")
        opt = torch.optim.SGD(lin.parameters(), lr=0.5)
        scaler = make_scaler()
        for _ in range(2):
            with torch.autocast("accel", dtype=torch.float16):
                loss = lin(a).float().pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
        return scaler.get_scale(), [p.detach().cpu() for p in lin.parameters()]

    with pytest.warns(FutureWarning, match="GradScaler"):
        old = train(lambda: torch.accel.amp.GradScaler(init_scale=2.0**20, growth_interval=1))
    new = train(lambda: torch.amp.GradScaler("accel", init_scale=2.0**20, growth_interval=1))
    assert old[0] == new[0]  # the same backoffs and growth
    for p, q in zip(old[1], new[1]):
        assert torch.equal(p, q)

    with pytest.warns(FutureWarning):

        class Square(torch.autograd.Function):
            @staticmethod
            @torch.accel.amp.custom_fwd(cast_inputs=torch.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                assert x.dtype == torch.float32 and not torch.is_autocast_enabled("accel")
                return x * x

            @staticmethod
            @torch.accel.amp.custom_bwd
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

    x = torch.randn(4, generator=g).to(torch.float16).to("accel").requires_grad_()
    with torch.autocast("accel", dtype=torch.float16):
        y = Square.apply(x)
    assert y.dtype == torch.float32
    y.sum().backward()
    torch.testing.assert_close(x.grad.cpu(), (2 * x.detach().float()).half().cpu())

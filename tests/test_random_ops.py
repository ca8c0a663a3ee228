"""Native random ops on the Philox generator: determinism under torch.accel.manual_seed,
get/set_rng_state, the exact Philox4x32-10 stream, distribution sanity, dropout's mask, and
the fallback's random ops following the same generator."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_accel

M32 = 0xFFFFFFFF


def philox(seed, counter):
    """Philox4x32-10 as the kernels compute it, for the reference stream."""
    c = [counter & M32, (counter >> 32) & M32, 0, 0]
    k0, k1 = seed & M32, (seed >> 32) & M32
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c


def test_uniform_is_the_documented_philox_stream():
    torch.accel.manual_seed(42)
    got = torch.rand(10, device="accel").cpu()
    expected = [(philox(42, i // 4)[i % 4] >> 8) / 2**24 for i in range(10)]
    assert got.tolist() == pytest.approx(expected, abs=0)
    # the next launch starts past the reserved counters (3 groups, rounded up to 4)
    assert torch.accel.default_generators[0].get_offset() == 4
    nxt = torch.rand(1, device="accel").cpu().item()
    assert nxt == (philox(42, 4)[0] >> 8) / 2**24
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.randn(1000, device="accel"),
        lambda: torch.rand(7, 3, device="accel", dtype=torch.float64),
        lambda: torch.randint(0, 100, (50,), device="accel"),
        lambda: torch.bernoulli(torch.full((64,), 0.5, device="accel")),
        lambda: torch.empty(33, device="accel", dtype=torch.bfloat16).uniform_(-2, 3),
    ],
)
def test_determinism_under_manual_seed(make):
    torch.accel.manual_seed(1234)
    a, b = make().cpu(), make().cpu()
    torch.accel.manual_seed(1234)
    assert torch.equal(make().cpu(), a)
    assert torch.equal(make().cpu(), b)
    assert not torch.equal(a, b) or a.numel() == 0
    # The CPU generator's state plays no part.
    torch.manual_seed(5)
    torch.accel.manual_seed(1234)
    assert torch.equal(make().cpu(), a)
    assert torch_accel.fallback_counts() == {}


def test_layout_does_not_change_the_numbers():
    torch.accel.manual_seed(3)
    a = torch.empty(4, 6, device="accel").normal_()
    torch.accel.manual_seed(3)
    b = torch.empty(6, 4, device="accel").t().normal_()
    assert torch.equal(a.cpu(), b.cpu())


def test_rng_state_round_trip_and_generators():
    torch.accel.manual_seed(9)
    torch.randn(10, device="accel")
    state = torch.accel.get_rng_state()
    assert state.dtype == torch.uint8 and state.shape == (16,)
    a = torch.randn(100, device="accel").cpu()
    torch.accel.set_rng_state(state)
    assert torch.equal(torch.randn(100, device="accel").cpu(), a)
    with pytest.raises(RuntimeError, match="wrong size"):
        torch.accel.set_rng_state(torch.zeros(5, dtype=torch.uint8))
    g = torch.Generator(device="accel").manual_seed(7)
    x = torch.empty(10, device="accel").uniform_(generator=g).cpu()
    g2 = torch.Generator(device="accel")
    g2.set_state(g.get_state())
    g.manual_seed(7)
    assert torch.equal(torch.empty(10, device="accel").uniform_(generator=g).cpu(), x)
    assert torch.equal(
        torch.empty(10, device="accel").uniform_(generator=g2).cpu(),
        torch.empty(10, device="accel").uniform_(generator=g).cpu(),
    )
    assert g.initial_seed() == 7


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_normal_and_uniform_distributions(dtype):
    torch.accel.manual_seed(0)
    n = torch.empty(1_000_000, device="accel", dtype=dtype).normal_(2.0, 3.0).cpu().double()
    assert abs(n.mean().item() - 2.0) < 0.02
    assert abs(n.std().item() - 3.0) < 0.02
    # tails of a normal: about 4.55% beyond 2 sigma
    assert abs(((n - 2).abs() > 6).double().mean().item() - 0.0455) < 0.003
    u = torch.empty(1_000_000, device="accel", dtype=dtype).uniform_(-1, 5).cpu().double()
    assert u.min().item() >= -1 and u.max().item() <= 5
    assert abs(u.mean().item() - 2.0) < 0.01
    assert abs(u.var().item() - 3.0) < 0.02  # (b - a)^2 / 12
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_normal_splits_the_variance_between_the_parts(dtype):
    """torch.randn of a complex dtype (ATen's rule, CPU's and CUDA's): real and imaginary
    parts independent, each of variance std^2 / 2: the real dtype's draws at std / sqrt(2)."""
    real_dtype = torch.float32 if dtype == torch.complex64 else torch.float64
    torch.accel.manual_seed(0)
    z = torch.randn(500_000, device="accel", dtype=dtype).cpu()
    parts = torch.view_as_real(z).double()
    torch.testing.assert_close(parts.mean(0), torch.zeros(2, dtype=torch.double), atol=0.01, rtol=0)
    torch.testing.assert_close(parts.var(0), torch.full((2,), 0.5).double(), atol=0.01, rtol=0)
    assert abs(torch.corrcoef(parts.T)[0, 1].item()) < 0.01
    torch.accel.manual_seed(7)
    w = torch.empty(4, 5, device="accel", dtype=dtype).normal_(1.0, 2.0).cpu()
    torch.accel.manual_seed(7)
    r = torch.empty(4, 5, 2, device="accel", dtype=real_dtype).normal_(1.0, 2.0 / math.sqrt(2))
    assert torch.equal(torch.view_as_real(w), r.cpu())
    assert torch_accel.fallback_counts() == {}


def test_normal_with_tensor_mean_and_std():
    """torch.normal(mean, std) with tensors (torch.distributions.Normal.sample): each element
    follows its own mean and deviation, the shapes broadcast, and the draws are N(0, 1) scaled
    and shifted: the same seed gives mean + std * the draws of torch.randn."""
    mean = torch.tensor([-5.0, 0.0, 3.0, 10.0])
    std = torch.tensor([0.5, 1.0, 2.0, 4.0])
    torch.accel.manual_seed(3)
    draws = torch.normal(mean.to("accel").expand(100_000, 4), std.to("accel")).cpu().double()
    torch.testing.assert_close(draws.mean(0), mean.double(), atol=0.03, rtol=0)
    torch.testing.assert_close(draws.std(0), std.double(), atol=0.03, rtol=0)
    torch.accel.manual_seed(5)
    z = torch.randn(3, 4, device="accel").cpu()
    torch.accel.manual_seed(5)
    got = torch.normal(mean.to("accel").expand(3, 4), std.to("accel")).cpu()
    torch.testing.assert_close(got, z * std + mean)
    torch.accel.manual_seed(5)
    got = torch.normal(mean.to("accel").expand(3, 4), 2.0).cpu()
    torch.testing.assert_close(got, z * 2.0 + mean)
    torch.accel.manual_seed(5)
    got = torch.normal(1.5, std.to("accel").expand(3, 4)).cpu()
    torch.testing.assert_close(got, z * std + 1.5)
    out = torch.empty(0, device="accel")
    torch.accel.manual_seed(5)
    torch.normal(mean.to("accel").expand(3, 4), std.to("accel"), out=out)
    torch.testing.assert_close(out.cpu(), z * std + mean)
    sample = torch.distributions.Normal(mean.to("accel"), std.to("accel")).sample((2,))
    assert sample.shape == (2, 4) and sample.device.type == "accel"
    assert torch_accel.fallback_counts() == {}
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        torch.normal(mean.to("accel"), -std.to("accel"))
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        torch.normal(mean.to("accel"), -1.0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.normal(torch.zeros(3, dtype=torch.long, device="accel"), 1.0)
    assert torch.accel.synchronize() is None


def _chi2_against(pmf: torch.Tensor, draws: torch.Tensor) -> tuple[float, int]:
    """Pearson's statistic of integer draws against a pmf over 0..len-1 (cells expecting 20+)."""
    expected = pmf.double() * draws.numel()
    counts = torch.bincount(draws.long(), minlength=len(pmf))[: len(pmf)].double()
    keep = expected > 20
    return (((counts - expected)[keep] ** 2) / expected[keep]).sum().item(), int(keep.sum())


def _chi2_limit(dof: int) -> float:
    return dof + 4.5 * (2 * dof) ** 0.5  # about the 0.2% point at these degrees of freedom


@pytest.mark.parametrize("rate", [3.0, 25.0, 400.0])
def test_poisson_follows_its_pmf(rate):
    torch.accel.manual_seed(4)
    draws = torch.poisson(torch.full((200_000,), rate, device="accel")).cpu()
    k = torch.arange(0, int(rate + 10 * rate**0.5 + 20), dtype=torch.float64)
    pmf = (
        k * torch.log(torch.tensor(rate, dtype=torch.float64)) - rate - torch.lgamma(k + 1)
    ).exp()
    stat, dof = _chi2_against(pmf, draws)
    assert stat < _chi2_limit(dof), (stat, dof)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("count,prob", [(20, 0.3), (100, 0.6), (3000, 0.02), (5, 0.999)])
def test_binomial_follows_its_pmf(count, prob):
    torch.accel.manual_seed(5)
    n = torch.full((200_000,), float(count), device="accel")
    draws = torch.binomial(n, torch.full_like(n, prob)).cpu()
    k = torch.arange(0, count + 1, dtype=torch.float64)
    log_choose = torch.lgamma(torch.tensor(count + 1.0)) - torch.lgamma(k + 1)
    log_choose = log_choose - torch.lgamma(count - k + 1)
    pmf = (log_choose + k * math.log(prob) + (count - k) * math.log1p(-prob)).exp()
    stat, dof = _chi2_against(pmf, draws)
    assert stat < _chi2_limit(dof), (stat, dof)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("alpha", [0.05, 0.7, 1.0, 4.5, 80.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_standard_gamma_follows_its_cdf(alpha, dtype):
    """One-sample Kolmogorov-Smirnov against the exact CDF, the regularized incomplete gamma."""
    torch.accel.manual_seed(6)
    n = 100_000
    draws = torch._standard_gamma(torch.full((n,), alpha, device="accel", dtype=dtype)).cpu()
    x = draws.double().sort().values
    # Draws below the dtype's smallest normal are raised to it (as CPU's): an atom there.
    tiny = torch.finfo(dtype).tiny
    u = x.unique()
    after = torch.searchsorted(x, u, right=True) / n
    before = torch.searchsorted(x, u, right=False) / n
    cdf = torch.special.gammainc(torch.tensor(alpha, dtype=torch.float64), u)
    cdf_before = torch.where(u == tiny, 0.0, cdf)
    ks = torch.maximum((after - cdf).abs(), (before - cdf_before).abs()).max().item()
    assert ks < 1.95 / n**0.5, ks  # the 0.1% point
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cauchy_follows_its_cdf(dtype):
    torch.accel.manual_seed(8)
    n = 100_000
    x = torch.empty(n, device="accel", dtype=dtype).cauchy_(1.5, 0.5).cpu().double().sort().values
    cdf = 0.5 + torch.atan((x - 1.5) / 0.5) / math.pi
    ranks = torch.arange(1, n + 1, dtype=torch.float64) / n
    ks = torch.maximum((ranks - cdf).abs(), (ranks - 1 / n - cdf).abs()).max().item()
    assert ks < 1.95 / n**0.5, ks
    assert torch.distributions.Cauchy(torch.zeros(2, device="accel"), 1.0).sample().isfinite().all()
    with pytest.raises(RuntimeError, match="cauchy_ expects sigma > 0.0"):
        torch.empty(3, device="accel").cauchy_(0.0, 0.0)
    assert torch_accel.fallback_counts() == {}


def test_rejection_samplers_edges_dtypes_and_errors():
    tiny = torch.finfo(torch.float32).tiny
    alpha = torch.tensor([0.0, float("nan"), float("inf"), 1e-30], device="accel")
    got = torch._standard_gamma(alpha).cpu()
    assert got.tolist()[:2] == [tiny, tiny] and got[2].item() == float("inf")
    assert got[3].item() == tiny  # below the smallest normal: raised to it, as CPU's
    # a count or probability that is NaN or infinite gives NaN (CPU's sampler never returns)
    count = torch.tensor([float("nan"), float("inf"), 10.0, 10.0, 10.0, -3.0], device="accel")
    prob = torch.tensor([0.5, 0.5, float("nan"), 1.5, -0.1, 0.5], device="accel")
    got = torch.binomial(count, prob).cpu()
    assert got[:3].isnan().all() and got[3:].tolist() == [10.0, 0.0, 0.0]
    assert torch.poisson(torch.tensor([0.0, float("inf")], device="accel")).cpu().tolist() == [
        0.0,
        float("inf"),
    ]
    for bad in [-1.0, float("nan")]:
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            torch.poisson(torch.tensor([1.0, bad], device="accel"))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch._standard_gamma(torch.ones(3, dtype=torch.long, device="accel"))
    # every floating dtype, as CUDA (CPU has no half or bfloat16 gamma or binomial)
    for dtype in [torch.float16, torch.bfloat16]:
        a = torch.full((50_000,), 3.0, device="accel", dtype=dtype)
        assert abs(torch._standard_gamma(a).double().mean().item() - 3.0) < 0.05
        assert abs(torch.poisson(a).double().mean().item() - 3.0) < 0.05
        assert abs(torch.binomial(a * 4, a / 6).double().mean().item() - 6.0) < 0.05
        d = torch._sample_dirichlet(a.view(-1, 2)).double()
        torch.testing.assert_close(
            d.sum(-1).cpu(),
            torch.ones(25_000, dtype=torch.float64),
            atol=torch.finfo(dtype).eps,  # two quotients rounded to the dtype
            rtol=0,
        )
    # seeded draws repeat; the next launch draws new ones
    torch.accel.manual_seed(9)
    first = torch._standard_gamma(torch.full((64,), 2.0, device="accel")).cpu()
    again = torch._standard_gamma(torch.full((64,), 2.0, device="accel")).cpu()
    torch.accel.manual_seed(9)
    assert torch.equal(torch._standard_gamma(torch.full((64,), 2.0, device="accel")).cpu(), first)
    assert not torch.equal(first, again)
    assert torch_accel.fallback_counts() == {}


def test_distributions_sample_natively():
    """Gamma, Beta, Dirichlet, Poisson and Binomial sample on accel with CPU's moments."""
    torch.accel.manual_seed(7)
    acc = dict(device="accel")
    n = (100_000,)
    beta = torch.distributions.Beta(torch.tensor([2.0], **acc), torch.tensor([5.0], **acc))
    assert abs(beta.sample(n).mean().item() - 2 / 7) < 0.005
    dirichlet = torch.distributions.Dirichlet(torch.tensor([0.5, 1.0, 3.0], **acc))
    draws = dirichlet.sample(n)
    torch.testing.assert_close(draws.sum(-1).cpu(), torch.ones(n))
    torch.testing.assert_close(
        draws.mean(0).cpu(), torch.tensor([0.5, 1.0, 3.0]) / 4.5, atol=4e-3, rtol=0
    )
    gamma = torch.distributions.Gamma(torch.tensor([3.0], **acc), torch.tensor([2.0], **acc))
    assert abs(gamma.sample(n).mean().item() - 1.5) < 0.02
    assert (
        abs(torch.distributions.Poisson(torch.tensor([7.5], **acc)).sample(n).mean() - 7.5) < 0.05
    )
    binomial = torch.distributions.Binomial(12, torch.tensor([0.25], **acc))
    assert abs(binomial.sample(n).mean().item() - 3.0) < 0.03
    assert torch_accel.fallback_counts() == {}


def test_bernoulli_rates():
    torch.accel.manual_seed(1)
    b = torch.empty(200_000, device="accel").bernoulli_(0.3).cpu()
    assert set(b.unique().tolist()) <= {0.0, 1.0}
    assert abs(b.mean().item() - 0.3) < 0.005
    p = torch.tensor([0.0, 0.1, 0.9, 1.0], device="accel").expand(50_000, 4)
    draws = torch.bernoulli(p).cpu()
    torch.testing.assert_close(draws.mean(0), torch.tensor([0.0, 0.1, 0.9, 1.0]), atol=5e-3, rtol=0)
    assert torch.empty(10, device="accel", dtype=torch.bool).bernoulli_(0.5).dtype == torch.bool
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in"):
        torch.empty(3, device="accel").bernoulli_(1.5)
    assert torch_accel.fallback_counts() == {}


def test_random_ranges():
    torch.accel.manual_seed(2)
    r = torch.randint(-3, 4, (100_000,), device="accel").cpu()
    assert r.min().item() == -3 and r.max().item() == 3
    counts = torch.bincount(r + 3).double() / r.numel()
    torch.testing.assert_close(
        counts, torch.full((7,), 1 / 7, dtype=torch.float64), atol=5e-3, rtol=0
    )
    big = torch.randint(0, 2**40, (10_000,), device="accel").cpu()
    assert big.max().item() > 2**39 and big.min().item() >= 0
    f = torch.empty(10_000, device="accel").random_(0, 10).cpu()
    assert f.min().item() == 0 and f.max().item() == 9 and (f == f.round()).all()
    u8 = torch.empty(10_000, device="accel", dtype=torch.uint8).random_().cpu()
    assert u8.max().item() == 255
    h = torch.empty(10_000, device="accel", dtype=torch.float16).random_().cpu()
    assert h.max().item() <= 2**11 and h.min().item() >= 0
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        torch.empty(3, device="accel").random_(5, 5)
    assert torch_accel.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dropout_scaling_and_mask(dtype):
    torch.accel.manual_seed(4)
    x = torch.randn(400, 500, dtype=dtype)
    # "kept" is read off the output below, so no input may be 0 (torch 2.11's bfloat16 randn
    # draws exact zeros)
    x[x == 0] = 1.0
    xa = x.to("accel").requires_grad_()
    out, mask = torch.ops.aten.native_dropout(xa.detach(), 0.2, True)
    out, mask = out.cpu(), mask.cpu()
    assert mask.dtype == torch.bool
    assert abs(mask.float().mean().item() - 0.8) < 0.005
    torch.testing.assert_close(out, torch.where(mask, x.float() / 0.8, 0.0).to(dtype))
    # autograd: F.dropout's backward uses the forward's mask and scale
    y = F.dropout(xa, 0.2)
    g = torch.randn(400, 500, dtype=dtype)
    y.backward(g.to("accel"))
    kept = y.detach().cpu() != 0
    torch.testing.assert_close(xa.grad.cpu(), torch.where(kept, g.float() / 0.8, 0.0).to(dtype))
    # eval mode is the identity
    torch.testing.assert_close(F.dropout(xa, 0.2, training=False).detach().cpu(), x)
    assert "aten::native_dropout" not in torch_accel.fallback_counts()
    assert "aten::native_dropout_backward" not in torch_accel.fallback_counts()


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_recomputes_dropout_with_the_forwards_mask(use_reentrant):
    """torch.utils.checkpoint restores the device's RNG state before recomputing (it reads
    torch.accel._initialized to know there is one), so a checkpointed network with dropout has
    exactly the gradients of the same network run plainly from the same seed."""
    from torch.utils.checkpoint import checkpoint

    g = torch.Generator().manual_seed(0)
    lin1, lin2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)
    net = torch.nn.Sequential(lin1, torch.nn.GELU(), torch.nn.Dropout(0.5), lin2).to("accel")
    x = torch.randn(8, 16, generator=g).to("accel").requires_grad_()  # reentrant needs one
    runs = []
    for ckpt in (True, False):
        net.zero_grad()
        x.grad = None
        torch.accel.manual_seed(11)
        y = checkpoint(net, x, use_reentrant=use_reentrant) if ckpt else net(x)
        # the next draw after the forward differs from a replayed mask: the recompute must
        # restore the state, not just reuse the current one
        torch.rand(100, device="accel")
        y.sum().backward()
        grads = [t.grad.cpu() for t in (x, lin1.weight, lin2.weight)]
        runs.append([y.detach().cpu(), *grads])
    for got, want in zip(*runs):
        assert torch.equal(got, want)
    with torch.no_grad():  # the mask is not all ones
        assert not torch.allclose(runs[1][0], net.eval()(x).cpu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_exponential_is_native_seeded_and_exponential(dtype):
    torch.accel.manual_seed(11)
    e = torch.empty(100_000, device="accel", dtype=dtype).exponential_(2.0)
    torch.accel.manual_seed(11)
    again = torch.empty(100_000, device="accel", dtype=dtype).exponential_(2.0)
    assert torch.equal(e.cpu(), again.cpu())
    x = e.cpu().double()
    # Exponential(2): mean 1/2, variance 1/4, median ln 2 / 2; no draw is 0 (CUDA's rule).
    assert abs(x.mean().item() - 0.5) < 0.01 and abs(x.var().item() - 0.25) < 0.015
    assert abs(x.median().item() - 0.34657) < 0.01
    assert x.min().item() > 0
    g = torch.Generator(device="accel").manual_seed(5)
    a = torch.empty(7, device="accel", dtype=dtype).exponential_(generator=g)
    g.manual_seed(5)
    b = torch.empty(7, device="accel", dtype=dtype).exponential_(generator=g)
    assert torch.equal(a.cpu(), b.cpu())
    assert torch_accel.fallback_counts() == {}
    with pytest.raises(RuntimeError, match="lambda > 0.0"):
        torch.empty(3, device="accel").exponential_(0.0)


def test_randperm_is_native_seeded_and_uniform():
    torch.accel.manual_seed(11)
    p = torch.randperm(50, device="accel")
    torch.accel.manual_seed(11)
    assert torch.equal(torch.randperm(50, device="accel").cpu(), p.cpu())
    assert p.dtype == torch.int64 and sorted(p.cpu().tolist()) == list(range(50))
    assert not torch.equal(torch.randperm(50, device="accel").cpu(), p.cpu())  # it advanced
    q = torch.randperm(300, device="accel", dtype=torch.int32)
    assert q.dtype == torch.int32 and sorted(q.cpu().tolist()) == list(range(300))
    # Each value lands in each position equally often: 4000 permutations of 4, 1000 expected
    # per cell (chi-square with 9 degrees of freedom; 40 is far in its tail).
    counts = torch.zeros(4, 4)
    for _ in range(4000):
        counts[torch.arange(4), torch.randperm(4, device="accel").cpu()] += 1
    assert ((counts - 1000) ** 2 / 1000).sum().item() < 40
    assert torch_accel.fallback_counts() == {}
    assert torch.randperm(0, device="accel").numel() == 0

"""torch.fft and torch.stft/istft on accel against CPU (pocketfft): power-of-two lengths
(radix-2 passes) and every other length (Bluestein), 1 to 1000 points, each norm, several
dims, onesided real transforms and their inverses, out=, gradients. All native."""

import pytest
import torch

LENGTHS = [1, 2, 3, 5, 8, 12, 17, 64, 100, 127, 256, 1000]
TOL = {torch.complex64: 2e-6, torch.complex128: 1e-12}


pytestmark = pytest.mark.usefixtures("strict")


def close(got, want, dtype):
    """Within TOL of the largest value (an FFT's error scales with the signal's norm)."""
    scale = want.abs().max().item() if want.numel() else 1.0
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=TOL[dtype] * max(scale, 1.0))


def signal(shape, dtype, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_complex_transforms(n, dtype, norm):
    x = signal((3, n), dtype)
    for fn in (torch.fft.fft, torch.fft.ifft):
        close(fn(x.to("accel"), norm=norm), fn(x, norm=norm), dtype)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("real", [torch.float32, torch.float64])
def test_real_transforms_and_inverses(n, real):
    dtype = torch.complex64 if real == torch.float32 else torch.complex128
    x = signal((2, n), real)
    spectrum = torch.fft.rfft(x)
    close(torch.fft.rfft(x.to("accel")), spectrum, dtype)
    close(torch.fft.irfft(spectrum.to("accel"), n=n), torch.fft.irfft(spectrum, n=n), dtype)
    close(torch.fft.hfft(spectrum.to("accel"), n=n), torch.fft.hfft(spectrum, n=n), dtype)
    close(torch.fft.ihfft(x.to("accel")), torch.fft.ihfft(x), dtype)


@pytest.mark.parametrize(
    "fn,kw",
    [
        (torch.fft.fft2, {}),
        (torch.fft.fftn, {"dim": (0, 2)}),
        (torch.fft.ifftn, {"s": (4, 8, 16)}),
        (torch.fft.rfftn, {}),
        (torch.fft.irfftn, {"s": (6, 10)}),
        (torch.fft.hfft2, {}),
    ],
    ids=["fft2", "fftn dims", "ifftn padded", "rfftn", "irfftn", "hfft2"],
)
def test_multi_dimensional_transforms(fn, kw):
    x = signal((4, 6, 10), torch.float32, seed=1)
    inp = torch.fft.rfftn(x) if fn in (torch.fft.irfftn, torch.fft.hfft2) else x
    close(fn(inp.to("accel"), **kw), fn(inp, **kw), torch.complex64)


def test_noncontiguous_input_and_out():
    x = signal((16, 12), torch.complex64, seed=2).t()  # transposed: dim 1 has stride 12
    close(torch.fft.fft(x.to("accel")), torch.fft.fft(x), torch.complex64)
    out = torch.empty(0, dtype=torch.complex64, device="accel")
    torch.fft.fft(x.to("accel"), out=out)
    close(out, torch.fft.fft(x), torch.complex64)


LAYOUTS = {
    "contiguous": lambda: signal((3, 4, 10), torch.float32, seed=5),
    "transposed": lambda: signal((10, 4, 3), torch.float32, seed=5).permute(2, 1, 0),
    "middle": lambda: signal((3, 10, 4), torch.float32, seed=5).transpose(1, 2),
}
TRANSFORMS = {
    "rfft": lambda x: torch.fft.rfft(x),
    "rfft dim 0": lambda x: torch.fft.rfft(x, dim=0),
    "rfftn (2, 0)": lambda x: torch.fft.rfftn(x, dim=(2, 0)),
    "fft dim 1": lambda x: torch.fft.fft(x.to(torch.complex64), dim=1),
    "fftn (2, 0)": lambda x: torch.fft.fftn(x.to(torch.complex128), dim=(2, 0)),
    "irfft dim 0": lambda x: torch.fft.irfft(x.to(torch.complex64), dim=0),
    "irfftn (2, 0)": lambda x: torch.fft.irfftn(x.to(torch.complex64), dim=(2, 0)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_output_strides_match_cpu_and_meta(layout, transform):
    # torch.compile asserts the strides the meta function predicts (CPU's); a onesided rfft
    # used to return a narrowed view of the full spectrum.
    from torch._subclasses.fake_tensor import FakeTensorMode

    x, fn = LAYOUTS[layout](), TRANSFORMS[transform]
    want = fn(x)
    got = fn(x.to("accel"))
    mode = FakeTensorMode()
    fake = mode.from_tensor(x.to("accel"))
    with mode:
        predicted = fn(fake).stride()
    assert got.stride() == want.stride() == predicted
    close(got, want, torch.complex64)


def test_stft_istft_round_trip_matches_cpu():
    s = signal((2, 1000), torch.float32, seed=3)
    w = torch.hann_window(64)
    kw = dict(n_fft=64, hop_length=16, return_complex=True)
    spec = torch.stft(s.to("accel"), window=w.to("accel"), **kw)
    close(spec, torch.stft(s, window=w, **kw), torch.complex64)
    back = torch.istft(spec, 64, hop_length=16, window=w.to("accel"), length=1000)
    torch.testing.assert_close(back.cpu(), s, rtol=0, atol=1e-5)


def test_gradients_match_cpu():
    x = signal((8, 12), torch.float64, seed=4)
    grads = []
    for dev in ("cpu", "accel"):
        leaf = x.detach().to(dev).requires_grad_()
        y = torch.fft.rfft(leaf)
        (torch.fft.irfft(y * y, n=12).sum() + torch.fft.fft(leaf, dim=0).abs().sum()).backward()
        grads.append(leaf.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-10, atol=1e-10)


def test_bad_input_raises_cpus_error():
    x = signal((4,), torch.float32)
    with pytest.raises(RuntimeError) as cpu:
        torch.fft.fft(x, n=0)
    with pytest.raises(RuntimeError) as acc:
        torch.fft.fft(x.to("accel"), n=0)
    assert str(acc.value) == str(cpu.value)

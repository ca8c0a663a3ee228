"""Tensors to and from accel: dtypes, conversions, strides, devices, non_blocking, fill, item."""

import pytest
import torch

from conftest import needs_two_devices

DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.complex64,
]


def make(dtype, shape=(5, 7)):
    g = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_complex:
        return torch.randn(shape, dtype=dtype, generator=g)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 10).to(dtype)
    return torch.randint(0, 100, shape, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip(dtype):
    x = make(dtype)
    a = x.to("accel")
    assert a.device.type == "accel" and a.dtype == dtype
    torch.testing.assert_close(a.cpu(), x, rtol=0, atol=0)


@pytest.mark.parametrize("src", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize(
    "dst", [torch.float16, torch.float64, torch.int32, torch.uint8, torch.bool]
)
def test_dtype_conversion_on_each_path(src, dst):
    x = make(src)
    expected = x.to(dst)
    # host -> device with conversion, device -> device conversion, device -> host conversion
    torch.testing.assert_close(x.to("accel", dst).cpu(), expected, rtol=0, atol=0)
    torch.testing.assert_close(x.to("accel").to(dst).cpu(), expected, rtol=0, atol=0)
    torch.testing.assert_close(x.to("accel").to("cpu", dst), expected, rtol=0, atol=0)


def test_non_contiguous_everywhere():
    x = torch.randn(6, 8, 4)
    a = x.to("accel")
    views = [
        lambda t: t.transpose(0, 2),
        lambda t: t[:, ::2, 1:],
        lambda t: t.permute(2, 0, 1),
        lambda t: t[..., 0],
        lambda t: t[:1].expand(5, 8, 4),
    ]
    for view in views:
        torch.testing.assert_close(view(x).to("accel").cpu(), view(x))  # host view -> device
        torch.testing.assert_close(view(a).cpu(), view(x))  # device view -> host
    a = torch.zeros(8, 6, device="accel")
    a.t().copy_(x[:, :, 0])  # into a non-contiguous device destination
    torch.testing.assert_close(a.cpu(), x[:, :, 0].t())
    b = torch.zeros(4, 6, 8, device="accel")
    b.copy_(x.to("accel").permute(2, 0, 1))  # device strided -> device
    torch.testing.assert_close(b.cpu(), x.permute(2, 0, 1))


def test_broadcasting_copy():
    row = torch.arange(5.0)
    a = torch.empty(3, 5, device="accel")
    a.copy_(row.to("accel"))
    torch.testing.assert_close(a.cpu(), row.expand(3, 5))
    a.copy_(row)  # broadcast from the host
    torch.testing.assert_close(a.cpu(), row.expand(3, 5))


def test_complex_non_contiguous_to_host():
    x = torch.randn(4, 6, dtype=torch.complex64)
    a = x.to("accel")
    torch.testing.assert_close(a.t().cpu(), x.t(), rtol=0, atol=0)


@needs_two_devices
def test_across_devices():
    x = torch.randn(33, 17)
    a0 = x.to("accel:0")
    a1 = a0.to("accel:1")
    assert a1.device == torch.device("accel:1")
    torch.testing.assert_close(a1.cpu(), x, rtol=0, atol=0)
    t = a0.t().to("accel:1", torch.float64)  # strided, converting, cross-device
    torch.testing.assert_close(t.cpu(), x.t().double(), rtol=0, atol=0)


def test_non_blocking_pinned_round_trip():
    x = torch.randn(1 << 16).pin_memory()
    assert x.is_pinned()
    a = x.to("accel", non_blocking=True)
    out = torch.empty_like(x).pin_memory()
    out.copy_(a, non_blocking=True)
    torch.accel.synchronize()
    torch.testing.assert_close(out, x, rtol=0, atol=0)


def test_non_blocking_from_pageable_is_still_correct():
    x = torch.randn(1000)
    a = x.to("accel", non_blocking=True)
    del x  # the copy must not read freed memory
    torch.accel.synchronize()
    assert a.cpu().shape == (1000,)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8, torch.bool]
)
def test_fill_and_zero(dtype):
    a = torch.empty(4, 9, device="accel", dtype=dtype)
    a.fill_(1)
    torch.testing.assert_close(a.cpu(), torch.ones(4, 9, dtype=dtype))
    a[:, ::3].fill_(0)  # strided fill
    expected = torch.ones(4, 9, dtype=dtype)
    expected[:, ::3] = 0
    torch.testing.assert_close(a.cpu(), expected)
    a.zero_()
    torch.testing.assert_close(a.cpu(), torch.zeros(4, 9, dtype=dtype))


def test_fill_with_device_tensor_and_full():
    a = torch.empty(3, device="accel")
    a.fill_(torch.tensor(2.5, device="accel"))
    torch.testing.assert_close(a.cpu(), torch.full((3,), 2.5))
    torch.testing.assert_close(torch.full((2, 2), 7, device="accel").cpu(), torch.full((2, 2), 7))


@pytest.mark.parametrize("dtype", DTYPES)
def test_item(dtype):
    x = make(dtype, (3,))
    assert x.to("accel")[1].item() == x[1].item()


def test_views_are_native_and_share_memory():
    torch_accel_counts = __import__("torch_accel").fallback_counts
    a = torch.arange(12.0).to("accel")
    v = a.view(3, 4)
    s = v.as_strided((2, 2), (4, 1), 1)
    r = a.reshape(4, 3)
    t = v.t()
    u = v.unsqueeze(0).squeeze(0)[1:, ::2]
    assert torch_accel_counts() == {}
    v[0, 0] = 100.0  # writes through the view
    assert a[0].item() == 100.0
    torch.testing.assert_close(s.cpu(), torch.tensor([[1.0, 2.0], [5.0, 6.0]]))
    torch.testing.assert_close(r.cpu(), a.cpu().reshape(4, 3))
    torch.testing.assert_close(t.cpu(), a.cpu().view(3, 4).t())
    torch.testing.assert_close(u.cpu(), a.cpu().view(3, 4)[1:, ::2])


def test_resize_and_set():
    a = torch.arange(4.0).to("accel")
    a.resize_(2, 3)  # grows the storage, keeping the old values
    assert a.shape == (2, 3)
    torch.testing.assert_close(a.view(-1)[:4].cpu(), torch.arange(4.0))
    b = torch.empty(0, device="accel")
    b.set_(a)
    assert b.data_ptr() == a.data_ptr() and b.shape == a.shape
    c = torch.empty(0, device="accel")
    c.set_(a.untyped_storage(), 1, (2,), (2,))
    torch.testing.assert_close(c.cpu(), a.view(-1).cpu()[1:5:2])
    d = torch.empty(0, device="accel").set_(a.untyped_storage())
    assert d.numel() == a.untyped_storage().nbytes() // 4
    e = torch.ones(3, device="accel").set_()
    assert e.numel() == 0


def test_lazy_conjugate_and_negative_views_cross_devices():
    z = torch.randn(5, dtype=torch.complex64)
    assert torch.equal(z.to("accel").conj().cpu(), z.conj())  # accel conj view -> host
    assert torch.equal(z.conj().to("accel").cpu(), z.conj())  # host conj view -> accel
    assert torch.equal(z.to("accel")._neg_view().cpu(), -z)
    dst = torch.zeros(5, dtype=torch.complex64, device="accel")
    dst.copy_(z.to("accel").conj())  # device -> device
    assert torch.equal(dst.cpu(), z.conj())
    x = torch.randn(16)
    torch.testing.assert_close(
        torch.fft.ifft(x.to("accel")).cpu(), torch.fft.ifft(x)
    )  # returns a conj view

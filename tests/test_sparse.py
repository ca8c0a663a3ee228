"""Sparse COO and CSR tensors on accel (through the counted CPU fallback), checked against the
same ops on the CPU; quantized tensors are refused by name."""

import pytest
import torch

import torch_accel


def _dense(seed=0, shape=(5, 4)):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    return x * (torch.rand(shape, generator=g) > 0.5)  # about half zeros


def _same(accel_sparse, cpu_sparse):
    assert accel_sparse.device.type == "accel"
    assert accel_sparse.layout == cpu_sparse.layout
    torch.testing.assert_close(accel_sparse.cpu().to_dense(), cpu_sparse.to_dense())


def test_coo_to_and_from_accel():
    s = _dense().to_sparse()
    a = s.to("accel")
    assert a.is_sparse and a.device.type == "accel"
    assert a._nnz() == s._nnz() and a.sparse_dim() == 2 and a.dense_dim() == 0
    assert a.indices().device.type == "accel" and a.values().device.type == "accel"
    torch.testing.assert_close(a.indices().cpu(), s.indices())
    torch.testing.assert_close(a.values().cpu(), s.values())
    back = a.cpu()
    assert back.is_sparse and back.device.type == "cpu"
    torch.testing.assert_close(back.to_dense(), s.to_dense())


def test_coo_created_on_accel():
    i = torch.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    v = torch.tensor([3.0, 4.0, 5.0, 1.0])
    cpu = torch.sparse_coo_tensor(i, v, (2, 3))
    a = torch.sparse_coo_tensor(i.to("accel"), v.to("accel"), (2, 3))
    assert a.device.type == "accel" and not a.is_coalesced()
    c = a.coalesce()
    assert c.is_coalesced() and c.device.type == "accel"
    torch.testing.assert_close(c.indices().cpu(), cpu.coalesce().indices())
    torch.testing.assert_close(c.values().cpu(), cpu.coalesce().values())
    torch.testing.assert_close(a.to_dense().cpu(), cpu.to_dense())


def test_to_sparse_and_to_dense_on_accel():
    x = _dense(1)
    a = x.to("accel")
    _same(a.to_sparse(), x.to_sparse())
    _same(a.to_sparse_csr(), x.to_sparse_csr())
    _same(a.to_sparse(1), x.to_sparse(1))  # a hybrid tensor: one sparse, one dense dim
    torch.testing.assert_close(a.to_sparse().to_dense().cpu(), x)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_times_dense(layout):
    x, w = _dense(2), torch.randn(4, 3)
    s = x.to_sparse() if layout == "coo" else x.to_sparse_csr()
    a = s.to("accel")
    torch_accel.reset_fallback_counts()
    torch.testing.assert_close(torch.mm(a, w.to("accel")).cpu(), torch.mm(s, w))
    torch.testing.assert_close((a @ w.to("accel")).cpu(), s @ w)
    bias = torch.randn(5, 3)
    torch.testing.assert_close(
        torch.addmm(bias.to("accel"), a, w.to("accel"), beta=0.5, alpha=2).cpu(),
        torch.addmm(bias, s, w, beta=0.5, alpha=2),
    )
    assert sum(torch_accel.fallback_counts().values()) > 0  # counted, not silent


def test_sparse_sum_and_elementwise():
    s = _dense(3).to_sparse()
    a = s.to("accel")
    torch.testing.assert_close(torch.sparse.sum(a).cpu(), torch.sparse.sum(s))
    _same(torch.sparse.sum(a, dim=0), torch.sparse.sum(s, dim=0))
    _same(a * 2, s * 2)
    _same(a + a, s + s)
    _same(torch.neg(a), torch.neg(s))


def test_sampled_addmm():
    g = torch.Generator().manual_seed(4)
    mask = _dense(4, (4, 4)).to_sparse_csr()
    m1, m2 = torch.randn(4, 3, generator=g), torch.randn(3, 4, generator=g)
    cpu = torch.sparse.sampled_addmm(mask, m1, m2, beta=0.5, alpha=1.5)
    a = torch.sparse.sampled_addmm(
        mask.to("accel"), m1.to("accel"), m2.to("accel"), beta=0.5, alpha=1.5
    )
    _same(a, cpu)


def test_csr_parts():
    s = _dense(5).to_sparse_csr()
    a = s.to("accel")
    assert a.layout == torch.sparse_csr and a.device.type == "accel"
    torch.testing.assert_close(a.crow_indices().cpu(), s.crow_indices())
    torch.testing.assert_close(a.col_indices().cpu(), s.col_indices())
    torch.testing.assert_close(a.values().cpu(), s.values())
    made = torch.sparse_csr_tensor(
        s.crow_indices().to("accel"), s.col_indices().to("accel"), s.values().to("accel"), s.shape
    )
    _same(made, s)


def test_sparse_gradient_of_embedding():
    # nn.Embedding(sparse=True) produces a sparse COO gradient
    for d in ("cpu", "accel"):
        torch.manual_seed(0)
        emb = torch.nn.Embedding(10, 3, sparse=True).to(d)
        emb(torch.tensor([1, 3, 3, 7], device=d)).sum().backward()
        assert emb.weight.grad.is_sparse
        if d == "cpu":
            expected = emb.weight.grad.to_dense()
        else:
            torch.testing.assert_close(emb.weight.grad.to_dense().cpu(), expected)


@pytest.mark.parametrize(
    "fn",
    [
        lambda: torch.quantize_per_tensor(torch.ones(3, device="accel"), 0.1, 0, torch.qint8),
        lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8).to("accel"),
    ],
)
def test_quantized_tensors_are_refused_by_name(fn):
    assert torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8).is_quantized  # CPU has
    with pytest.raises(NotImplementedError, match="quantized tensors are not supported on accel"):
        fn()
    assert (torch.ones(3, device="accel") + 1).sum().item() == 6  # the device is usable

"""torch.func on accel, as on CPU: vmap, grad, jacrev, jacfwd, hessian, jvp and
functional_call give CPU's values, with no fallback (jacfwd and hessian start from
_efficientzerotensor, the storage-less zeros of ATen's ZeroTensor key)."""

import pytest
import torch
import torch.func as tf

import torch_accel


def f(x):
    return (x.sin() * x.pow(3)).sum() + x.exp().mean()


def vector_f(x):
    return torch.stack([x.sin().sum(), (x * x).prod(), x.tanh().mean()])


X = torch.linspace(-1.5, 2.0, 7, dtype=torch.float64)


@pytest.mark.parametrize(
    "transform",
    [
        lambda x: tf.vmap(torch.sin)(x),
        lambda x: tf.grad(f)(x),
        lambda x: tf.jacrev(vector_f)(x),
        lambda x: tf.jacfwd(vector_f)(x),
        lambda x: tf.hessian(f)(x),
        lambda x: tf.jvp(vector_f, (x,), (torch.ones_like(x),))[1],
        lambda x: tf.vmap(tf.grad(f))(torch.outer(torch.arange(1.0, 4.0, device=x.device), x)),
    ],
    ids=["vmap", "grad", "jacrev", "jacfwd", "hessian", "jvp", "vmap_grad"],
)
def test_transform_matches_cpu(transform):
    mode = torch_accel.fallback_mode()
    torch_accel.set_fallback_mode("error")
    try:
        got = transform(X.to("accel"))
    finally:
        torch_accel.set_fallback_mode(mode)
    assert got.device.type == "accel"
    torch.testing.assert_close(got.cpu(), transform(X))


def test_efficient_zero_tensor_is_zeros_on_accel():
    z = torch._efficientzerotensor(2, 3, device="accel")
    assert z.device.type == "accel" and z._is_zerotensor()
    y = torch.ones(2, 3, device="accel") * 4
    torch.testing.assert_close((z + y).cpu(), torch.full((2, 3), 4.0))
    torch.testing.assert_close((z * y).cpu(), torch.zeros(2, 3))
    torch.testing.assert_close(torch.exp(z).cpu(), torch.ones(2, 3))


def test_functional_call_matches_cpu():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    x = torch.randn(5, 4)

    def loss(params, x):
        return tf.functional_call(net, params, (x,)).pow(2).mean()

    params = dict(net.named_parameters())
    want = tf.grad(loss)(params, x)
    net.to("accel")
    got = tf.grad(loss)(dict(net.named_parameters()), x.to("accel"))
    for name in want:
        torch.testing.assert_close(got[name].cpu(), want[name])

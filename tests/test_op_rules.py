"""PyTorch's rules on accel, each checked against CPU on the same inputs: the CPU fallback keeps
its arguments' aliasing and layout (overlap errors, views, out=, det's gradients), out= dtype
and device rules, in-place ops never resize self, device index -1 is the current device,
random ops of many dimensions, set_ without strides."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_accel
from conftest import needs_two_devices


def _on(device, t):
    return t.to(device) if isinstance(t, torch.Tensor) else t


def _run(fn, device):
    """fn(device)'s result on the CPU, or its error as (type, first line of the message)."""
    try:
        r = fn(device)
    except Exception as e:  # noqa: BLE001 - the error is what we compare
        return None, (type(e), str(e).splitlines()[0])
    if isinstance(r, (tuple, list)):
        return [x.cpu() if isinstance(x, torch.Tensor) else x for x in r], None
    return (r.cpu() if isinstance(r, torch.Tensor) else r), None


def assert_like_cpu(fn, **tol):
    """fn(device) does on accel what it does on the CPU: same values, or the same error."""
    cpu_value, cpu_error = _run(fn, "cpu")
    accel_value, accel_error = _run(fn, "accel")
    if cpu_error:
        assert accel_error is not None, f"CPU raises {cpu_error}, accel returned {accel_value}"
        assert accel_error[0] is cpu_error[0], (accel_error, cpu_error)
        assert accel_error[1] == cpu_error[1].replace("cpu", "accel:0") or (
            accel_error[1] == cpu_error[1]
        ), (accel_error, cpu_error)
    else:
        assert accel_error is None, f"CPU returns, accel raises {accel_error}"
        torch.testing.assert_close(accel_value, cpu_value, **tol)


# --- the fallback keeps aliasing --------------------------------------------------------------

OVERLAP = "unsupported operation: some elements of the input tensor and the written-to tensor"


@pytest.mark.parametrize(
    "name,fn",
    [
        (
            "take out=self",
            lambda d: torch.take(
                y := torch.arange(6.0, device=d), torch.tensor([0, 2, 4, 1, 3, 5], device=d), out=y
            ),
        ),
        (
            "index_select out=self",
            lambda d: torch.index_select(
                y := torch.arange(6.0, device=d),
                0,
                torch.tensor([5, 4, 3, 2, 1, 0], device=d),
                out=y,
            ),
        ),
        (
            "kthvalue out=self",
            lambda d: torch.kthvalue(
                y := torch.arange(6.0, device=d).view(2, 3),
                2,
                1,
                out=(y[0, :2], torch.empty(2, dtype=torch.long, device=d)),
            ),
        ),
        (
            "masked_select out=self",
            lambda d: torch.masked_select(y := torch.arange(6.0, device=d), y > 2, out=y),
        ),
        (
            "partial overlap of out and input",
            lambda d: torch.special.airy_ai((b := torch.arange(8.0, device=d))[:6], out=b[2:]),
        ),
        (
            "expanded out=",
            lambda d: torch.special.airy_ai(
                torch.ones(3, 3, device=d), out=torch.zeros(3, 1, device=d).expand(3, 3)
            ),
        ),
    ],
)
def test_fallback_sees_the_calls_aliasing(name, fn):
    cpu_error = _run(fn, "cpu")[1]
    assert cpu_error is not None and "single memory location" in cpu_error[1], cpu_error
    assert_like_cpu(fn)


# --- native kernels check in CPU's order --------------------------------------------------------


@pytest.mark.parametrize(
    "name,fn",
    [
        # The overlap checks come before out= is resized (an expanded out= is refused, not
        # reallocated) ...
        (
            "index_select into an expanded out=",
            lambda d: torch.index_select(
                torch.arange(18.0, device=d).view(3, 6),
                1,
                torch.tensor([0, 1], device=d),
                out=torch.zeros(1, 6, device=d).expand(2, 6),
            ),
        ),
        # ... or after it, on what the resize made of an input out= aliases.
        (
            "cat into a growing view of an input",
            lambda d: torch.cat(
                (torch.ones(4, 6, device=d), z := torch.zeros(4, 6, device=d)), out=z[:2, :]
            ),
        ),
        (
            "cat into an empty input",
            lambda d: torch.cat((x := torch.zeros(0, device=d), torch.ones(4, 6, device=d)), out=x),
        ),
        (
            "gather into a float64 out=",
            lambda d: torch.gather(
                torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=d),
                1,
                torch.tensor([[0, 0], [1, 0]], device=d),
                out=torch.empty(2, 2, dtype=torch.float64, device=d),
            ),
        ),
        (
            "multinomial into a float out=",
            lambda d: torch.multinomial(
                torch.ones(1, 2, device=d), 2, out=torch.empty(1, 2, device=d)
            ),
        ),
        (
            "multinomial over more than 2^24 categories",
            lambda d: torch.multinomial(torch.empty(2**24 + 1, device=d), 3),
        ),
        # The step cast to an int64 out= is 0: CPU's ValueError.
        (
            "arange with a step that truncates to 0",
            lambda d: torch.arange(0, 64, 0.5, out=torch.empty(0, dtype=torch.long, device=d)),
        ),
        # The structured ops' wording: dtypes named "float", "double".
        (
            "aminmax into a float64 out=",
            lambda d: torch.aminmax(
                torch.ones(4, 5, device=d),
                dim=0,
                out=(torch.empty(5, device=d), torch.empty(5, dtype=torch.float64, device=d)),
            ),
        ),
        # softshrink's lambda lies in [0, the dtype's largest value].
        ("softshrink lambda < 0", lambda d: F.softshrink(torch.ones(2, device=d), -0.5)),
        ("softshrink lambda NaN", lambda d: F.softshrink(torch.ones(2, device=d), float("nan"))),
        (
            "softshrink lambda past half's range",
            lambda d: F.softshrink(torch.ones(2, dtype=torch.half, device=d), 7e4),
        ),
        # The cat family refuses an out= its inputs can't be cast to with a TypeError.
        (
            "stack into an int64 out=",
            lambda d: torch.stack(
                [torch.ones(3, 4, device=d)], -1, out=torch.empty(0, dtype=torch.long, device=d)
            ),
        ),
        (
            "cat into an int64 out=",
            lambda d: torch.cat(
                [torch.ones(3, device=d)], out=torch.empty(3, dtype=torch.long, device=d)
            ),
        ),
    ],
)
def test_native_kernels_raise_cpus_errors(name, fn):
    assert _run(fn, "cpu")[1] is not None
    assert_like_cpu(fn)


@pytest.mark.parametrize(
    "fn",
    [
        # gather into its own index: CPU checks partial overlap only, and each element reads
        # its index before writing it.
        lambda d: torch.gather(
            torch.arange(10, 16, device=d).view(2, 3),
            1,
            i := torch.tensor([[2, 0, 1], [1, 1, 0]], device=d),
            out=i,
        ),
        # searchsorted and bucketize into an out= that aliases the values or the boundaries:
        # CPU has no overlap check there.
        lambda d: torch.bucketize(
            x := torch.tensor([2, 6, 0, 7], device=d), torch.tensor([1, 3, 5, 7], device=d), out=x
        ),
        lambda d: torch.searchsorted(
            torch.tensor([1, 3, 5, 7], device=d), x := torch.tensor([2, 6, 0, 7], device=d), out=x
        ),
        lambda d: torch.searchsorted(
            b := torch.tensor([1, 3, 5, 7], device=d), torch.tensor([2, 6, 0, 7], device=d), out=b
        ),
        # int64 arange truncates start, end and step to integers first, as CPU does.
        lambda d: torch.arange(0, 5.9, 1.5, out=torch.empty(0, dtype=torch.long, device=d)),
        lambda d: torch.arange(0.5, 5, 1.5, out=torch.empty(0, dtype=torch.long, device=d)),
        lambda d: torch.arange(0, -5, -1.5, out=torch.empty(0, dtype=torch.long, device=d)),
    ],
)
def test_native_kernels_accept_what_cpu_accepts(fn):
    assert _run(fn, "cpu")[1] is None
    assert_like_cpu(fn, rtol=0, atol=0)


def test_fallback_out_and_inputs_on_one_storage():
    # out= and the inputs are disjoint views of one storage (which CPU allows): the fallback's
    # shared CPU buffer must leave the inputs' bytes as they were.
    def fn(d):
        base = torch.linspace(0.1, 2, 24, device=d)
        torch.special.airy_ai(base[:6], out=base[6:12])
        out = base[18:].view(2, 3).t()  # transposed
        torch.special.xlog1py(base[12:18].view(3, 2), base[6:12].view(3, 2), out=out)
        torch.special.i1e(base[:4], out=base[:4])  # in place through out=
        return base

    assert_like_cpu(fn)


@pytest.mark.parametrize(
    "view",
    [
        lambda t: t.t(),  # dense, not contiguous
        lambda t: t[:, ::2],  # not dense
        lambda t: t.unsqueeze(0).expand(3, *t.shape)[1],  # a view into an expanded tensor
    ],
)
def test_fallback_non_contiguous_inputs_and_out(view):
    def fn(d):
        x = view(torch.linspace(-2, 2, 48, device=d).view(6, 8))
        out = view(torch.zeros(6, 8, device=d) if x.shape[0] == 6 else torch.zeros(8, 6, device=d))
        out = out[: x.shape[0], : x.shape[1]]
        torch.special.airy_ai(x, out=out)
        return (
            out,
            torch.special.modified_bessel_k0(x.abs() + 0.5),
            torch.special.ndtri(x.sigmoid()),
        )

    before = dict(torch_accel.fallback_counts())
    assert_like_cpu(fn)
    assert torch_accel.fallback_counts() != before  # these ops do run through the fallback


def test_fallback_expanded_inputs():
    # broadcast (stride-0) inputs reach the CPU kernel as they are
    def fn(d):
        x = torch.linspace(-1, 1, 25, device=d).view(5, 5)
        row = torch.linspace(0.1, 1, 5, device=d).expand(5, 5)
        return torch.special.xlog1py(x, row), torch.special.xlog1py(row, x)

    assert_like_cpu(fn)


def test_fallback_tensor_list_sharing_storage():
    # _foreach ops take lists; two list entries are views of one storage
    def fn(d):
        base = torch.linspace(0.1, 2, 12, device=d)
        parts = [base[:6], base[6:].view(2, 3)]
        torch._foreach_lgamma_(parts)
        return base

    assert_like_cpu(fn)


@pytest.mark.parametrize("form", ["functional", "out"])
@pytest.mark.parametrize("adjoint", [False, True])
def test_fallback_output_takes_the_conjugate_bit_the_kernel_set(adjoint, form):
    # linalg_lu_solve with left=False solves for X^H and then flips the result's conjugate
    # bit instead of conjugating its values: the accel result must take that bit too.
    g = torch.Generator().manual_seed(0)
    a = torch.randn(3, 3, generator=g, dtype=torch.complex64)
    b = torch.randn(4, 3, generator=g, dtype=torch.complex64)
    lu, pivots = torch.linalg.lu_factor(a)

    def fn(d):
        args = (lu.to(d), pivots.to(d), b.to(d))
        if form == "functional":
            return torch.linalg.lu_solve(*args, left=False, adjoint=adjoint)
        out = torch.empty(4, 3, dtype=torch.complex64, device=d)
        torch.linalg.lu_solve(*args, left=False, adjoint=adjoint, out=out)
        return out

    assert_like_cpu(fn, rtol=1e-5, atol=1e-5)
    x = fn("accel")
    assert x.is_conj() == fn("cpu").is_conj()
    torch.testing.assert_close((x @ a.to("accel").mH if adjoint else x @ a.to("accel")).cpu(), b)


# --- det / slogdet / logdet gradients of non-contiguous inputs ------------------------------


def _matrices(d):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(3, 4, 8, generator=g, dtype=torch.double)
    return {
        "sliced": base.to(d)[:, :, ::2],  # not dense: the case that went wrong
        "transposed": base[:, :, :4].to(d).mT,
        "contiguous": base[:, :, :4].contiguous().to(d),
    }


@pytest.mark.parametrize("layout", ["sliced", "transposed", "contiguous"])
@pytest.mark.parametrize(
    "op",
    [
        lambda a: torch.linalg.det(a),
        lambda a: torch.linalg.slogdet(a)[1],
        lambda a: torch.logdet(a @ a.mT),
    ],
)
def test_det_family_gradients_match_cpu(op, layout):
    grads = {}
    for d in ("cpu", "accel"):
        a = _matrices(d)[layout].requires_grad_()
        (g,) = torch.autograd.grad(op(a).sum(), a)
        grads[d] = g.cpu()
    torch.testing.assert_close(grads["accel"], grads["cpu"], rtol=1e-10, atol=1e-10)


def test_det_gradcheck_on_accel():
    a = _matrices("accel")["sliced"][0].detach().requires_grad_()
    assert torch.autograd.gradcheck(torch.linalg.det, (a,))


# --- out= dtype rules (the reduction ops') ----------------------------------------------------


REDUCTIONS = {
    "norm": lambda x, out: torch.norm(x, out=out),
    "norm dim": lambda x, out: torch.norm(x, dim=1, out=out),
    "vector_norm": lambda x, out: torch.linalg.vector_norm(x, out=out),
    "vector_norm 1": lambda x, out: torch.linalg.vector_norm(x, 1, dim=0, out=out),
    "sum": lambda x, out: torch.sum(x, 1, out=out),
    "mean": lambda x, out: torch.mean(x, 1, out=out),
    "prod": lambda x, out: torch.prod(x, 1, out=out),
    "amax": lambda x, out: torch.amax(x, 1, out=out),
    "std": lambda x, out: torch.std(x, 1, out=out),
    "var": lambda x, out: torch.var(x, 1, out=out),
    "logsumexp": lambda x, out: torch.logsumexp(x, 1, out=out),
    "cumsum": lambda x, out: torch.cumsum(x, 1, out=out),
    "argmax": lambda x, out: torch.argmax(x, 1, out=out),
}
OUT_DTYPES = [torch.long, torch.int32, torch.float64, torch.bool]


@pytest.mark.parametrize(
    "name,out_dtype",
    # CPU has no bool cumsum kernel at all
    [(n, t) for n in REDUCTIONS for t in OUT_DTYPES if (n, t) != ("cumsum", torch.bool)],
)
def test_reduction_out_dtype_rules_match_cpu(name, out_dtype):
    x = torch.linspace(-3, 3, 12).view(3, 4)
    op = REDUCTIONS[name]
    assert_like_cpu(lambda d: op(x.to(d), torch.empty(0, dtype=out_dtype, device=d)))


# --- out= on another device, in-place broadcasting, cat's argument types --------------------

CPU_OUT = {
    "tril": lambda x, o: torch.tril(x, out=o),
    "triu": lambda x, o: torch.triu(x, out=o),
    "softmax": lambda x, o: torch.softmax(x, 1, out=o),
    "log_softmax": lambda x, o: torch.log_softmax(x, 1, out=o),
    "addr": lambda x, o: torch.addr(x, x[0], x[1], out=o),
    "all": lambda x, o: torch.all(x, 1, out=o.bool()),
    "any": lambda x, o: torch.any(x, 1, out=o.bool()),
    "isposinf": lambda x, o: torch.isposinf(x, out=o.bool()),
    "isneginf": lambda x, o: torch.isneginf(x, out=o.bool()),
    "gather": lambda x, o: torch.gather(
        x, 1, torch.zeros(4, 1, dtype=torch.long, device="accel"), out=o
    ),
    "index_select": lambda x, o: torch.index_select(x, 0, torch.tensor([1], device="accel"), out=o),
    "sort": lambda x, o: torch.sort(x, out=(o, o.long())),
    "cumsum": lambda x, o: torch.cumsum(x, 0, out=o),
}


@pytest.mark.parametrize("name", list(CPU_OUT))
def test_cpu_out_for_an_accel_op_is_refused(name):
    # CUDA's rule: an out= tensor on another device raises before any kernel runs
    x = torch.linspace(-1, 1, 16, device="accel").view(4, 4)
    out = torch.zeros(4, 4)
    with pytest.raises(RuntimeError, match="device"):
        CPU_OUT[name](x, out)
    assert (out == 0).all()


@pytest.mark.parametrize("op", [torch.polar, torch.complex])
def test_zero_dim_cpu_out_for_an_accel_op_is_refused(op):
    # A 0-dim CPU tensor may stand for a number among the inputs, never for the out= tensor.
    a, b = torch.tensor(1.0, device="accel"), torch.tensor(0.5, device="accel")
    out = torch.zeros((), dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="when checking the out= argument"):
        op(a, b, out=out)
    assert out == 0
    torch.testing.assert_close(op(a, b).cpu(), op(a.cpu(), b.cpu()))


@pytest.mark.parametrize(
    "fn",
    [
        lambda d: torch.zeros(3, device=d).addmm_(
            torch.ones(2, 2, device=d), torch.ones(2, 3, device=d)
        ),
        lambda d: torch.zeros(1, device=d).addmv_(
            torch.ones(2, 2, device=d), torch.ones(2, device=d)
        ),
        lambda d: torch.zeros(3, device=d).baddbmm_(
            torch.ones(2, 2, 2, device=d), torch.ones(2, 2, 3, device=d)
        ),
        lambda d: torch.zeros(1, 3, device=d).addcmul_(
            torch.ones(2, 3, device=d), torch.ones(2, 3, device=d)
        ),
        # xlogy_ is composed of native ops: its where_out would resize self.
        lambda d: torch.ones(5, 1, device=d).xlogy_(torch.ones(5, device=d)),
        lambda d: torch.ones(0, 1, 3, device=d).xlogy_(torch.ones(0, 10, 3, device=d)),
        lambda d: torch.ones(1, 3, device=d).xlogy_(torch.ones(0, 3, device=d)),
    ],
)
def test_in_place_never_resizes_self(fn):
    assert_like_cpu(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda d: torch.cat(torch.ones(2, device=d), dim=None),
        lambda d: torch.cat([torch.ones(2, device=d)], dim=None),
        lambda d: torch.stack(torch.ones(2, device=d)),
        lambda d: torch.hstack(torch.ones(2, device=d)),
        lambda d: torch.cat([torch.ones(2, device=d), torch.ones(2, 2, device=d)]),
    ],
)
def test_cat_family_argument_errors(fn):
    assert_like_cpu(fn)


@pytest.mark.parametrize(
    "op",
    [
        lambda x, o: torch.add(x, 1, out=o),
        lambda x, o: torch.sum(x, 0, out=o),
        lambda x, o: torch.special.airy_ai(x, out=o),  # through the fallback
        lambda x, o: torch.tril(x, out=o),
        lambda x, o: torch.softmax(x, 0, out=o),
        lambda x, o: torch.mm(x, x, out=o),
        lambda x, o: torch.cat([x, x], out=o),
        lambda x, o: torch.stack([x, x], out=o),
        lambda x, o: torch.hstack([x, x], out=o),
    ],
)
def test_resizing_a_non_empty_out_warns_as_on_cpu(op):
    seen = {}
    for d in ("cpu", "accel"):
        x = torch.linspace(0, 1, 9, device=d).view(3, 3)
        out = torch.zeros(2, device=d)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = op(x, out)
        seen[d] = (
            sorted({str(w.message).split(".")[0] for w in caught if "resized" in str(w.message)}),
            r.cpu(),
        )
    assert seen["cpu"][0], "CPU warns"
    assert seen["accel"][0] == seen["cpu"][0]
    torch.testing.assert_close(seen["accel"][1], seen["cpu"][1])


# --- device index -1 (and no index) is the current device ------------------------------------


def test_stream_and_event_without_index_use_the_current_device():
    s = torch.Stream(device="accel")
    assert s.device == torch.device("accel", torch.accel.current_device())
    e = torch.Event(device="accel")
    with torch.accel.stream(s):
        y = torch.arange(4.0, device="accel") * 2
        e.record()
    e.synchronize()
    assert e.query() and torch.equal(y.cpu(), torch.arange(4.0) * 2)


@needs_two_devices
def test_minus_one_follows_the_current_device():
    with torch.accel.device(1):
        assert torch.Stream(device="accel").device_index == 1
        assert torch.accel.current_stream(-1).device_index == 1
        assert torch.accel.default_stream(-1).device_index == 1
        assert (
            torch.accel.get_device_properties(-1).name == torch.accel.get_device_properties(1).name
        )
        assert torch.accel.mem_get_info(-1)[1] == torch.accel.mem_get_info(1)[1]
        assert torch.accel.memory_allocated(-1) == torch.accel.memory_allocated(1)
        torch.accel.synchronize(-1)
        torch.accel.set_device(-1)  # a no-op, as torch.cuda.set_device(-1)
        assert torch.accel.current_device() == 1
        assert torch.empty(1, device="accel").device.index == 1
        assert torch.accelerator.current_stream().device_index == 1
    assert torch.accel.current_device() == 0


# --- random ops of many dimensions, set_ without strides -------------------------------------


@pytest.mark.parametrize("shape", [[1] * 30, [2, 1, 3] + [1] * 27, [1] * 25 + [4, 1, 2, 1, 1]])
def test_random_ops_take_any_number_of_dimensions(shape):
    assert torch.randn(shape).shape == torch.Size(shape)  # CPU has no limit
    torch.accel.manual_seed(5)
    many = torch.randn(shape, device="accel")
    torch.accel.manual_seed(5)
    flat = torch.randn(many.numel(), device="accel")
    assert many.shape == torch.Size(shape)
    # numbers follow the logical order, whatever the number of dimensions
    assert torch.equal(many.cpu().flatten(), flat.cpu())
    assert torch.empty(shape, device="accel").uniform_().shape == torch.Size(shape)


def test_set_storage_without_stride_is_contiguous():
    def fn(d):
        storage = torch.arange(8.0, device=d).untyped_storage()
        t = torch.empty(0, device=d).set_(storage, 1, (2, 3))
        return t, torch.tensor(t.stride())

    assert_like_cpu(fn)

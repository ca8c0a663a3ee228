"""What PyTorch's TestCommon checks, run per op_db op x dtype on accel, CPU as the reference.

``check_conformance(op, dtype, max_samples)`` returns one result per check:
  compare        accel's output matches CPU's on the op's samples (coverage.check_op)
  noncontiguous  noncontiguous copies of the samples give CPU's output, and, in float32 and
                 complex64, CPU's gradients (a gradient that differs passes when it is no
                 farther than CPU's from the double-precision one: the outputs' float64 rule)
  out            out= keeps its strides and storage, an empty out= is resized without a
                 warning, a wrong-shaped one with CPU's warning, a CPU out= raises, an unsafe
                 dtype raises when CPU raises, an out= aliasing an input raises the overlap
                 error where CPU does (and only there)
  variants       the method and in-place variants (and aliases) give the function's result;
                 an in-place call that would resize self raises as on CPU; in-place keeps
                 self's storage
  errors         the op's error_inputs raise on accel what they raise on CPU (dtype-free: run
                 once, in the first of DTYPES that CPU supports for the op)
Each result is {"status": "pass" | "fail" | "skip", "error": one line}. A check op_db marks as
expected to fail on CUDA (a DecorateInfo for TestCommon's test) is "skip", with that reason:
accel is held to what CUDA does. Written for this project from what test/test_ops.py means;
tests/test_opinfo.py runs a slice of it, ``python -m torch_accel coverage --conformance`` all.
"""

import unittest
import warnings
from functools import partial

import torch
from torch.utils._pytree import tree_flatten

import torch_accel
from torch_accel.devtools import coverage

CHECKS = ("compare", "noncontiguous", "out", "variants", "errors")
DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.complex64, torch.int64, torch.bool)
# TestCommon's test for each check, for op_db's own expected-failure markers.
UPSTREAM_TEST = {
    "compare": "test_compare_cpu",
    "noncontiguous": "test_noncontiguous_samples",
    "out": "test_out",
    "variants": "test_variant_consistency_eager",
    "errors": "test_errors",
    "out_warning": "test_out_warning",  # the resize-warning case of "out"
}
RESIZE_WARNING = "An output with one or more elements"
GRAD_DTYPES = (torch.float32, torch.complex64)


class CheckFailed(AssertionError):
    pass


def upstream_marker(op, check: str, dtype: torch.dtype) -> str | None:
    """op_db's reason when it expects ``check``'s TestCommon test to fail or skips it on
    CUDA (a marker for every device type, or for CUDA), else None."""
    name = UPSTREAM_TEST[check]
    for di in op.decorators:
        if not hasattr(di, "is_active"):
            continue
        if di.device_type not in (None, "cuda") or di.cls_name not in (None, "TestCommon"):
            continue
        if not di.is_active("TestCommon", name, di.device_type or "cuda", dtype, {}):
            continue
        for d in di.decorators:
            if d is unittest.expectedFailure or getattr(d, "__name__", "") == "expectedFailure":
                return f"op_db marks TestCommon.{name} as an expected failure on CUDA"
            if "skip" in getattr(d, "__qualname__", repr(d)).lower():
                return f"op_db skips TestCommon.{name} on CUDA"
    return None


def _cpu_copy(sample, keep_grad: bool = False):
    """coverage.to_cpu, keeping the sample's metadata (and, if asked, requires_grad)."""
    cpu = coverage.to_cpu(sample)
    if keep_grad:
        for src, dst in zip(_leaves((sample.input, sample.args)), _leaves((cpu.input, cpu.args))):
            if src.requires_grad and dst.is_leaf:
                dst.requires_grad_(True)
    cpu.output_process_fn_grad = sample.output_process_fn_grad
    cpu.broadcasts_input = sample.broadcasts_input
    return cpu


def _call(op, sample, **extra):
    out = op(sample.input, *sample.args, **sample.kwargs, **extra)
    torch.accel.synchronize()  # an asynchronous error belongs to this call
    return out


def _samples(op, dtype, max_samples, **kw):
    out = []
    for s in op.sample_inputs(coverage.DEVICE, dtype, **kw):
        out.append(s)
        if max_samples and len(out) >= max_samples:
            break
    return out


def _cpu_runs(op, dtype, max_samples, grad=False):
    """(index, sample on accel, its CPU copy, CPU's output) for the samples CPU runs."""
    for i, sample in enumerate(_samples(op, dtype, max_samples, requires_grad=grad)):
        cpu = _cpu_copy(sample, keep_grad=grad)
        try:
            expected = coverage.cpu_call(op, cpu)
        except Exception:  # noqa: BLE001  CPU rejects the sample: nothing to compare
            continue
        yield i, sample, cpu, expected


def _raises(fn):
    """The exception fn raises (after synchronising), or None."""
    try:
        fn()
        torch.accel.synchronize()
    except Exception as e:  # noqa: BLE001  (any error is an outcome to compare)
        return e
    return None


def _is_tensors(x) -> bool:
    return isinstance(x, torch.Tensor) or (
        isinstance(x, (tuple, list)) and len(x) > 0 and all(isinstance(t, torch.Tensor) for t in x)
    )


def _map_out(fn, x):
    return fn(x) if isinstance(x, torch.Tensor) else tuple(fn(t) for t in x)


def _plain(x):
    """Sequences as plain tuples: a method may return a tuple where the function returns a
    torch.return_types one, with the same tensors."""
    return tuple(_plain(t) for t in x) if isinstance(x, (tuple, list)) else x


def _leaves(x):
    return [t for t in tree_flatten(x)[0] if isinstance(t, torch.Tensor)]


def check_noncontiguous(op, dtype, max_samples):
    grad = dtype in GRAD_DTYPES and dtype in op.supported_backward_dtypes("cpu")
    compared = 0
    for i, sample, cpu, expected in _cpu_runs(op, dtype, max_samples, grad):
        nc = sample.noncontiguous()
        actual = _call(op, nc)
        coverage.compare_with_reference(
            op, cpu, actual, expected, dtype, coverage._expected_device(sample)
        )
        compared += 1
        if not grad:
            continue
        exp = [t for t in _leaves(sample.output_process_fn_grad(expected)) if t.requires_grad]
        act = [t for t in _leaves(sample.output_process_fn_grad(actual)) if t.requires_grad]
        exp_in = [t for t in _leaves((cpu.input, cpu.args)) if t.requires_grad]
        act_in = [t for t in _leaves((nc.input, nc.args)) if t.requires_grad]
        if not exp or len(exp) != len(act) or len(exp_in) != len(act_in):
            continue
        g_exp = [torch.randn_like(t) for t in exp]
        from torch.testing._internal.common_utils import noncontiguous_like

        g_act = [noncontiguous_like(g.to(coverage.DEVICE)) for g in g_exp]
        want = torch.autograd.grad(exp, exp_in, g_exp, allow_unused=True)
        got = torch.autograd.grad(act, act_in, g_act, allow_unused=True)
        torch.accel.synchronize()
        float64 = None
        for k, (a, e) in enumerate(zip(got, want)):
            if (a is None) != (e is None):
                raise CheckFailed(f"sample {i}: gradient {k} is {a is None and 'None'} on accel")
            if e is None:
                continue
            try:
                coverage._compare(a, e, dtype, coverage.DEVICE)
            except AssertionError as err:
                # The float64-reference rule, as for outputs: accel's gradient may differ from
                # CPU's when it is no farther from CPU's double-precision gradient.
                if float64 is None:
                    float64 = _float64_gradients(op, cpu, g_exp, len(exp), len(exp_in))
                if float64 is None or float64[k] is None:
                    raise CheckFailed(f"sample {i}: gradient {k}: {err}") from None
                try:
                    coverage._reference_close(a, e, float64[k], dtype, coverage.DEVICE)
                except AssertionError as ref_err:
                    raise CheckFailed(
                        f"sample {i}: gradient {k}: {err}\n(float64 reference: {ref_err})"
                    ) from None
    return compared


def _float64_gradients(op, cpu, grads, n_out: int, n_in: int):
    """CPU's gradients of the sample ``cpu`` computed in double precision for the upstream
    ``grads``, or None when there is no such reference (no float or complex dtype to raise)."""
    if any(g.dtype not in coverage._UPCAST for g in grads):
        return None
    up = coverage._upcast(cpu)  # made under no_grad: mark what requires grad in the sample
    for orig, raised in zip(_leaves((cpu.input, cpu.args)), _leaves((up.input, up.args))):
        if orig.requires_grad and not raised.requires_grad:
            raised.requires_grad_(True)
    try:
        out = coverage.cpu_call(op, up)
    except Exception:
        return None
    out = [t for t in _leaves(up.output_process_fn_grad(out)) if t.requires_grad]
    ins = [t for t in _leaves((up.input, up.args)) if t.requires_grad]
    if len(out) != n_out or len(ins) != n_in:
        return None
    up_grads = [g.to(coverage._UPCAST[g.dtype]) for g in grads]
    return torch.autograd.grad(out, ins, up_grads, allow_unused=True)


def _extremal_like(t):
    if t.dtype.is_floating_point or t.dtype.is_complex:
        return torch.full_like(t, float("nan"))
    return torch.full_like(t, True if t.dtype == torch.bool else torch.iinfo(t.dtype).max)


def _noncontiguous_zeros_like(t):
    from torch.testing._internal.common_utils import noncontiguous_like

    return noncontiguous_like(torch.zeros_like(t))


def _wrong_shape_like(t):
    shape = list(t.shape) or [1]
    shape[-1] += 1
    return torch.zeros(shape, dtype=t.dtype, device=t.device)


def _warned(fn, out) -> bool:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(out=out)
    return any(RESIZE_WARNING in str(w.message) for w in caught)


def _is_overlap_error(e) -> bool:
    """at::assert_no_overlap's error (and its internal and partial overlap twins)."""
    return isinstance(e, RuntimeError) and "unsupported operation" in str(e)


def _first_line(e) -> str:
    return (str(e).strip().splitlines() or [""])[0]


def _outcome(e) -> str:
    return f"{type(e).__name__} ({_first_line(e)[:80]})" if e else "nothing"


class _OutCases:
    """The out= cases of one sample; each method raises CheckFailed (or AssertionError)."""

    def __init__(self, op, dtype, sample, cpu, expected):
        self.op, self.dtype, self.sample, self.cpu = op, dtype, sample, cpu
        self.expected = expected if isinstance(expected, torch.Tensor) else tuple(expected)
        self.on_accel = partial(_call, op, sample)
        self.on_cpu = partial(op, cpu.input, *cpu.args, **cpu.kwargs)
        self.ref = _map_out(lambda t: t.to(coverage.DEVICE), self.expected)
        self.factory = op.is_factory_function

    def compare(self, out):
        coverage.compare_with_reference(
            self.op, self.cpu, out, self.expected, self.dtype, coverage.DEVICE
        )

    def kept(self, make):
        # An out= of the right shape keeps its strides and storage and gets CPU's values.
        out = _map_out(make, self.ref)
        strides = [t.stride() for t in _leaves(out)]
        ptrs = [t.data_ptr() for t in _leaves(out)]
        self.on_accel(out=out)
        self.compare(out)
        if [t.stride() for t in _leaves(out)] != strides:
            raise CheckFailed("out= strides changed")
        if [t.data_ptr() for t in _leaves(out)] != ptrs:
            raise CheckFailed("out= storage replaced")

    def right_shape(self):
        self.kept(_extremal_like)

    def noncontiguous(self):
        self.kept(_noncontiguous_zeros_like)

    def empty(self):
        out = _map_out(lambda t: t.new_empty((0,)), self.ref)
        if _warned(self.on_accel, out):
            raise CheckFailed("resizing an empty out= warned")
        self.compare(out)

    def resize_warning(self):
        if upstream_marker(self.op, "out_warning", self.dtype):
            return
        if not any(t.numel() for t in _leaves(self.expected)):
            return
        cpu_warns = _warned(self.on_cpu, _map_out(_wrong_shape_like, self.expected))
        if cpu_warns and not _warned(self.on_accel, _map_out(_wrong_shape_like, self.ref)):
            raise CheckFailed("no resize warning for a non-empty out= (CPU warns)")

    def cpu_out(self):
        if self.factory and self.sample.kwargs.get("device") is None:
            return
        out = _map_out(lambda t: torch.zeros_like(t, device="cpu"), self.expected)
        e = _raises(lambda: self.on_accel(out=out))
        if not isinstance(e, RuntimeError):
            raise CheckFailed(f"a CPU out= gave {type(e).__name__ if e else 'no error'}")

    def unsafe_dtype(self):
        if not any(t.is_floating_point() or t.is_complex() for t in _leaves(self.expected)):
            return
        if self.factory and self.sample.kwargs.get("dtype") is None:
            return
        long = _map_out(lambda t: torch.zeros(t.shape, dtype=torch.long), self.expected)
        want = _raises(lambda: self.on_cpu(out=long))
        got = _raises(lambda: self.on_accel(out=_map_out(lambda t: t.to(coverage.DEVICE), long)))
        if isinstance(want, RuntimeError) and not isinstance(got, RuntimeError):
            raise CheckFailed(f"an int64 out= gave {_outcome(got)}, CPU raises")

    def aliasing(self):
        # out= aliasing an input: where CPU raises its overlap error, accel raises too, and
        # accel raises no overlap error where CPU has none. (The values of an aliased call
        # depend on each kernel's order, on CPU too, so they are not compared.)
        e = self.expected
        if not isinstance(e, torch.Tensor):
            return
        pairs = [
            (a, c)
            for a, c in zip(
                _leaves((self.sample.input, self.sample.args)),
                _leaves((self.cpu.input, self.cpu.args)),
            )
            # Only an input of the output's shape: resizing an aliased input corrupts CPU's
            # own heap (avg_pool3d(x, out=x) growing x, linalg.eigvalsh(x, out=x) shrinking it).
            if a.dtype == e.dtype and a.is_contiguous() and a.shape == e.shape and a.numel()
        ]
        if not pairs:
            return
        a, c = pairs[0]
        want = _raises(lambda: self.on_cpu(out=c))
        got = _raises(lambda: self.on_accel(out=a))
        if _is_overlap_error(want) and not isinstance(got, RuntimeError):
            raise CheckFailed(f"CPU raises {_outcome(want)}, accel {_outcome(got)}")
        if want is None and _is_overlap_error(got):
            raise CheckFailed(f"accel raises {_outcome(got)}, CPU accepts the call")

    CASES = (
        ("out= of the right shape", right_shape),
        ("noncontiguous out=", noncontiguous),
        ("empty out=", empty),
        ("resize warning", resize_warning),
        ("CPU out=", cpu_out),
        ("unsafe dtype out=", unsafe_dtype),
        ("out= aliasing an input", aliasing),
    )

    def run(self, i):
        for name, case in self.CASES:
            try:
                case(self)
            except CheckFailed as e:
                raise CheckFailed(f"sample {i}, {name}: {e}") from None
            except Exception as e:  # noqa: BLE001  a mismatch or an error on accel
                kind = "" if isinstance(e, AssertionError) else f"{type(e).__name__}: "
                raise CheckFailed(f"sample {i}, {name}: {kind}{_first_line(e)[:200]}") from None
        torch.accel.synchronize()  # the device is still usable


def check_out(op, dtype, max_samples):
    if not op.supports_out:
        raise _Skip("op has no out= form")
    compared = 0
    for i, sample, cpu, expected in _cpu_runs(op, dtype, max_samples):
        if not _is_tensors(expected):
            raise _Skip("output is not a tensor or a tuple of tensors")
        _OutCases(op, dtype, sample, cpu, expected).run(i)
        compared += 1
    return compared


def _variants(op):
    """(variants, in-place ones): method, in-place and operator forms, and the aliases'."""
    inplace = [op.inplace_variant, op.inplace_operator_variant]
    variants = [op.method_variant, op.inplace_variant, op.inplace_operator_variant]
    for a in op.aliases:
        variants += [a.op, a.method_variant, a.inplace_variant]
        inplace.append(a.inplace_variant)
    return [v for v in variants if v is not None], [v for v in inplace if v is not None]


def _check_inplace(v, sample, cpu, dtype):
    """An in-place variant: CPU's error where CPU refuses (a self that would be resized),
    else CPU's values, in self's own storage. Returns its result, or None when there is
    nothing more to compare."""
    from torch.testing._internal.common_utils import clone_input_helper

    mine, cpu_in = clone_input_helper(sample.input), clone_input_helper(cpu.input)
    want = _raises(lambda: v(cpu_in, *cpu.args, **cpu.kwargs))
    if isinstance(want, NotImplementedError):  # CPU has no kernel: no rule to hold accel to
        return None
    if sample.broadcasts_input or want is not None:
        got = _raises(lambda: v(mine, *sample.args, **sample.kwargs))
        if want is not None and not isinstance(got, type(want)):
            raise CheckFailed(f"CPU raises {_outcome(want)}, accel {_outcome(got)}")
        if want is None and got is not None:
            raise CheckFailed(f"accel raised {_outcome(got)}, CPU did not")
        if want is None:
            coverage._compare(mine, cpu_in, dtype, coverage.DEVICE)
        return None
    t = mine if isinstance(mine, torch.Tensor) else mine[0]
    ptr = t.data_ptr()
    res = v(mine, *sample.args, **sample.kwargs)
    torch.accel.synchronize()
    if t.data_ptr() != ptr:  # (a view op like t_ may change self's shape, not its storage)
        raise CheckFailed("moved self to other storage")
    return res


def _call_variant(v, sample, cpu):
    """A method or alias variant's result on accel; None when it raises on CPU as well (an
    alias CPU lacks a kernel for, as special.round in int64)."""
    try:
        res = v(sample.input, *sample.args, **sample.kwargs)
        torch.accel.synchronize()
        return res
    except Exception as e:  # noqa: BLE001
        if type(_raises(lambda: v(cpu.input, *cpu.args, **cpu.kwargs))) is type(e):
            return None
        raise


def check_variants(op, dtype, max_samples):
    variants, inplace = _variants(op)
    if not variants:
        raise _Skip("op has no method, in-place or alias variant")
    compared = 0
    for i, sample, cpu, expected in _cpu_runs(op, dtype, max_samples):
        first = sample.input if isinstance(sample.input, torch.Tensor) else sample.input[0]
        for v in variants:
            name = getattr(v, "__name__", repr(v))
            try:
                if v in inplace:
                    if isinstance(expected, torch.Tensor) and expected.dtype != first.dtype:
                        continue  # in-place cannot hold the promoted result
                    res = _check_inplace(v, sample, cpu, dtype)
                    if res is None:
                        continue
                else:
                    res = _call_variant(v, sample, cpu)
                    if res is None:
                        continue
                coverage.compare_with_reference(
                    op, cpu, _plain(res), _plain(expected), dtype, coverage._expected_device(sample)
                )
            except AssertionError as e:
                raise CheckFailed(f"sample {i}: {name}: {_first_line(e)[:200]}") from None
        compared += 1
    return compared


def _check_error_input(op, ei) -> bool:
    """False when CPU does not reject the error input as op_db says (not accel's to match);
    raises CheckFailed when CPU does and accel does not."""
    import re

    def matches(e):
        return isinstance(e, ei.error_type) and re.search(ei.error_regex, str(e))

    si = ei.sample_input
    got = _raises(lambda: op(si.input, *si.args, **si.kwargs))
    if matches(got):
        return True
    cpu = coverage.to_cpu(si)
    if not matches(_raises(lambda: op(cpu.input, *cpu.args, **cpu.kwargs))):
        return False
    raise CheckFailed(
        f"CPU raises {ei.error_type.__name__} /{ei.error_regex}/, accel {_outcome(got)}"
    )


def check_errors(op, dtype, max_samples):
    if op.error_inputs_func is None:
        raise _Skip("op has no error_inputs")
    checked = 0
    for i, ei in enumerate(op.error_inputs(coverage.DEVICE)):
        try:
            checked += _check_error_input(op, ei)
        except CheckFailed as e:
            raise CheckFailed(f"error input {i}: {e}") from None
    return checked


class _Skip(unittest.SkipTest):
    pass


_RUNNERS = {
    "noncontiguous": check_noncontiguous,
    "out": check_out,
    "variants": check_variants,
    "errors": check_errors,
}


def check_conformance(op, dtype: torch.dtype, max_samples: int = 0, checks=CHECKS) -> dict:
    """{check: {"status", "error"}} for ``op`` in ``dtype`` (see the module's docstring)."""
    results = {}
    cpu_ok = dtype in op.supported_dtypes("cpu")
    for check in checks:
        if not cpu_ok:
            results[check] = {"status": "skip", "error": "dtype not supported on CPU"}
            continue
        errors_dtype = next(d for d in DTYPES if d in op.supported_dtypes("cpu"))
        if check == "errors" and dtype != errors_dtype:
            results[check] = {
                "status": "skip",
                "error": f"error_inputs run once, in {coverage.dtype_name(errors_dtype)}",
            }
            continue
        marker = upstream_marker(op, check, dtype)
        if marker:
            results[check] = {"status": "skip", "error": marker}
            continue
        results[check] = _run_check(op, dtype, max_samples, check)
    return results


def _run_check(op, dtype, max_samples, check) -> dict:
    if check == "compare":
        r = coverage.check_op(op, dtype, max_samples)
        status = {"native": "pass", "fallback": "pass"}.get(r["status"], r["status"])
        return {"status": status, "error": r["error"]}
    mode = torch_accel.fallback_mode()
    torch_accel.set_fallback_mode("silent")
    try:
        with coverage._alarm(coverage.SAMPLE_TIMEOUT_S * 2), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            n = _RUNNERS[check](op, dtype, max_samples)
        if not n:
            return {"status": "skip", "error": "nothing to check (no sample CPU runs)"}
        return {"status": "pass", "error": ""}
    except unittest.SkipTest as e:  # ours, or a sample generator's
        return {"status": "skip", "error": str(e)}
    except Exception as e:  # noqa: BLE001  a failed check, an error on accel, the alarm
        msg = str(e).strip().splitlines() or [""]
        prefix = "" if isinstance(e, CheckFailed) else f"{type(e).__name__}: "
        return {"status": "fail", "error": (prefix + msg[0])[:300]}
    finally:
        torch_accel.set_fallback_mode(mode)
        torch_accel.reset_fallback_counts()

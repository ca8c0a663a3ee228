"""OpInfo conformance: PyTorch's op_db samples run on accel and on CPU, compared.

Every op x dtype gets one status:
  native    all samples match CPU, and none of them used the CPU fallback
  fallback  all samples match CPU, some went through the (counted) CPU fallback
  fail      an error or a mismatch on accel for a sample that CPU runs
  skip      CPU itself does not run the op for the dtype (or raises on every sample)

``check_op()`` is shared by ``python -m torch_accel coverage`` (``sweep()``, which writes
docs/op_coverage.{json,md}) and tests/test_opinfo.py (a fast slice, plus a regression check
against the checked-in manifest), and by devtools/conformance.py for its "compare" check.
An op x dtype CPU does not support (CUDA-only ops, complex-only ops in float32) comes out as
"skip". The manifest covers float32, bfloat16, float16, complex64 and int64. One op cannot
take the sweep down: exceptions
are caught, a Python-level hang is cut by a per-sample alarm, and sweep() runs the ops in a
worker process that is replaced when an op crashes it.
"""

import json
import math
import os
import select
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

import torch_accel

DEVICE = "accel"
STATUSES = ("native", "fallback", "fail", "skip")
SAMPLE_TIMEOUT_S = 60

# Ops whose output is not a function of their input values (random draws, dropout in their
# samples, uninitialized memory, views reaching storage outside their input), so accel and
# a CPU copy of the input cannot be compared value by value.
UNCOMPARABLE = {
    "as_strided.partial_views",
    "bernoulli",
    "cauchy",
    "exponential",
    "geometric",
    "log_normal",
    "multinomial",
    "normal",
    "uniform",
    "rand_like",
    "randn_like",
    "randint",
    "randint_like",
    "randn",
    "rand",
    "empty",
    "empty_like",
    "empty_strided",
    "empty_permuted",
    "new_empty",
    "new_empty_strided",
    "nn.functional.dropout",
    "nn.functional.dropout2d",
    "nn.functional.dropout3d",
    "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout",
    "nn.functional.rrelu",
    "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d",
    "nn.functional.multi_head_attention_forward",
    "nn.functional.scaled_dot_product_attention",
}


# Randomized ops that draw with torch.randn on their input's device (svd_lowrank's and
# pca_lowrank's random projection; OpInfo seeds each call): on the CPU side they draw on accel,
# from the same seed, so both sides project alike and differ only by rounding.
_SAME_DRAWS = {"svd_lowrank", "pca_lowrank"}


class _DrawOnAccel(TorchFunctionMode):
    def __init__(self, draw_dtype=None):
        super().__init__()
        self.draw_dtype = draw_dtype  # the float64 reference draws the sample's numbers

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.randn and torch.device(kwargs.get("device") or "cpu").type == "cpu":
            dtype = kwargs.get("dtype")
            drawn = func(*args, **{**kwargs, "device": DEVICE, "dtype": self.draw_dtype or dtype})
            return drawn.cpu().to(dtype or drawn.dtype)
        return func(*args, **kwargs)


def cpu_call(op, sample, draw_dtype=None):
    """``op`` on the CPU ``sample`` (the ops of _SAME_DRAWS drawing on accel, in
    ``draw_dtype`` when given: a float64 reference projects as the sample did)."""
    if op.name not in _SAME_DRAWS:
        return op(sample.input, *sample.args, **sample.kwargs)
    with _DrawOnAccel(draw_dtype):
        return op(sample.input, *sample.args, **sample.kwargs)


def parse_dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name.strip(), None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"not a torch dtype: {name!r}")
    return dtype


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def op_key(op) -> str:
    """The manifest's name for an OpInfo: "name" or "name.variant"."""
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def considered_ops(names=None) -> list:
    """op_db minus the ops that cannot be compared: random, sparse-only, CUDA-only ones."""
    from torch.testing._internal.common_methods_invocations import op_db

    ops = []
    for op in op_db:
        if (
            op.name in UNCOMPARABLE
            or op_key(op) in UNCOMPARABLE
            or op.name.startswith(("sparse.", "to_sparse"))
        ):
            continue
        if names and op_key(op) not in names and op.name not in names:
            continue
        ops.append(op)
    return ops


def to_cpu(sample):
    """A CPU copy of an OpInfo SampleInput made on accel: tensors copied (strides kept for
    dense layouts) and device arguments of factory functions pointed at the CPU. The copy
    shares no memory with the original, so an in-place op on one leaves the other intact; a
    tensor passed twice (as out= of its own input) is one tensor in the copy too."""
    from torch.testing._internal.opinfo.core import SampleInput

    copies = {}

    def move(x):
        if isinstance(x, torch.Tensor):
            if id(x) not in copies:
                copies[id(x)] = x.detach().to("cpu", copy=True)
            return copies[id(x)]
        if isinstance(x, torch.device) and x.type == DEVICE:
            return torch.device("cpu")
        if isinstance(x, str) and (x == DEVICE or x.startswith(DEVICE + ":")):
            return "cpu"  # a device given as a string
        return x

    return SampleInput(
        tree_map(move, sample.input),
        args=tree_map(move, sample.args),
        kwargs=tree_map(move, sample.kwargs),
    )


@contextmanager
def _alarm(seconds: int):
    """Raises TimeoutError in the main thread after ``seconds`` (no-op elsewhere)."""

    def on_alarm(signum, frame):
        raise TimeoutError(f"op ran past {seconds} s")

    try:
        old = signal.signal(signal.SIGALRM, on_alarm)
    except ValueError:  # not the main thread
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _tolerance(dtype: torch.dtype) -> dict:
    """torch.testing.assert_close's defaults for the dtype (as OpInfo tests use them)."""
    rtol, atol = {
        torch.float16: (1e-3, 1e-5),
        torch.bfloat16: (1.6e-2, 1e-5),
        torch.float32: (1.3e-6, 1e-5),
        torch.float64: (1e-7, 1e-7),
    }.get(dtype, (0, 0))
    return dict(rtol=rtol, atol=atol)


def _expected_device(sample) -> str:
    """Where the op's outputs belong: the device argument the sample passes, if any (as in
    zeros_like(x, device="cpu")), else accel when a tensor is there, else the CPU (as for
    arange(5))."""

    def is_device(x):
        return isinstance(x, torch.device) or (
            isinstance(x, str) and (x in ("cpu", DEVICE) or x.startswith(("cpu:", DEVICE + ":")))
        )

    given = sample.kwargs.get("device")
    if given is None:
        given = next((x for x in tree_flatten(sample.args)[0] if is_device(x)), None)
    if given is not None and is_device(given):
        return torch.device(given).type
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return (
        DEVICE
        if any(isinstance(x, torch.Tensor) and x.device.type == DEVICE for x in leaves)
        else "cpu"
    )


def _compare(actual, expected, dtype: torch.dtype, device: str) -> None:
    """Raises AssertionError when accel's output differs from CPU's or is not on
    ``device``."""
    got, got_spec = tree_flatten(actual)
    want, want_spec = tree_flatten(expected)
    if got_spec != want_spec:
        raise AssertionError(f"output structure {got_spec} != CPU's {want_spec}")
    for a, e in zip(got, want):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                raise AssertionError(f"got {type(a).__name__}, CPU gave a tensor")
            if a.device.type != device:
                raise AssertionError(f"output on {a.device}, expected {device}")
            # complex: the tolerance of its real type, as torch.testing's defaults.
            tol = _tolerance(
                e.dtype.to_real() if e.is_complex() else e.dtype if e.is_floating_point() else dtype
            )
            torch.testing.assert_close(a.cpu(), e, equal_nan=True, **tol)
        elif isinstance(e, float) and isinstance(a, float):
            if not (
                a == e or (math.isnan(a) and math.isnan(e)) or abs(a - e) <= 1e-5 + 1e-5 * abs(e)
            ):
                raise AssertionError(f"{a} != CPU's {e}")
        elif a != e:
            raise AssertionError(f"{a!r} != CPU's {e!r}")


# Accel may be at least as accurate as CPU without matching it (it accumulates bf16/f16 in
# float where CPU rounds each step): as test_ops.py's _ref_test_helper, a sample that fails
# the direct comparison passes iff accel's error against a float64 CPU reference is no larger
# than CPU's own error, with this slack (relative, plus the dtype's atol).
REFERENCE_SLACK = 0.1
_UPCAST = {
    torch.float16: torch.float64,
    torch.bfloat16: torch.float64,
    torch.float32: torch.float64,
    torch.complex64: torch.complex128,
}
# Ops whose outputs are counts (histc's bins: CPU rounds the bin arithmetic in half and
# bfloat16, CUDA and accel compute it in float): accel's histogram may differ from CPU's only
# by being nearer the float64 reference's, in counts moved, with no slack.
_COUNTS = {"histc"}
# Outputs CUDA returns in float32 for half and bfloat16 inputs where CPU returns the input's
# dtype (native_layer_norm's mean and rstd are CUDA's accumulate type): accel returns what
# CUDA does, and they are compared rounded to CPU's dtype. {op name: flattened positions}.
_FLOAT_ON_CUDA = {"native_layer_norm": (1, 2)}


def _upcast(sample):
    """``sample`` (on the CPU) with its floating and complex tensors in double precision."""

    def up(x):
        if isinstance(x, torch.Tensor) and x.dtype in _UPCAST:
            return x.to(_UPCAST[x.dtype])
        return x

    return sample.transform(up)


def _cuda_dtypes(op, actual, expected):
    """``actual`` with the outputs _FLOAT_ON_CUDA lists for ``op`` rounded to CPU's dtype;
    raises AssertionError when one is not float32, as CUDA's is."""
    if op.name not in _FLOAT_ON_CUDA:
        return actual
    got, spec = tree_flatten(actual)
    want, _ = tree_flatten(expected)
    for i in _FLOAT_ON_CUDA[op.name]:
        a, e = got[i], want[i]
        if isinstance(e, torch.Tensor) and e.dtype in (torch.float16, torch.bfloat16):
            if a.dtype != torch.float32:
                raise AssertionError(f"output {i} is {a.dtype}; CUDA returns torch.float32")
            got[i] = a.to(e.dtype)
    return tree_unflatten(got, spec)


def _error(x, r, keep, total: bool = False) -> float:
    """The largest (``total``: the summed) |x - r| over ``keep``; equal values, infinities
    included, are no error."""
    d = torch.where(x == r, 0.0, (x - r).abs())[keep]
    if not d.numel():
        return 0.0
    return (d.sum() if total else d.max()).item()


def _reference_close(
    actual, expected, reference, dtype: torch.dtype, device: str, counts: bool = False
) -> None:
    """Raises AssertionError unless each floating output of accel is no farther from the
    float64 ``reference`` than CPU's (``counts``: in total, with no slack); other outputs must
    match CPU's exactly as _compare."""
    got, spec = tree_flatten(actual)
    want, _ = tree_flatten(expected)
    ref, ref_spec = tree_flatten(reference)
    if ref_spec != spec:
        raise AssertionError(f"reference structure {ref_spec} != {spec}")
    for a, e, r in zip(got, want, ref):
        if not (isinstance(e, torch.Tensor) and e.dtype in _UPCAST and isinstance(a, torch.Tensor)):
            _compare(a, e, dtype, device)
            continue
        if a.shape != e.shape or a.dtype != e.dtype or a.device.type != device:
            _compare(a, e, dtype, device)  # raises with the reason
        a64, e64, r = a.cpu().to(r.dtype), e.to(r.dtype), r.to(e.device)
        if not torch.equal(a64.isnan(), e64.isnan()):
            raise AssertionError("NaNs differ from CPU's")
        finite = ~e64.isnan()
        ours, cpus = _error(a64, r, finite, counts), _error(e64, r, finite, counts)
        atol = _tolerance(e.dtype.to_real() if e.is_complex() else e.dtype)["atol"]
        slack, atol = (0.0, 0.0) if counts else (REFERENCE_SLACK, atol)
        if not ours <= cpus * (1 + slack) + atol:
            raise AssertionError(f"error vs float64 {ours:.3g} > CPU's {cpus:.3g}")


def check_op(
    op, dtype: torch.dtype, max_samples: int = 0, timeout_s: int = SAMPLE_TIMEOUT_S
) -> dict:
    """Runs up to ``max_samples`` (0: all) OpInfo samples of ``op`` on accel and CPU.
    Returns {"status", "samples" (compared), "by_reference" (of those, how many passed only
    by the float64-reference rule), "fallback" ({op: calls}), "error"}."""
    result = {"status": "skip", "samples": 0, "by_reference": 0, "fallback": {}, "error": ""}
    if dtype not in op.supported_dtypes("cpu"):
        result["error"] = "dtype not supported on CPU"
        return result
    fallback: dict = {}
    mode = torch_accel.fallback_mode()
    torch_accel.set_fallback_mode("silent")
    i = 0
    try:
        # Samples are made on accel, so arguments an op wants on the CPU (tensor_split's
        # indices, ...) stay there, and copied to the CPU for the reference.
        samples = iter(op.sample_inputs(DEVICE, dtype, requires_grad=False))
        while not max_samples or i < max_samples:
            with _alarm(timeout_s):  # per sample: a guard against hangs, not a time budget
                sample = next(samples, None)
                if sample is None:
                    break
                compared = _run_sample(op, sample, dtype, fallback)
            result["samples"] += bool(compared)
            result["by_reference"] += compared == "reference"
            i += 1
    except Exception as e:  # a mismatch, an error on accel, or the alarm
        result.update(status="fail", error=_describe(e, i))
    finally:
        torch_accel.set_fallback_mode(mode)
        torch_accel.reset_fallback_counts()
    result["fallback"] = dict(sorted(fallback.items()))
    if result["status"] != "fail" and result["samples"]:
        result["status"] = "fallback" if fallback else "native"
    elif result["status"] == "skip":
        result["error"] = "CPU raised on every sample"
    return result


# Ops whose indices are free among equal values (a sort that was not asked to be stable, topk,
# and the selections CPU makes by quickselect or an unstable sort: kthvalue, median, nanmedian,
# mode): CPU's own choice
# among ties is one of many right answers, so an index output is checked by the values it
# selects from the input. {name: (position of dim among the args, default dim, position of
# keepdim for a reduction or None)}; a default dim of None: without a dim there are no indices.
_TIE_FREE_INDICES = {
    "sort": (0, -1, None),
    "argsort": (0, -1, None),
    "topk": (1, -1, None),
    "kthvalue": (1, -1, 2),
    "median": (0, None, 1),
    "nanmedian": (0, None, 1),
    "mode": (0, -1, 1),
}


def _ties_free(op, sample) -> tuple[int, bool] | None:
    """(dim, whether the indices lack dim: a reduction without keepdim) along which
    ``sample``'s index output may order ties freely, else None."""
    if op.name not in _TIE_FREE_INDICES or sample.kwargs.get("stable", False):
        return None
    position, default, keepdim_at = _TIE_FREE_INDICES[op.name]
    dim = (
        sample.args[position] if len(sample.args) > position else sample.kwargs.get("dim", default)
    )
    if dim is None:
        return None
    if keepdim_at is None:
        return dim, False
    keepdim = (
        sample.args[keepdim_at]
        if len(sample.args) > keepdim_at
        else sample.kwargs.get("keepdim", False)
    )
    return dim, not keepdim


def _selected(source: torch.Tensor, dim: int, indices: torch.Tensor, reduced: bool = False):
    """What ``indices`` select from ``source`` along ``dim`` (a 0-dim input selects itself);
    ``reduced``: the indices lack dim (one per slice)."""
    if source.dim() == 0:
        return source
    if reduced:
        return source.gather(dim, indices.unsqueeze(dim)).squeeze(dim)
    return source.gather(dim, indices)


def _run_sample(op, sample, dtype: torch.dtype, fallback: dict) -> bool | str:
    """Runs one sample on CPU and accel and compares; adds the fallback calls it made to
    ``fallback``. False when CPU rejects the sample (nothing to compare with), "reference"
    when it passed only by the float64-reference rule, else True; raises when accel errs or
    differs."""
    on_cpu = to_cpu(sample)
    try:
        expected = cpu_call(op, on_cpu)
    except TimeoutError:
        raise
    except Exception:
        return False
    torch_accel.reset_fallback_counts()
    try:
        actual = op(sample.input, *sample.args, **sample.kwargs)
        torch.accel.synchronize()  # an asynchronous error belongs to this op
    finally:
        for name, calls in torch_accel.fallback_counts().items():
            fallback[name] = fallback.get(name, 0) + calls
    free = _ties_free(op, sample)
    if free is not None:
        dim, reduced = free
        source = on_cpu.input
        if isinstance(expected, torch.Tensor):  # argsort: the indices alone
            actual, expected = (
                _selected(source, dim, actual.cpu()).to(actual.device),
                _selected(source, dim, expected),
            )
        else:  # (values, indices)
            chosen = _selected(source, dim, actual[1].cpu(), reduced).to(actual[1].device)
            actual = (actual[0], chosen)
            expected = (expected[0], _selected(source, dim, expected[1], reduced))
    return compare_with_reference(
        op, on_cpu, actual, expected, dtype, _expected_device(sample), reference=free is None
    )


def compare_with_reference(
    op, on_cpu, actual, expected, dtype: torch.dtype, device: str, reference: bool = True
) -> bool | str:
    """True when ``actual`` (accel's output for the CPU sample ``on_cpu``) matches CPU's
    ``expected``; "reference" when it passes only by the float64-reference rule (unless
    ``reference`` is False); raises AssertionError otherwise."""
    actual = _cuda_dtypes(op, actual, expected)
    try:
        _compare(actual, expected, dtype, device)
        return True
    except AssertionError as direct:
        if not reference or dtype not in _UPCAST:
            raise
        up = _upcast(on_cpu)
        try:
            float64 = cpu_call(op, up, draw_dtype=dtype)
        except Exception:
            raise direct from None  # no float64 reference: the direct comparison stands
        try:
            _reference_close(actual, expected, float64, dtype, device, op.name in _COUNTS)
        except AssertionError as e:
            raise AssertionError(f"{direct}\n(float64 reference: {e})") from None
        return "reference"


def _describe(e: Exception, sample: int) -> str:
    """One line: the exception's first line, plus assert_close's greatest differences."""
    lines = str(e).strip().splitlines() or [""]
    detail = [ln.strip() for ln in lines[1:] if ln.strip().startswith("Greatest")]
    return f"sample {sample}: {type(e).__name__}: " + " ".join([lines[0][:300]] + detail)


def sweep(
    dtypes,
    max_samples: int = 0,
    names="",
    progress: bool = False,
    item_timeout_s: int = 900,
    task: str = "compare",
    keys=None,
):
    """{op_key: {dtype_name: result}} for every considered op (or the op keys ``keys``), and
    the seconds. ``task`` "compare": check_op's result; "conformance":
    conformance.check_conformance's {check: result}.

    The ops run in a worker process, so an op that crashes the interpreter (a segfault)
    or hangs in native code is recorded as "fail" and the sweep goes on in a new worker."""
    wanted = {n.strip() for n in names.split(",") if n.strip()} if names else None
    start = time.monotonic()
    ops = [op for op in considered_ops(wanted) if keys is None or op_key(op) in keys]
    pending = [(op_key(op), dtype_name(d)) for op in ops for d in dtypes]
    results: dict = {}
    while pending:
        running, finished = _run_worker(
            pending, max_samples, item_timeout_s, results, progress, task
        )
        if running:  # the worker died or hung in it
            key, d = running
            crashed = {"status": "fail", "samples": 0, "fallback": {}, "error": finished}
            if task == "conformance":
                from torch_accel.devtools import conformance

                crashed = {c: dict(crashed) for c in conformance.CHECKS}
            results.setdefault(key, {})[d] = crashed
            if progress:
                print(f"{key:45s} {d:9s} fail     {finished}", flush=True)
        pending = [(k, d) for k, d in pending if d not in results.get(k, {})]
    return results, time.monotonic() - start


def _run_worker(items, max_samples, item_timeout_s, results, progress, task="compare"):
    """Runs ``items`` in one worker process, filling ``results``. Returns (the item it was
    running when it died or hung, why) or (None, "")."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from torch_accel.devtools.coverage import _worker; _worker()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    proc.stdin.write(json.dumps({"items": items, "samples": max_samples, "task": task}).encode())
    proc.stdin.close()
    running, buf, fd = None, b"", proc.stdout.fileno()
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], item_timeout_s)
            if not ready:
                proc.kill()
                return running, f"hung: no result in {item_timeout_s} s"
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                msg = json.loads(line)
                running = (msg["key"], msg["dtype"])
                if "result" in msg:
                    running = None
                    results.setdefault(msg["key"], {})[msg["dtype"]] = r = msg["result"]
                    if progress:
                        print(f"{msg['key']:45s} {msg['dtype']:9s} {_brief(r)}", flush=True)
    finally:
        rc = proc.wait()
    return running, f"the process died (exit status {rc})"


def _worker():
    """The worker side of sweep(): items from stdin, one JSON line out per start and result."""
    import warnings

    warnings.simplefilter("ignore")  # the samples' own warnings say nothing about accel
    job = json.load(sys.stdin)
    ops = {op_key(op): op for op in considered_ops()}
    check = check_op
    if job.get("task") == "conformance":
        from torch_accel.devtools.conformance import check_conformance as check
    for key, d in job["items"]:
        print(json.dumps({"key": key, "dtype": d}), flush=True)
        result = check(ops[key], parse_dtype(d), job["samples"])
        print(json.dumps({"key": key, "dtype": d, "result": result}), flush=True)


def _brief(r: dict) -> str:
    """One progress line's status: check_op's, or each conformance check's."""
    if "status" in r:
        return f"{r['status']:8s} {r['error']}"
    return " ".join(f"{c}={v['status']}" for c, v in r.items())


def _percent(n: int, total: int) -> float:
    return round(100.0 * n / total, 1) if total else 0.0


def elementwise_keys() -> set:
    """The elementwise ops (unary and binary ufuncs, comparisons among them): the part of
    op_db that issue 12 wants native in complex64 too."""
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo

    return {
        op_key(op) for op in considered_ops() if isinstance(op, (UnaryUfuncInfo, BinaryUfuncInfo))
    }


def totals(results: dict) -> dict:
    """Per dtype: the count of each status, and % passing / % native of considered ops
    (considered = not skipped), and % native of the considered elementwise ops."""
    out = {}
    dtypes = sorted({d for row in results.values() for d in row})
    elementwise = elementwise_keys()
    for d in dtypes:
        counts = {s: 0 for s in STATUSES}
        ew = {s: 0 for s in STATUSES}
        by_reference = 0  # passing ops with a sample that passed only by the float64 rule
        for key, row in results.items():
            if d in row:
                counts[row[d]["status"]] += 1
                by_reference += row[d]["status"] != "fail" and row[d].get("by_reference", 0) > 0
                if key in elementwise:
                    ew[row[d]["status"]] += 1
        considered = counts["native"] + counts["fallback"] + counts["fail"]
        out[d] = dict(
            counts,
            considered=considered,
            by_reference=by_reference,
            passing_pct=_percent(counts["native"] + counts["fallback"], considered),
            native_pct=_percent(counts["native"], considered),
            elementwise_native_pct=_percent(
                ew["native"], ew["native"] + ew["fallback"] + ew["fail"]
            ),
        )
    return out


def write_report(results: dict, out_dir: str, max_samples: int, seconds: float) -> str:
    """Writes op_coverage.json and op_coverage.md into ``out_dir``; returns the totals text."""
    os.makedirs(out_dir, exist_ok=True)
    tot = totals(results)
    doc = {
        "about": "OpInfo conformance of accel vs CPU (python -m torch_accel coverage)",
        "torch": torch.__version__,
        "driver": torch_accel.driver(),
        "samples_per_op": max_samples or "all",
        "seconds": round(seconds, 1),
        "totals": tot,
        "ops": dict(sorted(results.items())),
    }
    with open(os.path.join(out_dir, "op_coverage.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    dtypes = list(tot)
    summary = "\n".join(
        f"{d}: {t['passing_pct']}% passing ({t['native']} native + {t['fallback']} fallback), "
        f"{t['native_pct']}% native ({t['elementwise_native_pct']}% of elementwise ops), "
        f"{t['fail']} fail of {t['considered']} considered ({t['skip']} skipped); "
        f"{t['by_reference']} pass only by the float64-reference rule"
        for d, t in tot.items()
    )
    lines = [
        "# Op coverage (OpInfo)",
        "",
        "Generated by `python -m torch_accel coverage` (`make coverage`): PyTorch's OpInfo "
        "samples run on accel and on CPU and compared with torch.testing's default "
        "tolerances for the dtype.",
        "",
        f"torch {torch.__version__}, driver `{torch_accel.driver()}`, "
        f"samples per op: {max_samples or 'all'}, sweep time {seconds:.0f} s.",
        "",
        "**native**: matches CPU with no CPU fallback; **fallback**: matches CPU through the "
        "counted CPU fallback; **fail**: error or mismatch on accel; **skip**: CPU does not "
        "run it. Percentages are of considered (not skipped) ops; % native elementwise is of "
        "the considered unary and binary ufuncs (comparisons among them). **by float64 "
        "ref**: passing ops with a sample that differed from CPU but is no farther than CPU "
        "from a float64 CPU reference (as test_ops.py's reference tests).",
        "",
        "| dtype | native | fallback | fail | skip | by float64 ref | % passing | % native "
        "| % native elementwise |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d, t in tot.items():
        lines.append(
            f"| {d} | {t['native']} | {t['fallback']} | {t['fail']} | {t['skip']} "
            f"| {t['by_reference']} | {t['passing_pct']} | {t['native_pct']} "
            f"| {t['elementwise_native_pct']} |"
        )
    lines += ["", "| op | " + " | ".join(dtypes) + " |", "|---|" + "---|" * len(dtypes)]
    for key, row in sorted(results.items()):
        cells = []
        for d in dtypes:
            r = row.get(d)
            cells.append(
                ""
                if r is None
                else r["status"]
                + (
                    f" ({', '.join(r['fallback'])})"
                    if r["status"] == "fallback" and len(r["fallback"]) <= 3
                    else ""
                )
            )
        lines.append(f"| `{key}` | " + " | ".join(cells) + " |")
    with open(os.path.join(out_dir, "op_coverage.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return summary


def load_manifest(path: str) -> dict:
    with open(path) as f:
        return json.load(f)["ops"]


def regression(recorded: dict | None, now: dict) -> str | None:
    """Why ``now`` is worse than the manifest's entry, or None. A pass that became a fail,
    or a native op that now uses the fallback, is a regression. Comparing a slice (the first
    samples) against a full sweep stays sound: a slice of a passing run passes."""
    if not recorded:
        return None
    was, is_ = recorded["status"], now["status"]
    if was in ("native", "fallback") and is_ == "fail":
        return f"was {was}, now fails: {now['error']}"
    if was == "native" and is_ == "fallback":
        return f"was native, now falls back to CPU for {sorted(now['fallback'])}"
    return None

"""OpInfo conformance, fast slice: the first samples of every op_db op on accel vs CPU, in
float32 and bfloat16, checked against the manifest docs/op_coverage.json.

A regression fails: an op x dtype the manifest records as native or fallback that now fails,
or a native one that now uses the CPU fallback. Ops that fail without a passing record are
expected failures (their error is shown with -rx). The full sweep is `make coverage`.

Under a torch other than the manifest's (major.minor), ops may decompose differently (e.g.
torch 2.11's group_norm goes through native_batch_norm): native -> fallback is then an
expected failure naming both versions; a result that became wrong still fails.

The loop is our own pytest parametrization over op_db rather than PyTorch's
instantiate_device_type_tests (which does support PrivateUse1): each op x dtype needs a
status, with the fallback counted around the call, computed by the same code that writes
the manifest, and in a worker process, so that an op that segfaults is a "fail" rather than
the end of the session.

The second half runs what PyTorch's TestCommon checks (torch_accel/devtools/conformance.py:
compare, noncontiguous, out=, variants, error_inputs) in float32, bfloat16, float16,
complex64, int64 and bool. CI runs a stratified slice (every CONFORMANCE_STRIDE-th op, one
sample each); TORCH_ACCEL_CONFORMANCE=full (`make coverage`) runs every op and sample, and
then also fails on a listed op x dtype (not a "*" line) that passes. A failure must be listed,
with its reason, in tests/conformance_expected_failures.txt, or the test fails.
"""

import json
import os

import pytest
import torch

from conftest import ROOT
from torch_accel.devtools import conformance, coverage

FAST_SAMPLES = 2
DTYPES = [torch.float32, torch.bfloat16]
MANIFEST_PATH = os.path.join(ROOT, "docs", "op_coverage.json")
MANIFEST = coverage.load_manifest(MANIFEST_PATH) if os.path.exists(MANIFEST_PATH) else {}
OPS = coverage.considered_ops()


def _minor(version: str) -> tuple:
    return tuple(int(p) for p in version.split("+")[0].split(".")[:2])


def _manifest_torch() -> str:
    if not os.path.exists(MANIFEST_PATH):
        return torch.__version__
    with open(MANIFEST_PATH) as f:
        return json.load(f)["torch"]


MANIFEST_TORCH = _manifest_torch()
SAME_TORCH = _minor(MANIFEST_TORCH) == _minor(torch.__version__)


@pytest.fixture(scope="module")
def fast_slice():
    """The slice's results, from sweep()'s worker process: an op that crashes it is a
    "fail" there, not the end of this test session."""
    return coverage.sweep(DTYPES, FAST_SAMPLES)[0]


@pytest.mark.parametrize("dtype", DTYPES, ids=coverage.dtype_name)
@pytest.mark.parametrize("op", OPS, ids=coverage.op_key)
def test_op_against_manifest(op, dtype, fast_slice):
    key, d = coverage.op_key(op), coverage.dtype_name(dtype)
    now = fast_slice[key][d]
    recorded = MANIFEST.get(key, {}).get(d)
    why = coverage.regression(recorded, now)
    if why and not SAME_TORCH and recorded["status"] == "native" and now["status"] == "fallback":
        pytest.xfail(
            f"{why} (native with the manifest's torch {MANIFEST_TORCH}; this torch "
            f"{torch.__version__} decomposes it differently)"
        )
    assert why is None, f"{key} {d}: {why}"
    if now["status"] == "fail":
        pytest.xfail(f"recorded as {recorded['status'] if recorded else 'absent'}: {now['error']}")
    if now["status"] == "skip":
        pytest.skip(now["error"])


def test_op_keys_are_unique():
    keys = [coverage.op_key(op) for op in OPS]
    assert len(keys) == len(set(keys))


def test_regression_rules():
    native = {"status": "native", "fallback": {}, "error": ""}
    fallback = {"status": "fallback", "fallback": {"aten::cumprod.out": 1}, "error": ""}
    fail = {"status": "fail", "fallback": {}, "error": "sample 0: boom"}
    assert coverage.regression(native, fail) and coverage.regression(fallback, fail)
    assert "cumprod" in coverage.regression(native, fallback)
    assert coverage.regression(fallback, native) is None  # an improvement
    assert coverage.regression(fail, native) is None
    assert coverage.regression(None, fail) is None  # a new op has no record


def test_check_op_catches_a_wrong_result(monkeypatch):
    # An op whose accel result is off by one must be classified "fail", not pass.
    op = next(op for op in OPS if coverage.op_key(op) == "add")
    real = op.op

    def wrong_on_accel(a, b, **kw):
        r = real(a, b, **kw)
        return r + 1 if r.device.type == coverage.DEVICE else r

    monkeypatch.setattr(op, "op", wrong_on_accel)
    result = coverage.check_op(op, torch.float32, 1)
    assert result["status"] == "fail" and "not close" in result["error"]


def _add_off_by(monkeypatch, cpu_off: float, accel_off: float):
    # "add" whose bfloat16 result is off by cpu_off on the CPU and accel_off on accel; the
    # float64 reference (CPU, upcast inputs) stays exact.
    op = next(op for op in OPS if coverage.op_key(op) == "add")
    real = op.op

    def off(a, b, **kw):
        r = real(a, b, **kw)
        if r.dtype != torch.bfloat16:
            return r
        return r + (accel_off if r.device.type == coverage.DEVICE else cpu_off)

    monkeypatch.setattr(op, "op", off)
    return op


def test_float64_reference_accepts_a_result_closer_than_cpus(monkeypatch):
    # Differs from CPU beyond bf16's tolerance, but is nearer the float64 truth: passes, and
    # is counted as passing only by the rule.
    op = _add_off_by(monkeypatch, cpu_off=4.0, accel_off=0.0)
    result = coverage.check_op(op, torch.bfloat16, 1)
    assert result["status"] == "native", result["error"]
    assert result["by_reference"] == 1
    rows = {"add": {"bfloat16": result}}
    assert coverage.totals(rows)["bfloat16"]["by_reference"] == 1


def test_float64_reference_rejects_a_wrong_result(monkeypatch):
    # Farther from the float64 truth than CPU (beyond the slack): still a failure.
    op = _add_off_by(monkeypatch, cpu_off=0.0, accel_off=4.0)
    result = coverage.check_op(op, torch.bfloat16, 1)
    assert result["status"] == "fail" and "not close" in result["error"]
    op = _add_off_by(monkeypatch, cpu_off=2.0, accel_off=4.0)
    result = coverage.check_op(op, torch.bfloat16, 1)
    assert result["status"] == "fail"


def test_float64_reference_slack():
    ref = torch.tensor([1.0, 2.0], dtype=torch.float64)
    cpu = (ref + 0.5).to(torch.bfloat16)
    near = (ref - 0.5 * (1 + coverage.REFERENCE_SLACK) + 0.01).to(torch.bfloat16)
    coverage._reference_close(near.to("accel"), cpu, ref, torch.bfloat16, "accel")
    far = (ref - 1.0).to(torch.bfloat16)
    with pytest.raises(AssertionError, match="float64"):
        coverage._reference_close(far.to("accel"), cpu, ref, torch.bfloat16, "accel")
    nan = torch.tensor([float("nan"), 2.0], dtype=torch.bfloat16)
    with pytest.raises(AssertionError, match="NaN"):
        coverage._reference_close(nan.to("accel"), cpu, ref, torch.bfloat16, "accel")


def test_float64_reference_takes_equal_infinities_as_exact():
    # masked log_softmax: -inf where masked on all three sides; inf - inf must not be a NaN
    # error that fails every such sample.
    ref = torch.tensor([float("-inf"), 1.0], dtype=torch.float64)
    cpu = torch.tensor([float("-inf"), 1.5], dtype=torch.bfloat16)
    near = ref.to(torch.bfloat16)
    coverage._reference_close(near.to("accel"), cpu, ref, torch.bfloat16, "accel")
    far = torch.tensor([float("-inf"), 3.0], dtype=torch.bfloat16)
    with pytest.raises(AssertionError, match="float64"):
        coverage._reference_close(far.to("accel"), cpu, ref, torch.bfloat16, "accel")


def test_counts_pass_only_nearer_the_float64_histogram():
    # Counts are judged by the counts moved in total, with no slack: a histogram as far from
    # the float64 one as CPU's in its worst bin, but farther in total, fails.
    ref = torch.tensor([3.0, 2.0, 0.0], dtype=torch.float64)
    cpu = torch.tensor([2.0, 3.0, 0.0], dtype=torch.bfloat16)  # one count moved
    exact = ref.to(torch.bfloat16).to("accel")
    coverage._reference_close(exact, cpu, ref, torch.bfloat16, "accel", counts=True)
    farther = torch.tensor([4.0, 1.0, 1.0], dtype=torch.bfloat16).to("accel")
    coverage._reference_close(farther, cpu, ref, torch.bfloat16, "accel")  # the values' rule
    with pytest.raises(AssertionError, match="float64"):
        coverage._reference_close(farther, cpu, ref, torch.bfloat16, "accel", counts=True)


def _histc_moving_a_count(monkeypatch, on: str):
    # histc whose bfloat16 result on device ``on`` has one count moved to the next bin; the
    # float64 reference stays exact.
    op = next(op for op in OPS if coverage.op_key(op) == "histc")
    real = op.op

    def moved(x, *args, **kw):
        r = real(x, *args, **kw)
        full = (r > 0).nonzero()
        if r.dtype != torch.bfloat16 or r.device.type != on or not len(full) or len(r) < 2:
            return r
        i = full[0].item()
        r = r.clone()
        r[i] -= 1
        r[i + 1 if i + 1 < len(r) else i - 1] += 1
        return r

    monkeypatch.setattr(op, "op", moved)
    return op


def test_histc_passes_nearer_the_float64_histogram_than_cpu(monkeypatch):
    result = coverage.check_op(_histc_moving_a_count(monkeypatch, "cpu"), torch.bfloat16, 8)
    assert result["status"] == "native" and result["by_reference"] > 0, result["error"]
    monkeypatch.undo()
    result = coverage.check_op(_histc_moving_a_count(monkeypatch, "accel"), torch.bfloat16, 8)
    assert result["status"] == "fail" and "not close" in result["error"]


def test_float_statistics_as_cuda_returns_them(monkeypatch):
    # native_layer_norm's mean and rstd come back in float32 for bfloat16 inputs, as on CUDA
    # (CPU returns bfloat16): compared rounded to CPU's dtype; CPU's dtype or a wrong value
    # fails.
    op = next(op for op in OPS if coverage.op_key(op) == "native_layer_norm")
    result = coverage.check_op(op, torch.bfloat16, 3)
    assert result["status"] == "native", result["error"]
    real = op.op

    def stats_in_input_dtype(x, *args, **kw):
        y, mean, rstd = real(x, *args, **kw)
        return y, mean.to(x.dtype), rstd.to(x.dtype)

    monkeypatch.setattr(op, "op", stats_in_input_dtype)
    result = coverage.check_op(op, torch.bfloat16, 3)
    assert result["status"] == "fail" and "CUDA returns torch.float32" in result["error"]

    def wrong_mean(x, *args, **kw):
        y, mean, rstd = real(x, *args, **kw)
        return y, mean + (1 if x.device.type == coverage.DEVICE else 0), rstd

    monkeypatch.setattr(op, "op", wrong_mean)
    result = coverage.check_op(op, torch.bfloat16, 3)
    assert result["status"] == "fail" and "not close" in result["error"]


@pytest.mark.parametrize("name", ["svd_lowrank", "pca_lowrank"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
def test_randomized_ops_project_alike_on_both_sides(name, dtype):
    # Their random projection is drawn by torch.randn on the input's device: the CPU side draws
    # on accel from the same seed, so the outputs differ by rounding only (with the CPU's own
    # draws, U and V differed from accel's by up to 1.5).
    op = next(op for op in OPS if coverage.op_key(op) == name)
    result = coverage.check_op(op, dtype)
    assert result["status"] in ("native", "fallback"), result["error"]


def test_sort_ties_may_take_any_order_but_indices_must_select_the_values(monkeypatch):
    from torch.testing._internal.opinfo.core import SampleInput

    op = next(op for op in OPS if coverage.op_key(op) == "sort")
    real = op.op
    x = torch.tensor([[3.0, 1.0, 3.0, 1.0, 2.0]], device="accel")

    def on_accel(change):
        def run(a, *args, **kw):
            values, indices = real(a, *args, **kw)
            return (values, change(indices)) if a.device.type == "accel" else (values, indices)

        return run

    swap_ties = on_accel(lambda i: i[..., [1, 0, 2, 4, 3]])  # the two 1s', the two 3s' indices
    samples = {
        "unstable": SampleInput(x, args=(1,)),
        "stable": SampleInput(x, kwargs={"dim": 1, "stable": True}),
    }
    for name, op_fn, status in [
        ("unstable", swap_ties, "native"),
        ("unstable", on_accel(lambda i: (i + 1) % 5), "fail"),  # indices that select wrong values
        ("stable", swap_ties, "fail"),  # asked to be stable: CPU's order of ties exactly
    ]:
        monkeypatch.setattr(op, "sample_inputs", lambda *a, s=samples[name], **k: iter([s]))
        monkeypatch.setattr(op, "op", op_fn)
        assert coverage.check_op(op, torch.float32)["status"] == status, name


def test_check_op_counts_the_fallback(monkeypatch):
    # A custom op with only a CPU kernel always reaches accel's fallback.
    lib = torch.library.Library("accel_coverage_test", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    op = next(op for op in OPS if coverage.op_key(op) == "add")
    monkeypatch.setattr(op, "op", lambda a, b, **kw: torch.ops.accel_coverage_test.twice(a))
    result = coverage.check_op(op, torch.float32, 1)
    assert result["status"] == "fallback", result
    assert result["fallback"] == {"accel_coverage_test::twice": 1}


def test_to_cpu_copies_and_redirects_devices():
    from torch.testing._internal.opinfo.core import SampleInput

    a = torch.arange(6.0, device="accel").view(2, 3).t()
    s = coverage.to_cpu(
        SampleInput(a, args=([a],), kwargs={"device": "accel:0", "d": torch.device("accel")})
    )
    assert s.input.device.type == "cpu" and s.input.stride() == a.stride()
    torch.testing.assert_close(s.input, a.cpu())
    assert s.args[0][0].device.type == "cpu"
    assert s.kwargs == {"device": "cpu", "d": torch.device("cpu")}


# --- TestCommon's checks ------------------------------------------------------------------

CONFORMANCE_FULL = os.environ.get("TORCH_ACCEL_CONFORMANCE") == "full"
CONFORMANCE_STRIDE = 8
EXPECTED_FAILURES_PATH = os.path.join(ROOT, "tests", "conformance_expected_failures.txt")


def load_expected_failures(path: str) -> dict:
    """{(check, op key or "*", dtype or "*"): reason} from the list's lines
    "check op dtype reason..." ("#" starts a comment line)."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split(None, 3)
            assert len(parts) == 4 and parts[3].strip(), f"{path}:{n}: no reason given"
            check, key, d, reason = parts
            assert check in conformance.CHECKS, f"{path}:{n}: unknown check {check!r}"
            assert (check, key, d) not in out, f"{path}:{n}: listed twice"
            out[(check, key, d)] = reason.strip()
    return out


EXPECTED_FAILURES = load_expected_failures(EXPECTED_FAILURES_PATH)
CONFORMANCE_OPS = (
    OPS if CONFORMANCE_FULL else sorted(OPS, key=coverage.op_key)[::CONFORMANCE_STRIDE]
)


def expected_failure(check: str, key: str, d: str) -> str | None:
    for k in ((check, key, d), (check, key, "*"), (check, "*", d)):
        if k in EXPECTED_FAILURES:
            return EXPECTED_FAILURES[k]
    return None


@pytest.fixture(scope="module")
def conformance_results():
    keys = {coverage.op_key(op) for op in CONFORMANCE_OPS}
    samples = 0 if CONFORMANCE_FULL else 1
    return coverage.sweep(conformance.DTYPES, samples, task="conformance", keys=keys)[0]


@pytest.mark.parametrize("check", conformance.CHECKS)
@pytest.mark.parametrize("dtype", conformance.DTYPES, ids=coverage.dtype_name)
@pytest.mark.parametrize("op", CONFORMANCE_OPS, ids=coverage.op_key)
def test_conformance(op, dtype, check, conformance_results):
    key, d = coverage.op_key(op), coverage.dtype_name(dtype)
    r = conformance_results[key][d][check]
    why = expected_failure(check, key, d)
    if r["status"] == "fail":
        if why:
            pytest.xfail(f"{why} [{r['error']}]")
        pytest.fail(f"{check} {key} {d}: {r['error']}")
    if r["status"] == "pass" and CONFORMANCE_FULL and (check, key, d) in EXPECTED_FAILURES:
        pytest.fail(f"listed as failing ({why}) but passes: remove its line from the list")
    if r["status"] == "skip":
        pytest.skip(r["error"])


def test_expected_failures_name_real_ops():
    keys = {coverage.op_key(op) for op in OPS}
    names = {coverage.dtype_name(d) for d in conformance.DTYPES}
    for _check, key, d in EXPECTED_FAILURES:
        assert key == "*" or key in keys, f"{key}: not an op_db op"
        assert d == "*" or d in names, f"{d}: not a checked dtype"


def _one_check(monkeypatch, key, check, wrong):
    """conformance's result for op ``key`` whose accel call is replaced by ``wrong``."""
    op = next(op for op in OPS if coverage.op_key(op) == key)
    monkeypatch.setattr(op, "op", wrong(op.op))
    return conformance.check_conformance(op, torch.float32, 1, checks=(check,))[check]


def test_conformance_catches_a_noncontiguous_bug(monkeypatch):
    def wrong(real):
        def f(a, *args, **kw):
            r = real(a, *args, **kw)
            return r + 1 if a.device.type == coverage.DEVICE and not a.is_contiguous() else r

        return f

    r = _one_check(monkeypatch, "abs", "noncontiguous", wrong)
    assert r["status"] == "fail" and "not close" in r["error"], r


class _GradOff(torch.autograd.Function):
    """The identity, whose float32 gradient is off by ``offs`` (CPU's, accel's); the float64
    reference's gradient stays exact."""

    @staticmethod
    def forward(ctx, x, offs):
        ctx.offs = offs
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        if g.dtype != torch.float32:
            return g, None
        return g + ctx.offs[g.device.type == coverage.DEVICE], None


def _gradient_off(cpu_off, accel_off):
    def wrong(real):
        def f(a, *args, **kw):
            return real(_GradOff.apply(a, (cpu_off, accel_off)), *args, **kw)

        return f

    return wrong


def test_noncontiguous_gradients_take_the_float64_rule(monkeypatch):
    # A gradient apart from CPU's but nearer the double-precision one passes; one farther than
    # CPU's fails.
    r = _one_check(monkeypatch, "abs", "noncontiguous", _gradient_off(0.01, 0.0))
    assert r["status"] == "pass", r
    monkeypatch.undo()
    r = _one_check(monkeypatch, "abs", "noncontiguous", _gradient_off(0.0, 0.01))
    assert r["status"] == "fail" and "not close" in r["error"], r


def test_conformance_catches_an_accepted_cpu_out(monkeypatch):
    # An out= on the wrong device that is written to instead of refused.
    def wrong(real):
        def f(a, *args, out=None, **kw):
            if out is None or out.device == a.device:
                return real(a, *args, out=out, **kw)
            return out.copy_(real(a, *args, **kw).to(out.device))

        return f

    r = _one_check(monkeypatch, "abs", "out", wrong)
    assert r["status"] == "fail" and "CPU out=" in r["error"], r


def test_conformance_catches_a_missing_resize_warning(monkeypatch):
    def wrong(real):
        def f(a, *args, out=None, **kw):
            if out is None or a.device.type != coverage.DEVICE:
                return real(a, *args, out=out, **kw)
            r = real(a, *args, **kw)
            return out.resize_(r.shape).copy_(r)

        return f

    r = _one_check(monkeypatch, "abs", "out", wrong)
    assert r["status"] == "fail" and "resize warning" in r["error"], r


def test_conformance_catches_an_inplace_resize(monkeypatch):
    # addmm_ into a self that broadcasts must raise, as on CPU; resizing self instead fails.
    op = next(op for op in OPS if coverage.op_key(op) == "addmm")
    real = op.inplace_variant

    def resizing(s, *args, **kw):
        if s.device.type == coverage.DEVICE:
            return s.resize_(torch.addmm(s, *args, **kw).shape).copy_(torch.addmm(s, *args, **kw))
        return real(s, *args, **kw)

    monkeypatch.setattr(op, "inplace_variant", resizing)
    samples = list(op.sample_inputs(coverage.DEVICE, torch.float32))
    assert any(s.broadcasts_input for s in samples)
    r = conformance.check_conformance(op, torch.float32, 0, checks=("variants",))["variants"]
    assert r["status"] == "fail" and "CPU raises RuntimeError" in r["error"], r


def test_conformance_catches_a_wrong_error_type(monkeypatch):
    op = next(
        op for op in OPS if op.error_inputs_func is not None and coverage.op_key(op) == "take"
    )
    real = op.op

    def wrong(a, *args, **kw):
        try:
            return real(a, *args, **kw)
        except RuntimeError as e:
            if a.device.type == coverage.DEVICE:
                raise ValueError(str(e)) from None
            raise

    monkeypatch.setattr(op, "op", wrong)
    r = conformance.check_conformance(op, torch.float32, 0, checks=("errors",))["errors"]
    assert r["status"] == "fail" and "error input" in r["error"], r


def test_upstream_markers_are_read():
    # op_db marks some TestCommon tests as failing for every device; those checks are skips
    # that name the marker.
    marked = [
        (coverage.op_key(op), c)
        for op in OPS
        for c in conformance.CHECKS
        if conformance.upstream_marker(op, c, torch.float32)
    ]
    assert marked, "no op_db marker found: the DecorateInfo lookup is broken"

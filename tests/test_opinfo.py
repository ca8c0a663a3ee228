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
"""

import json
import os

import pytest
import torch

from conftest import ROOT
from torch_accel.devtools import coverage

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

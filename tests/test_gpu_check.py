"""scripts/gpu_check.py's host-side logic, which must work the first time it runs on a GPU
machine: the plan fits the budget in the right order, each step's result is in summary.json
as soon as it finishes, a step past its limit is killed, a failed build skips the rest."""

import json
import os
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gpu_check  # noqa: E402


def test_plan_order_and_budget(tmp_path):
    plan = gpu_check.steps(sys.executable, str(tmp_path))
    names = [n for n, _, _ in plan]
    assert names[:3] == ["build", "smoke", "op_tests"]
    assert names.index("bench") < names.index("compile_tests")
    assert sum(s for _, s, _ in plan) <= 8 * 60
    for path in gpu_check.OP_TESTS:
        assert os.path.exists(os.path.join(ROOT, path)), path


def _step(code, limit=20, name="s"):
    return (name, limit, [sys.executable, "-c", code])


def test_each_step_is_written_as_it_finishes(tmp_path):
    out = str(tmp_path)
    summary_path = os.path.join(out, "summary.json")
    # The second step reads the summary the runner wrote after the first.
    probe = f"import json; print(json.load(open({summary_path!r}))['steps'][0]['status'])"
    plan = [
        _step("print('built')", name="build"),
        _step(probe, name="reader"),
        _step("import time; time.sleep(30)", limit=1, name="slow"),
        _step("raise SystemExit(3)", name="fails"),
        _step("print('after')", name="after"),
    ]
    summary = gpu_check.run_all(plan, out, dict(os.environ), {"gpu": "test"})
    on_disk = json.load(open(summary_path))
    assert on_disk == json.loads(json.dumps(summary))
    steps = {s["name"]: s for s in on_disk["steps"]}
    assert steps["build"]["status"] == "ok" and steps["build"]["tail"] == ["built"]
    assert steps["reader"]["tail"] == ["ok"]  # step 1 was on disk before step 2 ran
    assert steps["slow"]["status"] == "timeout" and steps["slow"]["seconds"] < 10
    assert steps["fails"]["status"] == "failed" and steps["fails"]["rc"] == 3
    assert steps["after"]["status"] == "ok"  # a failed step does not stop the others
    assert open(os.path.join(out, "after.log")).read() == "after\n"


def test_failed_build_skips_the_rest(tmp_path):
    plan = [_step("raise SystemExit(1)", name="build"), _step("print(1)", name="smoke")]
    summary = gpu_check.run_all(plan, str(tmp_path), dict(os.environ), {})
    assert [s["status"] for s in summary["steps"]] == ["failed", "skipped: the build step failed"]


def test_failed_smoke_skips_the_rest(tmp_path):
    # No usable device (a machine without a GPU, a driver older than the runtime): the smoke
    # test says why, and the later steps are not run to fail the same way.
    plan = [
        _step("print('built')", name="build"),
        _step("raise SystemExit('CUDA driver version is insufficient')", name="smoke"),
        _step("print(1)", name="op_tests"),
        _step("print(2)", name="bench"),
    ]
    summary = gpu_check.run_all(plan, str(tmp_path), dict(os.environ), {})
    statuses = [s["status"] for s in summary["steps"]]
    assert statuses == ["ok", "failed"] + ["skipped: the smoke step failed"] * 2
    assert summary["steps"][1]["tail"] == ["CUDA driver version is insufficient"]
    assert not os.path.exists(os.path.join(str(tmp_path), "op_tests.log"))


def test_dry_run(tmp_path):
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "gpu_check.py"), str(tmp_path), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.load(open(tmp_path / "summary.json"))
    assert [s["status"] for s in summary["steps"]] == ["ok"] * len(summary["steps"])
    assert "setup.py" in open(tmp_path / "build.log").read()

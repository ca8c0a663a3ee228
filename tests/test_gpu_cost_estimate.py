"""benchmarks/gpu_cost_estimate.py: the CUDA build's launch plans at the benchmark shapes,
read on a machine with no GPU, plan no bandwidth-bound family below half of an H200's
bandwidth roofline but the known ones below; and the plans it reads are the kernels' own
(torch_accel._C)."""

import json
import os
import subprocess
import sys

import pytest

import torch_accel
from conftest import ROOT

# Families the estimate shows planned below half the roofline, kept here so that the list
# stays true: a fix must remove its entry, and a new shortfall fails the test.
KNOWN_BELOW_GOAL = []


def test_no_family_below_half_the_roofline(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "benchmarks", "gpu_cost_estimate.py"),
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.path.join(ROOT, "benchmarks"),
    )
    assert r.returncode == 0, r.stderr
    result = json.load(open(tmp_path / "gpu_cost_estimate.json"))
    assert sorted(result["below_goal"]) == sorted(KNOWN_BELOW_GOAL)
    names = {e["name"] for e in result["results"]}
    assert {
        "sum fp32 2^28",
        "sum(0) fp32 65536x4096",
        "layer_norm backward fp32 65536x4096",
    } <= names
    for e in result["results"]:
        if not e["latency_bound"] and e["name"] not in KNOWN_BELOW_GOAL:
            assert e["machine_use"] >= 0.5, e


def test_plans_follow_the_kernels():
    plan = torch_accel._C._cuda_launch_plan
    # A full sum of 2^28: 4 blocks per SM, then a block merging their partials.
    full = plan("reduce", [1, 1 << 28], 132)
    assert [p["kernel"] for p in full] == ["blockPerChunk", "combinePartials"]
    assert full[0]["blocks"] >= 4 * 132
    # A short reduced range: a thread per output, no second pass.
    assert [p["kernel"] for p in plan("reduce", [1000, 32], 132)] == ["threadPerOutput"]
    # sum(0) of [65536, 4096]: a thread per (chunk, column), then merges 16 partials at a time.
    cols = plan("reduce_columns", [4096, 4096, 65536], 132)
    assert [p["kernel"] for p in cols] == ["columnChunk", "columnMerge", "columnMerge"]
    assert (
        cols[0]["work"] == 256 * 4096 and cols[1]["work"] == 16 * 4096 and cols[2]["work"] == 4096
    )
    # A grid-stride loop caps its grid; its threads with work are then fewer than the elements.
    ew = plan("elementwise", [1 << 28], 132)[0]
    assert ew["blocks"] == 1 << 16 and ew["work"] == ew["blocks"] * ew["threads"]
    # A 1-D cumsum of 2^24: chunks for every resident thread, carries folded in levels (no
    # pass with one thread walking many states), then the rescan.
    scan = plan("scan", [1, 1 << 24, 1], 132)
    kinds = [p["kernel"] for p in scan]
    assert kinds[0] == "scanAggregate" and kinds[-1] == "scanWrite"
    assert scan[0]["work"] >= 2048 * 132 and scan[-1]["work"] >= 2048 * 132
    folds = [p for p in scan if p["kernel"] == "carryFold"]
    assert len(folds) >= 2 and kinds.count("carryRescan") == len(folds) + 1
    # Each thread reads (and a rescan writes) one group of at most 8 states and its carry.
    assert all(p["states"] <= 2 * (8 + 1) * p["work"] for p in scan[1:-1])
    with pytest.raises(ValueError, match="unknown family"):
        plan("nope", [1], 132)
    with pytest.raises(ValueError, match="takes 2 sizes"):
        plan("reduce", [1], 132)

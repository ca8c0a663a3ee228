"""torch.distributed collectives on accel through the accl backend (host driver: gloo staged
through pinned host memory), in two rank processes on the two simulated devices. Each
collective is compared exactly with the same collective on CPU tensors or with its closed
form, on float32, bfloat16, float16, int64 and bool (tests/ranks/worker.py)."""

import torch.distributed as dist

from ranks.launch import run_ranks


def test_backend_is_registered_for_accel():
    assert dist.Backend.default_device_backend_map["accel"] == "accl"
    assert "accl" in dist.Backend.backend_list
    assert dist.Backend.backend_capability["accl"] == ["accel"]


def test_collectives_match_cpu(tmp_path):
    results = run_ranks("collectives", tmp_path)
    names = set(results[0][1])
    # Every collective ran on every dtype.
    for collective in (
        "all_reduce_sum",
        "all_reduce_avg",
        "all_reduce_premul_sum",
        "broadcast",
        "reduce",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_coalesced",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "all_to_all",
        "all_to_all_single_uneven",
        "gather",
        "scatter",
        "send_recv",
        "isend_irecv",
        "batch_isend_irecv",
    ):
        for dtype in ("float32", "bfloat16", "float16", "int64", "bool"):
            assert f"{collective}_{dtype}" in names
    assert {"barrier", "all_gather_object", "broadcast_object_list"} <= names


def test_ordering_futures_and_staging_reuse(tmp_path):
    """NCCL's ordering (after the producing stream; wait() orders the current stream without
    blocking the host), futures, and staging buffers reused rather than allocated per call."""
    run_ranks("semantics", tmp_path)

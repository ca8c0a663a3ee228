"""Memory tooling: the allocator's history and snapshot in torch.cuda.memory's format (rendered
by PyTorch's own torch.cuda._memory_viz), the pinned host cache and its statistics, and the
torch.cuda.memory functions around the caching allocator."""

import base64
import os
import pickle
import re

import pytest
import torch
from torch.cuda import _memory_viz

MiB = 1 << 20


def _allocate_for_the_snapshot():
    return torch.empty(3 * MiB // 4, device="accel")  # 3 MiB: a large-pool block


@pytest.fixture
def history():
    torch.accel.memory._record_memory_history(max_entries=10000, clear_history=True)
    yield
    torch.accel.memory._record_memory_history(enabled=None, clear_history=True)


def _blocks(snapshot):
    return [b for s in snapshot["segments"] for b in s["blocks"]]


def test_snapshot_records_blocks_trace_and_frames(history):
    x = _allocate_for_the_snapshot()
    y = torch.ones(100, device="accel")
    del y
    snap = torch.accel.memory._snapshot()
    assert set(snap) >= {"segments", "device_traces", "allocator_settings"}
    assert len(snap["device_traces"]) == torch.accel.device_count()
    addr = x.data_ptr()
    (block,) = [b for b in _blocks(snap) if b["address"] == addr]
    assert block["state"] == "active_allocated" and block["requested_size"] == 3 * MiB
    assert block["size"] == 3 * MiB
    names = [f["name"] for f in block["frames"]]
    assert "_allocate_for_the_snapshot" in names, names
    assert any(f["filename"].endswith("test_memory_tools.py") for f in block["frames"])
    seg = [s for s in snap["segments"] if s["address"] <= addr < s["address"] + s["total_size"]][0]
    assert seg["segment_type"] == "large" and seg["device"] == 0
    assert seg["allocated_size"] >= 3 * MiB and seg["total_size"] == 20 * MiB
    trace = snap["device_traces"][0]
    actions = [(e["action"], e["size"]) for e in trace]
    assert ("segment_alloc", 20 * MiB) in actions or any(
        s["total_size"] == 20 * MiB for s in snap["segments"]
    )
    assert ("alloc", 3 * MiB) in actions and ("alloc", 400) in actions
    assert ("free_requested", 400) in actions and ("free_completed", 400) in actions
    alloc = [e for e in trace if e["action"] == "alloc" and e["addr"] == addr][-1]
    assert "_allocate_for_the_snapshot" in [f["name"] for f in alloc["frames"]]
    assert all(e["time_us"] > 0 for e in trace)
    times = [e["time_us"] for e in trace]
    assert times == sorted(times)
    del x


def test_memory_viz_renders_an_accel_snapshot(history):
    x = _allocate_for_the_snapshot()
    snap = torch.accel.memory._snapshot()
    # PyTorch's text views: the flamegraph input names our block, its stack and its size.
    lines = _memory_viz.memory(snap, format_flamegraph=lambda text: text)
    ours = [ln for ln in lines.splitlines() if "_allocate_for_the_snapshot" in ln]
    assert ours and ours[0].endswith(f" {3 * MiB}") and "active_allocated" in ours[0]
    per_segment = _memory_viz.segments(snap, format_flamegraph=lambda text: text)
    assert (
        f"seg_{[s for s in snap['segments'] if s['total_size'] == 20 * MiB][0]['address']}"
        in per_segment
    )
    summary = _memory_viz.segsum(snap)
    assert "segment" in summary.lower()
    text = _memory_viz.trace(snap)
    assert re.search(r"= cudaMalloc\(\d+, 20\.0MiB\)|3\.0MiB", text), text[:500]
    # The interactive plots embed the snapshot itself.
    for html in (_memory_viz.trace_plot(snap), _memory_viz.segment_plot(snap)):
        encoded = re.search(r'"base64": "([^"]+)"', html).group(1)
        embedded = pickle.loads(base64.b64decode(encoded).rstrip(b"\x00"))
        assert any(b["address"] == x.data_ptr() for b in _blocks(embedded))
    del x


def test_dump_snapshot_pickles_it(history, tmp_path):
    x = torch.empty(1000, device="accel")
    path = tmp_path / "snap.pickle"
    torch.accel.memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        snap = pickle.load(f)
    assert any(b["address"] == x.data_ptr() for b in _blocks(snap))


def test_history_modes():
    torch.accel.memory._record_memory_history(enabled="state", clear_history=True)
    try:
        x = _allocate_for_the_snapshot()
        snap = torch.accel.memory._snapshot()
        assert snap["device_traces"][0] == []  # "state": no trace
        (block,) = [b for b in _blocks(snap) if b["address"] == x.data_ptr()]
        assert "_allocate_for_the_snapshot" in [f["name"] for f in block["frames"]]
    finally:
        torch.accel.memory._record_memory_history(enabled=None, clear_history=True)
    y = _allocate_for_the_snapshot()
    (block,) = [b for b in _blocks(torch.accel.memory._snapshot()) if b["address"] == y.data_ptr()]
    assert block["frames"] == []  # not recorded any more
    with pytest.raises(RuntimeError, match="enabled must be None, 'state' or 'all'"):
        torch.accel.memory._record_memory_history(enabled="sometimes")
    del x, y


def test_max_entries_keeps_the_newest():
    torch.accel.memory._record_memory_history(max_entries=4, clear_history=True)
    try:
        for _ in range(10):
            torch.empty(256, device="accel")
        trace = torch.accel.memory._snapshot()["device_traces"][0]
        assert len(trace) == 4
        assert [e["action"] for e in trace][-1] == "free_completed"
    finally:
        torch.accel.memory._record_memory_history(enabled=None, clear_history=True)


def test_memory_snapshot_is_the_segment_list():
    x = torch.empty(1000, device="accel")
    segs = torch.accel.memory_snapshot()
    assert isinstance(segs, list) and any(
        b["address"] == x.data_ptr() and b["state"] == "active_allocated"
        for s in segs
        for b in s["blocks"]
    )


# ---- pinned host memory -----------------------------------------------------------------


def test_pinned_blocks_are_cached_and_counted():
    torch.accel.empty_host_cache()
    torch.accel.memory.reset_accumulated_host_memory_stats()
    before = torch.accel.host_memory_stats()
    a = torch.empty(1000, pin_memory=True)  # 4000 B: a 4096 B block
    assert a.is_pinned()
    ptr = a.data_ptr()
    stats = torch.accel.host_memory_stats()
    assert stats["active_requests.current"] == before["active_requests.current"] + 1
    assert stats["num_host_alloc"] == 1
    del a
    b = torch.empty(900, pin_memory=True)  # same bucket: the cached block, no driver call
    assert b.data_ptr() == ptr
    stats = torch.accel.host_memory_stats()
    assert stats["num_host_alloc"] == 1 and stats["allocated_bytes.current"] >= 4096
    nested = torch.accel.host_memory_stats_as_nested_dict()
    assert nested["allocations"]["current"] == stats["allocations.current"]
    assert set(nested["host_alloc_time"]) == {"total", "max", "min", "count", "avg"}
    del b
    torch.accel.empty_host_cache()
    stats = torch.accel.host_memory_stats()
    assert stats["num_host_free"] >= 1 and stats["allocations.current"] == 0


@pytest.mark.skipif(
    os.environ.get("TORCH_ACCEL_LAUNCH_BLOCKING") == "1",
    reason="needs a copy still queued, which launch blocking never has",
)
def test_a_pinned_block_waits_for_its_copy_before_reuse():
    """A block freed while a non_blocking copy still reads it is not handed out again until the
    copy ran: the copy delivers the original values."""
    torch.accel.empty_host_cache()
    n = 1 << 22
    s = torch.accel.Stream()
    gate = torch.empty(1500, 1500, device="accel")
    src = torch.arange(n, dtype=torch.float32).pin_memory()
    ptr = src.data_ptr()
    dst = torch.empty(n, device="accel")
    with torch.accel.stream(s):
        gate @ gate  # keeps s busy while the host frees and reallocates
        dst.copy_(src, non_blocking=True)
    del src
    other = torch.empty(n, dtype=torch.float32, pin_memory=True)
    assert other.data_ptr() != ptr  # the copy has not run yet: its block is held back
    other.fill_(-1)
    s.synchronize()
    torch.testing.assert_close(dst.cpu(), torch.arange(n, dtype=torch.float32))
    allocs = torch.accel.host_memory_stats()["num_host_alloc"]
    again = torch.empty(n, dtype=torch.float32, pin_memory=True)  # the copy ran: reusable
    assert again.data_ptr() == ptr
    assert torch.accel.host_memory_stats()["num_host_alloc"] == allocs


def test_peak_host_stats_reset():
    x = torch.empty(1 << 16, pin_memory=True)
    del x
    torch.accel.memory.reset_peak_host_memory_stats()
    stats = torch.accel.host_memory_stats()
    assert stats["active_bytes.peak"] == stats["active_bytes.current"]


# ---- the rest of torch.cuda.memory ---------------------------------------------------------


def test_per_process_memory_fraction_round_trips():
    assert torch.accel.get_per_process_memory_fraction() == 1.0
    torch.accel.set_per_process_memory_fraction(0.5, 1)
    try:
        assert torch.accel.get_per_process_memory_fraction(1) == 0.5
        assert torch.accel.get_per_process_memory_fraction(0) == 1.0
    finally:
        torch.accel.set_per_process_memory_fraction(1.0, 1)


def test_caching_allocator_alloc_and_delete(settled_memory):
    before = torch.accel.memory_allocated()
    ptr = torch.accel.caching_allocator_alloc(1 << 20)
    assert torch.accel.memory_allocated() == before + (1 << 20)
    block = [b for b in _blocks(torch.accel.memory._snapshot()) if b["address"] == ptr][0]
    assert block["state"] == "active_allocated"
    torch.accel.caching_allocator_delete(ptr)
    assert torch.accel.memory_allocated() == before
    s = torch.accel.Stream()
    p2 = torch.accel.caching_allocator_alloc(512, stream=s)
    torch.accel.caching_allocator_delete(p2)
    with pytest.raises(RuntimeError, match="not a block from caching_allocator_alloc"):
        torch.accel.caching_allocator_delete(p2)
    with pytest.raises(TypeError, match="stream"):
        torch.accel.caching_allocator_alloc(512, stream=torch.Stream("cpu"))


def test_memory_stats_as_nested_dict_and_deprecated_names(settled_memory):
    x = torch.empty(1 << 20, device="accel")
    flat = torch.accel.memory_stats()
    nested = torch.accel.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"]
    assert nested["num_ooms"] == flat["num_ooms"]
    with pytest.warns(FutureWarning):
        assert torch.accel.memory_cached() == torch.accel.memory_reserved()
    with pytest.warns(FutureWarning):
        torch.accel.reset_max_memory_allocated()
    assert torch.accel.max_memory_allocated() == torch.accel.memory_allocated()
    assert (
        torch.accel.device_memory_used()
        == torch.accel.mem_get_info()[1] - torch.accel.mem_get_info()[0]
    )
    assert torch.accel.get_allocator_backend() == "native"
    with pytest.raises(RuntimeError, match="cannot be replaced"):
        torch.accel.change_current_allocator(None)
    del x


def test_caching_allocator_disabled_returns_frees_to_the_driver():
    torch.accel.empty_cache()
    with torch.accel.memory.caching_allocator_disabled():
        frees = torch.accel.memory_stats()["num_device_free"]
        reserved = torch.accel.memory_reserved()  # blocks other tests still hold
        x = torch.empty(1 << 20, device="accel")
        assert torch.accel.memory_reserved() == reserved + (4 << 20)  # an exact-size segment
        del x
        assert torch.accel.memory_stats()["num_device_free"] == frees + 1
        assert torch.accel.memory_reserved() == reserved
    y = torch.empty(1 << 20, device="accel")
    del y
    assert torch.accel.memory_reserved() > 0  # cached again
    torch.accel.empty_cache()

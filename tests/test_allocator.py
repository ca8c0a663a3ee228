"""The caching allocator through torch: stats, caching, empty_cache, fraction, OOM, snapshot."""

import os

import pytest
import torch

MiB = 1 << 20


def test_memory_stats_keys_match_cuda():
    stats = torch.accel.memory_stats()
    for key in [
        "allocated_bytes.all.current",
        "allocated_bytes.small_pool.peak",
        "reserved_bytes.all.current",
        "active.all.current",
        "active_bytes.large_pool.freed",
        "inactive_split.all.current",
        "inactive_split_bytes.all.current",
        "requested_bytes.all.current",
        "num_alloc_retries",
        "num_ooms",
        "num_device_alloc",
        "num_device_free",
        "segment.all.current",
    ]:
        assert key in stats, key


def test_allocated_tracks_tensors_and_rounds_to_512(settled_memory):
    base = torch.accel.memory_allocated()
    x = torch.empty(100, dtype=torch.uint8, device="accel")  # 100 B rounds to 512 B
    assert torch.accel.memory_allocated() - base == 512
    y = torch.empty(3 * MiB, dtype=torch.uint8, device="accel")  # large pool
    assert torch.accel.memory_allocated() - base == 512 + 3 * MiB
    assert torch.accel.memory_reserved() >= 2 * MiB + 20 * MiB
    del x, y
    assert torch.accel.memory_allocated() == base


def test_cached_block_is_reused_without_device_malloc():
    x = torch.empty(MiB // 2, dtype=torch.uint8, device="accel")
    ptr = x.data_ptr()
    del x
    before = torch.accel.memory_stats()["num_device_alloc"]
    y = torch.empty(MiB // 2, dtype=torch.uint8, device="accel")
    assert y.data_ptr() == ptr
    assert torch.accel.memory_stats()["num_device_alloc"] == before


def test_empty_cache_returns_segments():
    x = torch.empty(30 * MiB, dtype=torch.uint8, device="accel")
    del x
    held = torch.accel.memory_reserved()
    freed_before = torch.accel.memory_stats()["num_device_free"]
    assert held >= 30 * MiB  # the freed block stays cached
    torch.accel.empty_cache()
    stats = torch.accel.memory_stats()
    assert stats["reserved_bytes.all.current"] <= held - 30 * MiB
    assert stats["num_device_free"] > freed_before


def test_peak_and_reset(settled_memory):
    torch.accel.reset_peak_memory_stats()
    base = torch.accel.memory_allocated()
    x = torch.empty(8 * MiB, dtype=torch.uint8, device="accel")
    del x
    assert torch.accel.max_memory_allocated() >= base + 8 * MiB
    torch.accel.reset_peak_memory_stats()
    assert torch.accel.max_memory_allocated() == torch.accel.memory_allocated()


def test_out_of_memory_is_clean_and_recoverable():
    total = torch.accel.get_device_properties(0).total_memory
    keep = torch.ones(1000, device="accel")
    before = torch.accel.memory_stats()["num_ooms"]
    with pytest.raises(torch.OutOfMemoryError, match=r"Tried to allocate .*accel"):
        torch.empty(total + MiB, dtype=torch.uint8, device="accel")
    assert torch.accel.memory_stats()["num_ooms"] == before + 1
    y = torch.ones(1000, device="accel")  # allocator still works, old data intact
    torch.testing.assert_close((keep + y).cpu(), torch.full((1000,), 2.0))


def test_memory_fraction_caps_reservations():
    total = torch.accel.get_device_properties(1).total_memory
    torch.accel.empty_cache()
    try:
        torch.accel.set_per_process_memory_fraction(0.01, 1)
        with pytest.raises(torch.OutOfMemoryError):
            torch.empty(int(total * 0.02), dtype=torch.uint8, device="accel:1")
        small = torch.empty(MiB, dtype=torch.uint8, device="accel:1")
        assert small.numel() == MiB
    finally:
        torch.accel.set_per_process_memory_fraction(1.0, 1)
    with pytest.raises(RuntimeError, match="fraction"):
        torch.accel.set_per_process_memory_fraction(1.5, 1)


def test_snapshot_lists_live_blocks():
    x = torch.empty(5 * MiB, dtype=torch.uint8, device="accel")
    segments = torch.accel.memory_snapshot()  # every device's, as torch.cuda.memory_snapshot
    blocks = [b for seg in segments for b in seg["blocks"]]
    live = [b for b in blocks if b["state"] == "active_allocated" and b["address"] == x.data_ptr()]
    assert len(live) == 1 and live[0]["size"] >= 5 * MiB
    assert (
        sum(s["total_size"] for s in segments if s["device"] == 0) == torch.accel.memory_reserved()
    )
    del x


@pytest.mark.skipif(
    os.environ.get("TORCH_ACCEL_LAUNCH_BLOCKING") == "1",
    reason="needs a stream that is still busy, which launch blocking never has",
)
def test_record_stream_defers_reuse_until_the_other_stream_is_done():
    s = torch.accel.Stream()
    x = torch.empty(MiB, dtype=torch.uint8, device="accel")
    ptr = x.data_ptr()
    with torch.accel.stream(s):
        busy = torch.empty(256 * MiB, dtype=torch.uint8, device="accel")
        busy.fill_(1)  # keeps stream s busy for many milliseconds
    x.record_stream(s)
    del x
    y = torch.empty(MiB, dtype=torch.uint8, device="accel")
    assert y.data_ptr() != ptr  # s has not reached the recorded point yet
    torch.accel.synchronize()
    del y
    z = torch.empty(MiB, dtype=torch.uint8, device="accel")
    assert z.data_ptr() == ptr  # the event completed: the block is back in the pool
    del busy

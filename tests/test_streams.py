"""Streams and events: ordering, waits, timing, the current-stream context."""

import torch


def test_current_and_default_stream():
    d = torch.accel.default_stream()
    assert torch.accel.current_stream() == d
    s = torch.accel.Stream()
    assert s != d and s.device == torch.device("accel:0")
    with torch.accel.stream(s):
        assert torch.accel.current_stream() == s
        assert torch.accelerator.current_stream() == s
    assert torch.accel.current_stream() == d


def test_work_on_a_side_stream_is_ordered_by_events():
    s = torch.accel.Stream()
    a = torch.zeros(1 << 22, device="accel")
    ev = torch.accel.Event()
    with torch.accel.stream(s):
        s.wait_stream(torch.accel.default_stream())  # `a` was zeroed on the default stream
        a.fill_(3.0)
        ev.record(s)
    torch.accel.current_stream().wait_event(ev)
    b = a + 1.0  # default stream, after the fill
    torch.testing.assert_close(b.cpu(), torch.full((1 << 22,), 4.0))


def test_stream_query_and_synchronize():
    s = torch.accel.Stream()
    with torch.accel.stream(s):
        x = torch.empty(64 << 20, dtype=torch.uint8, device="accel").fill_(7)
    s.synchronize()
    assert s.query()
    assert x[-1].item() == 7


def test_event_timing():
    start = torch.accel.Event(enable_timing=True)
    end = torch.accel.Event(enable_timing=True)
    start.record()
    x = torch.empty(128 << 20, dtype=torch.uint8, device="accel").fill_(1)
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert ms > 0.0
    del x


def test_streams_from_pool_per_priority():
    hi = torch.accel.Stream(priority=-1)
    lo = torch.accel.Stream(priority=0)
    assert hi.stream_id != lo.stream_id
    with torch.accel.stream(hi):
        y = torch.ones(10, device="accel")
    hi.synchronize()
    torch.testing.assert_close(y.cpu(), torch.ones(10))

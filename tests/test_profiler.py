"""The profiler on accel: torch.profiler's device activities (ProfilerActivity.PrivateUse1),
the legacy profiler's device times (use_device="accel"), memory events, annotations and the
chrome trace. Device times come from the driver's events; each test checks them against what
the work must take (a matmul chain the host measured) and that no span is reversed."""

import json

import pytest
import torch
from torch.autograd.profiler import profile as legacy_profile
from torch.profiler import ProfilerActivity, profile, record_function

DEVICE_ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def _matmuls(n=4, size=384):
    a = torch.randn(size, size, device="accel")
    for _ in range(n):
        a = (a @ a).tanh_()
    return a


def _device_events(prof):
    return [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]


def _check_times(prof):
    for e in prof.events():
        assert e.time_range.start >= 0 and e.time_range.end >= e.time_range.start, e
        assert e.cpu_time_total >= 0 and e.device_time_total >= 0, e


def test_kernels_appear_with_names_device_stream_and_time():
    _matmuls(1)
    torch.accel.synchronize()
    torch.manual_seed(0)
    expected = _matmuls().cpu()
    torch.manual_seed(0)
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        out = _matmuls()
        torch.accel.synchronize()
    dev = _device_events(prof)
    names = {e.name for e in dev}
    assert "aten::mm" in names and "aten::tanh_" in names, names
    mms = [e for e in dev if e.name == "aten::mm"]
    assert len(mms) == 4
    assert all(e.device_index == 0 for e in dev)
    assert all(e.time_range.elapsed_us() > 0 for e in mms)
    # Each device span follows the previous one on the stream: they never overlap.
    spans = sorted((e.time_range.start, e.time_range.end) for e in dev)
    assert all(b[0] >= a[1] - 1 for a, b in zip(spans, spans[1:])), spans
    # The CPU op that launched each kernel carries its device time.
    cpu_mm = [e for e in prof.key_averages() if e.key == "aten::mm"][0]
    assert cpu_mm.device_time_total == pytest.approx(
        sum(e.time_range.elapsed_us() for e in mms), rel=0.05
    )
    assert "accel" in prof.key_averages().table(row_limit=5).lower()
    _check_times(prof)
    assert torch.equal(out.cpu(), expected)  # the work itself is unaffected


def test_device_time_is_consistent_with_the_work():
    """A long matmul on an otherwise idle stream: its device span is within what the host saw
    around it (launch to synchronize) and covers most of it."""
    a = torch.randn(1024, 1024, device="accel")
    torch.accel.synchronize()
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        b = a @ a
        torch.accel.synchronize()
    (mm,) = [e for e in _device_events(prof) if e.name == "aten::mm"]
    (sync,) = [
        e
        for e in prof.events()
        if e.name == "aten::mm" and e.device_type == torch.autograd.DeviceType.CPU
    ]
    assert mm.time_range.start >= sync.time_range.start - 200
    assert (
        mm.time_range.elapsed_us() > 0.5 * sync.time_range.elapsed_us()
        or mm.time_range.elapsed_us() > 100
    )
    assert b.shape == (1024, 1024)


def test_copies_and_streams_are_recorded():
    s = torch.accel.Stream()
    host = torch.randn(1 << 16)
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        x = host.to("accel")
        with torch.accel.stream(s):
            s.wait_stream(torch.accel.default_stream())
            y = x * 2
        torch.accel.synchronize()
    dev = _device_events(prof)
    streams = {
        (e.name, int(dict(e.kwinputs).get("stream", -1)) if hasattr(e, "kwinputs") else 0)
        for e in dev
    }
    assert any("copy" in e.name for e in dev), [e.name for e in dev]
    assert any(e.name == "aten::mul" for e in dev)
    torch.testing.assert_close(y.cpu(), host * 2)
    assert streams


def test_chrome_trace_has_the_device_lanes(tmp_path):
    s = torch.accel.Stream()
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        _matmuls(2)
        with torch.accel.stream(s):
            torch.ones(1000, device="accel").sum()
        torch.accel.synchronize()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert {e["name"] for e in kernels} >= {"aten::mm", "aten::tanh_", "aten::sum"}
    assert all(e["pid"] == 0 and e["dur"] >= 0 for e in kernels)
    lanes = {e["tid"] for e in kernels}
    assert len(lanes) == 2, lanes  # the default stream and s
    names = {
        e["args"]["name"]
        for e in events
        if e.get("ph") == "M"
        and e.get("name") in ("thread_name", "process_name")
        and e.get("pid") == 0
    }
    assert "accel" in names and any("stream 0 (default)" in n for n in names), names


def test_record_function_ranges_nest_on_cpu_and_device():
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        with record_function("outer"):
            x = torch.ones(256, 256, device="accel")
            with record_function("inner"):
                y = x @ x
            z = y + 1
        torch.accel.synchronize()
    cpu = {e.name: e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU}
    outer, inner = cpu["outer"], cpu["inner"]
    assert (
        outer.time_range.start
        <= inner.time_range.start
        <= inner.time_range.end
        <= outer.time_range.end
    )
    assert inner in outer.cpu_children or any(inner.id == c.id for c in outer.cpu_children)
    dev = {e.name: e for e in _device_events(prof)}
    assert {"outer", "inner", "aten::mm", "aten::add"} <= set(dev), set(dev)
    d_outer, d_inner, d_mm = dev["outer"], dev["inner"], dev["aten::mm"]
    # The range's own device span is not counted again into the CPU range's device time.
    assert outer.device_time_total <= d_outer.time_range.elapsed_us() + 1
    assert d_outer.time_range.start <= d_inner.time_range.start
    assert d_inner.time_range.end <= d_outer.time_range.end
    assert (
        d_inner.time_range.start <= d_mm.time_range.start
        and d_mm.time_range.end <= d_inner.time_range.end
    )
    torch.testing.assert_close(z.cpu(), torch.full((256, 256), 257.0))


def test_nvtx_ranges_are_profiler_annotations():
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        assert torch.accel.nvtx.range_push("step") == 0
        with torch.accel.nvtx.range("forward {}", 1):
            torch.ones(64, device="accel").add_(1)
        torch.accel.nvtx.mark("checkpoint")
        assert torch.accel.nvtx.range_pop() == 0
        rid = torch.accel.nvtx.range_start("async")
        torch.accel.nvtx.range_end(rid)
        torch.accel.synchronize()
    names = [e.name for e in prof.events()]
    for n in ("step", "forward 1", "checkpoint", "async"):
        assert n in names
    assert torch.accel.nvtx.range_pop() == -1
    with pytest.raises(ValueError, match="no open range"):
        torch.accel.nvtx.range_end(12345)


def test_profile_memory_records_accel_allocations():
    with profile(activities=DEVICE_ACTIVITIES, profile_memory=True) as prof:
        x = torch.empty(1 << 20, device="accel")
        del x
    # The allocation is charged to the op that made it, the free (outside any op) stands alone.
    (empty,) = [e for e in prof.events() if e.name == "aten::empty"]
    assert empty.device_memory_usage == 4 << 20
    freed = [e.device_memory_usage for e in prof.events() if e.name == "[memory]"]
    assert freed == [-(4 << 20)], freed
    # the table shows accel memory columns
    assert "accel mem" in prof.key_averages().table(row_limit=3).lower()


def test_legacy_profiler_use_device_accel(capfd):
    """torch.autograd.profiler.profile(use_device="accel"): device times from the driver's
    events, no warnings, no negative or reversed times."""
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)
    ).to("accel")
    x = torch.randn(64, 256, device="accel")
    with legacy_profile(use_device="accel") as prof:
        for _ in range(3):
            y = model(x)
        torch.accel.synchronize()
    err = capfd.readouterr().err
    assert "not enabled" not in err and "Traceback" not in err, err
    events = prof.function_events
    assert events
    for e in events:
        assert e.time_range.end >= e.time_range.start >= 0
        assert e.cpu_time_total >= 0 and e.device_time_total >= 0
    addmm = [e for e in prof.key_averages() if e.key == "aten::addmm"][0]
    assert addmm.count == 6 and addmm.device_time_total > 0
    assert y.shape == (64, 256)


def test_a_session_stopped_mid_kernel_keeps_the_kernel():
    a = torch.randn(1536, 1536, device="accel")
    torch.accel.synchronize()
    prof = profile(activities=DEVICE_ACTIVITIES)
    prof.start()
    b = a @ a  # still running when the session stops
    prof.stop()
    (mm,) = [e for e in _device_events(prof) if e.name == "aten::mm"]
    assert mm.time_range.end >= mm.time_range.start
    _check_times(prof)
    torch.testing.assert_close(b.cpu(), a.cpu() @ a.cpu(), rtol=1e-3, atol=1e-2)


def test_a_session_started_twice():
    """Starting a session while one runs: torch hands the trace to the newer one (the older
    reports nothing, as on CUDA); its device activities are complete and nothing crashes."""
    first = profile(activities=DEVICE_ACTIVITIES)
    first.start()
    torch.ones(8, device="accel").add_(1)
    second = profile(activities=DEVICE_ACTIVITIES)
    second.start()
    torch.ones(8, device="accel").mul_(2)
    second.stop()
    first.stop()
    assert [e.name for e in _device_events(second)] == ["aten::fill_", "aten::mul_"]
    _check_times(second)
    again = profile(activities=DEVICE_ACTIVITIES)
    again.start()
    with pytest.warns(UserWarning):
        again.start()  # the same session twice: torch warns and keeps recording
    torch.ones(8, device="accel").sub_(1)
    torch.accel.synchronize()
    again.stop()
    assert "aten::sub_" in [e.name for e in _device_events(again)]


def test_a_graph_replay_is_one_device_span():
    x = torch.randn(256, 256, device="accel")
    g = torch.accel.Graph()
    side = torch.accel.Stream()
    side.wait_stream(torch.accel.current_stream())
    with torch.accel.stream(side):
        (x @ x).relu()
    torch.accel.current_stream().wait_stream(side)
    with torch.accel.graph(g):
        y = (x @ x).relu()
    torch.accel.synchronize()
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        for _ in range(3):
            g.replay()
        torch.accel.synchronize()
    replays = [e for e in _device_events(prof) if e.name == "accel::graph_replay"]
    assert len(replays) == 3 and all(e.time_range.elapsed_us() > 0 for e in replays)
    assert not [e for e in _device_events(prof) if e.name == "aten::mm"]  # no dispatch ran
    _check_times(prof)
    assert torch.equal(y.cpu(), (x @ x).relu().cpu())


def test_backward_kernels_are_traced():
    """Autograd runs accel backward ops on its device thread; the profile follows them."""
    w = torch.randn(64, 64, device="accel", requires_grad=True)
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        (w @ w).sum().backward()
        torch.accel.synchronize()
    dev = [e.name for e in _device_events(prof)]
    assert dev.count("aten::mm") == 3, dev  # forward, and two in MmBackward
    torch.testing.assert_close(
        w.grad.cpu(),
        (torch.ones(64, 64) @ w.detach().cpu().t() + w.detach().cpu().t() @ torch.ones(64, 64)),
        rtol=1e-4,
        atol=1e-3,
    )


def test_cpu_only_profile_has_no_device_events():
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.ones(8, device="accel").add_(1)
        torch.accel.synchronize()
    assert not _device_events(prof)
    assert "aten::add_" in [e.name for e in prof.events()]

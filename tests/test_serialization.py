"""torch.save / torch.load of accel tensors, with and without map_location."""

import io

import torch


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def test_save_load_keeps_device_and_values():
    x = torch.randn(4, 5)
    state = {"w": x.to("accel:1"), "b": torch.arange(3).to("accel")}
    loaded = _round_trip(state)
    assert loaded["w"].device == torch.device("accel:1")
    assert loaded["b"].device == torch.device("accel:0")
    torch.testing.assert_close(loaded["w"].cpu(), x, rtol=0, atol=0)
    torch.testing.assert_close(loaded["b"].cpu(), torch.arange(3))


def test_map_location():
    x = torch.randn(3, 3)
    on_cpu = _round_trip(x.to("accel"), map_location="cpu")
    assert on_cpu.device.type == "cpu"
    torch.testing.assert_close(on_cpu, x, rtol=0, atol=0)
    moved = _round_trip(x, map_location="accel:1")
    assert moved.device == torch.device("accel:1")
    torch.testing.assert_close(moved.cpu(), x, rtol=0, atol=0)


def test_module_state_dict():
    m = torch.nn.Linear(4, 2).to("accel")
    sd = _round_trip(m.state_dict())
    m2 = torch.nn.Linear(4, 2).to("accel")
    m2.load_state_dict(sd)
    for p, q in zip(m.parameters(), m2.parameters()):
        torch.testing.assert_close(p.cpu(), q.cpu(), rtol=0, atol=0)

"""Process-level safety: fork after initialisation, DataLoader workers with pinned memory, and
a clean interpreter exit with work still queued."""

import textwrap

import torch

from conftest import run_python


def test_fork_after_init_raises_in_child_and_parent_is_unaffected():
    code = textwrap.dedent("""
        import os, torch, torch_accel
        x = torch.arange(8.0, device='accel') * 2
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                torch.ones(4, device='accel') + 1
                msg = 'NO ERROR'
            except RuntimeError as e:
                msg = 'ERROR ' + str(e).replace(chr(10), ' ')
            os.write(w, msg.encode())
            os._exit(0)
        os.close(w)
        child = os.read(r, 4096).decode()
        _, status = os.waitpid(pid, 0)
        print('CHILD', child)
        print('CHILD_STATUS', status)
        y = (x + 1).cpu()
        print('PARENT', y.tolist() == [float(2 * i + 1) for i in range(8)])
    """)
    proc = run_python(code, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert out["CHILD"].startswith("ERROR "), out
    assert "Cannot re-initialize accel in forked subprocess" in out["CHILD"], out
    assert out["CHILD_STATUS"] == "0"
    assert out["PARENT"] == "True"


def test_fork_before_init_is_harmless():
    code = textwrap.dedent("""
        import os, torch, torch_accel
        pid = os.fork()
        if pid == 0:
            ok = (torch.ones(4, device='accel') * 3).cpu().tolist() == [3.0] * 4
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print('CHILD_STATUS', status)
    """)
    proc = run_python(code, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "CHILD_STATUS 0" in proc.stdout, proc.stdout


def test_dataloader_workers_with_pin_memory_feed_accel():
    code = textwrap.dedent("""
        import torch, torch_accel
        from torch.utils.data import DataLoader, TensorDataset
        data = torch.arange(256 * 8, dtype=torch.float32).reshape(256, 8)
        labels = torch.arange(256)
        loader = DataLoader(TensorDataset(data, labels), batch_size=32, num_workers=2,
                            pin_memory=True, multiprocessing_context='spawn')
        total, seen, pinned = torch.zeros((), device='accel'), [], True
        for x, y in loader:
            pinned = pinned and x.is_pinned() and y.is_pinned()
            xd = x.to('accel', non_blocking=True)
            yd = y.to('accel', non_blocking=True)
            total = total + (xd * 2).sum()
            seen.append(yd.cpu())
        print('PINNED', pinned)
        print('LABELS', torch.equal(torch.cat(seen), labels))
        print('TOTAL', total.item() == (data * 2).sum().item())
    """)
    proc = run_python(code, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "PINNED True" in proc.stdout, proc.stdout
    assert "LABELS True" in proc.stdout, proc.stdout
    assert "TOTAL True" in proc.stdout, proc.stdout


def test_default_pin_memory_targets_accel():
    # pin_memory() with no device pins for the current accelerator: ours.
    assert torch.accelerator.current_accelerator().type == "accel"
    x = torch.randn(1000).pin_memory()
    assert x.is_pinned()
    y = x.to("accel", non_blocking=True)
    torch.testing.assert_close(y.cpu(), x, rtol=0, atol=0)


def test_exit_with_queued_work_releases_and_does_not_hang():
    code = textwrap.dedent("""
        import torch, torch_accel
        streams = [torch.accel.Stream() for _ in range(3)]
        keep = []
        for i, s in enumerate(streams):
            with torch.accel.stream(s):
                x = torch.ones(1 << 20, device='accel')
                for _ in range(50):
                    x = x * 1.0001 + 0.5
                keep.append(x)
        big = torch.empty(64 << 20, dtype=torch.uint8, device='accel')
        print('QUEUED', torch.accel.memory_allocated() > (64 << 20))
        # no synchronize: the interpreter exits with work queued on three streams
    """)
    for _ in range(3):
        proc = run_python(code, timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "QUEUED True" in proc.stdout

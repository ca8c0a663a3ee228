"""Soak and load: a long training run on two streams keeps memory flat, and many Python threads
allocating and computing at once get correct results. Correctness is asserted, not time.
TORCH_ACCEL_SOAK_SECONDS sets the threaded run's length (default 10 s; 30 s for a longer soak)."""

import os
import threading
import time

import torch

MiB = 1 << 20


def test_thousand_steps_two_streams_memory_flat():
    torch.manual_seed(0)
    cpu_model = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 8)
    )
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 8))
    model.load_state_dict(cpu_model.state_dict())
    model.to("accel")
    opts = [torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9) for m in (cpu_model, model)]
    data = torch.randn(16, 64, 32)
    target = torch.randn(16, 64, 8)
    copy_stream = torch.accel.Stream()
    main = torch.accel.current_stream()
    allocated, reserved = [], []
    for step in range(1000):
        xc, yc = data[step % 16], target[step % 16]
        # The batch arrives on a side stream; the compute stream waits for it and marks its use.
        with torch.accel.stream(copy_stream):
            x = xc.to("accel", non_blocking=True)
            y = yc.to("accel", non_blocking=True)
        main.wait_stream(copy_stream)
        x.record_stream(main)
        y.record_stream(main)
        for m, opt, (xi, yi) in ((cpu_model, opts[0], (xc, yc)), (model, opts[1], (x, y))):
            loss = torch.nn.functional.mse_loss(m(xi), yi)
            opt.zero_grad()
            loss.backward()
            opt.step()
        del x, y, loss
        allocated.append(torch.accel.memory_allocated())
        reserved.append(torch.accel.memory_reserved())
    torch.accel.synchronize()
    # Flat: after warm-up every step ends holding exactly the same bytes (params, grads, momentum).
    assert len(set(allocated[20:])) == 1, sorted(set(allocated[20:]))[:10]
    # Bounded: the cache stops growing once the working set is cached.
    assert max(reserved[100:]) <= max(reserved[:100]), (max(reserved[:100]), max(reserved[100:]))
    for p_cpu, p in zip(cpu_model.parameters(), model.parameters()):
        torch.testing.assert_close(p.detach().cpu(), p_cpu.detach(), rtol=1e-4, atol=1e-4)


def test_threads_allocate_compute_and_free_concurrently(settled_memory):
    seconds = float(os.environ.get("TORCH_ACCEL_SOAK_SECONDS", "10"))
    deadline = time.monotonic() + seconds
    errors, iterations = [], [0] * 8
    torch.accel.synchronize()
    base = torch.accel.memory_allocated()

    def worker(t):
        try:
            torch.accel.set_device(0)
            gen = torch.Generator().manual_seed(t)
            stream = torch.accel.Stream() if t % 2 else torch.accel.current_stream()
            while time.monotonic() < deadline:
                n = int(torch.randint(1, 256 * 1024, (1,), generator=gen))
                a = torch.randn(n, generator=gen)
                b = torch.randn(n, generator=gen)
                with torch.accel.stream(stream):
                    da, db = a.to("accel"), b.to("accel")
                    out = (da * db + da) / 2 - db
                    got = out.cpu()
                want = (a * b + a) / 2 - b
                if not torch.allclose(got, want, rtol=1e-6, atol=1e-6):
                    errors.append(f"thread {t}: wrong result for n={n}")
                    return
                del da, db, out
                iterations[t] += 1
        except Exception as e:  # reported below, with the thread that raised it
            errors.append(f"thread {t}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=seconds + 120)
    assert not any(th.is_alive() for th in threads), "a thread hung"
    assert errors == []
    assert all(i > 0 for i in iterations), iterations
    torch.accel.synchronize()
    assert torch.accel.memory_allocated() == base

"""Accel tensors across processes with torch.multiprocessing, as CUDA tensors through IPC: the
consumer maps the producer's memory (writes are seen on both sides), the producer keeps it
alive while a consumer holds it, and a tensor that cannot be shared is a clear error, never a
hang. Each case runs producer and consumer in fresh interpreters (spawn)."""

import os
import subprocess
import sys
import tempfile
import textwrap

from conftest import ROOT

PRELUDE = """
import sys, torch, torch_accel
import torch.multiprocessing as mp
"""


def _run(body: str, timeout: int = 120, prelude: str = PRELUDE):
    """Runs the script from a file: spawned children import the parent's __main__ by path."""
    code = textwrap.dedent(prelude) + textwrap.dedent(body)
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "ipc_case.py")
        with open(script, "w") as f:
            f.write(code)
        r = subprocess.run(
            [sys.executable, script], capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_a_tensor_reaches_a_spawned_process_and_shares_memory():
    out = _run("""
    def consumer(q, done):
        x = q.get()
        assert x.device == torch.device("accel:1"), x.device
        print("CONSUMER", x.cpu().tolist(), flush=True)
        x.mul_(10)                      # visible to the producer: same memory
        torch.accel.synchronize()
        p = q.get()                     # a Parameter keeps its type and requires_grad
        print("PARAM", type(p).__name__, p.requires_grad, p.sum().item(), flush=True)
        done.put(True)

    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        q, done = ctx.Queue(), ctx.Queue()
        base = torch.arange(12.0, device="accel:1").view(3, 4)
        view = base[1:, 1:3]            # a strided view into the middle of its storage
        p = ctx.Process(target=consumer, args=(q, done))
        p.start()
        q.put(view)
        q.put(torch.nn.Parameter(torch.ones(5, device="accel")))
        assert done.get(timeout=30)
        p.join(30)
        assert p.exitcode == 0
        print("PRODUCER", base.cpu().tolist())
    """)
    assert "CONSUMER [[5.0, 6.0], [9.0, 10.0]]" in out, out
    assert "PARAM Parameter True 5.0" in out, out
    assert (
        "PRODUCER [[0.0, 1.0, 2.0, 3.0], [4.0, 50.0, 60.0, 7.0], [8.0, 90.0, 100.0, 11.0]]" in out
    ), out


def test_the_producer_keeps_the_memory_while_the_consumer_holds_it():
    out = _run("""
    def consumer(q, ready, done):
        x = q.get()
        ready.put(True)
        assert done.get(timeout=30)     # the producer dropped its tensor and allocated again
        print("STILL", x.sum().item(), flush=True)
        del x
        ready.put(True)

    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        q, ready, done = ctx.Queue(), ctx.Queue(), ctx.Queue()
        p = ctx.Process(target=consumer, args=(q, ready, done))
        p.start()
        x = torch.full((1000,), 3.0, device="accel")
        ptr = x.data_ptr()
        q.put(x)
        assert ready.get(timeout=30)
        del x
        torch.accel.ipc_collect()
        y = torch.full((1000,), -1.0, device="accel")  # must not land on the shared block
        print("REUSED", y.data_ptr() == ptr, flush=True)
        done.put(True)
        assert ready.get(timeout=30)
        p.join(30)
        torch.accel.ipc_collect()       # the consumer let go: the block is free again
        z = torch.empty(1000, device="accel")
        print("FREED", z.data_ptr() == ptr)
    """)
    assert "REUSED False" in out and "STILL 3000.0" in out and "FREED True" in out, out


def test_an_unshareable_tensor_is_an_error_at_put_and_never_a_hang():
    # With few file descriptors the host driver allocates some segments as private memory,
    # which cannot be shared.
    # The host driver's descriptor budget (a quarter of the soft limit) is set when it starts.
    out = _run(
        prelude=textwrap.dedent("""
    import resource
    if __name__ == "__main__":
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (96, hard))
    """)
        + PRELUDE,
        body="""
    def consumer(q):
        try:
            q.get(timeout=30)
            print("GOT IT")
        except RuntimeError as e:
            print("CONSUMER ERROR", e, flush=True)

    if __name__ == "__main__":
        keep = [torch.empty(3 << 20, device="accel") for _ in range(30)]  # a 12 MiB segment each
        private = keep[-1]
        ctx = mp.get_context("spawn")
        # A pipe pickles in the caller: the error is raised by send().
        a, b = ctx.Pipe()
        try:
            a.send(private)
            print("SENT")
        except RuntimeError as e:
            print("PUT ERROR", e)
        # A Queue pickles in a feeder thread: the consumer's get() raises instead of waiting.
        q = ctx.Queue()
        p = ctx.Process(target=consumer, args=(q,))
        p.start()
        q.put(private)
        p.join(45)
        print("EXIT", p.exitcode)
        a.send(keep[0])                 # an ordinary segment still goes through
        print("OK", b.recv().shape)
    """,
    )
    assert "PUT ERROR cannot send an accel tensor on accel:0 to another process" in out, out
    assert "raise `ulimit -n`" in out, out
    assert "CONSUMER ERROR cannot send an accel tensor" in out and "EXIT 0" in out, out
    assert "OK torch.Size([3145728])" in out, out


def test_an_accel_storage_alone_is_refused():
    out = _run("""
    import io
    from multiprocessing.reduction import ForkingPickler
    try:
        ForkingPickler.dumps(torch.ones(3, device="accel").untyped_storage())
    except RuntimeError as e:
        print("ERR", e)
    """)
    assert "ERR Cannot pickle accel storage; try pickling an accel tensor instead" in out, out

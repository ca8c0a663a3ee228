"""One rank of a distributed test: `python tests/ranks/worker.py SCENARIO OUT.json`, with
RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in the environment (set by
launch.py or torchrun). A scenario runs named checks; OUT.json maps each check to None
(passed) or its error. Values are compared exactly with the same collective on CPU tensors
(gloo) or with a closed form computed from every rank's known input."""

import copy
import json
import os
import sys
import time
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist

import torch_accel  # noqa: F401

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
LOCAL = int(os.environ.get("LOCAL_RANK", RANK))
DEVICE = torch.device("accel", LOCAL)
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool]
SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


class Checks:
    def __init__(self):
        self.results = {}

    def __call__(self, name):
        def run(fn):
            try:
                fn()
                self.results[name] = None
            except Exception as e:  # reported, and the parent test fails on it
                self.results[name] = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"
            return fn

        return run


def init(backend="cpu:gloo,accel:accl", timeout=60, **kwargs):
    torch.accel.set_device(LOCAL)
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout), **kwargs)


def value(rank, shape, dtype, offset=0):
    """Rank's input: small integers, exact in every dtype, distinct per rank and position."""
    n = 1
    for s in shape:
        n *= s
    base = torch.arange(n, dtype=torch.int64).view(shape)
    if dtype == torch.bool:
        return (base + rank + offset) % 3 == 0
    return (base % 5 + 1 + 2 * rank + offset).to(dtype)


def same(actual, expected, what=""):
    actual = actual.cpu()
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert torch.equal(actual, expected), (
        f"{what}: {actual.flatten()[:8]} != {expected.flatten()[:8]}"
    )


def reduce_all(op, dtype, shape):
    """The closed form of a reduction over every rank's value()."""
    vals = [value(r, shape, dtype) for r in range(WORLD)]
    if dtype == torch.bool:
        stack = torch.stack(vals)
        return {
            "sum": stack.any(0),
            "max": stack.any(0),
            "product": stack.all(0),
            "min": stack.all(0),
        }[op]
    stack = torch.stack([v.double() for v in vals])
    out = {
        "sum": stack.sum(0),
        "product": stack.prod(0),
        "min": stack.amin(0),
        "max": stack.amax(0),
    }[op]
    return out.to(dtype)


@scenario
def collectives(check):
    init()
    shape = (4, 6)
    ops = {
        "sum": dist.ReduceOp.SUM,
        "product": dist.ReduceOp.PRODUCT,
        "min": dist.ReduceOp.MIN,
        "max": dist.ReduceOp.MAX,
    }
    for dtype in DTYPES:
        d = str(dtype).split(".")[1]
        for name, op in ops.items():

            @check(f"all_reduce_{name}_{d}")
            def _():
                t = value(RANK, shape, dtype).to(DEVICE)
                dist.all_reduce(t, op=op)
                expected = reduce_all(name, dtype, shape)
                same(t, expected, "vs closed form")
                if dtype != torch.bool or name in ("sum", "product"):
                    c = value(RANK, shape, dtype)
                    dist.all_reduce(c, op=op)  # the CPU tensor goes to gloo
                    same(t, c, "vs gloo on CPU")

        @check(f"all_reduce_avg_{d}")
        def _():
            t = value(RANK, shape, dtype).to(DEVICE)
            if dtype == torch.bool:
                try:
                    dist.all_reduce(t, op=dist.ReduceOp.AVG)
                except TypeError as e:
                    assert "AVG" in str(e), e
                    return
                raise AssertionError("AVG on bool did not raise TypeError")
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            total = reduce_all(
                "sum", torch.int64 if not dtype.is_floating_point else torch.float64, shape
            )
            if dtype.is_floating_point:
                expected = (total / WORLD).to(dtype)
            else:
                expected = torch.div(total, WORLD, rounding_mode="trunc").to(dtype)
            same(t, expected)

        @check(f"all_reduce_premul_sum_{d}")
        def _():
            t = value(RANK, shape, dtype).to(DEVICE)
            if not dtype.is_floating_point:
                try:
                    dist.all_reduce(t, op=dist._make_nccl_premul_sum(2.0))
                except TypeError as e:
                    assert "PREMUL_SUM" in str(e), e
                    return
                raise AssertionError("PREMUL_SUM on an integer tensor did not raise TypeError")
            dist.all_reduce(t, op=dist._make_nccl_premul_sum(2.0))
            expected = (2 * reduce_all("sum", torch.float64, shape)).to(dtype)
            same(t, expected, "scalar factor")
            t = value(RANK, shape, dtype).to(DEVICE)
            factor = torch.tensor([0.5], dtype=dtype, device=DEVICE)
            dist.all_reduce(t, op=dist._make_nccl_premul_sum(factor))
            same(t, (0.5 * reduce_all("sum", torch.float64, shape)).to(dtype), "tensor factor")

        @check(f"broadcast_{d}")
        def _():
            src = WORLD - 1
            t = value(RANK, shape, dtype).to(DEVICE)
            dist.broadcast(t, src=src)
            same(t, value(src, shape, dtype))

        @check(f"reduce_{d}")
        def _():
            t = value(RANK, shape, dtype).to(DEVICE)
            dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
            # The root gets the sum; the others keep their input, as with NCCL.
            same(t, reduce_all("sum", dtype, shape) if RANK == 0 else value(RANK, shape, dtype))

        gathered = torch.cat([value(r, shape, dtype) for r in range(WORLD)])

        @check(f"all_gather_{d}")
        def _():
            out = [torch.empty(shape, dtype=dtype, device=DEVICE) for _ in range(WORLD)]
            dist.all_gather(out, value(RANK, shape, dtype).to(DEVICE))
            same(torch.cat([o.cpu() for o in out]), gathered)

        @check(f"all_gather_into_tensor_{d}")
        def _():
            out = torch.empty((WORLD * shape[0], shape[1]), dtype=dtype, device=DEVICE)
            dist.all_gather_into_tensor(out, value(RANK, shape, dtype).to(DEVICE))
            same(out, gathered)

        @check(f"all_gather_coalesced_{d}")
        def _():
            # torch's coalescing manager: one accl call for both gathers.
            outs = [
                torch.empty((WORLD * shape[0], shape[1]), dtype=dtype, device=DEVICE)
                for _ in range(2)
            ]
            with dist._coalescing_manager(device=DEVICE, async_ops=True) as cm:
                dist.all_gather_into_tensor(outs[0], value(RANK, shape, dtype).to(DEVICE))
                dist.all_gather_into_tensor(outs[1], value(RANK, shape, dtype, 1).to(DEVICE))
            cm.wait()
            same(outs[0], gathered)
            same(outs[1], torch.cat([value(r, shape, dtype, 1) for r in range(WORLD)]))

        @check(f"reduce_scatter_{d}")
        def _():
            full = (WORLD * shape[0], shape[1])
            inputs = list(value(RANK, full, dtype).to(DEVICE).chunk(WORLD))
            out = torch.empty(shape, dtype=dtype, device=DEVICE)
            dist.reduce_scatter(out, inputs)
            same(out, reduce_all("sum", dtype, full).chunk(WORLD)[RANK])

        @check(f"reduce_scatter_tensor_{d}")
        def _():
            full = (WORLD * shape[0], shape[1])
            out = torch.empty(shape, dtype=dtype, device=DEVICE)
            dist.reduce_scatter_tensor(out, value(RANK, full, dtype).to(DEVICE))
            same(out, reduce_all("sum", dtype, full).chunk(WORLD)[RANK])

        @check(f"all_to_all_{d}")
        def _():
            inputs = [value(RANK, (r + 1, 3), dtype, r).to(DEVICE) for r in range(WORLD)]
            outputs = [torch.empty((RANK + 1, 3), dtype=dtype, device=DEVICE) for _ in range(WORLD)]
            dist.all_to_all(outputs, inputs)
            for r in range(WORLD):
                same(outputs[r], value(r, (RANK + 1, 3), dtype, RANK), f"from rank {r}")

        @check(f"all_to_all_single_uneven_{d}")
        def _():
            # Rank s sends s + d + 1 rows to rank d.
            in_splits = [RANK + dst + 1 for dst in range(WORLD)]
            out_splits = [src + RANK + 1 for src in range(WORLD)]
            inp = value(RANK, (sum(in_splits), 2), dtype).to(DEVICE)
            out = torch.empty((sum(out_splits), 2), dtype=dtype, device=DEVICE)
            dist.all_to_all_single(out, inp, out_splits, in_splits)
            expected = [
                value(src, (sum(src + dst + 1 for dst in range(WORLD)), 2), dtype).split(
                    [src + dst + 1 for dst in range(WORLD)]
                )[RANK]
                for src in range(WORLD)
            ]
            same(out, torch.cat(expected))

        @check(f"gather_{d}")
        def _():
            root = WORLD - 1
            out = (
                [torch.empty(shape, dtype=dtype, device=DEVICE) for _ in range(WORLD)]
                if RANK == root
                else None
            )
            dist.gather(value(RANK, shape, dtype).to(DEVICE), out, dst=root)
            if RANK == root:
                same(torch.cat([o.cpu() for o in out]), gathered)

        @check(f"scatter_{d}")
        def _():
            pieces = (
                [value(r, shape, dtype, 7).to(DEVICE) for r in range(WORLD)] if RANK == 0 else None
            )
            out = torch.empty(shape, dtype=dtype, device=DEVICE)
            dist.scatter(out, pieces, src=0)
            same(out, value(RANK, shape, dtype, 7))

        peer = (RANK + 1) % WORLD
        prev = (RANK - 1) % WORLD

        @check(f"send_recv_{d}")
        def _():
            if RANK == 0:
                dist.send(value(RANK, shape, dtype).to(DEVICE), dst=1)
            elif RANK == 1:
                t = torch.empty(shape, dtype=dtype, device=DEVICE)
                dist.recv(t, src=0)
                same(t, value(0, shape, dtype))

        @check(f"isend_irecv_{d}")
        def _():
            # Both ranks send first: sends and receives must not block each other.
            t = torch.empty(shape, dtype=dtype, device=DEVICE)
            reqs = [
                dist.isend(value(RANK, shape, dtype).to(DEVICE), dst=peer),
                dist.irecv(t, src=prev),
            ]
            for r in reqs:
                r.wait()
            same(t, value(prev, shape, dtype))

        @check(f"batch_isend_irecv_{d}")
        def _():
            a = torch.empty(shape, dtype=dtype, device=DEVICE)
            b = torch.empty((2, 3), dtype=dtype, device=DEVICE)
            ops = [
                dist.P2POp(dist.isend, value(RANK, shape, dtype).to(DEVICE), peer),
                dist.P2POp(dist.isend, value(RANK, (2, 3), dtype, 3).to(DEVICE), peer),
                dist.P2POp(dist.irecv, a, prev),
                dist.P2POp(dist.irecv, b, prev),
            ]
            for r in dist.batch_isend_irecv(ops):
                r.wait()
            same(a, value(prev, shape, dtype))
            same(b, value(prev, (2, 3), dtype, 3))

    @check("barrier")
    def _():
        # The last rank arrives late; nobody leaves the barrier before it arrives.
        if RANK == WORLD - 1:
            time.sleep(0.5)
        start = time.monotonic()
        marker = torch.tensor([float(RANK)], device=DEVICE)
        dist.barrier()
        if RANK != WORLD - 1:
            assert time.monotonic() - start > 0.3, "left the barrier before the last rank"
        same(marker, torch.tensor([float(RANK)]))

    @check("all_gather_object")
    def _():
        out = [None] * WORLD
        dist.all_gather_object(out, {"rank": RANK, "name": f"r{RANK}"})
        assert out == [{"rank": r, "name": f"r{r}"} for r in range(WORLD)], out

    @check("broadcast_object_list")
    def _():
        objs = [("from", RANK), {"x": [1, 2, RANK]}] if RANK == 1 else [None, None]
        dist.broadcast_object_list(objs, src=1)
        assert objs == [("from", 1), {"x": [1, 2, 1]}], objs

    dist.destroy_process_group()


@scenario
def semantics(check):
    init("accl", device_id=DEVICE)
    from torch_accel.distributed import staging_stats

    @check("default_backend_and_transport")
    def _():
        pg = dist.group.WORLD
        assert dist.get_backend() == "accl", dist.get_backend()
        backend = pg._get_backend(DEVICE)
        assert backend.transport.startswith("gloo"), backend.transport
        assert pg.bound_device_id == DEVICE

    @check("starts_after_the_producing_stream")
    def _():
        # The input is produced on a side stream; the collective must see the final values.
        side = torch.accel.Stream()
        x = torch.ones(1 << 16, device=DEVICE)
        side.wait_stream(torch.accel.current_stream())  # x is filled on the current stream
        with torch.accel.stream(side):
            for _ in range(20):
                x = x * 2
            dist.all_reduce(x)
        torch.accel.current_stream().wait_stream(side)
        same(x, torch.full((1 << 16,), float(WORLD * 2**20)))

    @check("back_to_back_collectives_see_each_other_and_the_work_between")
    def _():
        # Back to back on the current stream, the second collective of a pair skips waiting
        # for it (nothing was queued between); any work queued between is waited for.
        n = 1 << 16
        t = torch.full((n,), float(RANK + 1), device=DEVICE)
        total = sum(r + 1 for r in range(WORLD))
        dist.all_reduce(t)
        dist.all_reduce(t)  # sees the first one's result
        same(t, torch.full((n,), float(total * WORLD)))
        for _ in range(20):  # a kernel chain queued between two collectives
            t = t * 2
        dist.all_reduce(t)
        same(t, torch.full((n,), float(total * WORLD**2 * 2**20)))
        side = torch.accel.Stream()  # work waited for from another stream
        u = torch.full((n,), float(RANK), device=DEVICE)
        dist.all_reduce(t)
        side.wait_stream(torch.accel.current_stream())
        with torch.accel.stream(side):
            for _ in range(20):
                u = u + 1
        torch.accel.current_stream().wait_stream(side)
        dist.all_reduce(u)
        same(u, torch.full((n,), float(sum(r + 20 for r in range(WORLD)))))
        # Another current stream: it is waited for as any first one.
        with torch.accel.stream(side):
            v = torch.full((n,), 3.0, device=DEVICE)
            for _ in range(20):
                v = v + 1
            dist.all_reduce(v)
            dist.all_reduce(v)
        torch.accel.current_stream().wait_stream(side)
        same(v, torch.full((n,), 23.0 * WORLD * WORLD))

    @check("async_op_does_not_block_the_host")
    def _():
        # The last rank joins late: the others return at once, with the work pending.
        if RANK == WORLD - 1:
            time.sleep(1.0)
        t = torch.full((1024,), float(RANK + 1), device=DEVICE)
        work = dist.all_reduce(t, async_op=True)
        if RANK != WORLD - 1:
            assert not work.is_completed(), "completed before the last rank joined"
        work.wait()  # the current stream waits; the values are right when it runs
        total = float(sum(r + 1 for r in range(WORLD)))
        same(t * 1, torch.full((1024,), total))
        work.synchronize()
        torch.accel.synchronize()
        assert work.is_completed() and work.is_success()

    @check("sync_op_orders_the_current_stream")
    def _():
        if RANK == WORLD - 1:
            time.sleep(0.5)
        t = torch.full((8,), 1.0, device=DEVICE)
        dist.all_reduce(t)  # returns before the peer joins; the stream waits
        if RANK != WORLD - 1:
            assert not torch.accel.current_stream().query(), "all_reduce blocked the host"
        same(t + 1, torch.full((8,), float(WORLD + 1)))

    @check("graph_capture_is_refused")
    def _():
        t = torch.ones(4, device=DEVICE)
        g = torch.accel.Graph()
        side = torch.accel.Stream()
        side.wait_stream(torch.accel.current_stream())
        with torch.accel.stream(side):
            with torch.accel.graph(g):
                expect_error(lambda: dist.all_reduce(t), RuntimeError, "captured in a graph")
                t.add_(1)
        g.replay()
        torch.accel.synchronize()
        same(t, torch.full((4,), 2.0))
        dist.all_reduce(t)  # the group goes on
        same(t, torch.full((4,), 2.0 * WORLD))

    @check("future_then")
    def _():
        t = torch.full((4,), float(RANK), device=DEVICE)
        fut = dist.all_reduce(t, async_op=True).get_future()
        doubled = fut.then(lambda f: f.value()[0] * 2).wait()
        same(doubled, torch.full((4,), 2.0 * sum(range(WORLD))))

    @check("staging_buffers_are_reused")
    def _():
        t = torch.ones(1 << 18, device=DEVICE)  # 1 MiB
        lists = [torch.empty(1 << 16, device=DEVICE) for _ in range(WORLD)]

        def burst():  # a training loop's shape: a few collectives, then a synchronisation
            for _ in range(10):
                dist.all_reduce(t)
                dist.all_gather(lists, t[: 1 << 16])
                torch.accel.synchronize()

        # The first burst grows the pinned pool and the caching allocator to what one
        # iteration keeps in flight (a host running further ahead would need more blocks).
        burst()
        before = staging_stats()
        device_allocs = torch.accel.memory_stats()["num_device_alloc"]
        burst()
        after = staging_stats()
        assert after["host_allocs"] == before["host_allocs"], (before, after)
        assert after["reuses"] - before["reuses"] == after["acquires"] - before["acquires"] == 30
        assert after["in_use_bytes"] == 0, after
        assert torch.accel.memory_stats()["num_device_alloc"] == device_allocs

    @check("queued_collectives_stage_through_one_block")
    def _():
        # Collectives queued together reuse a staging block in stream order: ten 2 MiB
        # all_reduces in flight at once need one 2 MiB block (none was cached before).
        t = torch.ones(1 << 19, device=DEVICE)
        before = staging_stats()
        for _ in range(10):
            dist.all_reduce(t)
        torch.accel.synchronize()
        after = staging_stats()
        assert after["host_allocs"] - before["host_allocs"] == 1, (before, after)
        assert after["cached_bytes"] - before["cached_bytes"] == 2 << 20, (before, after)
        assert after["in_use_bytes"] == 0, after
        same(t, torch.full((1 << 19,), float(WORLD**10)))

    @check("record_stream_defers_reuse_of_inputs")
    def _():
        # The communication stream is held up (the last rank joins late) while the input is
        # freed and its block could be handed out again: the allocator must not, or the
        # gathered values would be the new tensor's.
        if RANK == WORLD - 1:
            time.sleep(0.5)
        dist.all_reduce(torch.ones(4, device=DEVICE))
        t = torch.full((1 << 16,), float(RANK + 1), device=DEVICE)
        out = torch.empty(WORLD << 16, device=DEVICE)
        dist.all_gather_into_tensor(out, t)
        del t
        fresh = torch.full((1 << 16,), -7.0, device=DEVICE)
        same(out, torch.cat([torch.full((1 << 16,), float(r + 1)) for r in range(WORLD)]))
        same(fresh, torch.full((1 << 16,), -7.0))

    dist.destroy_process_group()


def expect_error(fn, types, *words):
    """Runs fn, which must raise one of types with every word in its message; returns it."""
    try:
        fn()
    except types as e:
        message = str(e)
        missing = [w for w in words if w not in message]
        assert not missing, f"{missing} not in: {message}"
        return message
    raise AssertionError(f"no {types} raised")


@scenario
def mismatch(check):
    """Ranks that disagree on shape or dtype get an error naming the collective."""
    kind = os.environ["ACCEL_TEST_MISMATCH"]
    init("accl", device_id=DEVICE)
    shape = (4, 8) if RANK == 0 or kind != "shape" else (4, 9)
    dtype = torch.float32 if RANK == 0 or kind != "dtype" else torch.bfloat16
    t = torch.ones(shape, dtype=dtype, device=DEVICE)
    collective = {"shape": "all_reduce", "dtype": "all_gather_into_tensor"}[kind]

    @check("error_at_the_next_synchronize")
    def _():
        if kind == "shape":
            work = dist.all_reduce(t, async_op=True)
        else:
            out = torch.empty((WORLD * 4, 8), dtype=dtype, device=DEVICE)
            work = dist.all_gather_into_tensor(out, t, async_op=True)
        msg = expect_error(torch.accel.synchronize, RuntimeError, collective, "disagree")
        print("synchronize:", msg.splitlines()[0][:400])
        msg = expect_error(
            work.wait,
            dist.DistBackendError,
            collective,
            "disagree",
            "rank 0 called",
            "rank 1 called",
        )
        print("wait:", msg.splitlines()[0][:400])
        # The group refuses further work, at once, instead of running on garbage.
        expect_error(
            lambda: dist.all_reduce(torch.ones(2, device=DEVICE)),
            dist.DistBackendError,
            "cannot be used after a failed collective",
        )


def hold_current_stream():
    """Queues a few milliseconds of work on the current stream, so that the collectives called
    next are all queued before the first one runs (and are checked together)."""
    a = torch.ones(256, 256, device=DEVICE)
    for _ in range(20):
        a = (a @ a) / 256
    return a


@scenario
def mismatch_in_a_burst(check):
    """Collectives queued together are checked together: the ones before a disagreement run
    with the right values, the one the ranks disagree on fails naming itself, and the group
    refuses what follows."""
    kind = os.environ["ACCEL_TEST_MISMATCH"]
    init("accl", device_id=DEVICE)

    @check("earlier_calls_run_and_the_disagreement_fails")
    def _():
        # Rank 0 queues all three before its first exchange; rank 1 most likely exchanges as
        # each call comes, so the exchanges also cover ranks that passed different counts.
        if RANK == 0:
            hold_current_stream()
        first = torch.full((4, 8), float(RANK + 1), device=DEVICE)
        second = torch.full((3,), float(RANK + 1), dtype=torch.int64, device=DEVICE)
        works = [dist.all_reduce(first, async_op=True), dist.all_reduce(second, async_op=True)]
        if kind == "shape":
            rows = 4 if RANK == 0 else 5
            bad = torch.ones(rows, 8, device=DEVICE)
            works.append(dist.all_reduce(bad, async_op=True))
            words = ("all_reduce(Float[4, 8], SUM)", "all_reduce(Float[5, 8], SUM)")
        else:  # all_to_all_single: rank 1 expects one row fewer from rank 0 than rank 0 sends
            out_splits = [2, 2] if RANK == 0 else [1, 2]
            inp = torch.ones(4, 3, device=DEVICE)
            out = torch.empty(sum(out_splits), 3, device=DEVICE)
            works.append(dist.all_to_all_single(out, inp, out_splits, [2, 2], async_op=True))
            words = ("all_to_all_single", "rank 0 sends 6 elements to rank 1")
        # The failure is the device's asynchronous error, raised (and cleared) by the next
        # synchronize; the two collectives before it completed.
        expect_error(torch.accel.synchronize, RuntimeError, "disagree", *words)
        total = float(sum(r + 1 for r in range(WORLD)))
        for work in works[:2]:
            work.wait()
            assert work.is_success()
        same(first, torch.full((4, 8), total))
        same(second, torch.full((3,), int(total)))
        msg = expect_error(works[2].wait, dist.DistBackendError, "disagree", *words)
        print("wait:", msg.splitlines()[0][:400])
        expect_error(
            lambda: dist.all_reduce(torch.ones(2, device=DEVICE)),
            dist.DistBackendError,
            "cannot be used after a failed collective",
        )


@scenario
def dead_rank(check):
    """A rank dies mid-training; the others fail within the group's timeout."""
    timeout = 10
    init("accl", device_id=DEVICE, timeout=timeout)
    model = torch.nn.Linear(16, 16).to(DEVICE)
    for _ in range(2):
        grad = model.weight.detach().clone()
        dist.all_reduce(grad)
        grad.sum().item()
    if RANK == 1:
        os._exit(3)  # dies without a word to the group

    @check("survivor_fails_within_the_timeout")
    def _():
        start = time.monotonic()

        def step():
            for _ in range(100):
                g = model.weight.detach().clone()
                dist.all_reduce(g)
                g.sum().item()

        msg = expect_error(step, RuntimeError, "all_reduce")
        elapsed = time.monotonic() - start
        print(f"failed after {elapsed:.1f} s:", msg.splitlines()[0][:400])
        assert elapsed < timeout + 5, f"took {elapsed:.1f} s (timeout {timeout} s)"

    write(check.results, sys.argv[2].replace("{rank}", str(RANK)))
    os._exit(0)  # the group cannot shut down cleanly with a dead peer


@scenario
def wrong_device(check):
    init("accl", device_id=DEVICE)
    other = torch.device("accel", 1 - LOCAL)

    @check("tensor_on_another_device")
    def _():
        expect_error(
            lambda: dist.all_reduce(torch.ones(4, device=other)),
            RuntimeError,
            f"accel:{other.index}",
            f"accel:{LOCAL}",
            "all_reduce",
        )

    @check("non_contiguous_tensor")
    def _():
        t = torch.ones(4, 4, device=DEVICE).t()
        expect_error(lambda: dist.all_reduce(t), ValueError, "contiguous")

    @check("group_still_works")
    def _():
        t = torch.full((4,), float(RANK), device=DEVICE)
        dist.all_reduce(t)
        same(t, torch.full((4,), float(sum(range(WORLD)))))

    dist.destroy_process_group()


@scenario
def destroy(check):
    from torch_accel.distributed import staging_stats

    baseline = torch.accel.memory_allocated(DEVICE)
    # A second group after the first is destroyed; the second has several backends, of which
    # accl must be the default (as nccl is for cuda).
    for round, backend in enumerate(("accl", "cpu:gloo,accel:accl")):
        init(backend, device_id=DEVICE)
        default = dist.group.WORLD._get_backend_name()
        t = torch.ones(1 << 18, device=DEVICE)
        out = torch.empty(WORLD << 18, device=DEVICE)
        for _ in range(3):
            dist.all_reduce(t)
            dist.all_gather_into_tensor(out, t)
            dist.reduce_scatter_tensor(t, out)
        expected = float(WORLD**6)
        dist.destroy_process_group()

        @check(f"round{round}_values")
        def _():
            same(t, torch.full((1 << 18,), expected))

        @check(f"round{round}_default_backend")
        def _():
            assert default == "custom", default  # BackendType.CUSTOM: accl

        @check(f"round{round}_no_staging_leak")
        def _():
            stats = staging_stats()
            assert stats["in_use_bytes"] == 0 and stats["cached_bytes"] == 0, stats
            assert stats["host_allocs"] == stats["host_frees"] > 0, stats

        @check(f"round{round}_allocator_consistent")
        def _():
            nonlocal t, out
            del t, out
            torch.accel.synchronize()
            assert torch.accel.memory_allocated(DEVICE) == baseline
            torch.accel.empty_cache()
            stats = torch.accel.memory_stats(DEVICE)
            assert stats["reserved_bytes.all.current"] == 0, stats["reserved_bytes.all.current"]
            assert stats["num_device_alloc"] == stats["num_device_free"], stats
            x = torch.arange(10.0, device=DEVICE)
            same(x * 2, torch.arange(10.0) * 2)


def mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 8),
    )


def global_batch(step, rows=8):
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(rows, 32, generator=g), torch.randn(rows, 8, generator=g)


def local_part(t):
    return t[RANK::WORLD]


def close(a, b, what, rtol=1e-5, atol=1e-6):
    a, b = a.detach().cpu().float(), b.detach().cpu().float()
    assert torch.allclose(a, b, rtol=rtol, atol=atol), f"{what}: max diff {(a - b).abs().max()}"


def reference_steps(steps, lr=0.1):
    """The single-process run: the same model trained on the whole global batch."""
    ref = mlp().to(DEVICE)
    opt = torch.optim.SGD(ref.parameters(), lr=lr)
    for step in range(steps):
        x, y = global_batch(step)
        torch.nn.functional.mse_loss(ref(x.to(DEVICE)), y.to(DEVICE)).backward()
        opt.step()
        opt.zero_grad()
    return ref


@scenario
def ddp(check):
    init(None, device_id=DEVICE)  # no backend named: the accelerator's default, accl
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(model, steps, hook=None, lr=0.1):
        if hook is not None:
            model.register_comm_hook(dist.group.WORLD, hook)
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for step in range(steps):
            x, y = global_batch(step)
            out = model(local_part(x).to(DEVICE))
            torch.nn.functional.mse_loss(out, local_part(y).to(DEVICE)).backward()
            opt.step()
            opt.zero_grad()
        return model

    ref = reference_steps(3)

    @check("ddp_matches_single_process_with_buckets")
    def _():
        assert dist.get_backend() == "accl"
        # A tiny bucket cap: each layer's gradients reduce in buckets of their own.
        model = DDP(mlp().to(DEVICE), device_ids=[LOCAL], bucket_cap_mb=0.01)
        train(model, 3)
        buckets = model._get_ddp_logging_data().get("num_buckets_reduced") or len(
            model.reducer._get_zeros_like_grad_buckets()
        )
        assert buckets > 1, buckets
        for (name, p), q in zip(model.module.named_parameters(), ref.parameters()):
            close(p, q, name)

    @check("ddp_no_sync_accumulates_locally")
    def _():
        model = DDP(mlp().to(DEVICE), device_ids=[LOCAL])
        x, y = global_batch(0, rows=16)
        xs, ys = local_part(x).to(DEVICE), local_part(y).to(DEVICE)
        with model.no_sync():
            torch.nn.functional.mse_loss(model(xs[:4]), ys[:4]).backward()
        local = model.module[0].weight.grad.clone()
        norms = [None] * WORLD
        dist.all_gather_object(norms, float(local.norm()))
        assert len(set(norms)) == WORLD, f"gradients were synchronised under no_sync: {norms}"
        torch.nn.functional.mse_loss(model(xs[4:]), ys[4:]).backward()
        # Accumulated over both micro-batches, then averaged over the ranks.
        reference = mlp().to(DEVICE)
        for half in (slice(0, 4), slice(4, 8)):
            rows = torch.cat([local_part_of(x, r)[half] for r in range(WORLD)]).to(DEVICE)
            targets = torch.cat([local_part_of(y, r)[half] for r in range(WORLD)]).to(DEVICE)
            torch.nn.functional.mse_loss(reference(rows), targets).backward()
        for p, q in zip(model.module.parameters(), reference.parameters()):
            close(p.grad, q.grad, "accumulated gradient")

    @check("ddp_allreduce_hook")
    def _():
        model = train(DDP(mlp().to(DEVICE), device_ids=[LOCAL]), 3, default_hooks.allreduce_hook)
        for p, q in zip(model.module.parameters(), ref.parameters()):
            close(p, q, "allreduce hook")

    @check("ddp_runtime_stats_from_accel_events")
    def _():
        # DDP's logging data times the forward, the backward and its communication with the
        # device type's registered timer (events on the current stream); without one it has none.
        model = train(DDP(mlp().to(DEVICE), device_ids=[LOCAL]), 3)
        data = model._get_ddp_logging_data()
        times = {
            k: data.get(k, 0)
            for k in (
                "avg_forward_compute_time",
                "avg_backward_compute_time",
                "avg_backward_comm_time",
            )
        }
        assert all(t > 0 for t in times.values()), data
        # Device time of an iteration's parts, in ns: each within the whole run's wall time.
        assert all(t < 60e9 for t in times.values()), times
        overlap = data.get("avg_backward_compute_comm_overlap_time", 0)
        assert 0 <= overlap <= times["avg_backward_comm_time"], data

    @check("ddp_bf16_compress_hook")
    def _():
        from torch_accel.distributed import bf16_compression_hook

        model = train(DDP(mlp().to(DEVICE), device_ids=[LOCAL]), 3, bf16_compression_hook)
        for p, q in zip(model.module.parameters(), ref.parameters()):
            close(p, q, "bf16 compression hook", rtol=2e-2, atol=2e-3)
        torch.nn.Module.zero_grad(model)

    dist.destroy_process_group()


def local_part_of(t, rank):
    return t[rank::WORLD]


@scenario
def fsdp(check):
    init("accl", device_id=DEVICE)
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor

    ref = reference_steps(3)

    @check("fsdp2_matches_single_process")
    def _():
        model = mlp().to(DEVICE)
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer)
        fully_shard(model)
        assert isinstance(model[0].weight, DTensor)
        assert model[0].weight.to_local().shape[0] == 64 // WORLD
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x, y = global_batch(step)
            out = model(local_part(x).to(DEVICE))
            torch.nn.functional.mse_loss(out, local_part(y).to(DEVICE)).backward()
            opt.step()
            opt.zero_grad()
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            close(p.full_tensor(), q, name)

    dist.destroy_process_group()


@scenario
def checkpoint(check):
    """FSDP2 with a bf16 mixed-precision policy, saved and loaded by torch.distributed.checkpoint
    (each rank writes its shards), and gathered whole to CPU as a full state dict."""
    init("accl", device_id=DEVICE)
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_state_dict,
        set_state_dict,
    )
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)

    def sharded():
        model = mlp().to(DEVICE)
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer, mp_policy=policy)
        fully_shard(model, mp_policy=policy)
        return model, torch.optim.AdamW(model.parameters(), lr=1e-2)

    def train(model, opt, steps, seed):
        for step in range(steps):
            x, y = global_batch(seed + step)
            out = model(local_part(x).to(DEVICE)).float()
            torch.nn.functional.mse_loss(out, local_part(y).to(DEVICE)).backward()
            opt.step()
            opt.zero_grad()

    path = os.environ["CHECKPOINT_DIR"]

    @check("save_load_resume")
    def _():
        model, opt = sharded()
        train(model, opt, 3, 0)
        msd, osd = get_state_dict(model, opt)
        dcp.save({"model": msd, "optim": osd}, checkpoint_id=path)
        restored, opt2 = sharded()  # the same init: the load must overwrite a trained state
        msd2, osd2 = get_state_dict(restored, opt2)
        state = {"model": msd2, "optim": osd2}
        dcp.load(state, checkpoint_id=path)
        set_state_dict(
            restored, opt2, model_state_dict=state["model"], optim_state_dict=state["optim"]
        )
        for (name, p), q in zip(model.named_parameters(), restored.parameters()):
            same(q.full_tensor(), p.full_tensor().cpu(), name)
        train(model, opt, 2, 3)  # resuming gives the uninterrupted run's parameters
        train(restored, opt2, 2, 3)
        for (name, p), q in zip(model.named_parameters(), restored.parameters()):
            same(q.full_tensor(), p.full_tensor().cpu(), name)
        full = get_model_state_dict(
            model, options=StateDictOptions(full_state_dict=True, cpu_offload=True)
        )
        whole = {name: p.full_tensor().cpu() for name, p in model.named_parameters()}
        if RANK == 0:  # cpu_offload gives the full state dict to rank 0 alone
            assert {v.device.type for v in full.values()} == {"cpu"}
            for name, t in whole.items():
                same(full[name], t, name)
        else:
            assert full == {}

    dist.destroy_process_group()


@scenario
def tensor_parallel(check):
    """Megatron-style tensor parallelism over a DeviceMesh, and the functional and autograd
    collectives it is built on, eager and under torch.compile."""
    init("accl", device_id=DEVICE)
    import torch.distributed._functional_collectives as funcol
    import torch.distributed.nn.functional as dist_fn
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )

    mesh = init_device_mesh("accel", (WORLD,))

    @check("colwise_rowwise_mlp")
    def _():
        torch.manual_seed(0)
        ref = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
        model = parallelize_module(
            copy.deepcopy(ref).to(DEVICE), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()}
        )
        x = torch.randn(4, 16, generator=torch.Generator().manual_seed(1))
        out = model(x.to(DEVICE))
        close(out, ref(x), "output")
        out.sum().backward()
        ref(x).sum().backward()
        close(model[0].weight.grad.full_tensor(), ref[0].weight.grad, "colwise weight grad")
        close(model[2].weight.grad.full_tensor(), ref[2].weight.grad, "rowwise weight grad")

    @check("functional_collectives")
    def _():
        t = torch.full((4,), float(RANK + 1), device=DEVICE)
        total = float(sum(range(1, WORLD + 1)))
        same(funcol.all_reduce(t, "sum", mesh), torch.full((4,), total))
        gathered = funcol.all_gather_tensor(t, 0, mesh)
        same(gathered, torch.cat([torch.full((4,), float(r + 1)) for r in range(WORLD)]))
        compiled = torch.compile(lambda v: funcol.all_reduce(v * 2, "sum", mesh) + 1)
        same(compiled(t), torch.full((4,), 2 * total + 1))

    @check("autograd_collectives")
    def _():
        a = torch.full((3,), float(RANK + 1), device=DEVICE, requires_grad=True)
        dist_fn.all_reduce(a).sum().backward()
        same(a.grad, torch.full((3,), float(WORLD)))  # the gradient is all-reduced too

    dist.destroy_process_group()


@scenario
def dtensor(check):
    init("accl", device_id=DEVICE)
    from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    torch.manual_seed(0)
    x = torch.randn(8, 6)
    w = torch.randn(6, 4)

    @check("device_mesh")
    def _():
        mesh = DeviceMesh("accel", list(range(WORLD)))
        assert mesh.device_type == "accel" and mesh.size() == WORLD
        assert init_device_mesh("accel", (WORLD,)).get_group().size() == WORLD

    @check("dtensor_ops")
    def _():
        mesh = init_device_mesh("accel", (WORLD,))
        dx = distribute_tensor(x.to(DEVICE), mesh, [Shard(0)])
        assert dx.to_local().shape == (8 // WORLD, 6)
        same((dx * 2 + 1).full_tensor(), x * 2 + 1)
        close(dx.sum().full_tensor(), x.sum(), "sum over shards")
        dw = distribute_tensor(w.to(DEVICE), mesh, [Replicate()])
        close((dx @ dw).full_tensor(), x @ w, "matmul")
        same(dx.redistribute(mesh, [Shard(1)]).full_tensor(), x)
        same(dx.redistribute(mesh, [Replicate()]).to_local(), x)

    dist.destroy_process_group()


@scenario
def torchrun(check):
    """Started by torchrun: the env:// rendezvous, no backend named."""
    init(None)

    @check("env_and_all_reduce")
    def _():
        assert dist.get_world_size() == WORLD and dist.get_rank() == RANK
        assert dist.get_backend_config() == "accel:accl", dist.get_backend_config()
        t = torch.full((4,), float(RANK + 1), device=DEVICE)
        dist.all_reduce(t)
        same(t, torch.full((4,), float(sum(range(1, WORLD + 1)))))
        ranks = [None] * WORLD
        dist.all_gather_object(ranks, (RANK, os.environ.get("GROUP_RANK")))
        assert [r for r, _ in ranks] == list(range(WORLD))

    dist.destroy_process_group()


@scenario
def devices_and_teardown(check):
    wrong_device(check)
    destroy(check)


def write(report, path):
    with open(path, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2].replace("{rank}", str(RANK))
    checks = Checks()
    SCENARIOS[name](checks)
    write(checks.results, out)

"""Graph capture and replay: ``torch.cuda.graphs``'s API on accel.

A capture records the work of a region of code on a side stream; ``replay()`` launches the
recording as one unit, with no dispatch and no allocation, so launch-bound code (many small
ops) runs several times faster. The semantics are CUDA graphs': a private memory pool per
graph (shareable through a pool handle), no host synchronisation inside a capture, fresh
random numbers on every replay, tensors read and written at the addresses of the capture.
"""

import gc

import torch

from .. import _C
from .device import synchronize
from .memory import empty_cache
from .streams import Stream
from .streams import stream as _stream_context

__all__ = [
    "is_current_stream_capturing",
    "graph_pool_handle",
    "Graph",
    "AccelGraph",
    "graph",
    "make_graphed_callables",
]


def is_current_stream_capturing() -> bool:
    """True while the current stream of the current device is capturing a graph."""
    return _C._is_current_stream_capturing()


def graph_pool_handle():
    """An opaque token for a graph memory pool: graphs captured with the same ``pool`` share
    memory (capture and replay them in the same order)."""
    return _C._graph_pool_handle()


class Graph(_C._Graph):
    """An accel graph, with ``torch.cuda.CUDAGraph``'s methods: ``capture_begin(pool=None,
    capture_error_mode="global")``, ``capture_end()``, ``replay()``, ``reset()``, ``pool()``,
    ``instantiate()``, ``enable_debug_mode()``, ``debug_dump(path)``.

    ``torch.accelerator.Graph`` (torch 2.12+) is the same implementation."""

    def __init__(self, keep_graph: bool = False):
        super().__init__(keep_graph)


AccelGraph = Graph


class graph:
    """Context manager that captures accel work into ``accel_graph`` for later replay, as
    ``torch.cuda.graph``: on ``stream`` (by default a side stream shared by all captures),
    into ``pool`` (by default the graph's own), with ``capture_error_mode`` "global" (a
    synchronising op anywhere is an error), "thread_local" or "relaxed".

    If the captured region raises, the capture is discarded and the exception propagates;
    the device and its streams stay usable."""

    default_capture_stream = None

    def __init__(
        self, accel_graph: Graph, pool=None, stream=None, capture_error_mode: str = "global"
    ):
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool = pool
        default = self.__class__.default_capture_stream
        self.capture_stream = stream if stream is not None else default
        self.stream_ctx = _stream_context(self.capture_stream)
        self.accel_graph = accel_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        # Capture into a clean allocator: what is free now is given back first.
        synchronize()
        if torch.compiler.config.force_cudagraph_gc:
            gc.collect()
        empty_cache()
        self.stream_ctx.__enter__()
        try:
            self.accel_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.accel_graph.capture_end()
            else:
                self.accel_graph._abort_capture()
        finally:
            self.stream_ctx.__exit__(exc_type, exc, tb)
        return False


def make_graphed_callables(
    callables, sample_args, num_warmup_iters: int = 3, allow_unused_input: bool = False, pool=None
):
    """Graphed versions of callables (functions or modules), as
    ``torch.cuda.make_graphed_callables``: each one's forward runs as one graph replay inside
    an autograd function whose backward replays a second graph. A tuple of callables shares
    one pool and must be called in the order given."""
    if torch.is_autocast_enabled() and torch.is_autocast_cache_enabled():
        raise RuntimeError(
            "make_graphed_callables does not support the autocast cache: use "
            "autocast(..., cache_enabled=False)"
        )
    single = not isinstance(callables, tuple)
    if single:
        callables, sample_args = (callables,), (sample_args,)

    flat_args = []
    for fn, args in zip(callables, sample_args):
        if isinstance(fn, torch.nn.Module):
            if fn._backward_hooks or fn._forward_hooks or fn._forward_pre_hooks:
                raise RuntimeError(
                    "modules passed to make_graphed_callables must have no hooks "
                    "registered yet (register them afterwards)"
                )
            if any(b.requires_grad for b in fn.buffers()):
                raise RuntimeError(
                    "in modules passed to make_graphed_callables only "
                    "parameters may require grad, not buffers"
                )
        leaves = tuple(torch.utils._pytree.arg_tree_leaves(*args))
        if not all(isinstance(a, torch.Tensor) for a in leaves):
            raise TypeError("make_graphed_callables: sample_args must contain only tensors")
        flat_args.append(leaves)

    params = [tuple(fn.parameters()) if isinstance(fn, torch.nn.Module) else () for fn in callables]
    # A graph reads its inputs where the capture found them: the user args, then parameters.
    surfaces = [args + p for args, p in zip(flat_args, params)]
    mempool = graph_pool_handle() if pool is None else pool

    def grads_of(outputs, surface, grad_outputs):
        needed = [o for o in outputs if o.requires_grad]
        if not needed:
            return None
        return torch.autograd.grad(
            needed,
            [i for i in surface if i.requires_grad],
            grad_outputs=grad_outputs,
            only_inputs=True,
            allow_unused=allow_unused_input,
        )

    # Warm up on a side stream, so that lazy initialisation stays out of the captures.
    synchronize()
    with _stream_context(Stream()):
        for fn, args, surface in zip(callables, sample_args, surfaces):
            for _ in range(num_warmup_iters):
                outputs = torch.utils._pytree.tree_leaves(fn(*args))
                grads_of(
                    outputs, surface, [torch.empty_like(o) for o in outputs if o.requires_grad]
                )
                del outputs
    synchronize()

    # Captures share the pool: forwards in order, then backwards in reverse, as they run.
    fwd_graphs = [Graph() for _ in callables]
    bwd_graphs = [Graph() for _ in callables]
    static_outputs, out_specs = [], []
    for fn, args, g in zip(callables, sample_args, fwd_graphs):
        with graph(g, pool=mempool):
            outputs = fn(*args)
        flat, spec = torch.utils._pytree.tree_flatten(outputs)
        static_outputs.append(tuple(flat))
        out_specs.append(spec)

    static_grad_outputs, static_grad_inputs = [None] * len(callables), [None] * len(callables)
    for i in reversed(range(len(callables))):
        grad_outputs = tuple(
            torch.empty_like(o) if o.requires_grad else None for o in static_outputs[i]
        )
        with graph(bwd_graphs[i], pool=mempool):
            grads = grads_of(
                static_outputs[i], surfaces[i], [g for g in grad_outputs if g is not None]
            )
        grads = iter(grads or ())
        static_grad_inputs[i] = tuple(next(grads) if a.requires_grad else None for a in surfaces[i])
        static_grad_outputs[i] = grad_outputs

    def graphed(i):
        n_user = len(flat_args[i])
        surface, outputs = surfaces[i], static_outputs[i]
        grad_outputs, grad_inputs = static_grad_outputs[i], static_grad_inputs[i]
        fwd, bwd = fwd_graphs[i], bwd_graphs[i]

        class Graphed(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *inputs):
                for static, given in zip(surface[:n_user], inputs[:n_user]):
                    if static.data_ptr() != given.data_ptr():
                        static.copy_(given)
                fwd.replay()
                return tuple(o.detach() for o in outputs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *grads):
                for static, given in zip(grad_outputs, grads):
                    if static is not None and static.data_ptr() != given.data_ptr():
                        static.copy_(given)
                bwd.replay()
                return tuple(g.detach() if g is not None else None for g in grad_inputs)

        def run(*user_args):
            leaves = tuple(torch.utils._pytree.arg_tree_leaves(*user_args))
            return torch.utils._pytree.tree_unflatten(
                Graphed.apply(*(leaves + params[i])), out_specs[i]
            )

        return run

    results = []
    for i, fn in enumerate(callables):
        run = graphed(i)
        if isinstance(fn, torch.nn.Module):
            # The graph holds one training mode; the other runs the module's own forward.
            def forward(*args, _fn=fn, _run=run, _mode=fn.training, _orig=fn.forward, **kwargs):
                return _run(*args, **kwargs) if _fn.training == _mode else _orig(*args, **kwargs)

            fn.forward = forward
            results.append(fn)
        else:
            results.append(run)
    return results[0] if single else tuple(results)

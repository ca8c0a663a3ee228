"""``torch.compile(mode="reduce-overhead")`` on accel: accel graphs where torch.cuda has
Inductor's graph trees.

Inductor wraps each compiled graph with ``compile_fx.cudagraphify``, which builds CUDA graph
trees on torch.cuda's graphs, allocator and streams. ``apply()`` puts ``AccelGraphed`` in
their place for a compiled graph on accel, lets a graph on the one accel device pass
Inductor's device check, and wraps accel graphs whole where graph partitioning would look
for GPU partitions. Compiled graphs of other devices keep graph trees.

``AccelGraphed`` keeps the trees' semantics, built more simply:
- per input signature (the static inputs' addresses, parameters and buffers read in place;
  the other tensors' shapes, strides and dtypes; the other arguments) the first call runs the
  compiled code (a warm-up), the next records it on a side stream into a private pool, and
  later calls copy the non-static inputs in and replay;
- the outputs are new tensors on the memory the replay wrote. A recording is replayed only
  once no storage of its outputs is referenced but by the recording itself; while a result is
  kept (the last step's loss, say), another recording of the signature serves the call, up
  to ``MAX_RECORDINGS`` per compiled graph, after which such calls run without graphs. So a
  kept result is never overwritten (the trees instead make it an error to read one);
- an output that is a view of a copied input is that view of the caller's input, and a
  mutated input that is not static is copied back after the replay;
- random ops draw fresh numbers on every replay (the accel generator's graph-safe state);
- a compiled graph that cannot be recorded (a synchronising op, an input on another device)
  runs without graphs, with one warning that says why.

Where this torch's Inductor lacks the functions this replaces, reduce-overhead compiles for
accel without graphs and says so once.
"""

import warnings

import torch

MAX_RECORDINGS = 8

NO_GRAPHS = (
    "torch_accel: mode='reduce-overhead' compiles for accel without graphs on this torch "
    "(its Inductor lacks compile_fx.cudagraphify or the device check this replaces); the "
    "compiled code runs as with mode='default'. For graph replay, capture the step with "
    "torch.accel.graph."
)

_warned = set()
_stats = {"recorded": 0, "replayed": 0, "eager": 0}


def stats() -> dict:
    """How many graphs reduce-overhead recorded on accel, replays it ran, and calls that ran
    without a graph (warm-ups and callables that cannot be recorded)."""
    return dict(_stats)


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, stacklevel=3)


def _is_accel(x) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "accel"


def _use_count(t: torch.Tensor) -> int:
    return torch._C._storage_Use_Count(t.untyped_storage()._cdata)


class _Recording:
    """One capture of the callable: its graph, the inputs it reads (the static ones in place,
    copies of the others) and the outputs it writes in its pool."""

    def __init__(self, graph, static_inputs, copied, mutated, outputs):
        self.graph = graph
        self.static_inputs = static_inputs
        self.copied = copied  # indices of the inputs copied in before each replay
        self.mutated = mutated  # copied inputs the graph writes: copied back after
        self.outputs = outputs
        # An output that is a view of a copied input is that view of the caller's input.
        copies = {static_inputs[i].untyped_storage().data_ptr(): i for i in copied}
        self.views_of = [
            copies.get(o.untyped_storage().data_ptr()) if isinstance(o, torch.Tensor) else None
            for o in outputs
        ]
        # The outputs in the graph's pool, one per storage, with the references this recording
        # holds to it: more means a caller still holds an output of the last replay.
        inputs = {x.untyped_storage().data_ptr() for x in static_inputs if _is_accel(x)}
        pooled = {}
        for o in outputs:
            if _is_accel(o) and o.untyped_storage().data_ptr() not in inputs:
                pooled.setdefault(o.untyped_storage().data_ptr(), o)
        self.pooled = [(o, _use_count(o)) for o in pooled.values()]
        # The static inputs are not held: a replay runs only for inputs at their addresses
        # (the signature says so), and holding another recording's outputs here would keep
        # that recording from being replayed again.
        kept = set(copied)
        self.static_inputs = [x if i in kept else None for i, x in enumerate(static_inputs)]

    def free(self) -> bool:
        """Whether a replay may overwrite the outputs of the last one: nobody else holds them."""
        return all(_use_count(o) <= held for o, held in self.pooled)

    def outputs_for(self, inputs):
        """The replay's outputs for the call with these inputs: a view of a copied input is
        that view of the caller's input, the others are new tensors on the recorded memory."""
        fresh = []
        for out, i in zip(self.outputs, self.views_of):
            if i is not None:
                placeholder, user = self.static_inputs[i], inputs[i]
                offset = user.storage_offset() + out.storage_offset() - placeholder.storage_offset()
                fresh.append(user.as_strided(out.size(), out.stride(), offset))
            elif isinstance(out, torch.Tensor):
                fresh.append(out.as_strided(out.size(), out.stride(), out.storage_offset()))
            else:
                fresh.append(out)
        return fresh


class AccelGraphed:
    """A compiled callable (boxed: it takes a list of inputs and clears it) replayed as accel
    graphs: per input signature, the first recording whose outputs nobody holds any more."""

    def __init__(self, model, static_input_idxs, mutated_input_idxs):
        self.model = model
        self.static = set(static_input_idxs)
        self.mutated = set(mutated_input_idxs)
        self.recordings = {}  # signature -> [_Recording]
        self.layout = None  # the indices of the static and the other tensor inputs, and the rest
        self.count = 0
        self.warmed_up = set()
        self.unrecordable = None  # why this callable runs without graphs

    def __call__(self, inputs):
        if self.unrecordable is None:
            key = self._key(inputs)
            if key in self.warmed_up:
                recording = self._free_recording(inputs, key)
                if recording is not None:
                    return self._replay(recording, inputs)
            else:
                self.warmed_up.add(key)
        _stats["eager"] += 1
        return self.model(inputs)

    def _static(self, i, x) -> bool:
        # An input read in place must stay where it is and be aligned as Inductor assumes.
        return i in self.static and x.data_ptr() % 16 == 0

    def _key(self, inputs):
        # Run on every call, over every parameter: only what a recording depends on and
        # Dynamo's guards do not already fix (a static input's address, the others' layout,
        # the other arguments). Which inputs are tensors is fixed for a compiled graph.
        if self.layout is None:
            tensors = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)]
            self.layout = (
                [i for i in tensors if i in self.static],
                [i for i in tensors if i not in self.static],
                [i for i, x in enumerate(inputs) if not isinstance(x, torch.Tensor)],
            )
        static, copied, others = self.layout
        return (
            tuple([inputs[i].data_ptr() for i in static]),
            tuple([(inputs[i].shape, inputs[i].stride(), inputs[i].dtype) for i in copied]),
            tuple([inputs[i] for i in others]),
        )

    def _give_up(self, why: str) -> None:
        self.unrecordable = why
        self.recordings.clear()
        _warn_once(
            "torch_accel: mode='reduce-overhead' runs a compiled graph on accel without "
            f"graphs: {why}"
        )

    def _free_recording(self, inputs, key):
        for recording in self.recordings.get(key, ()):
            if recording.free():
                return recording
        if self.count < MAX_RECORDINGS:
            return self._record(inputs, key)
        _warn_once(
            f"torch_accel: mode='reduce-overhead' recorded {MAX_RECORDINGS} graphs of one "
            "compiled graph on accel (its inputs keep changing shape or address, or its "
            "outputs are kept); further calls that need another run without graphs"
        )
        return None

    def _record(self, inputs, key):
        from torch._inductor.compile_fx import (
            get_expanded_dims,
            index_expanded_dims_and_copy_,
            static_input,
        )

        if any(isinstance(x, torch.Tensor) and not _is_accel(x) for x in inputs):
            self._give_up("an input is not on accel")
            return None
        static_inputs, copied = [], []
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor) and not self._static(i, x):
                copy = static_input(x)
                index_expanded_dims_and_copy_(copy, x, get_expanded_dims(x))
                static_inputs.append(copy)
                copied.append(i)
            else:
                static_inputs.append(x.detach() if isinstance(x, torch.Tensor) else x)
        graph = torch.accel.Graph()
        try:
            with torch.accel.graph(graph, capture_error_mode="thread_local"):
                outputs = self.model(list(static_inputs))
        except RuntimeError as e:
            self._give_up(f"its capture failed: {str(e).splitlines()[0]}")
            return None
        if not isinstance(outputs, (list, tuple)):
            outputs = (outputs,)
        mutated = [i for i in copied if i in self.mutated]
        recording = _Recording(graph, static_inputs, copied, mutated, list(outputs))
        del outputs
        self.recordings.setdefault(key, []).append(recording)
        self.count += 1
        _stats["recorded"] += 1
        return recording

    def _replay(self, recording, inputs):
        from torch._inductor.compile_fx import get_expanded_dims, index_expanded_dims_and_copy_

        for i in recording.copied:
            x = inputs[i]
            index_expanded_dims_and_copy_(recording.static_inputs[i], x, get_expanded_dims(x))
        user_inputs = list(inputs)
        inputs.clear()
        recording.graph.replay()
        for i in recording.mutated:
            user_inputs[i].copy_(recording.static_inputs[i])
        _stats["replayed"] += 1
        return recording.outputs_for(user_inputs)


_routed = False


def routed() -> bool:
    """Whether reduce-overhead records accel graphs in this process (Inductor's registration
    for accel has run, and this torch has what it replaces)."""
    from torch._inductor.codegen import common

    common.init_backend_registration()  # registers accel's backend first (import_hook.py)
    return _routed


def apply() -> None:
    global _routed
    from torch._inductor import compile_fx, cudagraph_utils, output_code

    check = getattr(cudagraph_utils, "check_multiple_devices_or_any_cpu_nodes", None)
    cudagraphify = getattr(compile_fx, "cudagraphify", None)
    if check is None or getattr(check, "_accel", False):
        return
    partition_post_compile = getattr(output_code, "cudagraph_partition_post_compile", None)
    routed = (
        cudagraphify is not None
        and hasattr(output_code, "cudagraph_post_compile")
        and all(
            hasattr(compile_fx, name)
            for name in ("static_input", "get_expanded_dims", "index_expanded_dims_and_copy_")
        )
    )

    def check_devices(device_node_mapping):
        if not any(d.type == "accel" for d in device_node_mapping):
            return check(device_node_mapping)
        if not routed:
            _warn_once(NO_GRAPHS)
            return cudagraph_utils.format_default_skip_message("accel device: " + NO_GRAPHS)
        # One accel device, meta nodes aside. CPU nodes too keep a graph from being recorded:
        # accel graphs wrap a compiled graph whole (below), so its CPU kernels would run at
        # the capture only.
        devices = {d for d in device_node_mapping if d.type != "meta"}
        if len(devices) == 1:
            return None
        return cudagraph_utils.format_default_skip_message(
            "devices " + ", ".join(str(d) for d in devices)
        )

    check_devices._accel = True
    cudagraph_utils.check_multiple_devices_or_any_cpu_nodes = check_devices
    if not routed:
        return

    def accel_cudagraphify(model, static_input_idxs=(), **kwargs):
        trees = cudagraphify(model, static_input_idxs, **kwargs)
        accel = AccelGraphed(model, static_input_idxs, kwargs.get("mutated_input_idxs", ()))

        constants = kwargs.get("constants", ())
        chosen = []

        def run(inputs):
            # Decided at the first call (a compiled graph's inputs stay on their devices): an
            # accel input or constant, or no torch.cuda for graph trees, means accel graphs.
            if not chosen:
                on_accel = any(_is_accel(x) for x in (*inputs, *constants))
                use_accel = on_accel or not torch.cuda.is_available()
                chosen.append(accel if use_accel else trees)
            return chosen[0](inputs)

        return run

    accel_cudagraphify._accel = True
    compile_fx.cudagraphify = accel_cudagraphify
    _routed = True

    if partition_post_compile is not None:
        # Graph partitioning cuts graphs around the nodes of devices Inductor does not call
        # GPUs, every accel node among them, so an accel graph has no partition to wrap:
        # accel graphs wrap the compiled graph whole instead.
        def accel_partition_post_compile(example_inputs, compiled_graph, *args, **kwargs):
            if "accel" in compiled_graph.device_types:
                return output_code.cudagraph_post_compile(
                    example_inputs, compiled_graph, *args, **kwargs
                )
            return partition_post_compile(example_inputs, compiled_graph, *args, **kwargs)

        output_code.cudagraph_partition_post_compile = accel_partition_post_compile

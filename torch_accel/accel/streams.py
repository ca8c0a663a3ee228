"""Streams and events (``torch.cuda.Stream``/``Event`` semantics, on torch.Stream/Event)."""

import torch

from .. import _C
from ._utils import _get_device_index, _traced_device


class Stream(torch.Stream):
    """An accel stream: an in-order queue of work on one device. ``Stream()`` takes one from
    the device's pool (priority 0 normal, negative high), like ``torch.cuda.Stream``."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        if kwargs:  # rebuilt from (stream_id, device_index, device_type)
            return super().__new__(cls, **kwargs)
        index = _get_device_index(device, optional=True)
        return super().__new__(cls, device=torch.device("accel", index), priority=priority)

    @property
    def accel_stream(self) -> int:
        """The native handle (torch.cuda.Stream.cuda_stream's counterpart): what
        ExternalStream takes."""
        return _C._native_stream(self.stream_id, self.device_index)


class ExternalStream(Stream):
    """A stream made outside torch, from its native handle (a host driver stream, or a
    ``cudaStream_t`` on the CUDA driver), as ``torch.cuda.ExternalStream``. The caller keeps
    the handle alive while the stream is used."""

    def __new__(cls, stream_ptr: int, device=None, **kwargs):
        index = _get_device_index(device, optional=True)
        stream_id, device_index, device_type = _C._external_stream(int(stream_ptr), index)
        return super().__new__(
            cls, stream_id=stream_id, device_index=device_index, device_type=device_type
        )


def get_stream_from_external(data_ptr: int, device=None) -> Stream:
    """The accel stream for a native stream handle made elsewhere."""
    return ExternalStream(data_ptr, device)


class _EventMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, torch.Event) and obj.device.type == "accel"


class Event(metaclass=_EventMeta):
    """An accel event, with optional timing. Instances are plain ``torch.Event`` objects on the
    accel device, because torch's event methods accept no subclass as their argument."""

    def __new__(
        cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        return torch.Event(
            device="accel",
            enable_timing=enable_timing,
            blocking=blocking,
            interprocess=interprocess,
        )


def _wrap(triple) -> Stream:
    stream_id, device_index, device_type = triple
    return Stream(stream_id=stream_id, device_index=device_index, device_type=device_type)


def current_stream(device=None) -> Stream:
    if torch.compiler.is_compiling():
        # Dynamo traces torch.accelerator's spelling (a stream of the graph's stream state);
        # a call into _C would break the graph.
        return torch.accelerator.current_stream(*_traced_device(device))
    return _wrap(_C._current_stream(_get_device_index(device, optional=True)))


def default_stream(device=None) -> Stream:
    return _wrap(_C._default_stream(_get_device_index(device, optional=True)))


def set_stream(stream: torch.Stream) -> None:
    if stream is None:
        return
    _C._set_stream(stream.stream_id, stream.device_index, stream.device_type)


class StreamContext:
    """Context manager that makes ``stream`` current on its device, then restores (what
    ``torch.accel.stream(s)`` returns)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is None:
            return
        self.prev = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.prev)
        return False


def stream(stream) -> StreamContext:
    """``with torch.accel.stream(s):`` queues the block's work on ``s``."""
    return StreamContext(stream)

"""Pre-flight report: which aten ops of a training step would fall back to the CPU on accel,
found before any device memory is used.

The step runs under FakeTensorMode, so accel tensors carry only metadata. A dispatch mode
records every aten op. An op without an accel kernel but with a composite one (ATen's
device-generic implementation) is expanded under the recorder, so the ops it decomposes into
are judged too; a structured op's functional form is judged by its out= overload, which is what
ATen's generic wrapper calls. What is left without a kernel is what the CPU fallback would run.

    report = torch_accel.preflight.run(step)   # step() moves CPU-built modules to accel
    print(report.format())
"""

import collections
from dataclasses import dataclass, field

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode


def has_accel_kernel(op_name: str) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(op_name, "PrivateUse1")


def _has_kernel(op_name: str, key: str) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(op_name, key)


def structured_out_variant(op_name: str):
    """The out= overload that a structured op's functional or in-place form runs on accel
    (ATen's generic wrapper allocates the output and calls it), or None when unclear."""
    base, _, overload = op_name.partition(".")
    packet = getattr(torch.ops.aten, base.split("::")[1].rstrip("_"), None)
    if packet is None:
        return None
    outs = [o for o in packet.overloads() if o == "out" or o.endswith("_out")]
    for candidate in (f"{overload}_out", "out"):
        if candidate in outs:
            return f"aten::{packet.__name__.split('.')[-1]}.{candidate}"
    return f"aten::{packet.__name__.split('.')[-1]}.{outs[0]}" if len(outs) == 1 else None


@dataclass
class Report:
    calls: collections.Counter = field(default_factory=collections.Counter)  # op -> calls seen
    fallback: collections.Counter = field(default_factory=collections.Counter)  # op -> calls

    def format(self) -> str:
        lines = [
            f"pre-flight: {sum(self.calls.values())} aten calls, {len(self.calls)} distinct ops"
        ]
        if not self.fallback:
            lines.append("no op would fall back to the CPU on accel")
        else:
            lines.append(f"{len(self.fallback)} op(s) would fall back to the CPU on accel:")
            for name, count in self.fallback.most_common():
                lines.append(f"  {name:<48} {count:>6} call(s)")
        return "\n".join(lines)


class _Recorder(TorchDispatchMode):
    def __init__(self, report: Report):
        super().__init__()
        self.report = report
        self.expanding = set()  # composites being expanded: one that re-enters itself runs as is

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace != "aten":
            return func(*args, **kwargs)
        name = func.name()
        self.report.calls[name] += 1
        if has_accel_kernel(name):
            return func(*args, **kwargs)
        # Views (and _unsafe_view, a view in all but schema) only restride: never a fallback,
        # and their composites cannot run on fake tensors.
        if func.is_view or name == "aten::_unsafe_view":
            return func(*args, **kwargs)
        if _has_kernel(name, "CompositeImplicitAutograd"):
            with self:  # reached from inside another composite: decompose as autograd would
                return func.decompose(*args, **kwargs)
        if _has_kernel(name, "CompositeExplicitAutograd") and name not in self.expanding:
            self.expanding.add(name)  # a composite that re-enters itself runs as is
            try:
                with self:  # record what the composite kernel calls
                    return func._op_dk(
                        torch._C.DispatchKey.CompositeExplicitAutograd, *args, **kwargs
                    )
            finally:
                self.expanding.discard(name)
        if _has_kernel(name, "CompositeExplicitAutogradNonFunctional"):
            out = structured_out_variant(name)
            if out is not None and has_accel_kernel(out):
                return func(*args, **kwargs)
            name = out or name
        if any(
            isinstance(a, torch.Tensor) and a.device.type == "accel"
            for a in torch.utils._pytree.tree_leaves((args, kwargs))
        ) or _names_accel(kwargs):
            self.report.fallback[name] += 1
        return func(*args, **kwargs)


def _names_accel(kwargs) -> bool:
    device = kwargs.get("device")
    return device is not None and torch.device(device).type == "accel"


def run(step) -> Report:
    """Runs step() on fake tensors and reports the ops that would fall back on accel.
    Build modules on the CPU before calling (real weights), and move them to accel inside."""
    report = Report()
    swap = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(False)  # fake params replace real ones
    try:
        with FakeTensorMode(allow_non_fake_inputs=True), _Recorder(report):
            step()
    finally:
        torch.__future__.set_swap_module_params_on_conversion(swap)
    return report

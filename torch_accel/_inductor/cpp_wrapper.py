"""Host driver, ``torch._inductor.config.cpp_wrapper=True``: the C++ wrapper for accel.

Inductor's CPU C++ wrapper (CppWrapperCpu) is reused with three accel-specific rules:

- Extern kernels (mm, addmm, bmm, convolution, random seeds, scatter) and fallback ops are
  called through the dispatcher (``c10::Dispatcher`` boxed calls, or Inductor's runtime lookup),
  never through the per-device C shims: CPU's shims (``aoti_torch_cpu_mm_out``, ...) call
  ``at::cpu::`` kernels directly, which would compute on the calling thread outside accel's
  streams, and no ``aoti_torch_accel_*`` shims exist. Through the dispatcher they reach accel's
  own kernels, asynchronously on the current stream, exactly as the Python wrapper's calls do.
- Each Inductor C++ kernel runs inside a ``torch_accel::KernelScope``
  (csrc/python/kernel_scope.h): the current stream is drained first, so the kernel sees earlier
  launches' results, and device access is held, so protect mode does not fault.
- Buffers are ``aoti_torch_empty_strided`` on PrivateUse1, i.e. accel's caching allocator.

A call that would still go to a missing ``aoti_torch_accel_*`` shim stops compilation with an
error that names it (never a link error at load time).
"""

import re

import torch
from torch._inductor import ir
from torch._inductor.codegen import cpp_utils
from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
from torch._inductor.virtualized import V

_MISSING_SHIM = re.compile(r"\baoti_torch_accel_\w+")


def _kernel_scope_source() -> str:
    from .. import _C  # csrc/python/kernel_scope.h, embedded by the build

    return "#define TORCH_ACCEL_GENERATED_WRAPPER\n" + _C._kernel_scope_source


def register_device_name() -> None:
    """Inductor spells device types in C++ through this table (devices, boxed arguments)."""
    cpp_utils.DEVICE_TO_ATEN.setdefault("accel", "at::kPrivateUse1")


class AccelCppWrapperCodegen(CppWrapperCpu):
    # The wrapper itself is host C++ (CppWrapperCpu's "cpu" build and runtime headers); the
    # buffers, kernels and extern calls it emits are on accel.
    device = "cpu"

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if V.graph.aot_mode:
            # AOTInductor's runtime loads models through per-device runners (cpu, cuda, ...)
            # and runs them without Python, which KernelScope's entry points come through.
            raise NotImplementedError(
                "torch_accel: AOTInductor (aoti_compile_and_package) does not support accel; "
                "use torch.compile, or run the exported program (ExportedProgram.module())"
            )
        # Like CppWrapperCpu, subgraphs are inlined into the one wrapper.
        return AccelCppWrapperCodegen()

    def add_device_include(self, device: str) -> None:
        if device != "accel":
            return super().add_device_include(device)
        if device in self.included_devices:
            return
        self.included_devices.add(device)
        # accel's kernels and buffers are host C++ on this driver: CPU's wrapper runtime.
        super().add_device_include("cpu")
        self.header.splice(_kernel_scope_source())

    # --- Inductor C++ kernels: in stream order ------------------------------------------
    def _generate_kernel_call_helper(self, kernel_name, call_args, *args, **kwargs):
        device = kwargs.get("device") or V.graph.get_current_device_or_throw()
        if device.type != "accel" or kernel_name in self._cpu_triton_kernel_names:
            return super()._generate_kernel_call_helper(kernel_name, call_args, *args, **kwargs)
        self.add_device_include("accel")
        self.writeline("{")
        self.writeline(f"torch_accel::KernelScope accel_scope({device.index or 0});")
        super()._generate_kernel_call_helper(kernel_name, call_args, *args, **kwargs)
        self.writeline("}")

    # --- extern kernels and fallbacks: through the dispatcher ---------------------------
    def _dispatch_boxed(self, node, values: dict, output_args=(), raw_outputs=()) -> None:
        """A boxed dispatcher call of node.op_overload; `values` maps schema argument names
        to IR nodes or constants, absent ones take the schema default."""
        op = node.op_overload
        if not isinstance(op, torch._ops.OpOverload):
            raise NotImplementedError(
                f"torch_accel: cpp_wrapper=True cannot call {node.get_kernel_name()} on accel "
                "(no aten overload to dispatch); compile with cpp_wrapper=False"
            )
        raw_args = []
        for arg in op._schema.arguments:
            if arg.name in values:
                raw_args.append(values[arg.name])
            elif arg.has_default_value():
                raw_args.append(arg.default_value)
            else:
                raise NotImplementedError(
                    f"torch_accel: cpp_wrapper=True: no value for argument '{arg.name}' of "
                    f"{op} on accel; compile with cpp_wrapper=False"
                )
        node.codegen_comment(self)
        self.generate_fallback_kernel_with_runtime_lookup_boxed(
            op, raw_args, list(output_args), list(raw_outputs)
        )

    def generate_extern_kernel_out(self, node: ir.ExternKernelOut) -> None:
        if not _on_accel(node):
            return super().generate_extern_kernel_out(node)
        # positional arguments are the tensor inputs then the constants (mm, addmm, bmm,
        # randint.low_out for random seeds); keyword ones come from node.kwargs.
        op = node.op_overload
        values = _values_by_name(node, include_kwarg_only=False)
        out = [a.name for a in op._schema.arguments if a.is_out] if op else []
        if len(out) != 1:
            raise NotImplementedError(
                f"torch_accel: cpp_wrapper=True cannot call {node.get_kernel_name()} on accel "
                "(expected an out= overload); compile with cpp_wrapper=False"
            )
        values[out[0]] = node.output_view or node
        self._dispatch_boxed(node, values)

    def _generate_extern_kernel_alloc_helper(self, extern_kernel, args):
        if not _on_accel(extern_kernel) or getattr(extern_kernel, "outputs", None):
            return super()._generate_extern_kernel_alloc_helper(extern_kernel, args)
        values = _values_by_name(extern_kernel, include_kwarg_only=True)
        self._dispatch_boxed(extern_kernel, values, [extern_kernel.get_name()], [extern_kernel])

    def generate_fallback_kernel(self, node: ir.FallbackKernel) -> None:
        if not _on_accel(node):
            return super().generate_fallback_kernel(node)
        # What FallbackKernel.codegen does for ops without a C shim: runtime lookup. Its outputs
        # come from codegen_outputs() from torch 2.14 on (which names a single output itself).
        if hasattr(node, "codegen_outputs"):
            outputs = node.codegen_outputs()
        else:
            outputs = node.outputs if node.outputs else node.mutation_outputs
        self.generate_fallback_kernel_with_runtime_lookup(
            node.get_name(),
            node.python_kernel_name,
            lambda: [*node.codegen_args(), *node.codegen_kwargs()],
            node.op_overload,
            node.export_extern_kernel_node(),
            outputs,
        )

    def generate_scatter_fallback(self, node: ir.ScatterFallback) -> None:
        if not _on_accel(node):
            return super().generate_scatter_fallback(node)
        x, index, *src = node.inputs
        values = {
            "self": x,
            "dim": node.constant_args[0],
            "index": index,
            "src": src[0] if src else None,
            "value": None if src else node.constant_args[1],
        }
        values.update({k: v for k, v in node.kwargs.items() if v is not None})
        self._dispatch_boxed(node, values)

    def generate(self, is_inference):
        result = super().generate(is_inference)
        code = result[0].value if hasattr(result[0], "value") else str(result[0])
        missing = sorted(set(_MISSING_SHIM.findall(code)))
        if missing:
            raise NotImplementedError(
                f"torch_accel: cpp_wrapper=True would call {', '.join(missing)}, a C shim that "
                "does not exist for accel; compile with cpp_wrapper=False (the default)"
            )
        return result


def _values_by_name(node, include_kwarg_only: bool) -> dict:
    """node's tensor inputs then constants, named by its op's schema in order (keyword-only
    arguments too where include_kwarg_only), then node.kwargs by name."""
    op = node.op_overload
    args = op._schema.arguments if isinstance(op, torch._ops.OpOverload) else []
    names = [a.name for a in args if include_kwarg_only or not a.kwarg_only]
    values = dict(zip(names, [*node.inputs, *node.constant_args]))
    values.update(node.kwargs)
    return values


def _on_accel(node) -> bool:
    device = node.get_device()
    return device is not None and device.type == "accel"

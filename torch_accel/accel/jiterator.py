"""``torch.cuda.jiterator``'s place: it compiles CUDA C++ source at run time (NVRTC), which accel
kernels do not take; accel kernels are written once as C++ functors (csrc/kernels) or generated
by ``torch.compile``."""

__all__ = ["_create_jit_fn", "_create_multi_output_jit_fn"]


def _create_jit_fn(code_string: str, **kwargs):
    raise RuntimeError(
        "torch.accel.jiterator: accel does not compile CUDA C++ source at run time; write the "
        "kernel as an accel functor (csrc/kernels) or let torch.compile generate it"
    )


def _create_multi_output_jit_fn(code_string: str, num_outputs: int, **kwargs):
    _create_jit_fn(code_string)

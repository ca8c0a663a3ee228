"""accel's picks for F.linear_cross_entropy's ``acc_policy="auto"`` (torch 2.13+).

PyTorch resolves "auto" per device type: CPU and CUDA (SM 7.0+ for float16, 8.0+ for
bfloat16) get float32 accumulation for float16/bfloat16 inputs, and any other device falls
back to accumulating in the input dtype with the "compact" policy. accel's GEMMs accumulate
in float on both drivers (the CPU BLAS on host, cuBLAS's 32F compute on CUDA), so accel takes
the CPU's picks: float32 accumulation and the "accurate" policy, the one PyTorch chose for
these GEMMs. Without them a float16 loss drifted from CPU's by 30 times CPU's own error.
"""

import torch

DEVICE = "accel"
_HALF = (torch.float16, torch.bfloat16)


def install() -> None:
    try:
        from torch.nn.modules import linear_cross_entropy_options as lce
    except ImportError:  # a torch without linear_cross_entropy
        return
    options = lce.LinearCrossEntropyOptions
    for dtype in _HALF:
        lce._AUTO_DEFAULTS[(DEVICE, dtype)] = lce._AUTO_DEFAULTS[("cpu", dtype)]
    resolve = options._resolve_auto_acc_dtype

    def resolve_auto_acc_dtype(dtype, device):
        if device is not None and device.type == DEVICE and dtype in _HALF:
            return torch.float32
        return resolve(dtype, device)

    options._resolve_auto_acc_dtype = staticmethod(resolve_auto_acc_dtype)

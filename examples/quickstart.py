"""A first look at the accel device: tensors, streams, memory and the fallback counter.

python examples/quickstart.py
"""

import torch

import torch_accel

print(f"accel devices: {torch.accel.device_count()} (driver: {torch_accel.driver()})")

x = torch.randn(4, 4)
a = x.to("accel")  # host -> device
b = (a * 2 + 1) / 3  # native kernels, queued on the current stream
print("matches CPU:", torch.allclose(b.cpu(), (x * 2 + 1) / 3))

s = torch.accel.Stream()  # a side stream, like torch.cuda.Stream
with torch.accel.stream(s):
    c = torch.ones(1 << 20, device="accel") * 3
s.synchronize()
print("side-stream result:", c[:3].cpu().tolist())

print(
    f"allocated {torch.accel.memory_allocated() / 2**20:.1f} MiB, "
    f"reserved {torch.accel.memory_reserved() / 2**20:.1f} MiB"
)

torch_accel.reset_fallback_counts()
torch.accel.manual_seed(0)
r = torch.randn(3, device="accel").cumsum(0)  # not native yet: runs through the counted fallback
print("fallback counts:", torch_accel.fallback_counts())

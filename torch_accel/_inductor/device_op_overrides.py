"""The Python lines Inductor's wrapper emits for accel device and stream management."""

from torch._inductor.codegen.common import DeviceOpOverrides


class AccelDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_accel._C import _current_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.accel.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.accel.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.accel.device({device_idx})"

    def cpp_kernel_type(self) -> str:
        return "void*"

// Exit safety for autograd's device threads.
//
// After a backward on accel, the device's autograd thread wakes the caller and only then drops
// its reference to the finished GraphTask. If the script ends at once, Python can start
// finalizing first; the thread's late release then decrefs Python objects the task holds (the
// contextvars context torch stashes in its thread-local state, gradients returned to Python),
// the GIL request ends the thread inside a destructor, and the process aborts with "terminate
// called without an active exception". Running one backward without Python objects through
// every device's thread, from an atexit handler, returns only after each thread let go of the
// previous task; the release of this one decrefs nothing.
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/utils/pybind.h>

#include "core/device.h"

namespace py = pybind11;

namespace accel {
namespace {

void drainAutogradDeviceThreads() {
  py::gil_scoped_release no_gil;
  for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
    try {
      const auto x =
          at::zeros({}, at::TensorOptions().device(c10::kPrivateUse1, d)).requires_grad_();
      const auto y = x.mul(2);
      torch::autograd::grad({y}, {x}, {at::ones_like(y)});
    } catch (const std::exception&) {
      // A device left unusable (a sticky kernel fault) ran no backward either.
    }
  }
}

}  // namespace

void registerAutogradExit(py::module& m) {
  m.def("_drain_autograd_device_threads", &drainAutogradDeviceThreads);
}

}  // namespace accel

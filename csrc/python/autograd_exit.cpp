// Exit safety for autograd's device threads.
//
// After a backward on accel, the device's autograd thread wakes the caller and only then drops
// its reference to the finished GraphTask. If the script ends at once, Python can start
// finalizing first; the thread's late release then decrefs Python objects the task holds (the
// contextvars context torch stashes in its thread-local state, gradients returned to Python),
// the GIL request ends the thread inside a destructor, and the process aborts with "terminate
// called without an active exception". Visiting every device's thread with a backward of one
// node that does nothing, from an atexit handler, returns only after each thread let go of the
// previous task. It holds no Python object, allocates nothing and launches nothing, so it also
// works on a device a kernel fault left unusable.
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/utils/pybind.h>

#include <memory>
#include <type_traits>

#include "core/device.h"

namespace py = pybind11;

namespace accel {
namespace {

using torch::autograd::variable_list;

// Runs on the autograd thread of its input's device, and computes nothing.
struct Visit final : torch::autograd::Node {
  variable_list apply(variable_list&& /*grads*/) override { return {}; }
};

// Older torch holds nodes by shared_ptr, newer (2.13) by intrusive_ptr.
using NodePtr = decltype(torch::autograd::Edge::function);
template <typename Ptr = NodePtr>
Ptr makeVisit() {
  if constexpr (std::is_same_v<Ptr, std::shared_ptr<torch::autograd::Node>>) {
    return std::make_shared<Visit>();
  } else {
    return c10::make_intrusive<Visit>();
  }
}

void drainAutogradDeviceThreads() {
  py::gil_scoped_release no_gil;
  for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
    const auto grad = at::empty({0}, at::TensorOptions().device(c10::kPrivateUse1, d));
    const NodePtr visit = makeVisit();
    visit->add_input_metadata(grad);
    torch::autograd::Engine::get_default_engine().execute(
        torch::autograd::edge_list{torch::autograd::Edge(visit, 0)}, {grad}, /*keep_graph=*/false,
        /*create_graph=*/false, /*accumulate_grad=*/true, /*outputs=*/{});
  }
}

}  // namespace

void registerAutogradExit(py::module& m) {
  m.def("_drain_autograd_device_threads", &drainAutogradDeviceThreads);
}

}  // namespace accel

// torch.accel's graphs and memory pools from Python (torch_accel/accel/graphs.py and
// mem_pool.py build torch.cuda's API on these).
#include <torch/csrc/utils/pybind.h>

#include <thread>

#include "core/device.h"
#include "core/device_allocator.h"
#include "core/graph.h"
#include "core/stream_pool.h"

namespace py = pybind11;

namespace accel {
namespace {

rt::CaptureMode captureMode(const std::string& mode) {
  if (mode == "global" || mode == "default") return rt::CaptureMode::Global;
  if (mode == "thread_local") return rt::CaptureMode::ThreadLocal;
  if (mode == "relaxed") return rt::CaptureMode::Relaxed;
  TORCH_CHECK_VALUE(false,
                    "capture_error_mode must be 'default', 'global', 'thread_local' or "
                    "'relaxed', got '",
                    mode, "'");
}

c10::MempoolId_t poolId(const py::object& pool) {
  if (pool.is_none()) return {0, 0};
  auto id = pool.cast<std::pair<uint64_t, uint64_t>>();
  return {id.first, id.second};
}

alloc::CachingAllocator& allocatorOf(int device) {
  return deviceCachingAllocator(static_cast<c10::DeviceIndex>(device));
}

alloc::PoolId allocId(const std::pair<uint64_t, uint64_t>& id) { return {id.first, id.second}; }

}  // namespace

void registerGraphBindings(py::module& m) {
  py::class_<Graph>(m, "_Graph")
      .def(py::init<bool>(), py::arg("keep_graph") = false)
      .def(
          "capture_begin",
          [](Graph& g, const py::object& pool, const std::string& mode) {
            g.captureBegin(poolId(pool), captureMode(mode));
          },
          py::arg("pool") = py::none(), py::arg("capture_error_mode") = "global")
      .def("capture_end", &Graph::captureEnd)
      .def("_abort_capture", &Graph::abortCapture)
      .def("instantiate", &Graph::instantiate)
      .def("replay", &Graph::replay)
      .def("reset", &Graph::reset)
      .def("pool",
           [](const Graph& g) {
             c10::MempoolId_t id = g.pool();
             return py::make_tuple(id.first, id.second);
           })
      .def("enable_debug_mode", &Graph::enableDebugMode)
      .def("debug_dump", &Graph::debugDump, py::arg("debug_path"));

  m.def("_graph_pool_handle", [] {
    c10::MempoolId_t id = newPoolId();
    return py::make_tuple(id.first, id.second);
  });
  m.def("_is_current_stream_capturing",
        [] { return isStreamCapturing(currentStream(currentDevice())); });
  m.def("_register_graph_impl", &registerGraphImpl);

  // Pools of the caching allocator (torch.cuda.MemPool's entry points).
  using Id = std::pair<uint64_t, uint64_t>;
  m.def("_pool_create",
        [](int device, const Id& id) { allocatorOf(device).createOrIncrefPool(allocId(id)); });
  m.def("_pool_release",
        [](int device, const Id& id) { allocatorOf(device).releasePool(allocId(id)); });
  m.def("_pool_use_count",
        [](int device, const Id& id) { return allocatorOf(device).poolUseCount(allocId(id)); });
  m.def("_pool_begin_current_thread", [](int device, const Id& id) {
    allocatorOf(device).beginAllocateToPool(allocId(id),
                                            [thread = std::this_thread::get_id()](rt::Stream) {
                                              return std::this_thread::get_id() == thread;
                                            });
  });
  m.def("_pool_end",
        [](int device, const Id& id) { allocatorOf(device).endAllocateToPool(allocId(id)); });
}

}  // namespace accel

// torch_accel._C's part of torch.distributed: the accl backend class (a subclass of c10d's
// Backend, registered from torch_accel/distributed.py) and the staging pool's statistics.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "distributed/pinned_staging_pool.h"
#include "distributed/process_group_accel.h"

namespace py = pybind11;

namespace accel {

void registerDistributed(py::module& m) {
  // c10d's Backend must be registered with pybind11 before it can be a base class here.
  py::object c10d = py::module::import("torch._C._distributed_c10d");
  using dist::ProcessGroupAccel;
  py::class_<ProcessGroupAccel, c10::intrusive_ptr<ProcessGroupAccel>>(m, "ProcessGroupAccel",
                                                                       c10d.attr("Backend"))
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store,
                       const c10::intrusive_ptr<c10d::Backend>& gloo, int rank, int size,
                       std::chrono::milliseconds timeout) {
             return c10::make_intrusive<ProcessGroupAccel>(store, gloo, rank, size, timeout);
           }),
           py::arg("store"), py::arg("gloo"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly(
          "transport", [](const ProcessGroupAccel& pg) { return std::string(pg.transportName()); });

  m.def("_dist_staging_stats", [] {
    const auto s = dist::PinnedStagingPool::instance().stats();
    py::dict d;
    d["in_use_bytes"] = s.in_use_bytes;
    d["cached_bytes"] = s.cached_bytes;
    d["acquires"] = s.acquires;
    d["reuses"] = s.reuses;
    d["host_allocs"] = s.host_allocs;
    d["host_frees"] = s.host_frees;
    return d;
  });
}

}  // namespace accel

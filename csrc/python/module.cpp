// torch_accel._C: what the Python package needs from C++. Loading it registers the backend
// (guard, hooks, allocator, kernels, fallback), all of which are static registrations.
#include <ATen/core/Generator.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/version.h>

#include "core/device_allocator.h"
#include "aten/fallback.h"
#include "core/device.h"
#include "core/generator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "core/sync_point.h"

namespace py = pybind11;

namespace accel {
namespace {

py::dict deviceProperties(c10::DeviceIndex device) {
  checkDeviceIndex(device);
  rt::DeviceProperties p;
  ACCEL_RT_CHECK(rt::driver().getDeviceProperties(device, &p), device);
  py::dict d;
  d["name"] = p.name;
  d["total_memory"] = p.total_memory;
  d["multi_processor_count"] = p.multi_processor_count;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["warp_size"] = p.warp_size;
  d["max_threads_per_block"] = p.max_threads_per_block;
  d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
  d["regs_per_multiprocessor"] = p.regs_per_multiprocessor;
  d["driver"] = rt::driver().name();
  return d;
}

py::list memorySnapshot(c10::DeviceIndex device) {
  py::list segments;
  for (const alloc::SegmentInfo& s : deviceCachingAllocator(device).snapshot()) {
    py::dict seg;
    seg["device"] = device;
    seg["address"] = s.address;
    seg["total_size"] = s.total_size;
    seg["allocated_size"] = s.allocated_size;
    seg["active_size"] = s.active_size;
    seg["requested_size"] = s.requested_size;
    seg["stream"] = s.stream;
    seg["segment_type"] = s.is_large ? "large" : "small";
    py::list blocks;
    uintptr_t address = s.address;
    for (const alloc::BlockInfo& b : s.blocks) {
      py::dict blk;
      blk["address"] = address;
      blk["size"] = b.size;
      blk["requested_size"] = b.requested_size;
      blk["state"] = b.allocated ? "active_allocated"
                                 : (b.active ? "active_pending_free" : "inactive");
      blocks.append(blk);
      address += b.size;
    }
    seg["blocks"] = blocks;
    segments.append(seg);
  }
  return segments;
}

py::dict fallbackStatsDict() {
  py::dict out;
  for (const auto& [name, s] : fallbackStats()) {
    py::dict d;
    d["calls"] = s.calls;
    d["seconds"] = s.seconds;
    d["bytes_to_host"] = s.bytes_to_host;
    d["bytes_to_device"] = s.bytes_to_device;
    out[py::str(name)] = d;
  }
  return out;
}

}  // namespace

void registerInductorSupport(py::module& m);  // inductor_support.cpp
void registerDistributed(py::module& m);      // distributed_bindings.cpp
void registerGraphBindings(py::module& m);    // graph_bindings.cpp

}  // namespace accel

PYBIND11_MODULE(_C, m) {
  using namespace accel;
  m.doc() = "torch_accel native extension";
  m.def("_driver_name", [] { return std::string(rt::driver().name()); });
  m.def("_cuda_plugin_built", &rt::cudaPluginBuilt);
  m.def("_cuda_plugin_status", &rt::cudaPluginStatus);
  m.def("_built_torch_version", [] { return std::string(TORCH_VERSION); });
  m.def("_device_count", [] { return static_cast<int>(deviceCount()); });
  m.def("_current_device", [] { return static_cast<int>(currentDevice()); });
  m.def("_set_device", [](int d) { setCurrentDevice(static_cast<c10::DeviceIndex>(d)); });
  m.def("_check_device", [](int d) { checkDeviceIndex(static_cast<c10::DeviceIndex>(d)); });
  m.def("_is_in_bad_fork", &rt::inBadFork);
  m.def("_synchronize", [](int d) {
    checkDeviceIndex(static_cast<c10::DeviceIndex>(d));
    hostSyncPoint("torch.accel.synchronize()");
    py::gil_scoped_release no_gil;
    ACCEL_RT_CHECK(rt::driver().deviceSynchronize(d), d);
  });
  m.def("_device_properties", [](int d) { return deviceProperties(static_cast<c10::DeviceIndex>(d)); });
  m.def("_mem_get_info", [](int d) {
    checkDeviceIndex(static_cast<c10::DeviceIndex>(d));
    size_t free_bytes = 0, total = 0;
    ACCEL_RT_CHECK(rt::driver().memGetInfo(d, &free_bytes, &total), d);
    return py::make_tuple(free_bytes, total);
  });

  // Streams: (stream_id, device_index, device_type), the triple torch.Stream is built from.
  m.def("_current_stream", [](int d) {
    c10::Stream s = currentStream(static_cast<c10::DeviceIndex>(d));
    return py::make_tuple(s.id(), static_cast<int>(s.device_index()),
                          static_cast<int>(s.device_type()));
  });
  m.def("_default_stream", [](int d) {
    c10::Stream s = defaultStream(static_cast<c10::DeviceIndex>(d));
    return py::make_tuple(s.id(), static_cast<int>(s.device_index()),
                          static_cast<int>(s.device_type()));
  });
  m.def("_set_stream", [](int64_t id, int d, int type) {
    setCurrentStream(c10::Stream::unpack3(id, static_cast<c10::DeviceIndex>(d),
                                          static_cast<c10::DeviceType>(type)));
  });

  // Allocator.
  m.def("_empty_cache", [] {
    py::gil_scoped_release no_gil;
    deviceAllocator()->emptyCache();
  });
  m.def("_set_memory_fraction", [](double fraction, int d) {
    TORCH_CHECK(fraction > 0 && fraction <= 1, "Invalid fraction value: ", fraction,
                ". Allowed range: 0~1");
    deviceCachingAllocator(static_cast<c10::DeviceIndex>(d)).setMemoryFraction(fraction);
  });
  m.def("_memory_snapshot", [](int d) { return memorySnapshot(static_cast<c10::DeviceIndex>(d)); });

  // Random numbers.
  m.def("_default_generator", [](int d) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(defaultGenerator(static_cast<c10::DeviceIndex>(d))));
  });

  // Fallback accounting.
  m.def("_fallback_stats", &fallbackStatsDict);
  m.def("_reset_fallback_stats", &resetFallbackStats);
  m.def("_set_fallback_mode", [](const std::string& mode) {
    if (mode == "warn") setFallbackMode(FallbackMode::Warn);
    else if (mode == "silent") setFallbackMode(FallbackMode::Silent);
    else if (mode == "error") setFallbackMode(FallbackMode::Error);
    else TORCH_CHECK(false, "fallback mode must be warn, silent or error, got '", mode, "'");
  });
  m.def("_fallback_mode", [] {
    switch (fallbackMode()) {
      case FallbackMode::Warn: return "warn";
      case FallbackMode::Silent: return "silent";
      case FallbackMode::Error: return "error";
    }
    return "warn";
  });

  registerInductorSupport(m);
  registerDistributed(m);
  registerGraphBindings(m);
}

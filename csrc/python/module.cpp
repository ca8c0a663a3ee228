// torch_accel._C: what the Python package needs from C++. Loading it registers the backend
// (guard, hooks, allocator, kernels, fallback), all of which are static registrations.
#include <ATen/core/Generator.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/version.h>

#include <initializer_list>
#include <utility>

#include "core/device_allocator.h"
#include "aten/fallback.h"
#include "core/device.h"
#include "core/generator.h"
#include "core/host_allocator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "core/sync_debug_mode.h"
#include "core/sync_point.h"

namespace py = pybind11;

namespace accel {
namespace {

py::dict deviceProperties(c10::DeviceIndex device) {
  device = resolveDevice(device);
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

// torch.cuda.host_memory_stats_as_nested_dict()'s layout.
py::dict hostStatsDict() {
  const HostStats s = hostStats();
  auto dict = [](std::initializer_list<std::pair<const char*, int64_t>> fields) {
    py::dict d;
    for (const auto& [key, value] : fields) d[key] = value;
    return d;
  };
  auto stat = [&](const HostStat& v) {
    return dict(
        {{"current", v.current}, {"peak", v.peak}, {"allocated", v.allocated}, {"freed", v.freed}});
  };
  auto time = [&](const HostTimeStat& t) {
    return dict({{"total", t.total},
                 {"max", t.max},
                 {"min", t.min},
                 {"count", t.count},
                 {"avg", t.count > 0 ? t.total / t.count : 0}});
  };
  py::dict out;
  out["allocations"] = stat(s.allocations);
  out["allocated_bytes"] = stat(s.allocated_bytes);
  out["active_requests"] = stat(s.active_requests);
  out["active_bytes"] = stat(s.active_bytes);
  out["num_host_alloc"] = s.num_host_alloc;
  out["num_host_free"] = s.num_host_free;
  out["host_alloc_time"] = time(s.host_alloc_time);
  out["host_free_time"] = time(s.host_free_time);
  return out;
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

void registerAutogradExit(py::module& m);     // autograd_exit.cpp
void registerInductorSupport(py::module& m);  // inductor_support.cpp
void registerDistributed(py::module& m);      // distributed_bindings.cpp
void registerGraphBindings(py::module& m);    // graph_bindings.cpp
void registerLaunchPlans(py::module& m);      // launch_plans.cpp
void registerMemorySnapshot(py::module& m);   // memory_snapshot.cpp
void registerStorageSharing(py::module& m);   // storage_sharing.cpp

}  // namespace accel

PYBIND11_MODULE(_C, m) {
  using namespace accel;
  m.doc() = "torch_accel native extension";
  routeLayoutsToFallback();  // every static registration of this library has run by now
  m.def("_driver_name", [] { return std::string(rt::driver().name()); });
  m.def("_cuda_plugin_built", &rt::cudaPluginBuilt);
  m.def("_cuda_plugin_status", &rt::cudaPluginStatus);
  m.def("_cuda_arch_list", [] {
    using ArchList = const char* (*)();
    auto get = reinterpret_cast<ArchList>(rt::cudaPluginSymbol("accel_cuda_arch_list"));
    return std::string(get != nullptr ? get() : "");
  });
  m.def("_built_torch_version", [] { return std::string(TORCH_VERSION); });
  m.def("_device_count", [] { return static_cast<int>(deviceCount()); });
  m.def("_current_device", [] { return static_cast<int>(currentDevice()); });
  m.def("_set_device", [](int d) { setCurrentDevice(static_cast<c10::DeviceIndex>(d)); });
  m.def("_check_device", [](int d) { return resolveDevice(static_cast<c10::DeviceIndex>(d)); });
  m.def("_is_in_bad_fork", &rt::inBadFork);
  m.def("_synchronize", [](int d) {
    d = resolveDevice(static_cast<c10::DeviceIndex>(d));
    hostSyncPoint("torch.accel.synchronize()", SyncKind::DeviceSynchronize);
    py::gil_scoped_release no_gil;
    ACCEL_RT_CHECK(rt::driver().deviceSynchronize(d), d);
  });
  m.def("_device_properties",
        [](int d) { return deviceProperties(static_cast<c10::DeviceIndex>(d)); });
  m.def("_mem_get_info", [](int d) {
    d = resolveDevice(static_cast<c10::DeviceIndex>(d));
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
  m.def("_external_stream", [](uintptr_t native, int d) {
    c10::Stream s =
        externalStream(static_cast<c10::DeviceIndex>(d), reinterpret_cast<void*>(native));
    return py::make_tuple(s.id(), static_cast<int>(s.device_index()),
                          static_cast<int>(s.device_type()));
  });
  m.def("_native_stream", [](int64_t id, int d) {
    c10::Stream s =
        c10::Stream::unpack3(id, static_cast<c10::DeviceIndex>(d), c10::DeviceType::PrivateUse1);
    return reinterpret_cast<uintptr_t>(rt::driver().nativeStream(runtimeStream(s)));
  });
  m.def("_utilization", [](int d) {
    d = resolveDevice(static_cast<c10::DeviceIndex>(d));
    int percent = 0;
    const rt::Error err = rt::driver().deviceUtilization(d, &percent);
    if (err == rt::Error::NotSupported) return -1;  // the Python side asks NVML
    ACCEL_RT_CHECK(err, d);
    return percent;
  });
  m.def("_can_device_access_peer", [](int d, int peer) {
    d = resolveDevice(static_cast<c10::DeviceIndex>(d));
    peer = resolveDevice(static_cast<c10::DeviceIndex>(peer));
    bool can = false;
    ACCEL_RT_CHECK(rt::driver().deviceCanAccessPeer(d, peer, &can), d);
    return can;
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
  // caching_allocator_alloc / _delete: raw blocks, addresses as integers.
  m.def("_raw_alloc", [](size_t size, int64_t stream_id, int d) {
    const c10::DeviceIndex device = resolveDevice(static_cast<c10::DeviceIndex>(d));
    c10::Stream stream = c10::Stream::unpack3(stream_id, device, c10::DeviceType::PrivateUse1);
    try {
      return reinterpret_cast<uintptr_t>(
          deviceCachingAllocator(device).malloc(size, runtimeStream(stream)));
    } catch (const alloc::OutOfMemory& e) {
      TORCH_CHECK_WITH(OutOfMemoryError, false, "accel out of memory. ", e.what());
    }
  });
  m.def("_raw_delete", [](uintptr_t address) {
    void* ptr = reinterpret_cast<void*>(address);
    const int d = rt::driver().pointerDevice(ptr);
    TORCH_CHECK(d >= 0, "caching_allocator_delete: ", ptr, " is not accel device memory");
    try {
      deviceCachingAllocator(static_cast<c10::DeviceIndex>(d)).free(ptr);
    } catch (const std::invalid_argument&) {
      TORCH_CHECK(false, "caching_allocator_delete: ", ptr,
                  " is not a block from caching_allocator_alloc");
    }
  });
  m.def("_host_memory_stats", &hostStatsDict);
  m.def("_reset_accumulated_host_memory_stats", &resetAccumulatedHostStats);
  m.def("_reset_peak_host_memory_stats", &resetPeakHostStats);
  m.def("_empty_host_cache", [] {
    py::gil_scoped_release no_gil;
    emptyHostCache();
  });
  m.def("_set_caching_enabled", [](bool enabled) {
    for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
      deviceCachingAllocator(d).setCachingEnabled(enabled);
    }
  });
  m.def("_caching_enabled", [] { return deviceCachingAllocator(0).cachingEnabled(); });
  m.def("_memory_fraction", [](int d) {
    return deviceCachingAllocator(static_cast<c10::DeviceIndex>(d)).memoryFraction();
  });

  // Random numbers.
  m.def("_default_generator", [](int d) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(defaultGenerator(static_cast<c10::DeviceIndex>(d))));
  });

  // Fallback accounting.
  m.def("_fallback_stats", &fallbackStatsDict);
  m.def("_reset_fallback_stats", &resetFallbackStats);
  m.def("_set_fallback_mode", [](const std::string& mode) {
    if (mode == "warn")
      setFallbackMode(FallbackMode::Warn);
    else if (mode == "silent")
      setFallbackMode(FallbackMode::Silent);
    else if (mode == "error")
      setFallbackMode(FallbackMode::Error);
    else
      TORCH_CHECK(false, "fallback mode must be warn, silent or error, got '", mode, "'");
  });
  m.def("_fallback_mode", [] {
    switch (fallbackMode()) {
      case FallbackMode::Warn: return "warn";
      case FallbackMode::Silent: return "silent";
      case FallbackMode::Error: return "error";
    }
    return "warn";
  });

  // Sync debug mode (0 off, 1 warn, 2 error).
  m.def("_set_sync_debug_mode", &setSyncDebugMode);
  m.def("_sync_debug_mode", &syncDebugMode);

  registerAutogradExit(m);
  registerInductorSupport(m);
  registerDistributed(m);
  registerGraphBindings(m);
  registerLaunchPlans(m);
  registerMemorySnapshot(m);
  registerStorageSharing(m);
}

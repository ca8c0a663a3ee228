#include "runtime/cuda_plugin.h"

#include <dlfcn.h>

#include <string>

#include "runtime/fork.h"
#include "runtime/plugin_path.h"

namespace accel::rt {
namespace {

constexpr const char* kPluginFile = "libaccel_cuda.so";

struct Plugin {
  void* handle = nullptr;
  Driver* driver = nullptr;
  std::string status;  // empty when `driver` is usable
};

Plugin load() {
  Plugin p;
  const std::string path = pluginPath(kPluginFile);
  if (!fileExists(path)) {
    p.status = "the CUDA plugin was not built (" + path + " does not exist)";
    return p;
  }
  // RTLD_LOCAL: the plugin's CUDA and cuBLAS symbols must not leak into torch's namespace.
  p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (p.handle == nullptr) {
    p.status = std::string("cannot load the CUDA plugin: ") + dlerror();
    return p;
  }
  using DriverFn = Driver* (*)();
  using StatusFn = const char* (*)();
  auto driver_fn = reinterpret_cast<DriverFn>(dlsym(p.handle, "accel_cuda_driver"));
  auto status_fn = reinterpret_cast<StatusFn>(dlsym(p.handle, "accel_cuda_status"));
  if (driver_fn == nullptr || status_fn == nullptr) {
    p.status = "the CUDA plugin " + path + " does not export accel_cuda_driver/accel_cuda_status";
    return p;
  }
  p.driver = driver_fn();
  if (p.driver == nullptr) {
    const char* why = status_fn();
    p.status = why != nullptr && *why != '\0' ? why : "no CUDA device answered";
  } else {
    watchForFork();
  }
  return p;
}

// Loaded once and never unloaded: the driver it returns lives for the whole process.
const Plugin& plugin() {
  static const Plugin p = load();
  return p;
}

}  // namespace

Driver* cudaPluginDriver() { return plugin().driver; }

bool cudaPluginBuilt() { return fileExists(pluginPath(kPluginFile)); }

std::string cudaPluginStatus() { return plugin().status; }

void* cudaPluginSymbol(const char* name) {
  void* handle = plugin().handle;
  return handle == nullptr ? nullptr : dlsym(handle, name);
}

}  // namespace accel::rt

#include <dlfcn.h>

#include "comm/communicator.h"
#include "runtime/plugin_path.h"

namespace accel::comm {
namespace {

constexpr const char* kPluginFile = "libaccel_nccl.so";

struct Loaded {
  const Plugin* plugin = nullptr;
  std::string why;
};

Loaded load() {
  Loaded l;
  const std::string path = rt::pluginPath(kPluginFile);
  if (!rt::fileExists(path)) {
    l.why = "the NCCL plugin was not built (" + path +
            " does not exist: build with nvcc and NCCL's headers, pip install nvidia-nccl-cu13)";
    return l;
  }
  // RTLD_LOCAL: NCCL's symbols stay out of torch's namespace.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    l.why = std::string("cannot load the NCCL plugin: ") + dlerror();
    return l;
  }
  using EntryFn = const Plugin* (*)();
  auto entry = reinterpret_cast<EntryFn>(dlsym(handle, "accel_nccl_plugin"));
  if (entry == nullptr) {
    l.why = "the NCCL plugin " + path + " does not export accel_nccl_plugin";
    return l;
  }
  l.plugin = entry();
  return l;
}

}  // namespace

const Plugin* ncclPlugin(std::string* why) {
  static const Loaded loaded = load();  // never unloaded
  if (loaded.plugin == nullptr && why != nullptr) *why = loaded.why;
  return loaded.plugin;
}

}  // namespace accel::comm

#include <cstring>
#include <stdexcept>

#include "kernels/kernel_abi.h"

namespace accel::kernels {

const KernelTable& table() {
  if (std::strcmp(rt::driver().name(), "host") == 0) return hostTable();
  // The CUDA build lives in the plugin library; its table is fetched once.
  static const KernelTable* cuda = [] {
    using Getter = const KernelTable* (*)();
    auto get = reinterpret_cast<Getter>(rt::cudaPluginSymbol("accel_cuda_kernel_table"));
    if (get == nullptr)
      throw std::runtime_error("torch_accel: the CUDA plugin exports no kernel table");
    return get();
  }();
  return *cuda;
}

}  // namespace accel::kernels

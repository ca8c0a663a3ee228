// Picks the build of a kernel table for the driver in use. Each kernel family has a table of
// entry points: the host build is linked in; the CUDA build lives in the plugin library and
// is fetched once through an exported `extern "C" const Table* <symbol>()`.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

#include "runtime/driver.h"

namespace accel::kernels {

template <class Table>
const Table& selectTable(const Table& host_table, const char* cuda_symbol) {
  if (std::strcmp(rt::driver().name(), "host") == 0) return host_table;
  static const Table* cuda = [cuda_symbol] {
    using Getter = const Table* (*)();
    auto get = reinterpret_cast<Getter>(rt::cudaPluginSymbol(cuda_symbol));
    if (get == nullptr) {
      throw std::runtime_error(std::string("torch_accel: the CUDA plugin does not export ") +
                               cuda_symbol);
    }
    return get();
  }();
  return *cuda;
}

}  // namespace accel::kernels

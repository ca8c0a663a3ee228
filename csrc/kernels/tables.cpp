#include "kernels/tables.h"

#include <cstring>
#include <stdexcept>

#include "kernels/activation.h"
#include "kernels/amp.h"
#include "kernels/batch_norm.h"
#include "kernels/binary.h"
#include "kernels/blas.h"
#include "kernels/compare.h"
#include "kernels/copy.h"
#include "kernels/ctc_loss.h"
#include "kernels/im2col.h"
#include "kernels/index.h"
#include "kernels/linalg.h"
#include "kernels/norm.h"
#include "kernels/optimizer.h"
#include "kernels/pool.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "kernels/rnn.h"
#include "kernels/sort.h"
#include "kernels/ternary.h"
#include "kernels/unary.h"
#include "runtime/driver.h"

namespace accel::kernels {
namespace {

const Tables* pickTables() {
  if (std::strcmp(rt::driver().name(), "host") == 0) return &host::tables();
  using Getter = const Tables* (*)();
  auto get = reinterpret_cast<Getter>(rt::cudaPluginSymbol("accel_cuda_tables"));
  if (get == nullptr)
    throw std::runtime_error("torch_accel: the CUDA plugin does not export accel_cuda_tables");
  return get();
}

}  // namespace

const Tables& activeTables() {
  static const Tables* tables = pickTables();
  return *tables;
}

#define ACCEL_ACTIVE_ACCESSOR(TYPE, NAME) \
  const TYPE##Table& NAME##Table() { return *activeTables().NAME; }
ACCEL_KERNEL_FAMILIES(ACCEL_ACTIVE_ACCESSOR)
#undef ACCEL_ACTIVE_ACCESSOR

}  // namespace accel::kernels

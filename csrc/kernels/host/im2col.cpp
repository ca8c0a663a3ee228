// The im2col family on the host driver: whole rows per call (Executor::forRows), split over the
// thread pool.
#include "kernels/im2col.h"

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
namespace {

struct Im2colExecutor : Executor {
  static constexpr int kCol2imChunk = 64;
};

}  // namespace

const Im2colTable& im2colTable() {
  static const Im2colTable table = Im2colTable::make<Im2colExecutor>();
  return table;
}

}  // namespace accel::kernels::host

// The im2col family on the host driver: whole rows per call, rows split over the thread pool.
#include "kernels/im2col.h"

#include <algorithm>

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
namespace {

struct Im2colExecutor : Executor {
  static constexpr int kCol2imChunk = 64;

  template <class F>
  static rt::Error forRows(int64_t rows, int64_t width, const F& f, rt::Stream stream) {
    if (rows == 0 || width == 0) return rt::Error::Success;
    return launch(stream, rows * width, [rows, width, f] {
      rt::host::parallelFor(0, rows, std::max<int64_t>(1, kGrain / width),
                            [&](int64_t b, int64_t e) {
                              for (int64_t r = b; r < e; ++r) f(r, 0, width);
                            });
    });
  }
};

}  // namespace

const Im2colTable& im2colTable() {
  static const Im2colTable table = Im2colTable::make<Im2colExecutor>();
  return table;
}

}  // namespace accel::kernels::host

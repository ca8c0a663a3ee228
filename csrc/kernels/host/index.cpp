// The indexing family on the host driver: queued on the stream, split over the thread pool
// (accumulations run on one thread, in index order, like ATen's CPU kernels).
#include "kernels/index.h"

#include <algorithm>

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
namespace {

struct IndexExecutor : Executor {
  static rt::Error minMax(const ElementwiseDesc& d, int64_t* minmax, rt::Stream stream) {
    return rt::host::enqueue(stream, [d, minmax] {
      int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
      for (int64_t i = 0; i < d.numel; ++i) {
        const int64_t v = indexAt(d, i);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      minmax[0] = lo;
      minmax[1] = hi;
    });
  }

  template <class T>
  static rt::Error countNonzero(const ElementwiseDesc& d, int64_t* count, rt::Stream stream) {
    return rt::host::enqueue(stream, [d, count] {
      int64_t c = 0;
      for (int64_t i = 0; i < d.numel; ++i) c += nonzeroRowMajor<T>(d, i);
      *count = c;
    });
  }

  template <class T>
  static rt::Error nonzero(const ElementwiseDesc& d, int64_t* out, rt::Stream stream) {
    return rt::host::enqueue(stream, [d, out] {
      int64_t* row = out;
      for (int64_t i = 0; i < d.numel; ++i) {
        if (!nonzeroRowMajor<T>(d, i)) continue;
        writeCoordinates(d, i, row);
        row += d.ndim;
      }
    });
  }
};

}  // namespace

const IndexTable& indexTable() {
  static const IndexTable table = IndexTable::make<IndexExecutor>();
  return table;
}

}  // namespace accel::kernels::host

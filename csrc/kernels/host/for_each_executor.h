// Runs an index-space functor `bool f(int64_t i)` for the host driver (the indexing and sort
// families): queued on the stream, split over the thread pool, or run on one thread when
// `serial` (accumulations, which then add in index order like ATen's CPU kernels).
#pragma once

#include <stdexcept>

#include "kernels/host/host_executor.h"

namespace accel::kernels::host {

// Accumulations run on one thread (serial forEach), so a plain read-modify-write is exact.
struct PlainAccumulate {
  template <class T>
  static void add(T* p, OpMath<T> v) {
    *p = castTo<T>(castTo<OpMath<T>>(*p) + v);
  }
};

struct ForEachExecutor {
  using Accumulate = PlainAccumulate;

  template <class F>
  static rt::Error forEach(int64_t n, bool serial, const F& f, rt::Stream stream) {
    return rt::host::enqueue(stream, [n, serial, f] {
      auto body = [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          // The aten layer validates indices first; reaching this is a bug upstream, and it
          // becomes the device's sticky error instead of a wild write.
          if (!f(i)) throw std::out_of_range("accel: index out of bounds in an indexing kernel");
        }
      };
      if (serial) body(0, n);
      else rt::host::parallelFor(0, n, kGrain, body);
    });
  }

};

}  // namespace accel::kernels::host

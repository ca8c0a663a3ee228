// The parallel loop host kernels run in: a persistent pool of helper threads plus the caller.
#pragma once

#include <algorithm>
#include <cstdint>

namespace accel::rt::host {

namespace detail {
using RangeFn = void (*)(const void* fn, int64_t begin, int64_t end);
void parallelRun(int64_t begin, int64_t end, int64_t grain, RangeFn call, const void* fn);
}  // namespace detail

// Calls fn(b, e) on disjoint subranges that together cover [begin, end) exactly once, each at
// least `grain` long (except the last). Ranges of at most `grain` run inline, at no cost.
// Safe to call from several threads at once; nested calls, and calls in a forked child, run
// inline. The first exception thrown by fn is rethrown here once every chunk has stopped.
template <class F>
void parallelFor(int64_t begin, int64_t end, int64_t grain, const F& fn) {
  if (end - begin <= std::max<int64_t>(grain, 1)) {
    if (begin < end) fn(begin, end);
    return;
  }
  detail::parallelRun(
      begin, end, grain,
      [](const void* f, int64_t b, int64_t e) { (*static_cast<const F*>(f))(b, e); }, &fn);
}

// Threads a parallelFor uses, caller included: TORCH_ACCEL_NUM_THREADS, else OMP_NUM_THREADS,
// else the hardware's.
int numThreads();

}  // namespace accel::rt::host

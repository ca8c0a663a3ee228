// The host driver's executor: how every kernel family launches on the host. Work is queued on
// the stream and split over the runtime's thread pool. Only this file knows how host kernels
// are launched.
//   run<Out, In...>(desc, f, stream)   an elementwise functor over an ElementwiseDesc
//   forEach(n, serial, f, stream)      an index-space functor `bool f(int64_t i)` over [0, n);
//                                      serial runs it on one thread (accumulations then add in
//                                      index order, like ATen's CPU kernels)
#pragma once

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/host/lanes.h"
#include "runtime/host/host_launch.h"
#include "runtime/host/parallel.h"

namespace accel::kernels::host {

// Elements per parallel chunk: large enough that the pool's overhead is noise, small enough
// that 16M elements keep every core busy.
constexpr int64_t kGrain = 32768;

// Kernels over at most this many elements take about as long as waking a stream worker:
// they are short work, run on the caller when the stream is idle (rt::host::enqueueShort).
constexpr int64_t kShortElements = 4096;

template <class W>
rt::Error launch(rt::Stream stream, int64_t numel, W&& work) {
  if (numel <= kShortElements) return rt::host::enqueueShort(stream, std::forward<W>(work));
  return rt::host::enqueue(stream, std::forward<W>(work));
}

// Raw pointers and a by-value functor, so the compiler can keep alpha in a register and
// vectorize (stores through `out` cannot then alias the functor or the descriptor).
template <class F, class Out, class... In>
__attribute__((always_inline)) inline void denseLoopBody(const F& f, int64_t begin, int64_t end,
                                                         Out* out, const In*... in) {
  for (int64_t i = begin; i < end; ++i) contiguousAt(f, i, out, in...);
}

template <class F, class Out, class... In>
void denseLoop(const F f, int64_t begin, int64_t end, Out* out, const In*... in) {
  denseLoopBody(f, begin, end, out, in...);
}

#ifdef ACCEL_HOST_AVX2
// The same loop in AVX2 lanes (lanes.h).
template <class F, class Out, class... In>
ACCEL_TARGET_AVX2 void denseLoopAvx2(const F f, int64_t begin, int64_t end, Out* out,
                                     const In*... in) {
  denseLoopBody(f, begin, end, out, in...);
}
#endif

template <class F, class Out, class... In, size_t... I>
void denseRange(const F& f, const ElementwiseDesc& d, int64_t begin, int64_t end,
                std::index_sequence<I...>) {
#ifdef ACCEL_HOST_AVX2
  if (hostHasAvx2())
    return denseLoopAvx2(f, begin, end, typedData<Out>(d, 0), typedData<const In>(d, I + 1)...);
#endif
  denseLoop(f, begin, end, typedData<Out>(d, 0), typedData<const In>(d, I + 1)...);
}

// Any strides: the offsets are computed once per run along dimension 0, then stepped.
template <class F, class Out, class... In>
void stridedRange(const F& f, const ElementwiseDesc& d, int64_t begin, int64_t end) {
  constexpr int N = 1 + sizeof...(In);
  const int64_t inner = d.ndim > 0 ? d.sizes[0] : 1;
  for (int64_t i = begin; i < end;) {
    int64_t off[N];
    offsetsOf(d, i, off);
    const int64_t n = std::min(end - i, inner - i % inner);
    for (int64_t j = 0; j < n; ++j) {
      stridedAt<F, Out, In...>(f, d, off);
      for (int k = 0; k < N; ++k) off[k] += d.op[k].strides[0];
    }
    i += n;
  }
}

// Accumulations run on one thread (serial forEach), so a plain read-modify-write is exact.
struct PlainAccumulate {
  template <class T>
  static void add(T* p, OpMath<T> v) {
    *p = castTo<T>(castTo<OpMath<T>>(*p) + v);
  }
};

struct Executor {
  using Accumulate = PlainAccumulate;

  template <class Out, class... In, class F>
  static rt::Error run(const ElementwiseDesc& d, const F& f, rt::Stream stream) {
    if (d.numel == 0) return rt::Error::Success;
    constexpr bool typed = !std::is_same_v<Out, AnyDType> && (!std::is_same_v<In, AnyDType> && ...);
    if constexpr (typed) {
      if (isContiguous(d)) {
        return launch(stream, d.numel, [d, f] {
          rt::host::parallelFor(0, d.numel, kGrain, [&](int64_t b, int64_t e) {
            denseRange<F, Out, In...>(f, d, b, e, std::index_sequence_for<In...>{});
          });
        });
      }
    }
    return launch(stream, d.numel, [d, f] {
      rt::host::parallelFor(0, d.numel, kGrain,
                            [&](int64_t b, int64_t e) { stridedRange<F, Out, In...>(f, d, b, e); });
    });
  }

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
      if (serial)
        body(0, n);
      else
        rt::host::parallelFor(0, n, kGrain, body);
    });
  }
};

}  // namespace accel::kernels::host

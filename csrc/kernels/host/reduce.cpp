// Host build of the reduction family: parallel over outputs, or, for a few long reductions,
// over chunks of the reduced range whose partial accumulators are then merged in order
// (planReduce, shared with the CUDA build); column reductions, the scans and nll_loss are
// reduce.h's, whole.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/host/lanes.h"
#include "kernels/host/plan_executor.h"
#include "kernels/host/vector_value.h"
#include "kernels/reduce.h"
#include "kernels/tables.h"
#include "runtime/host/host_launch.h"
#include "runtime/host/parallel.h"

namespace accel::kernels::host {
namespace {

// Independent accumulators a block is dealt over, so that the adds (or Welford steps) of
// a block run side by side instead of in one dependency chain, and vectorise. Sums take 32,
// two AVX-512 registers of floats (four of doubles), in the widest lanes: enough chains to
// hide the add's latency (with 8, one register's chain held an L2-resident sum of 262K floats
// to half CPU's speed). Variance and norms keep 8 (32 Welford steps or p-norm terms ran
// slower). Max and min keep one: a tie must go to the lower index, which lanes dealt
// round-robin would not preserve.
template <class A>
struct IsValueIndex : std::false_type {};
template <class T>
struct IsValueIndex<ValueIndex<T>> : std::true_type {};
template <class R>
struct IsSum : std::false_type {};
template <class In, class Acc>
struct IsSum<SumReducer<In, Acc>> : std::true_type {};
template <class R>
constexpr int kLanesOf = IsValueIndex<typename R::acc_t>::value ? 1 : 8;
// A sum's block of at least kSumLanesFrom elements takes kSumLanes (a shorter one, a short
// row or a run's tail, keeps 8: more would only add merges).
constexpr int kSumLanes = 32;
constexpr int64_t kSumLanesFrom = 128;
// Runs shorter than this add in sequence, as CPU's kernels add short rows.
constexpr int64_t kSequentialBelow = 16;

// The accumulator of n elements at p, p + step, ... (bytes), whose reduced indices start at j:
// lane l takes every kLanes-th element, and the lanes merge pairwise; a run shorter than
// kSequentialBelow adds in sequence. Dense blocks (step = the element size) vectorise, in the
// widest lanes the CPU has; strided ones add in the same order, so a sum of a non-contiguous
// tensor is the same number as of its contiguous copy, and as accurate.
template <class R, class In, bool Dense, int L>
typename R::acc_t laneBlock(const R& r, const char* p, int64_t step, int64_t j, int64_t n) {
  using A = typename R::acc_t;
  auto at = [p, step](int64_t k) -> In {
    if constexpr (Dense) return reinterpret_cast<const In*>(p)[k];
    return *reinterpret_cast<const In*>(p + k * step);
  };
  if (n < kSequentialBelow || L == 1) {
    A acc = r.identity();
    for (int64_t k = 0; k < n; ++k) acc = r.reduce(acc, at(k), j + k);
    return acc;
  }
  A lane[L];
  for (int l = 0; l < L; ++l) lane[l] = r.identity();
  int64_t k = 0;
  for (; k + L <= n; k += L)
    for (int l = 0; l < L; ++l) lane[l] = r.reduce(lane[l], at(k + l), j + k + l);
  for (; k < n; ++k) lane[k % L] = r.reduce(lane[k % L], at(k), j + k);
  for (int w = L / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] = r.combine(lane[l], lane[l + w]);
  return lane[0];
}

// amax/amin (ExtremeValueReducer) and max/min with indices in floating point take their dense
// runs whole to vector code (vector_value.h): GCC compiles a max over an array of lanes to
// scalar compares.
template <class R>
struct IsExtremeValue : std::false_type {};
template <class In, bool IsMax>
struct IsExtremeValue<ExtremeValueReducer<In, IsMax>> : std::true_type {
  static constexpr bool kMax = IsMax;
};

// Max/min with indices (ExtremeReducer): the extreme value first (a NaN if there
// is one, as the reducer prefers NaN), then the first element equal to it, searched a vector
// at a time. That is the sequential result: ties and NaNs go to the lower index. j0 is p[0]'s
// index.
template <class R>
struct IsExtremeIndexed : std::false_type {};
template <class In, bool IsMax>
struct IsExtremeIndexed<ExtremeReducer<In, IsMax>> : std::true_type {
  static constexpr bool kMax = IsMax;
};

template <class R, class In>
__attribute__((always_inline)) inline typename R::acc_t extremeIndexedBlock(const R& r, const In* p,
                                                                            int64_t j0, int64_t n) {
  using A = decltype(R::acc_t::v);
  constexpr int L = 64 / sizeof(A);
  using V = Vector<A, L>;
  const A target = vectorExtreme<IsExtremeIndexed<R>::kMax, A>(p, n);
  const bool nan = target != target;
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    V v;
    loadVector<A, L>(p + k, v);
    const auto hit = nan ? v != v : v == target;
    bool any = false;
    for (int l = 0; l < L; ++l) any |= hit[l] != 0;
    if (any) break;
  }
  for (; k < n; ++k) {
    const A v = loadCast<A>(p[k]);
    if (nan ? v != v : v == target) return {v, j0 + k};
  }
  return r.identity();  // n == 0
}

// Reducers whose dense runs go whole to the vector blocks above: max and min in floating point.
template <class R, class = void>
struct ExtremeValueType {
  using type = typename R::acc_t;
};
template <class R>
struct ExtremeValueType<R, std::void_t<decltype(R::acc_t::v)>> {
  using type = decltype(R::acc_t::v);
};
template <class R>
constexpr bool kWholeRuns = (IsExtremeValue<R>::value || IsExtremeIndexed<R>::value) &&
                            std::is_floating_point_v<typename ExtremeValueType<R>::type>;

// A dense run of max / min in floating point, whole (j0: its first reduced index).
template <class In, class R>
__attribute__((always_inline)) inline typename R::acc_t wholeRun(const R& r, const char* p,
                                                                 int64_t j0, int64_t n) {
  const auto* run = reinterpret_cast<const In*>(p);
  if constexpr (IsExtremeValue<R>::value)
    return vectorExtreme<IsExtremeValue<R>::kMax, typename R::acc_t>(run, n);
  else
    return extremeIndexedBlock(r, run, j0, n);
}

// One block of n <= kCascade elements at p, p + step, ... (j: its first reduced index).
template <class In, bool Dense, class R>
__attribute__((always_inline)) inline typename R::acc_t block(const R& r, const char* p,
                                                              int64_t step, int64_t j, int64_t n) {
  if (IsSum<R>::value && n >= kSumLanesFrom)
    return laneBlock<R, In, Dense, kSumLanes>(r, p, step, j, n);
  return laneBlock<R, In, Dense, kLanesOf<R>>(r, p, step, j, n);
}

// Accumulates reduced elements [rb, re) of the output whose input base offset is `base`: runs
// along the innermost reduced dim, in blocks of kCascade whose partials merge pairwise.
// reduceRange runs long ranges of sums and of the whole-run extremes in the widest lanes, once
// per range (a switch per 256-element block cost a third of an L2-resident sum).
template <class In, class R>
typename R::acc_t reduceRangeIn(const R& r, const ReduceDesc& d, int64_t base, int64_t rb,
                                int64_t re) {
  Pairwise<R> total;
  const int64_t inner = d.red_ndim > 0 ? d.red_sizes[0] : 1;
  const int64_t step = d.red_ndim > 0 ? d.in_red_strides[0] : 0;
  const bool dense = step == int64_t(sizeof(In));
  for (int64_t j = rb; j < re;) {
    int64_t off = base + redOffset(d, j);
    const int64_t e = j + std::min(re - j, inner - (j < inner ? j : j % inner));  // no idiv
    while (j < e) {
      if constexpr (kWholeRuns<R>) {
        if (dense) {  // the merges are exact: the whole run at once
          total.push(r, wholeRun<In>(r, d.in + off, j, e - j));
          off += (e - j) * step;
          j = e;
          continue;
        }
      }
      const int64_t n = std::min(e - j, kCascade);
      total.push(r, dense ? block<In, true>(r, d.in + off, step, j, n)
                          : block<In, false>(r, d.in + off, step, j, n));
      off += n * step;
      j += n;
    }
  }
  return total.result(r);
}

// Whether every output reduces one dense run of at most kCascade elements (a row of a norm, a
// mask's any): such rows take shortRows, which skips reduceRangeIn's setup (it cost several
// times a 32-element row's adds).
template <class In>
bool shortDenseRows(const ReduceDesc& d) {
  return d.red_ndim == 1 && d.in_red_strides[0] == int64_t(sizeof(In)) && d.red_numel <= kCascade;
}

// Outputs [b, e) of short dense rows, each the single block reduceRangeIn would take.
template <class In, class R>
void shortRows(const R& r, const ReduceDesc& d, int64_t b, int64_t e) {
  for (int64_t o = b; o < e; ++o) {
    int64_t base, off[2];
    outOffsets(d, o, base, off);
    const char* p = d.in + base;
    if constexpr (kWholeRuns<R>)
      r.write(r.combine(r.identity(), wholeRun<In>(r, p, 0, d.red_numel)), d, off);
    else
      r.write(r.combine(r.identity(), block<In, true>(r, p, sizeof(In), 0, d.red_numel)), d, off);
  }
}

template <class In, class R>
typename R::acc_t reduceRange(const R& r, const ReduceDesc& d, int64_t base, int64_t rb,
                              int64_t re) {
  // Short ranges (a row of a few dozen) skip the switch: they are all overhead, and every
  // width adds in the same order.
  if constexpr (IsSum<R>::value || kWholeRuns<R>) {
    if (re - rb >= kCascade) {
      return inWidestLanes([&] { return reduceRangeIn<In>(r, d, base, rb, re); });
    }
  }
  return reduceRangeIn<In>(r, d, base, rb, re);
}

// The shared plan (reduce.h) with the host's numbers: its threads, and at least kGrain
// elements per task. The partials live in host memory, which is the host driver's device.
template <class In, class R>
void reduceAll(const ReduceDesc& d, const R& r) {
  using A = typename R::acc_t;
  const ReducePlan plan = planReduce(d.out_numel, d.red_numel, rt::host::numThreads(), kGrain);
  if (plan.splits == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, d.red_numel));
    if (shortDenseRows<In>(d)) {
      rt::host::parallelFor(0, d.out_numel, grain, [&](int64_t b, int64_t e) {
        inWidestLanes([&] { shortRows<In>(r, d, b, e); });
      });
      return;
    }
    rt::host::parallelFor(0, d.out_numel, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        int64_t base, off[2];
        outOffsets(d, o, base, off);
        r.write(reduceRange<In>(r, d, base, 0, d.red_numel), d, off);
      }
    });
    return;
  }
  std::vector<A> partial(plan.workers);
  rt::host::parallelFor(0, plan.workers, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / plan.splits, c = t % plan.splits;
      int64_t base, off[2];
      outOffsets(d, o, base, off);
      partial[t] =
          reduceRange<In>(r, d, base, c * plan.chunk, std::min(d.red_numel, (c + 1) * plan.chunk));
    }
  });
  for (int64_t o = 0; o < d.out_numel; ++o) {
    Pairwise<R> acc;
    for (int64_t c = 0; c < plan.splits; ++c) acc.push(r, partial[o * plan.splits + c]);
    int64_t base, off[2];
    outOffsets(d, o, base, off);
    r.write(acc.result(r), d, off);
  }
}

}  // namespace

rt::Error reduce(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream) {
  if (rt::Error e = validateReduce(d); e != rt::Error::Success) return e;
  if (d.out_numel == 0) return rt::Error::Success;
  return dispatchReducer(op, d, params, [&](auto in_tag, auto r) {
    using In = typename std::decay_t<decltype(in_tag)>::type;
    if (takesColumnPath(d, sizeof(In))) return launchColumnReduce<Executor, In>(d, r, stream);
    return launch(stream, d.out_numel * d.red_numel, [d, r] { reduceAll<In>(d, r); });
  });
}

// Column reductions keep their partials in the workspace, as on CUDA; reduceAll's need none.
int64_t workspaceBytes(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream) {
  if (validateReduce(d) != rt::Error::Success || d.out_numel == 0) return 0;
  int64_t bytes = 0;
  (void)dispatchReducer(op, d, params, [&](auto in_tag, auto r) {
    using In = typename std::decay_t<decltype(in_tag)>::type;
    if (isColumnReduce(d, sizeof(In))) bytes = columnWorkspaceBytes(d, r);
    return rt::Error::Success;
  });
  return bytes;
}

const ReduceTable& reduceTable() {
  static const ReduceTable table = makeReduceTable<PlanExecutor>(&reduce, &workspaceBytes);
  return table;
}

}  // namespace accel::kernels::host

// The reduction family: reductions over any set of dimensions (sum, prod, max/min with
// indices, var/std, vector norms), the scans (cumsum, cumprod, cummax, cummin, logcumsumexp) and
// nll_loss, described with plain sizes and byte strides. The reducers below are written once and
// run by host/reduce.cpp and cuda/reduce.cu, which still schedule them each their own way; the
// scans and nll_loss are written once whole, as index-space passes (Exec::forEach). A reducer R
// over input storage type In has an accumulator `acc_t` and:
//   identity()          the accumulator of nothing
//   reduce(a, v, j)     folds in element v, whose linear reduced index is j
//   combine(a, b)       merges two partial accumulators (a covers lower indices when ordered)
//   write(a, d, off)    projects and stores into the outputs at byte offsets off[0], off[1]
// Accumulation is in float for half/bfloat16/float, double for double, int64 for integral
// sums, as in ATen. Both executors add elements in blocks of kCascade and merge the blocks'
// partials pairwise (Pairwise below; CUDA then merges its threads' in a tree over the thread
// block), so that long float sums stay as close to the exact sum as ATen's cascade sum.
#pragma once

#include <type_traits>

#include "kernels/elementwise.h"
#include "kernels/device_error.h"
#include "kernels/reduce_math.h"
#include "kernels/carry_scan.h"

namespace accel::kernels {

enum class ReduceOp : int {
  Sum,   // out0 = factor * sum (factor is 1, or 1/N for mean)
  Prod,  // out0 = product
  Max,   // out0 = max value (if set), out1 = its first index (int64, if set)
  Min,   // likewise for the min
  Var,   // out0 = var (or std with `take_sqrt`), out1 = mean (if set)
  Norm,  // out0 = vector p-norm (p = 0, 1, 2, inf, -inf or any other)
};

struct ReduceParams {
  double factor = 1;       // Sum
  double correction = 1;   // Var: divisor is max(0, N - correction)
  bool take_sqrt = false;  // Var: std instead of var
  double p = 2;            // Norm
};

// Each output element reduces the input over the reduced dimensions. Dimensions are listed
// innermost first; the reduced ones in the input's logical order, so that the linear index of
// a reduced element (what Max/Min report) is its row-major index over the reduced dims.
struct ReduceDesc {
  const char* in = nullptr;
  DType in_dtype = DType::Float;
  int out_ndim = 0;
  int64_t out_sizes[kMaxDims] = {};
  int64_t in_out_strides[kMaxDims] = {};  // input's byte strides along the kept dims
  int red_ndim = 0;
  int64_t red_sizes[kMaxDims] = {};
  int64_t in_red_strides[kMaxDims] = {};  // input's byte strides along the reduced dims
  int64_t out_numel = 1;
  int64_t red_numel = 1;
  char* out[2] = {nullptr, nullptr};  // null: not wanted
  DType out_dtype[2] = {DType::Float, DType::Int64};
  int64_t out_strides[2][kMaxDims] = {};  // byte strides along the kept dims
  // Device scratch for the partial accumulators of a split reduction (ReducePlan), of
  // ReduceTable::workspace_bytes; null when that is 0.
  char* workspace = nullptr;
};

enum class ScanOp : int {
  Sum,   // out[j] = in[0] + ... + in[j]
  Prod,  // out[j] = in[0] * ... * in[j]
  Max,   // out[j] = max of in[0..j]; indices[j] its position (ties and NaNs: the last, as ATen)
  Min,   // likewise for the min
  LogSumExp,  // out[j] = log(exp(in[0]) + ... + exp(in[j])); floating dtypes only
};

// Contiguous [outer, n, inner] problem along the middle dimension, input and output of one
// dtype (the aten layer casts the input first, as ATen's CPU kernel does). Max and Min also
// write int64 `indices` of the same shape.
struct ScanDesc {
  ScanOp op = ScanOp::Sum;
  const char* in = nullptr;
  char* out = nullptr;
  DType dtype = DType::Float;
  int64_t* indices = nullptr;
  int64_t outer = 1, n = 1, inner = 1;
  // Device scratch for the chunks' carries of a split scan (planScan, planCarries), of
  // ReduceTable::scan_workspace_bytes; null when that is 0.
  char* workspace = nullptr;
};

enum class LossReduction : int { None = 0, Mean = 1, Sum = 2 };  // at::Reduction's values

// nll_loss over contiguous input [n, c] (n = 1 for a 1-D input), int64 targets [n] and an
// optional weight [c] of the input's dtype. out is [n] (None) or a scalar; total_weight a
// scalar. Backward writes every element of grad_input [n, c]. A target outside [0, c) that is
// not ignore_index is recorded in `error` (the next synchronisation fails with "Target t is out
// of bounds.") and contributes nothing. The forward's Mean and Sum reduce `scratch`
// (nllScratchBytes) of per-chunk partials.
struct NllLossDesc {
  const char* input = nullptr;
  const int64_t* target = nullptr;
  const char* weight = nullptr;  // null: all ones
  DType dtype = DType::Float;    // input, weight, output, total_weight, grads
  int64_t n = 0, c = 0;
  LossReduction reduction = LossReduction::Mean;
  int64_t ignore_index = -100;
  char* output = nullptr;
  char* total_weight = nullptr;
  const char* grad_output = nullptr;  // backward
  char* grad_input = nullptr;         // backward
  char* scratch = nullptr;            // forward with Mean or Sum
  rt::DeviceErrorRecord* error = nullptr;
};

// Samples per partial sum of the forward: a function of n alone, so that both drivers add the
// same numbers in the same order.
constexpr int64_t kNllChunk = 1024;
ACCEL_HD inline int64_t nllChunks(int64_t n) { return (n + kNllChunk - 1) / kNllChunk; }
inline int64_t nllScratchBytes(int64_t n) { return 2 * nllChunks(n) * int64_t(sizeof(double)); }

struct ReduceTable {
  rt::Error (*reduce)(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream);
  // The bytes of ReduceDesc::workspace that reduce needs for `d` on the stream's device.
  int64_t (*workspace_bytes)(ReduceOp op, const ReduceDesc& d, ReduceParams params,
                             rt::Stream stream);
  // out[.., j, ..] = the scan of in[.., 0..j, ..] (ScanDesc).
  rt::Error (*scan)(const ScanDesc& d, rt::Stream stream);
  // The bytes of ScanDesc::workspace that scan needs for `d` on the stream's device.
  int64_t (*scan_workspace_bytes)(const ScanDesc& d, rt::Stream stream);
  rt::Error (*nll_loss_forward)(const NllLossDesc& d, rt::Stream stream);
  rt::Error (*nll_loss_backward)(const NllLossDesc& d, rt::Stream stream);
};

const ReduceTable& reduceTable();  // the build of the driver in use

// How a reduction spreads over `units` parallel processors (CUDA: SMs; host: threads) when it
// has few outputs: each output's reduced range is split into `splits` chunks of `chunk`
// consecutive elements (none empty), reduced by `workers` = out_numel * splits independent
// workers (CUDA blocks, host tasks) into partial accumulators; a second pass combines each
// output's partials in order. With splits == 1 a worker reduces a whole output and writes it.
// The same function plans both drivers; only the machine's numbers differ.
struct ReducePlan {
  int64_t splits = 1;
  int64_t chunk = 0;
  int64_t workers = 0;
};

constexpr int64_t kReduceWorkersPerUnit = 4;  // enough to hide memory latency on a GPU

ACCEL_HD inline ReducePlan planReduce(int64_t out_numel, int64_t red_numel, int64_t units,
                                      int64_t min_chunk) {
  ReducePlan p;
  const int64_t target = kReduceWorkersPerUnit * (units > 0 ? units : 1);
  if (out_numel > 0 && out_numel < target && red_numel >= 2 * min_chunk) {
    const int64_t want = (target + out_numel - 1) / out_numel;
    const int64_t most = red_numel / min_chunk;
    p.splits = want < most ? want : most;
  }
  p.chunk = red_numel > 0 ? (red_numel + p.splits - 1) / p.splits : 0;
  if (p.chunk > 0) p.splits = (red_numel + p.chunk - 1) / p.chunk;  // no empty chunk
  p.workers = out_numel * p.splits;
  return p;
}

// Elements per partial accumulator: each adds up at most kCascade values in sequence.
constexpr int64_t kCascade = 256;

// Merges a run of partial accumulators, given in index order, pairwise: level k holds the
// merge of 2^k consecutive partials (a binary counter), so n partials meet in a tree of depth
// log2(n), with the rounding error of pairwise summation, in O(log n) space.
template <class R>
struct Pairwise {
  using A = typename R::acc_t;
  static constexpr int kLevels = 48;  // 2^48 partials of kCascade elements: beyond any tensor
  A level[kLevels];
  int64_t count = 0;
  ACCEL_HD void push(const R& r, A part) {
    int k = 0;
    for (int64_t c = count; c & 1; c >>= 1, ++k) part = r.combine(level[k], part);
    level[k] = part;
    ++count;
  }
  // The merge of everything pushed (higher levels hold the lower indices), from the highest
  // level in use: a short row pushes once, and a scan of all kLevels cost it more than its
  // elements did.
  ACCEL_HD A result(const R& r) const {
    A acc = r.identity();
    int top = 0;
    while ((count >> top) > 1) ++top;
    for (int k = top; k >= 0; --k)
      if ((count >> k) & 1) acc = r.combine(acc, level[k]);
    return acc;
  }
};

// Byte offsets of output element `o` in the input and in each output. The outermost dim takes
// what is left of the index, and the walk stops once it is zero: divisions were most of a
// short row's cost.
ACCEL_HD inline void outOffsets(const ReduceDesc& d, int64_t o, int64_t& in_off,
                                int64_t (&out_off)[2]) {
  in_off = 0;
  out_off[0] = out_off[1] = 0;
  for (int k = 0; k < d.out_ndim && o != 0; ++k) {
    const bool last = k + 1 == d.out_ndim;
    const int64_t idx = last ? o : o % d.out_sizes[k];
    o = last ? 0 : o / d.out_sizes[k];
    in_off += idx * d.in_out_strides[k];
    out_off[0] += idx * d.out_strides[0][k];
    out_off[1] += idx * d.out_strides[1][k];
  }
}

// Byte offset in the input of reduced element j (relative to its output's base).
ACCEL_HD inline int64_t redOffset(const ReduceDesc& d, int64_t j) {
  int64_t off = 0;
  for (int k = 0; k < d.red_ndim && j != 0; ++k) {
    const bool last = k + 1 == d.red_ndim;
    off += (last ? j : j % d.red_sizes[k]) * d.in_red_strides[k];
    j = last ? 0 : j / d.red_sizes[k];
  }
  return off;
}

// Accumulator of sums and products: by the output's dtype class.
template <class Out>
using SumAcc = std::conditional_t<std::is_same_v<Out, double>, double,
                                  std::conditional_t<isFloating<Out>, float, int64_t>>;

template <class In, class Acc>
struct SumReducer {
  using acc_t = Acc;
  Acc factor;
  ACCEL_HD Acc identity() const { return Acc(0); }
  ACCEL_HD Acc reduce(Acc a, In v, int64_t) const { return a + castTo<Acc>(v); }
  ACCEL_HD Acc combine(Acc a, Acc b) const { return a + b; }
  ACCEL_HD void write(Acc a, const ReduceDesc& d, const int64_t (&off)[2]) const {
    storeAs<Acc>(d.out[0] + off[0], d.out_dtype[0], a * factor);
  }
};

template <class In, class Acc>
struct ProdReducer {
  using acc_t = Acc;
  ACCEL_HD Acc identity() const { return Acc(1); }
  ACCEL_HD Acc reduce(Acc a, In v, int64_t) const { return a * castTo<Acc>(v); }
  ACCEL_HD Acc combine(Acc a, Acc b) const { return a * b; }
  ACCEL_HD void write(Acc a, const ReduceDesc& d, const int64_t (&off)[2]) const {
    storeAs<Acc>(d.out[0] + off[0], d.out_dtype[0], a);
  }
};

template <class T>
struct ValueIndex {
  T v;
  int64_t i;
};

// max/min, amax/amin, argmax/argmin: NaN wins (the first NaN), ties go to the lower index.
template <class In, bool IsMax>
struct ExtremeReducer {
  using T = OpMath<In>;
  using acc_t = ValueIndex<T>;
  ACCEL_HD acc_t identity() const { return {IsMax ? lowestOf<T>() : highestOf<T>(), INT64_MAX}; }
  // Whether b is preferred over a.
  ACCEL_HD static bool better(const acc_t& b, const acc_t& a) {
    if (isNan(a.v)) return isNan(b.v) && b.i < a.i;
    if (isNan(b.v)) return true;
    if (b.v == a.v) return b.i < a.i;
    return IsMax ? b.v > a.v : b.v < a.v;
  }
  ACCEL_HD acc_t reduce(acc_t a, In v, int64_t j) const {
    acc_t b{castTo<T>(v), j};
    return better(b, a) ? b : a;
  }
  ACCEL_HD acc_t combine(acc_t a, acc_t b) const { return better(b, a) ? b : a; }
  ACCEL_HD void write(acc_t a, const ReduceDesc& d, const int64_t (&off)[2]) const {
    if (d.out[0]) storeAs<T>(d.out[0] + off[0], d.out_dtype[0], a.v);
    if (d.out[1]) *reinterpret_cast<int64_t*>(d.out[1] + off[1]) = a.i;
  }
};

// amax/amin and a max/min whose indices nobody asked for: NaN wins, else the extreme. Any order
// of the elements gives the same value, so the host deals them over vector lanes (the indexed
// reducer above keeps one).
template <class In, bool IsMax>
struct ExtremeValueReducer {
  using acc_t = OpMath<In>;
  ACCEL_HD acc_t identity() const { return IsMax ? lowestOf<acc_t>() : highestOf<acc_t>(); }
  ACCEL_HD acc_t reduce(acc_t a, In v, int64_t) const { return combine(a, castTo<acc_t>(v)); }
  ACCEL_HD acc_t combine(acc_t a, acc_t b) const {
    return (isNan(b) || (IsMax ? b > a : b < a)) ? b : a;
  }
  ACCEL_HD void write(acc_t a, const ReduceDesc& d, const int64_t (&off)[2]) const {
    storeAs<acc_t>(d.out[0] + off[0], d.out_dtype[0], a);
  }
};

template <class T>
struct Welford {
  T mean, m2;
  int64_t n;
};

// var/std (and the mean of var_mean/std_mean) by Welford's update and Chan's merge.
template <class In, class Acc>
struct VarReducer {
  using acc_t = Welford<Acc>;
  Acc correction;
  bool take_sqrt;
  ACCEL_HD acc_t identity() const { return {Acc(0), Acc(0), 0}; }
  ACCEL_HD acc_t reduce(acc_t a, In v, int64_t) const {
    const Acc x = castTo<Acc>(v);
    a.n += 1;
    const Acc delta = x - a.mean;
    a.mean += delta / static_cast<Acc>(a.n);
    a.m2 += delta * (x - a.mean);
    return a;
  }
  ACCEL_HD acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const Acc delta = b.mean - a.mean;
    const Acc nb_over_n = static_cast<Acc>(b.n) / static_cast<Acc>(n);
    return {a.mean + delta * nb_over_n,
            a.m2 + b.m2 + delta * delta * static_cast<Acc>(a.n) * nb_over_n, n};
  }
  ACCEL_HD void write(acc_t a, const ReduceDesc& d, const int64_t (&off)[2]) const {
    Acc divisor = static_cast<Acc>(a.n) - correction;
    if (divisor < Acc(0)) divisor = Acc(0);
    Acc var = a.m2 / divisor;
    storeAs<Acc>(d.out[0] + off[0], d.out_dtype[0], take_sqrt ? msqrt(var) : var);
    if (d.out[1]) storeAs<Acc>(d.out[1] + off[1], d.out_dtype[1], a.n ? a.mean : Acc(NAN));
  }
};

// linalg_vector_norm: sum |x|^p, then ^(1/p); p = 0 counts non-zeros, +-inf take max/min |x|.
template <class In, class Acc>
struct NormReducer {
  using acc_t = Acc;
  enum Kind : int { Zero, One, Two, Inf, NegInf, General };
  Kind kind;
  Acc p;
  ACCEL_HD Acc identity() const { return kind == NegInf ? static_cast<Acc>(INFINITY) : Acc(0); }
  ACCEL_HD Acc reduce(Acc a, In v, int64_t) const {
    const Acc x = mabs(castTo<Acc>(v));
    switch (kind) {
      case Zero: return a + (x != Acc(0) ? Acc(1) : Acc(0));
      case One: return a + x;
      case Two: return a + x * x;
      case General: return a + mpow(x, p);
      default: return combine(a, x);
    }
  }
  ACCEL_HD Acc combine(Acc a, Acc b) const {
    if (kind == Inf) return ExtremeValueReducer<Acc, true>{}.combine(a, b);
    if (kind == NegInf) return ExtremeValueReducer<Acc, false>{}.combine(a, b);
    return a + b;
  }
  ACCEL_HD void write(Acc a, const ReduceDesc& d, const int64_t (&off)[2]) const {
    const Acc r = kind == Two ? msqrt(a) : kind == General ? mpow(a, Acc(1) / p) : a;
    storeAs<Acc>(d.out[0] + off[0], d.out_dtype[0], r);
  }
};

template <class In>
ACCEL_HD inline In loadIn(const ReduceDesc& d, int64_t in_off) {
  return *reinterpret_cast<const In*>(d.in + in_off);
}

// Calls f(TypeTag<In>{}, reducer) with the reducer for `op` over input dtype d.in_dtype.
// Returns NotSupported for combinations the aten layer does not send (e.g. var of ints).
template <class F>
rt::Error dispatchReducer(ReduceOp op, const ReduceDesc& d, const ReduceParams& prm, F&& f) {
  return dispatchDType(d.in_dtype, [&](auto in_tag) -> rt::Error {
    using In = typename std::decay_t<decltype(in_tag)>::type;
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Prod:
        return dispatchDType(d.out_dtype[0], [&](auto out_tag) -> rt::Error {
          using Acc = SumAcc<typename std::decay_t<decltype(out_tag)>::type>;
          if (op == ReduceOp::Prod) return f(TypeTag<In>{}, ProdReducer<In, Acc>{});
          if constexpr (std::is_integral_v<Acc>)
            return f(TypeTag<In>{}, SumReducer<In, Acc>{Acc(1)});
          return f(TypeTag<In>{}, SumReducer<In, Acc>{static_cast<Acc>(prm.factor)});
        });
      case ReduceOp::Max:
        if (d.out[1] == nullptr) return f(TypeTag<In>{}, ExtremeValueReducer<In, true>{});
        return f(TypeTag<In>{}, ExtremeReducer<In, true>{});
      case ReduceOp::Min:
        if (d.out[1] == nullptr) return f(TypeTag<In>{}, ExtremeValueReducer<In, false>{});
        return f(TypeTag<In>{}, ExtremeReducer<In, false>{});
      case ReduceOp::Var:
      case ReduceOp::Norm:
        if constexpr (isFloating<In>) {
          using Acc = SumAcc<In>;
          if (op == ReduceOp::Var)
            return f(TypeTag<In>{},
                     VarReducer<In, Acc>{static_cast<Acc>(prm.correction), prm.take_sqrt});
          using N = NormReducer<In, Acc>;
          typename N::Kind kind = prm.p == 0           ? N::Zero
                                  : prm.p == 1         ? N::One
                                  : prm.p == 2         ? N::Two
                                  : prm.p == INFINITY  ? N::Inf
                                  : prm.p == -INFINITY ? N::NegInf
                                                       : N::General;
          return f(TypeTag<In>{}, N{kind, static_cast<Acc>(prm.p)});
        } else {
          return rt::Error::NotSupported;
        }
    }
    return rt::Error::InvalidValue;
  });
}

// --- Column reductions, written once ---------------------------------------------------------
// Adjacent outputs that read adjacent input elements while their reduced elements lie further
// apart: sum(0) of a matrix, bias gradients, sums over the middle of [B, T, C]. A worker per
// output would read with large strides (uncoalesced on CUDA, a cache line per element on the
// host). Here a worker reduces `rows` consecutive reduced elements (a chunk) of `Lanes`
// adjacent outputs, outputs fastest across workers, so neighbouring workers read neighbouring
// addresses: CUDA runs one output per thread (coalesced), the host a dense run of outputs per
// task (Exec::kColumnLanes). A second pass merges each output's chunk partials pairwise in
// order. The chunk length depends on the shape alone, so both drivers add the same numbers in
// the same order: 16 to kCascade rows, enough chunks for kColumnWorkers workers.
constexpr int64_t kColumnMinChunk = 16;
constexpr int64_t kColumnWorkers = int64_t{1} << 18;  // an H200 holds 132 * 2048 threads
// Fewer adjacent outputs than this leave a CUDA warp's reads scattered: the row plan is better.
constexpr int64_t kColumnMinRun = 16;

struct ColumnPlan {
  int64_t rows = 1;     // reduced elements per chunk
  int64_t chunks = 1;   // per output
  int64_t groups = 0;   // runs of at most `lanes` adjacent outputs (within a kept row)
  int64_t workers = 0;  // pass 1: chunks * groups
};

ACCEL_HD inline ColumnPlan planColumns(int64_t out_numel, int64_t run, int64_t red_numel,
                                       int64_t lanes) {
  ColumnPlan p;
  const int64_t want = out_numel > 0 ? (kColumnWorkers + out_numel - 1) / out_numel : 1;
  p.rows = kCascade;  // the longest run added in sequence (reduce.h's accuracy rule)
  while (p.rows > kColumnMinChunk && (red_numel + p.rows - 1) / p.rows < want) p.rows /= 2;
  p.chunks = red_numel > p.rows ? (red_numel + p.rows - 1) / p.rows : 1;
  p.groups = run > 0 ? (out_numel / run) * ((run + lanes - 1) / lanes) : 0;
  p.workers = p.chunks * p.groups;
  return p;
}

// Pass 2 and on: each output's partials (partial c of output o at in[c * outputs + o], `count`
// of them) merge pairwise in order, kColumnFanIn at a time, into out[k * outputs + o], until one
// run covers them all and sink(o, result) stores it. A pass per factor of kColumnFanIn keeps
// thousands of workers busy where a worker per output would read hundreds of partials in turn.
constexpr int64_t kColumnFanIn = 16;

inline int64_t columnRuns(int64_t count) { return (count + kColumnFanIn - 1) / kColumnFanIn; }

// Scratch elements for `chunks` partials of each of `outputs` outputs: theirs and the next
// pass's (later passes reuse the two halves in turn).
inline int64_t columnScratchElements(int64_t outputs, int64_t chunks) {
  return chunks > 1 ? (chunks + columnRuns(chunks)) * outputs : 0;
}

// Whether d, over elements of `elem` bytes, is a column reduction: its innermost kept dim is
// dense in the input, at least kColumnMinRun long, and no reduced dim steps inside that run.
inline bool isColumnReduce(const ReduceDesc& d, int64_t elem) {
  if (d.out_ndim == 0 || d.red_ndim == 0 || d.in_out_strides[0] != elem ||
      d.out_sizes[0] < kColumnMinRun || d.red_numel < 2)
    return false;
  const int64_t run = d.out_sizes[0] * elem;
  for (int k = 0; k < d.red_ndim; ++k) {
    const int64_t s = d.in_red_strides[k] < 0 ? -d.in_red_strides[k] : d.in_red_strides[k];
    if (d.red_sizes[k] > 1 && s < run) return false;
  }
  return true;
}

// Bytes of workspace the column path needs: a partial per (chunk, output) when it splits.
template <class R>
int64_t columnWorkspaceBytes(const ReduceDesc& d, const R&) {
  const ColumnPlan p = planColumns(d.out_numel, 1, d.red_numel, 1);
  return columnScratchElements(d.out_numel, p.chunks) * int64_t(sizeof(typename R::acc_t));
}

// Whether reduce() takes the column path: a column reduction with the workspace its partials
// need (a caller that gave none gets the row plan: right, only slower).
inline bool takesColumnPath(const ReduceDesc& d, int64_t elem) {
  return isColumnReduce(d, elem) &&
         (d.workspace != nullptr || planColumns(d.out_numel, 1, d.red_numel, 1).chunks == 1);
}

// Pass 1 of a column reduction, as a "chunker" (the interface ColumnChunkPass and
// ColumnGroupOp run, which layer norm's parameter gradients share, norm.h): per group of
// adjacent outputs, the accumulators of a chunk of rows (reduceChunk), and where they go
// (writeResults when one chunk is all, writePartials into the workspace's slot otherwise).
// kAcc accumulators per group; `merge` combines partials; outputs() partials per slot.
template <class In, class R, int Lanes>
struct ColumnChunkOp {
  using A = typename R::acc_t;
  using Merge = R;
  static constexpr int kAcc = Lanes;
  ReduceDesc d;
  R r;
  ColumnPlan p;

  struct Group {
    int64_t o;       // its first output
    int lanes;       // its outputs
    int64_t base;    // the input's byte offset of output o
    int64_t off[2];  // the outputs' byte offsets of output o
  };
  ACCEL_HD Group group(int64_t g) const {
    Group k;
    const int64_t run = d.out_sizes[0], per_row = (run + Lanes - 1) / Lanes;
    const int64_t first = (g % per_row) * Lanes;
    k.lanes = run - first < Lanes ? static_cast<int>(run - first) : Lanes;
    k.o = (g / per_row) * run + first;
    outOffsets(d, k.o, k.base, k.off);
    return k;
  }
  ACCEL_HD const R& merge() const { return r; }
  int64_t outputs() const { return d.out_numel; }
  A* workspace() const { return reinterpret_cast<A*>(d.workspace); }
  // Elements a chunk of the group reads: the host's task grain.
  int64_t elementsPerChunk() const {
    const int64_t run = d.out_sizes[0];
    return (p.rows < d.red_numel ? p.rows : d.red_numel) * (run < Lanes ? run : Lanes);
  }
  // acc = chunk c of the group's outputs (identity past its lanes).
  ACCEL_HD void reduceChunk(const Group& k, int64_t c, A (&acc)[Lanes]) const {
    const int64_t begin = c * p.rows;
    const int64_t end = begin + p.rows < d.red_numel ? begin + p.rows : d.red_numel;
    const int64_t inner = d.red_sizes[0], step = d.in_red_strides[0];
    for (int l = 0; l < Lanes; ++l) acc[l] = r.identity();
    for (int64_t j = begin; j < end;) {
      // A run along the innermost reduced dim, stepped rather than recomputed.
      const In* at = reinterpret_cast<const In*>(d.in + k.base + redOffset(d, j));
      const int64_t run_end = j + (inner - j % inner) < end ? j + (inner - j % inner) : end;
      if (k.lanes == Lanes) {  // a bound known at compile time: the accumulators stay in registers
        for (; j < run_end;
             ++j, at = reinterpret_cast<const In*>(reinterpret_cast<const char*>(at) + step))
          for (int l = 0; l < Lanes; ++l) acc[l] = r.reduce(acc[l], at[l], j);
      }
      for (; j < run_end;
           ++j, at = reinterpret_cast<const In*>(reinterpret_cast<const char*>(at) + step))
        for (int l = 0; l < k.lanes; ++l) acc[l] = r.reduce(acc[l], at[l], j);
    }
  }
  ACCEL_HD void writeResults(const Group& k, const A (&acc)[Lanes]) const {
    for (int l = 0; l < k.lanes; ++l) {
      const int64_t lane_off[2] = {k.off[0] + l * d.out_strides[0][0],
                                   k.off[1] + l * d.out_strides[1][0]};
      r.write(acc[l], d, lane_off);
    }
  }
  ACCEL_HD void writePartials(const Group& k, int64_t slot, const A (&acc)[Lanes]) const {
    for (int l = 0; l < k.lanes; ++l) workspace()[slot * d.out_numel + k.o + l] = acc[l];
  }
};

// Pass 1: worker t reduces chunk t / groups of group t % groups and writes the results (one
// chunk) or the partials of slot `chunk`.
template <class Chunker>
struct ColumnChunkPass {
  Chunker k;
  int64_t elementsPerIndex() const { return k.elementsPerChunk(); }
  ACCEL_HD bool operator()(int64_t t) const {
    const auto g = k.group(t % k.p.groups);
    const int64_t c = t / k.p.groups;
    typename Chunker::A acc[Chunker::kAcc];
    k.reduceChunk(g, c, acc);
    if (k.p.chunks == 1) {
      k.writeResults(g, acc);
    } else {
      k.writePartials(g, c, acc);
    }
    return true;
  }
};

template <class R, class Sink>
struct ColumnMergeOp {
  using A = typename R::acc_t;
  R r;
  Sink sink;
  const A* in;
  A* out;
  int64_t outputs, count;
  ACCEL_HD bool operator()(int64_t t) const {
    const int64_t o = t % outputs, k = t / outputs;
    const int64_t end = (k + 1) * kColumnFanIn < count ? (k + 1) * kColumnFanIn : count;
    Pairwise<R> acc;
    for (int64_t c = k * kColumnFanIn; c < end; ++c) acc.push(r, in[c * outputs + o]);
    if (count <= kColumnFanIn) {
      sink(o, acc.result(r));
    } else {
      out[k * outputs + o] = acc.result(r);
    }
    return true;
  }
};

template <class Exec, class R, class Sink>
rt::Error mergeColumnPartials(const R& r, const Sink& sink, typename R::acc_t* scratch,
                              int64_t outputs, int64_t chunks, rt::Stream stream) {
  typename R::acc_t *src = scratch, *dst = scratch + chunks * outputs;
  for (int64_t count = chunks;; count = columnRuns(count)) {
    const int64_t runs = columnRuns(count);
    if (rt::Error e =
            Exec::forEach(runs * outputs, false,
                          ColumnMergeOp<R, Sink>{r, sink, src, dst, outputs, count}, stream);
        e != rt::Error::Success || runs == 1)
      return e;
    auto* next = src;
    src = dst;
    dst = next;
  }
}

// mergeColumnPartials' merges for Lanes adjacent outputs at once, fed each output's chunk
// partials in chunk order: runs of kColumnFanIn at each pass, each merged pairwise (Pairwise's
// binary counter, the same for every lane), the last run of a pass cut short, as the passes do;
// so the results are theirs bit for bit. Lets a driver with few parallel units (the host) merge
// a group's chunks in its task, with no pass per level (ColumnGroupOp).
template <class R, int Lanes>
struct LaneMerger {
  using A = typename R::acc_t;
  static constexpr int kLevels = 5;     // a run's counter: at most kColumnFanIn = 2^4 partials
  static constexpr int kMaxPasses = 6;  // up to 16^6 chunks: more take the passes
  static_assert(kColumnFanIn == 16, "kLevels holds a run of kColumnFanIn partials");
  A level[kMaxPasses][kLevels][Lanes];
  int64_t count[kMaxPasses] = {};
  int last = 0;  // the pass whose single run gives the result

  // The merge passes `chunks` partials take (the last of them), or -1 beyond kMaxPasses.
  ACCEL_HD static int lastPass(int64_t chunks) {
    int pass = 0;
    for (int64_t n = chunks; n > kColumnFanIn; n = columnRuns(n)) ++pass;
    return pass < kMaxPasses ? pass : -1;
  }
  // Merging in passes 0 .. last: the result is the item of pass last + 1, which covers up to
  // 16^(last + 1) partials (all of them with last = lastPass(count)).
  ACCEL_HD explicit LaneMerger(int last_pass) : last(last_pass) {}

  ACCEL_HD void push(const R& r, int pass, A (&part)[Lanes]) {
    int k = 0;
    for (int64_t c = count[pass]; c & 1; c >>= 1, ++k)
      for (int l = 0; l < Lanes; ++l) part[l] = r.combine(level[pass][k][l], part[l]);
    for (int l = 0; l < Lanes; ++l) level[pass][k][l] = part[l];
    if (++count[pass] == kColumnFanIn && pass < last) flush(r, pass);
  }
  // The merge of pass `pass`'s current run (Pairwise::result), into out.
  ACCEL_HD void runResult(const R& r, int pass, A (&out)[Lanes]) const {
    for (int l = 0; l < Lanes; ++l) out[l] = r.identity();
    for (int k = kLevels - 1; k >= 0; --k)
      if ((count[pass] >> k) & 1)
        for (int l = 0; l < Lanes; ++l) out[l] = r.combine(out[l], level[pass][k][l]);
  }
  ACCEL_HD void flush(const R& r, int pass) {
    A run[Lanes];
    runResult(r, pass, run);
    count[pass] = 0;
    push(r, pass + 1, run);
  }
  // After the last partial: the results.
  ACCEL_HD void finish(const R& r, A (&out)[Lanes]) {
    for (int pass = 0; pass < last; ++pass)
      if (count[pass] > 0) flush(r, pass);
    runResult(r, last, out);
  }
};

// Pass 1 and the first `levels` merge passes in one: task t reduces block t / groups of
// 16^levels consecutive chunks of group t % groups and merges their partials in it
// (LaneMerger), into the item of merge pass `levels` (the partials of slot `block`, for
// mergeColumnPartials to finish), or, when one block holds every chunk, into the results. Run
// by an executor with kColumnMergeInTask (the host), where a pass per merge level cost more
// than the chunks.
template <class Chunker>
struct ColumnGroupOp {
  using A = typename Chunker::A;
  using Merger = LaneMerger<typename Chunker::Merge, Chunker::kAcc>;
  Chunker k;
  int levels = 0;
  int64_t span = 1, blocks = 1;  // chunks per block (16^levels), blocks per group

  ColumnGroupOp(const Chunker& c, int levels_) : k(c), levels(levels_) {
    for (int i = 0; i < levels && span < k.p.chunks; ++i) span *= kColumnFanIn;
    blocks = (k.p.chunks + span - 1) / span;
  }
  int64_t tasks() const { return k.p.groups * blocks; }
  int64_t elementsPerIndex() const { return k.elementsPerChunk() * span; }
  ACCEL_HD bool operator()(int64_t t) const {
    const auto g = k.group(t % k.p.groups);
    const int64_t b = t / k.p.groups;
    Merger merger(blocks == 1 ? Merger::lastPass(k.p.chunks) : levels - 1);
    A acc[Chunker::kAcc];
    const int64_t end = (b + 1) * span < k.p.chunks ? (b + 1) * span : k.p.chunks;
    for (int64_t c = b * span; c < end; ++c) {
      k.reduceChunk(g, c, acc);
      merger.push(k.merge(), 0, acc);
    }
    merger.finish(k.merge(), acc);
    if (blocks == 1) {
      k.writeResults(g, acc);
    } else {
      k.writePartials(g, b, acc);
    }
    return true;
  }
};

// Stores output o of a reduction.
template <class R>
struct ReduceSink {
  ReduceDesc d;
  R r;
  ACCEL_HD void operator()(int64_t o, typename R::acc_t a) const {
    int64_t base, off[2];
    outOffsets(d, o, base, off);
    r.write(a, d, off);
  }
};

// A column reduction (takesColumnPath) on either driver; d.workspace holds
// columnWorkspaceBytes.
// A column reduction's passes on either driver: pass 1 (or, on the host, pass 1 and the merges
// in the same tasks), then the merge passes over the chunker's workspace, whose merged
// outputs `sink` stores.
template <class Exec, class Chunker, class Sink>
rt::Error launchColumnChunks(const Chunker& k, const Sink& sink, rt::Stream stream) {
  if constexpr (Exec::kColumnMergeInTask) {
    const int levels = Exec::columnMergeLevels(k.p.chunks, k.p.groups,
                                               k.elementsPerChunk() * k.p.workers, kColumnFanIn);
    using Merger = LaneMerger<typename Chunker::Merge, Chunker::kAcc>;
    if (levels > 0 && Merger::lastPass(k.p.chunks) >= 0) {
      const ColumnGroupOp<Chunker> op(k, levels);
      if (rt::Error e = Exec::forEach(op.tasks(), false, op, stream);
          e != rt::Error::Success || op.blocks == 1)
        return e;
      return mergeColumnPartials<Exec>(k.merge(), sink, k.workspace(), k.outputs(), op.blocks,
                                       stream);
    }
  }
  if (rt::Error e = Exec::forEach(k.p.workers, false, ColumnChunkPass<Chunker>{k}, stream);
      e != rt::Error::Success || k.p.chunks == 1)
    return e;
  return mergeColumnPartials<Exec>(k.merge(), sink, k.workspace(), k.outputs(), k.p.chunks, stream);
}

// A column reduction (takesColumnPath) on either driver; d.workspace holds
// columnWorkspaceBytes.
template <class Exec, class In, class R>
rt::Error launchColumnReduce(const ReduceDesc& d, const R& r, rt::Stream stream) {
  constexpr int kLanes = Exec::kColumnLanes;
  const ColumnPlan p = planColumns(d.out_numel, d.out_sizes[0], d.red_numel, kLanes);
  return launchColumnChunks<Exec>(ColumnChunkOp<In, R, kLanes>{d, r, p}, ReduceSink<R>{d, r},
                                  stream);
}

inline rt::Error validateReduce(const ReduceDesc& d) {
  if (d.out_ndim < 0 || d.out_ndim > kMaxDims || d.red_ndim < 0 || d.red_ndim > kMaxDims ||
      d.out_numel < 0 || d.red_numel < 0 || !isSupported(d.in_dtype) ||
      (d.out[0] == nullptr && d.out[1] == nullptr))
    return rt::Error::InvalidValue;
  for (int k = 0; k < 2; ++k)
    if (d.out[k] && !isSupported(d.out_dtype[k])) return rt::Error::InvalidValue;
  return rt::Error::Success;
}

// --- the scans, written once (planScan in scan_plan.h) ---------------------------------------

// The accumulator of cumsum and cumprod: ATen's CPU one (at::acc_type<T, false>): double for
// float and double, float for half and bfloat16, int64 for integers and bool. So a long float
// cumsum is as accurate as CPU's, however the line is chunked.
template <class T>
using ScanAcc = std::conditional_t<std::is_floating_point_v<T>, double,
                                   std::conditional_t<isReducedFloat<T>, float, int64_t>>;

// A scanner S over element type T has an accumulator `acc_t` (the state after a prefix) and:
//   identity()           the state before the first element
//   step(a, x, j)        the state after one more element x, at position j of the line
//   combine(a, b)        the state after a prefix with state a, then a run whose state is b
//   store(a, out, idx, at)  writes the state as element `at` of the outputs
template <class T>
struct SumScan {
  using acc_t = ScanAcc<T>;
  ACCEL_HD acc_t identity() const { return acc_t(0); }
  ACCEL_HD acc_t step(acc_t a, T x, int64_t) const { return a + castTo<acc_t>(x); }
  ACCEL_HD acc_t combine(acc_t a, acc_t b) const { return a + b; }
  ACCEL_HD void store(acc_t a, T* out, int64_t*, int64_t at) const { out[at] = castTo<T>(a); }
};

template <class T>
struct ProdScan {
  using acc_t = ScanAcc<T>;
  ACCEL_HD acc_t identity() const { return acc_t(1); }
  ACCEL_HD acc_t step(acc_t a, T x, int64_t) const { return a * castTo<acc_t>(x); }
  ACCEL_HD acc_t combine(acc_t a, acc_t b) const { return a * b; }
  ACCEL_HD void store(acc_t a, T* out, int64_t*, int64_t at) const { out[at] = castTo<T>(a); }
};

// cummax / cummin: the value and position of the extremum so far. A later element takes over
// when it is NaN, or when the extremum is not NaN and the element ties or beats it: ties and
// NaNs go to the last position, and NaN sticks (ATen's rule). The rule is associative, so a
// chunk's state merges into its prefix's by the same test.
template <class T, bool IsMax>
struct ExtremeScan {
  using A = OpMath<T>;
  using acc_t = ValueIndex<A>;
  ACCEL_HD static bool takes(const acc_t& a, A x) {
    return isNan(x) || (!isNan(a.v) && (IsMax ? x >= a.v : x <= a.v));
  }
  // Any first element takes over from it (x >= lowest, x <= highest, or NaN).
  ACCEL_HD acc_t identity() const { return {IsMax ? lowestOf<A>() : highestOf<A>(), -1}; }
  ACCEL_HD acc_t step(acc_t a, T x, int64_t j) const {
    const A v = castTo<A>(x);
    return takes(a, v) ? acc_t{v, j} : a;
  }
  ACCEL_HD acc_t combine(acc_t a, acc_t b) const { return takes(a, b.v) ? b : a; }
  ACCEL_HD void store(acc_t a, T* out, int64_t* idx, int64_t at) const {
    out[at] = castTo<T>(a.v);
    idx[at] = a.i;
  }
};

// logcumsumexp: logAddExp (reduce_math.h) in cumsum's accumulator.
template <class T>
struct LogSumExpScan {
  using acc_t = ScanAcc<T>;
  ACCEL_HD acc_t identity() const { return -acc_t(INFINITY); }
  ACCEL_HD acc_t step(acc_t a, T x, int64_t) const { return logAddExp(a, castTo<acc_t>(x)); }
  ACCEL_HD acc_t combine(acc_t a, acc_t b) const { return logAddExp(a, b); }
  ACCEL_HD void store(acc_t a, T* out, int64_t*, int64_t at) const { out[at] = castTo<T>(a); }
};

inline rt::Error validateScan(const ScanDesc& d) {
  if (!isSupported(d.dtype) || d.outer < 0 || d.n < 0 || d.inner < 0)
    return rt::Error::InvalidValue;
  if ((d.op == ScanOp::Max || d.op == ScanOp::Min) && d.indices == nullptr)
    return rt::Error::InvalidValue;
  return rt::Error::Success;
}

// Calls f(TypeTag<T>{}, scanner) with the scanner of d.op over d.dtype.
template <class F>
rt::Error dispatchScanner(const ScanDesc& d, F&& f) {
  return dispatchDType(d.dtype, [&](auto tag) -> rt::Error {
    using T = typename decltype(tag)::type;
    switch (d.op) {
      case ScanOp::Sum: return f(tag, SumScan<T>{});
      case ScanOp::Prod: return f(tag, ProdScan<T>{});
      case ScanOp::Max: return f(tag, ExtremeScan<T, true>{});
      case ScanOp::Min: return f(tag, ExtremeScan<T, false>{});
      case ScanOp::LogSumExp:
        if constexpr (isFloating<T>) return f(tag, LogSumExpScan<T>{});
        break;
    }
    return rt::Error::InvalidValue;
  });
}

// The chunk passes of a scan, task t over its chunk. Pass 1 (kWrite false, split scans only):
// the chunk's own state into carry[t] (the last chunk of a line is not needed). The last pass
// (kWrite, the only one when a task has a whole line): rescans the chunk from its carry (none
// when carry is null) and writes.
template <class T, class S, bool kWrite>
struct ScanChunkOp {
  ScanDesc d;
  S s;
  ScanPlan p;
  typename S::acc_t* carry;
  int64_t elementsPerIndex() const { return p.chunk; }
  ACCEL_HD bool operator()(int64_t t) const {
    const ScanTask k = scanTask(p, d.n, d.inner, t);
    if (!kWrite && k.which == p.chunks - 1) return true;
    const T* in = reinterpret_cast<const T*>(d.in) + k.first;
    T* out = reinterpret_cast<T*>(d.out) + k.first;
    int64_t* idx = d.indices ? d.indices + k.first : nullptr;
    typename S::acc_t a = kWrite && carry ? carry[t] : s.identity();
    for (int64_t j = k.begin; j < k.end; ++j) {
      a = s.step(a, in[j * d.inner], j);
      if constexpr (kWrite) s.store(a, out, idx, j * d.inner);
    }
    if constexpr (!kWrite) carry[t] = a;
    return true;
  }
};

// The plans of `d` with the driver's numbers (Exec::scanGeometry).
template <class Exec>
ScanPlan scanPlanOf(const ScanDesc& d, rt::Stream stream) {
  return planScan(d.outer, d.n, d.inner, Exec::scanGeometry(stream));
}
template <class Exec>
CarryPlan scanCarryPlanOf(const ScanDesc& d, const ScanPlan& p, rt::Stream stream) {
  return planCarries(d.outer * d.inner, p.chunks, Exec::scanGeometry(stream).fan_in);
}

template <class Exec>
int64_t scanWorkspaceBytes(const ScanDesc& d, rt::Stream stream) {
  if (validateScan(d) != rt::Error::Success) return 0;
  const ScanPlan p = scanPlanOf<Exec>(d, stream);
  if (p.chunks == 1) return 0;
  int64_t bytes = 0;
  (void)dispatchScanner(d, [&](auto, auto s) {
    bytes = scanCarryPlanOf<Exec>(d, p, stream).states *
            static_cast<int64_t>(sizeof(typename decltype(s)::acc_t));
    return rt::Error::Success;
  });
  return bytes;
}

template <class Exec>
rt::Error launchScan(const ScanDesc& d, rt::Stream stream) {
  if (rt::Error e = validateScan(d); e != rt::Error::Success) return e;
  if (d.outer * d.n * d.inner == 0) return rt::Error::Success;
  ScanPlan p = scanPlanOf<Exec>(d, stream);
  // A caller that gave no workspace gets a task per line: right, only slower.
  if (d.workspace == nullptr) p = planScan(d.outer, d.n, d.inner, {1, 1, d.n, 2});
  return dispatchScanner(d, [&](auto tag, auto s) -> rt::Error {
    using T = typename decltype(tag)::type;
    using S = decltype(s);
    auto* carry = p.chunks > 1 ? reinterpret_cast<typename S::acc_t*>(d.workspace) : nullptr;
    if (carry) {
      if (rt::Error e =
              Exec::forEach(p.tasks, false, ScanChunkOp<T, S, false>{d, s, p, carry}, stream);
          e != rt::Error::Success)
        return e;
      if (rt::Error e = scanCarries<Exec>(s, carry, d.outer, d.inner,
                                          scanCarryPlanOf<Exec>(d, p, stream), stream);
          e != rt::Error::Success)
        return e;
    }
    return Exec::forEach(p.tasks, false, ScanChunkOp<T, S, true>{d, s, p, carry}, stream);
  });
}

// --- nll_loss, written once: the same sums on both drivers -----------------------------------

// nll_loss of sample i: its weight (0 when ignored; a bad target is recorded and counts 0).
template <class T>
ACCEL_HD inline OpMath<T> nllWeight(const NllLossDesc& d, int64_t i) {
  using A = OpMath<T>;
  const int64_t t = d.target[i];
  if (t == d.ignore_index) return A(0);
  if (t < 0 || t >= d.c) {
    recordDeviceError(d.error, rt::DeviceErrorKind::TargetOutOfBounds, t, d.c);
    return A(0);
  }
  return d.weight ? castTo<A>(reinterpret_cast<const T*>(d.weight)[t]) : A(1);
}

// -weight * input[i, target[i]] (0 for an ignored or bad target).
template <class T>
ACCEL_HD inline OpMath<T> nllTerm(const NllLossDesc& d, int64_t i, OpMath<T> w) {
  if (w == OpMath<T>(0)) return OpMath<T>(0);
  return -w * castTo<OpMath<T>>(reinterpret_cast<const T*>(d.input)[i * d.c + d.target[i]]);
}

// Reduction None: out[i] is sample i's term.
template <class T>
struct NllSampleOp {
  NllLossDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    reinterpret_cast<T*>(d.output)[i] = castTo<T>(nllTerm<T>(d, i, nllWeight<T>(d, i)));
    return true;
  }
};

// Mean / Sum, pass 1: chunk k's total and weight, added in sample order.
template <class T>
struct NllChunkOp {
  NllLossDesc d;
  ACCEL_HD bool operator()(int64_t k) const {
    using A = OpMath<T>;
    A total = A(0), weight = A(0);
    const int64_t end = (k + 1) * kNllChunk < d.n ? (k + 1) * kNllChunk : d.n;
    for (int64_t i = k * kNllChunk; i < end; ++i) {
      const A w = nllWeight<T>(d, i);
      total += nllTerm<T>(d, i, w);
      weight += w;
    }
    A* partial = reinterpret_cast<A*>(d.scratch);
    partial[2 * k] = total;
    partial[2 * k + 1] = weight;
    return true;
  }
};

// Pass 2 (one task): the chunks' partials, merged pairwise in index order.
template <class T>
struct NllCombineOp {
  NllLossDesc d;
  ACCEL_HD bool operator()(int64_t) const {
    using A = OpMath<T>;
    A* partial = reinterpret_cast<A*>(d.scratch);
    const int64_t chunks = nllChunks(d.n);
    for (int64_t width = 1; width < chunks; width *= 2) {
      for (int64_t k = 0; k + width < chunks; k += 2 * width) {
        partial[2 * k] += partial[2 * (k + width)];
        partial[2 * k + 1] += partial[2 * (k + width) + 1];
      }
    }
    const A total = chunks ? partial[0] : A(0), weight = chunks ? partial[1] : A(0);
    reinterpret_cast<T*>(d.output)[0] =
        castTo<T>(d.reduction == LossReduction::Mean ? total / weight : total);
    *reinterpret_cast<T*>(d.total_weight) = castTo<T>(weight);
    return true;
  }
};

// Backward, one task per element of grad_input [n, c]: -weight * scale at the target, 0
// elsewhere; `scale` is the sample's grad_output (None) or grad_output / total_weight (Mean).
template <class T>
struct NllBackwardOp {
  NllLossDesc d;
  ACCEL_HD bool operator()(int64_t e) const {
    using A = OpMath<T>;
    const int64_t i = e / d.c, k = e % d.c;
    T* grad = reinterpret_cast<T*>(d.grad_input);
    grad[e] = T(0);
    const int64_t t = d.target[i];
    if (t != k) {
      if (k == 0) (void)nllWeight<T>(d, i);  // records a bad target, once per sample
      return true;
    }
    const A w = nllWeight<T>(d, i);
    if (w == A(0)) return true;
    const T* g = reinterpret_cast<const T*>(d.grad_output);
    A scale = castTo<A>(d.reduction == LossReduction::None ? g[i] : g[0]);
    if (d.reduction == LossReduction::Mean)
      scale = scale / castTo<A>(*reinterpret_cast<const T*>(d.total_weight));
    grad[e] = castTo<T>(-w * scale);
    return true;
  }
};

template <class F>
rt::Error dispatchNll(const NllLossDesc& d, F&& f) {
  return dispatchDType(d.dtype, [&](auto tag) -> rt::Error {
    using T = typename std::decay_t<decltype(tag)>::type;
    if constexpr (isFloating<T>) {
      return f(TypeTag<T>{});
    } else {
      return rt::Error::NotSupported;
    }
  });
}

template <class Exec>
rt::Error launchNllForward(const NllLossDesc& d, rt::Stream stream) {
  if (d.n < 0 || d.c < 0 || d.error == nullptr) return rt::Error::InvalidValue;
  return dispatchNll(d, [&](auto tag) -> rt::Error {
    using T = typename decltype(tag)::type;
    if (d.reduction == LossReduction::None)
      return Exec::forEach(d.n, false, NllSampleOp<T>{d}, stream);
    if (d.scratch == nullptr) return rt::Error::InvalidValue;
    if (rt::Error e = Exec::forEach(nllChunks(d.n), false, NllChunkOp<T>{d}, stream);
        e != rt::Error::Success)
      return e;
    return Exec::forEach(1, false, NllCombineOp<T>{d}, stream);
  });
}

template <class Exec>
rt::Error launchNllBackward(const NllLossDesc& d, rt::Stream stream) {
  if (d.n < 0 || d.c < 0 || d.error == nullptr) return rt::Error::InvalidValue;
  return dispatchNll(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Exec::forEach(d.n * d.c, false, NllBackwardOp<T>{d}, stream);
  });
}

// A driver's table: its own reduce and workspace entries, and the scans and the NLL loss
// written once; Exec also gives the numbers of the scans' plan (scanPlanOf). (The casts let
// nvcc resolve the function templates' addresses.)
template <class Exec>
ReduceTable makeReduceTable(decltype(ReduceTable::reduce) reduce,
                            decltype(ReduceTable::workspace_bytes) workspace_bytes) {
  return ReduceTable{
      reduce,
      workspace_bytes,
      static_cast<decltype(ReduceTable::scan)>(&launchScan<Exec>),
      static_cast<decltype(ReduceTable::scan_workspace_bytes)>(&scanWorkspaceBytes<Exec>),
      static_cast<decltype(ReduceTable::nll_loss_forward)>(&launchNllForward<Exec>),
      static_cast<decltype(ReduceTable::nll_loss_backward)>(&launchNllBackward<Exec>)};
}

}  // namespace accel::kernels

// The CTC loss family: the alpha (forward) and beta (backward) recursions of CTC, one launch
// per time frame over every sample and extended-label state at once, with CPU's formulas
// (ATen/native/LossCTC.cpp): each step is a three-term log-sum-exp shifted by its max. The aten
// layer (aten/ctc_loss_ops.cpp) builds the extended labels, their masks and the gathered log
// probabilities, and turns alpha and beta into the loss and its gradient.
#pragma once

#include "kernels/dtype.h"
#include "kernels/reduce_math.h"

namespace accel::kernels {

struct CtcDesc {
  DType dtype = DType::Float;                 // Float or Double: lp, alpha, beta
  int64_t frames = 0, batch = 0, states = 0;  // T, B, S = 2 * max target length + 1
  const char* lp = nullptr;                   // [T, B, S] the log probabilities at l'
  const bool* valid = nullptr;                // [B, S] s < 2 * L_b + 1
  // Alpha: s may come from s - 2 (l'[s] != l'[s - 2], s odd); beta: s may come from s + 2.
  const bool* skip = nullptr;          // [B, S]
  const bool* starts = nullptr;        // beta: [B, S] the states a sample's last frame starts
  const int64_t* input_len = nullptr;  // beta: [B] each sample's frames
  char* alpha = nullptr;               // forward writes [B, T, S]
  char* beta = nullptr;                // backward writes [T, B, S]
};

// CPU's log(exp(x1 - m) + exp(x2 - m) + exp(x3 - m)) + m with m their max, 0 when all are -inf.
template <class T>
ACCEL_HD inline T logSumExp3(T x1, T x2, T x3) {
  T m = x1 > x2 ? x1 : x2;
  m = m > x3 ? m : x3;
  if (m == lowestOf<T>()) m = T(0);  // lowestOf: -inf
  return mlog(mexp(x1 - m) + mexp(x2 - m) + mexp(x3 - m)) + m;
}

// alpha[b][t][s] for frame t: from alpha[b][t - 1] at s, s - 1 and (when it may skip) s - 2.
template <class T>
struct CtcAlphaStepOp {
  CtcDesc d;
  int64_t t;
  ACCEL_HD bool operator()(int64_t i) const {
    const int64_t b = i / d.states, s = i % d.states;
    const T ninf = lowestOf<T>();
    const T lp = reinterpret_cast<const T*>(d.lp)[(t * d.batch + b) * d.states + s];
    T* row = reinterpret_cast<T*>(d.alpha) + (b * d.frames + t) * d.states;
    T v = ninf;
    if (d.valid[i]) {
      if (t == 0) {
        v = s < 2 ? lp : ninf;
      } else {
        const T* prev = row - d.states;
        v = logSumExp3(prev[s], s >= 1 ? prev[s - 1] : ninf, d.skip[i] ? prev[s - 2] : ninf) + lp;
      }
    }
    row[s] = v;
    return true;
  }
};

// beta[t][b][s] for frame t: a sample's last frame starts it, earlier frames come from
// beta[t + 1][b] at s, s + 1 and (when it may skip) s + 2, later frames are -inf.
template <class T>
struct CtcBetaStepOp {
  CtcDesc d;
  int64_t t;
  ACCEL_HD bool operator()(int64_t i) const {
    const int64_t b = i / d.states, s = i % d.states;
    const T ninf = lowestOf<T>();
    const T lp = reinterpret_cast<const T*>(d.lp)[(t * d.batch + b) * d.states + s];
    T* row = reinterpret_cast<T*>(d.beta) + (t * d.batch + b) * d.states;
    const int64_t last = d.input_len[b] - 1;
    T v = ninf;
    if (d.valid[i]) {
      if (t == last) {
        v = d.starts[i] ? lp : ninf;
      } else if (t < last) {
        const T* next = row + d.batch * d.states;
        v = logSumExp3(next[s], s + 1 < d.states ? next[s + 1] : ninf,
                       d.skip[i] ? next[s + 2] : ninf) +
            lp;
      }
    }
    row[s] = v;
    return true;
  }
};

struct CtcLossTable {
  rt::Error (*alpha)(const CtcDesc& d, rt::Stream stream);  // every frame, first to last
  rt::Error (*beta)(const CtcDesc& d, rt::Stream stream);   // every frame, last to first
  template <class Exec>
  static CtcLossTable make();
};
const CtcLossTable& ctcLossTable();  // the build of the driver in use

template <class Exec, bool Alpha>
rt::Error launchCtc(const CtcDesc& d, rt::Stream stream) {
  const int64_t n = d.batch * d.states;
  if (n == 0) return rt::Error::Success;
  auto frames = [&](auto tag) -> rt::Error {
    using T = typename decltype(tag)::type;
    for (int64_t k = 0; k < d.frames; ++k) {
      const int64_t t = Alpha ? k : d.frames - 1 - k;
      rt::Error e;
      if constexpr (Alpha) {
        e = Exec::forEach(n, false, CtcAlphaStepOp<T>{d, t}, stream);
      } else {
        e = Exec::forEach(n, false, CtcBetaStepOp<T>{d, t}, stream);
      }
      if (e != rt::Error::Success) return e;
    }
    return rt::Error::Success;
  };
  if (d.dtype == DType::Float) return frames(TypeTag<float>{});
  if (d.dtype == DType::Double) return frames(TypeTag<double>{});
  return rt::Error::InvalidValue;
}

template <class Exec>
CtcLossTable CtcLossTable::make() {
  // The casts let nvcc resolve each function template's address.
  using Entry = decltype(CtcLossTable::alpha);
  return {static_cast<Entry>(&launchCtc<Exec, true>), static_cast<Entry>(&launchCtc<Exec, false>)};
}

}  // namespace accel::kernels

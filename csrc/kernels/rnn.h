// The recurrent-cell family: the pointwise part of one LSTM or GRU step and its backward, the
// kernels behind aten's _thnn_fused_{lstm,gru}_cell (the gates' matrix products are BLAS calls
// the aten layer makes first). One functor call per (batch row, hidden unit) element; computed
// in OpMath (float for half/bfloat16), stored in the tensors' dtype, as torch.cuda does.
//
// The saved workspaces have the layout ATen's autograd formulas expect, so double backward
// (ATen's composite _thnn_differentiable_*_backward) and the fused backward agree:
//   LSTM [batch, 4 * hidden]: the activated gates i, f, g, o.
//   GRU  [batch, 5 * hidden]: r, z, n, hx, and the hidden gate's new part hn + b_hn.
#pragma once

#include "kernels/dtype.h"
#include "kernels/reduce_math.h"

namespace accel::kernels {

// Every tensor is contiguous and of `dtype`; biases are [gates * hidden] or both null. Gate
// tensors are [batch, gates * hidden], states [batch, hidden].
struct RnnCellDesc {
  DType dtype = DType::Float;
  int64_t batch = 0, hidden = 0;
  // Forward.
  const char* input_gates = nullptr;
  const char* hidden_gates = nullptr;
  const char* input_bias = nullptr;
  const char* hidden_bias = nullptr;
  const char* prev = nullptr;  // cx (LSTM) or hx (GRU)
  char* hy = nullptr;
  char* cy = nullptr;  // LSTM
  char* workspace = nullptr;
  // Backward: LSTM reads grad_hy and grad_cy (either may be null), prev = cx, cy and the
  // workspace, and writes grad_input_gates (the gates' gradient) and grad_prev (cx's). GRU
  // reads grad_hy and the workspace, and writes both gates' gradients and grad_prev (hx's).
  const char* grad_hy = nullptr;
  const char* grad_cy = nullptr;
  const char* saved_cy = nullptr;
  const char* saved_workspace = nullptr;
  char* grad_input_gates = nullptr;
  char* grad_hidden_gates = nullptr;  // GRU
  char* grad_prev = nullptr;
};

struct RnnTable {
  rt::Error (*lstm_cell)(const RnnCellDesc& d, rt::Stream stream);
  rt::Error (*lstm_cell_backward)(const RnnCellDesc& d, rt::Stream stream);
  rt::Error (*gru_cell)(const RnnCellDesc& d, rt::Stream stream);
  rt::Error (*gru_cell_backward)(const RnnCellDesc& d, rt::Stream stream);
  template <class Exec>
  static RnnTable make();
};

const RnnTable& rnnTable();  // the build of the driver in use

template <class A>
ACCEL_HD inline A sigmoidOf(A x) {
  return A(1) / (A(1) + mexp(-x));
}

// Element i = (row b, unit j) of a [batch, gates * hidden] tensor: gate k's value.
template <class T>
struct GateRow {
  const T* p;
  int64_t base, hidden;
  ACCEL_HD OpMath<T> operator[](int k) const { return castTo<OpMath<T>>(p[base + k * hidden]); }
};

template <class T>
ACCEL_HD inline OpMath<T> biasAt(const char* bias, int64_t j, int k, int64_t hidden) {
  return bias ? castTo<OpMath<T>>(reinterpret_cast<const T*>(bias)[j + k * hidden]) : OpMath<T>(0);
}

// The summed pre-activation of gate k (input + hidden + both biases, in CUDA's order).
template <class T>
ACCEL_HD inline OpMath<T> preActivation(const RnnCellDesc& d, int64_t i, int k, int gates) {
  const int64_t b = i / d.hidden, j = i % d.hidden;
  const int64_t at = b * gates * d.hidden + j + k * d.hidden;
  using A = OpMath<T>;
  return castTo<A>(reinterpret_cast<const T*>(d.input_gates)[at]) +
         castTo<A>(reinterpret_cast<const T*>(d.hidden_gates)[at]) +
         biasAt<T>(d.input_bias, j, k, d.hidden) + biasAt<T>(d.hidden_bias, j, k, d.hidden);
}

// cy = f * cx + i * g, hy = o * tanh(cy).
template <class T>
struct LstmCellOp {
  RnnCellDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    const A ig = sigmoidOf(preActivation<T>(d, i, 0, 4));
    const A fg = sigmoidOf(preActivation<T>(d, i, 1, 4));
    const A cg = mtanh(preActivation<T>(d, i, 2, 4));
    const A og = sigmoidOf(preActivation<T>(d, i, 3, 4));
    const A cy = fg * castTo<A>(reinterpret_cast<const T*>(d.prev)[i]) + ig * cg;
    reinterpret_cast<T*>(d.cy)[i] = castTo<T>(cy);
    reinterpret_cast<T*>(d.hy)[i] = castTo<T>(og * mtanh(cy));
    T* w = reinterpret_cast<T*>(d.workspace) + (i / d.hidden) * 4 * d.hidden + i % d.hidden;
    w[0] = castTo<T>(ig);
    w[d.hidden] = castTo<T>(fg);
    w[2 * d.hidden] = castTo<T>(cg);
    w[3 * d.hidden] = castTo<T>(og);
    return true;
  }
};

// From the saved gates: d cy = go * o * (1 - tanh(cy)^2) + gcy, then each gate's gradient
// through its activation; cx's gradient is d cy * f.
template <class T>
struct LstmCellBackwardOp {
  RnnCellDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    const int64_t base = (i / d.hidden) * 4 * d.hidden + i % d.hidden;
    const GateRow<T> w{reinterpret_cast<const T*>(d.saved_workspace), base, d.hidden};
    const A ig = w[0], fg = w[1], cg = w[2], og = w[3];
    const A go = d.grad_hy ? castTo<A>(reinterpret_cast<const T*>(d.grad_hy)[i]) : A(0);
    const A gc = d.grad_cy ? castTo<A>(reinterpret_cast<const T*>(d.grad_cy)[i]) : A(0);
    const A tc = mtanh(castTo<A>(reinterpret_cast<const T*>(d.saved_cy)[i]));
    const A gcy = go * og * (A(1) - tc * tc) + gc;
    const A cx = castTo<A>(reinterpret_cast<const T*>(d.prev)[i]);
    T* g = reinterpret_cast<T*>(d.grad_input_gates) + base;
    g[0] = castTo<T>(gcy * cg * (A(1) - ig) * ig);
    g[d.hidden] = castTo<T>(gcy * cx * (A(1) - fg) * fg);
    g[2 * d.hidden] = castTo<T>(gcy * ig * (A(1) - cg * cg));
    g[3 * d.hidden] = castTo<T>(go * tc * (A(1) - og) * og);
    reinterpret_cast<T*>(d.grad_prev)[i] = castTo<T>(gcy * fg);
    return true;
  }
};

// r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = tanh(in + r * (hn + b_hn)),
// hy = n + z * (hx - n).
template <class T>
struct GruCellOp {
  RnnCellDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    const int64_t b = i / d.hidden, j = i % d.hidden;
    const int64_t at = b * 3 * d.hidden + j;
    const A rg = sigmoidOf(preActivation<T>(d, i, 0, 3));
    const A zg = sigmoidOf(preActivation<T>(d, i, 1, 3));
    const A hn = castTo<A>(reinterpret_cast<const T*>(d.hidden_gates)[at + 2 * d.hidden]) +
                 biasAt<T>(d.hidden_bias, j, 2, d.hidden);
    const A ng = mtanh(castTo<A>(reinterpret_cast<const T*>(d.input_gates)[at + 2 * d.hidden]) +
                       biasAt<T>(d.input_bias, j, 2, d.hidden) + rg * hn);
    const T hx = reinterpret_cast<const T*>(d.prev)[i];
    reinterpret_cast<T*>(d.hy)[i] = castTo<T>(ng + zg * (castTo<A>(hx) - ng));
    T* w = reinterpret_cast<T*>(d.workspace) + b * 5 * d.hidden + j;
    w[0] = castTo<T>(rg);
    w[d.hidden] = castTo<T>(zg);
    w[2 * d.hidden] = castTo<T>(ng);
    w[3 * d.hidden] = hx;
    w[4 * d.hidden] = castTo<T>(hn);
    return true;
  }
};

template <class T>
struct GruCellBackwardOp {
  RnnCellDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    const int64_t b = i / d.hidden, j = i % d.hidden;
    const GateRow<T> w{reinterpret_cast<const T*>(d.saved_workspace), b * 5 * d.hidden + j,
                       d.hidden};
    const A rg = w[0], zg = w[1], ng = w[2], hx = w[3], hn = w[4];
    const A go = castTo<A>(reinterpret_cast<const T*>(d.grad_hy)[i]);
    const A gz = go * (hx - ng) * (A(1) - zg) * zg;
    const A gn = go * (A(1) - zg) * (A(1) - ng * ng);
    const A gr = gn * hn * (A(1) - rg) * rg;
    const int64_t at = b * 3 * d.hidden + j;
    T* gi = reinterpret_cast<T*>(d.grad_input_gates) + at;
    T* gh = reinterpret_cast<T*>(d.grad_hidden_gates) + at;
    gi[0] = gh[0] = castTo<T>(gr);
    gi[d.hidden] = gh[d.hidden] = castTo<T>(gz);
    gi[2 * d.hidden] = castTo<T>(gn);
    gh[2 * d.hidden] = castTo<T>(gn * rg);
    reinterpret_cast<T*>(d.grad_prev)[i] = castTo<T>(go * zg);
    return true;
  }
};

// Runs Op<T> over the batch * hidden elements, for the floating dtypes (the aten layer
// refuses the others first).
template <class Exec, template <class> class Op>
rt::Error launchCell(const RnnCellDesc& d, rt::Stream stream) {
  if (d.batch < 0 || d.hidden < 0 || !isSupported(d.dtype)) return rt::Error::InvalidValue;
  if (d.batch == 0 || d.hidden == 0) return rt::Error::Success;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (isFloating<T>) {
      return Exec::forEach(d.batch * d.hidden, false, Op<T>{d}, stream);
    } else {
      return rt::Error::InvalidValue;
    }
  });
}

template <class Exec>
RnnTable RnnTable::make() {
  // The casts let nvcc resolve each function template's address.
  using Entry = decltype(RnnTable::lstm_cell);
  return {static_cast<Entry>(&launchCell<Exec, LstmCellOp>),
          static_cast<Entry>(&launchCell<Exec, LstmCellBackwardOp>),
          static_cast<Entry>(&launchCell<Exec, GruCellOp>),
          static_cast<Entry>(&launchCell<Exec, GruCellBackwardOp>)};
}

}  // namespace accel::kernels

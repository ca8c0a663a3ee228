// The linear algebra family: the triangular solve of linalg.solve_triangular, the LU
// factorization with partial pivoting, the row exchanges that apply its pivots, the Cholesky
// factorization, and Householder reflectors (QR). The aten layer (aten/linalg_ops.cpp) reduces
// every form to these on a flattened batch with any element strides (a transpose is swapped
// strides), and builds the solves, inverses and determinants from them.
//
// The factorizations are right-looking, one column k per step: a launch with one index per
// matrix takes the step's pivot and scales the column below it, a second one updates the rest
// of the panel with one index per element. A panel is a range of columns; the aten layer
// (aten/linalg_factor.cpp) updates the matrix right of it with a GEMM. A step's launches are
// ordered on the stream, so a factorization is 2 * n launches however large the batch.
#pragma once

#include "kernels/dtype.h"
#include "kernels/reduce_math.h"

namespace accel::kernels {

struct TriangularSolveDesc {
  DType dtype = DType::Float;                 // Float or Double: A and X
  int64_t batch = 0, n = 0;                   // batch systems of n unknowns
  int64_t cols = 0;                           // right-hand sides per system
  const char* a = nullptr;                    // [batch, n, n]
  int64_t a_batch = 0, a_row = 0, a_col = 0;  // element strides
  char* x = nullptr;                          // [batch, n, cols]: B on entry, X on return
  int64_t x_batch = 0, x_row = 0, x_col = 0;
  bool upper = false;  // A's triangle; the other one is never read
  bool unit = false;   // A's diagonal taken as ones (never read)
};

// One right-hand side of one system by substitution, from the first row (lower) or the last
// (upper). Each entry subtracts the solved ones in the order they were solved, as reference
// BLAS's trsm does.
template <class T>
struct TriangularSolveOp {
  TriangularSolveDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    const int64_t b = i / d.cols, j = i % d.cols;
    const T* a = reinterpret_cast<const T*>(d.a) + b * d.a_batch;
    T* x = reinterpret_cast<T*>(d.x) + b * d.x_batch + j * d.x_col;
    for (int64_t step = 0; step < d.n; ++step) {
      const int64_t r = d.upper ? d.n - 1 - step : step;
      const T* row = a + r * d.a_row;
      T s = x[r * d.x_row];
      for (int64_t k = 0; k < step; ++k) {
        const int64_t c = d.upper ? d.n - 1 - k : k;
        s -= row[c * d.a_col] * x[c * d.x_row];
      }
      if (!d.unit) s /= row[r * d.a_col];
      x[r * d.x_row] = s;
    }
    return true;
  }
  // The host hands a thread about a grain of multiply-adds, not a grain of columns.
  int64_t elementsPerIndex() const { return d.n * (d.n + 1) / 2; }
};

// A batch of m x n matrices factored in place as P A = L U (L unit lower, its multipliers below
// the diagonal; U on and above it), with LAPACK's getrf conventions: pivots[k] is the 1-based row
// that row k was exchanged with at step k, info the 1-based column of the first zero pivot (0:
// none). The aten layer zeroes info first.
struct LuDesc {
  DType dtype = DType::Float;  // Float or Double
  int64_t batch = 0, m = 0, n = 0;
  char* a = nullptr;  // [batch, m, n], factored in place
  int64_t a_batch = 0, a_row = 0, a_col = 0;
  int32_t* pivots = nullptr;  // [batch, min(m, n)], contiguous
  int32_t* info = nullptr;    // [batch]
  bool pivot = true;          // false: no row exchanges (pivots[k] = k + 1)
  // The panel: the steps run for k in [panel_begin, panel_end), each exchanging rows and
  // updating columns inside the panel only (the aten layer applies the panel's row exchanges to
  // the other columns afterwards, a column at a time, as LAPACK's laswp does).
  int64_t panel_begin = 0, panel_end = 0;
  int64_t k = 0;  // the step's column (set by the launch)

  ACCEL_HD int64_t steps() const { return m < n ? m : n; }
};

template <class T>
ACCEL_HD T& luEntry(const LuDesc& d, int64_t b, int64_t i, int64_t j) {
  return reinterpret_cast<T*>(d.a)[b * d.a_batch + i * d.a_row + j * d.a_col];
}

// Step k of one matrix: the pivot is the first largest |a_ik|, i >= k (BLAS's idamax); its row
// is exchanged with row k across the panel and the column below is divided by it. A zero pivot
// (a column of zeros below the diagonal) is recorded and leaves the column as it is.
template <class T>
struct LuPivotOp {
  LuDesc d;
  ACCEL_HD bool operator()(int64_t b) const {
    const int64_t k = d.k;
    int64_t p = k;
    if (d.pivot) {
      T best = mabs(luEntry<T>(d, b, k, k));
      for (int64_t i = k + 1; i < d.m; ++i) {
        const T v = mabs(luEntry<T>(d, b, i, k));
        if (v > best) {
          best = v;
          p = i;
        }
      }
    }
    d.pivots[b * d.steps() + k] = static_cast<int32_t>(p + 1);
    const T pivot = luEntry<T>(d, b, p, k);
    if (pivot == T(0)) {
      if (d.info[b] == 0) d.info[b] = static_cast<int32_t>(k + 1);
      return true;
    }
    if (p != k) {
      for (int64_t j = d.panel_begin; j < d.panel_end; ++j) {
        const T t = luEntry<T>(d, b, k, j);
        luEntry<T>(d, b, k, j) = luEntry<T>(d, b, p, j);
        luEntry<T>(d, b, p, j) = t;
      }
    }
    for (int64_t i = k + 1; i < d.m; ++i) luEntry<T>(d, b, i, k) /= pivot;
    return true;
  }
  int64_t elementsPerIndex() const { return d.m + d.panel_end - d.panel_begin; }
};

// Rows per index of a step's update: a run down a column (contiguous in the column-major LU)
// per index, many of them for CUDA's threads.
constexpr int64_t kStepRows = 64;
ACCEL_HD inline int64_t stepRowChunks(int64_t rows) { return (rows + kStepRows - 1) / kStepRows; }

// What one index of step k's update covers: matrix b, column j (k < j < panel_end) and the
// rows [first, last) of a run of kStepRows rows below k (rows: the matrix's row count).
struct StepRun {
  int64_t b, j, first, last;
  ACCEL_HD StepRun(const LuDesc& d, int64_t rows, int64_t idx) {
    const int64_t chunks = stepRowChunks(rows - d.k - 1), cols = d.panel_end - d.k - 1;
    first = d.k + 1 + idx % chunks * kStepRows;
    last = first + kStepRows < rows ? first + kStepRows : rows;
    idx /= chunks;
    j = d.k + 1 + idx % cols;
    b = idx / cols;
  }
};

// Step k's update of the panel, one index per StepRun: a_ij -= l_ik u_kj.
template <class T>
struct LuUpdateOp {
  LuDesc d;
  ACCEL_HD bool operator()(int64_t idx) const {
    const StepRun r(d, d.m, idx);
    const T u = luEntry<T>(d, r.b, d.k, r.j);
    for (int64_t i = r.first; i < r.last; ++i)
      luEntry<T>(d, r.b, i, r.j) -= luEntry<T>(d, r.b, i, d.k) * u;
    return true;
  }
  int64_t elementsPerIndex() const { return kStepRows; }
};

// The row exchanges of an LU's pivots applied to X [batch, n, cols] (in order: P^T X, as
// getrs does before its solves; in reverse order: P X, which on the identity is lu_unpack's P).
// One index per column of X.
struct RowSwapDesc {
  DType dtype = DType::Float;
  int64_t batch = 0, n = 0, cols = 0;
  int64_t first = 0;                // swap s exchanges row first + s with row pivots[s] - 1
  int64_t swaps = 0;                // swaps per matrix: first + swaps <= n
  const int32_t* pivots = nullptr;  // [batch, pivot_stride], 1-based
  int64_t pivot_stride = 0;
  char* x = nullptr;
  int64_t x_batch = 0, x_row = 0, x_col = 0;
  bool reverse = false;
};

template <class T>
struct RowSwapOp {
  RowSwapDesc d;
  // false for a pivot outside [1, n]: the host driver reports it instead of writing wild.
  ACCEL_HD bool operator()(int64_t i) const {
    const int64_t b = i / d.cols, j = i % d.cols;
    const int32_t* piv = d.pivots + b * d.pivot_stride;
    T* x = reinterpret_cast<T*>(d.x) + b * d.x_batch + j * d.x_col;
    for (int64_t s = 0; s < d.swaps; ++s) {
      const int64_t q = d.reverse ? d.swaps - 1 - s : s, r = d.first + q;
      const int64_t p = piv[q] - 1;
      if (p < 0 || p >= d.n) return false;
      if (p != r) {
        const T t = x[r * d.x_row];
        x[r * d.x_row] = x[p * d.x_row];
        x[p * d.x_row] = t;
      }
    }
    return true;
  }
  int64_t elementsPerIndex() const { return d.swaps; }
};

// A batch of n x n symmetric positive-definite matrices factored in place as A = L L^T from
// their lower triangle (the upper one is never read or written), with LAPACK's potrf
// conventions: info is the 1-based order of the first leading minor that is not positive
// definite, where that matrix's factorization stops. LuDesc's fields, m == n, no pivots.
template <class T>
struct CholeskyPivotOp {
  LuDesc d;
  ACCEL_HD bool operator()(int64_t b) const {
    if (d.info[b] != 0) return true;
    const int64_t k = d.k;
    const T diag = luEntry<T>(d, b, k, k);
    if (!(diag > T(0))) {  // NaN too
      d.info[b] = static_cast<int32_t>(k + 1);
      return true;
    }
    const T l = msqrt(diag);
    luEntry<T>(d, b, k, k) = l;
    for (int64_t i = k + 1; i < d.n; ++i) luEntry<T>(d, b, i, k) /= l;
    return true;
  }
  int64_t elementsPerIndex() const { return d.n; }
};

// Step k's update of the panel's lower triangle, one index per StepRun: a_ij -= l_ik l_jk for
// i >= j.
template <class T>
struct CholeskyUpdateOp {
  LuDesc d;
  ACCEL_HD bool operator()(int64_t idx) const {
    const StepRun r(d, d.n, idx);
    if (d.info[r.b] != 0) return true;
    const T l = luEntry<T>(d, r.b, r.j, d.k);
    for (int64_t i = r.first > r.j ? r.first : r.j; i < r.last; ++i)
      luEntry<T>(d, r.b, i, r.j) -= luEntry<T>(d, r.b, i, d.k) * l;
    return true;
  }
  int64_t elementsPerIndex() const { return kStepRows; }
};

// Householder reflectors H_k = I - tau_k v_k v_k^T with LAPACK's geqrf conventions: v_k is 1 at
// row k, zero above it, and stored below the diagonal of column k of `a`; R is on and above
// the diagonal. A QR factorization computes each reflector from its column (ReflectorOp, one
// index per matrix) then applies it to the columns right of it (ApplyReflectorOp); products
// with Q apply the stored reflectors to another matrix x, one reflector per launch.
struct HouseholderDesc {
  DType dtype = DType::Float;  // Float or Double
  int64_t batch = 0, m = 0;    // reflectors act on m rows
  char* a = nullptr;           // [batch, m, *]: column k holds v_k below the diagonal
  int64_t a_batch = 0, a_row = 0, a_col = 0;
  char* tau = nullptr;  // [batch, tau_batch], contiguous
  int64_t tau_batch = 0;
  char* x = nullptr;  // [batch, m, *]: the matrix a reflector is applied to
  int64_t x_batch = 0, x_row = 0, x_col = 0;
  int64_t k = 0;                       // the reflector
  int64_t col_begin = 0, col_end = 0;  // x's columns it is applied to

  template <class T>
  ACCEL_HD T& av(int64_t b, int64_t i) const {  // v_k's entry at row i (i > k)
    return reinterpret_cast<T*>(a)[b * a_batch + i * a_row + k * a_col];
  }
  template <class T>
  ACCEL_HD T& xv(int64_t b, int64_t i, int64_t j) const {
    return reinterpret_cast<T*>(x)[b * x_batch + i * x_row + j * x_col];
  }
};

// Reflector k of one matrix from column k of a (LAPACK's dlarfg): beta = -sign(alpha) |x|,
// tau = (beta - alpha) / beta, v = x[k+1:] / (alpha - beta), and beta replaces alpha. A column
// already zero below the diagonal gets tau = 0 (H = I).
template <class T>
struct ReflectorOp {
  HouseholderDesc d;
  ACCEL_HD bool operator()(int64_t b) const {
    T* tau = reinterpret_cast<T*>(d.tau) + b * d.tau_batch + d.k;
    T& alpha = d.av<T>(b, d.k);
    double norm2 = 0;  // in double: a float32 Q is then as orthogonal as LAPACK's
    for (int64_t i = d.k + 1; i < d.m; ++i) {
      const double v = d.av<T>(b, i);
      norm2 += v * v;
    }
    if (norm2 == 0) {
      *tau = T(0);
      return true;
    }
    const double a = alpha, norm = sqrt(a * a + norm2);
    const double beta = a >= 0 ? -norm : norm;
    *tau = static_cast<T>((beta - a) / beta);
    const double scale = 1 / (a - beta);
    for (int64_t i = d.k + 1; i < d.m; ++i) d.av<T>(b, i) = static_cast<T>(d.av<T>(b, i) * scale);
    alpha = static_cast<T>(beta);
    return true;
  }
  int64_t elementsPerIndex() const { return 2 * (d.m - d.k); }
};

// H_k applied to one column j of x, one index per (b, j): w = tau v^T x_j, x_j -= w v.
template <class T>
struct ApplyReflectorOp {
  HouseholderDesc d;
  ACCEL_HD bool operator()(int64_t idx) const {
    const int64_t cols = d.col_end - d.col_begin;
    const int64_t j = d.col_begin + idx % cols, b = idx / cols;
    const T tau = reinterpret_cast<const T*>(d.tau)[b * d.tau_batch + d.k];
    if (tau == T(0)) return true;
    double dot = d.xv<T>(b, d.k, j);  // in double, as the reflector's norm
    for (int64_t i = d.k + 1; i < d.m; ++i)
      dot += static_cast<double>(d.av<T>(b, i)) * d.xv<T>(b, i, j);
    const T w = static_cast<T>(dot * tau);
    d.xv<T>(b, d.k, j) -= w;
    for (int64_t i = d.k + 1; i < d.m; ++i) d.xv<T>(b, i, j) -= w * d.av<T>(b, i);
    return true;
  }
  int64_t elementsPerIndex() const { return 2 * (d.m - d.k); }
};

// The triangular factor T of a block of reflectors (LAPACK's larft, forward, columnwise):
// H_0 H_1 ... H_{nb-1} = I - V T V^T, from G = V^T V and tau. One index per matrix:
// T[:i, i] = -tau_i T[:i, :i] G[:i, i], T[i, i] = tau_i. G and T are contiguous [batch, nb, nb],
// T zero below the diagonal on entry.
struct TriangularFactorDesc {
  DType dtype = DType::Float;
  int64_t batch = 0, nb = 0;
  const char* g = nullptr;
  char* t = nullptr;
  const char* tau = nullptr;  // the block's first tau; matrices tau_batch apart
  int64_t tau_batch = 0;
};

template <class T>
struct TriangularFactorOp {
  TriangularFactorDesc d;
  ACCEL_HD bool operator()(int64_t b) const {
    const int64_t nb = d.nb;
    const T* g = reinterpret_cast<const T*>(d.g) + b * nb * nb;
    T* t = reinterpret_cast<T*>(d.t) + b * nb * nb;
    const T* tau = reinterpret_cast<const T*>(d.tau) + b * d.tau_batch;
    for (int64_t i = 0; i < nb; ++i) {
      for (int64_t r = 0; r < i; ++r) t[r * nb + i] = -tau[i] * g[r * nb + i];
      // Times the upper triangle T[:i, :i], top row first: row r reads rows >= r of the column.
      for (int64_t r = 0; r < i; ++r) {
        T sum = T(0);
        for (int64_t c = r; c < i; ++c) sum += t[r * nb + c] * t[c * nb + i];
        t[r * nb + i] = sum;
      }
      t[i * nb + i] = tau[i];
    }
    return true;
  }
  int64_t elementsPerIndex() const { return d.nb * d.nb * d.nb / 6 + 1; }
};

struct LinalgTable {
  rt::Error (*solveTriangular)(const TriangularSolveDesc& d, rt::Stream stream);
  rt::Error (*luFactor)(const LuDesc& d, rt::Stream stream);
  rt::Error (*rowSwaps)(const RowSwapDesc& d, rt::Stream stream);
  rt::Error (*cholesky)(const LuDesc& d, rt::Stream stream);
  // Reflector d.k from column d.k of a (x == a: the QR step), or H_k applied to x's columns.
  rt::Error (*reflector)(const HouseholderDesc& d, rt::Stream stream);
  rt::Error (*applyReflector)(const HouseholderDesc& d, rt::Stream stream);
  rt::Error (*triangularFactor)(const TriangularFactorDesc& d, rt::Stream stream);
  template <class Exec>
  static LinalgTable make();
};
const LinalgTable& linalgTable();  // the build of the driver in use

template <class Exec>
rt::Error launchTriangularSolve(const TriangularSolveDesc& d, rt::Stream stream) {
  const int64_t n = d.batch * d.cols;
  if (n == 0 || d.n == 0) return rt::Error::Success;
  if (d.dtype == DType::Float) return Exec::forEach(n, false, TriangularSolveOp<float>{d}, stream);
  if (d.dtype == DType::Double)
    return Exec::forEach(n, false, TriangularSolveOp<double>{d}, stream);
  return rt::Error::InvalidValue;
}

// The steps of a panel of a right-looking factorization: Pivot and Update ops per column, in
// stream order.
template <class Exec, template <class> class Pivot, template <class> class Update>
rt::Error launchSteps(LuDesc d, int64_t rows, rt::Stream stream) {
  auto steps = [&](auto tag) {
    using T = decltype(tag);
    for (d.k = d.panel_begin; d.k < d.panel_end; ++d.k) {
      const rt::Error e = Exec::forEach(d.batch, false, Pivot<T>{d}, stream);
      if (e != rt::Error::Success) return e;
      const int64_t trailing = d.batch * stepRowChunks(rows - d.k - 1) * (d.panel_end - d.k - 1);
      if (trailing == 0) continue;
      const rt::Error u = Exec::forEach(trailing, false, Update<T>{d}, stream);
      if (u != rt::Error::Success) return u;
    }
    return rt::Error::Success;
  };
  if (d.batch == 0) return rt::Error::Success;
  if (d.dtype == DType::Float) return steps(float{});
  if (d.dtype == DType::Double) return steps(double{});
  return rt::Error::InvalidValue;
}

template <class Exec>
rt::Error launchLuFactor(const LuDesc& d, rt::Stream stream) {
  return launchSteps<Exec, LuPivotOp, LuUpdateOp>(d, d.m, stream);
}

template <class Exec>
rt::Error launchCholesky(const LuDesc& d, rt::Stream stream) {
  return launchSteps<Exec, CholeskyPivotOp, CholeskyUpdateOp>(d, d.n, stream);
}

template <class Exec>
rt::Error launchRowSwaps(const RowSwapDesc& d, rt::Stream stream) {
  const int64_t n = d.batch * d.cols;
  if (n == 0 || d.swaps == 0) return rt::Error::Success;
  if (d.dtype == DType::Float) return Exec::forEach(n, false, RowSwapOp<float>{d}, stream);
  if (d.dtype == DType::Double) return Exec::forEach(n, false, RowSwapOp<double>{d}, stream);
  return rt::Error::InvalidValue;
}

template <class Exec, template <class> class Op>
rt::Error launchHouseholder(const HouseholderDesc& d, int64_t n, rt::Stream stream) {
  if (n == 0) return rt::Error::Success;
  if (d.dtype == DType::Float) return Exec::forEach(n, false, Op<float>{d}, stream);
  if (d.dtype == DType::Double) return Exec::forEach(n, false, Op<double>{d}, stream);
  return rt::Error::InvalidValue;
}

template <class Exec>
rt::Error launchReflector(const HouseholderDesc& d, rt::Stream stream) {
  return launchHouseholder<Exec, ReflectorOp>(d, d.batch, stream);
}

template <class Exec>
rt::Error launchApplyReflector(const HouseholderDesc& d, rt::Stream stream) {
  return launchHouseholder<Exec, ApplyReflectorOp>(d, d.batch * (d.col_end - d.col_begin), stream);
}

template <class Exec>
rt::Error launchTriangularFactor(const TriangularFactorDesc& d, rt::Stream stream) {
  if (d.batch == 0 || d.nb == 0) return rt::Error::Success;
  if (d.dtype == DType::Float)
    return Exec::forEach(d.batch, false, TriangularFactorOp<float>{d}, stream);
  if (d.dtype == DType::Double)
    return Exec::forEach(d.batch, false, TriangularFactorOp<double>{d}, stream);
  return rt::Error::InvalidValue;
}

template <class Exec>
LinalgTable LinalgTable::make() {
  // The casts let nvcc resolve each function template's address.
  using Solve = decltype(LinalgTable::solveTriangular);
  using Factor = decltype(LinalgTable::luFactor);
  using Swaps = decltype(LinalgTable::rowSwaps);
  using Householder = decltype(LinalgTable::reflector);
  return {static_cast<Solve>(&launchTriangularSolve<Exec>),
          static_cast<Factor>(&launchLuFactor<Exec>),
          static_cast<Swaps>(&launchRowSwaps<Exec>),
          static_cast<Factor>(&launchCholesky<Exec>),
          static_cast<Householder>(&launchReflector<Exec>),
          static_cast<Householder>(&launchApplyReflector<Exec>),
          static_cast<decltype(LinalgTable::triangularFactor)>(&launchTriangularFactor<Exec>)};
}

}  // namespace accel::kernels

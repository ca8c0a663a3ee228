// The linear algebra family: the triangular solve of linalg.solve_triangular. The aten layer
// (aten/linalg_ops.cpp) reduces every form to A X = B with a lower or upper A and X holding B on
// entry, the batch flattened, any element strides (X A = B is A^T X^T = B^T: swapped strides).
#pragma once

#include "kernels/dtype.h"

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

struct LinalgTable {
  rt::Error (*solveTriangular)(const TriangularSolveDesc& d, rt::Stream stream);
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

template <class Exec>
LinalgTable LinalgTable::make() {
  // The cast lets nvcc resolve the function template's address.
  using Entry = decltype(LinalgTable::solveTriangular);
  return {static_cast<Entry>(&launchTriangularSolve<Exec>)};
}

}  // namespace accel::kernels

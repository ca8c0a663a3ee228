// The kernel ABI's shared types: dtypes, operands, the elementwise descriptor and scalars.
// Each kernel family's header adds its ops, descriptors and table of entry points on top
// (see tables.h). The aten layer fills these plain structs; knows no torch.
#pragma once

#include <cstdint>

#include "runtime/driver.h"

namespace accel::kernels {

// The one list of dtypes the kernels support: name, C++ storage type, c10::ScalarType value.
// Every switch over DType expands it (dtype.h); the C++ types are only named, never used, here.
#define ACCEL_FORALL_DTYPES(_) \
  _(UInt8, uint8_t, 0)         \
  _(Int8, int8_t, 1)           \
  _(Int16, int16_t, 2)         \
  _(Int32, int32_t, 3)         \
  _(Int64, int64_t, 4)         \
  _(Half, c10::Half, 5)        \
  _(Float, float, 6)           \
  _(Double, double, 7)         \
  _(Bool, bool, 11)            \
  _(BFloat16, c10::BFloat16, 15)

// The complex dtypes (complex.h). Only the families that name them take them (copy and fill,
// add/sub/mul/div, eq/ne and the logical ops, the complex unary ops, where); every other
// family, and every switch that expands ACCEL_FORALL_DTYPES alone, refuses them in validate().
// ComplexHalf is storage only: it computes in Complex<float>, as CPU does.
#define ACCEL_FORALL_COMPLEX_DTYPES(_)  \
  _(ComplexHalf, Complex<c10::Half>, 8) \
  _(ComplexFloat, Complex<float>, 9)    \
  _(ComplexDouble, Complex<double>, 10)

// Values equal c10::ScalarType's, so the aten layer converts with a cast.
enum class DType : int8_t {
#define ACCEL_ENUM(NAME, TYPE, VALUE) NAME = VALUE,
  ACCEL_FORALL_DTYPES(ACCEL_ENUM) ACCEL_FORALL_COMPLEX_DTYPES(ACCEL_ENUM)
#undef ACCEL_ENUM
};

// Whether every kernel family supports the dtype whose c10::ScalarType value is `t` (the
// real dtypes).
constexpr bool isSupportedDType(int t) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) case VALUE:
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
    return true;
    default: return false;
  }
}
inline bool isSupported(DType t) { return isSupportedDType(static_cast<int>(t)); }

// Whether `t` is one of the complex dtypes, which only some families take.
constexpr bool isComplexDType(int t) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) case VALUE:
    ACCEL_FORALL_COMPLEX_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
    return true;
    default: return false;
  }
}
inline bool isComplex(DType t) { return isComplexDType(static_cast<int>(t)); }

// TensorIterator's limit.
constexpr int kMaxDims = 25;
constexpr int kMaxOperands = 4;

struct Operand {
  char* data = nullptr;
  DType dtype = DType::Float;
  int64_t strides[kMaxDims] = {};  // in bytes, innermost dimension first (TensorIterator order)
};

// An elementwise problem over `sizes` (innermost first); operand 0 is the output.
struct ElementwiseDesc {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t numel = 0;
  int noperands = 0;
  Operand op[kMaxOperands];
};

// A Python scalar or 0-dim value, already converted by the caller.
struct Scalar {
  double f = 0;
  int64_t i = 0;
  bool is_integral = false;  // true: use `i`, else `f`
  double im = 0;             // the imaginary part, read by complex kernels only
};

}  // namespace accel::kernels

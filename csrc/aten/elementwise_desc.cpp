#include "aten/elementwise_desc.h"

#include <ATen/core/Tensor.h>

#include <c10/core/Scalar.h>

namespace accel {

bool kernelSupports(c10::ScalarType t) { return kernels::isSupportedDType(static_cast<int>(t)); }

bool kernelSupportsComplex(c10::ScalarType t) {
  return kernels::isComplexDType(static_cast<int>(t));
}

bool complexFloatOrDouble(c10::ScalarType t) {
  return t == c10::kComplexFloat || t == c10::kComplexDouble;
}

bool kernelKnows(c10::ScalarType t) { return kernelSupports(t) || kernelSupportsComplex(t); }

kernels::DType toKernelDType(c10::ScalarType t) {
  TORCH_CHECK(kernelSupports(t), "accel kernels do not support dtype ", t);
  return static_cast<kernels::DType>(t);
}

kernels::ElementwiseDesc flatDesc(c10::ArrayRef<const at::Tensor*> ts) {
  kernels::ElementwiseDesc d;
  d.ndim = 1;
  d.numel = ts[0]->numel();
  d.sizes[0] = d.numel;
  d.noperands = static_cast<int>(ts.size());
  for (size_t k = 0; k < ts.size(); ++k) {
    const at::Tensor& t = *ts[k];
    // The written operand's pointer is the mutable one (it materialises a lazily cloned storage).
    d.op[k].data =
        static_cast<char*>(k == 0 ? t.data_ptr() : const_cast<void*>(t.const_data_ptr()));
    d.op[k].dtype = toKernelDType(t.scalar_type());
    d.op[k].strides[0] = (t.dim() == 1 ? t.stride(0) : 1) * t.element_size();
  }
  return d;
}

kernels::ElementwiseDesc makeDesc(const at::TensorIteratorBase& iter) {
  TORCH_INTERNAL_ASSERT(iter.ntensors() <= kernels::kMaxOperands);
  TORCH_INTERNAL_ASSERT(iter.ndim() <= kernels::kMaxDims);
  kernels::ElementwiseDesc d;
  d.ndim = iter.ndim();
  d.numel = iter.numel();
  auto shape = iter.shape();
  for (int i = 0; i < d.ndim; ++i) d.sizes[i] = shape[i];
  d.noperands = iter.ntensors();
  for (int t = 0; t < d.noperands; ++t) {
    kernels::Operand& op = d.op[t];
    op.data = static_cast<char*>(iter.data_ptr(t));
    TORCH_CHECK(kernelKnows(iter.dtype(t)), "accel kernels do not support dtype ", iter.dtype(t));
    op.dtype = static_cast<kernels::DType>(iter.dtype(t));
    auto strides = iter.strides(t);
    for (int i = 0; i < d.ndim; ++i) op.strides[i] = strides[i];
  }
  return d;
}

kernels::Scalar toKernelScalar(const c10::Scalar& s) {
  TORCH_CHECK(!s.isComplex(), "accel kernels do not support complex scalars");
  kernels::Scalar k;
  k.is_integral = s.isIntegral(/*includeBool=*/true);
  if (k.is_integral) {
    k.i = s.toLong();
    k.f = static_cast<double>(k.i);
  } else {
    k.f = s.toDouble();
  }
  return k;
}

kernels::Scalar toKernelComplexScalar(const c10::Scalar& s) {
  if (!s.isComplex()) return toKernelScalar(s);
  const c10::complex<double> z = s.toComplexDouble();
  kernels::Scalar k;
  k.f = z.real();
  k.im = z.imag();
  return k;
}

}  // namespace accel

// where, masked_fill_, clamp with tensor bounds, lerp, addcmul, addcdiv, complex and polar. Inputs
// are converted to the result dtype (the kernels take one dtype plus a bool condition or mask).
#include <ATen/ExpandUtils.h>
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/add.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/div.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/imag.h>
#include <ATen/ops/real.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/op_forms.h"
#include "kernels/binary.h"
#include "kernels/ternary.h"

namespace accel {
namespace {

using kernels::TernaryOp;

at::Tensor ternary(TernaryOp op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
                   const at::Tensor& out, c10::ScalarType t, const c10::Scalar& value = 1) {
  const c10::Device device = commonDevice({a, b, c}, "pointwise op");
  const kernels::Scalar v = toKernelScalar(value);
  const c10::ScalarType first = op == TernaryOp::Where ? c10::kBool : t;
  return runElementwise(out, t,
                        {asComputeInput(a, first, device), asComputeInput(b, t, device),
                         asComputeInput(c, t, device)},
                        [op, v](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::ternaryTable().ternary(op, d, v, s);
                        });
}

c10::ScalarType resultOf(std::initializer_list<at::Tensor> ts) {
  at::native::ResultTypeState state{};
  for (const at::Tensor& t : ts)
    if (t.defined()) state = at::native::update_result_type_state(t, state);
  return at::native::result_type(state);
}

bool nativeAll(std::initializer_list<at::Tensor> ts) {
  for (const at::Tensor& t : ts)
    if (t.defined() && !kernelSupports(t.scalar_type())) return false;
  return true;
}

bool nativeBounds(const at::Tensor& self, const c10::optional<at::Tensor>& min,
                  const c10::optional<at::Tensor>& max) {
  return nativeAll({self, min ? *min : at::Tensor(), max ? *max : at::Tensor()});
}

// where selects, so it takes complex values too.
struct Where {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b) {
    return kernelKnows(a.scalar_type()) && kernelKnows(b.scalar_type()) &&
           kernelKnows(resultOf({a, b}));
  }
  static at::Tensor compute(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b,
                            const Output& out) {
    TORCH_CHECK(cond.scalar_type() == c10::kBool,
                "where expected condition to be a boolean tensor, but got a tensor with dtype ",
                cond.scalar_type());
    return ternary(TernaryOp::Where, cond, a, b, out.tensor(), resultOf({a, b}));
  }
};

// masked_fill_ (in-place only).
// complex64 and complex128 fill their real and imaginary views.
bool complexFillable(const at::Tensor& self) {
  return complexFloatOrDouble(self.scalar_type()) && !self.is_conj();
}

struct MaskedFillScalar {
  static bool native(const at::Tensor& self, const at::Tensor& mask, const c10::Scalar& v) {
    return (kernelSupports(self.scalar_type()) && !v.isComplex()) || complexFillable(self);
  }
  static at::Tensor& compute(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& v) {
    TORCH_CHECK(mask.scalar_type() == c10::kBool,
                "masked_fill_ only supports boolean masks, but got mask with dtype ",
                mask.scalar_type());
    commonDevice({self, mask}, "masked_fill_");
    if (self.is_complex()) {
      const c10::complex<double> z = v.toComplexDouble();
      at::Tensor re = at::real(self), im = at::imag(self);
      compute(re, mask, z.real());
      compute(im, mask, z.imag());
      return self;
    }
    const kernels::Scalar value = toKernelScalar(v);
    // The mask broadcasts to self, never the other way round.
    at::Tensor m = mask.expand_as(self);
    runElementwise(self, self.scalar_type(), {m, self},
                   [value](const kernels::ElementwiseDesc& d, rt::Stream s) {
                     return kernels::ternaryTable().masked_fill(d, value, s);
                   });
    return self;
  }
};

struct MaskedFillTensor {
  static bool native(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& v) {
    return nativeAll({self, v}) ||
           (isHostScalar(v) && MaskedFillScalar::native(self, mask, v.item())) ||
           (complexFillable(self) && (kernelSupports(v.scalar_type()) || complexFillable(v)));
  }
  static at::Tensor& compute(at::Tensor& self, const at::Tensor& mask, const at::Tensor& v) {
    TORCH_CHECK(v.dim() == 0,
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
                v.dim(), " dimension(s).");
    if (isHostScalar(v)) return MaskedFillScalar::compute(self, mask, v.item());
    TORCH_CHECK(mask.scalar_type() == c10::kBool,
                "masked_fill_ only supports boolean masks, but got mask with dtype ",
                mask.scalar_type());
    if (self.is_complex()) {  // each part takes its part of the value (a device tensor here)
      at::Tensor re = at::real(self), im = at::imag(self);
      compute(re, mask, v.is_complex() ? at::real(v) : v);
      if (v.is_complex()) {
        compute(im, mask, at::imag(v));
      } else {
        MaskedFillScalar::compute(im, mask, 0);
      }
      return self;
    }
    ternary(TernaryOp::Where, mask.expand_as(self), v, self, self, self.scalar_type());
    return self;
  }
};

// --- clamp with tensor bounds ------------------------------------------------------------
at::Tensor clampTensor(const at::Tensor& self, const c10::optional<at::Tensor>& min,
                       const c10::optional<at::Tensor>& max, const at::Tensor& out) {
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  const c10::ScalarType t =
      resultOf({self, has_min ? *min : at::Tensor(), has_max ? *max : at::Tensor()});
  if (has_min && has_max) return ternary(TernaryOp::Clamp, self, *min, *max, out, t);
  // One bound: maximum/minimum, which keep NaN like clamp does.
  const at::Tensor& bound = has_min ? *min : *max;
  const c10::Device device = commonDevice({self, bound}, "clamp");
  const kernels::Scalar none{};
  const kernels::BinaryOp op = has_min ? kernels::BinaryOp::Maximum : kernels::BinaryOp::Minimum;
  return runElementwise(out, t, {asComputeInput(self, t, device), asComputeInput(bound, t, device)},
                        [op, none](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::binaryTable().binary(op, d, none, s);
                        });
}

struct ClampTensor {
  static bool native(const at::Tensor& self, const c10::optional<at::Tensor>& min,
                     const c10::optional<at::Tensor>& max) {
    return nativeBounds(self, min, max);
  }
  static at::Tensor compute(const at::Tensor& self, const c10::optional<at::Tensor>& min,
                            const c10::optional<at::Tensor>& max, const Output& out) {
    return clampTensor(self, min, max, out.tensor());
  }
};

template <bool IsMin>
struct ClampBoundTensor {
  static bool native(const at::Tensor& self, const at::Tensor& bound) {
    return nativeAll({self, bound});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& bound, const Output& out) {
    return IsMin ? clampTensor(self, bound, c10::nullopt, out.tensor())
                 : clampTensor(self, c10::nullopt, bound, out.tensor());
  }
};

// --- lerp, addcmul, addcdiv --------------------------------------------------------------
void checkLerpDTypes(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected dtype ", a.scalar_type(),
              " for `end` but got dtype ", b.scalar_type());
}

struct LerpTensor {
  static bool native(const at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
    return nativeAll({a, b, w});
  }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const at::Tensor& w,
                            const Output& out) {
    checkLerpDTypes(a, b);
    return ternary(TernaryOp::Lerp, a, b, w, out.tensor(), a.scalar_type());
  }
};

// A number weight rides in the kernel's alpha: a dense two-input loop, no broadcast operand.
struct LerpScalar {
  static bool native(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& w) {
    return nativeAll({a, b}) && !w.isComplex();
  }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& w,
                            const Output& out) {
    checkLerpDTypes(a, b);
    const c10::Device device = commonDevice({a, b}, "lerp");
    const kernels::Scalar weight = toKernelScalar(w);
    return runElementwise(
        out.tensor(), a.scalar_type(), {a, asComputeInput(b, a.scalar_type(), device)},
        [weight](const kernels::ElementwiseDesc& d, rt::Stream s) {
          return kernels::binaryTable().binary(kernels::BinaryOp::Lerp, d, weight, s);
        });
  }
};

// Complex operands (all of one complex dtype) are computed as CPU's kernel writes it,
// self + value * t1 * t2 (or value * t1 / t2), from the native complex products and sum.
bool sameComplex(std::initializer_list<at::Tensor> ts) {
  const c10::ScalarType t = ts.begin()->scalar_type();
  if (!complexFloatOrDouble(t)) return false;
  for (const at::Tensor& x : ts)
    if (x.scalar_type() != t) return false;
  return true;
}

template <TernaryOp Op>
struct Addc {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const c10::Scalar& value) {
    if (sameComplex({self, t1, t2})) return true;
    return nativeAll({self, t1, t2}) && kernelSupports(resultOf({self, t1, t2})) &&
           !value.isComplex();
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                            const c10::Scalar& value, const Output& out) {
    if (self.is_complex()) {
      commonDevice({self, t1, t2}, Op == TernaryOp::Addcmul ? "addcmul" : "addcdiv");
      const at::Tensor scaled = at::mul(t1, value);
      const at::Tensor term = Op == TernaryOp::Addcmul ? at::mul(scaled, t2) : at::div(scaled, t2);
      at::Tensor result = out.allocate(at::infer_size(self.sizes(), term.sizes()), self.options(),
                                       Output::DTypeRule::Castable);
      at::add_out(result, self, term);
      return out.finish(result);
    }
    return ternary(Op, self, t1, t2, out.tensor(), resultOf({self, t1, t2}), value);
  }
};

// complex(real, imag) and polar(abs, angle) into out: the parts (broadcast together) are
// written through out's real and imaginary views. Mismatched or non-floating parts, or an out
// of another dtype, take the fallback, which raises CPU's error. out is never a host scalar:
// a 0-dim CPU out= is refused like any other.
bool nativeParts(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out, bool half_ok) {
  const c10::ScalarType t = a.scalar_type();
  const bool floating = t == c10::kFloat || t == c10::kDouble || (half_ok && t == c10::kHalf);
  return floating && b.scalar_type() == t && out.scalar_type() == c10::toComplexType(t) &&
         !out.is_conj();
}

at::Tensor& writeParts(at::Tensor& out, const at::Tensor& re, const at::Tensor& im) {
  at::native::resize_output(out, at::infer_size(re.sizes(), im.sizes()));
  at::real(out).copy_(re);
  at::imag(out).copy_(im);
  return out;
}

struct ComplexOut {
  static bool native(const at::Tensor& re, const at::Tensor& im, at::Tensor& out) {
    return nativeParts(re, im, out, /*half_ok=*/true);
  }
  static at::Tensor& compute(const at::Tensor& re, const at::Tensor& im, at::Tensor& out) {
    checkOutDevice(out, commonDevice({re, im, out}, "complex"));
    return writeParts(out, re, im);
  }
};

struct PolarOut {
  static bool native(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
    return nativeParts(abs, angle, out, /*half_ok=*/false);
  }
  static at::Tensor& compute(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
    checkOutDevice(out, commonDevice({abs, angle, out}, "polar"));
    return writeParts(out, abs * at::cos(angle), abs * at::sin(angle));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<ComplexOut>(m, "complex.out");
  registerNative<PolarOut>(m, "polar.out");
  registerForms<Where>(m, "where.self", nullptr, "where.self_out");
  registerNative<MaskedFillScalar>(m, "masked_fill_.Scalar");
  registerNative<MaskedFillTensor>(m, "masked_fill_.Tensor");
  registerForms<ClampTensor>(m, "clamp.Tensor", "clamp_.Tensor", "clamp.Tensor_out");
  registerForms<ClampBoundTensor<true>>(m, "clamp_min.Tensor", "clamp_min_.Tensor",
                                        "clamp_min.Tensor_out");
  registerForms<ClampBoundTensor<false>>(m, "clamp_max.Tensor", "clamp_max_.Tensor",
                                         "clamp_max.Tensor_out");
  registerForms<LerpTensor>(m, "lerp.Tensor", "lerp_.Tensor", "lerp.Tensor_out");
  registerForms<LerpScalar>(m, "lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out");
  registerForms<Addc<TernaryOp::Addcmul>>(m, "addcmul", "addcmul_", "addcmul.out");
  registerForms<Addc<TernaryOp::Addcdiv>>(m, "addcdiv", "addcdiv_", "addcdiv.out");
}

}  // namespace
}  // namespace accel

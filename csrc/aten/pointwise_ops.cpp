// where, masked_fill_, clamp with tensor bounds, lerp, addcmul and addcdiv. Inputs are
// converted to the result dtype (the kernels take one dtype plus a bool condition or mask).
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
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

// --- where -------------------------------------------------------------------------------
at::Tensor& where_out(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b,
                      at::Tensor& out) {
  TORCH_CHECK(cond.scalar_type() == c10::kBool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.scalar_type());
  ternary(TernaryOp::Where, cond, a, b, out, resultOf({a, b}));
  return out;
}
at::Tensor where(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(cond.scalar_type() == c10::kBool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.scalar_type());
  return ternary(TernaryOp::Where, cond, a, b, at::Tensor(), resultOf({a, b}));
}

// --- masked_fill_ ------------------------------------------------------------------------
at::Tensor& masked_fill_Scalar(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& v) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool,
              "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  commonDevice({self, mask}, "masked_fill_");
  const kernels::Scalar value = toKernelScalar(v);
  // The mask broadcasts to self, never the other way round.
  at::Tensor m = mask.expand_as(self);
  runElementwise(self, self.scalar_type(), {m, self},
                 [value](const kernels::ElementwiseDesc& d, rt::Stream s) {
                   return kernels::ternaryTable().masked_fill(d, value, s);
                 });
  return self;
}
at::Tensor& masked_fill_Tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& v) {
  TORCH_CHECK(v.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              v.dim(), " dimension(s).");
  if (isHostScalar(v)) return masked_fill_Scalar(self, mask, v.item());
  TORCH_CHECK(mask.scalar_type() == c10::kBool,
              "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  ternary(TernaryOp::Where, mask.expand_as(self), v, self, self, self.scalar_type());
  return self;
}

// --- clamp with tensor bounds ------------------------------------------------------------
at::Tensor& clampTensorInto(const at::Tensor& self, const c10::optional<at::Tensor>& min,
                            const c10::optional<at::Tensor>& max, at::Tensor& out, bool alloc) {
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  const c10::ScalarType t =
      resultOf({self, has_min ? *min : at::Tensor(), has_max ? *max : at::Tensor()});
  at::Tensor target = alloc ? at::Tensor() : out;
  at::Tensor r;
  if (has_min && has_max) {
    r = ternary(TernaryOp::Clamp, self, *min, *max, target, t);
  } else {
    // One bound: maximum/minimum, which keep NaN like clamp does.
    const at::Tensor& bound = has_min ? *min : *max;
    const c10::Device device = commonDevice({self, bound}, "clamp");
    const kernels::Scalar none{};
    const kernels::BinaryOp op = has_min ? kernels::BinaryOp::Maximum : kernels::BinaryOp::Minimum;
    r = runElementwise(target, t, {asComputeInput(self, t, device), asComputeInput(bound, t, device)},
                       [op, none](const kernels::ElementwiseDesc& d, rt::Stream s) {
                         return kernels::binaryTable().binary(op, d, none, s);
                       });
  }
  if (alloc) out = r;
  return out;
}
at::Tensor clamp_Tensor(const at::Tensor& self, const c10::optional<at::Tensor>& min,
                        const c10::optional<at::Tensor>& max) {
  at::Tensor out;
  return clampTensorInto(self, min, max, out, true);
}
at::Tensor& clamp__Tensor(at::Tensor& self, const c10::optional<at::Tensor>& min,
                          const c10::optional<at::Tensor>& max) {
  return clampTensorInto(self, min, max, self, false);
}
at::Tensor& clamp_Tensor_out(const at::Tensor& self, const c10::optional<at::Tensor>& min,
                             const c10::optional<at::Tensor>& max, at::Tensor& out) {
  return clampTensorInto(self, min, max, out, false);
}
at::Tensor clamp_min_Tensor(const at::Tensor& self, const at::Tensor& min) {
  return clamp_Tensor(self, min, c10::nullopt);
}
at::Tensor& clamp_min__Tensor(at::Tensor& self, const at::Tensor& min) {
  return clamp__Tensor(self, min, c10::nullopt);
}
at::Tensor& clamp_min_Tensor_out(const at::Tensor& self, const at::Tensor& min, at::Tensor& out) {
  return clamp_Tensor_out(self, min, c10::nullopt, out);
}
at::Tensor clamp_max_Tensor(const at::Tensor& self, const at::Tensor& max) {
  return clamp_Tensor(self, c10::nullopt, max);
}
at::Tensor& clamp_max__Tensor(at::Tensor& self, const at::Tensor& max) {
  return clamp__Tensor(self, c10::nullopt, max);
}
at::Tensor& clamp_max_Tensor_out(const at::Tensor& self, const at::Tensor& max, at::Tensor& out) {
  return clamp_Tensor_out(self, c10::nullopt, max, out);
}

// --- lerp, addcmul, addcdiv --------------------------------------------------------------

at::Tensor& lerp_Tensor_out(const at::Tensor& a, const at::Tensor& b, const at::Tensor& w,
                            at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected dtype ", a.scalar_type(),
              " for `end` but got dtype ", b.scalar_type());
  ternary(TernaryOp::Lerp, a, b, w, out, a.scalar_type());
  return out;
}
at::Tensor lerp_Tensor(const at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected dtype ", a.scalar_type(),
              " for `end` but got dtype ", b.scalar_type());
  return ternary(TernaryOp::Lerp, a, b, w, at::Tensor(), a.scalar_type());
}
at::Tensor& lerp__Tensor(at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
  return lerp_Tensor_out(a, b, w, a);
}
// A number weight rides in the kernel's alpha: a dense two-input loop, no broadcast operand.
at::Tensor lerpScalar(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& w,
                      const at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected dtype ", a.scalar_type(),
              " for `end` but got dtype ", b.scalar_type());
  const c10::Device device = commonDevice({a, b}, "lerp");
  const kernels::Scalar weight = toKernelScalar(w);
  return runElementwise(out, a.scalar_type(), {a, asComputeInput(b, a.scalar_type(), device)},
                        [weight](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::binaryTable().binary(kernels::BinaryOp::Lerp, d, weight, s);
                        });
}
at::Tensor lerp_Scalar(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& w) {
  return lerpScalar(a, b, w, at::Tensor());
}
at::Tensor& lerp__Scalar(at::Tensor& a, const at::Tensor& b, const c10::Scalar& w) {
  lerpScalar(a, b, w, a);
  return a;
}
at::Tensor& lerp_Scalar_out(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& w,
                            at::Tensor& out) {
  lerpScalar(a, b, w, out);
  return out;
}

template <TernaryOp Op>
struct Addc {
  static at::Tensor functional(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                               const c10::Scalar& value) {
    return ternary(Op, self, t1, t2, at::Tensor(), resultOf({self, t1, t2}), value);
  }
  static at::Tensor& inplace(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                             const c10::Scalar& value) {
    ternary(Op, self, t1, t2, self, resultOf({self, t1, t2}), value);
    return self;
  }
  static at::Tensor& out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                         const c10::Scalar& value, at::Tensor& out) {
    ternary(Op, self, t1, t2, out, resultOf({self, t1, t2}), value);
    return out;
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("where.self", where);
  m.impl("where.self_out", where_out);
  m.impl("masked_fill_.Scalar", masked_fill_Scalar);
  m.impl("masked_fill_.Tensor", masked_fill_Tensor);
  m.impl("clamp.Tensor", clamp_Tensor);
  m.impl("clamp_.Tensor", clamp__Tensor);
  m.impl("clamp.Tensor_out", clamp_Tensor_out);
  m.impl("clamp_min.Tensor", clamp_min_Tensor);
  m.impl("clamp_min_.Tensor", clamp_min__Tensor);
  m.impl("clamp_min.Tensor_out", clamp_min_Tensor_out);
  m.impl("clamp_max.Tensor", clamp_max_Tensor);
  m.impl("clamp_max_.Tensor", clamp_max__Tensor);
  m.impl("clamp_max.Tensor_out", clamp_max_Tensor_out);
  m.impl("lerp.Tensor", lerp_Tensor);
  m.impl("lerp_.Tensor", lerp__Tensor);
  m.impl("lerp.Tensor_out", lerp_Tensor_out);
  m.impl("lerp.Scalar", lerp_Scalar);
  m.impl("lerp_.Scalar", lerp__Scalar);
  m.impl("lerp.Scalar_out", lerp_Scalar_out);
  m.impl("addcmul", Addc<TernaryOp::Addcmul>::functional);
  m.impl("addcmul_", Addc<TernaryOp::Addcmul>::inplace);
  m.impl("addcmul.out", Addc<TernaryOp::Addcmul>::out);
  m.impl("addcdiv", Addc<TernaryOp::Addcdiv>::functional);
  m.impl("addcdiv_", Addc<TernaryOp::Addcdiv>::inplace);
  m.impl("addcdiv.out", Addc<TernaryOp::Addcdiv>::out);
}

}  // namespace
}  // namespace accel

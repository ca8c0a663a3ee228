// The _foreach_* ops torch.optim (foreach=True) and clip_grad_norm_ use. Each launches the
// native elementwise kernel once per tensor, so none reaches the CPU fallback: straight from a
// dense descriptor when the tensors allow it (below), else through the dispatcher.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <torch/library.h>

#include <array>

#include "aten/elementwise_desc.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/binary.h"
#include "kernels/ternary.h"
#include "kernels/unary.h"

namespace accel {
namespace {

using TL = at::TensorList;
using SL = at::ArrayRef<c10::Scalar>;
using kernels::BinaryOp;
using kernels::TernaryOp;

// --- The dense path ---------------------------------------------------------------------
// Through the dispatcher each tensor of a foreach op pays its op's checks, a TensorIterator and
// a launch, ~2 us: most of a small model's AdamW(foreach) step. When every tensor of the call
// is a contiguous accel tensor of one floating dtype, each the size of its partners, and the
// written one equals or misses each input, each tensor's kernel is launched here from a dense
// 1-D descriptor, with the table entry and the scalar its own op would use: the same numbers.
// Anything else takes the per-tensor path, which also raises PyTorch's errors.

// The tensors of one launch, the written one first.
template <size_t N>
using Operands = std::array<const at::Tensor*, N>;

template <size_t N>
bool dense(const Operands<N>& ts) {
  const at::Tensor& out = *ts[0];
  const c10::ScalarType t = out.scalar_type();
  if (!at::isFloatingType(t) || !kernelSupports(t)) return false;
  for (const at::Tensor* x : ts) {
    if (!x->is_privateuseone() || x->device() != out.device() || x->scalar_type() != t ||
        x->sizes() != out.sizes() || !x->is_contiguous() || x->is_conj() || x->is_neg())
      return false;
    if (x != ts[0] && at::get_overlap_status(out, *x) == at::MemOverlapStatus::Partial)
      return false;
  }
  return true;
}

// launch(i, desc, stream) for tensor i of lists of n, whose operands are operands(i); false,
// with nothing launched, when any of them misses the dense path.
template <class OperandsOf, class Launch>
bool denseEach(size_t n, const OperandsOf& operands, const Launch& launch) {
  for (size_t i = 0; i < n; ++i)
    if (!dense(operands(i))) return false;
  for (size_t i = 0; i < n; ++i) {
    const auto ts = operands(i);
    const int device = ts[0]->device().index();
    ACCEL_RT_CHECK(launch(i, flatDesc(ts), currentRuntimeStream(device)), device);
  }
  return true;
}

bool realScalars(SL s) {
  for (const c10::Scalar& v : s)
    if (v.isComplex()) return false;
  return true;
}

// self[i] op= s[i] (s of one scalar: the same for every tensor), as binary()'s by-value scalar.
bool denseScalar(BinaryOp op, TL self, SL s) {
  if (!realScalars(s)) return false;
  return denseEach(
      self.size(), [&](size_t i) { return Operands<2>{&self[i], &self[i]}; },
      [&](size_t i, const kernels::ElementwiseDesc& d, rt::Stream stream) {
        return kernels::binaryTable().binary_scalar(op, d, toKernelScalar(s[s.size() == 1 ? 0 : i]),
                                                    stream);
      });
}

// self[i] = self[i] op (alpha * other[i]) (alpha: add and sub; lerp's weight).
bool denseList(BinaryOp op, TL self, TL other, const c10::Scalar& alpha) {
  if (alpha.isComplex() || self.size() != other.size()) return false;
  return denseEach(
      self.size(), [&](size_t i) { return Operands<3>{&self[i], &self[i], &other[i]}; },
      [&](size_t, const kernels::ElementwiseDesc& d, rt::Stream stream) {
        return kernels::binaryTable().binary(op, d, toKernelScalar(alpha), stream);
      });
}

// self[i] = op(self[i], a[i], b[i]) with value s[i] (s of one scalar: the same for every tensor).
bool denseTernary(TernaryOp op, TL self, TL a, TL b, SL s) {
  if (!realScalars(s) || a.size() != self.size() || b.size() != self.size()) return false;
  return denseEach(
      self.size(), [&](size_t i) { return Operands<4>{&self[i], &self[i], &a[i], &b[i]}; },
      [&](size_t i, const kernels::ElementwiseDesc& d, rt::Stream stream) {
        return kernels::ternaryTable().ternary(op, d, toKernelScalar(s[s.size() == 1 ? 0 : i]),
                                               stream);
      });
}

// out[i] = op(self[i]), out the tensors themselves or new ones.
bool denseUnary(kernels::UnaryOp op, TL self, TL out) {
  return denseEach(
      self.size(), [&](size_t i) { return Operands<2>{&out[i], &self[i]}; },
      [&](size_t, const kernels::ElementwiseDesc& d, rt::Stream stream) {
        return kernels::unaryTable().unary(op, d, kernels::UnaryParams{}, stream);
      });
}

void checkSameLength(size_t a, size_t b) {
  TORCH_CHECK(a == b, "Tensor lists must have the same number of tensors, got ", a, " and ", b);
}

std::vector<at::Tensor> map(TL self, const std::function<at::Tensor(size_t)>& f) {
  std::vector<at::Tensor> out;
  out.reserve(self.size());
  for (size_t i = 0; i < self.size(); ++i) out.push_back(f(i));
  return out;
}

// add and sub (List takes alpha)
#define ACCEL_FOREACH_ADDSUB(OP, BINARY_OP)                                              \
  void OP##_Scalar_(TL self, const c10::Scalar& s) {                                     \
    if (denseScalar(BINARY_OP, self, s)) return;                                         \
    for (auto t : self) t.OP##_(s);                                                      \
  }                                                                                      \
  std::vector<at::Tensor> OP##_Scalar(TL self, const c10::Scalar& s) {                   \
    return map(self, [&](size_t i) { return self[i].OP(s); });                           \
  }                                                                                      \
  void OP##_List_(TL self, TL other, const c10::Scalar& alpha) {                         \
    checkSameLength(self.size(), other.size());                                          \
    if (denseList(BINARY_OP, self, other, alpha)) return;                                \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(other[i], alpha); \
  }                                                                                      \
  std::vector<at::Tensor> OP##_List(TL self, TL other, const c10::Scalar& alpha) {       \
    checkSameLength(self.size(), other.size());                                          \
    return map(self, [&](size_t i) { return self[i].OP(other[i], alpha); });             \
  }                                                                                      \
  void OP##_ScalarList_(TL self, SL s) {                                                 \
    checkSameLength(self.size(), s.size());                                              \
    if (denseScalar(BINARY_OP, self, s)) return;                                         \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(s[i]);            \
  }                                                                                      \
  std::vector<at::Tensor> OP##_ScalarList(TL self, SL s) {                               \
    checkSameLength(self.size(), s.size());                                              \
    return map(self, [&](size_t i) { return self[i].OP(s[i]); });                        \
  }
ACCEL_FOREACH_ADDSUB(add, BinaryOp::Add)
ACCEL_FOREACH_ADDSUB(sub, BinaryOp::Sub)
#undef ACCEL_FOREACH_ADDSUB
void add_Tensor_(TL self, const at::Tensor& other, const c10::Scalar& alpha) {
  for (auto t : self) t.add_(other, alpha);
}
std::vector<at::Tensor> add_Tensor(TL self, const at::Tensor& other, const c10::Scalar& alpha) {
  return map(self, [&](size_t i) { return self[i].add(other, alpha); });
}

// mul and div share the shapes of their overloads.
#define ACCEL_FOREACH_MULDIV(OP, BINARY_OP)                                       \
  void OP##_Scalar_(TL self, const c10::Scalar& s) {                              \
    if (denseScalar(BINARY_OP, self, s)) return;                                  \
    for (auto t : self) t.OP##_(s);                                               \
  }                                                                               \
  std::vector<at::Tensor> OP##_Scalar(TL self, const c10::Scalar& s) {            \
    return map(self, [&](size_t i) { return self[i].OP(s); });                    \
  }                                                                               \
  void OP##_List_(TL self, TL other) {                                            \
    checkSameLength(self.size(), other.size());                                   \
    if (denseList(BINARY_OP, self, other, 1)) return;                             \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(other[i]); \
  }                                                                               \
  std::vector<at::Tensor> OP##_List(TL self, TL other) {                          \
    checkSameLength(self.size(), other.size());                                   \
    return map(self, [&](size_t i) { return self[i].OP(other[i]); });             \
  }                                                                               \
  void OP##_ScalarList_(TL self, SL s) {                                          \
    checkSameLength(self.size(), s.size());                                       \
    if (denseScalar(BINARY_OP, self, s)) return;                                  \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(s[i]);     \
  }                                                                               \
  std::vector<at::Tensor> OP##_ScalarList(TL self, SL s) {                        \
    checkSameLength(self.size(), s.size());                                       \
    return map(self, [&](size_t i) { return self[i].OP(s[i]); });                 \
  }                                                                               \
  void OP##_Tensor_(TL self, const at::Tensor& other) {                           \
    for (auto t : self) t.OP##_(other);                                           \
  }                                                                               \
  std::vector<at::Tensor> OP##_Tensor(TL self, const at::Tensor& other) {         \
    return map(self, [&](size_t i) { return self[i].OP(other); });                \
  }
ACCEL_FOREACH_MULDIV(mul, BinaryOp::Mul)
ACCEL_FOREACH_MULDIV(div, BinaryOp::Div)
#undef ACCEL_FOREACH_MULDIV

// addcmul_ / addcdiv_
#define ACCEL_FOREACH_ADDC(OP, COMBINE, TERNARY_OP)                                          \
  void OP##_Scalar_(TL self, TL t1, TL t2, const c10::Scalar& value) {                       \
    checkSameLength(self.size(), t1.size());                                                 \
    checkSameLength(self.size(), t2.size());                                                 \
    if (denseTernary(TERNARY_OP, self, t1, t2, value)) return;                               \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(t1[i], t2[i], value); \
  }                                                                                          \
  void OP##_ScalarList_(TL self, TL t1, TL t2, SL s) {                                       \
    checkSameLength(self.size(), s.size());                                                  \
    checkSameLength(self.size(), t1.size());                                                 \
    checkSameLength(self.size(), t2.size());                                                 \
    if (denseTernary(TERNARY_OP, self, t1, t2, s)) return;                                   \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(t1[i], t2[i], s[i]);  \
  }                                                                                          \
  void OP##_Tensor_(TL self, TL t1, TL t2, const at::Tensor& s) {                            \
    TORCH_CHECK(s.dim() == 1 && s.numel() == static_cast<int64_t>(self.size()),              \
                "scalars must be a 1D tensor with one value per tensor");                    \
    for (size_t i = 0; i < self.size(); ++i)                                                 \
      at::Tensor(self[i]).add_(t1[i].COMBINE(t2[i]).mul(s[i]));                              \
  }
ACCEL_FOREACH_ADDC(addcmul, mul, TernaryOp::Addcmul)
ACCEL_FOREACH_ADDC(addcdiv, div, TernaryOp::Addcdiv)
#undef ACCEL_FOREACH_ADDC

void sqrt_(TL self) {
  if (denseUnary(kernels::UnaryOp::Sqrt, self, self)) return;
  for (auto t : self) t.sqrt_();
}
std::vector<at::Tensor> sqrt(TL self) {
  bool dense_in = true;
  for (const at::Tensor& t : self) dense_in = dense_in && dense(Operands<1>{&t});
  if (dense_in) {
    std::vector<at::Tensor> out = map(self, [&](size_t i) { return at::empty_like(self[i]); });
    if (denseUnary(kernels::UnaryOp::Sqrt, self, out)) return out;
  }
  return map(self, [&](size_t i) { return self[i].sqrt(); });
}
void neg_(TL self) {
  for (auto t : self) t.neg_();
}
std::vector<at::Tensor> neg(TL self) {
  return map(self, [&](size_t i) { return self[i].neg(); });
}

void zero_(TL self) {
  for (auto t : self) t.zero_();
}
void copy_(TL self, TL src, bool non_blocking) {
  checkSameLength(self.size(), src.size());
  for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).copy_(src[i], non_blocking);
}
// Adam(amsgrad=True, foreach=True) keeps the running maximum with this.
void maximum_List_(TL self, TL other) {
  checkSameLength(self.size(), other.size());
  for (size_t i = 0; i < self.size(); ++i) {
    at::Tensor t = self[i];
    at::maximum_out(t, t, other[i]);
  }
}

void lerp_List_(TL self, TL end, TL w) {
  checkSameLength(self.size(), end.size());
  checkSameLength(self.size(), w.size());
  for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).lerp_(end[i], w[i]);
}
void lerp_Scalar_(TL self, TL end, const c10::Scalar& w) {
  checkSameLength(self.size(), end.size());
  if (denseList(BinaryOp::Lerp, self, end, w)) return;
  for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).lerp_(end[i], w);
}
void lerp_ScalarList_(TL self, TL end, SL w) {
  checkSameLength(self.size(), end.size());
  checkSameLength(self.size(), w.size());
  for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).lerp_(end[i], w[i]);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
// Scalar, List and ScalarList overloads, in-place and functional; mul and div add Tensor.
#define ACCEL_REGISTER_LISTS(OP)                            \
  m.impl("_foreach_" #OP "_.Scalar", OP##_Scalar_);         \
  m.impl("_foreach_" #OP ".Scalar", OP##_Scalar);           \
  m.impl("_foreach_" #OP "_.List", OP##_List_);             \
  m.impl("_foreach_" #OP ".List", OP##_List);               \
  m.impl("_foreach_" #OP "_.ScalarList", OP##_ScalarList_); \
  m.impl("_foreach_" #OP ".ScalarList", OP##_ScalarList);
#define ACCEL_REGISTER_LISTS_AND_TENSOR(OP)         \
  ACCEL_REGISTER_LISTS(OP)                          \
  m.impl("_foreach_" #OP "_.Tensor", OP##_Tensor_); \
  m.impl("_foreach_" #OP ".Tensor", OP##_Tensor);
  ACCEL_REGISTER_LISTS(sub)
  ACCEL_REGISTER_LISTS_AND_TENSOR(add)
  ACCEL_REGISTER_LISTS_AND_TENSOR(mul)
  ACCEL_REGISTER_LISTS_AND_TENSOR(div)
#undef ACCEL_REGISTER_LISTS_AND_TENSOR
#undef ACCEL_REGISTER_LISTS
  m.impl("_foreach_addcmul_.Scalar", addcmul_Scalar_);
  m.impl("_foreach_addcmul_.ScalarList", addcmul_ScalarList_);
  m.impl("_foreach_addcmul_.Tensor", addcmul_Tensor_);
  m.impl("_foreach_addcdiv_.Scalar", addcdiv_Scalar_);
  m.impl("_foreach_addcdiv_.ScalarList", addcdiv_ScalarList_);
  m.impl("_foreach_addcdiv_.Tensor", addcdiv_Tensor_);
  m.impl("_foreach_zero_", zero_);
  m.impl("_foreach_copy_", copy_);
  m.impl("_foreach_maximum_.List", maximum_List_);
  m.impl("_foreach_sqrt_", sqrt_);
  m.impl("_foreach_sqrt", sqrt);
  m.impl("_foreach_neg_", neg_);
  m.impl("_foreach_neg", neg);
  m.impl("_foreach_lerp_.List", lerp_List_);
  m.impl("_foreach_lerp_.Scalar", lerp_Scalar_);
  m.impl("_foreach_lerp_.ScalarList", lerp_ScalarList_);
}

}  // namespace
}  // namespace accel

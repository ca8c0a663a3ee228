// The _foreach_* ops torch.optim (foreach=True) and clip_grad_norm_ use. Each launches the
// native elementwise kernel once per tensor, through the dispatcher, so none reaches the
// CPU fallback.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace accel {
namespace {

using TL = at::TensorList;
using SL = at::ArrayRef<c10::Scalar>;

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
#define ACCEL_FOREACH_ADDSUB(OP)                                                         \
  void OP##_Scalar_(TL self, const c10::Scalar& s) {                                     \
    for (auto t : self) t.OP##_(s);                                                      \
  }                                                                                      \
  std::vector<at::Tensor> OP##_Scalar(TL self, const c10::Scalar& s) {                   \
    return map(self, [&](size_t i) { return self[i].OP(s); });                           \
  }                                                                                      \
  void OP##_List_(TL self, TL other, const c10::Scalar& alpha) {                         \
    checkSameLength(self.size(), other.size());                                          \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(other[i], alpha); \
  }                                                                                      \
  std::vector<at::Tensor> OP##_List(TL self, TL other, const c10::Scalar& alpha) {       \
    checkSameLength(self.size(), other.size());                                          \
    return map(self, [&](size_t i) { return self[i].OP(other[i], alpha); });             \
  }                                                                                      \
  void OP##_ScalarList_(TL self, SL s) {                                                 \
    checkSameLength(self.size(), s.size());                                              \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(s[i]);            \
  }                                                                                      \
  std::vector<at::Tensor> OP##_ScalarList(TL self, SL s) {                               \
    checkSameLength(self.size(), s.size());                                              \
    return map(self, [&](size_t i) { return self[i].OP(s[i]); });                        \
  }
ACCEL_FOREACH_ADDSUB(add)
ACCEL_FOREACH_ADDSUB(sub)
#undef ACCEL_FOREACH_ADDSUB
void add_Tensor_(TL self, const at::Tensor& other, const c10::Scalar& alpha) {
  for (auto t : self) t.add_(other, alpha);
}
std::vector<at::Tensor> add_Tensor(TL self, const at::Tensor& other, const c10::Scalar& alpha) {
  return map(self, [&](size_t i) { return self[i].add(other, alpha); });
}

// mul and div share the shapes of their overloads.
#define ACCEL_FOREACH_MULDIV(OP)                                                  \
  void OP##_Scalar_(TL self, const c10::Scalar& s) {                              \
    for (auto t : self) t.OP##_(s);                                               \
  }                                                                               \
  std::vector<at::Tensor> OP##_Scalar(TL self, const c10::Scalar& s) {            \
    return map(self, [&](size_t i) { return self[i].OP(s); });                    \
  }                                                                               \
  void OP##_List_(TL self, TL other) {                                            \
    checkSameLength(self.size(), other.size());                                   \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(other[i]); \
  }                                                                               \
  std::vector<at::Tensor> OP##_List(TL self, TL other) {                          \
    checkSameLength(self.size(), other.size());                                   \
    return map(self, [&](size_t i) { return self[i].OP(other[i]); });             \
  }                                                                               \
  void OP##_ScalarList_(TL self, SL s) {                                          \
    checkSameLength(self.size(), s.size());                                       \
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
ACCEL_FOREACH_MULDIV(mul)
ACCEL_FOREACH_MULDIV(div)
#undef ACCEL_FOREACH_MULDIV

// addcmul_ / addcdiv_
#define ACCEL_FOREACH_ADDC(OP, COMBINE)                                                      \
  void OP##_Scalar_(TL self, TL t1, TL t2, const c10::Scalar& value) {                       \
    checkSameLength(self.size(), t1.size());                                                 \
    checkSameLength(self.size(), t2.size());                                                 \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(t1[i], t2[i], value); \
  }                                                                                          \
  void OP##_ScalarList_(TL self, TL t1, TL t2, SL s) {                                       \
    checkSameLength(self.size(), s.size());                                                  \
    checkSameLength(self.size(), t1.size());                                                 \
    checkSameLength(self.size(), t2.size());                                                 \
    for (size_t i = 0; i < self.size(); ++i) at::Tensor(self[i]).OP##_(t1[i], t2[i], s[i]);  \
  }                                                                                          \
  void OP##_Tensor_(TL self, TL t1, TL t2, const at::Tensor& s) {                            \
    TORCH_CHECK(s.dim() == 1 && s.numel() == static_cast<int64_t>(self.size()),              \
                "scalars must be a 1D tensor with one value per tensor");                    \
    for (size_t i = 0; i < self.size(); ++i)                                                 \
      at::Tensor(self[i]).add_(t1[i].COMBINE(t2[i]).mul(s[i]));                              \
  }
ACCEL_FOREACH_ADDC(addcmul, mul)
ACCEL_FOREACH_ADDC(addcdiv, div)
#undef ACCEL_FOREACH_ADDC

void sqrt_(TL self) {
  for (auto t : self) t.sqrt_();
}
std::vector<at::Tensor> sqrt(TL self) {
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

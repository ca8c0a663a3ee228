// Matrix products: mm, bmm, addmm, baddbmm, addmv, dot, vdot (functional, in-place and out=
// forms), real and complex.
// Everything becomes one strided batched GEMM of the BLAS table. Shape and dtype checks come
// from the structured ops' meta functions (at::meta::*), so errors read as on CPU. Transposed
// operands (a matrix whose strides are (1, ld)) go to BLAS as they are, with a transpose flag;
// only an operand that fits neither layout is copied to a contiguous one on the device, and so
// is a lazily conjugated or negated one (the copy resolves the bit).
// mv, matmul and linear are composites that reach these ops.
#include <ATen/Context.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/addmm_meta_dispatch.h>
#include <ATen/ops/addmv_meta_dispatch.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/addr_native.h>
#include <ATen/ops/baddbmm_meta_dispatch.h>
#include <ATen/ops/bmm_meta_dispatch.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm_meta_dispatch.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/blas.h"
#include "runtime/driver.h"

namespace accel {
namespace {

// How a rows x cols matrix with strides (s0, s1) is handed to a column-major BLAS: as it is
// (column-major, ld = s1), transposed (row-major, ld = s0), or not at all. The stride of a
// size-1 dimension is irrelevant, so it never disqualifies a layout.
struct BlasLayout {
  bool fits = false;
  bool trans = false;
  int64_t ld = 1;
};

BlasLayout blasLayout(int64_t r, int64_t c, int64_t s0, int64_t s1) {
  if ((s0 == 1 || r == 1) && (c == 1 || s1 >= std::max<int64_t>(1, r))) {
    return {true, false, c == 1 ? std::max<int64_t>(1, r) : s1};
  }
  if ((s1 == 1 || c == 1) && (r == 1 || s0 >= std::max<int64_t>(1, c))) {
    return {true, true, r == 1 ? std::max<int64_t>(1, c) : s0};
  }
  return {};
}

// dst = src on the device, with src's lazy conjugate or negative bit applied (copyOnDevice
// moves the stored values as they are).
void copyValues(const at::Tensor& dst, const at::Tensor& src) {
  if (src.is_conj() || src.is_neg()) {
    dst.copy_(src);
  } else {
    copyOnDevice(dst, src);
  }
}

// The matrices of a 2-d tensor, or the batch of a 3-d one: batch stride 0 when there is one
// matrix (or a broadcast one). Products take 2-d tensors as they are: no unsqueeze views.
int64_t batchStride(const at::Tensor& t) {
  return t.dim() == 3 && t.size(0) != 1 ? t.stride(0) : 0;
}

// One GEMM operand: the matrices of t, or their transposes.
struct Operand {
  at::Tensor t;  // kept alive: it may be a contiguous copy
  BlasLayout layout;
  int64_t batch_stride;
  bool conj = false;  // the stored values' conjugates, with layout.trans (BLAS 'C')
};

Operand operand(const at::Tensor& t, bool transposed) {
  const int64_t r = t.size(-2), c = t.size(-1), s0 = t.stride(-2), s1 = t.stride(-1);
  BlasLayout l = transposed ? blasLayout(c, r, s1, s0) : blasLayout(r, c, s0, s1);
  if (l.fits && !t.is_neg() && (!t.is_conj() || l.trans)) {
    return {t, l, batchStride(t), t.is_conj()};
  }
  at::Tensor dense = at::empty(t.sizes(), t.options());
  copyValues(dense, t);
  return operand(dense, transposed);
}

// The BLAS scratch of `stream` (kernels/blas.h): allocated from the caching allocator by the
// stream's first product and kept for the process, as torch.cuda keeps cuBLAS workspaces. Not
// allocated during a capture, whose private pool would own it: that product uses the BLAS's
// default scratch.
void setWorkspace(kernels::GemmDesc& d, rt::Stream stream, c10::Device device) {
  const int64_t bytes = kernels::blasTable().workspace_bytes(stream);
  if (bytes == 0) return;
  static std::mutex mu;
  static auto* held = new std::unordered_map<rt::Stream, c10::DataPtr>();  // never freed
  std::lock_guard<std::mutex> lock(mu);
  auto it = held->find(stream);
  if (it == held->end()) {
    if (rt::driver().streamCaptureId(stream) != 0) return;
    c10::DeviceGuard guard(device);
    it = held->emplace(stream, c10::GetAllocator(device.type())->allocate(bytes)).first;
  }
  d.workspace = it->second.get();
  d.workspace_bytes = bytes;
}

// c[i] = alpha * a[i] @ b[i] + beta * c[i] for a (B x m x k), b (B x k x n) and c
// (B x m x n) of one dtype on one device, each 3-d, or 2-d for B = 1 (or a broadcast a or
// b). With beta == 0, c is not read.
void gemm(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,
          const c10::Scalar& beta) {
  const int64_t batch = c.dim() == 3 ? c.size(0) : 1, m = c.size(-2), n = c.size(-1);
  const int64_t k = a.size(-1);
  if (c.numel() == 0) return;
  BlasLayout lc = blasLayout(m, n, c.stride(-2), c.stride(-1));
  if (!lc.fits || (batch > 1 && at::has_internal_overlap(c) != at::MemOverlap::No)) {
    // No BLAS layout for the output: compute into a dense one and copy back.
    at::Tensor dense = at::empty(c.sizes(), c.options());
    if (beta.toComplexDouble() != 0.0) copyOnDevice(dense, c);
    gemm(dense, a, b, alpha, beta);
    copyOnDevice(c, dense);
    return;
  }
  kernels::GemmDesc d;
  // The ABI's complex dtypes share ScalarType's numbering (toKernelDType names real ones).
  d.dtype = c.is_complex() ? static_cast<kernels::DType>(c.scalar_type())
                           : toKernelDType(c.scalar_type());
  d.batch = batch;
  d.k = k;
  d.c = c.data_ptr();
  d.ldc = lc.ld;
  d.stride_c = batch == 1 ? 0 : c.stride(0);
  if (c.is_complex()) {
    const c10::complex<double> a = alpha.toComplexDouble(), b = beta.toComplexDouble();
    d.alpha = a.real();
    d.alpha_imag = a.imag();
    d.beta = b.real();
    d.beta_imag = b.imag();
  } else {
    d.alpha = alpha.toDouble();
    d.beta = beta.toDouble();
  }
  d.allow_tf32 = at::globalContext().allowTF32CuBLAS();
  // Column-major C is a @ b; row-major C is stored as C^T = b^T @ a^T.
  Operand first = lc.trans ? operand(b, true) : operand(a, false);
  Operand second = lc.trans ? operand(a, true) : operand(b, false);
  d.m = lc.trans ? n : m;
  d.n = lc.trans ? m : n;
  d.a = first.t.const_data_ptr();
  d.trans_a = first.layout.trans;
  d.conj_a = first.conj;
  d.lda = first.layout.ld;
  d.stride_a = first.batch_stride;
  d.b = second.t.const_data_ptr();
  d.trans_b = second.layout.trans;
  d.conj_b = second.conj;
  d.ldb = second.layout.ld;
  d.stride_b = second.batch_stride;
  int device = c.device().index();
  const rt::Stream stream = currentRuntimeStream(device);
  setWorkspace(d, stream, c.device());
  ACCEL_RT_CHECK(kernels::blasTable().gemm(d, stream), device);
}

void checkDevices(const char* name, std::initializer_list<const at::Tensor*> ts) {
  const at::Tensor& first = **ts.begin();
  for (const at::Tensor* t : ts) {
    TORCH_CHECK(t->device() == first.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                first.device(), " and ", t->device(), "! (when checking argument in method ", name,
                ")");
  }
}

// out = beta * self + alpha * (a @ b), as gemm's operands; `out` has its final shape and
// `self` is either out's shape or out itself (in-place).
void addInto(const at::Tensor& out, const at::Tensor& self, bool self_is_out, const at::Tensor& a,
             const at::Tensor& b, const c10::Scalar& beta, const c10::Scalar& alpha) {
  const bool use_self = beta.toComplexDouble() != 0.0;
  if (use_self && !self_is_out) copyValues(out, self);
  gemm(out, a, b, alpha, use_self ? beta : c10::Scalar(0.0));
}

// The BLAS handles one dtype per product. A product of mixed dtypes is an error on CPU and
// CUDA alike: each op's native() raises it with CPU's message (the fallback's "error" mode
// would call it a missing kernel).
bool nativeBlas(std::initializer_list<const at::Tensor*> ts) {
  const c10::ScalarType t = (*ts.begin())->scalar_type();
  for (const at::Tensor* x : ts) {
    if (x->scalar_type() != t) return false;
  }
  return t == at::kFloat || t == at::kDouble || t == at::kBFloat16 || t == at::kHalf ||
         t == at::kComplexFloat || t == at::kComplexDouble;
}

// CPU's dtype checks of mm and bmm (the latter also baddbmm's first).
void checkMmDtypes(const at::Tensor& m1, const at::Tensor& m2) {
  TORCH_CHECK(m1.dtype() == m2.dtype(),
              "expected m1 and m2 to have the same dtype, but got: ", m1.dtype(),
              " != ", m2.dtype());
}

void checkBmmDtypes(const at::Tensor& b1, const at::Tensor& b2) {
  TORCH_CHECK(b1.scalar_type() == b2.scalar_type(), "expected scalar type ", b1.scalar_type(),
              " but found ", b2.scalar_type());
}

// CPU's dtype checks of addmm and addbmm, in its order.
void checkAddmmDtypes(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2) {
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(),
              "self and mat2 must have the same dtype, but got ", self.scalar_type(), " and ",
              mat2.scalar_type());
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type(),
              "mat1 and mat2 must have the same dtype, but got ", mat1.scalar_type(), " and ",
              mat2.scalar_type());
}

// The product's result, of the shape the structured op's meta function computes.
at::Tensor productResult(const Output& out, at::IntArrayRef sizes, const at::Tensor& like,
                         std::initializer_list<at::TensorBase> reads) {
  at::Tensor result = out.allocate(sizes, like.options(), Output::DTypeRule::Exact);
  out.checkNoOverlap(reads);
  return result;
}

// --- mm, bmm ---------------------------------------------------------------------------

struct Mm {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& mat2) {
    checkMmDtypes(self, mat2);
    return nativeBlas({&self, &mat2});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& mat2, const Output& out) {
    checkDevices("mm", {&self, &mat2});
    at::Tensor result = productResult(out, at::meta::mm(self, mat2).sizes(), self, {self, mat2});
    c10::DeviceGuard guard(result.device());
    gemm(result, self, mat2, 1, 0);
    return out.finish(result);
  }
};

struct Bmm {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& mat2) {
    checkBmmDtypes(self, mat2);
    return nativeBlas({&self, &mat2});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& mat2, const Output& out) {
    checkDevices("bmm", {&self, &mat2});
    at::Tensor result = productResult(out, at::meta::bmm(self, mat2).sizes(), self, {self, mat2});
    c10::DeviceGuard guard(result.device());
    gemm(result, self, mat2, 1, 0);
    return out.finish(result);
  }
};

// --- addmm, baddbmm, addmv: beta * self + alpha * product -------------------------------

// The result of `self + product`: self itself may be the result (in-place, or out=self).
at::Tensor addResult(const Output& out, at::IntArrayRef sizes, const at::Tensor& self,
                     const at::Tensor& like, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor result = productResult(out, sizes, like, {a, b});
  if (!result.is_same(self)) out.checkNoOverlap({self});
  return result;
}

struct Addmm {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                     const c10::Scalar&, const c10::Scalar&) {
    checkAddmmDtypes(self, mat1, mat2);
    return nativeBlas({&self, &mat1, &mat2});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                            const c10::Scalar& beta, const c10::Scalar& alpha, const Output& out) {
    checkDevices("addmm", {&self, &mat1, &mat2});
    at::Tensor result = addResult(out, at::meta::addmm(self, mat1, mat2, beta, alpha).sizes(), self,
                                  mat1, mat1, mat2);
    c10::DeviceGuard guard(result.device());
    const bool in_place = self.is_same(result);
    addInto(result, in_place ? result : self.expand_as(result), in_place, mat1, mat2, beta, alpha);
    return out.finish(result);
  }
};

struct Baddbmm {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                     const c10::Scalar&, const c10::Scalar&) {
    checkBmmDtypes(batch1, batch2);
    TORCH_CHECK(self.dtype() == batch1.dtype(), "Input dtypes must be the same, got: input ",
                self.dtype(), ", batch1: ", batch1.dtype(), ", batch2: ", batch2.dtype());
    return nativeBlas({&self, &batch1, &batch2});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& batch1,
                            const at::Tensor& batch2, const c10::Scalar& beta,
                            const c10::Scalar& alpha, const Output& out) {
    checkDevices("baddbmm", {&self, &batch1, &batch2});
    at::Tensor result = addResult(out, at::meta::baddbmm(self, batch1, batch2, beta, alpha).sizes(),
                                  self, batch1, batch1, batch2);
    c10::DeviceGuard guard(result.device());
    const bool in_place = self.is_same(result);
    addInto(result, in_place ? result : self.expand_as(result), in_place, batch1, batch2, beta,
            alpha);
    return out.finish(result);
  }
};

// beta * self + alpha * sum over b of batch1[b] @ batch2[b]: one GEMM of batch1 as [n, B k]
// (its batches side by side) with batch2 as [B k, m].
struct Addbmm {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                     const c10::Scalar&, const c10::Scalar&) {
    checkAddmmDtypes(self, batch1, batch2);
    return nativeBlas({&self, &batch1, &batch2});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& batch1,
                            const at::Tensor& batch2, const c10::Scalar& beta,
                            const c10::Scalar& alpha, const Output& out) {
    checkDevices("addbmm", {&self, &batch1, &batch2});
    // The functional form broadcasts self first, and CPU reports a failure to do so first.
    if (!out.isGiven()) self.expand({batch1.size(1), batch2.size(2)});
    TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
    TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
    TORCH_CHECK(batch1.size(0) == batch2.size(0),
                "batch1 and batch2 must have same number of batches, got ", batch1.size(0), " and ",
                batch2.size(0));
    TORCH_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (",
                batch1.size(1), "x", batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2),
                ")");
    const at::Tensor left = batch1.transpose(0, 1).reshape({batch1.size(1), -1});
    const at::Tensor right = batch2.reshape({-1, batch2.size(2)});
    return into(out, at::addmm(self, left, right, beta, alpha));
  }
};

// y = beta * self + alpha * mat @ vec, as a GEMM with n = 1: vec is a k x 1 matrix, out an
// m x 1 one (a strided vector is a transposed 1 x k matrix, so no copy is needed).
struct Addmv {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                     const c10::Scalar&, const c10::Scalar&) {
    TORCH_CHECK(self.scalar_type() == mat.scalar_type() && mat.scalar_type() == vec.scalar_type(),
                "addmv input tensors must have the same dtype, but got ", self.scalar_type(), ", ",
                mat.scalar_type(), ", and ", vec.scalar_type());
    return nativeBlas({&self, &mat, &vec});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                            const c10::Scalar& beta, const c10::Scalar& alpha, const Output& out) {
    checkDevices("addmv", {&self, &mat, &vec});
    at::Tensor result =
        addResult(out, at::meta::addmv(self, mat, vec, beta, alpha).sizes(), self, mat, mat, vec);
    c10::DeviceGuard guard(result.device());
    at::Tensor out3 = result.view({1, result.size(0), 1});
    const bool in_place = self.is_same(result);
    at::Tensor self3 = in_place ? out3 : self.expand_as(result).view({1, result.size(0), 1});
    addInto(out3, self3, in_place, mat.unsqueeze(0), vec.unsqueeze(0).unsqueeze(-1), beta, alpha);
    return out.finish(result);
  }
};

// --- dot -------------------------------------------------------------------------------

// ATen's dot_check (not exported), with its messages (vdot's too say "dot").
void dotCheck(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
              "D and ", other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(),
              "dot : expected both vectors to have same dtype, but found ", self.scalar_type(),
              " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [",
              self.numel(), "] and src [", other.numel(),
              "] to have the same number of elements, but got ", self.numel(), " and ",
              other.numel(), " elements respectively");
}

// sum(x * y), or sum(conj(x) * y) for vdot: a 1 x k row times a k x 1 column.
at::Tensor dotProduct(const char* name, const at::Tensor& self, const at::Tensor& other,
                      bool conj_self) {
  checkDevices(name, {&self, &other});
  dotCheck(self, other);
  at::Tensor out = at::empty({}, self.options());
  c10::DeviceGuard guard(out.device());
  const at::Tensor row = self.view({1, 1, -1});
  gemm(out.view({1, 1, 1}), conj_self ? row.conj() : row, other.view({1, -1, 1}), 1, 0);
  return out;
}

struct Dot {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& other) {
    if (self.scalar_type() != other.scalar_type()) dotCheck(self, other);
    return nativeBlas({&self, &other});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& other) {
    return dotProduct("dot", self, other, false);
  }
};

struct Vdot {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor& other) {
    if (self.scalar_type() != other.scalar_type()) dotCheck(self, other);
    return nativeBlas({&self, &other});
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& other) {
    return dotProduct("vdot", self, other, self.is_complex());
  }
};

// addr = beta * self + alpha * vec1 * vec2 (outer). Floating inputs of one dtype take CPU's
// and CUDA's kernel order, beta and alpha held as the dtype, every step rounded to it: (alpha *
// vec1) * vec2, and self is ignored when beta is 0. The rest is ATen's composite.
bool addrOwnOrder(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                  const at::Scalar& beta, const at::Scalar& alpha) {
  const at::ScalarType t = self.scalar_type();
  return at::isFloatingType(t) && vec1.scalar_type() == t && vec2.scalar_type() == t &&
         vec1.dim() == 1 && vec2.dim() == 1 && !beta.isComplex() && !alpha.isComplex();
}

at::Tensor addrOwn(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  const at::ScalarType t = self.scalar_type();
  const double b = heldAs(beta, t);
  const at::Tensor r = (vec1 * heldAs(alpha, t)).unsqueeze(1) * vec2.unsqueeze(0);
  return b == 0 ? r : self.expand(r.sizes()) * b + r;
}

at::Tensor addr(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                const at::Scalar& beta, const at::Scalar& alpha) {
  if (addrOwnOrder(self, vec1, vec2, beta, alpha)) return addrOwn(self, vec1, vec2, beta, alpha);
  return at::native::math_addr(self, vec1, vec2, beta, alpha);
}

// ATen's out= composite would write into an out= on any device: the out= device rule first.
at::Tensor& addrOut(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                    const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  checkOutDevice(out, forms::opDevice(self, vec1, vec2));
  if (!addrOwnOrder(self, vec1, vec2, beta, alpha) || out.scalar_type() != self.scalar_type())
    return at::native::math_addr_out(self, vec1, vec2, beta, alpha, out);
  const at::Tensor r = addrOwn(self, vec1, vec2, beta, alpha);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

at::Tensor& addrInplace(at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                        const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(vec1.dim() == 1 && vec2.dim() == 1 && self.dim() == 2 &&
                  self.size(0) == vec1.size(0) && self.size(1) == vec2.size(0),
              "addr_: self of sizes ", self.sizes(), " does not take the outer product of ",
              vec1.sizes(), " and ", vec2.sizes());
  return addrOut(self, vec1, vec2, beta, alpha, self);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("addr", addr);
  m.impl("addr_", addrInplace);
  m.impl("addr.out", addrOut);
  registerForms<Mm>(m, "mm", nullptr, "mm.out");
  registerForms<Bmm>(m, "bmm", nullptr, "bmm.out");
  registerForms<Addmm>(m, "addmm", "addmm_", "addmm.out");
  registerForms<Baddbmm>(m, "baddbmm", "baddbmm_", "baddbmm.out");
  registerForms<Addbmm>(m, "addbmm", "addbmm_", "addbmm.out");
  registerForms<Addmv>(m, "addmv", "addmv_", "addmv.out");
  registerNative<Dot>(m, "dot");
  registerNative<Vdot>(m, "vdot");
}

}  // namespace
}  // namespace accel

// Shape ops: nonzero (complex too; synchronises for the count, like CUDA), cat (device copies into
// slices of the output), triu and tril, flip and roll.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/view_as_real.h>
#include <torch/library.h>

#include <optional>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "aten/index_desc.h"
#include "core/rt_check.h"
#include "core/sync_point.h"
#include "core/stream_pool.h"
#include "kernels/copy.h"
#include "kernels/index.h"

namespace accel {
namespace {

// ---- nonzero ------------------------------------------------------------------------------

// nonzero's two launches (kernels/index.h): the chunks' counts, which leave their offsets in
// the workspace and the total in a device scalar, then the coordinates, written from those
// offsets into `result`'s rows, at most `limit` of them.
struct NonzeroPasses {
  const at::Tensor& self;  // not complex, at most kMaxDims dims, not empty
  int device = self.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  kernels::ElementwiseDesc d = rowMajorDesc(self);
  at::Tensor workspace = at::empty({kernels::indexTable().compact_workspace_bytes(d, stream)},
                                   self.options().dtype(at::kByte));

  at::Tensor count() {
    at::Tensor total = at::empty({1}, self.options().dtype(at::kLong));
    ACCEL_RT_CHECK(
        kernels::indexTable().nonzero_count(d, total.data_ptr<int64_t>(),
                                            static_cast<char*>(workspace.data_ptr()), stream),
        device);
    return total;
  }
  void write(at::Tensor& result, int64_t limit) {
    ACCEL_RT_CHECK(kernels::indexTable().nonzero(
                       d, result.data_ptr<int64_t>(), result.stride(0), result.stride(1), limit,
                       static_cast<const char*>(workspace.data_ptr()), stream),
                   device);
  }
};

// A complex element is nonzero when either part is: the positions of self != 0.
at::Tensor nonzeroInput(const at::Tensor& self, const char* op) {
  TORCH_CHECK(self.dim() <= kernels::kMaxDims, op, " is not supported for tensors with more than ",
              kernels::kMaxDims, " dimensions");
  return self.is_complex() ? at::ne(self, 0) : self;
}

struct Nonzero {
  static bool native(const at::Tensor& self) {
    return kernelSupports(self.scalar_type()) || kernelSupportsComplex(self.scalar_type());
  }
  static at::Tensor compute(const at::Tensor& self_, const Output& out) {
    TORCH_CHECK(!out.isGiven() || out.tensor().scalar_type() == at::kLong,
                "nonzero: Expected out tensor to have scalar type Long but got scalar type",
                out.tensor().scalar_type());
    const at::Tensor self = nonzeroInput(self_, "nonzero");
    SyncPointScope sync("aten::nonzero");  // the output's shape needs the count on the host
    std::optional<NonzeroPasses> passes;
    int64_t count = 0;
    if (self.numel() > 0) {
      passes.emplace(NonzeroPasses{self});
      count = passes->count().cpu().item<int64_t>();
    }
    // The functional form is column-major, strides (1, count), as on CPU and CUDA (the fake
    // kernel predicts it and compiled code asserts it); out= keeps the given tensor's rows.
    at::Tensor result =
        out.isGiven()
            ? out.allocate({count, self.dim()}, self.options().dtype(at::kLong),
                           Output::DTypeRule::Exact, /*contiguous=*/true)
            : at::empty_strided({count, self.dim()}, {1, count}, self.options().dtype(at::kLong));
    out.checkNoOverlap({self_});
    if (count == 0 || self.dim() == 0) return out.finish(result);
    passes->write(result, count);
    return out.finish(result);
  }
};

// nonzero_static: the first `size` rows of nonzero, then rows of fill_value, as CUDA's, with
// no read-back of the count (the shape is known), so it runs in graphs and compiled code.
struct NonzeroStatic {
  static bool native(const at::Tensor& self, int64_t, int64_t) { return Nonzero::native(self); }
  static at::Tensor compute(const at::Tensor& self_, int64_t size, int64_t fill_value,
                            const Output& out) {
    TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
    const at::Tensor self = nonzeroInput(self_, "nonzero_static");
    const auto options = self.options().dtype(at::kLong);
    at::Tensor result = out.isGiven() ? out.allocate({size, self.dim()}, options,
                                                     Output::DTypeRule::Exact, /*contiguous=*/true)
                                      : at::empty({size, self.dim()}, options);
    out.checkNoOverlap({self_});
    result.fill_(fill_value);
    // A 0-d input has no coordinates to write; an empty one no nonzero element.
    if (size == 0 || self.numel() == 0 || self.dim() == 0) return out.finish(result);
    NonzeroPasses passes{self};
    passes.count();  // unread: its offsets are what the write takes
    passes.write(result, size);
    return out.finish(result);
  }
};

// ---- cat ----------------------------------------------------------------------------------

// ATen skips legacy empty tensors (1-D, size 0) whatever their shape.
bool skipped(const at::Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// ATen's layout for a resized output: the inputs' common suggested memory format (legacy
// empty ones included), else contiguous.
c10::MemoryFormat catMemoryFormat(const std::vector<at::Tensor>& tensors) {
  std::optional<c10::MemoryFormat> format;
  for (const auto& t : tensors) {
    const c10::MemoryFormat f = t.suggest_memory_format();
    if (f == c10::MemoryFormat::Contiguous || (format && *format != f)) {
      return c10::MemoryFormat::Contiguous;
    }
    format = f;
  }
  return format.value_or(c10::MemoryFormat::Contiguous);
}

at::Tensor& cat_out(const at::ITensorListRef& tensors_ref, int64_t dim, at::Tensor& out) {
  std::vector<at::Tensor> tensors(tensors_ref.begin(), tensors_ref.end());
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const at::Tensor* ref = nullptr;
  for (const auto& t : tensors) {
    TORCH_CHECK(t.dim() > 0, "zero-dimensional tensor (at position ", &t - tensors.data(),
                ") cannot be concatenated");
    if (!skipped(t) && ref == nullptr) ref = &t;
  }
  const c10::ScalarType dtype = at::native::result_type(tensors_ref);
  TORCH_CHECK_TYPE(c10::canCast(dtype, out.scalar_type()),
                   "torch.cat(): input types can't be cast to the desired output type ",
                   out.scalar_type());
  if (ref == nullptr) {  // all legacy empty
    at::native::resize_output(out, {0});
    return out;
  }
  dim = at::maybe_wrap_dim(dim, ref->dim());
  std::vector<int64_t> shape = ref->sizes().vec();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    if (skipped(t)) continue;
    TORCH_CHECK(t.device() == out.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                t.device(), " and ", out.device(), "!");
    TORCH_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ",
                ref->dim(), " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      TORCH_CHECK(d == dim || t.size(d) == ref->size(d),
                  "Sizes of tensors must match except in dimension ", dim, ". Expected size ",
                  ref->size(d), " but got size ", t.size(d), " for tensor number ", i,
                  " in the list.");
    }
    total += t.size(dim);
  }
  shape[dim] = total;
  // CPU's order: resize (warning when a non-empty out= changes shape), then the overlap
  // checks, on the resized out= (an input it aliases may have grown with it).
  if (at::native::resize_output(out, shape)) {
    out.unsafeGetTensorImpl()->empty_tensor_restride(catMemoryFormat(tensors));
  }
  at::assert_no_internal_overlap(out);
  for (const auto& t : tensors) at::assert_no_overlap(out, t);
  int64_t offset = 0;
  for (const auto& t : tensors) {
    if (skipped(t) || t.size(dim) == 0) continue;
    copyOnDevice(out.narrow(dim, offset, t.size(dim)), t);
    offset += t.size(dim);
  }
  return out;
}

struct Cat {
  static bool native(const at::ITensorListRef& tensors, int64_t) {
    for (const auto& t : tensors)
      if (!kernelKnows(t.scalar_type())) return false;
    return true;
  }
  static at::Tensor compute(const at::ITensorListRef& tensors, int64_t dim, const Output& out) {
    if (out.isGiven()) {
      at::Tensor target = out.tensor();
      return cat_out(tensors, dim, target);
    }
    at::Tensor result =
        at::empty({0}, tensors.front().options().dtype(at::native::result_type(tensors)));
    return cat_out(tensors, dim, result);
  }
};

// ---- triu / tril --------------------------------------------------------------------------

void triangle(const at::Tensor& out, const at::Tensor& self, int64_t diagonal, bool upper) {
  TORCH_CHECK(self.dim() >= 2, upper ? "triu" : "tril",
              ": input tensor must have at least 2 dimensions");
  if (self.numel() == 0) return;
  kernels::ElementwiseDesc d;
  d.ndim = static_cast<int>(self.dim());
  d.numel = self.numel();
  d.noperands = 2;
  const at::Tensor* ops[2] = {&out, &self};
  for (int k = 0; k < 2; ++k) {
    d.op[k].data = static_cast<char*>(ops[k]->data_ptr());
    d.op[k].dtype = toKernelDType(ops[k]->scalar_type());
  }
  for (int i = 0; i < d.ndim; ++i) {
    const int64_t src = self.dim() - 1 - i;
    d.sizes[i] = self.size(src);
    for (int k = 0; k < 2; ++k) d.op[k].strides[i] = ops[k]->stride(src) * ops[k]->element_size();
  }
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::indexTable().triangle(d, diagonal, upper, currentRuntimeStream(device)),
                 device);
}

template <bool Upper>
struct Triangle {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, int64_t) {
    return kernelSupports(self.scalar_type()) ||
           (complexFloatOrDouble(self.scalar_type()) && !self.is_conj());
  }
  static at::Tensor compute(const at::Tensor& self, int64_t diagonal, const Output& out) {
    at::Tensor result = out.allocate(self.sizes(), self.options(), Output::DTypeRule::Exact);
    // A result that partly overlaps self reads a copy of it.
    const bool partial = !result.is_same(self) && result.is_alias_of(self);
    const at::Tensor source = partial ? self.clone() : self;
    if (source.is_complex()) {  // the same triangle of each part (strided real views)
      const at::Tensor from = at::view_as_real(source);
      const at::Tensor to = at::view_as_real(result);
      for (int64_t part = 0; part < 2; ++part) {
        triangle(to.select(-1, part), from.select(-1, part), diagonal, Upper);
      }
    } else {
      triangle(result, source, diagonal, Upper);
    }
    return out.finish(result);
  }
};

// ---- flip / roll -----------------------------------------------------------------------

// flip is a copy from self read backwards: the copy kernel takes the negated strides (never
// a tensor: PyTorch tensors have no negative strides).
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  TORCH_CHECK(self.dim() <= kernels::kMaxDims, "flip: too many dimensions");
  std::vector<bool> flipped(self.dim(), false);
  for (int64_t d : dims) {
    d = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(!flipped[d], "dims has duplicates, original flip dims size=", dims.size());
    flipped[d] = true;
  }
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (self.numel() == 0) return out;
  kernels::ElementwiseDesc d;
  d.ndim = static_cast<int>(self.dim());
  d.numel = self.numel();
  d.noperands = 2;
  d.op[0].data = static_cast<char*>(out.data_ptr());
  d.op[1].data = static_cast<char*>(self.data_ptr());
  d.op[0].dtype = d.op[1].dtype = static_cast<kernels::DType>(self.scalar_type());  // complex too
  const int64_t item = self.element_size();
  for (int i = 0; i < d.ndim; ++i) {
    const int64_t src = self.dim() - 1 - i;
    d.sizes[i] = self.size(src);
    d.op[0].strides[i] = out.stride(src) * item;
    d.op[1].strides[i] = self.stride(src) * item;
    if (flipped[src]) {
      d.op[1].data += (self.size(src) - 1) * self.stride(src) * item;
      d.op[1].strides[i] = -d.op[1].strides[i];
    }
  }
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::copyTable().copy(d, currentRuntimeStream(device)), device);
  return out;
}

// roll along one dimension: two slice copies.
void rollInto(const at::Tensor& out, const at::Tensor& self, int64_t shift, int64_t dim) {
  const int64_t n = self.size(dim);
  if (n == 0) return;
  shift = ((shift % n) + n) % n;
  if (shift == 0) {
    copyOnDevice(out, self);
    return;
  }
  copyOnDevice(out.narrow(dim, shift, n - shift), self.narrow(dim, 0, n - shift));
  copyOnDevice(out.narrow(dim, 0, shift), self.narrow(dim, n - shift, shift));
}

at::Tensor roll(const at::Tensor& self, c10::SymIntArrayRef sym_shifts, at::IntArrayRef dims) {
  const at::IntArrayRef shifts = C10_AS_INTARRAYREF_SLOW(sym_shifts);
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {  // roll the flattened tensor
    at::Tensor flat = at::empty({self.numel()}, self.options());
    rollInto(flat, self.reshape({-1}), shifts[0], 0);
    return flat.view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(),
              "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", dims.size());
  at::Tensor current = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    at::Tensor next = at::empty_like(self, at::MemoryFormat::Contiguous);
    rollInto(next, current, shifts[i], at::maybe_wrap_dim(dims[i], self.dim()));
    current = next;
  }
  return current;
}

struct Flip {
  static bool native(const at::Tensor& self, at::IntArrayRef) {
    return kernelKnows(self.scalar_type());
  }
  static at::Tensor compute(const at::Tensor& self, at::IntArrayRef dims) {
    return accel::flip(self, dims);  // not ADL's at::flip
  }
};

struct Roll {
  static bool native(const at::Tensor& self, c10::SymIntArrayRef, at::IntArrayRef) {
    return kernelKnows(self.scalar_type());
  }
  static at::Tensor compute(const at::Tensor& self, c10::SymIntArrayRef shifts,
                            at::IntArrayRef dims) {
    return roll(self, shifts, dims);
  }
};

// nn.ChannelShuffle: the channels as [groups, C / groups], transposed.
struct ChannelShuffle {
  static bool native(const at::Tensor&, c10::SymInt) { return true; }
  static at::Tensor compute(const at::Tensor& self, c10::SymInt groups_) {
    const int64_t groups = groups_.expect_int();
    TORCH_CHECK(self.dim() > 2,
                "channel_shuffle expects input with > 2 dims, but got input with sizes ",
                self.sizes());
    TORCH_CHECK(
        groups > 0,
        "Number of groups to divide channels in must be positive. Value of groups:", groups);
    const int64_t c = self.size(1);
    TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c,
                " channels and ", groups, " groups.");
    if (self.numel() == 0) return self.clone();
    std::vector<int64_t> grouped{self.size(0), groups, c / groups};
    grouped.insert(grouped.end(), self.sizes().begin() + 2, self.sizes().end());
    return self.reshape(grouped)
        .transpose(1, 2)
        .reshape(self.sizes())
        .contiguous(self.suggest_memory_format());
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Nonzero>(m, "nonzero", nullptr, "nonzero.out");
  registerForms<NonzeroStatic>(m, "nonzero_static", nullptr, "nonzero_static.out");
  registerNative<ChannelShuffle>(m, "channel_shuffle");
  registerNative<ChannelShuffle>(m, "native_channel_shuffle");
  registerForms<Cat>(m, "cat", nullptr, "cat.out");
  registerForms<Triangle<true>>(m, "triu", "triu_", "triu.out");
  registerForms<Triangle<false>>(m, "tril", "tril_", "tril.out");
  registerNative<Flip>(m, "flip");
  registerNative<Roll>(m, "roll");
}

}  // namespace
}  // namespace accel

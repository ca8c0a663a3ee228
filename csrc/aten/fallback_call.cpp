#include "aten/fallback_call.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/TensorImpl.h>

#include <algorithm>
#include <vector>

#include "aten/copy.h"
#include "aten/output_rules.h"

namespace accel {
namespace {

bool isAccel(const at::Tensor& t) { return t.defined() && t.is_privateuseone(); }

bool written(const c10::Argument& arg) {
  return arg.alias_info() != nullptr && arg.alias_info()->isWrite();
}

// One accel tensor of the call: where it sits on the stack and its CPU stand-in.
struct Slot {
  size_t arg;        // argument index
  int64_t elem;      // index in a tensor list argument, or -1
  at::Tensor accel;  // the caller's tensor
  at::Tensor cpu;
  bool written;
  bool viewed = false;  // cpu is a view of its storage's CPU buffer
};

// [first, last] byte range of a non-empty strided tensor's elements in its storage.
std::pair<int64_t, int64_t> byteRange(const at::Tensor& t) {
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return {t.storage_offset() * t.itemsize(), (last + 1) * t.itemsize()};
}

bool viewable(const at::Tensor& t) {
  return t.layout() == at::kStrided && !t.is_nested() && t.numel() > 0 && t.has_storage();
}

// `dst` and `src` (of one geometry) without their broadcast (stride-0) dimensions: copy_
// refuses a destination whose elements overlap, and those elements repeat the first.
void copyDistinct(at::Tensor dst, at::Tensor src) {
  for (int64_t d = 0; d < dst.dim(); ++d) {
    if (dst.stride(d) == 0 && dst.size(d) > 1) {
      dst = dst.narrow(d, 0, 1);
      src = src.narrow(d, 0, 1);
    }
  }
  dst.copy_(src);
}

// A CPU tensor over `storage` from element `offset` with `like`'s sizes, strides and dtype.
at::Tensor cpuView(const c10::Storage& storage, const at::Tensor& like, int64_t offset) {
  at::Tensor v = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), like.dtype());
  v.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides(), offset);
  return v;
}

// Gives each strided slot a CPU view of a buffer standing for its storage's bytes, with its
// own strides and relative offset, holding its values. Slots on one storage share a buffer,
// so they alias on the CPU as on the device; only their elements are copied.
void viewStorages(std::vector<Slot>& slots) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].viewed || !viewable(slots[i].accel)) continue;
    const c10::StorageImpl* storage = slots[i].accel.storage().unsafeGetStorageImpl();
    std::vector<size_t> group;
    for (size_t j = i; j < slots.size(); ++j) {
      const at::Tensor& t = slots[j].accel;
      if (!slots[j].viewed && viewable(t) && t.storage().unsafeGetStorageImpl() == storage) {
        group.push_back(j);
      }
    }
    int64_t begin = byteRange(slots[i].accel).first, end = 0;
    for (size_t j : group) {
      begin = std::min(begin, byteRange(slots[j].accel).first);
      end = std::max(end, byteRange(slots[j].accel).second);
    }
    // Views need whole elements: a tensor reinterpreting the bytes at another alignment
    // gets a buffer of its own.
    group.erase(std::remove_if(group.begin(), group.end(),
                               [&](size_t j) {
                                 return j != i && (byteRange(slots[j].accel).first - begin) %
                                                          slots[j].accel.itemsize() !=
                                                      0;
                               }),
                group.end());
    const at::Tensor buffer = at::empty({end - begin}, at::TensorOptions(at::kByte));
    for (size_t j : group) {
      Slot& s = slots[j];
      const int64_t offset = (byteRange(s.accel).first - begin) / s.accel.itemsize();
      s.cpu = cpuView(buffer.storage(), s.accel, offset);
      copyDistinct(s.cpu, storedValues(s.accel));
      if (s.accel.is_conj()) s.cpu.unsafeGetTensorImpl()->_set_conj(true);
      if (s.accel.is_neg()) s.cpu.unsafeGetTensorImpl()->_set_neg(true);
      s.viewed = true;
    }
  }
}

// A written argument the CPU kernel gave its own storage (it resized it): the accel tensor
// takes its sizes and, when dense, its strides (linalg outputs are column-major), then its values.
void copyBackResized(const at::Tensor& cpu, const at::Tensor& accel) {
  if (cpu.sizes() != accel.sizes()) {
    accel.resize_(cpu.sizes());
    if (cpu.strides() != accel.strides() && cpu.is_non_overlapping_and_dense()) {
      accel.as_strided_(cpu.sizes(), cpu.strides());
    }
  }
  accel.copy_(cpu);
}

bool sameGeometry(const at::Tensor& cpu, const at::Tensor& accel) {
  return cpu.sizes() == accel.sizes() && cpu.strides() == accel.strides();
}

// The CPU backend keys the call dispatches to: dense, plus the sparse or nested ones of its
// sparse or nested arguments (the dispatcher takes the highest, as it would for the CPU
// tensors).
c10::DispatchKeySet cpuKeys(const std::vector<Slot>& slots) {
  c10::DispatchKeySet keys(c10::DispatchKey::CPU);
  for (const Slot& s : slots) {
    if (s.cpu.is_nested()) keys = keys.add(c10::DispatchKey::NestedTensorCPU);
    switch (s.cpu.layout()) {
      case at::kSparse: keys = keys.add(c10::DispatchKey::SparseCPU); break;
      case at::kSparseCsr:
      case at::kSparseCsc:
      case at::kSparseBsr:
      case at::kSparseBsc: keys = keys.add(c10::DispatchKey::SparseCsrCPU); break;
      default: break;
    }
  }
  return keys;
}

}  // namespace

void runOnCpu(const c10::OperatorHandle& op, torch::jit::Stack* stack,
              const std::optional<c10::Device>& device) {
  const c10::FunctionSchema& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t first = stack->size() - args.size();
  const std::vector<c10::IValue> originals(stack->begin() + first, stack->end());

  std::vector<Slot> slots;
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::IValue& v = originals[i];
    const bool w = written(args[i]);
    if (v.isTensor()) {
      if (isAccel(v.toTensor())) slots.push_back({i, -1, v.toTensor(), {}, w});
    } else if (v.isTensorList()) {
      const auto list = v.toTensorVector();
      for (size_t k = 0; k < list.size(); ++k) {
        if (isAccel(list[k])) slots.push_back({i, static_cast<int64_t>(k), list[k], {}, w});
      }
    } else if (v.isOptionalTensorList()) {
      const auto list = v.toOptionalTensorVector();
      for (size_t k = 0; k < list.size(); ++k) {
        if (list[k] && isAccel(*list[k])) {
          slots.push_back({i, static_cast<int64_t>(k), *list[k], {}, w});
        }
      }
    }
  }
  // A written argument off the device (a CPU out=) is refused as TensorIterator refuses it:
  // the CPU kernel would fill it silently.
  if (!slots.empty()) {
    for (size_t i = 0; i < args.size(); ++i) {
      const c10::IValue& v = originals[i];
      if (written(args[i]) && v.isTensor() && v.toTensor().defined() && !isAccel(v.toTensor()))
        checkOutDevice(v.toTensor(), device ? device : slots.front().accel.device());
    }
  }
  viewStorages(slots);
  for (Slot& s : slots) {
    if (!s.viewed) s.cpu = s.accel.cpu();  // empty, sparse or nested
  }

  // The CPU arguments onto the stack, list by list.
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::IValue& v = originals[i];
    if (v.isTensorList()) {
      (*stack)[first + i] = c10::List<at::Tensor>(v.toTensorVector());
    } else if (v.isOptionalTensorList()) {
      (*stack)[first + i] = c10::List<std::optional<at::Tensor>>(v.toOptionalTensorVector());
    }
  }
  for (const Slot& s : slots) {
    c10::IValue& v = (*stack)[first + s.arg];
    if (s.elem < 0) {
      v = s.cpu;
    } else if (v.isTensorList()) {
      v.toTensorList().set(s.elem, s.cpu);
    } else {
      v.toOptionalTensorList().set(s.elem, s.cpu);
    }
  }

  op.redispatchBoxed(cpuKeys(slots), stack);

  // What the op wrote, back to the device; a tensor the CPU kernel resized (given storage of
  // its own) after the others.
  std::vector<const Slot*> resized;
  for (const Slot& s : slots) {
    if (!s.written) continue;
    if (s.cpu.layout() != at::kStrided || s.cpu.is_nested()) {
      s.accel.copy_(s.cpu);  // sparse or nested: copy_ takes the indices and values, or buffer
    } else if (!s.viewed || !sameGeometry(s.cpu, s.accel)) {
      resized.push_back(&s);
    } else {
      copyDistinct(storedValues(s.accel), storedValues(s.cpu));
      // A kernel may conjugate or negate an output by its bit rather than its values
      // (linalg_lu_solve with left=False flips result's conjugate bit): the caller's tensor
      // takes the bits that go with the stored values.
      s.accel.unsafeGetTensorImpl()->_set_conj(s.cpu.is_conj());
      s.accel.unsafeGetTensorImpl()->_set_neg(s.cpu.is_neg());
    }
  }
  for (const Slot* s : resized) copyBackResized(s->cpu, s->accel);

  // Results: a mutable alias is the caller's own argument; anything else moves to the device.
  const auto& returns = schema.returns();
  const size_t rfirst = stack->size() - returns.size();
  for (size_t r = 0; r < returns.size(); ++r) {
    c10::IValue& v = (*stack)[rfirst + r];
    const c10::AliasInfo* alias = returns[r].alias_info();
    if (alias != nullptr && alias->isWrite()) {
      for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].alias_info() != nullptr && *args[i].alias_info() == *alias) {
          v = originals[i];
          break;
        }
      }
      continue;
    }
    if (!device) continue;
    if (v.isTensor() && v.toTensor().defined()) {
      TORCH_CHECK_NOT_IMPLEMENTED(!v.toTensor().is_quantized(),
                                  "quantized tensors are not supported on accel (",
                                  schema.operator_name(), " returns one); quantize on the CPU");
      v = v.toTensor().to(*device);
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> moved = v.toTensorVector();
      for (at::Tensor& t : moved) {
        if (t.defined()) t = t.to(*device);
      }
      v = c10::List<at::Tensor>(moved);
    }
  }
}

}  // namespace accel

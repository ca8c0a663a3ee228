// The contract between torch_accel._C and the C++ wrapper that torch.compile generates for
// accel with cpp_wrapper=True. The build embeds this file's text in _C
// (`_C._kernel_scope_source`), which torch_accel/_inductor/cpp_wrapper.py splices into the
// generated source; csrc/python/inductor_support.cpp implements it.
//
// Around each Inductor C++ kernel the generated code holds a KernelScope: it drains the calling
// thread's current accel stream (earlier asynchronous launches, e.g. an extern mm, must be done
// before the kernel reads their results) and holds device access (protect mode). The entry
// points travel as a PyCapsule, so the generated library has no link-time dependency on
// torch_accel. Change the version whenever this struct changes.
#pragma once

#define TORCH_ACCEL_KERNEL_API_VERSION 1
#define TORCH_ACCEL_KERNEL_API_CAPSULE "torch_accel._C._inductor_kernel_api"

extern "C" {
struct TorchAccelKernelApi {
  int version;
  // Returns an opaque scope, or nullptr with *error set (valid until the thread's next call).
  void* (*enter)(int device, const char** error);
  void (*exit)(void* scope);
};
}

#ifdef TORCH_ACCEL_GENERATED_WRAPPER  // the generated code's half (Python.h is included)
#include <stdexcept>

namespace torch_accel {

inline const TorchAccelKernelApi& kernelApi() {
  static const TorchAccelKernelApi* api = [] {
    py::gil_scoped_acquire_simple gil;  // the wrapper runs with the GIL released
    auto* p = static_cast<const TorchAccelKernelApi*>(
        PyCapsule_Import(TORCH_ACCEL_KERNEL_API_CAPSULE, 0));
    if (p == nullptr) {
      PyErr_Clear();
      throw std::runtime_error("torch_accel: " TORCH_ACCEL_KERNEL_API_CAPSULE
                               " is missing; rebuild torch_accel");
    }
    if (p->version != TORCH_ACCEL_KERNEL_API_VERSION) {
      throw std::runtime_error(
          "torch_accel: compiled code and torch_accel._C disagree on the kernel API version; "
          "clear the Inductor cache or rebuild torch_accel");
    }
    return p;
  }();
  return *api;
}

class KernelScope {
 public:
  explicit KernelScope(int device) {
    const char* error = nullptr;
    scope_ = kernelApi().enter(device, &error);
    if (scope_ == nullptr) throw std::runtime_error(error ? error : "torch_accel: kernel scope");
  }
  ~KernelScope() { kernelApi().exit(scope_); }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  void* scope_;
};

}  // namespace torch_accel
#endif

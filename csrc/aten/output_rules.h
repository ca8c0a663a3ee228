// The rules PyTorch applies to an op's output before any kernel runs, in one place: an out=
// or in-place tensor on another device is refused, an in-place self is never resized, an out=
// tensor must be able to hold the result's dtype and is resized with PyTorch's deprecation
// warning when it had elements, and kernels that read their inputs while writing refuse an
// output that overlaps them. The errors are the ones CPU and CUDA raise.
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>
#include <optional>

namespace accel {

// The output of one call of an op in one of its forms (op_forms.h).
class Output {
 public:
  enum class Form { Functional, InPlace, Out };
  // How an out= tensor's dtype must relate to the result's.
  enum class DTypeRule {
    Castable,  // the result casts into it (elementwise and reduction ops)
    Exact,     // it must be the result's dtype (indexing, sorting, BLAS)
  };

  Output() = default;  // functional: the op allocates
  Output(Form form, at::Tensor& given) : form_(form), given_(&given) {}

  Form form() const { return form_; }
  bool isGiven() const { return given_ != nullptr; }

  // For ops built on TensorIterator, which applies these rules itself: the tensor to pass to
  // add_output (undefined for the functional form).
  const at::Tensor& tensor() const;

  // For other ops: the tensor to write a result of `sizes` and `options` into. A new one for
  // the functional form; else the given tensor after the rules above, or a temporary when it
  // has another dtype or is not contiguous and `contiguous` is asked for; finish() then
  // copies the temporary in.
  at::Tensor allocate(c10::IntArrayRef sizes, const at::TensorOptions& options,
                      DTypeRule rule = DTypeRule::Castable, bool contiguous = false) const;
  // The op's result: `computed` itself, or the given tensor with `computed` copied in.
  at::Tensor finish(const at::Tensor& computed) const;

  // For kernels that read inputs while they write: refuses a given output that overlaps one.
  void checkNoOverlap(std::initializer_list<at::TensorBase> inputs) const;

 private:
  Form form_ = Form::Functional;
  at::Tensor* given_ = nullptr;
};

// A composed op's result into its form's output: a given one (in-place self, out=) takes a
// copy, after that form's rules.
inline at::Tensor into(const Output& out, const at::Tensor& result) {
  if (!out.isGiven()) return result;
  const at::Tensor target = out.allocate(result.sizes(), result.options());
  return out.finish(target.copy_(result));
}

// An out= tensor must be on the op's accel device (the first accel tensor argument's).
void checkOutDevice(const at::Tensor& out, const std::optional<c10::Device>& device);
// An in-place self must be an accel tensor on the other arguments' device.
void checkInPlaceDevice(const at::Tensor& self, const std::optional<c10::Device>& device);

}  // namespace accel

// One way to write a native op (docs/architecture.md, "How to add an op").
//
// An op is a struct written once over the arguments of its functional schema:
//
//   struct Hypot {
//     static bool native(const at::Tensor& a, const at::Tensor& b);  // the kernels cover these
//     static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const Output& out);
//   };
//   registerForms<Hypot>(m, "hypot", "hypot_", "hypot.out");
//
// registerForms derives the functional, in-place and out= kernels from it (nullptr skips a
// form the op lacks). Each form first applies the rules PyTorch applies before any kernel runs
// (an out= or in-place tensor on another device is refused), then asks native() and whether
// the kernels take the output's dtype, and sends a declined call to the counted CPU fallback
// under the form's own schema. Otherwise compute() runs with an Output that carries that form's
// remaining rules (output_rules.h). Ops with two results (values, indices) declare
// `static constexpr int kOutputs = 2;` and take two Outputs.
//
// An op with a single schema (no forms) is the same struct with compute() having the schema's
// exact signature: registerNative<Op>(m, "nonzero").
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
#include "aten/output_rules.h"

namespace accel {
namespace forms {

template <class... T>
struct Types {};

// The parameter types of a function (pointer).
template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using Return = R;
  using Params = Types<A...>;
};

// The first N types of a list.
template <class Tuple, class Indices>
struct Prefix;
template <class... T, size_t... I>
struct Prefix<std::tuple<T...>, std::index_sequence<I...>> {
  using type = Types<std::tuple_element_t<I, std::tuple<T...>>...>;
};
template <size_t N, class List>
struct TakeFirst;
template <size_t N, class... T>
struct TakeFirst<N, Types<T...>> {
  using type = typename Prefix<std::tuple<T...>, std::make_index_sequence<N>>::type;
};

template <class List>
struct Count;
template <class... T>
struct Count<Types<T...>> {
  static constexpr size_t value = sizeof...(T);
};

// Op::kOutputs, or 1.
template <class Op, class = void>
struct OutputCount : std::integral_constant<int, 1> {};
template <class Op>
struct OutputCount<Op, std::void_t<decltype(Op::kOutputs)>>
    : std::integral_constant<int, Op::kOutputs> {};
template <class Op>
constexpr int outputsOf() {
  return OutputCount<Op>::value;
}

// Whether Op computes complex dtypes (`static constexpr bool kComplex = true;`): then an
// in-place self or out= tensor of a complex dtype is the kernels' too, when native() agrees.
template <class Op, class = void>
struct TakesComplex : std::false_type {};
template <class Op>
struct TakesComplex<Op, std::void_t<decltype(Op::kComplex)>>
    : std::integral_constant<bool, Op::kComplex> {};
template <class Op>
bool outputSupported(c10::ScalarType t) {
  return kernelSupports(t) || (TakesComplex<Op>::value && kernelSupportsComplex(t));
}

// compute()'s arguments without its trailing Outputs: the functional schema's.
template <class Op>
using ArgsOf = typename TakeFirst<Count<typename Signature<decltype(&Op::compute)>::Params>::value -
                                      outputsOf<Op>(),
                                  typename Signature<decltype(&Op::compute)>::Params>::type;

// The accel device of the first accel tensor among the arguments, lists included (the
// op's device).
template <class... A>
std::optional<c10::Device> opDevice(const A&... args) {
  std::optional<c10::Device> device;
  auto see = [&](const at::Tensor& t) {
    if (!device && t.defined() && t.is_privateuseone()) device = t.device();
  };
  auto visit = [&](const auto& a) {
    using T = std::decay_t<decltype(a)>;
    if constexpr (std::is_same_v<T, at::Tensor>) {
      see(a);
    } else if constexpr (std::is_same_v<T, at::ITensorListRef> ||
                         std::is_same_v<T, at::TensorList>) {
      for (const at::Tensor& t : a) see(t);
    }
  };
  (visit(args), ...);
  return device;
}

// A schema's handle, found on first use (only a fallback call needs it).
class LazyOp {
 public:
  explicit LazyOp(const char* schema) : schema_(schema) {}
  const c10::OperatorHandle& get() {
    std::call_once(once_, [this] {
      const std::string s(schema_);
      const size_t dot = s.find('.');
      handle_.emplace(findOp(("aten::" + s.substr(0, dot)).c_str(),
                             dot == std::string::npos ? "" : s.c_str() + dot + 1));
    });
    return *handle_;
  }

 private:
  const char* schema_;
  std::once_flag once_;
  std::optional<c10::OperatorHandle> handle_;
};

// Runs one call through the counted fallback; returns the stack (the op's results).
template <class... A>
torch::jit::Stack fallbackStack(LazyOp& op, A&&... args) {
  torch::jit::Stack stack;
  torch::jit::push(stack, std::forward<A>(args)...);
  cpuFallback(op.get(), &stack);
  return stack;
}

// A tuple of tensors (an op with several results) comes back one stack slot per result.
template <class R>
struct IsTensorTuple : std::false_type {};
template <class... T>
struct IsTensorTuple<std::tuple<T...>> : std::conjunction<std::is_same<T, at::Tensor>...> {};

template <class R, size_t... I>
R tensorsOf(torch::jit::Stack& stack, std::index_sequence<I...>) {
  return R{stack[I].toTensor()...};
}

template <class R>
R resultsOf(torch::jit::Stack& stack) {
  if constexpr (IsTensorTuple<R>::value) {
    return tensorsOf<R>(stack, std::make_index_sequence<std::tuple_size_v<R>>{});
  } else {
    return stack[0].to<R>();
  }
}

// What a mutating schema returns after a fallback call: its first mutable tensor argument
// (self of an in-place op, out of an out= op).
template <class First, class... Rest>
at::Tensor& mutatedArgument(First&& first, Rest&&... rest) {
  if constexpr (std::is_same_v<First, at::Tensor&>) {
    return first;
  } else {
    return mutatedArgument(std::forward<Rest>(rest)...);
  }
}

// The references an out= form returns: its N output arguments.
template <int N>
struct OutRefs;
template <>
struct OutRefs<1> {
  using type = at::Tensor&;
};
template <>
struct OutRefs<2> {
  using type = std::tuple<at::Tensor&, at::Tensor&>;
};
template <int N>
struct Results;
template <>
struct Results<1> {
  using type = at::Tensor;
};
template <>
struct Results<2> {
  using type = std::tuple<at::Tensor, at::Tensor>;
};

template <class Op, class Args = ArgsOf<Op>, int N = outputsOf<Op>()>
struct Functional;
template <class Op, class... A, int N>
struct Functional<Op, Types<A...>, N> {
  explicit Functional(const char* schema) : op(std::make_shared<LazyOp>(schema)) {}
  std::shared_ptr<LazyOp> op;
  typename Results<N>::type operator()(A... a) {
    using R = typename Results<N>::type;
    if (!Op::native(a...)) {
      torch::jit::Stack stack = fallbackStack(*op, a...);
      return resultsOf<R>(stack);
    }
    if constexpr (N == 1) {
      return Op::compute(a..., Output());
    } else {
      return Op::compute(a..., Output(), Output());
    }
  }
};

template <class Op, class Args = ArgsOf<Op>>
struct InPlace;
template <class Op, class Self, class... Rest>
struct InPlace<Op, Types<Self, Rest...>> {
  explicit InPlace(const char* schema) : op(std::make_shared<LazyOp>(schema)) {}
  std::shared_ptr<LazyOp> op;
  at::Tensor& operator()(at::Tensor& self, Rest... r) {
    checkInPlaceDevice(self, opDevice(r...));
    if (!Op::native(self, r...) || !outputSupported<Op>(self.scalar_type())) {
      fallbackStack(*op, self, r...);
      return self;
    }
    Op::compute(self, r..., Output(Output::Form::InPlace, self));
    return self;
  }
};

template <class Op, class Args = ArgsOf<Op>, int N = outputsOf<Op>()>
struct OutForm;
template <class Op, class... A>
struct OutForm<Op, Types<A...>, 1> {
  explicit OutForm(const char* schema) : op(std::make_shared<LazyOp>(schema)) {}
  std::shared_ptr<LazyOp> op;
  at::Tensor& operator()(A... a, at::Tensor& out) {
    checkOutDevice(out, opDevice(a...));
    if (!Op::native(a...) || !outputSupported<Op>(out.scalar_type())) {
      fallbackStack(*op, a..., out);
      return out;
    }
    Op::compute(a..., Output(Output::Form::Out, out));
    return out;
  }
};
template <class Op, class... A>
struct OutForm<Op, Types<A...>, 2> {
  explicit OutForm(const char* schema) : op(std::make_shared<LazyOp>(schema)) {}
  std::shared_ptr<LazyOp> op;
  std::tuple<at::Tensor&, at::Tensor&> operator()(A... a, at::Tensor& out0, at::Tensor& out1) {
    const std::optional<c10::Device> device = opDevice(a...);
    checkOutDevice(out0, device);
    checkOutDevice(out1, device);
    if (!Op::native(a...) || !outputSupported<Op>(out0.scalar_type()) ||
        !outputSupported<Op>(out1.scalar_type())) {
      fallbackStack(*op, a..., out0, out1);
    } else {
      Op::compute(a..., Output(Output::Form::Out, out0), Output(Output::Form::Out, out1));
    }
    return {out0, out1};
  }
};

// An out= schema with several results returns its out tensors: after a fallback call, the
// mutable tensor arguments, in order.
template <class R>
struct IsTensorRefTuple : std::false_type {};
template <class... T>
struct IsTensorRefTuple<std::tuple<T...>> : std::conjunction<std::is_same<T, at::Tensor&>...> {};
inline std::tuple<at::Tensor&> refIfMutable(at::Tensor& t) { return {t}; }
template <class T>
std::tuple<> refIfMutable(const T&) {
  return {};
}

// A single-schema op: compute() has the schema's signature.
template <class Op, class F = decltype(&Op::compute)>
struct Single;
template <class Op, class R, class... A>
struct Single<Op, R (*)(A...)> {
  explicit Single(const char* schema) : op(std::make_shared<LazyOp>(schema)) {}
  std::shared_ptr<LazyOp> op;
  R operator()(A... a) {
    if (Op::native(a...)) return Op::compute(a...);
    torch::jit::Stack stack = fallbackStack(*op, a...);
    if constexpr (std::is_void_v<R>) {
      return;
    } else if constexpr (std::is_same_v<R, at::Tensor&>) {
      return mutatedArgument(a...);
    } else if constexpr (IsTensorRefTuple<R>::value) {
      return std::tuple_cat(refIfMutable(a)...);
    } else {
      return resultsOf<R>(stack);
    }
  }
};

// The kernels are stateful functors (their fallback schema), which c10 wraps like lambdas.
template <class Kernel>
void impl(torch::Library& m, const char* schema) {
  m.impl(schema, torch::CppFunction(Kernel(schema)));
}

}  // namespace forms

// Registers the functional, in-place and out= kernels of Op (see the top of this file); a
// form passed as nullptr is not instantiated, so Op need not be able to have it.
template <class Op, class F, class I, class O>
void registerForms(torch::Library& m, F functional, I inplace, O out) {
  if constexpr (!std::is_same_v<F, std::nullptr_t>)
    forms::impl<forms::Functional<Op>>(m, functional);
  if constexpr (!std::is_same_v<I, std::nullptr_t>) forms::impl<forms::InPlace<Op>>(m, inplace);
  if constexpr (!std::is_same_v<O, std::nullptr_t>) forms::impl<forms::OutForm<Op>>(m, out);
}

// Registers a single-schema op whose compute() has that schema's signature.
template <class Op>
void registerNative(torch::Library& m, const char* schema) {
  forms::impl<forms::Single<Op>>(m, schema);
}

}  // namespace accel

// The fused recurrent cells: _thnn_fused_lstm_cell, _thnn_fused_gru_cell and their backwards.
// ATen's RNN layers (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell; aten/src/ATen/native/RNN.cpp)
// call them on every non-CPU device, once per time step after the gates' matrix products, and
// autograd saves their workspace for the backward. CPU has no kernel for them, so they have no
// fallback: every floating dtype runs natively (kernels/rnn.h), any other raises what
// torch.cuda raises. The argument checks are torch.cuda's, plus the exact gate count.
#include <ATen/TensorUtils.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <initializer_list>
#include <optional>
#include <tuple>

#include "aten/elementwise_desc.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/rnn.h"

namespace accel {
namespace {

using at::Tensor;
using OptionalTensor = std::optional<Tensor>;

Tensor definedOrEmpty(const OptionalTensor& t) { return t && t->defined() ? *t : Tensor(); }

Tensor contiguousIfDefined(const Tensor& t) { return t.defined() ? t.contiguous() : t; }

const char* dataOf(const Tensor& t) {
  return t.defined() ? static_cast<const char*>(t.const_data_ptr()) : nullptr;
}

// One device and one floating dtype for every given tensor (the kernels read them all as the
// first one's type).
void checkDeviceAndDtype(at::CheckedFrom op, std::initializer_list<at::TensorArg> args) {
  const at::TensorArg& first = *args.begin();
  for (const at::TensorArg& a : args) {
    if (!a->defined()) continue;
    TORCH_CHECK(a->device() == first->device(), op, ": expected all tensors on ", first->device(),
                ", but argument #", a.pos, " '", a.name, "' is on ", a->device());
    TORCH_CHECK(a->scalar_type() == first->scalar_type(), op, ": expected all tensors of dtype ",
                first->scalar_type(), ", but argument #", a.pos, " '", a.name, "' is ",
                a->scalar_type());
  }
  const c10::ScalarType t = first->scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t) && kernelSupports(t), "\"", op,
                              "\" not implemented for '", c10::toString(t), "'");
}

// Gates [batch, gates * hidden], both biases [gates * hidden] or neither, the previous state
// [batch, hidden].
void checkCellSizes(at::CheckedFrom op, const at::TensorArg& input_gates,
                    const at::TensorArg& hidden_gates, const at::TensorArg& input_bias,
                    const at::TensorArg& hidden_bias, int64_t gates, const at::TensorArg& prev) {
  at::checkDim(op, input_gates, 2);
  at::checkSameSize(op, input_gates, hidden_gates);
  const int64_t width = input_gates->size(1);
  TORCH_CHECK(input_bias->defined() == hidden_bias->defined(), op,
              ": input_bias and hidden_bias must both be given or both be None");
  if (input_bias->defined()) {
    at::checkDim(op, input_bias, 1);
    at::checkNumel(op, input_bias, width);
    at::checkSameSize(op, input_bias, hidden_bias);
  }
  at::checkDim(op, prev, 2);
  TORCH_CHECK(prev->size(0) == input_gates->size(0) && prev->size(1) * gates == width, op,
              ": expected '", prev.name, "' of size [", input_gates->size(0), ", ", width / gates,
              "] for gates of size ", input_gates->sizes(), " (", gates, " gates), but got ",
              prev->sizes());
}

void launch(rt::Error (*entry)(const kernels::RnnCellDesc&, rt::Stream),
            const kernels::RnnCellDesc& d, const Tensor& like) {
  const int device = like.device().index();
  ACCEL_RT_CHECK(entry(d, currentRuntimeStream(device)), device);
}

// The forward's common part: contiguous operands in the descriptor.
struct CellInputs {
  Tensor input_gates, hidden_gates, input_bias, hidden_bias, prev;
  kernels::RnnCellDesc desc() const {
    kernels::RnnCellDesc d;
    d.dtype = toKernelDType(prev.scalar_type());
    d.batch = prev.size(0);
    d.hidden = prev.size(1);
    d.input_gates = dataOf(input_gates);
    d.hidden_gates = dataOf(hidden_gates);
    d.input_bias = dataOf(input_bias);
    d.hidden_bias = dataOf(hidden_bias);
    d.prev = dataOf(prev);
    return d;
  }
};

CellInputs checkedCell(at::CheckedFrom op, int64_t gates, const Tensor& input_gates,
                       const Tensor& hidden_gates, const Tensor& prev, const char* prev_name,
                       const OptionalTensor& input_bias, const OptionalTensor& hidden_bias) {
  const Tensor ib = definedOrEmpty(input_bias), hb = definedOrEmpty(hidden_bias);
  const at::TensorArg ig_arg{input_gates, "input_gates", 1},
      hg_arg{hidden_gates, "hidden_gates", 2}, prev_arg{prev, prev_name, 3},
      ib_arg{ib, "input_bias", 4}, hb_arg{hb, "hidden_bias", 5};
  checkDeviceAndDtype(op, {ig_arg, hg_arg, prev_arg, ib_arg, hb_arg});
  checkCellSizes(op, ig_arg, hg_arg, ib_arg, hb_arg, gates, prev_arg);
  return {input_gates.contiguous(), hidden_gates.contiguous(), contiguousIfDefined(ib),
          contiguousIfDefined(hb), prev.contiguous()};
}

// -> (hy, cy, workspace [batch, 4 * hidden]).
std::tuple<Tensor, Tensor, Tensor> fusedLstmCell(const Tensor& input_gates,
                                                 const Tensor& hidden_gates, const Tensor& cx,
                                                 const OptionalTensor& input_bias,
                                                 const OptionalTensor& hidden_bias) {
  const CellInputs in = checkedCell("_thnn_fused_lstm_cell", 4, input_gates, hidden_gates, cx, "cx",
                                    input_bias, hidden_bias);
  Tensor hy = at::empty(in.prev.sizes(), in.prev.options());
  Tensor cy = at::empty(in.prev.sizes(), in.prev.options());
  Tensor workspace = at::empty(in.input_gates.sizes(), in.input_gates.options());
  kernels::RnnCellDesc d = in.desc();
  d.hy = static_cast<char*>(hy.data_ptr());
  d.cy = static_cast<char*>(cy.data_ptr());
  d.workspace = static_cast<char*>(workspace.data_ptr());
  launch(kernels::rnnTable().lstm_cell, d, cx);
  return {hy, cy, workspace};
}

// -> (grad_gates, grad_cx, grad_bias); undefined when neither gradient is given.
std::tuple<Tensor, Tensor, Tensor> fusedLstmCellBackward(const OptionalTensor& grad_hy,
                                                         const OptionalTensor& grad_cy,
                                                         const Tensor& cx, const Tensor& cy,
                                                         const Tensor& workspace, bool has_bias) {
  constexpr const char* op = "_thnn_fused_lstm_cell_backward_impl";
  const Tensor ghy = definedOrEmpty(grad_hy), gcy = definedOrEmpty(grad_cy);
  if (!ghy.defined() && !gcy.defined()) return {};
  const at::TensorArg ghy_arg{ghy, "grad_hy", 1}, gcy_arg{gcy, "grad_cy", 2}, cx_arg{cx, "cx", 3},
      cy_arg{cy, "cy", 4}, ws_arg{workspace, "workspace", 5};
  checkDeviceAndDtype(op, {cx_arg, cy_arg, ws_arg, ghy_arg, gcy_arg});
  const at::TensorArg& given = ghy.defined() ? ghy_arg : gcy_arg;
  at::checkDim(op, given, 2);
  const auto sizes = given->sizes();
  if (ghy.defined()) at::checkSize(op, ghy_arg, sizes);
  if (gcy.defined()) at::checkSize(op, gcy_arg, sizes);
  at::checkSize(op, cx_arg, sizes);
  at::checkSize(op, cy_arg, sizes);
  at::checkSize(op, ws_arg, {sizes[0], sizes[1] * 4});

  const Tensor ghy_c = contiguousIfDefined(ghy), gcy_c = contiguousIfDefined(gcy);
  const Tensor cx_c = cx.contiguous(), cy_c = cy.contiguous(), ws_c = workspace.contiguous();
  Tensor grad_gates = at::empty(ws_c.sizes(), ws_c.options());
  Tensor grad_cx = at::empty(cx_c.sizes(), cx_c.options());
  kernels::RnnCellDesc d;
  d.dtype = toKernelDType(cx.scalar_type());
  d.batch = sizes[0];
  d.hidden = sizes[1];
  d.grad_hy = dataOf(ghy_c);
  d.grad_cy = dataOf(gcy_c);
  d.prev = dataOf(cx_c);
  d.saved_cy = dataOf(cy_c);
  d.saved_workspace = dataOf(ws_c);
  d.grad_input_gates = static_cast<char*>(grad_gates.data_ptr());
  d.grad_prev = static_cast<char*>(grad_cx.data_ptr());
  launch(kernels::rnnTable().lstm_cell_backward, d, cx);
  Tensor grad_bias = has_bias ? grad_gates.sum(0) : Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

constexpr int64_t kGruWorkspaceGates = 5;

// -> (hy, workspace [batch, 5 * hidden]).
std::tuple<Tensor, Tensor> fusedGruCell(const Tensor& input_gates, const Tensor& hidden_gates,
                                        const Tensor& hx, const OptionalTensor& input_bias,
                                        const OptionalTensor& hidden_bias) {
  const CellInputs in = checkedCell("_thnn_fused_gru_cell", 3, input_gates, hidden_gates, hx, "hx",
                                    input_bias, hidden_bias);
  Tensor hy = at::empty(in.prev.sizes(), in.prev.options());
  Tensor workspace =
      at::empty({in.prev.size(0), in.prev.size(1) * kGruWorkspaceGates}, in.prev.options());
  kernels::RnnCellDesc d = in.desc();
  d.hy = static_cast<char*>(hy.data_ptr());
  d.workspace = static_cast<char*>(workspace.data_ptr());
  launch(kernels::rnnTable().gru_cell, d, hx);
  return {hy, workspace};
}

// -> (grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias).
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> fusedGruCellBackward(const Tensor& grad_hy,
                                                                        const Tensor& workspace,
                                                                        bool has_bias) {
  constexpr const char* op = "_thnn_fused_gru_cell_backward";
  const at::TensorArg ghy_arg{grad_hy, "grad_hy", 1}, ws_arg{workspace, "workspace", 2};
  checkDeviceAndDtype(op, {ghy_arg, ws_arg});
  at::checkDim(op, ghy_arg, 2);
  at::checkSize(op, ws_arg, {grad_hy.size(0), grad_hy.size(1) * kGruWorkspaceGates});
  const Tensor ghy = grad_hy.contiguous(), ws = workspace.contiguous();
  const int64_t batch = ghy.size(0), hidden = ghy.size(1);
  Tensor grad_input_gates = at::empty({batch, 3 * hidden}, ghy.options());
  Tensor grad_hidden_gates = at::empty({batch, 3 * hidden}, ghy.options());
  Tensor grad_hx = at::empty(ghy.sizes(), ghy.options());
  kernels::RnnCellDesc d;
  d.dtype = toKernelDType(ghy.scalar_type());
  d.batch = batch;
  d.hidden = hidden;
  d.grad_hy = dataOf(ghy);
  d.saved_workspace = dataOf(ws);
  d.grad_input_gates = static_cast<char*>(grad_input_gates.data_ptr());
  d.grad_hidden_gates = static_cast<char*>(grad_hidden_gates.data_ptr());
  d.grad_prev = static_cast<char*>(grad_hx.data_ptr());
  launch(kernels::rnnTable().gru_cell_backward, d, grad_hy);
  Tensor grad_input_bias, grad_hidden_bias;
  if (has_bias) {
    grad_input_bias = grad_input_gates.sum(0);
    grad_hidden_bias = grad_hidden_gates.sum(0);
  }
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(fusedLstmCell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(fusedLstmCellBackward));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(fusedGruCell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(fusedGruCellBackward));
}

}  // namespace
}  // namespace accel

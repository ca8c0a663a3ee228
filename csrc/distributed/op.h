// The data movement of one collective call, as the transports see it: flat, contiguous
// tensors on the group's device. ProcessGroupAccel reduces every c10d call (lists, splits,
// coalesced groups) to a batch of these.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

namespace accel::dist {

enum class OpKind : uint8_t {
  AllReduce,      // output aliases input
  Broadcast,      // output aliases input; `peer` is the root
  Reduce,         // output aliases input, written on the root only; `peer` is the root
  AllGather,      // input n elements, output n * world
  ReduceScatter,  // input n * world elements, output n
  AllToAll,       // element counts per rank in input_splits / output_splits
  Gather,         // input n, output n * world (root only); `peer` is the root
  Scatter,        // input n * world (root only), output n; `peer` is the root
  Send,           // input, to `peer`
  Recv,           // output, from `peer`
  Barrier,
};

struct Op {
  OpKind kind = OpKind::Barrier;
  at::Tensor input;
  at::Tensor output;
  c10d::ReduceOp reduce;
  int64_t peer = 0;
  int64_t tag = 0;
  std::vector<int64_t> input_splits, output_splits;
};

inline bool isPointToPoint(OpKind kind) { return kind == OpKind::Send || kind == OpKind::Recv; }

}  // namespace accel::dist

#include "distributed/process_group_accel.h"

#include <atomic>

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>

#include "core/device.h"
#include "core/device_allocator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "distributed/gloo_transport.h"
#include "distributed/nccl_transport.h"
#include "distributed/pinned_staging_pool.h"

namespace accel::dist {
namespace {

// Groups alive in this process; the pinned staging cache is freed with the last one.
std::atomic<int> g_live_groups{0};

int64_t reduceCode(const c10d::ReduceOp& op) { return static_cast<int64_t>(op.op_); }

// What NCCL refuses, refused the same way on both drivers.
void checkReduceOp(const char* name, const c10d::ReduceOp& op, at::ScalarType dtype) {
  if (dtype == at::kBool) {
    TORCH_CHECK_TYPE(op != c10d::ReduceOp::AVG, "accl ", name,
                     ": cannot use ReduceOp.AVG with boolean inputs");
  }
  if (op == c10d::ReduceOp::PREMUL_SUM) {
    TORCH_CHECK_TYPE(
        dtype == at::kHalf || dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kDouble,
        "accl ", name, ": PREMUL_SUM needs a half, float, bfloat16 or double tensor, got ", dtype);
    TORCH_CHECK_VALUE(op.supplement_, "accl ", name, ": PREMUL_SUM without its factor");
  }
}

void checkSame(const char* name, const at::Tensor& a, const at::Tensor& b, const char* what) {
  TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "accl ", name, ": ", what,
                   " must have the same dtype, got ", a.scalar_type(), " and ", b.scalar_type());
}

const at::Tensor& single(const char* name, const std::vector<at::Tensor>& tensors) {
  TORCH_CHECK_VALUE(tensors.size() == 1, "accl ", name, " takes one tensor per process, got ",
                    tensors.size());
  return tensors[0];
}

// The rows of all_to_all_single per rank (equal splits when none are given).
std::vector<int64_t> rowSplits(const char* name, const std::vector<int64_t>& splits,
                               const at::Tensor& t, int world, const char* which) {
  TORCH_CHECK_VALUE(t.dim() > 0, "accl ", name, ": the ", which, " tensor must have a dim 0");
  if (splits.empty()) {
    TORCH_CHECK_VALUE(t.size(0) % world == 0, "accl ", name, ": the ", which, " tensor's dim 0 (",
                      t.size(0), ") does not divide by the world size (", world, ") and no ", which,
                      " split sizes were given");
    return std::vector<int64_t>(world, t.size(0) / world);
  }
  TORCH_CHECK_VALUE(splits.size() == static_cast<size_t>(world), "accl ", name, ": ", which,
                    " split sizes have ", splits.size(), " entries for ", world, " ranks");
  TORCH_CHECK_VALUE(c10::sum_integers(splits) == t.size(0), "accl ", name, ": ", which,
                    " split sizes add up to ", c10::sum_integers(splits), ", but the ", which,
                    " tensor's dim 0 is ", t.size(0));
  return splits;
}

at::Tensor flatView(const at::Tensor& t) { return t.view({-1}); }

}  // namespace

// One c10d call being built. While it lives, the group's lock is held, the communication
// stream waits for the caller's current stream and is current (so that staging copies queue
// on it), and the call's tensors are recorded on it for the caching allocator.
class ProcessGroupAccel::Call {
 public:
  Call(ProcessGroupAccel& pg, Collective collective, c10d::OpType type, Lane lane,
       const std::vector<at::Tensor>& tensors, std::optional<at::Device> device = std::nullopt)
      : pg_(pg), lock_(pg.mu_), name(collectiveName(collective)) {
    if (pg.failure_->failed()) {
      TORCH_CHECK_WITH(DistBackendError, false, "accl ", name, ": process group '", pg.groupName(),
                       "' cannot be used after a failed collective: ", pg.failure_->message());
    }
    const c10::DeviceIndex index = pg.resolveDevice(tensors, device, name);
    if (pg.coalesced_) {
      batch_ = &*pg.coalesced_;
      lane = kCollectiveLane;  // a coalesced group runs as one unit
      if (batch_->ops.empty()) batch_->collective = collective;  // names the group
      TORCH_CHECK_VALUE(batch_->ops.empty() || batch_->device == index, "accl ", name,
                        ": all calls of a coalesced group must use one device");
    } else {
      own_.emplace();
      batch_ = &*own_;
      batch_->collective = collective;
      batch_->type = type;
      batch_->lane = lane;
    }
    batch_->device = index;
    if (batch_->fingerprint.empty()) batch_->fingerprint = Fingerprint(pg.getSize());
    stream = pg.laneStream(lane);

    TORCH_CHECK(pg.transport_->capturable() ||
                    rt::driver().streamCaptureId(currentRuntimeStream(index)) == 0,
                "accl ", name, " cannot be captured in a graph on its transport (",
                pg.transport_->name(),
                ": each call stages through buffers of its own); call it outside the capture");
    // The collective starts after the work the caller queued so far.
    pg.order_->follow(runtimeStream(stream), currentRuntimeStream(index), index);

    guard_.emplace(stream);
    for (const at::Tensor& t : tensors) {
      if (t.defined() && t.has_storage()) recordStream(t.storage().data_ptr(), stream);
    }
  }

  Batch& batch() { return *batch_; }
  int rank() const { return pg_.getRank(); }
  int world() const { return pg_.getSize(); }

  // A device buffer on the communication stream, for lists staged flat.
  at::Tensor staging(int64_t numel, const at::Tensor& like) {
    return at::empty({numel}, like.options().memory_format(c10::MemoryFormat::Contiguous));
  }

  c10::intrusive_ptr<c10d::Work> finish() {
    if (!own_) return {};  // coalesced: the work comes from endCoalescing()
    return pg_.submit(*own_);
  }

  c10::Stream stream{c10::Stream::DEFAULT, c10::Device(c10::DeviceType::PrivateUse1, 0)};
  const char* const name;

 private:
  ProcessGroupAccel& pg_;
  std::unique_lock<std::recursive_mutex> lock_;
  std::optional<Batch> own_;
  Batch* batch_ = nullptr;
  std::optional<c10::StreamGuard> guard_;
};

ProcessGroupAccel::ProcessGroupAccel(const c10::intrusive_ptr<c10d::Store>& store,
                                     c10::intrusive_ptr<c10d::Backend> gloo, int rank, int size,
                                     std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), timeout_(timeout), gloo_(std::move(gloo)) {
  TORCH_CHECK(gloo_, "accl: ProcessGroupAccel needs a gloo backend over the same ranks");
  if (std::string(rt::driver().name()) == "cuda") {
    transport_ = makeNcclTransport(store, gloo_, rank, size, timeout);
  } else {
    transport_ = std::make_unique<GlooTransport>(gloo_, rank, size);
  }
  ++g_live_groups;
}

ProcessGroupAccel::~ProcessGroupAccel() {
  try {
    shutdown();
  } catch (const std::exception&) {
    // A failed collective was reported to its Work and the device; nothing is left to do.
  }
  transport_.reset();
  if (--g_live_groups == 0) PinnedStagingPool::instance().emptyCache();
}

void ProcessGroupAccel::shutdown() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (const auto& stream : streams_) {
    if (stream) rt::driver().streamSynchronize(runtimeStream(*stream));
  }
}

c10::intrusive_ptr<c10d::Backend::Options> ProcessGroupAccel::getBackendOptions() {
  return c10::make_intrusive<Options>(kName, timeout_);
}

uint64_t ProcessGroupAccel::getSequenceNumberForGroup() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return sequence_;
}

std::string ProcessGroupAccel::groupName() const {
  return getGroupUid().empty() ? std::string("default") : getGroupUid();
}

c10::DeviceIndex ProcessGroupAccel::resolveDevice(const std::vector<at::Tensor>& tensors,
                                                  std::optional<at::Device> requested,
                                                  const char* name) {
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK_VALUE(t.defined(), "accl ", name, ": undefined tensor");
    TORCH_CHECK_VALUE(t.device().type() == c10::DeviceType::PrivateUse1, "accl ", name,
                      ": expected accel tensors, got a tensor on ", t.device());
    TORCH_CHECK_VALUE(t.layout() == at::kStrided, "accl ", name,
                      ": only dense tensors are supported, got layout ", t.layout());
    TORCH_CHECK_VALUE(t.is_contiguous(), "accl ", name, ": tensors must be contiguous");
    if (!requested) requested = t.device();
  }
  if (!device_) {
    // NCCL's rule: the bound device (init_process_group(device_id=...)), else the device of
    // the first collective.
    if (auto bound = getBoundDeviceId()) {
      device_ = bound->index();
    } else {
      device_ = requested ? requested->index() : currentDevice();
    }
    checkDeviceIndex(*device_);
  }
  if (requested && requested->index() != *device_) {
    TORCH_CHECK(false, "accl ", name,
                ": the tensor is on accel:", static_cast<int>(requested->index()),
                ", but process group '", groupName(),
                "' communicates on accel:", static_cast<int>(*device_),
                getBoundDeviceId() ? " (its device_id)" : " (the device of its first collective)",
                "; use one accel device per process");
  }
  return *device_;
}

c10::Stream ProcessGroupAccel::laneStream(Lane lane) {
  if (!transport_->pointToPointLanes()) lane = kCollectiveLane;
  if (!streams_[lane]) streams_[lane] = streamFromPool(*device_, /*high_priority=*/false);
  return *streams_[lane];
}

c10::intrusive_ptr<Work> ProcessGroupAccel::submit(Batch& batch) {
  const char* name = collectiveName(batch.collective);
  c10::Device device(c10::DeviceType::PrivateUse1, batch.device);
  auto work = c10::make_intrusive<Work>(getRank(), batch.type, name, device, batch.outputs,
                                        batch.blocks_host, order_);
  const c10::Stream stream = laneStream(batch.lane);
  Submission s;
  s.device = batch.device;
  s.stream = runtimeStream(stream);
  s.name = name;
  s.sequence = ++sequence_;
  s.group = groupName();
  s.work_failure = work->failure;
  s.group_failure = failure_;
  transport_->submit(std::move(batch.ops), batch.fingerprint, s);
  {
    c10::StreamGuard guard(stream);
    for (auto& after : batch.after) after();
  }
  work->enqueued(stream);
  return work;
}

void ProcessGroupAccel::startCoalescing() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  TORCH_CHECK(!coalesced_, "accl: startCoalescing() while a coalesced group is open");
  coalesced_.emplace();
  coalesced_->collective = Collective::Barrier;
  coalesced_->type = c10d::OpType::COALESCED;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::endCoalescing() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  TORCH_CHECK(coalesced_, "accl: endCoalescing() without startCoalescing()");
  Batch batch = std::move(*coalesced_);
  coalesced_.reset();
  if (batch.ops.empty()) return {};
  return submit(batch);
}

// --- the collectives ------------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::broadcast(std::vector<at::Tensor>& tensors,
                                                            const c10d::BroadcastOptions& opts) {
  Call call(*this, Collective::Broadcast, c10d::OpType::BROADCAST, kCollectiveLane, tensors);
  const at::Tensor& t = single(call.name, tensors);
  Op op;
  op.kind = OpKind::Broadcast;
  op.input = op.output = t;
  op.peer = opts.rootRank;
  Batch& b = call.batch();
  b.fingerprint.add(Collective::Broadcast, t.scalar_type(), t.sizes(), opts.rootRank);
  b.ops.push_back(std::move(op));
  b.outputs.push_back(t);
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::allreduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::AllreduceOptions& opts) {
  Call call(*this, Collective::AllReduce, c10d::OpType::ALLREDUCE, kCollectiveLane, tensors);
  const at::Tensor& t = single(call.name, tensors);
  checkReduceOp(call.name, opts.reduceOp, t.scalar_type());
  Op op;
  op.kind = OpKind::AllReduce;
  op.input = op.output = t;
  op.reduce = opts.reduceOp;
  Batch& b = call.batch();
  b.fingerprint.add(Collective::AllReduce, t.scalar_type(), t.sizes(), -1,
                    reduceCode(opts.reduceOp));
  b.ops.push_back(std::move(op));
  b.outputs.push_back(t);
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  Call call(*this, Collective::AllReduceCoalesced, c10d::OpType::ALLREDUCE_COALESCED,
            kCollectiveLane, tensors);
  Batch& b = call.batch();
  for (const at::Tensor& t : tensors) {
    checkReduceOp(call.name, opts.reduceOp, t.scalar_type());
    Op op;
    op.kind = OpKind::AllReduce;
    op.input = op.output = t;
    op.reduce = opts.reduceOp;
    b.fingerprint.add(Collective::AllReduceCoalesced, t.scalar_type(), t.sizes(), -1,
                      reduceCode(opts.reduceOp));
    b.ops.push_back(std::move(op));
    b.outputs.push_back(t);
  }
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::reduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::ReduceOptions& opts) {
  Call call(*this, Collective::Reduce, c10d::OpType::REDUCE, kCollectiveLane, tensors);
  const at::Tensor& t = single(call.name, tensors);
  checkReduceOp(call.name, opts.reduceOp, t.scalar_type());
  Op op;
  op.kind = OpKind::Reduce;
  op.input = op.output = t;
  op.reduce = opts.reduceOp;
  op.peer = opts.rootRank;
  Batch& b = call.batch();
  b.fingerprint.add(Collective::Reduce, t.scalar_type(), t.sizes(), opts.rootRank,
                    reduceCode(opts.reduceOp));
  b.ops.push_back(std::move(op));
  b.outputs.push_back(t);
  return call.finish();
}

namespace {

std::vector<at::Tensor> joined(const std::vector<std::vector<at::Tensor>>& lists,
                               const std::vector<at::Tensor>& more) {
  std::vector<at::Tensor> all(more);
  for (const auto& list : lists) all.insert(all.end(), list.begin(), list.end());
  return all;
}

void checkList(const char* name, const std::vector<at::Tensor>& list, const at::Tensor& like,
               int world, const char* what) {
  TORCH_CHECK_VALUE(list.size() == static_cast<size_t>(world), "accl ", name, ": the ", what,
                    " list holds ", list.size(), " tensors, expected one per rank (", world, ")");
  for (const at::Tensor& t : list) {
    checkSame(name, t, like, "every tensor of the list and the single tensor");
    TORCH_CHECK_VALUE(t.numel() == like.numel(), "accl ", name, ": every tensor of the ", what,
                      " list must have ", like.numel(), " elements (as ", like.sizes(), "), got ",
                      t.sizes());
  }
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  return allgather_coalesced(outputs, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  const bool coalesced = inputs.size() != 1;
  const Collective collective = coalesced ? Collective::AllGatherCoalesced : Collective::AllGather;
  Call call(*this, collective,
            coalesced ? c10d::OpType::ALLGATHER_COALESCED : c10d::OpType::ALLGATHER,
            kCollectiveLane, joined(outputs, inputs));
  TORCH_CHECK_VALUE(outputs.size() == inputs.size(), "accl ", call.name, ": ", outputs.size(),
                    " output lists for ", inputs.size(), " inputs");
  Batch& b = call.batch();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& in = inputs[i];
    checkList(call.name, outputs[i], in, call.world(), "output");
    at::Tensor flat = call.staging(in.numel() * call.world(), in);
    Op op;
    op.kind = OpKind::AllGather;
    op.input = in;
    op.output = flat;
    b.fingerprint.add(collective, in.scalar_type(), in.sizes());
    b.ops.push_back(std::move(op));
    std::vector<at::Tensor> list = outputs[i];
    b.outputs.insert(b.outputs.end(), list.begin(), list.end());
    b.after.emplace_back([flat, list] {
      const int64_t n = list.empty() ? 0 : list[0].numel();
      for (size_t r = 0; r < list.size(); ++r) {
        flatView(list[r]).copy_(flat.narrow(0, r * n, n), /*non_blocking=*/true);
      }
    });
  }
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  std::vector<at::Tensor> outputs{output}, inputs{input};
  return allgather_into_tensor_coalesced(outputs, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  const bool coalesced = inputs.size() != 1;
  return tensorPairs(
      OpKind::AllGather,
      coalesced ? Collective::AllGatherIntoTensorCoalesced : Collective::AllGatherIntoTensor,
      coalesced ? c10d::OpType::COALESCED : c10d::OpType::_ALLGATHER_BASE, outputs, inputs,
      std::nullopt);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::tensorPairs(
    OpKind kind, Collective collective, c10d::OpType type, std::vector<at::Tensor>& outputs,
    std::vector<at::Tensor>& inputs, const std::optional<c10d::ReduceOp>& reduce) {
  std::vector<at::Tensor> tensors(outputs);
  tensors.insert(tensors.end(), inputs.begin(), inputs.end());
  Call call(*this, collective, type, kCollectiveLane, tensors);
  TORCH_CHECK_VALUE(outputs.size() == inputs.size(), "accl ", call.name, ": ", outputs.size(),
                    " outputs for ", inputs.size(), " inputs");
  const bool gather = kind == OpKind::AllGather;
  Batch& b = call.batch();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& in = inputs[i];
    const at::Tensor& out = outputs[i];
    checkSame(call.name, in, out, "input and output");
    if (reduce) checkReduceOp(call.name, *reduce, out.scalar_type());
    const at::Tensor& one = gather ? in : out;  // what each rank contributes or keeps
    const at::Tensor& all = gather ? out : in;
    TORCH_CHECK_VALUE(all.numel() == one.numel() * call.world(), "accl ", call.name, ": the ",
                      gather ? "output" : "input", " must have world size (", call.world(),
                      ") times the ", one.numel(), " elements of the ", gather ? "input" : "output",
                      ", got ", all.numel());
    Op op;
    op.kind = kind;
    op.input = in;
    op.output = out;
    if (reduce) op.reduce = *reduce;
    b.fingerprint.add(collective, one.scalar_type(), one.sizes(), -1,
                      reduce ? reduceCode(*reduce) : -1);
    b.ops.push_back(std::move(op));
    b.outputs.push_back(out);
  }
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  Call call(*this, Collective::Gather, c10d::OpType::GATHER, kCollectiveLane,
            joined(outputs, inputs));
  const at::Tensor& in = single(call.name, inputs);
  const bool root = opts.rootRank == call.rank();
  Op op;
  op.kind = OpKind::Gather;
  op.input = in;
  op.peer = opts.rootRank;
  Batch& b = call.batch();
  if (root) {
    TORCH_CHECK_VALUE(outputs.size() == 1, "accl gather: the root needs one output list");
    checkList(call.name, outputs[0], in, call.world(), "gather");
    at::Tensor flat = call.staging(in.numel() * call.world(), in);
    op.output = flat;
    std::vector<at::Tensor> list = outputs[0];
    b.outputs = list;
    b.after.emplace_back([flat, list] {
      const int64_t n = list[0].numel();
      for (size_t r = 0; r < list.size(); ++r) {
        flatView(list[r]).copy_(flat.narrow(0, r * n, n), /*non_blocking=*/true);
      }
    });
  } else {
    TORCH_CHECK_VALUE(outputs.empty() || outputs[0].empty(), "accl gather: only the root (rank ",
                      opts.rootRank, ") takes a gather list");
  }
  b.fingerprint.add(Collective::Gather, in.scalar_type(), in.sizes(), opts.rootRank);
  b.ops.push_back(std::move(op));
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  Call call(*this, Collective::Scatter, c10d::OpType::SCATTER, kCollectiveLane,
            joined(inputs, outputs));
  const at::Tensor& out = single(call.name, outputs);
  const bool root = opts.rootRank == call.rank();
  Op op;
  op.kind = OpKind::Scatter;
  op.output = out;
  op.peer = opts.rootRank;
  if (root) {
    TORCH_CHECK_VALUE(inputs.size() == 1, "accl scatter: the root needs one scatter list");
    checkList(call.name, inputs[0], out, call.world(), "scatter");
    at::Tensor flat = call.staging(out.numel() * call.world(), out);
    const int64_t n = out.numel();
    for (size_t r = 0; r < inputs[0].size(); ++r) {
      flat.narrow(0, r * n, n).copy_(flatView(inputs[0][r]), /*non_blocking=*/true);
    }
    op.input = flat;
  } else {
    TORCH_CHECK_VALUE(inputs.empty() || inputs[0].empty(), "accl scatter: only the root (rank ",
                      opts.rootRank, ") takes a scatter list");
  }
  Batch& b = call.batch();
  b.fingerprint.add(Collective::Scatter, out.scalar_type(), out.sizes(), opts.rootRank);
  b.ops.push_back(std::move(op));
  b.outputs.push_back(out);
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  Call call(*this, Collective::ReduceScatter, c10d::OpType::REDUCE_SCATTER, kCollectiveLane,
            joined(inputs, outputs));
  const at::Tensor& out = single(call.name, outputs);
  checkReduceOp(call.name, opts.reduceOp, out.scalar_type());
  TORCH_CHECK_VALUE(inputs.size() == 1, "accl reduce_scatter takes one input list");
  checkList(call.name, inputs[0], out, call.world(), "input");
  at::Tensor flat = call.staging(out.numel() * call.world(), out);
  const int64_t n = out.numel();
  for (size_t r = 0; r < inputs[0].size(); ++r) {
    flat.narrow(0, r * n, n).copy_(flatView(inputs[0][r]), /*non_blocking=*/true);
  }
  Op op;
  op.kind = OpKind::ReduceScatter;
  op.input = flat;
  op.output = out;
  op.reduce = opts.reduceOp;
  Batch& b = call.batch();
  b.fingerprint.add(Collective::ReduceScatter, out.scalar_type(), out.sizes(), -1,
                    reduceCode(opts.reduceOp));
  b.ops.push_back(std::move(op));
  b.outputs.push_back(out);
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  std::vector<at::Tensor> outputs{output}, inputs{input};
  return reduce_scatter_tensor_coalesced(outputs, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const bool coalesced = inputs.size() != 1;
  return tensorPairs(
      OpKind::ReduceScatter,
      coalesced ? Collective::ReduceScatterTensorCoalesced : Collective::ReduceScatterTensor,
      coalesced ? c10d::OpType::REDUCE_SCATTER_TENSOR_COALESCED
                : c10d::OpType::_REDUCE_SCATTER_BASE,
      outputs, inputs, opts.reduceOp);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const c10d::AllToAllOptions& opts) {
  Call call(*this, Collective::AllToAllSingle, c10d::OpType::ALLTOALL_BASE, kCollectiveLane,
            {output, input});
  checkSame(call.name, input, output, "input and output");
  const int world = call.world();
  std::vector<int64_t> in_rows = rowSplits(call.name, input_split_sizes, input, world, "input");
  std::vector<int64_t> out_rows = rowSplits(call.name, output_split_sizes, output, world, "output");
  TORCH_CHECK_VALUE(input.sizes().slice(1) == output.sizes().slice(1), "accl ", call.name,
                    ": input and output rows differ: ", input.sizes(), " and ", output.sizes());
  const int64_t row = input.size(0) ? input.numel() / input.size(0) : 0;
  Op op;
  op.kind = OpKind::AllToAll;
  op.input = input;
  op.output = output;
  for (int r = 0; r < world; ++r) {
    op.input_splits.push_back(in_rows[r] * row);
    op.output_splits.push_back(out_rows[r] * row);
  }
  Batch& b = call.batch();
  b.fingerprint.add(Collective::AllToAllSingle, input.scalar_type(), input.sizes().slice(1), -1, -1,
                    op.input_splits, op.output_splits);
  b.ops.push_back(std::move(op));
  b.outputs.push_back(output);
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::alltoall(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllToAllOptions& opts) {
  std::vector<at::Tensor> tensors(outputs);
  tensors.insert(tensors.end(), inputs.begin(), inputs.end());
  Call call(*this, Collective::AllToAll, c10d::OpType::ALLTOALL, kCollectiveLane, tensors);
  const int world = call.world();
  TORCH_CHECK_VALUE(
      inputs.size() == static_cast<size_t>(world) && outputs.size() == static_cast<size_t>(world),
      "accl all_to_all: the input and output lists need one tensor per rank (", world, "), got ",
      inputs.size(), " and ", outputs.size());
  Op op;
  op.kind = OpKind::AllToAll;
  int64_t in_total = 0, out_total = 0;
  for (int r = 0; r < world; ++r) {
    checkSame(call.name, inputs[r], inputs[0], "all tensors");
    checkSame(call.name, outputs[r], inputs[0], "all tensors");
    op.input_splits.push_back(inputs[r].numel());
    op.output_splits.push_back(outputs[r].numel());
    in_total += inputs[r].numel();
    out_total += outputs[r].numel();
  }
  at::Tensor flat_in = call.staging(in_total, inputs[0]);
  at::Tensor flat_out = call.staging(out_total, inputs[0]);
  for (int r = 0, off = 0; r < world; off += inputs[r].numel(), ++r) {
    flat_in.narrow(0, off, inputs[r].numel()).copy_(flatView(inputs[r]), /*non_blocking=*/true);
  }
  op.input = flat_in;
  op.output = flat_out;
  Batch& b = call.batch();
  b.fingerprint.add(Collective::AllToAll, inputs[0].scalar_type(), {}, -1, -1, op.input_splits,
                    op.output_splits);
  b.ops.push_back(std::move(op));
  std::vector<at::Tensor> list = outputs;
  b.outputs = list;
  b.after.emplace_back([flat_out, list] {
    int64_t off = 0;
    for (const at::Tensor& t : list) {
      flatView(t).copy_(flat_out.narrow(0, off, t.numel()), /*non_blocking=*/true);
      off += t.numel();
    }
  });
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::send(std::vector<at::Tensor>& tensors,
                                                       int dst_rank, int tag) {
  Call call(*this, Collective::Send, c10d::OpType::SEND, kSendLane, tensors);
  TORCH_CHECK_VALUE(dst_rank >= 0 && dst_rank < call.world() && dst_rank != call.rank(),
                    "accl send: invalid destination rank ", dst_rank, " (this is rank ",
                    call.rank(), " of ", call.world(), ")");
  Op op;
  op.kind = OpKind::Send;
  op.input = single(call.name, tensors);
  op.peer = dst_rank;
  op.tag = tag;
  call.batch().ops.push_back(std::move(op));
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::recv(std::vector<at::Tensor>& tensors,
                                                       int src_rank, int tag) {
  Call call(*this, Collective::Recv, c10d::OpType::RECV, kRecvLane, tensors);
  TORCH_CHECK_VALUE(src_rank >= 0 && src_rank < call.world() && src_rank != call.rank(),
                    "accl recv: invalid source rank ", src_rank, " (this is rank ", call.rank(),
                    " of ", call.world(), ")");
  Op op;
  op.kind = OpKind::Recv;
  op.output = single(call.name, tensors);
  op.peer = src_rank;
  op.tag = tag;
  Batch& b = call.batch();
  b.outputs.push_back(op.output);
  b.ops.push_back(std::move(op));
  return call.finish();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupAccel::barrier(const c10d::BarrierOptions& opts) {
  std::optional<at::Device> device = opts.device;
  if (device && device->type() != c10::DeviceType::PrivateUse1) device.reset();
  Call call(*this, Collective::Barrier, c10d::OpType::BARRIER, kCollectiveLane, {}, device);
  Batch& b = call.batch();
  b.blocks_host = true;
  b.fingerprint.add(Collective::Barrier, at::kByte, {});
  b.ops.push_back(Op{});
  return call.finish();
}

}  // namespace accel::dist

// The c10d backend of the accel device ("accl"): torch.distributed's collectives on accel
// tensors, with ProcessGroupNCCL's ordering. Each call checks its tensors, makes the group's
// communication stream wait for the caller's current stream, records the tensors on that
// stream for the caching allocator, reduces lists and splits to flat ops (staging lists
// through device buffers from the caching allocator) and hands the batch to the driver's
// transport: gloo over pinned host memory on the host driver, NCCL on the CUDA driver.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "distributed/collective.h"
#include "distributed/stream_order.h"
#include "distributed/transport.h"
#include "distributed/work.h"

namespace accel::dist {

class ProcessGroupAccel final : public c10d::Backend {
 public:
  static constexpr const char* kName = "accl";

  // `gloo` is a ProcessGroupGloo over the same ranks (a prefixed store): the transport on the
  // host driver, and the channel of the cross-rank argument check on both drivers.
  ProcessGroupAccel(const c10::intrusive_ptr<c10d::Store>& store,
                    c10::intrusive_ptr<c10d::Backend> gloo, int rank, int size,
                    std::chrono::milliseconds timeout);
  ~ProcessGroupAccel() override;

  const std::string getBackendName() const override { return kName; }
  c10::intrusive_ptr<Options> getBackendOptions() override;
  const char* transportName() const { return transport_->name(); }

  bool supportsCoalescing() const override { return true; }
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;
  void setSequenceNumberForGroup() override {}
  uint64_t getSequenceNumberForGroup() override;
  // Waits for every queued collective (bounded by the timeout of the transport).
  void shutdown() override;

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_split_sizes,
                                               std::vector<int64_t>& input_split_sizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst_rank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src_rank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  // The streams a group communicates on: collectives in order on one; sends and receives
  // each on their own, so that a send waiting for its receiver never holds up a receive.
  enum Lane { kCollectiveLane, kSendLane, kRecvLane, kLanes };
  class Call;
  // What a call (or a coalesced group of calls) queues, once built.
  struct Batch {
    Collective collective = Collective::Barrier;
    c10d::OpType type = c10d::OpType::UNKNOWN;
    Lane lane = kCollectiveLane;
    bool blocks_host = false;
    c10::DeviceIndex device = 0;
    std::vector<Op> ops;
    Fingerprint fingerprint{0};
    std::vector<at::Tensor> outputs;
    std::vector<std::function<void()>> after;  // copies out of staging, on the stream
  };

  c10::DeviceIndex resolveDevice(const std::vector<at::Tensor>& tensors,
                                 std::optional<at::Device> requested, const char* name);
  c10::Stream laneStream(Lane lane);
  c10::intrusive_ptr<Work> submit(Batch& batch);
  // all_gather_into_tensor / reduce_scatter_tensor, alone or coalesced: one flat op per
  // (output, input) pair, whose larger side has world-size times the other's elements.
  c10::intrusive_ptr<c10d::Work> tensorPairs(OpKind kind, Collective collective, c10d::OpType type,
                                             std::vector<at::Tensor>& outputs,
                                             std::vector<at::Tensor>& inputs,
                                             const std::optional<c10d::ReduceOp>& reduce);
  std::string groupName() const;

  const std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<c10d::Backend> gloo_;
  std::unique_ptr<Transport> transport_;
  const std::shared_ptr<Failure> failure_ = std::make_shared<Failure>();
  const std::shared_ptr<StreamOrder> order_ = std::make_shared<StreamOrder>();

  std::recursive_mutex mu_;  // one call at a time: the ranks must see calls in one order
  std::optional<c10::DeviceIndex> device_;
  std::array<std::optional<c10::Stream>, kLanes> streams_;
  uint64_t sequence_ = 0;
  std::optional<Batch> coalesced_;  // set between startCoalescing and endCoalescing
};

}  // namespace accel::dist

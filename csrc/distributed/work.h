// The Work of one accel collective, with ProcessGroupNCCL's semantics: it completes when the
// communication stream passes the collective's end; wait() makes the caller's current stream
// wait for that (the host is not blocked, except for barrier() or an explicit timeout), and
// raises if the collective is already known to have failed.
#pragma once

#include <memory>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "distributed/failure.h"
#include "distributed/stream_order.h"
#include "runtime/driver.h"

namespace accel::dist {

class Work final : public c10d::Work {
 public:
  Work(int rank, c10d::OpType type, const char* name, c10::Device device,
       std::vector<at::Tensor> outputs, bool blocks_host, std::shared_ptr<StreamOrder> order);
  ~Work() override;

  // Called once the collective is queued on `stream`: records the end event and completes
  // the future (whose callbacks then run after the collective, in stream order).
  void enqueued(const c10::Stream& stream);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  const std::shared_ptr<Failure> failure = std::make_shared<Failure>();

 private:
  void rethrowIfFailed() const;
  void checkEnqueued() const;

  const char* name_;
  const c10::Device device_;
  std::vector<at::Tensor> outputs_;
  const bool blocks_host_;
  const std::shared_ptr<StreamOrder> order_;  // the group's
  rt::Stream stream_ = nullptr;               // the communication stream
  rt::Event end_ = nullptr;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace accel::dist

#include "distributed/work.h"

#include <thread>

#include <c10/core/StreamGuard.h>

#include "core/rt_check.h"
#include "core/stream_pool.h"

namespace accel::dist {

Work::Work(int rank, c10d::OpType type, const char* name, c10::Device device,
           std::vector<at::Tensor> outputs, bool blocks_host, std::shared_ptr<StreamOrder> order)
    : c10d::Work(rank, type),
      name_(name),
      device_(device),
      outputs_(std::move(outputs)),
      blocks_host_(blocks_host),
      order_(std::move(order)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()), std::vector<c10::Device>{device})) {}

Work::~Work() {
  if (end_ != nullptr) rt::driver().eventDestroy(end_);
}

void Work::enqueued(const c10::Stream& stream) {
  const int device = device_.index();
  stream_ = runtimeStream(stream);
  ACCEL_RT_CHECK(rt::driver().eventCreate(device, &end_, rt::kEventDisableTiming), device);
  ACCEL_RT_CHECK(rt::driver().eventRecord(end_, stream_), device);
  // With the communication stream current, the future's events mark the collective's end.
  c10::StreamGuard guard(stream);
  future_->markCompleted(c10::IValue(outputs_));
}

void Work::checkEnqueued() const {
  TORCH_CHECK(end_ != nullptr, "accl: this ", name_,
              " belongs to a coalesced group that has not been launched yet; wait on the work "
              "returned when the coalescing block ends");
}

void Work::rethrowIfFailed() const {
  if (std::exception_ptr error = failure->error()) std::rethrow_exception(error);
}

bool Work::isCompleted() {
  if (failure->failed()) return true;
  return end_ != nullptr && rt::driver().eventQuery(end_) != rt::Error::NotReady;
}

bool Work::isSuccess() const { return !failure->failed(); }

std::exception_ptr Work::exception() const { return failure->error(); }

std::vector<at::Tensor> Work::result() { return outputs_; }

void Work::synchronize() {
  checkEnqueued();
  const int device = device_.index();
  order_->await(currentRuntimeStream(device), stream_, end_, device);
}

bool Work::wait(std::chrono::milliseconds timeout) {
  rethrowIfFailed();
  checkEnqueued();
  const int device = device_.index();
  if (timeout != kNoTimeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (rt::driver().eventQuery(end_) == rt::Error::NotReady) {
      TORCH_CHECK_WITH(DistBackendError, std::chrono::steady_clock::now() < deadline,
                       "accl: ", name_, " on accel:", device, " did not complete within ",
                       timeout.count(), " ms");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    rethrowIfFailed();
  } else if (blocks_host_) {
    const rt::Error err = rt::driver().eventSynchronize(end_);
    rethrowIfFailed();
    ACCEL_RT_CHECK(err, device);
  }
  synchronize();
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> Work::getFuture() { return future_; }

}  // namespace accel::dist

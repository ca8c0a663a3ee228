#include "runtime/host/event.h"

#include "runtime/host/stream.h"

namespace accel::rt {

void EventImpl::complete(const std::shared_ptr<State>& state, uint64_t generation) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(state->mu);
    if (generation > state->completed) {
      state->completed = generation;
      state->time = now;
    }
  }
  state->cv.notify_all();
}

Error EventImpl::record(Stream stream) {
  if (auto capture = stream->capture()) {
    host::CaptureMark mark = capture->mark(stream);
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->captured = std::move(mark);
    return Error::Success;
  }
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    generation = ++state_->recorded;
    state_->captured = {};
  }
  // A marker is short work: on an idle stream it completes at once, which spares waking the
  // worker (most of what timing an idle stream costs; the profilers time every operation).
  return stream->submit([state = state_, generation] { complete(state, generation); },
                        /*is_short=*/true);
}

Error EventImpl::query() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->completed == state_->recorded ? Error::Success : Error::NotReady;
}

void EventImpl::wait() const {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [s = state_.get()] { return s->completed == s->recorded; });
}

Error EventImpl::makeStreamWait(Stream stream) const {
  uint64_t generation;
  host::CaptureMark mark;
  bool completed;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    mark = state_->captured;
    completed = state_->completed == state_->recorded;
    generation = state_->recorded;
  }
  if (auto capture = mark.capture.lock(); capture && !capture->ended()) {
    if (!stream->joinCapture(capture)) return Error::CaptureUnsupported;    // captures another
    if (!capture->join(stream, mark)) stream->leaveCapture(capture.get());  // it just ended
    return Error::Success;
  }
  if (completed) return Error::Success;  // nothing to wait for
  if (auto capture = stream->capture()) {
    capture->invalidate(Error::CaptureUnsupported);
    return Error::CaptureUnsupported;
  }
  // Blocks only this stream's worker; the marker runs on another stream's worker.
  return stream->enqueue([state = state_, generation] {
    std::unique_lock<std::mutex> lock(state->mu);
    state->cv.wait(lock, [&] { return state->completed >= generation; });
  });
}

Error EventImpl::completionTime(std::chrono::steady_clock::time_point* time) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->recorded == 0) return Error::InvalidValue;
  if (state_->completed != state_->recorded) return Error::NotReady;
  *time = state_->time;
  return Error::Success;
}

Error EventImpl::elapsed(float* ms, const EventImpl& start, const EventImpl& end) {
  if ((start.flags & kEventDisableTiming) || (end.flags & kEventDisableTiming)) {
    return Error::InvalidValue;
  }
  std::chrono::steady_clock::time_point t0, t1;
  if (Error e = start.completionTime(&t0); e != Error::Success) return e;
  if (Error e = end.completionTime(&t1); e != Error::Success) return e;
  *ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
  return Error::Success;
}

}  // namespace accel::rt

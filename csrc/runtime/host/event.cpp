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
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    generation = ++state_->recorded;
  }
  // Nothing queued before it: the marker would run at once. Completing it here spares waking
  // the stream's worker, which is most of what timing an idle stream costs (the profilers
  // record an event around every operation).
  if (stream->idle()) {
    complete(state_, generation);
    return Error::Success;
  }
  return stream->enqueue([state = state_, generation] { complete(state, generation); });
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
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->completed == state_->recorded) return Error::Success;  // nothing to wait for
    generation = state_->recorded;
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

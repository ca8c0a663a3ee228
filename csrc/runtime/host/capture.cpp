#include "runtime/host/capture.h"

#include <atomic>

namespace accel::rt::host {
namespace {

std::atomic<uint64_t> g_next_id{1};

}  // namespace

Capture::Capture(CaptureMode mode, Stream origin)
    : id(g_next_id.fetch_add(1, std::memory_order_relaxed)), mode(mode), origin(origin) {
  members_.push_back(Member{origin});
}

Capture::Member& Capture::member(Stream stream) {
  for (Member& m : members_) {
    if (m.stream == stream) return m;
  }
  // A stream that joined the capture must rejoin its origin before the end.
  return members_.emplace_back(Member{stream, 0, /*pending=*/true});
}

Error Capture::record(Stream stream, Work work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_ != Error::Success) return Error::CaptureInvalidated;
  Member& m = member(stream);
  m.recorded++;
  m.pending = stream != origin;
  work_.push_back(std::move(work));
  return Error::Success;
}

CaptureMark Capture::mark(Stream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return CaptureMark{weak_from_this(), stream, member(stream).recorded};
}

bool Capture::join(Stream waiter, const CaptureMark& mark) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_) return false;
  Member& source = member(mark.stream);
  // The source's work up to the mark now precedes the waiter's; if that is all of it, the
  // source is joined (to the origin, when the waiter is the origin or itself joins later).
  if (mark.stream != waiter && source.recorded == mark.recorded) source.pending = false;
  member(waiter);
  return true;
}

void Capture::invalidate(Error why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_ == Error::Success) status_ = why;
}

bool Capture::ended() {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

Error Capture::finish(std::vector<Work>* work, std::vector<Stream>* streams) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_) return Error::InvalidValue;
  ended_ = true;
  for (const Member& m : members_) streams->push_back(m.stream);
  if (status_ != Error::Success) {
    work_.clear();
    return status_ == Error::CaptureUnsupported ? Error::CaptureInvalidated : status_;
  }
  for (const Member& m : members_) {
    if (m.pending) {
      work_.clear();
      return Error::CaptureUnjoined;
    }
  }
  *work = std::move(work_);
  return Error::Success;
}

}  // namespace accel::rt::host

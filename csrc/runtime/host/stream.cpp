#include "runtime/host/stream.h"

#include <pthread.h>

#include <exception>
#include <string>

#include "runtime/driver.h"
#include "runtime/fork.h"
#include "runtime/host/busy_clock.h"
#include "runtime/host/device_access.h"
#include "runtime/host/spin_wait.h"

namespace accel::rt {

StreamImpl::StreamImpl(int device, int priority, host::StickyError& error, bool launch_blocking)
    : device(device), priority(priority), error_(error), launch_blocking_(launch_blocking) {}

StreamImpl::~StreamImpl() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    changed();
  }
  work_cv_.notify_one();
  if (worker_.joinable()) worker_.join();
}

Error StreamImpl::enqueue(Work work) {
  if (inBadFork()) return Error::NotSupported;
  ++queued_;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Held while recording, so that a capture ending meanwhile cannot miss this work.
    if (capture_) return capture_->record(this, std::move(work));
    if (!launch_blocking_) {
      if (!worker_.joinable()) {
        watchForFork();  // from the first thread on, a forked child cannot use the runtime
        worker_ = std::thread(&StreamImpl::workerLoop, this);
      }
      queue_.push_back(std::move(work));
      changed();
      lock.unlock();
      work_cv_.notify_one();
      return Error::Success;
    }
  }
  drain();
  return run(work) ? Error::Success : Error::LaunchFailure;
}

bool StreamImpl::runInlineIfIdle(InlineFn fn, void* context) {
  if (launch_blocking_ || inBadFork()) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ || !queue_.empty() || capture_) return false;
    ++queued_;
    running_ = true;  // later work, queued from any thread, waits for this one
    changed();
  }
  run(fn, context);
  bool queued;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
    changed();
    queued = !queue_.empty();
    if (!queued) idle_cv_.notify_all();
  }
  if (queued) work_cv_.notify_one();
  return true;
}

void StreamImpl::changed() {
  busy_.store(running_ || !queue_.empty(), std::memory_order_release);
  changes_.fetch_add(1, std::memory_order_release);
}

void StreamImpl::drain() {
  host::spinUntil([this] { return !busy_.load(std::memory_order_acquire); });
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return queue_.empty() && !running_; });
}

bool StreamImpl::idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.empty() && !running_;
}

std::shared_ptr<host::Capture> StreamImpl::capture() {
  std::lock_guard<std::mutex> lock(mu_);
  return capture_;
}

bool StreamImpl::joinCapture(const std::shared_ptr<host::Capture>& capture) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_ && capture_ != capture) return false;
  capture_ = capture;
  return true;
}

void StreamImpl::leaveCapture(const host::Capture* capture) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_.get() == capture) capture_.reset();
}

bool StreamImpl::run(InlineFn fn, void* context) {
  host::DeviceAccess access;
  host::BusyScope busy(device);
  try {
    fn(context);
    return true;
  } catch (const std::exception& e) {
    error_.set(std::string("work on accel stream failed: ") + e.what());
  } catch (...) {
    error_.set("work on accel stream failed with a non-standard exception");
  }
  return false;
}

bool StreamImpl::run(Work& work) {
  return run([](void* w) { (*static_cast<Work*>(w))(); }, &work);
}

void StreamImpl::workerLoop() {
  // Named, so that profilers and top -H tell the device's threads from the program's.
  pthread_setname_np(pthread_self(), "accel-stream");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (running_ || (!stop_ && queue_.empty())) {
      const uint64_t seen = changes_.load(std::memory_order_relaxed);
      lock.unlock();
      host::spinUntil([&] { return changes_.load(std::memory_order_acquire) != seen; });
      lock.lock();
    }
    work_cv_.wait(lock, [this] { return !running_ && (stop_ || !queue_.empty()); });
    if (queue_.empty()) return;  // stopped and drained
    Work work = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    changed();
    lock.unlock();
    run(work);
    work = nullptr;  // release captures before reporting idle
    lock.lock();
    running_ = false;
    changed();
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace accel::rt

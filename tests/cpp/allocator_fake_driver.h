// A fake rt::Driver for the allocator tests: device memory is aligned host memory under a
// fixed capacity, device mallocs and frees are counted, and events complete only when the
// test says so (or when someone synchronises on them). Streams are opaque handles made by
// stream(n); the allocator never dereferences them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/driver.h"

namespace accel::alloc::testing {

class FakeDriver : public rt::Driver {
 public:
  explicit FakeDriver(size_t capacity) : capacity_(capacity) {}
  ~FakeDriver() override {
    for (auto& [ptr, size] : live_) std::free(ptr);
  }

  static rt::Stream stream(int n) {
    return reinterpret_cast<rt::Stream>(uintptr_t(0x1000) * (n + 1));
  }

  // Completes every recorded event on `s` (what the stream reaching them would do).
  void completeStream(rt::Stream s) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [handle, event] : events_) {
      if (event->stream == s) event->done = true;
    }
  }
  void completeAll() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [handle, event] : events_) event->done = true;
  }

  size_t used() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return used_;
  }
  int64_t mallocs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return mallocs_;
  }
  int64_t frees() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return frees_;
  }
  size_t liveEvents() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.size();
  }
  int64_t deviceSyncs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return device_syncs_;
  }

  const char* name() const override { return "fake"; }
  int deviceCount() override { return 1; }
  rt::Error getDeviceProperties(int, rt::DeviceProperties* props) override {
    props->name = "fake";
    props->total_memory = capacity_;
    return rt::Error::Success;
  }
  rt::Error deviceSynchronize(int) override {
    std::lock_guard<std::mutex> lock(mutex_);
    device_syncs_++;
    return rt::Error::Success;
  }

  rt::Error malloc(int, void** ptr, size_t size) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (size > capacity_ - used_) return rt::Error::OutOfMemory;
    *ptr = std::aligned_alloc(512, size);
    if (*ptr == nullptr) return rt::Error::OutOfMemory;
    live_[*ptr] = size;
    used_ += size;
    mallocs_++;
    return rt::Error::Success;
  }
  rt::Error free(int, void* ptr) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return rt::Error::InvalidValue;
    used_ -= it->second;
    live_.erase(it);
    std::free(ptr);
    frees_++;
    return rt::Error::Success;
  }
  rt::Error memGetInfo(int, size_t* free_bytes, size_t* total_bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    *free_bytes = capacity_ - used_;
    *total_bytes = capacity_;
    return rt::Error::Success;
  }
  int pointerDevice(const void*) override { return -1; }

  rt::Error mallocHost(void**, size_t) override { return rt::Error::NotSupported; }
  rt::Error freeHost(void*) override { return rt::Error::NotSupported; }
  rt::Error memcpyAsync(void*, const void*, size_t, rt::MemcpyKind, rt::Stream) override {
    return rt::Error::NotSupported;
  }
  rt::Error memsetAsync(void*, int, size_t, rt::Stream) override { return rt::Error::NotSupported; }

  rt::Stream defaultStream(int) override { return stream(0); }
  rt::Error streamCreate(int, rt::Stream*, int) override { return rt::Error::NotSupported; }
  rt::Error streamDestroy(rt::Stream) override { return rt::Error::NotSupported; }
  rt::Error streamSynchronize(rt::Stream s) override {
    completeStream(s);
    return rt::Error::Success;
  }
  rt::Error streamQuery(rt::Stream) override { return rt::Error::Success; }
  rt::Error streamWaitEvent(rt::Stream, rt::Event) override { return rt::Error::Success; }
  int streamDevice(rt::Stream) override { return 0; }
  int streamPriority(rt::Stream) override { return 0; }
  rt::Error launchHostFunc(rt::Stream, rt::HostFn, void*) override {
    return rt::Error::NotSupported;
  }
  void* nativeStream(rt::Stream s) override { return s; }
  rt::Error streamBeginCapture(rt::Stream, rt::CaptureMode) override {
    return rt::Error::NotSupported;
  }
  rt::Error streamEndCapture(rt::Stream, rt::GraphExec*) override {
    return rt::Error::NotSupported;
  }
  uint64_t streamCaptureId(rt::Stream) override { return 0; }
  rt::Error graphLaunch(rt::GraphExec, rt::Stream) override { return rt::Error::NotSupported; }
  rt::Error graphDestroy(rt::GraphExec) override { return rt::Error::NotSupported; }
  rt::Error graphDebugDump(rt::GraphExec, const char*) override { return rt::Error::NotSupported; }

  rt::Error eventCreate(int, rt::Event* event, unsigned) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto state = std::make_unique<EventState>();
    *event = reinterpret_cast<rt::Event>(state.get());
    events_[*event] = std::move(state);
    return rt::Error::Success;
  }
  rt::Error eventDestroy(rt::Event event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.erase(event) == 1 ? rt::Error::Success : rt::Error::InvalidValue;
  }
  rt::Error eventRecord(rt::Event event, rt::Stream s) override {
    std::lock_guard<std::mutex> lock(mutex_);
    EventState* state = find(event);
    if (state == nullptr) return rt::Error::InvalidValue;
    state->stream = s;
    state->done = false;
    return rt::Error::Success;
  }
  rt::Error eventQuery(rt::Event event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    EventState* state = find(event);
    if (state == nullptr) return rt::Error::InvalidValue;
    return state->done ? rt::Error::Success : rt::Error::NotReady;
  }
  rt::Error eventSynchronize(rt::Event event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    EventState* state = find(event);
    if (state == nullptr) return rt::Error::InvalidValue;
    state->done = true;
    return rt::Error::Success;
  }
  rt::Error eventElapsedTime(float*, rt::Event, rt::Event) override {
    return rt::Error::NotSupported;
  }

  rt::Error getLastError(int) override { return rt::Error::Success; }
  std::string lastErrorMessage(int) override { return {}; }
  std::unique_ptr<rt::HostAccessScope> hostAccess() override { return nullptr; }
  rt::DeviceErrorRecord* deviceErrorRecord(int) override { return nullptr; }

 private:
  struct EventState {
    rt::Stream stream = nullptr;
    bool done = true;  // never recorded counts as completed, as in CUDA
  };
  EventState* find(rt::Event event) {
    auto it = events_.find(event);
    return it == events_.end() ? nullptr : it->second.get();
  }

  const size_t capacity_;
  mutable std::mutex mutex_;
  size_t used_ = 0;
  int64_t mallocs_ = 0;
  int64_t frees_ = 0;
  int64_t device_syncs_ = 0;
  std::map<void*, size_t> live_;
  std::map<rt::Event, std::unique_ptr<EventState>> events_;
};

}  // namespace accel::alloc::testing

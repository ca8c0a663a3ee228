#include "core/host_allocator.h"

#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "core/device.h"
#include "core/rt_check.h"

namespace accel {
namespace {

// Live pinned blocks (base -> size), so that any pointer inside one counts as pinned.
std::mutex g_mutex;
std::map<uintptr_t, size_t> g_blocks;

// Host storages used by queued copies, with the event that marks the copy done.
std::mutex g_pending_mutex;
std::deque<std::pair<rt::Event, c10::Storage>> g_pending;

void releaseFinished() {
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  while (!g_pending.empty() && rt::driver().eventQuery(g_pending.front().first) != rt::Error::NotReady) {
    rt::driver().eventDestroy(g_pending.front().first);
    g_pending.pop_front();
  }
}

void freePinned(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_blocks.erase(reinterpret_cast<uintptr_t>(ptr));
  }
  rt::driver().freeHost(ptr);
}

struct PinnedHostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    checkNotForked();
    releaseFinished();
    void* ptr = nullptr;
    if (nbytes > 0) {
      ACCEL_RT_CHECK(rt::driver().mallocHost(&ptr, nbytes), -1);
      std::lock_guard<std::mutex> lock(g_mutex);
      g_blocks[reinterpret_cast<uintptr_t>(ptr)] = nbytes;
    }
    return {ptr, ptr, &freePinned, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &freePinned; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

PinnedHostAllocator g_pinned;

}  // namespace

c10::Allocator* pinnedHostAllocator() { return &g_pinned; }

void keepAliveUntilDone(c10::Storage host_storage, int device, rt::Stream stream) {
  releaseFinished();
  rt::Event event = nullptr;
  ACCEL_RT_CHECK(rt::driver().eventCreate(device, &event, rt::kEventDisableTiming), device);
  ACCEL_RT_CHECK(rt::driver().eventRecord(event, stream), device);
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  g_pending.emplace_back(event, std::move(host_storage));
}

bool isPinnedPtr(const void* ptr) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_blocks.upper_bound(p);
  if (it == g_blocks.begin()) return false;
  --it;
  return p < it->first + it->second;
}

}  // namespace accel

#include "core/host_allocator.h"

#include <ATen/core/CachingHostAllocator.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/device_allocator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"

namespace accel {
namespace {

// Pinned memory is cached like CUDA's CachingHostAllocator: sizes are rounded up to a power of
// two, freed blocks are kept for reuse, and a block an asynchronous copy used is reused only
// once the events recorded on that copy's streams have completed. Freeing pinned memory
// synchronises the devices (as cudaFreeHost does), so only emptyHostCache() does it.
// A copy captured into a graph reads the block again at every replay, so a block a capture
// used is held by that capture until its graph is reset.
struct HostBlock {
  void* ptr = nullptr;
  size_t size = 0;
  bool allocated = false;
  int pending_events = 0;
  std::vector<rt::Stream> streams;  // streams that used it while allocated
  std::vector<uint64_t> captures;   // captures (graphs) whose copies read it
};

size_t roundUp(size_t n) {
  size_t size = 1;
  while (size < n) size <<= 1;
  return size;
}

void addTime(HostTimeStat& t, int64_t us) {
  t.total += us;
  t.max = std::max(t.max, us);
  t.min = t.count == 0 ? us : std::min(t.min, us);
  t.count += 1;
}

int64_t microsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

class PinnedCache {
 public:
  void* allocate(size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu_);
    processEvents();
    const size_t size = roundUp(nbytes);
    HostBlock* block = nullptr;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
    } else {
      void* ptr = nullptr;
      const auto start = std::chrono::steady_clock::now();
      ACCEL_RT_CHECK(rt::driver().mallocHost(&ptr, size), -1);
      addTime(stats_.host_alloc_time, microsSince(start));
      block = new HostBlock{ptr, size};
      blocks_[reinterpret_cast<uintptr_t>(ptr)] = block;
      stats_.allocations.add(1);
      stats_.allocated_bytes.add(static_cast<int64_t>(size));
      stats_.num_host_alloc++;
    }
    block->allocated = true;
    stats_.active_requests.add(1);
    stats_.active_bytes.add(static_cast<int64_t>(block->size));
    return block->ptr;
  }

  void free(void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    HostBlock* block = find(ptr);
    if (block == nullptr || !block->allocated) return;
    block->allocated = false;
    for (rt::Stream stream : block->streams) recordEvent(block, stream);
    block->streams.clear();
    releaseIfUnused(block);
  }

  void recordUse(const void* ptr, rt::Stream stream) {
    std::lock_guard<std::mutex> lock(mu_);
    HostBlock* block = find(ptr);
    if (block == nullptr || !block->allocated) return;
    // No event can be recorded for a capturing stream's work: the capture holds the block.
    if (const uint64_t capture = rt::driver().streamCaptureId(stream); capture != 0) {
      addOnce(block->captures, capture);
      addOnce(held_[capture], block);
      return;
    }
    addOnce(block->streams, stream);
  }

  void releaseCapture(uint64_t capture, const std::vector<rt::Stream>& replay_streams) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(capture);
    if (it == held_.end()) return;
    for (HostBlock* block : it->second) {
      block->captures.erase(std::find(block->captures.begin(), block->captures.end(), capture));
      // Replays still queued read the block: it is reused only after they ran.
      for (rt::Stream stream : replay_streams) {
        if (block->allocated) {
          addOnce(block->streams, stream);
        } else {
          recordEvent(block, stream);
        }
      }
      if (!block->allocated) releaseIfUnused(block);
    }
    held_.erase(it);
  }

  bool contains(const void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    return find(ptr) != nullptr;
  }

  void empty() {
    std::lock_guard<std::mutex> lock(mu_);
    processEvents();
    for (auto& [size, blocks] : free_) {
      for (HostBlock* block : blocks) {
        const auto start = std::chrono::steady_clock::now();
        rt::driver().freeHost(block->ptr);
        addTime(stats_.host_free_time, microsSince(start));
        blocks_.erase(reinterpret_cast<uintptr_t>(block->ptr));
        stats_.allocations.add(-1);
        stats_.allocated_bytes.add(-static_cast<int64_t>(block->size));
        stats_.num_host_free++;
        delete block;
      }
      blocks.clear();
    }
  }

  HostStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  void resetAccumulated() {
    std::lock_guard<std::mutex> lock(mu_);
    for (HostStat* s : statList()) s->allocated = s->freed = 0;
    stats_.num_host_alloc = stats_.num_host_free = 0;
    stats_.host_alloc_time = stats_.host_free_time = HostTimeStat{};
  }

  void resetPeak() {
    std::lock_guard<std::mutex> lock(mu_);
    for (HostStat* s : statList()) s->peak = s->current;
  }

 private:
  // The block containing ptr (pointers inside one count as pinned too), or null.
  HostBlock* find(const void* ptr) {
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    auto it = blocks_.upper_bound(p);
    if (it == blocks_.begin()) return nullptr;
    --it;
    return p < it->first + it->second->size ? it->second : nullptr;
  }

  template <class T>
  static void addOnce(std::vector<T>& list, T item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
  }

  // The block is reused only once the work now queued on `stream` has run.
  void recordEvent(HostBlock* block, rt::Stream stream) {
    rt::Event event = nullptr;
    const int device = rt::driver().streamDevice(stream);
    if (rt::driver().eventCreate(device, &event, rt::kEventDisableTiming) != rt::Error::Success) {
      return;
    }
    if (rt::driver().eventRecord(event, stream) != rt::Error::Success) {
      rt::driver().eventDestroy(event);
      return;
    }
    pending_.emplace_back(event, block);
    block->pending_events++;
  }

  void releaseIfUnused(HostBlock* block) {
    if (!block->allocated && block->pending_events == 0 && block->captures.empty()) release(block);
  }

  // No longer in use by the host, any stream or any graph: back to the cache.
  void release(HostBlock* block) {
    stats_.active_requests.add(-1);
    stats_.active_bytes.add(-static_cast<int64_t>(block->size));
    free_[block->size].push_back(block);
  }

  // An event that reports an error will never complete; its work is dead: release the block.
  void processEvents() {
    size_t kept = 0;
    for (const auto& [event, block] : pending_) {
      if (rt::driver().eventQuery(event) == rt::Error::NotReady) {
        pending_[kept++] = {event, block};
        continue;
      }
      rt::driver().eventDestroy(event);
      --block->pending_events;
      releaseIfUnused(block);
    }
    pending_.resize(kept);
  }

  std::vector<HostStat*> statList() {
    return {&stats_.allocations, &stats_.allocated_bytes, &stats_.active_requests,
            &stats_.active_bytes};
  }

  std::mutex mu_;
  std::map<uintptr_t, HostBlock*> blocks_;          // every block, by address
  std::map<size_t, std::vector<HostBlock*>> free_;  // reusable blocks, by size
  std::vector<std::pair<rt::Event, HostBlock*>> pending_;
  std::map<uint64_t, std::vector<HostBlock*>> held_;  // blocks each capture's copies read
  HostStats stats_;
};

PinnedCache& cache() {
  static PinnedCache* c = new PinnedCache();  // outlives every static pinned tensor
  return *c;
}

void freePinned(void* ptr) {
  if (ptr != nullptr) cache().free(ptr);
}

template <class Dst>
void copyTime(Dst& dst, const HostTimeStat& src) {
  dst.total = src.total;
  dst.max = src.max;
  dst.min = src.min;
  dst.count = src.count;
}

// Registered as PrivateUse1's host allocator, so that torch.accelerator's host-memory calls
// (empty_host_cache, host_memory_stats) and ATen's pinned copies reach this cache.
struct PinnedHostAllocator final : at::HostAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    checkNotForked();
    void* ptr = nbytes > 0 ? cache().allocate(nbytes) : nullptr;
    return {ptr, ptr, &freePinned, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &freePinned; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }

  bool record_event(void* ptr, void* /*ctx*/, c10::Stream stream) override {
    if (!cache().contains(ptr) || stream.device_type() != c10::DeviceType::PrivateUse1) {
      return false;
    }
    cache().recordUse(ptr, runtimeStream(stream));
    return true;
  }
  void empty_cache() override { cache().empty(); }
  at::HostStats get_stats() override {
    const HostStats mine = cache().stats();
    at::HostStats out;
    out.allocations = toTorch(mine.allocations);
    out.allocated_bytes = toTorch(mine.allocated_bytes);
    out.active_requests = toTorch(mine.active_requests);
    out.active_bytes = toTorch(mine.active_bytes);
    out.num_host_alloc = mine.num_host_alloc;
    out.num_host_free = mine.num_host_free;
    copyTime(out.host_alloc_time, mine.host_alloc_time);
    copyTime(out.host_free_time, mine.host_free_time);
    return out;
  }
  void reset_accumulated_stats() override { cache().resetAccumulated(); }
  void reset_peak_stats() override { cache().resetPeak(); }
};

PinnedHostAllocator g_pinned;
[[maybe_unused]] const bool g_registered = [] {
  at::setHostAllocator(c10::DeviceType::PrivateUse1, &g_pinned);
  return true;
}();

}  // namespace

c10::Allocator* pinnedHostAllocator() { return &g_pinned; }

bool isPinnedPtr(const void* ptr) { return cache().contains(ptr); }

void recordPinnedUse(const void* ptr, rt::Stream stream) { cache().recordUse(ptr, stream); }

void releaseCapturePinned(uint64_t capture_id, const std::vector<rt::Stream>& replay_streams) {
  cache().releaseCapture(capture_id, replay_streams);
}

void emptyHostCache() { cache().empty(); }

HostStats hostStats() { return cache().stats(); }

void resetAccumulatedHostStats() { cache().resetAccumulated(); }

void resetPeakHostStats() { cache().resetPeak(); }

}  // namespace accel

// A caching allocator over the accel runtime, with CUDACachingAllocator's semantics
// (docs/architecture.md, "The caching allocator"). Knows no torch: the c10::DeviceAllocator
// adapter is in the framework layer (core/device_allocator.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/driver.h"

namespace accel::alloc {

// Raised when a request cannot be served even after freeing the cache. The message gives
// the capacity, what is allocated, what is reserved but unallocated, the fragmentation,
// and the setting that helps.
struct OutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// current/peak/allocated/freed, as in c10::CachingDeviceAllocator::Stat.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;

  void add(int64_t delta) {
    current += delta;
    peak = std::max(peak, current);
    if (delta > 0) {
      allocated += delta;
    } else {
      freed -= delta;
    }
  }
};

// Index into the per-pool stat arrays, as CUDA's StatType: all, small_pool, large_pool.
enum StatType : int { kAggregate = 0, kSmallPool = 1, kLargePool = 2, kNumStatTypes = 3 };
using StatArray = std::array<Stat, kNumStatTypes>;

// Mirrors c10::CachingDeviceAllocator::DeviceStats field by field.
struct DeviceStats {
  StatArray allocation;      // malloc calls
  StatArray segment;         // device mallocs held
  StatArray active;          // blocks in use (allocated or awaiting events)
  StatArray inactive_split;  // free blocks that are part of a split segment
  StatArray allocated_bytes;
  StatArray reserved_bytes;
  StatArray active_bytes;
  StatArray inactive_split_bytes;
  StatArray requested_bytes;      // bytes asked for, before rounding
  int64_t num_alloc_retries = 0;  // times the cache was freed and the malloc retried
  int64_t num_ooms = 0;
  int64_t num_sync_all_streams = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;
  Stat oversize_allocations;  // allocations above max_split_size
  Stat oversize_segments;
  int64_t max_split_size = 0;
};

struct BlockInfo {
  size_t size = 0;
  size_t requested_size = 0;
  bool allocated = false;         // handed out to a user
  bool active = false;            // allocated, or freed but waiting for stream events
  std::shared_ptr<void> context;  // where it was allocated, while history is recorded
};

struct SegmentInfo {
  uintptr_t address = 0;
  size_t total_size = 0;
  size_t allocated_size = 0;
  size_t active_size = 0;
  size_t requested_size = 0;
  uintptr_t stream = 0;
  bool is_large = false;
  std::shared_ptr<void> context;  // where the segment was allocated, while history is recorded
  std::vector<BlockInfo> blocks;  // in address order
};

// Memory history (torch.accel.memory._record_memory_history): the allocator's actions in
// order, as CUDA's TraceEntry. `context` is opaque here: what the recorder returned.
struct TraceEntry {
  enum Action { kAlloc, kFreeRequested, kFreeCompleted, kSegmentAlloc, kSegmentFree, kOom };
  Action action = kAlloc;
  uintptr_t addr = 0;  // for kOom: the bytes the device still had free
  size_t size = 0;     // the requested size (segments: their size)
  uintptr_t stream = 0;
  int64_t time_us = 0;  // Unix time
  std::shared_ptr<void> context;
};

// What the history records. The recorder runs on the allocating thread, outside the
// allocator's lock (it may take other locks, the GIL among them).
struct HistoryConfig {
  bool enabled = false;              // contexts of live blocks and segments
  bool trace = false;                // and the trace of actions
  bool trace_contexts = false;       // trace entries of allocations carry their context
  bool trace_free_contexts = false;  // and those of frees too
  size_t max_entries = SIZE_MAX;     // the trace keeps the newest ones
  std::function<std::shared_ptr<void>()> recorder;  // null: no contexts, only actions
};

// Tunables, CUDA's defaults.
struct Config {
  size_t max_split_size = SIZE_MAX;  // blocks above this are never split (nor cut from cache)
  double memory_fraction = 1.0;      // cap on reserved bytes, as a fraction of capacity
};

// The id of a private pool, as c10's MempoolId_t.
using PoolId = std::pair<uint64_t, uint64_t>;
// Says which allocations a pool takes, by their stream (CUDA filters the same way).
using StreamFilter = std::function<bool(rt::Stream)>;

class CachingAllocator {
 public:
  CachingAllocator(rt::Driver& driver, int device);
  ~CachingAllocator();  // frees cached blocks; live blocks are left to process exit
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Returns a 512-aligned pointer usable on `stream`; size 0 returns nullptr.
  // Throws OutOfMemory. Thread-safe.
  void* malloc(size_t size, rt::Stream stream);
  // Frees a pointer returned by malloc. Reused at once on its own stream; on other
  // streams only after the events of record_stream uses have completed.
  void free(void* ptr);
  // Marks ptr as used on `stream` (not its allocation stream).
  void recordStream(void* ptr, rt::Stream stream);
  // Returns every cached, unused segment to the driver (after synchronising pending frees),
  // including those of released private pools.
  void emptyCache();

  // Private pools (graph pools and torch.accel.MemPool): blocks of a pool's segments serve
  // only allocations routed to that pool, so that memory a graph replays into is never handed
  // to other work. A pool lives while referenced; once released, emptyCache returns its
  // segments to the driver as soon as all their blocks are free.
  void createOrIncrefPool(PoolId id);
  void releasePool(PoolId id);
  int poolUseCount(PoolId id) const;  // 0 when there is no such pool
  // Routes the allocations whose stream `filter` accepts to pool `id` (which this references,
  // creating it if needed) until endAllocateToPool. While any route is active, frees of
  // blocks used on other streams are deferred to the end of the last route, and the allocator
  // neither waits for events nor releases memory on a miss (a capture forbids it).
  void beginAllocateToPool(PoolId id, StreamFilter filter);
  void endAllocateToPool(PoolId id);

  DeviceStats stats() const;
  void resetAccumulatedStats();
  void resetPeakStats();
  std::vector<SegmentInfo> snapshot() const;

  // Starts, changes or (enabled=false) stops recording; clear_trace drops the trace so far.
  void setHistory(HistoryConfig config, bool clear_trace);
  std::vector<TraceEntry> trace() const;

  // Off: every malloc and free goes to the driver (as TORCH_ACCEL_NO_CACHING=1), from now on.
  void setCachingEnabled(bool enabled);
  bool cachingEnabled() const;

  void setMemoryFraction(double fraction);  // 0 < fraction <= 1
  double memoryFraction() const;
  // Above 20 MiB, as CUDA requires. Set it before allocating: the oversize stats count
  // blocks against the limit in force when they change.
  void setMaxSplitSize(size_t bytes);
  // The live allocation containing ptr, for host-side checks: its base pointer and block
  // size (the rounded request, plus any tail too small to split off). False when none.
  bool lookup(const void* ptr, void** base, size_t* size) const;

  // The segment (one driver malloc) that holds the live allocation `ptr`: its base and size.
  bool segmentOf(const void* ptr, void** base, size_t* size) const;

  int device() const { return device_; }
  // Total device capacity seen through the driver.
  size_t capacity() const;

  // Sizes, as in CUDACachingAllocator.
  static constexpr size_t kMinBlockSize = 512;
  static constexpr size_t kSmallSize = 1 << 20;       // largest "small" request
  static constexpr size_t kSmallBuffer = 2 << 20;     // small-pool segment
  static constexpr size_t kLargeBuffer = 20 << 20;    // large-pool segment below 10 MiB
  static constexpr size_t kMinLargeAlloc = 10 << 20;  // above: round to 2 MiB
  static constexpr size_t kRoundLarge = 2 << 20;
  static size_t roundSize(size_t size);
  static size_t segmentSize(size_t rounded);

 private:
  std::shared_ptr<void> gatherContext(bool for_free) const;

  struct Impl;
  Impl* impl_;
  int device_;
};

// When TORCH_ACCEL_NO_CACHING=1, every malloc/free goes straight to the driver (still with
// stream-aware deferral for record_stream). The benchmark baseline.
bool cachingDisabled();

}  // namespace accel::alloc

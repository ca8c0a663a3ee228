// Pinned (page-locked) host memory from the driver, for pin_memory() and for asynchronous
// copies between host and device, cached like CUDA's CachingHostAllocator (see the .cpp).
#pragma once

#include <c10/core/Allocator.h>

#include <cstdint>
#include <vector>

#include "allocator/caching_allocator.h"
#include "runtime/driver.h"

namespace accel {

c10::Allocator* pinnedHostAllocator();
bool isPinnedPtr(const void* ptr);
// An asynchronous copy on `stream` uses the pinned block holding ptr: once freed, the block is
// reused only after the work now queued on `stream` has run.
void recordPinnedUse(const void* ptr, rt::Stream stream);
// A capture's copies read their pinned blocks at every replay of its graph, so the capture holds
// them (recordPinnedUse on a capturing stream). Its graph's reset lets them go, once the replays
// queued on `replay_streams` have run.
void releaseCapturePinned(uint64_t capture_id, const std::vector<rt::Stream>& replay_streams);
// Returns the cached, unused pinned blocks to the driver.
void emptyHostCache();

// torch.cuda.host_memory_stats()'s figures.
using HostStat = alloc::Stat;
struct HostTimeStat {  // microseconds
  int64_t total = 0;
  int64_t max = 0;
  int64_t min = 0;
  int64_t count = 0;
};
struct HostStats {
  HostStat allocations;      // blocks held (in use or cached)
  HostStat allocated_bytes;  // their rounded sizes
  HostStat active_requests;  // blocks in use (by the host, or by queued copies)
  HostStat active_bytes;
  int64_t num_host_alloc = 0;
  int64_t num_host_free = 0;
  HostTimeStat host_alloc_time;
  HostTimeStat host_free_time;
};
HostStats hostStats();
void resetAccumulatedHostStats();
void resetPeakHostStats();

}  // namespace accel

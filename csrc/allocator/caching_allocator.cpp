// The caching allocator. The logic follows c10/cuda/CUDACachingAllocator.cpp: segments are
// driver mallocs, split into blocks; freed blocks are cached in a per-pool set ordered by
// (stream, size, address) and reused best-fit on the same stream; a block used on other
// streams (record_stream) is only reused once events recorded on those streams complete.
#include "allocator/caching_allocator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "allocator/alloc_conf.h"
#include "allocator/block.h"

namespace accel::alloc {

namespace {

void add(Stat& stat, int64_t delta) { stat.add(delta); }

// Every change counts twice: in the aggregate and in the block's own pool.
void add(StatArray& stats, StatType pool, int64_t delta) {
  add(stats[kAggregate], delta);
  add(stats[pool], delta);
}

StatType poolStat(const Block* block) { return block->is_small ? kSmallPool : kLargePool; }

// CUDA's format_size, so OOM messages read the same.
std::string formatSize(size_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  if (bytes <= 1024) {
    os << bytes << " bytes";
  } else if (bytes <= (size_t{1} << 20)) {
    os << bytes / 1024.0 << " KiB";
  } else if (bytes <= (size_t{1} << 30)) {
    os << bytes / 1048576.0 << " MiB";
  } else {
    os << bytes / 1073741824.0 << " GiB";
  }
  return os.str();
}

int64_t nowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Requests above this cannot be rounded without overflow; no device has that much memory,
// so they go straight to the OOM error.
constexpr size_t kMaxRequest = SIZE_MAX / 2;

}  // namespace

struct CachingAllocator::Impl {
  Impl(rt::Driver& driver, int device)
      : driver(driver),
        device(device),
        config(parseAllocConf(std::getenv("TORCH_ACCEL_ALLOC_CONF"))),
        caching_disabled(cachingDisabled()) {
    size_t free_bytes = 0;
    check(driver.memGetInfo(device, &free_bytes, &total_bytes), "memGetInfo");
  }

  rt::Driver& driver;
  const int device;
  size_t total_bytes = 0;
  Config config;
  bool caching_disabled;

  mutable std::mutex mutex;
  DeviceStats stats;

  // Block structs are recycled, never freed while the allocator lives: the deque owns them
  // (and never moves them), `spare` lists the unused ones.
  std::deque<Block> block_storage;
  std::vector<Block*> spare;

  // Declared before the containers that draw their nodes from it, so it outlives them.
  NodePool node_memory;
  FreeBlocks small_blocks{&node_memory};
  FreeBlocks large_blocks{&node_memory};
  // Blocks handed out, by address: free() finds them, lookup() finds the one containing a
  // pointer.
  std::pmr::map<const char*, Block*> allocated{&node_memory};
  // Events recorded by free() on the streams of record_stream, with the block they hold back.
  std::vector<std::pair<rt::Event, Block*>> pending_events;

  // Private pools by id, the routes to them (CUDA's captures_underway), and the frees of
  // blocks used on other streams that wait for the last route to end.
  std::map<PoolId, std::unique_ptr<PrivatePool>> private_pools;
  std::vector<std::pair<PoolId, StreamFilter>> routes;
  std::vector<Block*> deferred_frees;

  // Memory history. The recorder is read outside `mutex` (see gatherContext), under its own.
  HistoryConfig history;
  std::deque<TraceEntry> trace_entries;
  std::atomic<bool> recording{false};
  mutable std::mutex recorder_mutex;
  std::function<std::shared_ptr<void>()> recorder;
  bool free_contexts = false;

  void record(TraceEntry::Action action, uintptr_t addr, size_t size, rt::Stream stream,
              std::shared_ptr<void> context) {
    if (!history.trace) return;
    TraceEntry& e = trace_entries.emplace_back();
    e.action = action;
    e.addr = addr;
    e.size = size;
    e.stream = reinterpret_cast<uintptr_t>(stream);
    e.time_us = nowUs();
    if (history.trace_contexts) e.context = std::move(context);
    if (trace_entries.size() > history.max_entries) trace_entries.pop_front();
  }

  void check(rt::Error error, const char* call) const {
    if (error != rt::Error::Success) {
      throw std::runtime_error("accel:" + std::to_string(device) + " allocator: driver " + call +
                               " failed with error code " +
                               std::to_string(static_cast<int>(error)));
    }
  }

  FreeBlocks& poolOf(const Block* block) {
    if (block->pool != nullptr) {
      return block->is_small ? block->pool->small_blocks : block->pool->large_blocks;
    }
    return block->is_small ? small_blocks : large_blocks;
  }

  // The private pool allocations on `stream` are routed to, or null.
  PrivatePool* routedPool(rt::Stream stream) {
    for (const auto& [id, filter] : routes) {
      if (filter(stream)) return private_pools.at(id).get();
    }
    return nullptr;
  }

  Block* newBlock(char* ptr, size_t size, rt::Stream stream, bool is_small, PrivatePool* pool) {
    Block* block;
    if (spare.empty()) {
      block = &block_storage.emplace_back();
    } else {
      block = spare.back();
      spare.pop_back();
    }
    // stream_uses is always empty here; it keeps its capacity across reuse.
    block->ptr = ptr;
    block->size = size;
    block->requested_size = 0;
    block->stream = stream;
    block->is_small = is_small;
    block->pool = pool;
    block->allocated = false;
    block->event_count = 0;
    block->prev = block->next = nullptr;
    block->context.reset();
    block->segment_context.reset();
    return block;
  }

  // ---- malloc ------------------------------------------------------------------------------

  void* malloc(size_t size, rt::Stream stream, const std::shared_ptr<void>& context) {
    if (size == 0) return nullptr;
    if (size > kMaxRequest) oom(size, stream);
    // During a capture, querying events is not allowed (CUDA skips it too).
    PrivatePool* pool = routes.empty() ? nullptr : routedPool(stream);
    if (routes.empty() && !pending_events.empty()) processEvents();
    const size_t rounded = roundSize(size);
    const bool is_small = rounded <= kSmallSize;
    // Without caching every allocation is its own exactly-sized segment, never split.
    const size_t segment_size = caching_disabled ? rounded : segmentSize(rounded);

    Block* block = findFreeBlock(rounded, stream, is_small, pool);
    if (block == nullptr) block = allocSegment(segment_size, stream, is_small, pool, context);
    if (block == nullptr && routes.empty()) {
      // Wait for the blocks held back by events: one may serve the request from the cache
      // (CUDA skips this second search). Otherwise return the whole cache to the driver and
      // try once more.
      synchronizeEvents();
      block = findFreeBlock(rounded, stream, is_small, pool);
      if (block == nullptr) {
        releaseCached();
        stats.num_alloc_retries++;
        block = allocSegment(segment_size, stream, is_small, pool, context);
      }
    }
    if (block == nullptr) oom(rounded, stream);
    return takeBlock(block, rounded, size, context);
  }

  // Best fit on `stream` in the shared pools or `private_pool`; removes the block from its pool.
  Block* findFreeBlock(size_t rounded, rt::Stream stream, bool is_small,
                       PrivatePool* private_pool) {
    FreeBlocks& pool = private_pool != nullptr
                           ? (is_small ? private_pool->small_blocks : private_pool->large_blocks)
                           : (is_small ? small_blocks : large_blocks);
    Block key;
    key.stream = stream;
    key.size = rounded;
    const auto it = pool.lower_bound(&key);
    if (it == pool.end() || (*it)->stream != stream) return nullptr;
    Block* block = *it;
    // Oversize blocks are kept for oversize requests, and an oversize request does not take a
    // block so much larger that the rest (unsplittable) would be wasted.
    const size_t max_split = config.max_split_size;
    if (rounded < max_split && block->size >= max_split) return nullptr;
    if (rounded >= max_split && block->size >= rounded + kLargeBuffer) return nullptr;
    pool.erase(it);
    return block;
  }

  // A new segment from the driver, or nullptr when the driver (or memory_fraction) says OOM.
  Block* allocSegment(size_t size, rt::Stream stream, bool is_small, PrivatePool* pool,
                      const std::shared_ptr<void>& context) {
    const auto allowed = static_cast<size_t>(config.memory_fraction * total_bytes);
    if (static_cast<size_t>(stats.reserved_bytes[kAggregate].current) + size > allowed) {
      return nullptr;
    }
    void* ptr = nullptr;
    const rt::Error error = driver.malloc(device, &ptr, size);
    if (error == rt::Error::OutOfMemory) return nullptr;
    check(error, "malloc");
    Block* block = newBlock(static_cast<char*>(ptr), size, stream, is_small, pool);
    if (pool != nullptr) pool->segments++;
    add(stats.segment, poolStat(block), 1);
    add(stats.reserved_bytes, poolStat(block), static_cast<int64_t>(size));
    stats.num_device_alloc++;
    if (size >= config.max_split_size) add(stats.oversize_segments, 1);
    if (history.enabled) block->segment_context = context;
    record(TraceEntry::kSegmentAlloc, reinterpret_cast<uintptr_t>(ptr), size, stream, context);
    return block;
  }

  bool shouldSplit(const Block* block, size_t size) const {
    const size_t remaining = block->size - size;
    if (block->is_small) return remaining >= kMinBlockSize;
    // A large-pool remainder of 1 MiB or less would only ever serve small-pool-sized
    // requests, which never look in this pool.
    return size < config.max_split_size && remaining > kSmallSize;
  }

  // Hands out `block` (already out of its pool), cutting off the unused tail when worth it.
  void* takeBlock(Block* block, size_t rounded, size_t requested,
                  const std::shared_ptr<void>& context) {
    const StatType pool = poolStat(block);
    const bool already_split = block->isSplit();
    if (shouldSplit(block, rounded)) {
      Block* rest = newBlock(block->ptr + rounded, block->size - rounded, block->stream,
                             block->is_small, block->pool);
      rest->prev = block;
      rest->next = block->next;
      if (rest->next != nullptr) rest->next->prev = rest;
      block->next = rest;
      block->size = rounded;
      poolOf(rest).insert(rest);
      if (already_split) {
        // An inactive split block shrinks by what is handed out.
        add(stats.inactive_split_bytes, pool, -static_cast<int64_t>(rounded));
      } else {
        // A whole segment becomes split: its tail is a new inactive split block.
        add(stats.inactive_split_bytes, pool, static_cast<int64_t>(rest->size));
        add(stats.inactive_split, pool, 1);
      }
    } else if (already_split) {
      add(stats.inactive_split_bytes, pool, -static_cast<int64_t>(block->size));
      add(stats.inactive_split, pool, -1);
    }
    block->allocated = true;
    block->requested_size = requested;
    allocated.emplace(block->ptr, block);

    const auto bytes = static_cast<int64_t>(block->size);
    add(stats.allocation, pool, 1);
    add(stats.allocated_bytes, pool, bytes);
    add(stats.active, pool, 1);
    add(stats.active_bytes, pool, bytes);
    add(stats.requested_bytes, pool, static_cast<int64_t>(requested));
    if (block->size >= config.max_split_size) add(stats.oversize_allocations, 1);
    if (history.enabled) block->context = context;
    record(TraceEntry::kAlloc, reinterpret_cast<uintptr_t>(block->ptr), requested, block->stream,
           context);
    return block->ptr;
  }

  [[noreturn]] void oom(size_t rounded, rt::Stream stream) {
    stats.num_ooms++;
    size_t free_bytes = 0;
    size_t total = 0;
    driver.memGetInfo(device, &free_bytes, &total);
    record(TraceEntry::kOom, free_bytes, rounded, stream, nullptr);
    const auto allocated_bytes = static_cast<size_t>(stats.allocated_bytes[kAggregate].current);
    const size_t unallocated =
        static_cast<size_t>(stats.reserved_bytes[kAggregate].current) - allocated_bytes;
    size_t largest_free = 0;
    for (const FreeBlocks* pool : {&small_blocks, &large_blocks}) {
      for (const Block* block : *pool) largest_free = std::max(largest_free, block->size);
    }
    const std::string dev = "accel:" + std::to_string(device);
    std::ostringstream msg;
    msg << dev << " out of memory. Tried to allocate " << formatSize(rounded) << ". Device " << dev
        << " has a total capacity of " << formatSize(total) << " of which "
        << formatSize(free_bytes) << " is free. ";
    if (config.memory_fraction < 1.0) {
      const auto allowed = static_cast<size_t>(config.memory_fraction * total);
      msg << "The allocator may reserve " << formatSize(allowed) << " (memory fraction "
          << config.memory_fraction << "). ";
    }
    msg << "Of the allocated memory " << formatSize(allocated_bytes)
        << " is allocated by the allocator, and " << formatSize(unallocated)
        << " is reserved but unallocated. (fragmentation: largest free block "
        << formatSize(largest_free) << " of " << formatSize(unallocated)
        << " reserved-but-unallocated.) If reserved but unallocated memory is large, try "
           "setting TORCH_ACCEL_ALLOC_CONF=max_split_size_mb:N (or call empty_cache()) to "
           "avoid fragmentation.";
    throw OutOfMemory(msg.str());
  }

  // ---- free --------------------------------------------------------------------------------

  auto findAllocated(const void* ptr) {
    const auto it = allocated.find(static_cast<const char*>(ptr));
    if (it == allocated.end()) throw std::invalid_argument("invalid device pointer");
    return it;
  }

  void free(void* ptr, std::shared_ptr<void> context) {
    const auto it = findAllocated(ptr);
    Block* block = it->second;
    allocated.erase(it);
    record(TraceEntry::kFreeRequested, reinterpret_cast<uintptr_t>(block->ptr),
           block->requested_size, block->stream, std::move(context));
    block->allocated = false;
    const StatType pool = poolStat(block);
    add(stats.allocation, pool, -1);
    add(stats.allocated_bytes, pool, -static_cast<int64_t>(block->size));
    if (block->size >= config.max_split_size) add(stats.oversize_allocations, -1);
    if (block->stream_uses.empty()) {
      freeBlock(block);
    } else if (!routes.empty()) {
      deferred_frees.push_back(block);  // no events may be recorded during a capture
    } else {
      insertEvents(block);
    }
  }

  void recordStream(void* ptr, rt::Stream stream) {
    Block* block = findAllocated(ptr)->second;
    // Uses on the allocation stream are ordered with the block's reuse already.
    if (stream == block->stream) return;
    auto& uses = block->stream_uses;
    if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
  }

  // The block stays active until work queued so far on each recorded stream is done.
  void insertEvents(Block* block) {
    for (rt::Stream stream : block->stream_uses) {
      rt::Event event = nullptr;
      check(driver.eventCreate(driver.streamDevice(stream), &event, rt::kEventDisableTiming),
            "eventCreate");
      check(driver.eventRecord(event, stream), "eventRecord");
      block->event_count++;
      pending_events.emplace_back(event, block);
    }
    block->stream_uses.clear();
  }

  // Returns a no-longer-active block to its pool, merged with free neighbours.
  void freeBlock(Block* block) {
    const StatType pool = poolStat(block);
    add(stats.active, pool, -1);
    add(stats.active_bytes, pool, -static_cast<int64_t>(block->size));
    add(stats.requested_bytes, pool, -static_cast<int64_t>(block->requested_size));
    record(TraceEntry::kFreeCompleted, reinterpret_cast<uintptr_t>(block->ptr),
           block->requested_size, block->stream, nullptr);
    block->requested_size = 0;
    block->context.reset();
    int64_t split_blocks = 0;
    int64_t split_bytes = 0;
    for (Block* neighbour : {block->prev, block->next}) {
      const size_t merged = tryMerge(block, neighbour);
      if (merged > 0) {
        split_blocks--;
        split_bytes -= static_cast<int64_t>(merged);
      }
    }
    // Without caching a whole segment goes back to the driver (also one that was split when
    // caching was turned off); a private pool keeps its blocks even then: a graph replays
    // into them.
    const bool release = caching_disabled && block->pool == nullptr && !block->isSplit();
    if (!release) poolOf(block).insert(block);
    if (block->isSplit()) {
      split_blocks++;
      split_bytes += static_cast<int64_t>(block->size);
    }
    add(stats.inactive_split, pool, split_blocks);
    add(stats.inactive_split_bytes, pool, split_bytes);
    if (release) releaseSegment(block);
  }

  // Absorbs `src` into `dst` when src is a free (cached) neighbour; returns the bytes gained.
  size_t tryMerge(Block* dst, Block* src) {
    if (src == nullptr || src->allocated || src->event_count > 0) return 0;
    const size_t merged = src->size;
    poolOf(src).erase(src);
    if (dst->prev == src) {
      dst->ptr = src->ptr;
      dst->segment_context = std::move(src->segment_context);  // dst now starts the segment
      dst->prev = src->prev;
      if (dst->prev != nullptr) dst->prev->next = dst;
    } else {
      dst->next = src->next;
      if (dst->next != nullptr) dst->next->prev = dst;
    }
    dst->size += merged;
    spare.push_back(src);
    return merged;
  }

  void releaseEvent(rt::Event event, Block* block) {
    driver.eventDestroy(event);
    if (--block->event_count == 0) freeBlock(block);
  }

  // Releases the blocks whose events have completed. An event that reports an error will
  // never complete; the work it guards is dead, so its block is released, not leaked.
  void processEvents() {
    size_t kept = 0;
    for (const auto& [event, block] : pending_events) {
      if (driver.eventQuery(event) == rt::Error::NotReady) {
        pending_events[kept++] = {event, block};
      } else {
        releaseEvent(event, block);
      }
    }
    pending_events.resize(kept);
  }

  void synchronizeEvents() {
    stats.num_sync_all_streams++;
    for (const auto& [event, block] : pending_events) {
      driver.eventSynchronize(event);
      releaseEvent(event, block);
    }
    pending_events.clear();
  }

  // `block` is a whole segment already out of every container.
  void releaseSegment(Block* block) {
    check(driver.free(device, block->ptr), "free");
    if (block->pool != nullptr) block->pool->segments--;
    record(TraceEntry::kSegmentFree, reinterpret_cast<uintptr_t>(block->ptr), block->size,
           block->stream, nullptr);
    add(stats.segment, poolStat(block), -1);
    add(stats.reserved_bytes, poolStat(block), -static_cast<int64_t>(block->size));
    stats.num_device_free++;
    if (block->size >= config.max_split_size) add(stats.oversize_segments, -1);
    spare.push_back(block);
  }

  // Frees every cached segment that is entirely free.
  void releaseCached() {
    // A cached block may still be read by work queued on its stream: wait for it, as
    // cudaFree does implicitly.
    check(driver.deviceSynchronize(device), "deviceSynchronize");
    std::vector<FreeBlocks*> pools = {&small_blocks, &large_blocks};
    for (auto& [id, pool] : private_pools) {
      if (pool->use_count == 0)
        pools.insert(pools.end(), {&pool->small_blocks, &pool->large_blocks});
    }
    for (FreeBlocks* pool : pools) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* block = *it;
        if (block->isSplit()) {
          ++it;
        } else {
          it = pool->erase(it);
          releaseSegment(block);
        }
      }
    }
    for (auto it = private_pools.begin(); it != private_pools.end();) {
      const PrivatePool& pool = *it->second;
      it = pool.use_count == 0 && pool.segments == 0 ? private_pools.erase(it) : std::next(it);
    }
  }

  // ---- private pools -----------------------------------------------------------------------

  void createOrIncrefPool(PoolId id) {
    auto it = private_pools.find(id);
    if (it == private_pools.end()) {
      private_pools.emplace(id, std::make_unique<PrivatePool>(id, &node_memory));
    } else {
      it->second->use_count++;
    }
  }

  void releasePool(PoolId id) {
    auto it = private_pools.find(id);
    if (it == private_pools.end() || it->second->use_count == 0) {
      throw std::invalid_argument("releasePool: pool (" + std::to_string(id.first) + ", " +
                                  std::to_string(id.second) + ") is not referenced");
    }
    PrivatePool& pool = *it->second;
    if (--pool.use_count == 0 && pool.segments == 0) private_pools.erase(it);
  }

  void beginAllocateToPool(PoolId id, StreamFilter filter) {
    for (const auto& route : routes) {
      if (route.first == id) {
        throw std::invalid_argument("beginAllocateToPool: already routing to pool (" +
                                    std::to_string(id.first) + ", " + std::to_string(id.second) +
                                    ")");
      }
    }
    createOrIncrefPool(id);
    routes.emplace_back(id, std::move(filter));
  }

  void endAllocateToPool(PoolId id) {
    const auto it = std::find_if(routes.begin(), routes.end(),
                                 [&](const auto& route) { return route.first == id; });
    if (it == routes.end()) {
      throw std::invalid_argument("endAllocateToPool: not routing to pool (" +
                                  std::to_string(id.first) + ", " + std::to_string(id.second) +
                                  ")");
    }
    routes.erase(it);
    if (routes.empty()) {
      for (Block* block : deferred_frees) insertEvents(block);
      deferred_frees.clear();
    }
  }

  // ---- inspection --------------------------------------------------------------------------

  std::vector<SegmentInfo> snapshot() const {
    // Every block is allocated, cached or held back by events; segments start at the blocks
    // with no predecessor.
    std::vector<const Block*> heads;
    const auto note = [&heads](const Block* block) {
      if (block->prev == nullptr) heads.push_back(block);
    };
    for (const auto& entry : allocated) note(entry.second);
    for (const FreeBlocks* pool : {&small_blocks, &large_blocks}) {
      for (const Block* block : *pool) note(block);
    }
    for (const auto& [id, pool] : private_pools) {
      for (const FreeBlocks* blocks : {&pool->small_blocks, &pool->large_blocks}) {
        for (const Block* block : *blocks) note(block);
      }
    }
    for (const auto& entry : pending_events) note(entry.second);
    for (const Block* block : deferred_frees) note(block);
    std::sort(heads.begin(), heads.end(),
              [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());

    std::vector<SegmentInfo> segments;
    segments.reserve(heads.size());
    for (const Block* head : heads) {
      SegmentInfo& segment = segments.emplace_back();
      segment.address = reinterpret_cast<uintptr_t>(head->ptr);
      segment.stream = reinterpret_cast<uintptr_t>(head->stream);
      segment.is_large = !head->is_small;
      segment.context = head->segment_context;
      for (const Block* block = head; block != nullptr; block = block->next) {
        BlockInfo info;
        info.size = block->size;
        info.requested_size = block->requested_size;
        info.allocated = block->allocated;
        info.active = block->allocated || block->event_count > 0;
        info.context = block->context;
        segment.total_size += info.size;
        if (info.allocated) segment.allocated_size += info.size;
        if (info.active) {
          segment.active_size += info.size;
          segment.requested_size += info.requested_size;
        }
        segment.blocks.push_back(info);
      }
    }
    return segments;
  }

  const Block* containing(const void* ptr) const {
    const char* p = static_cast<const char*>(ptr);
    auto it = allocated.upper_bound(p);
    if (it == allocated.begin()) return nullptr;
    const Block* block = (--it)->second;
    return p < block->ptr + block->size ? block : nullptr;
  }

  bool lookup(const void* ptr, void** base, size_t* size) const {
    const Block* block = containing(ptr);
    if (block == nullptr) return false;
    *base = block->ptr;
    *size = block->size;
    return true;
  }

  bool segmentOf(const void* ptr, void** base, size_t* size) const {
    const Block* block = containing(ptr);
    if (block == nullptr) return false;
    while (block->prev != nullptr) block = block->prev;
    *base = block->ptr;
    *size = 0;
    for (; block != nullptr; block = block->next) *size += block->size;
    return true;
  }
};

// ---- public interface: take the lock, delegate -----------------------------------------

CachingAllocator::CachingAllocator(rt::Driver& driver, int device)
    : impl_(new Impl(driver, device)), device_(device) {}

CachingAllocator::~CachingAllocator() {
  try {
    emptyCache();
  } catch (...) {
    // A destructor cannot report, and at process exit the driver may already be gone.
  }
  delete impl_;
}

std::shared_ptr<void> CachingAllocator::gatherContext(bool for_free) const {
  if (!impl_->recording.load(std::memory_order_relaxed)) return nullptr;
  std::function<std::shared_ptr<void>()> recorder;
  {
    std::lock_guard<std::mutex> lock(impl_->recorder_mutex);
    if (for_free && !impl_->free_contexts) return nullptr;
    recorder = impl_->recorder;
  }
  return recorder ? recorder() : nullptr;
}

void* CachingAllocator::malloc(size_t size, rt::Stream stream) {
  std::shared_ptr<void> context = size > 0 ? gatherContext(false) : nullptr;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->malloc(size, stream, context);
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::shared_ptr<void> context = gatherContext(true);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->free(ptr, std::move(context));
}

void CachingAllocator::setHistory(HistoryConfig config, bool clear_trace) {
  {
    std::lock_guard<std::mutex> lock(impl_->recorder_mutex);
    impl_->recorder = config.enabled ? config.recorder : nullptr;
    impl_->free_contexts = config.trace_free_contexts;
    impl_->recording.store(config.enabled && config.recorder != nullptr);
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  config.recorder = nullptr;  // only gatherContext calls it
  if (!config.enabled) config.trace = false;
  impl_->history = std::move(config);
  if (clear_trace) impl_->trace_entries.clear();
  while (impl_->trace_entries.size() > impl_->history.max_entries) {
    impl_->trace_entries.pop_front();
  }
}

std::vector<TraceEntry> CachingAllocator::trace() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return {impl_->trace_entries.begin(), impl_->trace_entries.end()};
}

void CachingAllocator::recordStream(void* ptr, rt::Stream stream) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->recordStream(ptr, stream);
}

void CachingAllocator::emptyCache() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->synchronizeEvents();
  impl_->releaseCached();
}

DeviceStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  DeviceStats stats = impl_->stats;
  // SIZE_MAX (no limit) reads as -1, as in torch.cuda.memory_stats().
  stats.max_split_size = static_cast<int64_t>(impl_->config.max_split_size);
  return stats;
}

namespace {

template <typename Fn>
void forEachStat(DeviceStats& stats, Fn fn) {
  for (StatArray* array : {&stats.allocation, &stats.segment, &stats.active, &stats.inactive_split,
                           &stats.allocated_bytes, &stats.reserved_bytes, &stats.active_bytes,
                           &stats.inactive_split_bytes, &stats.requested_bytes}) {
    for (Stat& stat : *array) fn(stat);
  }
  fn(stats.oversize_allocations);
  fn(stats.oversize_segments);
}

}  // namespace

void CachingAllocator::resetAccumulatedStats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  DeviceStats& stats = impl_->stats;
  forEachStat(stats, [](Stat& stat) { stat.allocated = stat.freed = 0; });
  stats.num_alloc_retries = 0;
  stats.num_ooms = 0;
  stats.num_sync_all_streams = 0;
  stats.num_device_alloc = 0;
  stats.num_device_free = 0;
}

void CachingAllocator::resetPeakStats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  forEachStat(impl_->stats, [](Stat& stat) { stat.peak = stat.current; });
}

std::vector<SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->snapshot();
}

void CachingAllocator::setCachingEnabled(bool enabled) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->caching_disabled = !enabled;
}

bool CachingAllocator::cachingEnabled() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return !impl_->caching_disabled;
}

void CachingAllocator::setMemoryFraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw std::invalid_argument("memory fraction must be in (0, 1], got " +
                                std::to_string(fraction));
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->config.memory_fraction = fraction;
}

void CachingAllocator::setMaxSplitSize(size_t bytes) {
  if (bytes <= kLargeBuffer) {
    throw std::invalid_argument("max_split_size must be above 20 MiB, got " +
                                std::to_string(bytes) + " bytes");
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->config.max_split_size = bytes;
}

bool CachingAllocator::lookup(const void* ptr, void** base, size_t* size) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->lookup(ptr, base, size);
}

bool CachingAllocator::segmentOf(const void* ptr, void** base, size_t* size) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->segmentOf(ptr, base, size);
}

double CachingAllocator::memoryFraction() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->config.memory_fraction;
}

size_t CachingAllocator::capacity() const { return impl_->total_bytes; }

void CachingAllocator::createOrIncrefPool(PoolId id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->createOrIncrefPool(id);
}

void CachingAllocator::releasePool(PoolId id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->releasePool(id);
}

int CachingAllocator::poolUseCount(PoolId id) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const auto it = impl_->private_pools.find(id);
  return it == impl_->private_pools.end() ? 0 : it->second->use_count;
}

void CachingAllocator::beginAllocateToPool(PoolId id, StreamFilter filter) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->beginAllocateToPool(id, std::move(filter));
}

void CachingAllocator::endAllocateToPool(PoolId id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->endAllocateToPool(id);
}

size_t CachingAllocator::roundSize(size_t size) {
  if (size < kMinBlockSize) return kMinBlockSize;
  return (size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t CachingAllocator::segmentSize(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

}  // namespace accel::alloc

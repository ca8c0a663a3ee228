#include "distributed/pinned_staging_pool.h"

#include "core/rt_check.h"

namespace accel::dist {
namespace {

constexpr size_t kMinBlock = 4096;

size_t sizeClass(size_t bytes) {
  size_t size = kMinBlock;
  while (size < bytes) size <<= 1;
  return size;
}

}  // namespace

PinnedStagingPool& PinnedStagingPool::instance() {
  static PinnedStagingPool* pool = new PinnedStagingPool();  // outlives every stream
  return *pool;
}

PinnedStagingPool::Block PinnedStagingPool::acquire(size_t bytes) {
  if (bytes == 0) return {};
  const size_t size = sizeClass(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.acquires;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* ptr = it->second.back();
      it->second.pop_back();
      ++stats_.reuses;
      stats_.in_use_bytes += size;
      return {ptr, size};
    }
  }
  void* ptr = nullptr;
  ACCEL_RT_CHECK(rt::driver().mallocHost(&ptr, size), -1);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.host_allocs;
  stats_.cached_bytes += size;
  stats_.in_use_bytes += size;
  return {ptr, size};
}

void PinnedStagingPool::release(Block block) {
  if (block.ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_[block.size].push_back(block.ptr);
  stats_.in_use_bytes -= block.size;
}

void PinnedStagingPool::emptyCache() {
  std::map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks.swap(free_);
    for (const auto& [size, ptrs] : blocks) {
      stats_.cached_bytes -= size * ptrs.size();
      stats_.host_frees += static_cast<int64_t>(ptrs.size());
    }
  }
  for (const auto& [size, ptrs] : blocks) {
    for (void* ptr : ptrs) rt::driver().freeHost(ptr);
  }
}

PinnedStagingPool::Stats PinnedStagingPool::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace accel::dist

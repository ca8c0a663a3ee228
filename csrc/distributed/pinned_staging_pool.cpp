#include "distributed/pinned_staging_pool.h"

#include <algorithm>

#include "core/rt_check.h"

namespace accel::dist {
namespace {

constexpr size_t kMinBlock = 4096;

size_t sizeClass(size_t bytes) {
  size_t size = kMinBlock;
  while (size < bytes) size <<= 1;
  return size;
}

void* takeLast(std::vector<void*>& blocks) {
  void* ptr = blocks.back();
  blocks.pop_back();
  return ptr;
}

}  // namespace

PinnedStagingPool& PinnedStagingPool::instance() {
  static PinnedStagingPool* pool = new PinnedStagingPool();  // outlives every stream
  return *pool;
}

PinnedStagingPool::Block PinnedStagingPool::acquire(size_t bytes, const void* stream) {
  if (bytes == 0) return {};
  const size_t size = sizeClass(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.acquires;
    void* ptr = nullptr;
    auto retired = retired_.find({stream, size});
    if (retired != retired_.end() && !retired->second.empty()) {
      ptr = takeLast(retired->second);
    } else if (auto free = free_.find(size); free != free_.end() && !free->second.empty()) {
      ptr = takeLast(free->second);
    }
    if (ptr != nullptr) {
      ++stats_.reuses;
      if (owners_[ptr].uses++ == 0) stats_.in_use_bytes += size;
      return {ptr, size};
    }
  }
  void* ptr = nullptr;
  ACCEL_RT_CHECK(rt::driver().mallocHost(&ptr, size), -1);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.host_allocs;
  stats_.cached_bytes += size;
  stats_.in_use_bytes += size;
  owners_[ptr].uses = 1;
  return {ptr, size};
}

void PinnedStagingPool::retire(Block block, const void* stream) {
  if (block.ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  owners_[block.ptr].stream = stream;
  retired_[{stream, block.size}].push_back(block.ptr);
}

void PinnedStagingPool::release(Block block) {
  if (block.ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto owner = owners_.find(block.ptr);
  if (owner == owners_.end() || --owner->second.uses > 0) return;
  // Passed by its stream, and retired there (a later batch on it would have taken it back).
  std::vector<void*>& retired = retired_[{owner->second.stream, block.size}];
  retired.erase(std::remove(retired.begin(), retired.end(), block.ptr), retired.end());
  owners_.erase(owner);
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

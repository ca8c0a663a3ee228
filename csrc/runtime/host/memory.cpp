#include "runtime/host/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include "runtime/host/device_access.h"

namespace accel::rt::host {
namespace {

// Capacity is charged as the caching allocator sees it: requests rounded up to 512 bytes.
size_t charged(size_t size) { return (size + 511) & ~size_t{511}; }

size_t pageRounded(size_t size) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (size + page - 1) / page * page;
}

}  // namespace

DeviceMemory::DeviceMemory(int devices, size_t capacity, bool protect)
    : capacity_(capacity), protect_(protect), used_(devices, 0) {}

DeviceMemory::~DeviceMemory() {
  for (const auto& [base, a] : allocations_) {
    if (protect_) unregisterProtected(reinterpret_cast<void*>(base));
    munmap(reinterpret_cast<void*>(base), a.mapped);
  }
}

Error DeviceMemory::allocate(int device, size_t size, void** ptr) {
  if (ptr == nullptr) return Error::InvalidValue;
  *ptr = nullptr;
  if (device < 0 || device >= static_cast<int>(used_.size())) return Error::InvalidDevice;
  if (size == 0) return Error::Success;  // as cudaMalloc: a null pointer, nothing charged
  if (size > capacity_) return Error::OutOfMemory;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (charged(size) > capacity_ - used_[device]) return Error::OutOfMemory;
    used_[device] += charged(size);  // reserve before mapping so concurrent callers see it
  }
  const size_t mapped = pageRounded(size);
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  std::lock_guard<std::mutex> lock(mu_);
  if (base == MAP_FAILED) {
    used_[device] -= charged(size);
    return Error::OutOfMemory;
  }
  if (protect_) registerProtected(base, mapped);
  allocations_.emplace(reinterpret_cast<uintptr_t>(base), Allocation{size, mapped, device});
  *ptr = base;
  return Error::Success;
}

Error DeviceMemory::release(int device, void* ptr) {
  if (ptr == nullptr) return Error::Success;
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == allocations_.end() || it->second.device != device) return Error::InvalidValue;
    a = it->second;
    allocations_.erase(it);
    used_[device] -= charged(a.size);
    if (protect_) unregisterProtected(ptr);
  }
  munmap(ptr, a.mapped);
  return Error::Success;
}

std::map<uintptr_t, DeviceMemory::Allocation>::const_iterator DeviceMemory::find(
    const void* ptr) const {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = allocations_.upper_bound(p);
  if (it == allocations_.begin()) return allocations_.end();
  --it;
  return p < it->first + it->second.size ? it : allocations_.end();
}

int DeviceMemory::owner(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = find(ptr);
  return it == allocations_.end() ? -1 : it->second.device;
}

bool DeviceMemory::contains(const void* ptr, size_t bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = find(ptr);
  if (it == allocations_.end()) return false;
  const auto offset = reinterpret_cast<uintptr_t>(ptr) - it->first;
  return bytes <= it->second.size - offset;
}

size_t DeviceMemory::used(int device) const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_[device];
}

}  // namespace accel::rt::host

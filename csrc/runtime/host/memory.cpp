#include "runtime/host/memory.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/host/device_access.h"

namespace accel::rt::host {
namespace {

// Capacity is charged as the caching allocator sees it: requests rounded up to 512 bytes.
size_t charged(size_t size) { return (size + 511) & ~size_t{511}; }

size_t pageRounded(size_t size) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (size + page - 1) / page * page;
}

// Device memory may hold a quarter of the process's descriptors (at most 4096): the rest stay
// for the program's files and sockets.
int fdBudget() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 4096;
  return static_cast<int>(std::min<rlim_t>(4096, limit.rlim_cur / 4));
}

// A new mapping of `mapped` bytes: a memfd when *fd_budget allows (its fd in *fd), anonymous
// memory otherwise (*fd = -1).
void* mapNew(size_t mapped, int* fd_budget, int* fd) {
  *fd = -1;
  if (*fd_budget > 0) {
    const int f = memfd_create("accel-device-memory", MFD_CLOEXEC);
    if (f >= 0 && ftruncate(f, static_cast<off_t>(mapped)) == 0) {
      void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
      if (base != MAP_FAILED) {
        --*fd_budget;
        *fd = f;
        return base;
      }
    }
    if (f >= 0) close(f);
  }
  return mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

}  // namespace

DeviceMemory::DeviceMemory(int devices, size_t capacity, bool protect)
    : capacity_(capacity), protect_(protect), used_(devices, 0), fds_left_(fdBudget()) {}

DeviceMemory::~DeviceMemory() {
  for (const auto& [base, a] : allocations_) unmap(reinterpret_cast<void*>(base), a);
}

void DeviceMemory::unmap(void* base, const Allocation& a) {
  if (protect_) unregisterProtected(base);
  munmap(base, a.mapped);
  if (a.fd >= 0) close(a.fd);
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
  int fd_budget = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fd_budget = fds_left_ > 0 ? 1 : 0;
    fds_left_ -= fd_budget;  // taken now; given back below if unused
  }
  int fd = -1;
  void* base = mapNew(mapped, &fd_budget, &fd);
  std::lock_guard<std::mutex> lock(mu_);
  fds_left_ += fd_budget;
  if (base == MAP_FAILED) {
    used_[device] -= charged(size);
    return Error::OutOfMemory;
  }
  if (protect_) registerProtected(base, mapped);
  allocations_.emplace(reinterpret_cast<uintptr_t>(base),
                       Allocation{size, mapped, device, fd, /*imported=*/false});
  *ptr = base;
  return Error::Success;
}

Error DeviceMemory::sharedFile(const void* ptr, int* fd, size_t* size) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == allocations_.end()) return Error::InvalidValue;
  if (it->second.fd < 0) return Error::NotSupported;
  *fd = it->second.fd;
  *size = it->second.size;
  return Error::Success;
}

Error DeviceMemory::import(int device, int fd, size_t size, void** ptr) {
  if (ptr == nullptr || fd < 0 || size == 0) return Error::InvalidValue;
  if (device < 0 || device >= static_cast<int>(used_.size())) return Error::InvalidDevice;
  const size_t mapped = pageRounded(size);
  const int own = dup(fd);  // kept, so the memory can be shared on again
  if (own < 0) return Error::InvalidValue;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
  if (base == MAP_FAILED) {
    close(own);
    return Error::InvalidValue;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (protect_) registerProtected(base, mapped);
  allocations_.emplace(reinterpret_cast<uintptr_t>(base),
                       Allocation{size, mapped, device, own, /*imported=*/true});
  *ptr = base;
  return Error::Success;
}

Error DeviceMemory::closeImported(void* ptr) {
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == allocations_.end() || !it->second.imported) return Error::InvalidValue;
    a = it->second;
    allocations_.erase(it);
  }
  unmap(ptr, a);
  return Error::Success;
}

Error DeviceMemory::release(int device, void* ptr) {
  if (ptr == nullptr) return Error::Success;
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == allocations_.end() || it->second.device != device || it->second.imported) {
      return Error::InvalidValue;
    }
    a = it->second;
    allocations_.erase(it);
    used_[device] -= charged(a.size);
    if (a.fd >= 0) ++fds_left_;
  }
  unmap(ptr, a);
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

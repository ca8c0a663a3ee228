// Simulated device memory: shared-memory mappings (page aligned, so at least 512-byte aligned,
// and returned to the OS on free) with a fixed capacity per device. Each allocation is a memfd,
// so another process can map it (interprocess sharing, as cudaIpc*); past a budget of open
// descriptors, allocations are anonymous memory that cannot be shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/driver.h"

namespace accel::rt::host {

class DeviceMemory {
 public:
  DeviceMemory(int devices, size_t capacity, bool protect);
  ~DeviceMemory();  // unmaps whatever is still allocated
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // OutOfMemory when `size` does not fit in what is left of the device's capacity.
  Error allocate(int device, size_t size, void** ptr);
  // InvalidValue unless ptr is the start of an allocation of `device`. Null is a no-op.
  Error release(int device, void* ptr);
  // The device whose allocation contains ptr (interior pointers too), or -1.
  int owner(const void* ptr) const;
  // Whether [ptr, ptr + bytes) lies inside one allocation.
  bool contains(const void* ptr, size_t bytes) const;

  // The memfd behind the allocation starting at ptr (owned here, valid while it lives) and its
  // size; NotSupported when it has none, InvalidValue when ptr starts no allocation.
  Error sharedFile(const void* ptr, int* fd, size_t* size) const;
  // Maps another process's allocation (its memfd, `size` bytes) as memory of `device`; not
  // charged to the capacity. closeImported unmaps it.
  Error import(int device, int fd, size_t size, void** ptr);
  Error closeImported(void* ptr);
  size_t capacity() const { return capacity_; }
  size_t used(int device) const;

 private:
  struct Allocation {
    size_t size;    // as requested: the range copies may touch
    size_t mapped;  // page-rounded length of the mapping
    int device;
    int fd;         // its memfd, or -1 (anonymous memory)
    bool imported;  // mapped from another process's allocation
  };
  void unmap(void* base, const Allocation& a);
  // The allocation containing ptr, or end().
  std::map<uintptr_t, Allocation>::const_iterator find(const void* ptr) const;

  const size_t capacity_;
  const bool protect_;
  mutable std::mutex mu_;
  std::map<uintptr_t, Allocation> allocations_;  // keyed by base address
  std::vector<size_t> used_;                     // bytes charged, per device
  int fds_left_;                                 // memfds this memory may still hold open
};

}  // namespace accel::rt::host

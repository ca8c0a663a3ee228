#include "core/ipc.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/device_allocator.h"
#include "core/rt_check.h"

namespace accel {
namespace {

// A new open file description of the file behind fd: locks taken on it belong to it alone.
int reopen(int fd) {
  return open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDWR | O_CLOEXEC);
}

bool lockByte(int fd, short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 1;
  return fcntl(fd, F_OFD_SETLK, &lock) == 0;
}

// ---- producer ---------------------------------------------------------------------------

struct Sent {
  c10::Storage storage;  // kept alive for the consumer
  int lease_fd;
};

std::mutex g_sent_mu;
std::vector<Sent> g_sent;

// Received (lease byte set) and no consumer lock left: no consumer needs it any more.
bool released(int lease_fd) {
  char flag = 0;
  if (pread(lease_fd, &flag, 1, 0) != 1 || flag == 0) return false;
  const int probe = reopen(lease_fd);
  if (probe < 0) return false;
  const bool free = lockByte(probe, F_WRLCK);
  close(probe);  // drops the probe's lock
  return free;
}

void collectLocked() {
  size_t kept = 0;
  for (Sent& s : g_sent) {
    if (released(s.lease_fd)) {
      close(s.lease_fd);
    } else {
      g_sent[kept++] = std::move(s);
    }
  }
  g_sent.resize(kept);
}

// ---- consumer ---------------------------------------------------------------------------

// The segments this process mapped, by id: one mapping per segment, however many storages.
struct Mapping {
  void* base = nullptr;
  int refs = 0;
};
std::mutex g_open_mu;
std::map<uint64_t, Mapping> g_open;

struct Imported {
  uint64_t id;
  int lock_fd;
  int device;
  rt::IpcMemHandle segment;  // to share it on again
  size_t offset;
};

void releaseImported(void* ctx) {
  auto* imported = static_cast<Imported*>(ctx);
  close(imported->lock_fd);  // the producer may now let the memory go
  {
    std::lock_guard<std::mutex> lock(g_open_mu);
    auto it = g_open.find(imported->id);
    if (it != g_open.end() && --it->second.refs == 0) {
      rt::driver().ipcCloseMemHandle(it->second.base);
      g_open.erase(it);
    }
  }
  delete imported;
}

}  // namespace

SharedStorage shareStorage(const c10::Storage& storage) {
  const c10::DataPtr& data = storage.data_ptr();
  const int device = storage.device().index();
  SharedStorage out;
  out.device = device;
  out.nbytes = storage.nbytes();
  void* base = nullptr;
  if (data.get_deleter() == &releaseImported) {
    const auto* imported = static_cast<const Imported*>(data.get_context());
    out.segment = imported->segment;
    base = static_cast<char*>(data.get()) - imported->offset;
  } else {
    size_t size = 0;
    TORCH_CHECK(deviceCachingAllocator(device).segmentOf(data.get(), &base, &size),
                "this accel storage was not allocated by accel's caching allocator, so it "
                "cannot be shared with another process");
    const rt::Error err = rt::driver().ipcGetMemHandle(base, &out.segment);
    TORCH_CHECK(err != rt::Error::NotSupported, "the memory of this accel:", device,
                " tensor cannot be shared with another process: driver '", rt::driver().name(),
                "' allocated it as private memory (the process had no file descriptor to "
                "spare for it; raise `ulimit -n`)");
    ACCEL_RT_CHECK(err, device);
    out.segment.size = size;
  }
  out.offset = static_cast<size_t>(static_cast<char*>(data.get()) - static_cast<char*>(base));
  ACCEL_RT_CHECK(rt::driver().deviceSynchronize(device), device);

  const int lease = memfd_create("accel-ipc-lease", MFD_CLOEXEC);
  TORCH_CHECK(lease >= 0 && ftruncate(lease, 1) == 0,
              "cannot share an accel tensor: creating its lease failed: ", std::strerror(errno));
  out.lease_fd = lease;
  std::lock_guard<std::mutex> lock(g_sent_mu);
  collectLocked();
  g_sent.push_back(Sent{storage, lease});
  return out;
}

c10::Storage openSharedStorage(int device, const rt::IpcMemHandle& segment, size_t offset,
                               size_t nbytes, int lease_fd) {
  checkDeviceIndex(static_cast<c10::DeviceIndex>(device));
  TORCH_CHECK(offset + nbytes <= segment.size || segment.size == 0, "shared accel storage of ",
              nbytes, " bytes at offset ", offset, " does not fit its segment of ", segment.size,
              " bytes");
  const int lock_fd = reopen(lease_fd);
  TORCH_CHECK(lock_fd >= 0 && lockByte(lock_fd, F_RDLCK),
              "cannot receive an accel tensor: locking its lease failed: ", std::strerror(errno));
  char flag = 1;
  if (pwrite(lock_fd, &flag, 1, 0) != 1) {
    close(lock_fd);
    TORCH_CHECK(false, "cannot receive an accel tensor: ", std::strerror(errno));
  }
  void* base = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_open_mu);
    Mapping& m = g_open[segment.id];
    if (m.refs == 0) {
      const rt::Error err = rt::driver().ipcOpenMemHandle(device, segment, &m.base);
      if (err != rt::Error::Success) {
        g_open.erase(segment.id);
        close(lock_fd);
        ACCEL_RT_CHECK(err, device);
      }
    }
    m.refs++;
    base = m.base;
  }
  auto* ctx = new Imported{segment.id, lock_fd, device, segment, offset};
  c10::DataPtr data(
      static_cast<char*>(base) + offset, ctx, &releaseImported,
      c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device)));
  // Not resizable: a resize would reach past the producer's block.
  return c10::Storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data),
                      /*allocator=*/nullptr, /*resizable=*/false);
}

void acknowledgeLease(int lease_fd) {
  char flag = 1;
  TORCH_CHECK(pwrite(lease_fd, &flag, 1, 0) == 1,
              "cannot acknowledge an accel tensor: ", std::strerror(errno));
}

void collectShared() {
  std::lock_guard<std::mutex> lock(g_sent_mu);
  collectLocked();
}

}  // namespace accel

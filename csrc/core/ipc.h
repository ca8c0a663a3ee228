// Accel storages across processes (torch.multiprocessing), as CUDA's IPC: the producer names
// the driver allocation (segment) that holds a storage and keeps the storage alive while a
// consumer uses it; the consumer maps the segment once and wraps its part as a storage.
//
// Lifetime across processes uses a lease per send: a one-byte memfd that the producer creates
// and the consumer receives. The consumer takes a read lock on it (an open-file-description
// lock, so it goes away with the consumer's storage or the consumer process) and sets the byte;
// the producer keeps its storage until the byte is set and no lock is left (collectShared).
#pragma once

#include <c10/core/Storage.h>

#include "runtime/driver.h"

namespace accel {

struct SharedStorage {
  int device = 0;
  rt::IpcMemHandle segment;  // the driver allocation holding the storage
  size_t offset = 0;         // of the storage's data in it
  size_t nbytes = 0;
  int lease_fd = -1;  // the producer's lease (it keeps the descriptor)
};

// Raises a clear error when the storage cannot be shared. Waits for the work queued on the
// storage's device, so the consumer sees its data complete.
SharedStorage shareStorage(const c10::Storage& storage);
// In the consumer: the storage a producer shared. `lease_fd` is the consumer's copy of the
// lease; the caller keeps ownership of it and of segment.fd.
c10::Storage openSharedStorage(int device, const rt::IpcMemHandle& segment, size_t offset,
                               size_t nbytes, int lease_fd);
// A send whose storage this process already opened: lets the producer drop that send's hold.
void acknowledgeLease(int lease_fd);
// In the producer: releases the storages no consumer holds any more (torch.accel.ipc_collect).
void collectShared();

}  // namespace accel

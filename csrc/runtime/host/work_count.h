// Per thread, the number of work items (kernels, copies, memsets) queued on host streams:
// what Driver::threadWorkCount reports.
#pragma once

#include <cstdint>

namespace accel::rt::host {

inline thread_local uint64_t t_work_queued = 0;

inline void noteWorkQueued() { ++t_work_queued; }

}  // namespace accel::rt::host

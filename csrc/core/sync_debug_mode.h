// torch.accel.set_sync_debug_mode, as torch.cuda's: a listener of core/sync_point.h that warns
// (1) or raises (2) at every host synchronisation.
#pragma once

namespace accel {

void setSyncDebugMode(int mode);
int syncDebugMode();

}  // namespace accel

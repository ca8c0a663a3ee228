// Fork tracking shared by the drivers (inBadFork itself is declared in driver.h).
#pragma once

namespace accel::rt {

// Registers, once, the pthread_atfork child handler that makes inBadFork() true in children.
// Called before a driver starts its first thread (or GPU context): a fork before that is
// harmless, as with CUDA.
void watchForFork();

}  // namespace accel::rt

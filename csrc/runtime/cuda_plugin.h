// Loading of the CUDA driver plugin (libaccel_cuda.so). The public queries about it
// (cudaPluginBuilt, cudaPluginStatus, cudaPluginSymbol) are declared in driver.h.
#pragma once

#include "runtime/driver.h"

namespace accel::rt {

// The plugin's driver, or nullptr when it is missing, fails to load or finds no GPU
// (cudaPluginStatus() says which). Loads the plugin on first call; thread-safe.
Driver* cudaPluginDriver();

}  // namespace accel::rt

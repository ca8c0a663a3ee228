// Where the plugins (libaccel_cuda.so, libaccel_nccl.so) are installed: next to the binary
// that holds the runtime (_C.so in the wheel, a test executable in a build tree).
#pragma once

#include <string>

namespace accel::rt {

std::string pluginPath(const char* file);
bool fileExists(const std::string& path);

}  // namespace accel::rt

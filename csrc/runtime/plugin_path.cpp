#include "runtime/plugin_path.h"

#include <dlfcn.h>
#include <sys/stat.h>

namespace accel::rt {

std::string pluginPath(const char* file) {
  // The binary holding this code, found through one of its own symbols.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&pluginPath), &info) == 0 || info.dli_fname == nullptr) {
    return file;
  }
  std::string self = info.dli_fname;
  const auto slash = self.rfind('/');
  return slash == std::string::npos ? file : self.substr(0, slash + 1) + file;
}

bool fileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace accel::rt

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "runtime/host/host_driver.h"

namespace accel::rt::host {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

[[noreturn]] void malformed(const char* name, const char* value, const char* expected) {
  throw std::runtime_error(std::string(name) + "='" + value + "': expected " + expected);
}

// "1073741824", "512M", "8G", "64k".
size_t parseBytes(const char* name, const char* value) {
  char* rest = const_cast<char*>(value);
  const bool digits = std::isdigit(static_cast<unsigned char>(*value)) != 0;
  const unsigned long long n = digits ? std::strtoull(value, &rest, 10) : 0;
  size_t unit = 0;  // stays 0 on an unknown suffix
  switch (*rest) {
    case '\0': unit = 1; break;
    case 'k':
    case 'K':
      unit = size_t{1} << 10;
      ++rest;
      break;
    case 'm':
    case 'M':
      unit = size_t{1} << 20;
      ++rest;
      break;
    case 'g':
    case 'G':
      unit = size_t{1} << 30;
      ++rest;
      break;
  }
  if (n == 0 || unit == 0 || *rest != '\0' || n > SIZE_MAX / unit) {
    malformed(name, value, "a positive byte count, optionally with a K, M or G suffix");
  }
  return static_cast<size_t>(n) * unit;
}

size_t defaultCapacity() {
  const size_t ram =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return std::min(size_t{8} << 30, ram / 4);
}

bool flag(const char* name) {
  const char* v = env(name);
  return v != nullptr && std::string(v) != "0";
}

}  // namespace

HostConfig hostConfigFromEnv() {
  HostConfig c;
  if (const char* v = env("TORCH_ACCEL_HOST_DEVICES")) {
    char* rest = nullptr;
    const long n = std::strtol(v, &rest, 10);
    if (*rest != '\0' || n < 1 || n > 64) malformed("TORCH_ACCEL_HOST_DEVICES", v, "1 to 64");
    c.devices = static_cast<int>(n);
  }
  const char* memory = env("TORCH_ACCEL_HOST_MEMORY");
  c.capacity =
      memory != nullptr ? parseBytes("TORCH_ACCEL_HOST_MEMORY", memory) : defaultCapacity();
  c.protect = flag("TORCH_ACCEL_PROTECT");
  c.launch_blocking = flag("TORCH_ACCEL_LAUNCH_BLOCKING");
  return c;
}

}  // namespace accel::rt::host

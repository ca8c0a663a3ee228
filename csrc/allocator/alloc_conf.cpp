#include "allocator/alloc_conf.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace accel::alloc {

namespace {

[[noreturn]] void reject(const std::string& why) {
  throw std::invalid_argument("TORCH_ACCEL_ALLOC_CONF: " + why +
                              " (expected max_split_size_mb:N with N > 20)");
}

}  // namespace

Config parseAllocConf(const char* text) {
  Config config;
  if (text == nullptr) return config;
  const std::string conf(text);
  if (conf.empty()) return config;
  size_t start = 0;
  for (;;) {
    const size_t end = conf.find(',', start);
    const std::string option = conf.substr(start, end - start);
    const size_t colon = option.find(':');
    if (colon == std::string::npos) reject("option '" + option + "' has no ':'");
    const std::string key = option.substr(0, colon);
    const std::string value = option.substr(colon + 1);
    if (key != "max_split_size_mb") reject("unknown option '" + key + "'");
    // Digits only: stoull would accept a sign, spaces and trailing garbage.
    if (value.empty() || value.size() > 12 ||
        value.find_first_not_of("0123456789") != std::string::npos) {
      reject("max_split_size_mb value '" + value + "' is not a whole number of MiB");
    }
    const size_t mib = std::stoull(value);
    // CUDA's lower bound: a split limit at or below a large segment would stop the
    // large pool from splitting its own 20 MiB segments.
    if (mib <= CachingAllocator::kLargeBuffer >> 20) reject("max_split_size_mb too small");
    config.max_split_size = mib << 20;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return config;
}

bool cachingDisabled() {
  const char* value = std::getenv("TORCH_ACCEL_NO_CACHING");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace accel::alloc

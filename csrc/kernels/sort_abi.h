// The sort family's kernel ABI: a stable sort of many equal-length slices. Knows no torch.
#pragma once

#include <cstdint>

#include "kernels/kernel_abi.h"

namespace accel::kernels {

// nslices contiguous slices of n keys each (row-major [nslices, n], dtype `dtype`). The sort
// is stable; NaN sorts as the largest value (last ascending, first descending), like ATen.
// On return keys holds the sorted keys and indices their original positions in the slice.
// tmp_keys / tmp_indices are scratch of the same sizes.
struct SortDesc {
  char* keys = nullptr;
  int64_t* indices = nullptr;
  char* tmp_keys = nullptr;
  int64_t* tmp_indices = nullptr;
  DType dtype = DType::Float;
  int64_t nslices = 0;
  int64_t n = 0;
  bool descending = false;
};

struct SortTable {
  rt::Error (*sort)(const SortDesc& d, rt::Stream stream);
};

const SortTable& sortTable();
const SortTable& hostSortTable();

}  // namespace accel::kernels

// The kernel families and their tables of entry points. Each family header (copy.h,
// binary.h, ...) declares its table (`BinaryTable`, with `binaryTable()` for the driver in
// use). Each driver builds every table once, in its own namespace (`host::binaryTable()`,
// `cuda::binaryTable()`): families written once define `<Family>Table::make<Executor>()`
// and the driver's <family>.cpp|.cu instantiates it with ACCEL_DEFINE_TABLE; the rest
// (reduce, norm, blas) still build their tables from per-driver code. Knows no torch.
#pragma once

namespace accel::kernels {

// Every family: its table type's prefix and its accessor's prefix.
#define ACCEL_KERNEL_FAMILIES(_) \
  _(Copy, copy)                  \
  _(Unary, unary)                \
  _(Activation, activation)      \
  _(Binary, binary)              \
  _(Compare, compare)            \
  _(Ternary, ternary)            \
  _(Amp, amp)                    \
  _(Optimizer, optimizer)        \
  _(Reduce, reduce)              \
  _(Norm, norm)                  \
  _(BatchNorm, batchNorm)        \
  _(CtcLoss, ctcLoss)            \
  _(Index, index)                \
  _(Sort, sort)                  \
  _(Random, random)              \
  _(Rnn, rnn)                    \
  _(Im2col, im2col)              \
  _(Pool, pool)                  \
  _(Linalg, linalg)              \
  _(Blas, blas)

#define ACCEL_DECLARE_TABLE(TYPE, NAME) struct TYPE##Table;
ACCEL_KERNEL_FAMILIES(ACCEL_DECLARE_TABLE)
#undef ACCEL_DECLARE_TABLE

// One driver's build of every family.
struct Tables {
#define ACCEL_TABLE_MEMBER(TYPE, NAME) const TYPE##Table* NAME;
  ACCEL_KERNEL_FAMILIES(ACCEL_TABLE_MEMBER)
#undef ACCEL_TABLE_MEMBER
};

#define ACCEL_DECLARE_ACCESSOR(TYPE, NAME) const TYPE##Table& NAME##Table();
namespace host {
ACCEL_KERNEL_FAMILIES(ACCEL_DECLARE_ACCESSOR)
const Tables& tables();  // host/tables.cpp; always available (the C++ tests use it)
}  // namespace host
namespace cuda {
ACCEL_KERNEL_FAMILIES(ACCEL_DECLARE_ACCESSOR)
}  // namespace cuda
#undef ACCEL_DECLARE_ACCESSOR

// The build of the driver in use (rt::driver()): the host's, or the CUDA plugin's, fetched
// once through its exported accel_cuda_tables().
const Tables& activeTables();

// Inside a driver's namespace (which names its executor `Executor`): that driver's table of a
// family written once.
#define ACCEL_DEFINE_TABLE(TYPE, NAME)                              \
  const TYPE##Table& NAME##Table() {                                \
    static const TYPE##Table table = TYPE##Table::make<Executor>(); \
    return table;                                                   \
  }

// The Tables initializer of the driver whose namespace encloses it.
#define ACCEL_TABLE_ADDRESS(TYPE, NAME) &NAME##Table(),
#define ACCEL_DRIVER_TABLES() {ACCEL_KERNEL_FAMILIES(ACCEL_TABLE_ADDRESS)}

}  // namespace accel::kernels

// The CUDA plugin's export (cuda/tables.cu), looked up with rt::cudaPluginSymbol.
extern "C" const accel::kernels::Tables* accel_cuda_tables();

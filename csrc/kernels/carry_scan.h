// The exclusive scan of carry states in levels (planCarries in scan_plan.h), written once for
// both drivers: the scans' chunk aggregates (reduce.h) and the compactions' chunk counts and
// bounds (index.h). A GPU runs every level with a thread per group, never one thread over all
// the states of a long line.
#pragma once

#include "kernels/scan_plan.h"
#include "runtime/driver.h"

namespace accel::kernels {

// State c of line (o, k) of a level with `count` states per line.
ACCEL_HD inline int64_t carryAt(int64_t o, int64_t c, int64_t k, int64_t count, int64_t inner) {
  return (o * count + c) * inner + k;
}

// A combiner S over states A gives identity() and combine(a, b): the state of a run with state
// a followed by a run with state b (the scanners of reduce.h, for instance).

// Up a level, task (o, g, k): group g's fan_in states of `lo` folded into state g of `hi`. A
// line's last group is not needed: the scan is exclusive.
template <class S, class A>
struct CarryFoldOp {
  S s;
  const A* lo;
  A* hi;
  int64_t count, groups, inner, fan_in;
  int64_t elementsPerIndex() const { return fan_in; }
  ACCEL_HD bool operator()(int64_t t) const {
    const int64_t k = t % inner, g = (t / inner) % groups, o = t / (inner * groups);
    if (g + 1 == groups) return true;
    const int64_t first = g * fan_in;  // a group before the last is full
    A a = lo[carryAt(o, first, k, count, inner)];
    for (int64_t c = first + 1; c < first + fan_in; ++c)
      a = s.combine(a, lo[carryAt(o, c, k, count, inner)]);
    hi[carryAt(o, g, k, groups, inner)] = a;
    return true;
  }
};

// Down a level, task (o, g, k): group g of `lo` (groups of `size` states) rescanned in place
// into exclusive states, from the group's carry in `hi` (the identity at the top level, where
// one group is the whole line). A line's last state is written, never read: nobody computed it.
template <class S, class A>
struct CarryRescanOp {
  S s;
  A* lo;
  const A* hi;
  int64_t count, groups, inner, size;
  int64_t elementsPerIndex() const { return size; }
  ACCEL_HD bool operator()(int64_t t) const {
    const int64_t k = t % inner, g = (t / inner) % groups, o = t / (inner * groups);
    A run = hi ? hi[carryAt(o, g, k, groups, inner)] : s.identity();
    const int64_t first = g * size, end = first + size < count ? first + size : count;
    for (int64_t c = first; c < end; ++c) {
      A* slot = lo + carryAt(o, c, k, count, inner);
      if (c + 1 == count) {
        *slot = run;
        break;
      }
      const A state = *slot;
      *slot = run;
      run = s.combine(run, state);
    }
    return true;
  }
};

// The states of level 0 (layout (outer, count, inner), at the scratch's start) become
// exclusive carries, every level planned by `c` in the same scratch.
template <class Exec, class S, class A>
rt::Error scanCarries(S s, A* states, int64_t outer, int64_t inner, const CarryPlan& c,
                      rt::Stream stream) {
  for (int l = 0; l + 1 < c.levels; ++l) {
    const int64_t groups = c.count[l + 1];
    if (rt::Error e =
            Exec::forEach(outer * groups * inner, false,
                          CarryFoldOp<S, A>{s, states + c.offset[l], states + c.offset[l + 1],
                                            c.count[l], groups, inner, c.fan_in},
                          stream);
        e != rt::Error::Success)
      return e;
  }
  for (int l = c.levels - 1; l >= 0; --l) {
    const bool top = l + 1 == c.levels;
    const int64_t groups = top ? 1 : c.count[l + 1];
    if (rt::Error e = Exec::forEach(
            outer * groups * inner, false,
            CarryRescanOp<S, A>{s, states + c.offset[l], top ? nullptr : states + c.offset[l + 1],
                                c.count[l], groups, inner, top ? c.count[l] : c.fan_in},
            stream);
        e != rt::Error::Success)
      return e;
  }
  return rt::Error::Success;
}

}  // namespace accel::kernels

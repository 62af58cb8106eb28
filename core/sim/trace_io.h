#pragma once
// Writes a launch's trace as JSON for offline study and the GUI's animation.

#include <iosfwd>

#include "core/sim/launcher.h"

namespace matmulviz::sim {

/// Writes `report`'s trace as one JSON object, streamed (no copy of the events in memory):
///   {"format": "matmulviz-trace-1", "kernel", "grid": [x,y,z], "block": [x,y,z],
///    "shared_bytes", "arrays": [{"id", "name", "space": "global"|"shared", "shape"}],
///    "traced_blocks": "all" | [linear ids], "cap_bytes", "events_recorded", "events_dropped",
///    "kinds": ["global_load", ...], "event_fields": ["block", "thread", "kind", "array",
///    "i0", "i1", "i2"], "events": [[block, thread, kind, array, i0, i1, i2], ...]}
/// `block` and `thread` are linear (x fastest); `kind` indexes "kinds"; for "barrier" i0 is the
/// source line, for "thread_exit" i0 is the thread's FMA count. Throws std::runtime_error when
/// the stream fails.
void writeTraceJson(std::ostream& out, const LaunchReport& report);

}  // namespace matmulviz::sim

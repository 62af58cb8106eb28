#pragma once
// The memory timeline in the Chrome Trace Event format (chrome://tracing, ui.perfetto.dev):
// one process per strategy; memory_allocated / requested / reserved as counter events ("ph":
// "C", MiB; runs of more than 20000 events are thinned, keeping every stretch's maximum); ops
// as complete events ("ph": "X"), consecutive spans of one op at one depth merged
// into one ("mm x131072"); allocations of at least `instantMinBytes` as instant events carrying
// label, op, bytes and fate (freed when, or why alive at the end of the statement).
// Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU

#include "core/report/strategies_report.h"

#include <ostream>

namespace matmulviz {

/// Writes the trace of every run that recorded a timeline. Throws std::runtime_error on I/O.
void writeChromeTrace(std::ostream& os, const StrategiesReport& report,
                      int64_t instantMinBytes = 64 * 1024);

}  // namespace matmulviz

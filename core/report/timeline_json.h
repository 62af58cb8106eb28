#pragma once
// A run's memory timeline (MemoryTimeline) inside a strategies report, so that a report written
// on one machine shows its timeline in the app on another. Written per run as "timeline" only
// when the run recorded one (`matmulviz-cli strategies --timeline`); docs/report-format.md
// describes the keys:
// {"ops": [names], "statement_end_us": 12.5,
//  "events": {"columns": ["kind", "id", "bytes", "time_us", "allocated", "requested",
//             "reserved", "op"], "kinds": ["alloc", "free", "segment_alloc", "segment_free",
//             "oom"], "rows": [[0, 17, 512, 3.5, 512, 500, 2097152, 1], ...]},
//  "allocations": {"columns": ["id", "label", "op", "requested_bytes", "block_bytes", "pool",
//                  "category", "alive", "why"], "rows": [[17, "c[q]", 1, 500, 512, "small",
//                  "gathered copy", true, "saved as mat2 of BmmBackward0 ..."], ...]}}
// Op spans are not written (no view reads them from a report).

#include "core/report/json_reader.h"
#include "core/report/strategies_report.h"

#include <nlohmann/json.hpp>

#include <string>

namespace matmulviz {

/// `t` as the "timeline" value above. Sizes in bytes, times in microseconds.
nlohmann::ordered_json timelineToJson(const MemoryTimeline& t);

/// Reads the "timeline" value `j` (at key path `path`) written by timelineToJson. Throws
/// ReportLoadError (through `reader`) naming the key path ("runs[0].timeline.events.rows[3][2]")
/// and what is wrong: a missing or mistyped key, a negative size, an unknown event kind, pool or
/// category, an op index out of range, an event naming an allocation that is not listed.
MemoryTimeline timelineFromJson(const nlohmann::json& j, const std::string& path,
                                const JsonReader& reader);

}  // namespace matmulviz

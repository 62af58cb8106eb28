#include "core/report/search_results.h"

#include "core/report/json_reader.h"
#include "core/report/report_load.h"

#include <fstream>
#include <limits>
#include <sstream>

namespace matmulviz {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::string optionalString(const JsonReader& r, const nlohmann::json& v, const std::string& path) {
  return v.is_null() ? std::string() : r.string(v, path);
}

}  // namespace

SearchResults readSearchResults(const std::string& text, const std::string& name) {
  const JsonReader r(name);
  // parseReportJson refuses every malformed text, a number out of range included, as a
  // ReportLoadError naming the file.
  const nlohmann::json doc = parseReportJson(text, name);
  const nlohmann::json& s = r.object(r.member(r.object(doc, ""), "", "search"), "search");
  SearchResults out;
  out.argument = r.string(r.member(s, "search", "argument"), "search.argument");
  const nlohmann::json& range = r.array(r.member(s, "search", "range"), "search.range");
  if (range.size() != 2) r.fail("search.range", "must be [LO, HI]");
  out.lo = r.integer(range[0], "search.range[0]", 1, kMax);
  out.hi = r.integer(range[1], "search.range[1]", out.lo, kMax);
  if (const auto& c = r.member(s, "search", "capacity_bytes"); !c.is_null())
    out.capacityBytes = r.integer(c, "search.capacity_bytes", 1, kMax);
  if (const auto& l = r.member(s, "search", "largest"); !l.is_null())
    out.largest = r.integer(l, "search.largest", out.lo, out.hi);
  out.seconds = r.number(r.member(s, "search", "seconds"), "search.seconds");
  out.error = optionalString(r, r.member(s, "search", "error"), "search.error");
  const nlohmann::json& trials = r.array(r.member(s, "search", "trials"), "search.trials");
  for (size_t i = 0; i < trials.size(); ++i) {
    const std::string p = jsonPath("search.trials", i);
    const nlohmann::json& t = r.object(trials[i], p);
    SearchTrial trial;
    trial.value = r.integer(r.member(t, p, "value"), jsonPath(p, "value"), 1, kMax);
    trial.fits = r.boolean(r.member(t, p, "fits"), jsonPath(p, "fits"));
    trial.peakAllocatedBytes =
        r.integer(r.member(t, p, "peak_allocated"), jsonPath(p, "peak_allocated"), 0, kMax);
    trial.peakReservedBytes =
        r.integer(r.member(t, p, "peak_reserved"), jsonPath(p, "peak_reserved"), 0, kMax);
    trial.where = optionalString(r, r.member(t, p, "where"), jsonPath(p, "where"));
    trial.seconds = r.number(r.member(t, p, "seconds"), jsonPath(p, "seconds"));
    trial.error = optionalString(r, r.member(t, p, "error"), jsonPath(p, "error"));
    if (!out.trials.empty() && trial.value <= out.trials.back().value)
      r.fail(jsonPath(p, "value"), "must be larger than the trial before it");
    out.trials.push_back(std::move(trial));
  }
  return out;
}

SearchResults readSearchResultsFile(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) throw ReportLoadError(name, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return readSearchResults(text.str(), name);
}

}  // namespace matmulviz

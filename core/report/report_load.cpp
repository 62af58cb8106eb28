#include "core/report/report_load.h"

#include "core/util/bad_input.h"
#include "core/util/json_fields.h"

#include "core/report/timeline_json.h"
#include "core/tensor/dtype.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>

namespace matmulviz {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Reads one document, collecting the keys it skips.
class ReportReader {
 public:
  explicit ReportReader(const std::string& file) : r_(file) {}

  LoadedReport read(const nlohmann::json& doc);

 private:
  void checkEnvelope(const nlohmann::json& doc, LoadedReport& out) const;
  Workload workload(const nlohmann::json& w, const std::string& path);
  PyTorchModel pytorchModel(const nlohmann::json& j);
  StrategyRun run(const nlohmann::json& j, const std::string& path);
  void runMemory(const nlohmann::json& j, const std::string& path, StrategyRun& run) const;
  BackwardOutcome backward(const nlohmann::json& j, const std::string& path);
  std::vector<std::string> strings(const nlohmann::json& j, const std::string& path) const;
  /// Lists the keys of `object` (at `path`) that are not in `known`.
  void noteUnknown(const nlohmann::json& object, const std::string& path,
                   std::initializer_list<const char*> known);
  int64_t bytes(const nlohmann::json& j, const std::string& path, const char* key) const {
    return j.contains(key) ? r_.integer(j[key], jsonPath(path, key), 0, kMax) : 0;
  }
  double seconds(const nlohmann::json& j, const std::string& path, const char* key,
                 bool nullIsNaN) const {
    if (!j.contains(key)) return nullIsNaN ? std::nan("") : 0.0;
    const double s = r_.number(j[key], jsonPath(path, key), nullIsNaN);
    if (s < 0) r_.fail(jsonPath(path, key), "is negative");
    return s;
  }

  JsonReader r_;
  std::vector<std::string> ignored_;
};

void ReportReader::noteUnknown(const nlohmann::json& object, const std::string& path,
                               std::initializer_list<const char*> known) {
  for (auto it = object.begin(); it != object.end(); ++it)
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }))
      ignored_.push_back(jsonPath(path, it.key()));
}

void ReportReader::checkEnvelope(const nlohmann::json& doc, LoadedReport& out) const {
  out.kind = reportKind(doc, r_.file());
  if (out.kind != "strategies" && out.kind != "python")
    r_.fail("", "is a report of kind '" + out.kind +
                    "'; this reader takes the kinds 'strategies' (matmulviz-cli strategies --json) "
                    "and 'python' (python3 -m matmulviz SCRIPT --report)");
}

Workload ReportReader::workload(const nlohmann::json& w, const std::string& path) {
  r_.object(w, path);
  noteUnknown(w, path, {"n", "m", "i", "j", "k", "batch", "dtype"});
  Workload out;
  auto size = [&](const char* key) {
    return r_.integer(r_.member(w, path, key), jsonPath(path, key), 1, int64_t{1} << 40);
  };
  out.n = size("n"), out.m = size("m"), out.i = size("i"), out.j = size("j"), out.k = size("k");
  out.batch = size("batch");
  const std::string dtype = r_.string(r_.member(w, path, "dtype"), jsonPath(path, "dtype"));
  try {
    out.dtype = parseDType(dtype);
  } catch (const std::exception& e) {
    r_.fail(jsonPath(path, "dtype"), "is '" + dtype + "', not a dtype");
  }
  return out;
}

PyTorchModel ReportReader::pytorchModel(const nlohmann::json& j) {
  r_.object(j, "pytorch");
  noteUnknown(j, "pytorch", {"version", "gpu", "cublas_workspace_config", "described"});
  PyTorchModel m;
  const std::string version = r_.string(r_.member(j, "pytorch", "version"), "pytorch.version");
  try {
    m.version = parsePyTorchVersion(version);
  } catch (const std::exception&) {
    r_.fail("pytorch.version", "is '" + version + "' (allowed: forum, 2.x)");
  }
  m.gpu = r_.string(r_.member(j, "pytorch", "gpu"), "pytorch.gpu");
  if (!findGpuArchitecture(m.gpu))
    r_.fail("pytorch.gpu", "is '" + m.gpu + "' (allowed: " + gpuArchitectureKeys() + ")");
  if (j.contains("cublas_workspace_config") && !j["cublas_workspace_config"].is_null())
    m.cublasWorkspaceConfig =
        r_.string(j["cublas_workspace_config"], "pytorch.cublas_workspace_config");
  return m;
}

std::vector<std::string> ReportReader::strings(const nlohmann::json& j,
                                               const std::string& path) const {
  std::vector<std::string> out;
  const nlohmann::json& a = r_.array(j, path);
  for (size_t x = 0; x < a.size(); ++x) out.push_back(r_.string(a[x], jsonPath(path, x)));
  return out;
}

BackwardOutcome ReportReader::backward(const nlohmann::json& j, const std::string& path) {
  using S = BackwardOutcome::Status;
  BackwardOutcome b;
  if (j.is_null()) return b;  // not requested
  r_.object(j, path);
  noteUnknown(
      j, path,
      {"status", "message", "estimate_s", "estimate_allocated_bytes", "time_s", "max_mem_bytes",
       "cur_mem_bytes", "max_mem_mib", "cur_mem_mib", "max_rel_err_da", "max_rel_err_dc"});
  const std::string status = r_.string(r_.member(j, path, "status"), jsonPath(path, "status"));
  if (status == "ran")
    b.status = S::Ran;
  else if (status == "skipped")
    b.status = S::Skipped;
  else if (status == "failed")
    b.status = S::Failed;
  else
    r_.fail(jsonPath(path, "status"), "is '" + status + "' (allowed: ran, skipped, failed)");
  if (j.contains("message") && !j["message"].is_null())
    b.message = r_.string(j["message"], jsonPath(path, "message"));
  b.estimateSeconds = seconds(j, path, "estimate_s", false);
  b.estimateBytes = bytes(j, path, "estimate_allocated_bytes");
  b.timeSeconds = seconds(j, path, "time_s", false);
  b.maxMemBytes = bytes(j, path, "max_mem_bytes");
  b.curMemBytes = bytes(j, path, "cur_mem_bytes");
  if (j.contains("max_rel_err_da"))
    b.maxRelErrDA = r_.number(j["max_rel_err_da"], jsonPath(path, "max_rel_err_da"), true);
  if (j.contains("max_rel_err_dc"))
    b.maxRelErrDC = r_.number(j["max_rel_err_dc"], jsonPath(path, "max_rel_err_dc"), true);
  return b;
}

void ReportReader::runMemory(const nlohmann::json& j, const std::string& path,
                             StrategyRun& run) const {
  run.current.allocatedBytes = bytes(j, path, "cur_mem_bytes");
  run.peak.allocatedBytes = bytes(j, path, "max_mem_bytes");
  run.peak.requestedBytes = bytes(j, path, "requested_peak_bytes");
  run.peak.reservedBytes = bytes(j, path, "reserved_peak_bytes");
  if (!j.contains("kept_alive")) return;
  const std::string at = jsonPath(path, "kept_alive");
  const nlohmann::json& kept = r_.array(j["kept_alive"], at);
  for (size_t x = 0; x < kept.size(); ++x) {
    const std::string kp = jsonPath(at, x);
    const nlohmann::json& k = r_.object(kept[x], kp);
    KeptAlive ka;
    ka.label = r_.string(r_.member(k, kp, "label"), jsonPath(kp, "label"));
    ka.bytes = r_.integer(r_.member(k, kp, "bytes"), jsonPath(kp, "bytes"), 0, kMax);
    ka.count = k.contains("count") ? r_.integer(k["count"], jsonPath(kp, "count"), 0, kMax) : 0;
    if (k.contains("why")) ka.why = r_.string(k["why"], jsonPath(kp, "why"));
    run.keptAlive.push_back(std::move(ka));
  }
}

StrategyRun ReportReader::run(const nlohmann::json& j, const std::string& path) {
  r_.object(j, path);
  noteUnknown(j, path,
              {"strategy",
               "requires_grad",
               "ok",
               "error",
               "time_s",
               "cur_mem_bytes",
               "max_mem_bytes",
               "cur_mem_mib",
               "max_mem_mib",
               "requested_peak_bytes",
               "reserved_peak_bytes",
               "output_shape",
               "max_rel_err",
               "accuracy_failed",
               "warnings",
               "kept_alive",
               "backward",
               "flops",
               "timeline",
               "predicted"});
  StrategyRun run;
  run.strategy = r_.string(r_.member(j, path, "strategy"), jsonPath(path, "strategy"));
  run.ok = r_.boolean(r_.member(j, path, "ok"), jsonPath(path, "ok"));
  if (!run.ok && j.contains("error") && !j["error"].is_null())
    run.error = r_.string(j["error"], jsonPath(path, "error"));
  if (j.contains("requires_grad")) {
    const std::string gp = jsonPath(path, "requires_grad");
    try {
      run.requiresGrad = RequiresGrad::fromNames(strings(j["requires_grad"], gp));
    } catch (const BadInput& e) {
      r_.fail(gp, "has " + e.value() + " (allowed: \"a\", \"c\", each at most once)");
    }
  }
  if (j.contains("time_s") && !j["time_s"].is_null()) {
    const std::string tp = jsonPath(path, "time_s");
    const nlohmann::json& t = r_.object(j["time_s"], tp);
    run.time = {seconds(t, tp, "cold", false), seconds(t, tp, "median", false),
                seconds(t, tp, "min", false), seconds(t, tp, "max", false)};
  }
  runMemory(j, path, run);
  if (j.contains("output_shape")) {
    const std::string sp = jsonPath(path, "output_shape");
    const nlohmann::json& shape = r_.array(j["output_shape"], sp);
    for (size_t x = 0; x < shape.size(); ++x)
      run.outputShape.push_back(r_.integer(shape[x], jsonPath(sp, x), 0, kMax));
  }
  if (j.contains("max_rel_err"))
    run.maxRelErr = r_.number(j["max_rel_err"], jsonPath(path, "max_rel_err"), true);
  if (j.contains("warnings"))
    run.accuracyWarnings = strings(j["warnings"], jsonPath(path, "warnings"));
  if (j.contains("flops") && j["flops"].is_object() && j["flops"].contains("forward"))
    run.forwardFlops = r_.integer(j["flops"]["forward"], jsonPath(path, "flops.forward"), 0, kMax);
  if (j.contains("backward")) run.backward = backward(j["backward"], jsonPath(path, "backward"));
  if (run.backward.status == BackwardOutcome::Status::Ran && j.contains("flops") &&
      j["flops"].is_object() && j["flops"].contains("backward") &&
      !j["flops"]["backward"].is_null())
    run.backward.flops =
        r_.integer(j["flops"]["backward"], jsonPath(path, "flops.backward"), 0, kMax);
  if (j.contains("timeline"))
    run.timeline = timelineFromJson(j["timeline"], jsonPath(path, "timeline"), r_);
  return run;
}

LoadedReport ReportReader::read(const nlohmann::json& doc) {
  LoadedReport out;
  checkEnvelope(doc, out);
  if (out.kind == "python") {
    out.python = readPythonRun(doc, r_, ignored_);
    out.ignored = std::move(ignored_);
    return out;
  }
  noteUnknown(doc, "",
              {"format", "version", "kind", "workload", "device", "pytorch", "notes", "runs"});
  StrategiesReport& report = out.report;
  report.workload = workload(r_.member(doc, "", "workload"), "workload");
  const std::string device = r_.string(r_.member(doc, "", "device"), "device");
  try {
    report.device = parseDeviceKind(device);
  } catch (const std::exception&) {
    r_.fail("device", "is '" + device + "' (allowed: cpu, meta, cuda)");
  }
  if (doc.contains("pytorch")) report.pytorch = pytorchModel(doc["pytorch"]);
  if (doc.contains("notes")) report.notes = strings(doc["notes"], "notes");
  const nlohmann::json& runs = r_.array(r_.member(doc, "", "runs"), "runs");
  for (size_t x = 0; x < runs.size(); ++x) report.runs.push_back(run(runs[x], jsonPath("runs", x)));
  out.ignored = std::move(ignored_);
  return out;
}

}  // namespace

nlohmann::json parseReportJson(const std::string& text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ReportLoadError(file, "the file is empty");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Its message names the line and column: "parse error at line 83, column 14: ...".
    const bool atEnd = e.byte >= text.size();
    throw ReportLoadError(file, std::string(atEnd ? "the file ends early (truncated?): "
                                                  : "the file is not valid JSON: ") +
                                    jsonMessageWithoutTag(e.what()));
  } catch (const nlohmann::json::exception& e) {  // a number beyond double (out_of_range.406)
    throw ReportLoadError(file, "the file is not valid JSON: " + jsonMessageWithoutTag(e.what()));
  }
}

std::string reportKind(const nlohmann::json& doc, const std::string& file) {
  const JsonReader r(file);
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != "matmulviz-report")
    r.fail("", "is not a matmulviz report (it has no \"format\": \"matmulviz-report\")");
  const int64_t version = r.integer(r.member(doc, "", "version"), "version", 0, kMax);
  if (version > kReportVersion)
    r.fail("", "is a report of version " + std::to_string(version) +
                   ", newer than this matmulviz reads (version " + std::to_string(kReportVersion) +
                   "): open it with a newer matmulviz");
  if (version < kReportVersion)
    r.fail("", "is a report of version " + std::to_string(version) +
                   ", which no matmulviz wrote (this one reads version " +
                   std::to_string(kReportVersion) + ")");
  return r.string(r.member(doc, "", "kind"), "kind");
}

LoadedReport readReport(const nlohmann::json& doc, const std::string& file) {
  return ReportReader(file).read(doc);
}

LoadedReport parseReport(const std::string& text, const std::string& file) {
  return ReportReader(file).read(parseReportJson(text, file));
}

std::string readReportText(const std::string& path, std::string& name) {
  name = std::filesystem::path(path).filename().string();
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw ReportLoadError(name, "is not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportLoadError(name, "the file cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ReportLoadError(name, "the file cannot be read");
  return text.str();
}

LoadedReport readReportFile(const std::string& path) {
  std::string name;
  const std::string text = readReportText(path, name);
  return parseReport(text, name);
}

bool looksLikeReport(const std::string& bytes) {
  const size_t start = bytes.find_first_not_of(" \t\r\n");
  return start != std::string::npos && bytes[start] == '{' &&
         bytes.find("matmulviz-report") != std::string::npos;
}

}  // namespace matmulviz

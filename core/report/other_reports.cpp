// Readers of the "multihead", "budget" and "einsum" reports (core/report/other_reports.h).
#include "core/report/other_reports.h"

#include "core/report/json_reader.h"
#include "core/report/report_load.h"
#include "core/tensor/dtype.h"
#include "core/tensor/tensor.h"
#include "core/util/format_units.h"

#include <sstream>
#include <stdexcept>

namespace matmulviz {

namespace {

constexpr int64_t kMaxSize = int64_t{1} << 40;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// The envelope checked and its kind equal to `kind`; throws ReportLoadError otherwise.
void expectKind(const nlohmann::json& doc, const std::string& file, const std::string& kind) {
  const std::string found = reportKind(doc, file);
  if (found != kind)
    JsonReader(file).fail("", "is a report of kind '" + found + "', not '" + kind + "'");
}

std::vector<int64_t> shape(const JsonReader& r, const nlohmann::json& value,
                           const std::string& path) {
  std::vector<int64_t> out;
  const nlohmann::json& a = r.array(value, path);
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(r.integer(a[i], jsonPath(path, i), 0, kMaxSize));
  return out;
}

}  // namespace

MultiheadReportFile readMultiheadReport(const nlohmann::json& doc, const std::string& file) {
  expectKind(doc, file, "multihead");
  const JsonReader r(file);
  const nlohmann::json& w = r.object(r.member(doc, "", "workload"), "workload");
  auto size = [&](const char* key) {
    return r.integer(r.member(w, "workload", key), jsonPath("workload", key), 1, kMaxSize);
  };
  MultiheadReportFile out;
  MultiheadConfig& c = out.config;
  c.b = size("b"), c.s = size("s"), c.h = size("h"), c.e = size("e");
  c.numHeads = size("num_heads");
  c.topP = r.number(r.member(w, "workload", "top_p"), "workload.top_p");
  const nlohmann::json& topK = r.member(w, "workload", "top_k");
  if (!topK.is_null()) c.topK = r.integer(topK, "workload.top_k", 1, kMaxSize);
  const std::string dtype = r.string(r.member(w, "workload", "dtype"), "workload.dtype");
  try {
    c.dtype = parseDType(dtype);
  } catch (const std::exception&) {
    r.fail("workload.dtype", "is '" + dtype + "', not a dtype");
  }
  c.backward = r.boolean(r.member(w, "workload", "backward"), "workload.backward");
  c.seed = uint64_t(r.integer(r.member(w, "workload", "seed"), "workload.seed", 0, kInt64Max));
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    r.fail("workload", std::string("is not a workload multihead runs: ") + e.what());
  }
  out.device = r.string(r.member(doc, "", "device"), "device");
  out.t = r.integer(r.member(doc, "", "t"), "t", 0, kMaxSize);
  out.timeS = r.number(r.member(doc, "", "time_s"), "time_s");
  const nlohmann::json& m = r.object(r.member(doc, "", "memory"), "memory");
  out.maxMemBytes =
      r.integer(r.member(m, "memory", "max_mem_bytes"), "memory.max_mem_bytes", 0, kInt64Max);
  out.reservedPeakBytes = r.integer(r.member(m, "memory", "reserved_peak_bytes"),
                                    "memory.reserved_peak_bytes", 0, kInt64Max);
  return out;
}

BudgetReportFile readBudgetReport(const nlohmann::json& doc, const std::string& file) {
  expectKind(doc, file, "budget");
  const JsonReader r(file);
  BudgetReportFile out;
  out.script = r.string(r.member(doc, "", "script"), "script");
  out.function = r.string(r.member(doc, "", "function"), "function");
  out.solver = r.string(r.member(doc, "", "solver"), "solver");
  const nlohmann::json& budgets = r.array(r.member(doc, "", "budgets"), "budgets");
  for (size_t i = 0; i < budgets.size(); ++i) {
    const double b = r.number(budgets[i], jsonPath("budgets", i));
    if (!(b >= 0 && b <= 1))
      r.fail(jsonPath("budgets", i), "is " + std::to_string(b) + " (allowed: 0 to 1)");
    out.budgets.push_back(b);
  }
  const nlohmann::json& eager = r.object(r.member(doc, "", "eager"), "eager");
  out.eagerActivationBytes = r.integer(r.member(eager, "eager", "activation_bytes"),
                                       "eager.activation_bytes", 0, kInt64Max);
  return out;
}

EinsumReportFile readEinsumReport(const nlohmann::json& doc, const std::string& file) {
  expectKind(doc, file, "einsum");
  const JsonReader r(file);
  EinsumReportFile out;
  out.equation = r.string(r.member(doc, "", "equation"), "equation");
  out.dtype = r.string(r.member(doc, "", "dtype"), "dtype");
  out.device = r.string(r.member(doc, "", "device"), "device");
  const nlohmann::json& ops = r.array(r.member(doc, "", "operand_shapes"), "operand_shapes");
  for (size_t i = 0; i < ops.size(); ++i)
    out.operandShapes.push_back(shape(r, ops[i], jsonPath("operand_shapes", i)));
  out.outputShape = shape(r, r.member(doc, "", "output_shape"), "output_shape");
  out.timeS = r.number(r.member(doc, "", "time_s"), "time_s");
  const nlohmann::json& m = r.object(r.member(doc, "", "memory"), "memory");
  out.maxMemBytes =
      r.integer(r.member(m, "memory", "max_mem_bytes"), "memory.max_mem_bytes", 0, kInt64Max);
  return out;
}

std::string einsumSummary(const EinsumReportFile& r) {
  std::string operands;
  for (size_t i = 0; i < r.operandShapes.size(); ++i)
    operands += (i ? ", " : "") + shapeToString(r.operandShapes[i]);
  return "einsum('" + r.equation + "') of " + operands + " -> " + shapeToString(r.outputShape) +
         ", " + r.dtype + " on " + r.device + ": " + formatSeconds(r.timeS) + ", maxMem " +
         formatSize(r.maxMemBytes);
}

}  // namespace matmulviz

#include "core/strategies/preset.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace matmulviz {

void parseRequiresGrad(const std::string& text, bool& a, bool& c) {
  if (text == "none" || text.empty()) {
    a = c = false;
  } else if (text == "a") {
    a = true, c = false;
  } else if (text == "c") {
    a = false, c = true;
  } else if (text == "a,c" || text == "c,a") {
    a = c = true;
  } else {
    throw std::invalid_argument("--requires-grad: '" + text +
                                "' is not allowed (allowed: none, a, c, a,c)");
  }
}

Preset parsePreset(const std::string& json, const std::string& name, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    const auto upTo = std::min<size_t>(e.byte, json.size());
    const auto line = 1 + std::count(json.begin(), json.begin() + static_cast<long>(upTo), '\n');
    throw std::invalid_argument(source + ":" + std::to_string(line) + ": " + e.what());
  }
  Preset p;
  p.name = name;
  try {
    p.description = j.value("description", "");
    RunConfig& c = p.config;
    if (j.contains("workload")) {
      const auto& w = j.at("workload");
      c.workload.n = w.value("n", c.workload.n);
      c.workload.m = w.value("m", c.workload.m);
      c.workload.i = w.value("i", c.workload.i);
      c.workload.j = w.value("j", c.workload.j);
      c.workload.k = w.value("k", c.workload.k);
      c.workload.batch = w.value("batch", c.workload.batch);
      c.workload.dtype = parseDType(w.value("dtype", std::string("float32")));
      c.workload.validate();
    }
    parseRequiresGrad(j.value("requires_grad", std::string("none")), c.requiresGradA,
                      c.requiresGradC);
    if (j.contains("strategies")) c.strategies = j.at("strategies").get<std::vector<std::string>>();
    for (const auto& s : c.strategies) findStrategy(s);
    c.repeats = j.value("repeats", c.repeats);
    c.backward = j.value("backward", c.backward);
    c.device = parseDeviceKind(j.value("device", std::string("cpu")));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(source + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(source + ": " + e.what());
  }
  return p;
}

Preset loadPreset(const std::string& name) {
  std::string known;
  for (const auto& p : embeddedPresets()) {
    if (p.name == name) return parsePreset(p.json, p.name, p.source);
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw std::invalid_argument("--preset: unknown preset '" + name + "' (allowed: " + known + ")");
}

}  // namespace matmulviz

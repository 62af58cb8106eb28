#include "core/strategies/preset.h"

#include "core/util/bad_input.h"
#include "core/util/json_fields.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace matmulviz {

namespace {

/// 1-based line of byte `offset` in `text`.
long lineAt(const std::string& text, size_t offset) {
  const auto upTo = static_cast<long>(std::min(offset, text.size()));
  return 1 + std::count(text.begin(), text.begin() + upTo, '\n');
}

}  // namespace

Preset parsePreset(const std::string& json, const std::string& name, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(source + ":" + std::to_string(lineAt(json, e.byte)) + ": " +
                                jsonMessageWithoutTag(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406 "number overflow parsing '1E1072'" (found by tests/fuzz/fuzz_preset): a
    // number beyond double. No byte offset: the line is that of the number's text.
    const std::string what = jsonMessageWithoutTag(e.what());
    size_t at = json.size();
    if (const size_t q = what.find('\''); q != std::string::npos) {
      const std::string token = what.substr(q + 1, what.find('\'', q + 1) - q - 1);
      if (!token.empty()) at = std::min(json.find(token), json.size());
    }
    throw std::invalid_argument(source + ":" + std::to_string(lineAt(json, at)) + ": " + what +
                                " (allowed: numbers within +-1.7e308)");
  }
  Preset p;
  p.name = name;
  RunConfig& c = p.config;
  const JsonFields f(j, "preset '" + source + "'");
  // Every value is type- and range-checked before it is converted (JsonFields); a value the
  // engine refuses (an unknown dtype) is reported at its field too.
  auto checked = [&](const JsonFields& fields, const char* key, auto&& parse) {
    try {
      parse();
    } catch (const BadInput& e) {  // the key's own value: its reason alone; a sub-field: named
      fields.fail(key, "is refused: " + (e.field() == key ? e.reason() : std::string(e.what())));
    } catch (const std::invalid_argument& e) {
      if (std::string_view(e.what()).starts_with(fields.what())) throw;
      fields.fail(key, std::string("is refused: ") + e.what());
    }
  };
  p.description = f.string("description", "");
  if (f.has("workload")) {
    const JsonFields w = f.object("workload");
    Workload& wl = c.workload;
    wl.n = w.integer("n", wl.n, 1, kMaxPresetSize);
    wl.m = w.integer("m", wl.m, 1, kMaxPresetSize);
    wl.i = w.integer("i", wl.i, 1, kMaxPresetSize);
    wl.j = w.integer("j", wl.j, 1, kMaxPresetSize);
    wl.k = w.integer("k", wl.k, 1, kMaxPresetSize);
    wl.batch = w.integer("batch", wl.batch, 1, kMaxPresetSize);
    checked(w, "dtype", [&] { wl.dtype = parseDType(w.string("dtype", "float32")); });
    checked(f, "workload", [&] { wl.validate(); });
  }
  checked(f, "requires_grad",
          [&] { c.requiresGrad = RequiresGrad::parse(f.string("requires_grad", "none")); });
  c.strategies = f.strings("strategies", c.strategies);
  checked(f, "strategies", [&] {
    for (const auto& s : c.strategies) findStrategy(s);
  });
  c.repeats = static_cast<int>(f.integer("repeats", c.repeats, 1, kMaxPresetRepeats));
  c.backward = f.boolean("backward", c.backward);
  checked(f, "device", [&] { c.device = parseDeviceKind(f.string("device", "cpu")); });
  checked(f, "pytorch",
          [&] { c.pytorch.version = parsePyTorchVersion(f.string("pytorch", "2.x")); });
  checked(f, "gpu", [&] {
    c.pytorch.gpu = f.string("gpu", c.pytorch.gpu);
    c.pytorch.architecture();  // throws for an unknown key, naming the allowed ones
  });
  return p;
}

Preset loadPreset(const std::string& name) {
  std::string known;
  for (const auto& p : embeddedPresets()) {
    if (p.name == name) return parsePreset(p.json, p.name, p.source);
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw BadInput("preset", name, known, "unknown preset '" + name + "' (allowed: " + known + ")");
}

}  // namespace matmulviz

#include "ui/models/scenario.h"

#include "core/strategies/strategy.h"

#include <QJsonArray>

#include <stdexcept>
#include <string>

namespace matmulviz::ui {
namespace {

int64_t sizeField(const QJsonObject& o, const char* key, int64_t fallback, int64_t max) {
  if (!o.contains(QLatin1String(key))) return fallback;
  const double v = o.value(QLatin1String(key)).toDouble(-1);
  if (!(v >= 1 && v <= static_cast<double>(max)) || v != static_cast<double>(int64_t(v)))
    throw std::invalid_argument(std::string(key) + ": must be an integer in [1, " +
                                std::to_string(max) + "]");
  return static_cast<int64_t>(v);
}

}  // namespace

QString Scenario::requiresGradText() const {
  return QString::fromStdString(config.requiresGrad.text());
}

QString Scenario::label() const {
  return QStringLiteral("%1 · %2 · grad %3")
      .arg(title, QString::fromUtf8(std::string(dtypeName(config.workload.dtype)).c_str()),
           requiresGradText());
}

QJsonObject Scenario::toJson() const {
  const Workload& w = config.workload;
  QJsonObject workload{{"n", double(w.n)},
                       {"m", double(w.m)},
                       {"i", double(w.i)},
                       {"j", double(w.j)},
                       {"k", double(w.k)},
                       {"batch", double(w.batch)},
                       {"dtype", QString::fromStdString(std::string(dtypeName(w.dtype)))}};
  QJsonArray strategies;
  for (const auto& s : config.strategies) strategies.append(QString::fromStdString(s));
  QJsonObject o{
      {"title", title},
      {"workload", workload},
      {"requires_grad", requiresGradText()},
      {"strategies", strategies},
      {"repeats", config.repeats},
      {"device", QString::fromStdString(std::string(deviceKindName(config.device)))},
      {"backward", config.backward},
      {"kernel",
       QJsonObject{
           {"name", kernel}, {"m", kernelM}, {"k", kernelK}, {"n", kernelN}, {"tpb", tpb}}}};
  if (config.deviceMemoryBytes) o.insert("device_memory_bytes", double(*config.deviceMemoryBytes));
  o.insert("pytorch",
           QString::fromStdString(std::string(pytorchVersionName(config.pytorch.version))));
  o.insert("gpu", QString::fromStdString(config.pytorch.gpu));
  return o;
}

Scenario Scenario::fromJson(const QJsonObject& o) {
  Scenario s;
  s.title = o.value("title").toString(s.title);
  Workload& w = s.config.workload;
  const QJsonObject wl = o.value("workload").toObject();
  w.n = sizeField(wl, "n", w.n, kMaxSize);
  w.m = sizeField(wl, "m", w.m, kMaxSize);
  w.i = sizeField(wl, "i", w.i, kMaxSize);
  w.j = sizeField(wl, "j", w.j, kMaxSize);
  w.k = sizeField(wl, "k", w.k, kMaxSize);
  w.batch = sizeField(wl, "batch", w.batch, kMaxSize);
  if (wl.contains("dtype")) w.dtype = parseDType(wl.value("dtype").toString().toStdString());
  w.validate();
  s.config.requiresGrad =
      RequiresGrad::parse(o.value("requires_grad").toString("none").toStdString());
  if (o.contains("strategies")) {
    s.config.strategies.clear();
    for (const auto& v : o.value("strategies").toArray()) {
      const std::string name = v.toString().toStdString();
      findStrategy(name);  // throws for unknown names
      s.config.strategies.push_back(name);
    }
  }
  s.config.repeats = int(sizeField(o, "repeats", s.config.repeats, kMaxRepeats));
  if (o.contains("device"))
    s.config.device = parseDeviceKind(o.value("device").toString().toStdString());
  s.config.backward = o.value("backward").toBool(s.config.backward);
  if (o.contains("device_memory_bytes")) {
    // Checked before the conversion: a double beyond int64 is undefined behaviour (caught by UBSan
    // under tests/fuzz/fuzz_scenario).
    const double bytes = o.value("device_memory_bytes").toDouble(-1);
    if (!(bytes >= 0 && bytes < 0x1p63) || bytes != static_cast<double>(int64_t(bytes)))
      throw std::invalid_argument(
          "device_memory_bytes: must be a whole number of bytes in [0, 9223372036854775807]");
    s.config.deviceMemoryBytes = int64_t(bytes);
  }
  if (o.contains("pytorch"))
    s.config.pytorch.version = parsePyTorchVersion(o.value("pytorch").toString().toStdString());
  if (o.contains("gpu")) {
    s.config.pytorch.gpu = o.value("gpu").toString().toStdString();
    s.config.pytorch.architecture();  // throws for an unknown key
  }
  const QJsonObject k = o.value("kernel").toObject();
  s.kernel = k.value("name").toString(s.kernel);
  s.kernelM = int(sizeField(k, "m", s.kernelM, kMaxKernelSize));
  s.kernelK = int(sizeField(k, "k", s.kernelK, kMaxKernelSize));
  s.kernelN = int(sizeField(k, "n", s.kernelN, kMaxKernelSize));
  s.tpb = int(sizeField(k, "tpb", s.tpb, kMaxTpb));
  return s;
}

Scenario Scenario::fromPreset(const Preset& preset) {
  Scenario s;
  s.title = QString::fromStdString(preset.name);
  s.config = preset.config;
  return s;
}

}  // namespace matmulviz::ui

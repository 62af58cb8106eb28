// Fuzzes the saved scenario (ui/models/scenario.h): the app keeps the scenario panel's state as
// JSON in its settings and reads it back at start-up with Scenario::fromJson. Any bytes as that
// JSON; a refused one must be a std::invalid_argument, and an accepted one must survive a
// toJson/fromJson round trip. Anything else is a finding.
#include "ui/models/scenario.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(bytes, &pe);
  if (pe.error != QJsonParseError::NoError || !doc.isObject()) return 0;
  try {
    const matmulviz::ui::Scenario s = matmulviz::ui::Scenario::fromJson(doc.object());
    const matmulviz::ui::Scenario again = matmulviz::ui::Scenario::fromJson(s.toJson());
    if (again.toJson() != s.toJson()) __builtin_trap();
  } catch (const std::invalid_argument&) {
    // A refused scenario, with a message naming the field.
  }
  return 0;
}

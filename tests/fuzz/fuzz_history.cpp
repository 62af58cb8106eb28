// Fuzzes the run history reader (ui/models/run_history.h): any bytes as history.json, parsed as
// the app parses it at start-up (QJsonDocument, then RunHistory::fromJson). A refused file must
// leave the history unchanged and say why; an accepted one must survive a save-and-load round
// trip. Anything else (a crash, a sanitizer report, an exception) is a finding.
#include "ui/models/run_history.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(bytes, &pe);
  if (pe.error != QJsonParseError::NoError) return 0;
  matmulviz::ui::RunHistory history;
  QString error;
  if (!history.fromJson(doc, &error)) {
    if (error.isEmpty() || history.size() != 0) __builtin_trap();
    return 0;
  }
  matmulviz::ui::RunHistory again;
  if (!again.fromJson(history.toJson(), &error) || again.size() != history.size()) __builtin_trap();
  return 0;
}

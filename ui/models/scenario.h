#pragma once
// A Scenario: what the user asks the app to run (docs/architecture.md): the
// strategies workload of the PyTorch forum post with its grad flags, device and repeats, and the
// kernel launch of the fast.ai lesson (kernel, M, K, N, TPB). Qt Core only; saved as JSON in
// QSettings.

#include "core/strategies/preset.h"

#include <QJsonObject>
#include <QString>

namespace matmulviz::ui {

struct Scenario {
  QString title = QStringLiteral("custom");  ///< the preset it came from, or "custom"
  RunConfig config;                          ///< the strategies run (workload, flags, device)
  QString kernel = QStringLiteral("naive");  ///< naive | coalesced | smem_tiled
  int kernelM = 5;                           ///< rows of C (the lesson: 5)
  int kernelK = 784;                         ///< the contracted dimension (the lesson: 784)
  int kernelN = 10;                          ///< columns of C (the lesson: 10)
  int tpb = 16;                              ///< threads per block along x and y (1..32)

  /// "none", "a", "c" or "a,c", as --requires-grad spells it.
  QString requiresGradText() const;
  /// "seed000 · float32 · grad a": a short label for histories and chart legends.
  QString label() const;

  /// {"title", "workload": {...}, "requires_grad", "strategies", "repeats", "device",
  ///  "backward", "device_memory_bytes", "kernel": {"name","m","k","n","tpb"}}.
  QJsonObject toJson() const;
  /// Reads toJson()'s form; fields that are missing keep their defaults. Throws
  /// std::invalid_argument naming the field when a value is out of range or unknown.
  static Scenario fromJson(const QJsonObject& json);
  /// The preset's run configuration, with the lesson's kernel launch.
  static Scenario fromPreset(const Preset& preset);
};

/// Limits the scenario panel enforces (and fromJson checks): sizes 1..kMaxSize, TPB 1..32
/// (CUDA's 1024 threads per block), repeats 1..kMaxRepeats.
inline constexpr int kMaxSize = 1 << 30;
inline constexpr int kMaxKernelSize = 100000;  ///< KernelLaunchLimits::maxDim
inline constexpr int kMaxTpb = 32;
inline constexpr int kMaxRepeats = 100;

}  // namespace matmulviz::ui

#include <QMetaType>
Q_DECLARE_METATYPE(matmulviz::ui::Scenario)

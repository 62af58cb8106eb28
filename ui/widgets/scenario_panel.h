#pragma once
// The scenario panel: what an opened file is while the window shows one, else presets, the
// strategies workload (N, M, I, J, K, batch, dtype), the grad flags, device, strategies, repeats,
// backward, and the kernel launch (kernel, M, K, N, TPB). Every field refuses bad input itself
// (spin-box ranges shown in tooltips, a validated size field), so a Scenario read from the panel is
// always valid.

#include "ui/models/scenario.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace matmulviz::ui {

class ScenarioPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ScenarioPanel(QWidget* parent = nullptr);

  /// The scenario the fields describe.
  Scenario scenario() const;
  /// Shows `s` in the fields (values outside a field's range are clamped by the field).
  void setScenario(const Scenario& s);
  /// Shows a kernel launch in the kernel fields without emitting kernelChanged.
  void setKernelLaunch(const QString& kernel, int m, int k, int n, int tpb);
  /// Loads a preset JSON file; on a parse error returns false with a message naming the file
  /// (its name, without the folder) and the line ("x.json:3: ..."), leaving the fields as they
  /// were.
  bool loadPresetFile(const QString& path, QString* error);
  /// Selects the embedded preset `name` ("seed000", "small", ...); false when unknown.
  bool selectPreset(const QString& name);
  /// Enables Run or Cancel according to whether a run is in flight.
  void setRunning(bool running);
  /// True when every field holds an acceptable value (the size field may not).
  bool isValid() const;
  /// While the window shows an opened file: `lines` (ui/models/opened_file_summary.h: file,
  /// kind, devices, events, peak) and a "Back to a scenario" button in place of the fields.
  void showOpenedFile(const QStringList& lines);
  /// The scenario's fields again (a run, a preset, or the button).
  void clearOpenedFile();
  bool showsOpenedFile() const;
  /// The lines shown, joined by newlines; empty when no file is shown.
  QString openedFileText() const;

 signals:
  void runRequested();
  void cancelRequested();
  /// The kernel fields changed (the Kernel view re-simulates).
  void kernelChanged();
  void scenarioChanged();
  /// "Back to a scenario" was clicked: the fields are shown again.
  void backToScenarioRequested();

 private:
  QWidget* buildOpenedFileBox();
  QWidget* buildPresetRow();
  QWidget* buildWorkloadGroup();
  QWidget* buildFlagsGroup();
  QWidget* buildKernelGroup();
  QSpinBox* sizeBox(int min, int max, const QString& tip);
  void updateSummary();
  void validateDeviceMemory();

  QGroupBox* opened_ = nullptr;
  QLabel* openedText_ = nullptr;
  QWidget* fields_ = nullptr;
  QComboBox* preset_ = nullptr;
  QSpinBox *n_ = nullptr, *m_ = nullptr, *i_ = nullptr, *j_ = nullptr, *k_ = nullptr,
           *batch_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QCheckBox *gradA_ = nullptr, *gradC_ = nullptr, *backward_ = nullptr;
  QComboBox* device_ = nullptr;
  QLineEdit* deviceMemory_ = nullptr;
  QComboBox* pytorch_ = nullptr;  ///< which PyTorch the memory model follows
  QComboBox* gpu_ = nullptr;      ///< the GPU architecture it sizes buffers for
  QList<QCheckBox*> strategies_;
  QSpinBox* repeats_ = nullptr;
  QComboBox* kernel_ = nullptr;
  QSpinBox *kM_ = nullptr, *kK_ = nullptr, *kN_ = nullptr, *tpb_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* error_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QString title_ = QStringLiteral("custom");
  bool loading_ = false;
};

}  // namespace matmulviz::ui

#pragma once
// The Multi-head view (the multi-head assignment): sizes b, s, h, e and heads, top_p and top_k as
// sliders that update the importance mask live, dtype and backward; the drawing (A1 split into
// heads, the mask over [b, s], O3) beside what the run cost: curMem/maxMem and what was saved for
// backward. Runs go to a worker thread; the latest request wins.

#include "core/multihead/multihead_report.h"

#include <QFutureWatcher>
#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QTextBrowser;

namespace matmulviz::ui {

class MultiheadCanvas;

class MultiheadView : public QWidget {
  Q_OBJECT
 public:
  explicit MultiheadView(QWidget* parent = nullptr);
  ~MultiheadView() override;

  /// Shows `config` in the fields and runs it.
  void setConfig(const MultiheadConfig& config);
  /// The configuration the fields describe.
  MultiheadConfig config() const;
  /// The last finished run (null before the first).
  std::shared_ptr<const MultiheadReport> report() const { return report_; }
  bool isRunning() const;
  void setPresentationMode(bool on);

 signals:
  /// A run finished (the Gradients view shows its dA1 and dW1).
  void reportReady(std::shared_ptr<const matmulviz::MultiheadReport> report);
  void failed(const QString& message);

 public slots:
  void run();

 private:
  QWidget* buildControls();
  void onFinished();
  void updateSliderLabels();
  void describe(const MultiheadReport& r);

  QSpinBox *b_ = nullptr, *s_ = nullptr, *h_ = nullptr, *e_ = nullptr, *heads_ = nullptr;
  QSlider *topP_ = nullptr, *topK_ = nullptr;
  QCheckBox* topKNone_ = nullptr;
  QCheckBox* backward_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QSpinBox* batch_ = nullptr;
  QLabel *topPLabel_ = nullptr, *topKLabel_ = nullptr, *error_ = nullptr;
  MultiheadCanvas* canvas_ = nullptr;
  QTextBrowser* info_ = nullptr;
  QFutureWatcher<std::shared_ptr<const MultiheadReport>>* watcher_ = nullptr;
  std::optional<MultiheadConfig> pending_;
  std::shared_ptr<const MultiheadReport> report_;
  bool busy_ = false;  ///< from run() until its report (or error) is shown
};

}  // namespace matmulviz::ui

#pragma once
// "What is alive at the peak" as stacked bars, like a flame graph of the peak (memray's peak
// flame graph, upside down): the top bar is the peak's allocated bytes; under it, one block per
// source line as wide as the bytes that line holds at the peak, largest first; under each line,
// its owners (saved for which backward node, or a Python reference). A click on a line's block
// (or an owner under it) emits lineClicked with its script line; the selected line is outlined.

#include <QWidget>

#include <memory>

namespace matmulviz::ui {

class ProgramRun;

class PeakFlameBar : public QWidget {
  Q_OBJECT
 public:
  explicit PeakFlameBar(QWidget* parent = nullptr);

  void setRun(std::shared_ptr<const ProgramRun> run);
  /// Outlines script line `line`'s block (0: none).
  void setSelectedLine(int line);
  int selectedLine() const { return selected_; }
  /// Where script line `line`'s block is drawn; empty when it holds nothing at the peak.
  QRect rectOfLine(int line) const;

  QSize sizeHint() const override { return {600, 4 * kRowHeight + 8}; }
  QSize minimumSizeHint() const override { return {200, 4 * kRowHeight + 8}; }

 signals:
  void lineClicked(int line);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;  ///< tooltips

 private:
  static constexpr int kRowHeight = 26;
  struct Block {
    QRect rect;
    QString text, toolTip;
    int line = 0;   ///< script line, 0: none
    int group = 0;  ///< index into peakGroups(), -1 for the peak's bar
    bool owner = false;
  };
  void layoutBlocks();
  const Block* blockAt(const QPoint& pos) const;

  std::shared_ptr<const ProgramRun> run_;
  QVector<Block> blocks_;
  int selected_ = 0;
  int laidOutWidth_ = -1;
};

}  // namespace matmulviz::ui

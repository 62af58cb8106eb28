#pragma once
// The base of every chart: a QWidget that owns a QCustomPlot (forward-declared here: only the
// charts' .cpp files include qcustomplot.h) and gives each chart the same context menu
// (Export PNG/SVG/PDF..., Copy data as CSV, Log scale), export by file suffix, a log-scale
// toggle, a presentation mode for classrooms, hover tooltips and introspection for tests.

#include <QColor>
#include <QSharedPointer>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>

class QCustomPlot;
class QCPAbstractPlottable;
class QCPAxis;
class QCPAxisTickerText;
class QCPBars;
class QCPTextElement;
class QMenu;

namespace matmulviz::ui {

class ChartView : public QWidget {
  Q_OBJECT
 public:
  explicit ChartView(QWidget* parent = nullptr);
  ~ChartView() override;

  /// The size headless exports use when none is given.
  static QSize defaultExportSize() { return {1600, 900}; }

  /// Writes the chart to `path`; the suffix picks the format: .png, .svg (QSvgGenerator through
  /// QCustomPlot::toPainter), .pdf (QCustomPlot::savePdf). Uses the widget's size when it has
  /// been shown, else defaultExportSize(). False with *error (when given) naming the file on
  /// an unknown suffix or an I/O failure. Written whole or not at all (replaceFileAtomically):
  /// an existing file at `path` stays as it was until the new one is complete.
  bool exportTo(const QString& path, QString* error = nullptr);
  /// The same at a fixed size in pixels (PNG, SVG) or points (PDF), e.g. 1600x900 headless.
  bool exportTo(const QString& path, QSize size, QString* error = nullptr);

  /// The chart's data as CSV (header row, then one line per point); empty when no data.
  virtual QString csv() const;
  /// A short name for files and menus: "strategies-time", "memory-timeline".
  virtual QString chartName() const = 0;

  /// Log scale of the value axis (where sizes span decades). No-op when !supportsLogScale().
  void setLogScale(bool on);
  bool logScale() const { return logScale_; }
  /// The smallest value a memory chart draws on its log axis, in MiB (1 KiB), so that zero
  /// bands stay on the chart.
  static constexpr double kLogFloorMiB = 1.0 / 1024;
  virtual bool supportsLogScale() const { return true; }

  /// Larger fonts, thicker lines and a high-contrast palette (classroom mode).
  void setPresentationMode(bool on);
  bool presentationMode() const { return presentation_; }

  /// Names of the series drawn (graphs, bars, colour maps), as in the legend, in drawing order.
  QStringList seriesNames() const;
  /// The texts drawn on the plot: the title, axis labels, and every text item (value labels,
  /// the peak's label, notes). For tests and for checking exports.
  QStringList texts() const;
  /// Points of the series named `series` (a colour map counts its cells); -1 when absent.
  int pointCount(const QString& series) const;
  /// The text showPlaceholder() put in the plot; empty when the chart has data.
  QString placeholderText() const;
  /// Rebuilds nothing; redraws now (QCustomPlot::rpImmediateRefresh). For tests and benchmarks.
  void replotNow();
  /// Milliseconds the last replot took (QCustomPlot::replotTime).
  double lastReplotMs() const;

 signals:
  void logScaleChanged(bool on);

 protected:
  QCustomPlot* plot() const { return plot_; }
  /// The first time: a title row (a QCPTextElement) above the plot and the legend in a row below
  /// it, filled columns first. Returns true when it added them (false when they were there).
  bool addTitleAndLegendRows();
  /// The title row's element (addTitleAndLegendRows made it) with the title font set: bold, at
  /// `pointSize` points in the current mode (fontPointSize).
  QCPTextElement* titleElement(int pointSize = 11);
  /// Rebuilds every plottable from the chart's data and replots. Subclasses call it when their
  /// data, metric or layout changes; setLogScale and setPresentationMode call it too.
  virtual void rebuild() = 0;
  /// The tooltip at widget position `pos` of the plot; by default toolTipFor the plottable
  /// under the mouse (QCustomPlot::plottableAt). Empty: no tooltip.
  virtual QString toolTipAt(const QPoint& pos) const;
  /// The tooltip for the point `dataIndex` of `plottable`; empty for none.
  virtual QString toolTipFor(QCPAbstractPlottable* plottable, int dataIndex) const;
  /// The colour of series `i`: a colour-blind-safe palette (Okabe and Ito), or in
  /// presentation mode a high-contrast one.
  QColor seriesColor(int i) const;
  /// Applies the font and pen sizes of the current mode to the plot's axes, legend and title.
  void applyStyle();
  /// Points to pixels or larger in presentation mode.
  int fontPointSize(int normal) const;
  /// Pen width for data lines.
  double lineWidth() const;
  /// Writes `text` in the middle of the axis rect, in grey: what fills a chart that has no data
  /// yet ("Run the speed ladder to fill this chart"). Call it from rebuild() after clearItems().
  void showPlaceholder(const QString& text);
  /// Ticks at whole numbers only (event index, run id, row, column) on `axis`.
  static void setIntegerTicks(QCPAxis* axis);
  /// Names as ticks (`ticker`'s), drawn as written: QCustomPlot's default number format typesets
  /// a digit, 'e' and digits as a power of ten, which mangles names such as "block 0x7f69e00000".
  static void setTextTicks(QCPAxis* axis, const QSharedPointer<QCPAxisTickerText>& ticker);
  /// Linear or logarithmic `axis`, with ticks for its current range (set the range first):
  /// powers of ten over two decades or more, plain numbers within a narrower log range.
  static void setValueScale(QCPAxis* axis, bool log);

  bool eventFilter(QObject* watched, QEvent* event) override;
  /// Adds a chart's own entries to its context menu (after the common ones); none by default.
  virtual void addMenuActions(QMenu& menu);
  /// Writes the chart as a PDF of `size` points: QCustomPlot::savePdf (vectors) by default.
  virtual bool writePdf(const QString& path, QSize size);

 private:
  void showContextMenu(const QPoint& pos);
  void exportWithDialog(const QString& suffix);
  void showToolTip(const QPoint& pos);

  QCustomPlot* plot_ = nullptr;
  bool logScale_ = false;
  bool presentation_ = false;
};

}  // namespace matmulviz::ui

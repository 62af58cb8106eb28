#include "ui/charts/compare_diff_chart.h"
#include "core/util/format_units.h"
#include "ui/charts/diff_colors.h"

#include "core/report/compare_text.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <algorithm>
#include <cstdlib>

namespace matmulviz::ui {

namespace {

/// A bar's name short enough to leave the bars room (a label such as "cuBLAS workspace of the
/// autograd thread at train.py:22" took the chart's whole width): at most 36 characters, the
/// middle elided; the table beside the chart and the CSV give it in full.
QString tickName(const std::string& name) {
  constexpr qsizetype kMax = 36;
  const QString s = QString::fromStdString(name);
  if (s.size() <= kMax) return s;
  return s.left(kMax / 2 - 1) + QChar(0x2026) + s.right(kMax / 2);
}

}  // namespace

CompareDiffChart::CompareDiffChart(QWidget* parent) : ChartView(parent) {
  rebuild();
}

void CompareDiffChart::setRows(const std::vector<BytesDiff>& rows, const QString& what,
                               const QString& title) {
  rows_.assign(rows.begin(), rows.begin() + std::min<size_t>(rows.size(), size_t(maxBars())));
  what_ = what, title_ = title;
  rebuild();
}

QString CompareDiffChart::chartName() const {
  QString name = title_;
  name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
  return name.isEmpty() ? QStringLiteral("compare-difference")
                        : QStringLiteral("compare-difference-") + name;
}

void CompareDiffChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  addTitleAndLegendRows();
  p->legend->setVisible(true);
  auto* title = titleElement();
  title->setText(title_.isEmpty() ? QStringLiteral("B − A")
                                  : QStringLiteral("B − A of %1\nby %2").arg(title_, what_));
  // Horizontal bars: the key axis is the left one, largest |B - A| at the top.
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  const int n = int(rows_.size());
  for (int i = 0; i < n; ++i) ticker->addTick(n - i, tickName(rows_[size_t(i)].name));
  setTextTicks(p->yAxis, ticker);
  p->yAxis->setLabel(what_);
  p->yAxis->setRange(0.4, n + 0.6);
  p->xAxis->setLabel(QStringLiteral("B − A (MiB)"));
  p->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  double extent = 0;
  for (int side = 0; side < 2; ++side) {
    auto* bars = new QCPBars(p->yAxis, p->xAxis);
    bars->setName(side == 0 ? QStringLiteral("grows in B") : QStringLiteral("shrinks in B"));
    const QColor c = side == 0 ? growthColor() : shrinkColor();
    bars->setPen(QPen(c.darker(130), 1));
    bars->setBrush(c);
    bars->setWidth(0.6);
    for (int i = 0; i < n; ++i) {
      const int64_t d = rows_[size_t(i)].difference();
      if ((side == 0) != (d > 0) || d == 0) continue;
      bars->addData(n - i, d / kMiB);
      extent = std::max(extent, std::abs(d / kMiB));
    }
  }
  extent = std::max(extent, 1e-3);
  p->xAxis->setRange(-extent * 1.6, extent * 1.6);  // room for the sizes beside the bars
  for (int i = 0; i < n; ++i) {
    const int64_t d = rows_[size_t(i)].difference();
    auto* label = new QCPItemText(p);
    label->position->setAxes(p->xAxis, p->yAxis);
    label->position->setCoords(d / kMiB, n - i);
    // Beside the bar's end; inside it, in white, for a bar longer than half the largest (its
    // size would not fit beside it in a narrow chart).
    const bool inside = std::abs(d / kMiB) > 0.5 * extent;
    label->setPositionAlignment(((d >= 0) != inside ? Qt::AlignLeft : Qt::AlignRight) |
                                Qt::AlignVCenter);
    label->setPadding(QMargins(4, 0, 4, 0));
    label->setColor(inside  ? QColor(Qt::white)
                    : d > 0 ? growthColor().darker(120)
                    : d < 0 ? shrinkColor().darker(120)
                            : QColor(Qt::darkGray));
    QFont f = font();
    f.setPointSize(fontPointSize(9));
    label->setFont(f);
    label->setText(QString::fromStdString(formatSizeDifference(d)));
  }
  if (rows_.empty()) showPlaceholder(QStringLiteral("No difference to show"));
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString CompareDiffChart::csv() const {
  if (rows_.empty()) return {};
  QString out = QStringLiteral("name,a_bytes,b_bytes,difference_bytes\n");
  for (const BytesDiff& d : rows_)
    out += QStringLiteral("%1,%2,%3,%4\n")
               .arg(csvField(QString::fromStdString(d.name)))
               .arg(d.a)
               .arg(d.b)
               .arg(d.difference());
  return out;
}

}  // namespace matmulviz::ui

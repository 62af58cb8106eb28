#include "ui/charts/compare_timeline_chart.h"

#include "ui/models/memory_timeline_model.h"

#include "core/util/format_units.h"

#include <qcustomplot.h>

#include <algorithm>

namespace matmulviz::ui {

namespace {

/// `series` per column of events: each column's maximum at its first event (one point per event
/// when there are no more events than columns), each widened to its neighbours' (so a line that
/// rises and falls every few events is drawn at its top, not as a comb), closed at the last event.
void columnMaxima(const QVector<qint64>& series, int columns, bool log, QVector<double>& keys,
                  QVector<double>& values) {
  const qint64 n = series.size();
  const bool aggregated = n > columns;
  columns = static_cast<int>(std::min<qint64>(n, columns));
  for (int c = 0; c < columns; ++c) {
    const qint64 begin = n * c / columns, end = n * (c + 1) / columns;
    if (begin >= end) continue;
    const qint64 top = *std::max_element(series.begin() + begin, series.begin() + end);
    keys << double(begin);
    values << std::max(top / kMiB, log ? ChartView::kLogFloorMiB : 0.0);
  }
  const QVector<double> own = values;
  for (int i = 0; aggregated && i < own.size(); ++i)
    values[i] =
        std::max({own[i], own[std::max(0, i - 1)], own[std::min(int(own.size()) - 1, i + 1)]});
  if (n > 0) keys << double(n - 1), values << values.back();
}

}  // namespace

CompareTimelineChart::CompareTimelineChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  rebuild();
}

void CompareTimelineChart::setTimelines(const MemoryTimelineModel* a, const QString& nameA,
                                        const MemoryTimelineModel* b, const QString& nameB,
                                        const QString& title) {
  a_ = a, b_ = b;
  nameA_ = nameA, nameB_ = nameB, title_ = title;
  rebuild();
}

QString CompareTimelineChart::chartName() const {
  QString name = title_;
  name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
  return name.isEmpty() ? QStringLiteral("compare-memory")
                        : QStringLiteral("compare-memory-") + name;
}

void CompareTimelineChart::addSide(const MemoryTimelineModel& m, const QString& name, int color,
                                   bool fill) {
  QVector<double> keys, values;
  columnMaxima(m.allocatedSeries(), lineColumns(), logScale(), keys, values);
  auto* allocated = plot()->addGraph();
  allocated->setName(QStringLiteral("%1: allocated").arg(name));
  allocated->setLineStyle(QCPGraph::lsStepLeft);
  QColor c = seriesColor(color);
  allocated->setPen(QPen(c, lineWidth() + 1));
  if (fill) {
    QColor brush = c;
    brush.setAlpha(60);
    allocated->setBrush(brush);
  }
  allocated->setData(keys, values, true);
  keys.clear(), values.clear();
  columnMaxima(m.reservedSeries(), lineColumns(), logScale(), keys, values);
  auto* reserved = plot()->addGraph();
  reserved->setName(QStringLiteral("%1: reserved").arg(name));
  reserved->setLineStyle(QCPGraph::lsStepLeft);
  reserved->setPen(QPen(c.darker(130), lineWidth(), Qt::DashLine));
  reserved->setData(keys, values, true);
}

void CompareTimelineChart::markPeak(const MemoryTimelineModel& m, const QString& name, int color,
                                    bool above) {
  const int peak = m.peakEvent();
  if (peak < 0) return;
  auto* dot = new QCPItemTracer(plot());
  dot->setStyle(QCPItemTracer::tsCircle);
  dot->setSize(presentationMode() ? 14 : 9);
  dot->setPen(QPen(seriesColor(color).darker(140), 2));
  dot->position->setCoords(peak,
                           std::max(m.peakAllocatedBytes() / kMiB, logScale() ? kLogFloorMiB : 0));
  auto* label = new QCPItemText(plot());
  QFont f = font();
  f.setPointSize(fontPointSize(9));
  f.setBold(true);
  label->setFont(f);
  label->setColor(seriesColor(color).darker(140));
  label->setText(QStringLiteral("%1 peak: %2 at event %3")
                     .arg(name, QString::fromStdString(formatSize(m.peakAllocatedBytes())))
                     .arg(peak));
  label->position->setParentAnchor(dot->position);
  label->position->setCoords(0, above ? -8 : 8);
  const double right = plot()->xAxis->range().upper;
  label->setPositionAlignment((above ? Qt::AlignBottom : Qt::AlignTop) |
                              (peak > 0.6 * right ? Qt::AlignRight : Qt::AlignLeft));
  label->setBrush(QColor(255, 255, 255, 210));
  label->setPadding(QMargins(3, 1, 3, 1));
}

void CompareTimelineChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  if (addTitleAndLegendRows()) p->legend->setWrap(4);
  p->legend->setVisible(true);
  p->xAxis->setLabel(QStringLiteral("allocator event (in order)"));
  setIntegerTicks(p->xAxis);
  p->yAxis->setLabel(QStringLiteral("memory (MiB)"));
  auto* title = titleElement();
  const bool both = a_ && b_;
  // Two lines: with files' names the one-line title ran past a 700-pixel chart on both sides.
  title->setText(both ? QStringLiteral("memory of %1\nA (%2) and B (%3) on one axis")
                            .arg(title_, nameA_, nameB_)
                      : QStringLiteral("memory comparison (choose two timelines)"));
  double top = 0, last = 1, allocatedTop = 0;
  if (both) {
    addSide(*a_, QStringLiteral("A ") + nameA_, 0, true);
    addSide(*b_, QStringLiteral("B ") + nameB_, 5, false);
    for (const MemoryTimelineModel* m : {a_.data(), b_.data()}) {
      last = std::max(last, double(m->eventCount() - 1));
      for (const auto* s : {&m->allocatedSeries(), &m->reservedSeries()})
        for (const qint64 v : *s) top = std::max(top, v / kMiB);
      allocatedTop = std::max(allocatedTop, m->peakAllocatedBytes() / kMiB);
    }
    // As the Memory view's "scale to allocated": a reserved line far above both peaks would
    // flatten them; the title says where it goes.
    if (top > 4 * allocatedTop && allocatedTop > 0) {
      title->setText(title->text() +
                     QStringLiteral("\n(scaled to allocated: reserved reaches %1, above the chart)")
                         .arg(QString::fromStdString(formatSize(qint64(top * kMiB)))));
      top = allocatedTop;
    }
    p->xAxis->setRange(-0.5, last + 0.5);
    // The higher peak's label above its point, the lower's below: they never overlap.
    const bool aHigher = a_->peakAllocatedBytes() >= b_->peakAllocatedBytes();
    markPeak(*a_, QStringLiteral("A"), 0, aHigher);
    markPeak(*b_, QStringLiteral("B"), 5, !aHigher);
  } else {
    p->xAxis->setRange(0, 1);
    showPlaceholder(QStringLiteral("Compare two reports or two runs to fill this chart"));
  }
  p->yAxis->setRange(logScale() ? QCPRange(kLogFloorMiB, std::max(1.0, top) * 3)
                                : QCPRange(0, std::max(top, 1e-3) * 1.2));
  setValueScale(p->yAxis, logScale());
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString CompareTimelineChart::csv() const {
  if (!a_ || !b_) return {};
  QString out = QStringLiteral(
      "event,a_allocated_bytes,a_reserved_bytes,b_allocated_bytes,"
      "b_reserved_bytes\n");
  const int n = std::max(a_->eventCount(), b_->eventCount());
  auto cell = [](const QVector<qint64>& s, int i) {
    return i < s.size() ? QString::number(s[i]) : QString();
  };
  for (int i = 0; i < n; ++i)
    out += QStringLiteral("%1,%2,%3,%4,%5\n")
               .arg(i)
               .arg(cell(a_->allocatedSeries(), i), cell(a_->reservedSeries(), i),
                    cell(b_->allocatedSeries(), i), cell(b_->reservedSeries(), i));
  return out;
}

}  // namespace matmulviz::ui

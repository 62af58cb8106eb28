#include "ui/charts/program_timeline_chart.h"

#include "core/util/format_units.h"
#include "ui/models/program_run.h"

#include <qcustomplot.h>

#include <QMouseEvent>

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

namespace {

const QColor kLineColor(230, 120, 0);  // the highlighted line: orange
const QColor kPeakColor(200, 0, 0);

/// `series` as at most `columns` points: each stretch of events as its first event's key and
/// the stretch's maximum (every event when there are few), and the last event closing the step.
void columnMaxima(const QVector<qint64>& series, int columns, QVector<double>& keys,
                  QVector<double>& values) {
  const qint64 n = series.size();
  const int count = static_cast<int>(std::min<qint64>(n, columns));
  for (int c = 0; c < count; ++c) {
    const qint64 begin = n * c / count, end = n * (c + 1) / count;
    if (begin >= end) continue;
    keys << double(begin);
    values << *std::max_element(series.begin() + begin, series.begin() + end) / kMiB;
  }
  if (n > 0) {
    keys << double(n - 1) + 0.5;
    values << (values.isEmpty() ? 0.0 : values.back());
  }
}

}  // namespace

ProgramTimelineChart::ProgramTimelineChart(QWidget* parent) : ChartView(parent) {
  plot()->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot()->axisRect()->setRangeDrag(Qt::Horizontal);
  plot()->axisRect()->setRangeZoom(Qt::Horizontal);
  plot()->setCursor(Qt::PointingHandCursor);
  rebuild();
}

void ProgramTimelineChart::setRun(std::shared_ptr<const ProgramRun> run) {
  run_ = std::move(run);
  line_ = 0;
  selected_ = -1;
  rebuild();
}

void ProgramTimelineChart::highlightLine(int line) {
  if (line == line_) return;
  line_ = line;
  rebuild();
}

void ProgramTimelineChart::selectEvent(int e) {
  if (e == selected_) return;
  selected_ = e;
  rebuild();
}

QWidget* ProgramTimelineChart::plotArea() const {
  return plot();
}

void ProgramTimelineChart::setupAxes() {
  QCustomPlot* p = plot();
  if (p->plotLayout()->rowCount() == 1) {
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QString()));
    p->plotLayout()->setRowStretchFactor(0, 0.01);
    p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    p->legend->setWrap(4);
  }
  // The legend below the plot (inside, it would cover the first hump or the peak's label), only
  // when there is data: an empty legend in the layout caps the plot's width at its own.
  const bool empty = !run_ || run_->eventCount() == 0;
  const bool legendInLayout = p->plotLayout()->rowCount() == 3;
  if (empty && legendInLayout) {
    p->plotLayout()->take(p->legend);
    p->plotLayout()->simplify();
  } else if (!empty && !legendInLayout) {
    p->plotLayout()->addElement(2, 0, p->legend);
    p->plotLayout()->setRowStretchFactor(2, 0.01);
  }
  p->legend->setVisible(!empty);
  p->xAxis->setLabel(QStringLiteral("allocator event (in order)"));
  setIntegerTicks(p->xAxis);
  p->yAxis->setLabel(QStringLiteral("memory (MiB)"));
  auto* title = titleElement(10);
  QString text = run_ ? QStringLiteral("memory of the run: click a point to find its line")
                      : QStringLiteral("memory of the run (run the script to fill it)");
  if (run_ && line_ > 0) text += QStringLiteral("; line %1 in orange").arg(line_);
  title->setText(text);
}

void ProgramTimelineChart::addSeries(const QString& name, const QVector<qint64>& series,
                                     const QColor& pen, const QColor& brush) {
  QVector<double> keys, values;
  columnMaxima(series, maxPoints(), keys, values);
  auto* g = plot()->addGraph();
  g->setName(name);
  g->setLineStyle(QCPGraph::lsStepLeft);
  g->setPen(QPen(pen, brush.alpha() ? 1 : lineWidth()));
  g->setBrush(brush);
  g->setData(keys, values, true);
}

void ProgramTimelineChart::addLineMarks() {
  const QVector<int> events = run_->eventsOfLine(line_);
  if (events.isEmpty() || events.size() > maxPoints()) return;
  QVector<double> keys, values;
  for (const int e : events) {
    keys << e;
    values << run_->allocatedSeries()[e] / kMiB;
  }
  auto* g = plot()->addGraph();
  g->setName(QStringLiteral("allocations of line %1").arg(line_));
  g->setLineStyle(QCPGraph::lsNone);
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, kLineColor.darker(130), kLineColor,
                                     presentationMode() ? 11 : 8));
  g->setData(keys, values, true);
}

void ProgramTimelineChart::markPeak() {
  const int peak = run_->peakEvent();
  if (peak < 0) return;
  QCustomPlot* p = plot();
  auto* dot = new QCPItemTracer(p);
  dot->setStyle(QCPItemTracer::tsCircle);
  dot->setSize(presentationMode() ? 14 : 10);
  dot->setPen(QPen(kPeakColor, 2));
  dot->position->setCoords(peak, run_->peakBytes() / kMiB);
  auto* label = new QCPItemText(p);
  QFont f = font();
  f.setPointSize(fontPointSize(9));
  f.setBold(true);
  label->setFont(f);
  label->setColor(kPeakColor);
  label->setText(QStringLiteral("peak %1 at event %2")
                     .arg(QString::fromStdString(formatSize(run_->peakBytes())))
                     .arg(peak));
  label->position->setParentAnchor(dot->position);
  label->position->setCoords(0, -10);
  const double share = run_->eventCount() > 1 ? double(peak) / (run_->eventCount() - 1) : 0;
  label->setPositionAlignment(Qt::AlignBottom | (share > 0.6 ? Qt::AlignRight : Qt::AlignLeft));
  label->setBrush(QColor(255, 255, 255, 210));
  label->setPadding(QMargins(3, 1, 3, 1));
}

void ProgramTimelineChart::markSelected() {
  if (selected_ < 0 || selected_ >= run_->eventCount()) return;
  auto* line = new QCPItemStraightLine(plot());
  line->point1->setCoords(selected_, 0);
  line->point2->setCoords(selected_, 1);
  line->setPen(QPen(QColor(40, 40, 40), presentationMode() ? 2 : 1, Qt::DashLine));
}

void ProgramTimelineChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  setupAxes();
  if (run_ && run_->eventCount() > 0) {
    addSeries(QStringLiteral("reserved"), run_->reservedSeries(), QColor(90, 90, 90),
              Qt::transparent);
    addSeries(QStringLiteral("allocated"), run_->allocatedSeries(), QColor(0, 114, 178),
              QColor(86, 180, 233, 150));
    if (line_ > 0) {
      QColor fill = kLineColor;
      fill.setAlpha(200);
      addSeries(QStringLiteral("alive from line %1").arg(line_), run_->seriesOfLine(line_),
                kLineColor.darker(120), fill);
      addLineMarks();
    }
    markPeak();
    markSelected();
    double top = 0;
    for (const qint64 v : run_->reservedSeries()) top = std::max(top, v / kMiB);
    p->xAxis->setRange(-0.5, std::max(1.0, run_->eventCount() - 0.5));
    p->yAxis->setRange(0, std::max(top, run_->peakBytes() / kMiB) * 1.18 + 1e-3);
  } else {
    p->xAxis->setRange(0, 1);
    p->yAxis->setRange(0, 1);
  }
  setValueScale(p->yAxis, false);
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QPoint ProgramTimelineChart::pixelOfEvent(int e) const {
  if (!run_ || e < 0 || e >= run_->eventCount()) return {-1, -1};
  plot()->replot(QCustomPlot::rpImmediateRefresh);  // the axes' pixel mapping is current
  return QPoint(int(std::lround(plot()->xAxis->coordToPixel(e))),
                int(std::lround(plot()->yAxis->coordToPixel(run_->allocatedSeries()[e] / kMiB))));
}

int ProgramTimelineChart::eventAt(const QPoint& pos) const {
  if (!run_ || run_->eventCount() == 0 || !plot()->axisRect()->rect().contains(pos)) return -1;
  const QCPAxis* x = plot()->xAxis;
  const int n = run_->eventCount();
  const int lo = std::clamp(int(std::ceil(x->pixelToCoord(pos.x() - 4))), 0, n - 1);
  const int hi = std::clamp(int(std::floor(x->pixelToCoord(pos.x() + 4))), 0, n - 1);
  if (lo > hi) return std::clamp(int(std::lround(x->pixelToCoord(pos.x()))), 0, n - 1);
  // The highest point near the click: what the eye sees there (the peak, a spike).
  const auto& allocated = run_->allocatedSeries();
  return int(std::max_element(allocated.begin() + lo, allocated.begin() + hi + 1) -
             allocated.begin());
}

bool ProgramTimelineChart::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot() && event->type() == QEvent::MouseButtonPress) {
    pressedAt_ = static_cast<QMouseEvent*>(event)->pos();
  } else if (watched == plot() && event->type() == QEvent::MouseButtonRelease) {
    const auto* mouse = static_cast<QMouseEvent*>(event);
    // A click, not the end of a drag (which pans).
    if (mouse->button() == Qt::LeftButton && (mouse->pos() - pressedAt_).manhattanLength() <= 4) {
      const int e = eventAt(mouse->pos());
      if (e >= 0) emit eventClicked(e);
    }
  }
  return ChartView::eventFilter(watched, event);
}

QString ProgramTimelineChart::toolTipAt(const QPoint& pos) const {
  const int e = eventAt(pos);
  return e < 0 ? QString() : run_->eventText(e);
}

QString ProgramTimelineChart::csv() const {
  if (!run_ || run_->eventCount() == 0) return {};
  QString out = QStringLiteral("event,kind,allocated_mib,reserved_mib,script_line\n");
  for (int e = 0; e < run_->eventCount(); ++e)
    out += QStringLiteral("%1,%2,%3,%4,%5\n")
               .arg(e)
               .arg(QString::fromLatin1(memoryEventKindName(run_->report().events[size_t(e)].kind)))
               .arg(run_->allocatedSeries()[e] / kMiB, 0, 'g', 12)
               .arg(run_->reservedSeries()[e] / kMiB, 0, 'g', 12)
               .arg(run_->scriptLineOfEvent(e));
  return out;
}

}  // namespace matmulviz::ui

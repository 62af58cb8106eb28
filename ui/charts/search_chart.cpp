#include "ui/charts/search_chart.h"

#include "ui/models/qstring_of.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

namespace {

QString bytes(int64_t b) {
  return bytesText(b);
}

}  // namespace

SearchChart::SearchChart(QWidget* parent) : ChartView(parent) {
  setLogScale(true);
  rebuild();
}

void SearchChart::setResults(std::shared_ptr<const SearchResults> results, const QString& gpuName) {
  results_ = std::move(results);
  gpu_ = gpuName;
  rebuild();
}

QString SearchChart::title() const {
  if (!results_) return {};
  const QString arg = QString::fromStdString(results_->argument);
  const QString on = gpu_.isEmpty() ? QString() : tr(" on %1").arg(gpu_);
  if (!results_->error.empty()) return tr("The search of %1 stopped: a run failed").arg(arg);
  if (!results_->largest) return tr("Not even %1 %2 fits%3").arg(arg).arg(results_->lo).arg(on);
  return tr("Largest %1 that fits%2: %3").arg(arg, on).arg(*results_->largest);
}

void SearchChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  addTitleAndLegendRows();
  titleElement()->setText(title());
  const int n = results_ ? static_cast<int>(results_->trials.size()) : 0;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  double top = 0, bottom = INFINITY;
  auto* fit = new QCPBars(p->xAxis, p->yAxis);
  fit->setName(tr("fits: peak reserved"));
  fit->setBrush(seriesColor(2));
  fit->setPen(QPen(seriesColor(2).darker(130)));
  auto* oom = new QCPBars(p->xAxis, p->yAxis);
  oom->setName(tr("out of memory: reserved when it failed"));
  oom->setBrush(QColor(213, 94, 0));
  oom->setPen(QPen(QColor(213, 94, 0).darker(130)));
  auto* allocated = new QCPGraph(p->xAxis, p->yAxis);
  allocated->setName(tr("peak allocated"));
  allocated->setLineStyle(QCPGraph::lsNone);
  allocated->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, Qt::black, Qt::white,
                                             presentationMode() ? 11 : 8));
  constexpr double kMiB = 1024.0 * 1024.0;
  for (int i = 0; i < n; ++i) {
    const SearchTrial& t = results_->trials[i];
    ticker->addTick(i + 1, QString::number(t.value));
    (t.fits ? fit : oom)->addData(i + 1, t.peakReservedBytes / kMiB);
    allocated->addData(i + 1, t.peakAllocatedBytes / kMiB);
    top = std::max(top, t.peakReservedBytes / kMiB);
    if (t.peakAllocatedBytes > 0) bottom = std::min(bottom, t.peakAllocatedBytes / kMiB);
  }
  for (QCPBars* b : {fit, oom}) {
    b->setWidth(0.6);
    if (logScale()) b->setBaseValue(kLogFloorMiB);  // bars start at the axis' floor
  }
  setTextTicks(p->xAxis, ticker);
  p->xAxis->setTickLabelRotation(n > 10 ? -60 : 0);  // many trials: their values slanted
  p->xAxis->setLabel(
      results_
          ? tr("%1 (each trial a simulated run)").arg(QString::fromStdString(results_->argument))
          : QString());
  p->yAxis->setLabel(logScale() ? tr("memory (MiB, log scale)") : tr("memory (MiB)"));
  p->xAxis->setRange(0.3, std::max(n, 1) + 0.7);
  if (results_ && results_->capacityBytes) {
    const double cap = *results_->capacityBytes / kMiB;
    top = std::max(top, cap);
    auto* line = new QCPItemStraightLine(p);
    line->point1->setCoords(0, cap);
    line->point2->setCoords(1, cap);
    line->setPen(QPen(Qt::black, presentationMode() ? 2.5 : 1.5, Qt::DashLine));
    auto* label = new QCPItemText(p);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    label->position->setCoords(0.35, cap);
    label->setText(tr("capacity %1").arg(bytes(*results_->capacityBytes)));
    QFont f = font();
    f.setPointSize(fontPointSize(9));
    label->setFont(f);
  }
  if (logScale())
    p->yAxis->setRange(std::isfinite(bottom) ? std::max(bottom / 3, kLogFloorMiB) : kLogFloorMiB,
                       top > 0 ? top * 3 : 1);
  else
    p->yAxis->setRange(0, top > 0 ? top * 1.12 : 1);
  setValueScale(p->yAxis, logScale());
  for (int i = 0; i < n; ++i) {  // the answer's bar says so
    const SearchTrial& t = results_->trials[i];
    if (!results_->largest || t.value != *results_->largest) continue;
    auto* label = new QCPItemText(p);
    label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    label->position->setCoords(i + 1, t.peakReservedBytes / kMiB);
    label->setPadding(QMargins(0, 0, 0, 4));
    label->setText(tr("largest: %1").arg(t.value));
    QFont f = font();
    f.setPointSize(fontPointSize(9));
    f.setBold(true);
    label->setFont(f);
  }
  p->legend->setVisible(n > 0);
  if (!results_)
    showPlaceholder(
        tr("Put {} in the script's arguments where the value goes (--batch_size={})\n"
           "and press \"Largest batch…\": each trial is a simulated run"));
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString SearchChart::toolTipFor(QCPAbstractPlottable* plottable, int dataIndex) const {
  if (!results_ || !plottable || dataIndex < 0) return {};
  const auto* data = dynamic_cast<QCPBars*>(plottable);
  const auto* graph = dynamic_cast<QCPGraph*>(plottable);
  double key = -1;
  if (data && dataIndex < data->dataCount()) key = (data->data()->begin() + dataIndex)->key;
  if (graph && dataIndex < graph->dataCount()) key = (graph->data()->begin() + dataIndex)->key;
  const int i = static_cast<int>(key) - 1;
  if (i < 0 || i >= static_cast<int>(results_->trials.size())) return {};
  const SearchTrial& t = results_->trials[i];
  QString text = tr("%1 %2: %3\npeak allocated %4, reserved %5, %6 s")
                     .arg(QString::fromStdString(results_->argument))
                     .arg(t.value)
                     .arg(t.fits ? tr("fits") : tr("out of memory"))
                     .arg(bytes(t.peakAllocatedBytes), bytes(t.peakReservedBytes))
                     .arg(t.seconds, 0, 'f', 1);
  if (!t.where.empty())
    text += tr("\nran out of memory at %1").arg(QString::fromStdString(t.where));
  return text;
}

QString SearchChart::csv() const {
  if (!results_ || results_->trials.empty()) return {};
  QString out =
      QStringLiteral("value,fits,peak_allocated_bytes,peak_reserved_bytes,where,seconds\n");
  for (const SearchTrial& t : results_->trials)
    out += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
               .arg(t.value)
               .arg(t.fits ? QStringLiteral("true") : QStringLiteral("false"))
               .arg(t.peakAllocatedBytes)
               .arg(t.peakReservedBytes)
               .arg(csvField(QString::fromStdString(t.where)))
               .arg(t.seconds, 0, 'g', 6);
  return out;
}

}  // namespace matmulviz::ui

#include "ui/charts/ladder_chart.h"

#include "core/util/format_units.h"
#include "ui/models/strategies_table_model.h"  // csvField

#include <qcustomplot.h>

#include <cmath>

namespace matmulviz::ui {

namespace {

bool hasBar(const LadderChart::Rung& r) {
  return r.ok && std::isfinite(r.seconds) && r.seconds > 0;
}

// the app's one wording of times, factors and rates ("31.0 ns", "8160x", "8.15 T FLOP/s"), as in
// its tables
QString seconds(double s) {
  return QString::fromStdString(formatSeconds(s));
}
QString factor(double ratio) {
  return QString::fromStdString(formatFactor(ratio));
}
QString rate(double perSecond, const char* what) {
  return QString::fromStdString(formatRate(perSecond, what));
}

}  // namespace

LadderChart::LadderChart(QWidget* parent) : ChartView(parent) {
  setLogScale(true);
  rebuild();
}

void LadderChart::setRungs(const QVector<Rung>& rungs) {
  rungs_ = rungs;
  rebuild();
}

void LadderChart::setTitle(const QString& title) {
  title_ = title;
  rebuild();
}

QVector<LadderChart::Rung> LadderChart::rungsFromTimes(const QVector<Rung>& ordered) {
  QVector<Rung> out = ordered;
  const Rung* previous = nullptr;
  for (Rung& r : out) {
    r.speedupOverPrevious = previous && hasBar(r) ? previous->seconds / r.seconds : std::nan("");
    if (hasBar(r)) previous = &r;
  }
  return out;
}

QVector<LadderChart::Rung> LadderChart::rungsFromLadder(const kernels::LadderReport& report) {
  QVector<Rung> rungs;
  for (const kernels::LadderRung& r : report.rungs) {
    Rung rung;
    rung.name = QString::fromStdString(r.name);
    rung.ok = r.ok;
    rung.seconds = r.ok ? r.seconds : std::nan("");
    rung.speedupOverPrevious = r.ok && r.speedup > 0 ? r.speedup : std::nan("");
    rung.note = r.ok ? QStringLiteral("%1 (%2)").arg(QString::fromStdString(r.what),
                                                     rate(r.gflops * 1e9, "FLOP"))
                     : QStringLiteral("skipped: ") + QString::fromStdString(r.skipped);
    rungs << rung;
  }
  return rungs;
}

void LadderChart::rebuild() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  if (p->plotLayout()->rowCount() == 1) {
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QString()));
    p->plotLayout()->setRowStretchFactor(0, 0.01);
  }
  auto* title = titleElement();
  title->setText(title_);
  p->legend->setVisible(false);
  const int n = static_cast<int>(rungs_.size());
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int i = 0; i < n; ++i) ticker->addTick(n - i, rungs_[i].name);
  setTextTicks(p->yAxis, ticker);
  p->yAxis->setRange(0.4, n + 0.6);
  p->yAxis->setLabel(QString());
  p->xAxis->setLabel(logScale() ? QStringLiteral("time (s, log scale)")
                                : QStringLiteral("time (s)"));
  auto* bars = new QCPBars(p->yAxis, p->xAxis);
  bars->setName(QStringLiteral("time"));
  bars->setWidth(0.6);
  bars->setPen(QPen(seriesColor(0).darker(130), presentationMode() ? 2 : 1));
  bars->setBrush(seriesColor(0));
  double lo = INFINITY, hi = 0;
  for (const Rung& r : rungs_)
    if (hasBar(r)) {
      lo = std::min(lo, r.seconds);
      hi = std::max(hi, r.seconds);
    }
  if (hi <= 0) lo = 1e-3, hi = 1;
  if (logScale()) {
    bars->setBaseValue(1e-300);            // bars end at base + value: keep the base negligible
    p->xAxis->setRange(lo / 10, hi * 30);  // room for the labels at the right of the bars
  } else {
    p->xAxis->setRange(0, hi * 1.5);
  }
  setValueScale(p->xAxis, logScale());
  QFont lf = font();
  lf.setPointSize(fontPointSize(9));
  for (int i = 0; i < n; ++i) {
    const Rung& r = rungs_[i];
    auto* label = new QCPItemText(p);
    label->setFont(lf);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    label->setPadding(QMargins(6, 0, 0, 0));
    label->position->setCoords(hasBar(r) ? r.seconds : p->xAxis->range().lower, n - i);
    if (!hasBar(r)) {
      label->setColor(QColor(200, 0, 0));
      label->setText(r.note.isEmpty() ? QStringLiteral("failed") : r.note);
      continue;
    }
    bars->addData(n - i, r.seconds);
    QString text = seconds(r.seconds);
    if (std::isfinite(r.speedupOverPrevious) && r.speedupOverPrevious > 0)
      text += QStringLiteral("   ") + factor(r.speedupOverPrevious);
    label->setText(text);
  }
  if (rungs_.isEmpty())
    showPlaceholder(
        QStringLiteral("Press \"Run the speed ladder\" to fill this chart:\n"
                       "the launch above timed as a simulated kernel, a loop, einsum, "
                       "BLAS and (with a GPU) CUDA"));
  applyStyle();
  p->replot(QCustomPlot::rpQueuedReplot);
}

QString LadderChart::toolTipFor(QCPAbstractPlottable*, int dataIndex) const {
  // Data are sorted by key = n - i, so data index k is rung n - 1 - k among those with bars.
  QVector<int> withBars;
  for (int i = static_cast<int>(rungs_.size()) - 1; i >= 0; --i)
    if (hasBar(rungs_[i])) withBars << i;
  if (dataIndex < 0 || dataIndex >= withBars.size()) return {};
  const Rung& r = rungs_[withBars[dataIndex]];
  QString text = QStringLiteral("%1: %2").arg(r.name, seconds(r.seconds));
  if (std::isfinite(r.speedupOverPrevious))
    text += QStringLiteral(", %1 over the rung above").arg(factor(r.speedupOverPrevious));
  if (!r.note.isEmpty()) text += QStringLiteral("\n") + r.note;
  return text;
}

QString LadderChart::csv() const {
  if (rungs_.isEmpty()) return {};
  QString out = QStringLiteral("rung,seconds,speedup_over_previous,ok,note\n");
  for (const Rung& r : rungs_)
    out += QStringLiteral("%1,%2,%3,%4,%5\n")
               .arg(csvField(r.name),
                    std::isfinite(r.seconds) ? QString::number(r.seconds, 'g', 17) : QString(),
                    std::isfinite(r.speedupOverPrevious)
                        ? QString::number(r.speedupOverPrevious, 'g', 17)
                        : QString(),
                    r.ok ? QStringLiteral("true") : QStringLiteral("false"), csvField(r.note));
  return out;
}

}  // namespace matmulviz::ui

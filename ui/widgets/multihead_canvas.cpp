#include "ui/widgets/multihead_canvas.h"

#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {
namespace {

/// Blue (negative) - white (0) - red (positive), scaled by `maxAbs`.
QColor diverging(double v, double maxAbs) {
  const double x = maxAbs > 0 ? std::clamp(v / maxAbs, -1.0, 1.0) : 0.0;
  const int fade = int(255 * (1 - std::abs(x)));
  return x >= 0 ? QColor(255, fade, fade) : QColor(fade, fade, 255);
}

/// Room right of O3 for its colour scale: the bar and its labels.
constexpr double kScaleWidth = 84;

}  // namespace

QColor headColor(int h, int count, bool light) {
  QColor c = QColor::fromHsvF(std::fmod(0.6 + double(h) / std::max(1, count), 1.0), 0.55, 0.9);
  return light ? c.lighter(150) : c;
}

MultiheadCanvas::MultiheadCanvas(QWidget* parent) : QWidget(parent) {
  setMinimumSize(480, 360);
  setObjectName("multiheadCanvas");
}

void MultiheadCanvas::setReport(std::shared_ptr<const MultiheadReport> report) {
  report_ = std::move(report);
  update();
}

void MultiheadCanvas::setBatch(int batch) {
  batch_ = batch;
  update();
}

void MultiheadCanvas::setPresentationMode(bool on) {
  presentation_ = on;
  update();
}

void MultiheadCanvas::title(QPainter& p, const QRectF& area, const QString& text) const {
  QFont f = font();
  f.setBold(true);
  f.setPointSizeF(f.pointSizeF() * (presentation_ ? 1.4 : 1.1));
  p.setFont(f);
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(area.adjusted(0, 0, 0, -area.height() + 28), Qt::AlignLeft | Qt::AlignVCenter, text);
  p.setFont(font());
}

void MultiheadCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (!report_) {
    p.drawText(rect(), Qt::AlignCenter, tr("Set the sizes and press Run (or move a slider)."));
    return;
  }
  const QRectF all = QRectF(rect()).adjusted(10, 10, -10, -10);
  const double w = all.width(), h = all.height();
  drawHeads(p, QRectF(all.left(), all.top(), w * 0.55, h * 0.5));
  drawMask(p, QRectF(all.left() + w * 0.58, all.top(), w * 0.42, h * 0.5));
  drawO3(p, QRectF(all.left(), all.top() + h * 0.53, w, h * 0.47));
}

void MultiheadCanvas::drawHeads(QPainter& p, const QRectF& area) const {
  const MultiheadConfig& c = report_->config;
  const int b = std::clamp(batch_, 0, int(c.b) - 1);
  const int64_t hd = c.h / c.numHeads;
  title(p, area,
        tr("A1[%1] [s=%2, h=%3] split into %4 heads of hd=%5")
            .arg(b)
            .arg(c.s)
            .arg(c.h)
            .arg(c.numHeads)
            .arg(hd));
  const QRectF grid = area.adjusted(0, 32, 0, -22);
  const double cw = grid.width() / double(c.h), ch = grid.height() / double(c.s);
  const bool lines = cw >= 4 && ch >= 4;
  for (int64_t j = 0; j < c.s; ++j) {
    const bool important = report_->mask[size_t(b * c.s + j)] != 0;
    for (int64_t head = 0; head < c.numHeads; ++head) {
      const QRectF cell(grid.left() + double(head * hd) * cw, grid.top() + double(j) * ch,
                        double(hd) * cw, ch);
      p.fillRect(cell, headColor(int(head), int(c.numHeads), !important));
    }
    if (lines) p.setPen(QPen(palette().color(QPalette::Base), 1));
    if (lines)
      p.drawLine(QPointF(grid.left(), grid.top() + double(j) * ch),
                 QPointF(grid.right(), grid.top() + double(j) * ch));
  }
  p.setPen(QPen(palette().color(QPalette::WindowText), 2));
  for (int64_t head = 0; head <= c.numHeads; ++head) {
    const double x = grid.left() + double(head * hd) * cw;
    p.drawLine(QPointF(x, grid.top()), QPointF(x, grid.bottom()));
  }
  p.drawRect(grid);
  for (int64_t head = 0; head < c.numHeads && cw * double(hd) > 30; ++head)
    p.drawText(QRectF(grid.left() + double(head * hd) * cw, grid.bottom() + 2, double(hd) * cw, 20),
               Qt::AlignCenter, tr("head %1").arg(head));
}

void MultiheadCanvas::drawMask(QPainter& p, const QRectF& area) const {
  const MultiheadConfig& c = report_->config;
  const QString k = c.topK ? QString::number(*c.topK) : tr("none");
  title(
      p, area,
      tr("important: P >= %1 and top_k %2: t = %3").arg(c.topP, 0, 'g', 3).arg(k).arg(report_->t));
  const QRectF grid = area.adjusted(30, 32, 0, -22);
  const double cw = grid.width() / double(c.s), ch = std::min(grid.height() / double(c.b), cw * 2);
  const std::vector<double> P = report_->inputs.P.toDoubles();
  for (int64_t i = 0; i < c.b; ++i) {
    for (int64_t j = 0; j < c.s; ++j) {
      const QRectF cell(grid.left() + double(j) * cw, grid.top() + double(i) * ch, cw, ch);
      const double v = P[size_t(i * c.s + j)];
      const int g = int(255 - 180 * std::clamp(v, 0.0, 1.0));
      p.fillRect(cell, QColor(g, g, g));
      if (report_->mask[size_t(i * c.s + j)]) {
        p.setPen(QPen(QColor(230, 120, 0), std::max(2.0, std::min(cw, ch) / 8)));
        p.drawRect(cell.adjusted(1.5, 1.5, -1.5, -1.5));
      }
      if (cw > 34 && ch > 16) {
        p.setPen(g < 128 ? Qt::white : Qt::black);
        p.drawText(cell, Qt::AlignCenter, QString::number(v, 'f', 2));
      }
    }
    if (ch > 12) {
      p.setPen(palette().color(QPalette::WindowText));
      p.drawText(QRectF(area.left(), grid.top() + double(i) * ch, 28, ch), Qt::AlignCenter,
                 QString::number(i));
    }
  }
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRectF(grid.left(), grid.top() + double(c.b) * ch + 2, grid.width(), 20),
             Qt::AlignLeft,
             tr("P [b=%1, s=%2]: darker = more probable; orange = important").arg(c.b).arg(c.s));
}

void MultiheadCanvas::drawO3(QPainter& p, const QRectF& area) const {
  const MultiheadConfig& c = report_->config;
  title(p, area,
        tr("O3 [t=%1, nh=%2, e=%3]: each important token's heads times W1's head slices")
            .arg(report_->t)
            .arg(c.numHeads)
            .arg(c.e));
  if (report_->t == 0 || !report_->O3.defined()) {
    p.drawText(area.adjusted(0, 32, 0, 0), Qt::AlignLeft | Qt::AlignTop,
               tr("No important token: O3 is empty (t = 0)."));
    return;
  }
  const QRectF grid = area.adjusted(70, 32, -kScaleWidth, -4);
  const int64_t cols = c.numHeads * c.e;
  const std::vector<double> o = report_->O3.toDoubles();
  double maxAbs = 0;
  for (double v : o) maxAbs = std::max(maxAbs, std::abs(v));
  const int64_t rows = std::min<int64_t>(report_->t, 64);
  const double cw = grid.width() / double(cols), ch = std::min(grid.height() / double(rows), 24.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t x = 0; x < cols; ++x)
      p.fillRect(QRectF(grid.left() + double(x) * cw, grid.top() + double(r) * ch, cw, ch),
                 diverging(o[size_t(r * cols + x)], maxAbs));
    const int64_t token = report_->selectedTokens[size_t(r)];
    if (ch >= 10) {
      p.setPen(palette().color(QPalette::WindowText));
      p.drawText(QRectF(area.left(), grid.top() + double(r) * ch, 66, ch),
                 Qt::AlignRight | Qt::AlignVCenter,
                 QString("(%1,%2)").arg(token / c.s).arg(token % c.s));
    }
  }
  p.setPen(QPen(palette().color(QPalette::WindowText), 2));
  for (int64_t head = 0; head <= c.numHeads; ++head) {
    const double x = grid.left() + double(head * c.e) * cw;
    p.drawLine(QPointF(x, grid.top()), QPointF(x, grid.top() + double(rows) * ch));
  }
  if (rows < report_->t)
    p.drawText(QRectF(grid.left(), grid.top() + double(rows) * ch, grid.width(), 20), Qt::AlignLeft,
               tr("… %1 more rows").arg(report_->t - rows));
  const double barHeight = std::max(double(rows) * ch, std::min(grid.height(), 90.0));
  drawColorScale(p, QRectF(grid.right() + 12, grid.top(), kScaleWidth - 12, barHeight), maxAbs);
}

void MultiheadCanvas::drawColorScale(QPainter& p, const QRectF& area, double maxAbs) const {
  const QRectF bar(area.left(), area.top() + 8, 14, std::max(area.height() - 16, 30.0));
  QLinearGradient gradient(bar.topLeft(), bar.bottomLeft());
  gradient.setColorAt(0.0, diverging(1, 1));
  gradient.setColorAt(0.5, diverging(0, 1));
  gradient.setColorAt(1.0, diverging(-1, 1));
  p.fillRect(bar, gradient);
  p.setPen(QPen(palette().color(QPalette::WindowText), 1));
  p.drawRect(bar);
  const QRectF labels(bar.right() + 4, bar.top() - 8, area.right() - bar.right() - 4, 16);
  const QString max = QString::number(maxAbs, 'g', 3);
  p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, "+" + max);
  p.drawText(labels.translated(0, bar.height() / 2), Qt::AlignLeft | Qt::AlignVCenter, "0");
  p.drawText(labels.translated(0, bar.height()), Qt::AlignLeft | Qt::AlignVCenter, "-" + max);
}

}  // namespace matmulviz::ui

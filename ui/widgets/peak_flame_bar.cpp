#include "ui/widgets/peak_flame_bar.h"

#include "core/util/format_units.h"
#include "ui/models/program_run.h"
#include "ui/models/qstring_of.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace matmulviz::ui {

namespace {

/// Okabe and Ito's colour-blind-safe palette, without black, for the lines' blocks.
QColor lineColor(int i) {
  static const QColor colors[] = {{86, 180, 233}, {0, 158, 115},   {240, 228, 66}, {0, 114, 178},
                                  {213, 94, 0},   {204, 121, 167}, {230, 159, 0}};
  return colors[i % 7];
}

}  // namespace

PeakFlameBar::PeakFlameBar(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setCursor(Qt::PointingHandCursor);
}

void PeakFlameBar::setRun(std::shared_ptr<const ProgramRun> run) {
  run_ = std::move(run);
  selected_ = 0;
  laidOutWidth_ = -1;
  update();
}

void PeakFlameBar::setSelectedLine(int line) {
  if (line == selected_) return;
  selected_ = line;
  update();
}

void PeakFlameBar::layoutBlocks() {
  blocks_.clear();
  laidOutWidth_ = width();
  if (!run_ || run_->peakBytes() <= 0) return;
  const int left = 4, total = std::max(1, width() - 8);
  const double scale = double(total) / double(run_->peakBytes());
  blocks_ << Block{
      QRect(left, 4, total, kRowHeight - 2),
      tr("peak: %1 allocated at event %2").arg(bytesText(run_->peakBytes())).arg(run_->peakEvent()),
      QString(),
      0,
      -1,
      false};
  double x = left;
  const auto& groups = run_->peakGroups();
  for (int g = 0; g < groups.size(); ++g) {
    const auto& group = groups[g];
    const double w = group.bytes * scale;
    const QString text = group.scriptLine > 0
                             ? tr("line %1: %2").arg(group.scriptLine).arg(bytesText(group.bytes))
                             : tr("%1: %2").arg(group.where, bytesText(group.bytes));
    blocks_ << Block{
        QRect(int(x), 4 + kRowHeight, std::max(1, int(x + w) - int(x)), kRowHeight - 2),
        text,
        group.where + QStringLiteral("\n") + group.code + QStringLiteral("\n") +
            tr("%1 in %n blocks alive at the peak", nullptr, group.blocks)
                .arg(bytesText(group.bytes)),
        group.scriptLine,
        g,
        false};
    double ox = x;
    for (const auto& owner : group.owners) {
      const double ow = owner.bytes * scale;
      blocks_ << Block{
          QRect(int(ox), 4 + 2 * kRowHeight, std::max(1, int(ox + ow) - int(ox)), kRowHeight - 2),
          owner.owner,
          owner.owner + QStringLiteral("\n") +
              tr("%1 in %n blocks", nullptr, owner.blocks).arg(bytesText(owner.bytes)),
          group.scriptLine,
          g,
          true};
      ox += ow;
    }
    x += w;
  }
}

QRect PeakFlameBar::rectOfLine(int line) const {
  if (laidOutWidth_ != width()) const_cast<PeakFlameBar*>(this)->layoutBlocks();
  for (const Block& b : blocks_)
    if (!b.owner && b.group >= 0 && b.line == line && line > 0) return b.rect;
  return {};
}

void PeakFlameBar::paintEvent(QPaintEvent*) {
  if (laidOutWidth_ != width()) layoutBlocks();
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (blocks_.isEmpty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("Run the script: what is alive at its peak shows here"));
    return;
  }
  for (const Block& b : blocks_) {
    QColor fill = b.group < 0 ? QColor(200, 60, 60) : lineColor(b.group);
    if (b.owner) fill = fill.lighter(135);
    p.fillRect(b.rect, fill);
    p.setPen(QPen(Qt::white, 1));
    p.drawRect(b.rect.adjusted(0, 0, -1, -1));
    const QRect inner = b.rect.adjusted(4, 0, -4, 0);
    const QString text = fontMetrics().elidedText(b.text, Qt::ElideRight, inner.width());
    if (inner.width() > fontMetrics().horizontalAdvance(QStringLiteral("l…")) && !text.isEmpty()) {
      p.setPen(b.group < 0 ? Qt::white : Qt::black);
      p.drawText(inner, Qt::AlignVCenter | Qt::AlignLeft, text);
    }
  }
  for (const Block& b : blocks_)
    if (!b.owner && b.group >= 0 && selected_ > 0 && b.line == selected_) {
      p.setPen(QPen(QColor(230, 120, 0), 3));
      p.setBrush(Qt::NoBrush);
      p.drawRect(b.rect.adjusted(1, 1, -2, -2));
    }
}

const PeakFlameBar::Block* PeakFlameBar::blockAt(const QPoint& pos) const {
  for (const Block& b : blocks_)
    if (b.rect.contains(pos)) return &b;
  return nullptr;
}

void PeakFlameBar::mousePressEvent(QMouseEvent* event) {
  if (laidOutWidth_ != width()) layoutBlocks();
  const Block* b = blockAt(event->pos());
  if (b && b->line > 0) emit lineClicked(b->line);
}

bool PeakFlameBar::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const Block* b = blockAt(help->pos());
    if (b && !b->toolTip.isEmpty())
      QToolTip::showText(help->globalPos(), b->toolTip, this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace matmulviz::ui

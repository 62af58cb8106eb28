#include "ui/widgets/grouped_bmm_canvas.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace matmulviz::ui {
namespace {

constexpr int kMargin = 12;
// At the default font; scaled with the font's height (classroom mode).
constexpr int kLabelWidth = 200;
constexpr int kCellHeight = 24;
constexpr int kIndexLine = 15;    // the small index above a row of cells
constexpr int kCaptionLine = 18;  // the sentence under a row
constexpr double kDefaultFontHeight = 17.0;

/// A light colour per bucket, neighbours far apart in hue (golden angle).
QColor bucketColor(int m) {
  return QColor::fromHsv((m * 137) % 360, 80, 250);
}

/// -1 blue, 0 white, +1 red: the values of the shared tile.
QColor valueColor(float v) {
  const double t = std::clamp(static_cast<double>(v), -1.0, 1.0);
  const double fade = 1.0 - 0.75 * std::abs(t);
  return t >= 0 ? QColor::fromRgbF(1.0, fade, fade) : QColor::fromRgbF(fade, fade, 1.0);
}

QFont scaled(const QFont& base, double factor, bool bold = false) {
  QFont f = base;
  f.setPointSizeF(base.pointSizeF() * factor);
  f.setBold(bold);
  return f;
}

}  // namespace

/// Where each row of the picture lies for a widget of a given size.
struct GroupedBmmCanvas::Geometry {
  int cellWidth = 20;
  int labelWidth = kLabelWidth, cellHeight = kCellHeight;
  int indexLine = kIndexLine, captionLine = kCaptionLine;
  int x0 = kMargin + kLabelWidth;  // left edge of the first cell
  int yQ = 0, yCounts = 0, yOffsets = 0, yRows = 0, yTile = 0;
  QRect cell(int y, int index) const { return {x0 + index * cellWidth, y, cellWidth, cellHeight}; }
};

GroupedBmmCanvas::GroupedBmmCanvas(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setAccessibleName(QStringLiteral("grouped_bmm picture"));
  setToolTip(
      QStringLiteral("click a bucket (its count, offset or bracket) or press Left/Right "
                     "to show another block"));
}

void GroupedBmmCanvas::setPicture(std::shared_ptr<const GroupedBmmPicture> picture) {
  picture_ = std::move(picture);
  if (picture_ != nullptr) {
    // open on the first block that has work, so the tile is not an empty bucket's
    const std::vector<int>& counts = picture_->buckets.counts;
    const auto used = std::find_if(counts.begin(), counts.end(), [](int c) { return c > 0; });
    if (block_ >= static_cast<int>(counts.size()) || counts[static_cast<std::size_t>(block_)] == 0)
      block_ = used == counts.end() ? 0 : static_cast<int>(used - counts.begin());
  }
  update();
}

void GroupedBmmCanvas::selectBlock(int m) {
  if (picture_ == nullptr) return;
  m = std::clamp(m, 0, picture_->spec.table - 1);
  if (m == block_) return;
  block_ = m;
  update();
  emit blockSelected(m);
}

GroupedBmmCanvas::Geometry GroupedBmmCanvas::layout(QSize size) const {
  Geometry g;
  const double k = std::max(1.0, fontMetrics().height() / kDefaultFontHeight);
  g.labelWidth = static_cast<int>(kLabelWidth * k);
  g.cellHeight = static_cast<int>(kCellHeight * k);
  g.indexLine = static_cast<int>(kIndexLine * k);
  g.captionLine = static_cast<int>(kCaptionLine * k);
  g.x0 = kMargin + g.labelWidth;
  const int cells = picture_ ? std::max(picture_->spec.items, picture_->spec.table + 1) : 1;
  g.cellWidth = std::clamp((size.width() - g.x0 - kMargin) / cells, 12, static_cast<int>(44 * k));
  const int row = g.indexLine + g.cellHeight + g.captionLine + 10;
  g.yQ = kMargin + static_cast<int>(34 * k) + g.indexLine;
  g.yCounts = g.yQ + row;
  g.yOffsets = g.yCounts + row;
  g.yRows = g.yOffsets + row + 14;  // room for the block brackets
  g.yTile = g.yRows + g.cellHeight + g.captionLine + static_cast<int>(34 * k);
  return g;
}

int GroupedBmmCanvas::bucketAt(QPoint p) const {
  if (picture_ == nullptr) return -1;
  const Geometry g = layout(size());
  const int table = picture_->spec.table;
  for (int m = 0; m < table; ++m) {
    if (g.cell(g.yCounts, m).contains(p) || g.cell(g.yOffsets, m).contains(p)) return m;
    const int begin = picture_->buckets.offsets[static_cast<std::size_t>(m)];
    const int end = picture_->buckets.offsets[static_cast<std::size_t>(m) + 1];
    if (begin == end) continue;
    const QRect span(g.x0 + begin * g.cellWidth, g.yRows - 16, (end - begin) * g.cellWidth,
                     g.cellHeight + 16);
    if (span.contains(p)) return m;
  }
  return -1;
}

void GroupedBmmCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  paint(painter, size());
}

void GroupedBmmCanvas::mousePressEvent(QMouseEvent* event) {
  setFocus();
  if (const int m = bucketAt(event->position().toPoint()); m >= 0) selectBlock(m);
}

void GroupedBmmCanvas::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Right) {
    selectBlock(block_ + 1);
  } else if (event->key() == Qt::Key_Left) {
    selectBlock(block_ - 1);
  } else {
    QWidget::keyPressEvent(event);
  }
}

namespace {

void drawCell(QPainter& p, const QRect& r, const QColor& fill, const QString& text, bool strong) {
  p.fillRect(r, fill);
  p.setPen(QPen(strong ? Qt::black : QColor(150, 150, 150), strong ? 2 : 1));
  p.drawRect(r.adjusted(0, 0, -1, -1));
  p.setPen(Qt::black);
  p.drawText(r, Qt::AlignCenter, text);
}

}  // namespace

void GroupedBmmCanvas::paint(QPainter& p, QSize size) const {
  p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QFont base = font();
  if (picture_ == nullptr) {
    p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter, QStringLiteral("Simulating ..."));
    return;
  }
  const GroupedBmmPicture& pic = *picture_;
  const GroupedBmmSpec& s = pic.spec;
  const kernels::GroupedBuckets& b = pic.buckets;
  const std::vector<sim::PriorLaunch>& launches = pic.run.report.priorLaunches;
  const Geometry g = layout(size);
  const int threads = s.tpb * s.tpb;
  const int W = size.width();
  // The label of a row on the left and the sentence under it.
  const auto rowText = [&](int y, const QString& label, const QString& caption) {
    p.setPen(Qt::black);
    p.drawText(QRect(kMargin, y, g.labelWidth - 8, g.cellHeight), Qt::AlignLeft | Qt::AlignVCenter,
               label);
    p.setPen(QColor(70, 70, 70));
    p.drawText(QRect(g.x0, y + g.cellHeight + 2, W - g.x0 - kMargin, g.captionLine),
               Qt::AlignLeft | Qt::AlignVCenter, caption);
  };

  p.setFont(scaled(base, 1.15, true));
  p.drawText(QRect(kMargin, kMargin, W - 2 * kMargin, 26), Qt::AlignLeft | Qt::AlignVCenter,
             QStringLiteral("grouped_bmm: out[n] = a[n] @ c[q[n]] for %1 items and %2 matrices "
                            "of c, in four launches")
                 .arg(s.items)
                 .arg(s.table));
  p.setFont(scaled(base, 0.8));
  p.setPen(QColor(90, 90, 90));
  const auto indexAbove = [&](int y, int i) {
    const QRect cell = g.cell(y, i);
    p.drawText(QRect(cell.x(), y - g.indexLine, cell.width(), g.indexLine - 1),
               Qt::AlignHCenter | Qt::AlignBottom, QString::number(i));
  };
  for (int n = 0; n < s.items; ++n) indexAbove(g.yQ, n);  // n above q, m above the buckets
  for (int m = 0; m < s.table; ++m) indexAbove(g.yCounts, m);
  for (int m = 0; m <= s.table; ++m) indexAbove(g.yOffsets, m);
  p.drawText(QRect(kMargin, g.yQ - g.indexLine, g.labelWidth, g.indexLine - 1),
             Qt::AlignLeft | Qt::AlignBottom, QStringLiteral("n"));
  p.drawText(QRect(kMargin, g.yCounts - g.indexLine, g.labelWidth, g.indexLine - 1),
             Qt::AlignLeft | Qt::AlignBottom, QStringLiteral("m"));
  p.setFont(base);

  for (int n = 0; n < s.items; ++n) {
    const int m = static_cast<int>(pic.inputs.q[static_cast<std::size_t>(n)]);
    drawCell(p, g.cell(g.yQ, n), bucketColor(m), QString::number(m), m == block_);
  }
  rowText(g.yQ, QStringLiteral("q[n]: the matrix of item n"),
          QStringLiteral("the input: which matrix of c each item multiplies"));

  for (int m = 0; m < s.table; ++m) {
    drawCell(p, g.cell(g.yCounts, m), bucketColor(m),
             QString::number(b.counts[static_cast<std::size_t>(m)]), m == block_);
  }
  const auto launchText = [&](std::size_t i) {
    return i < launches.size()
               ? QStringLiteral("grid %1 x block %2")
                     .arg(QString::fromStdString(sim::toString(launches[i].config.gridDim)))
                     .arg(QString::fromStdString(sim::toString(launches[i].config.blockDim)))
               : QString();
  };
  rowText(
      g.yCounts, QStringLiteral("1  histogram: counts[m]"),
      QStringLiteral("atomicAdd(&counts[q[n]], 1), one thread per item; %1").arg(launchText(0)));

  for (int m = 0; m <= s.table; ++m) {
    drawCell(p, g.cell(g.yOffsets, m), m < s.table ? bucketColor(m) : QColor(235, 235, 235),
             QString::number(b.offsets[static_cast<std::size_t>(m)]), m == block_);
  }
  const std::uint64_t scanBarriers = launches.size() > 1 ? launches[1].stats.barriers : 0;
  rowText(g.yOffsets, QStringLiteral("2  prefix sum: offsets[m]"),
          QStringLiteral("counts[0] + ... + counts[m-1]: one block of %1 threads scans in shared "
                         "memory, %2 barriers")
              .arg(threads)
              .arg(scanBarriers));

  for (int m = 0; m < s.table; ++m) {  // one bracket per block that has items
    const int begin = b.offsets[static_cast<std::size_t>(m)];
    const int end = b.offsets[static_cast<std::size_t>(m) + 1];
    if (begin == end) continue;
    const int x1 = g.x0 + begin * g.cellWidth + 2, x2 = g.x0 + end * g.cellWidth - 2;
    p.setPen(QPen(m == block_ ? Qt::black : QColor(120, 120, 120), m == block_ ? 2 : 1));
    p.drawLine(x1, g.yRows - 4, x2, g.yRows - 4);
    p.drawLine(x1, g.yRows - 4, x1, g.yRows);
    p.drawLine(x2, g.yRows - 4, x2, g.yRows);
    p.setFont(scaled(base, 0.8, m == block_));
    // "block m" where it fits over the bucket, else "m", else nothing
    QString label = QStringLiteral("block %1").arg(m);
    if (p.fontMetrics().horizontalAdvance(label) > x2 - x1) label = QString::number(m);
    if (p.fontMetrics().horizontalAdvance(label) <= x2 - x1)
      p.drawText(QRect(x1, g.yRows - g.indexLine - 5, x2 - x1, g.indexLine), Qt::AlignCenter,
                 label);
    p.setFont(base);
    for (int r = begin; r < end; ++r)
      drawCell(p, g.cell(g.yRows, r), bucketColor(m),
               QString::number(b.rows[static_cast<std::size_t>(r)]), m == block_);
  }
  rowText(g.yRows, QStringLiteral("3  scatter: rows (item ids)"),
          QStringLiteral("rows[offsets[q[n]] + atomicAdd(&cursor[q[n]], 1)] = n: each block's "
                         "items side by side; %1")
              .arg(launchText(2)));

  // 4: the chosen block's shared tile and the items it multiplies.
  const int m = block_;
  const int begin = b.offsets[static_cast<std::size_t>(m)];
  const int end = b.offsets[static_cast<std::size_t>(m) + 1];
  p.setFont(scaled(base, 1.05, true));
  p.drawText(QRect(kMargin, g.yTile - 26, W - 2 * kMargin, 22), Qt::AlignLeft | Qt::AlignVCenter,
             QStringLiteral("4  product: block %1 of %2, (%3, %3) threads")
                 .arg(m)
                 .arg(s.table)
                 .arg(s.tpb));
  p.setFont(base);
  const int tileRoom = std::max(120, size.height() - g.yTile - 90);
  const int ts = std::clamp(std::min((W / 2 - kMargin) / s.K, tileRoom / s.J), 4, 22);
  const QRect tile(kMargin + 24, g.yTile + 20, ts * s.K, ts * s.J);
  const float* c = pic.inputs.b.data() + static_cast<std::size_t>(m) * s.J * s.K;
  for (int j = 0; j < s.J; ++j)
    for (int k = 0; k < s.K; ++k)
      p.fillRect(QRect(tile.x() + k * ts, tile.y() + j * ts, ts, ts),
                 begin == end ? QColor(240, 240, 240)
                              : valueColor(c[static_cast<std::size_t>(j) * s.K + k]));
  p.setPen(QPen(Qt::black, 2));
  p.drawRect(tile);
  p.setPen(Qt::black);
  p.drawText(QRect(tile.x(), tile.y() - 20, 600, 18), Qt::AlignLeft | Qt::AlignVCenter,
             begin == end ? QStringLiteral("cs: not staged (no item uses c[%1]; the block "
                                           "leaves at once)")
                                .arg(m)
                          : QStringLiteral("cs = c[%1] in shared memory, %2 x %3 floats, read "
                                           "from global memory once")
                                .arg(m)
                                .arg(s.J)
                                .arg(s.K));
  p.drawText(QRect(tile.x() - 24, tile.y(), 22, tile.height()), Qt::AlignCenter,
             QStringLiteral("j"));
  p.drawText(QRect(tile.x(), tile.bottom() + 2, tile.width(), 16), Qt::AlignCenter,
             QStringLiteral("k"));

  const int listX = std::max(tile.right() + 40, W / 2);
  QStringList lines;
  lines << QStringLiteral("Items routed to block %1: %2").arg(m).arg(end - begin);
  for (int r = begin; r < end && r < begin + 12; ++r) {
    const int n = b.rows[static_cast<std::size_t>(r)];
    const int row = (r - begin) * s.I;  // the block's rows run over its items' rows
    if (s.I == 1) {
      lines << QStringLiteral("  item %1: out[%1] = a[%1] @ cs   (block row %2: threadIdx.y = %3)")
                   .arg(n)
                   .arg(row)
                   .arg(row % s.tpb);
    } else {
      lines << QStringLiteral(
                   "  item %1: out[%1] = a[%1] @ cs   (block rows %2..%3: "
                   "threadIdx.y = row mod %4)")
                   .arg(n)
                   .arg(row)
                   .arg(row + s.I - 1)
                   .arg(s.tpb);
    }
  }
  if (end - begin > 12) lines << QStringLiteral("  ... %1 more").arg(end - begin - 12);
  lines << QString();
  lines << QStringLiteral("c read from global memory: %1 floats (each of %2 used matrices once)")
               .arg(pic.cFloatsRead())
               .arg(pic.usedMatrices());
  lines << QStringLiteral("gather_bmm (04) reads %1 floats of c: one column per output element")
               .arg(pic.cFloatsReadByGatherBmm());
  lines << QStringLiteral("max_rel_err against float64 BLAS: %1").arg(pic.run.maxRelErr, 0, 'g', 3);
  const int lineHeight = p.fontMetrics().lineSpacing();
  for (int i = 0; i < lines.size(); ++i)
    p.drawText(QRect(listX, g.yTile + i * lineHeight, W - listX - kMargin, lineHeight),
               Qt::AlignLeft | Qt::AlignVCenter, lines[i]);
}

}  // namespace matmulviz::ui

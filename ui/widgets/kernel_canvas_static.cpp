#include "ui/widgets/kernel_canvas_static.h"

#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

#include "ui/widgets/kernel_painter.h"

namespace matmulviz::ui {
namespace {

/// The smallest power of two >= `cells`: index ticks fall on block boundaries (TPB is often one).
std::int64_t tickStep(double cells) {
  std::int64_t step = 1;
  while (double(step) < cells) step *= 2;
  return step;
}

/// The static parts of the diagram, each a stage of its own so that a stale build can stop
/// between them.
class StaticPainter {
 public:
  StaticPainter(QPainter& p, const KernelStaticScene& s)
      : p_(p), g_(s.geometry), L_(s.layout), pal_(s.palette), s_(s) {}

  void background() {
    p_.fillRect(L_.bounds, pal_.background);
    p_.setRenderHint(QPainter::Antialiasing, false);
  }
  void matrices();
  void plane(const QImage& image);
  void gridLines();
  void matrixLabels();
  void legend();

 private:
  QFont font(double scale = 1, bool bold = false) const {
    QFont f = s_.font;
    f.setPixelSize(std::max(6, int(std::lround(L_.fontPx * scale))));
    f.setBold(bold);
    return f;
  }

  QPainter& p_;
  const KernelGeometry& g_;
  const KernelCanvasLayout& L_;
  const KernelPalette& pal_;
  const KernelStaticScene& s_;
};

void StaticPainter::matrices() {
  p_.fillRect(L_.a, pal_.aFill);
  p_.fillRect(L_.b, pal_.bFill);
  p_.setPen(QPen(pal_.grid, 1));
  if (L_.kW >= 5) {
    for (std::int64_t k = 1; k < g_.K; ++k) {
      const double x = L_.a.left() + double(k) * L_.kW;
      p_.drawLine(QPointF(x, L_.a.top()), QPointF(x, L_.a.bottom()));
    }
  }
  if (L_.kH >= 5) {
    for (std::int64_t k = 1; k < g_.K; ++k) {
      const double y = L_.b.top() + double(k) * L_.kH;
      p_.drawLine(QPointF(L_.b.left(), y), QPointF(L_.b.right(), y));
    }
  }
  if (L_.cellH >= 5) {
    for (std::int64_t i = 1; i < g_.M; ++i) {
      const double y = L_.a.top() + double(i) * L_.cellH;
      p_.drawLine(QPointF(L_.a.left(), y), QPointF(L_.a.right(), y));
    }
  }
  if (L_.cellW >= 5) {
    for (std::int64_t j = 1; j < g_.N; ++j) {
      const double x = L_.b.left() + double(j) * L_.cellW;
      p_.drawLine(QPointF(x, L_.b.top()), QPointF(x, L_.b.bottom()));
    }
  }
  p_.setPen(QPen(pal_.text, 1.5));
  p_.setBrush(Qt::NoBrush);
  p_.drawRect(L_.a);
  p_.drawRect(L_.b);
}

void StaticPainter::matrixLabels() {
  p_.setFont(font(1.0, true));
  p_.setPen(pal_.text);
  const double line = L_.fontPx * 1.5, wide = L_.bounds.width();
  p_.drawText(QRectF(L_.a.left(), L_.a.bottom() + 2, wide, line), Qt::AlignLeft | Qt::AlignTop,
              QStringLiteral("A [%1 x %2]").arg(g_.M).arg(g_.K));
  p_.drawText(QRectF(L_.b.left(), L_.b.top() - line, wide, line), Qt::AlignLeft | Qt::AlignVCenter,
              QStringLiteral("B [%1 x %2]").arg(g_.K).arg(g_.N));
  const QString note = g_.planeRows() > g_.M || g_.planeCols() > g_.N
                           ? QStringLiteral(" in a %1 x %2 plane of threads (blocks %3 x %3)")
                                 .arg(g_.planeRows())
                                 .arg(g_.planeCols())
                                 .arg(g_.tpb)
                           : QStringLiteral(" (blocks %1 x %1)").arg(g_.tpb);
  p_.drawText(QRectF(L_.plane.left(), L_.plane.bottom() + 2, wide, line),
              Qt::AlignLeft | Qt::AlignTop,
              QStringLiteral("C [%1 x %2]%3").arg(g_.M).arg(g_.N).arg(note));
  // index ticks: j above C, i left of C
  p_.setFont(font(0.8));
  p_.setPen(pal_.mutedText);
  const std::int64_t every = tickStep(3.2 * L_.fontPx / L_.cellW);
  for (std::int64_t j = 0; j < g_.planeCols(); j += every) {
    p_.drawText(
        QRectF(L_.plane.left() + double(j) * L_.cellW, L_.plane.top() - line, 6 * L_.fontPx, line),
        Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("j=%1").arg(j));
  }
  const std::int64_t everyRow = tickStep(1.6 * L_.fontPx / L_.cellH);
  for (std::int64_t i = 0; i < g_.planeRows(); i += everyRow) {
    p_.drawText(QRectF(L_.a.right() + 2, L_.plane.top() + double(i) * L_.cellH,
                       L_.plane.left() - L_.a.right() - 4, line),
                Qt::AlignRight | Qt::AlignTop, QString::number(i));
  }
}

void StaticPainter::plane(const QImage& image) {
  p_.drawImage(L_.plane.topLeft(), image);
  p_.setPen(Qt::NoPen);
  p_.setBrush(QBrush(pal_.idleHatch, Qt::BDiagPattern));
  if (g_.planeCols() > g_.N) {
    p_.drawRect(
        QRectF(L_.c.right(), L_.plane.top(), L_.plane.right() - L_.c.right(), L_.plane.height()));
  }
  if (g_.planeRows() > g_.M) {
    p_.drawRect(
        QRectF(L_.plane.left(), L_.c.bottom(), L_.c.width(), L_.plane.bottom() - L_.c.bottom()));
  }
  p_.setBrush(Qt::NoBrush);
}

void StaticPainter::gridLines() {
  p_.setPen(QPen(pal_.grid, 1));
  if (L_.cellW >= 6 && g_.planeCols() < 2000) {
    for (std::int64_t j = 1; j < g_.planeCols(); ++j) {
      const double x = L_.plane.left() + double(j) * L_.cellW;
      p_.drawLine(QPointF(x, L_.plane.top()), QPointF(x, L_.plane.bottom()));
    }
  }
  if (L_.cellH >= 6 && g_.planeRows() < 2000) {
    for (std::int64_t i = 1; i < g_.planeRows(); ++i) {
      const double y = L_.plane.top() + double(i) * L_.cellH;
      p_.drawLine(QPointF(L_.plane.left(), y), QPointF(L_.plane.right(), y));
    }
  }
  p_.setPen(QPen(pal_.blockLine, 1));
  if (L_.cellW * g_.tpb >= 12) {
    for (std::int64_t j = 0; j <= g_.planeCols(); j += g_.tpb) {
      const double x = L_.plane.left() + double(j) * L_.cellW;
      p_.drawLine(QPointF(x, L_.plane.top()), QPointF(x, L_.plane.bottom()));
    }
  }
  if (L_.cellH * g_.tpb >= 12) {
    for (std::int64_t i = 0; i <= g_.planeRows(); i += g_.tpb) {
      const double y = L_.plane.top() + double(i) * L_.cellH;
      p_.drawLine(QPointF(L_.plane.left(), y), QPointF(L_.plane.right(), y));
    }
  }
  p_.setPen(QPen(pal_.text, 1.5));
  p_.drawRect(L_.c);
  const bool rows = L_.cellH * g_.tpb < 2, cols = L_.cellW * g_.tpb < 2;
  if (rows || cols) {
    const QString text = QStringLiteral(
                             "%L1 blocks of %2 x %2 threads, under 2 px each: colours "
                             "averaged; the traced block is outlined")
                             .arg(qulonglong(g_.blocks()))
                             .arg(g_.tpb);
    p_.setFont(font(0.9));
    const QRectF box(L_.plane.left() + 8, L_.plane.center().y() - L_.fontPx, L_.plane.width() - 16,
                     2 * L_.fontPx);
    p_.fillRect(box, QColor(255, 255, 255, 210));
    p_.setPen(pal_.text);
    p_.drawText(box, Qt::AlignCenter | Qt::TextWordWrap, text);
  }
}

void StaticPainter::legend() {
  const double s = 1.1 * L_.fontPx, line = L_.legend.height() / 2;
  double x = L_.legend.left() + L_.fontPx, y = L_.legend.top();
  p_.setFont(font(0.9));
  const QFontMetricsF fm(p_.font());
  auto item = [&](const QString& text, auto&& swatch) {
    const double w = s * 3.2 + fm.horizontalAdvance(text) + 1.5 * L_.fontPx;
    if (x + w > L_.legend.right() && x > L_.legend.left() + L_.fontPx) {
      x = L_.legend.left() + L_.fontPx;
      y += line;
    }
    swatch(QRectF(x, y + (line - s) / 2, s * 2.8, s));
    p_.setPen(pal_.text);
    p_.drawText(QRectF(x + s * 3.2, y, w, line), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += w;
  };
  item(QStringLiteral("one colour per block of TPB x TPB threads"), [&](QRectF q) {
    for (int i = 0; i < 3; ++i)
      p_.fillRect(QRectF(q.left() + i * q.width() / 3, q.top(), q.width() / 3, q.height()),
                  pal_.blocks[i]);
  });
  item(QStringLiteral("idle thread (bounds check fails)"), [&](QRectF q) {
    p_.fillRect(q, pal_.blocks[0].lighter(140));
    p_.fillRect(q, QBrush(pal_.idleHatch, Qt::BDiagPattern));
  });
  item(QStringLiteral("not computed yet"), [&](QRectF q) {
    p_.fillRect(q, pal_.blocks[0]);
    p_.fillRect(q, pal_.veil);
  });
  item(QStringLiteral("followed thread"), [&](QRectF q) {
    p_.setPen(QPen(pal_.follow, 2.5));
    p_.drawRect(q.adjusted(1, 1, -1, -1));
  });
  item(QStringLiteral("A row / B column read so far"), [&](QRectF q) {
    p_.fillRect(QRectF(q.topLeft(), QSizeF(q.width() / 2, q.height())), pal_.aLoaded);
    p_.fillRect(QRectF(q.center().x(), q.top(), q.width() / 2, q.height()), pal_.bLoaded);
  });
  item(QStringLiteral("this step"), [&](QRectF q) { p_.fillRect(q, pal_.current); });
  if (const std::uint64_t n = s_.diagnostics; n > 0) {
    item(QStringLiteral("%1 diagnostics").arg(n), [&](QRectF q) {
      p_.setPen(QPen(pal_.diagnostic, 2.5));
      p_.drawLine(q.topLeft(), q.bottomRight());
      p_.drawLine(q.topRight(), q.bottomLeft());
    });
  }
  if (!L_.toScale) {
    item(QStringLiteral("K axis or cells not to scale"), [&](QRectF q) {
      p_.setPen(QPen(pal_.mutedText, 1, Qt::DashLine));
      p_.drawLine(QPointF(q.left(), q.center().y()), QPointF(q.right(), q.center().y()));
    });
  }
}

}  // namespace

void paintKernelStatic(QPainter& p, const KernelStaticScene& scene, const QImage& plane) {
  StaticPainter s(p, scene);
  s.background();
  s.matrices();
  s.plane(plane);
  s.gridLines();
  s.matrixLabels();
  s.legend();
}

QImage renderKernelStaticLayer(const KernelStaticScene& scene,
                               const std::function<bool()>& cancelled) {
  const auto stop = [&] { return cancelled && cancelled(); };
  const QSize size = scene.layout.bounds.size().toSize().expandedTo(QSize(1, 1));
  const QImage planeImage = renderKernelPlane(scene.geometry, scene.layout, scene.palette);
  if (stop()) return {};
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  QPainter p(&image);
  StaticPainter s(p, scene);
  s.background();
  s.matrices();
  s.plane(planeImage);
  if (stop()) return {};
  s.gridLines();
  s.matrixLabels();
  if (stop()) return {};
  s.legend();
  p.end();
  return image;
}

}  // namespace matmulviz::ui

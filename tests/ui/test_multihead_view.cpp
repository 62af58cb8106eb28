// The Multi-head view (issue 17, point 13): its own Run button runs the sizes in the fields (the
// canvas asks for it before the first run), and O3's heatmap has a colour scale, red for +max,
// white for 0, blue for -max.

#include "ui/widgets/multihead_canvas.h"
#include "ui/widgets/multihead_view.h"

#include <QtTest/QtTest>

#include <QPushButton>
#include <QSpinBox>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kRunMs = 120'000;

/// Pixels of `image` in the columns [x0, x1) whose colour is close to `want`.
int countNear(const QImage& image, int x0, int x1, QColor want) {
  int n = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = x0; x < x1; ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - want.red()) + std::abs(c.green() - want.green()) +
              std::abs(c.blue() - want.blue()) <
          30)
        ++n;
    }
  return n;
}

}  // namespace

class TestMultiheadView : public QObject {
  Q_OBJECT
 private slots:
  void runButtonRuns_data() {
    QTest::addColumn<int>("s");
    QTest::addColumn<int>("heads");
    QTest::newRow("s 8, 4 heads") << 8 << 4;
    QTest::newRow("s 13, 2 heads") << 13 << 2;
  }

  void runButtonRuns() {
    QFETCH(int, s);
    QFETCH(int, heads);
    MultiheadView view;
    view.show();
    QVERIFY(!view.report());  // nothing ran yet: the canvas says to press Run
    view.findChild<QSpinBox*>("mh_s")->setValue(s);
    view.findChild<QSpinBox*>("mh_heads")->setValue(heads);
    auto* run = view.findChild<QPushButton*>("mh_run");
    QVERIFY(run);
    QTest::mouseClick(run, Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return !view.isRunning() && view.report(); }, kRunMs));
    QCOMPARE(view.report()->config.s, int64_t(s));
    QCOMPARE(view.report()->config.numHeads, int64_t(heads));
  }

  void o3HasAColourScale() {
    MultiheadView view;
    MultiheadConfig c;  // b 2, s 8, h 16, e 4, 4 heads
    c.topP = 0.0;       // every token is a candidate: top_k picks 3 a row
    c.topK = 3;
    view.setConfig(c);
    QVERIFY(QTest::qWaitFor([&] { return !view.isRunning() && view.report(); }, kRunMs));
    MultiheadCanvas canvas;  // the view's drawing, at a known size
    canvas.setReport(view.report());
    canvas.resize(900, 600);
    QImage image(canvas.size(), QImage::Format_RGB32);
    canvas.render(&image);
    // The scale sits right of O3, in the lower half: pure red at its top, pure blue at its foot.
    const QImage lower = image.copy(0, image.height() / 2, image.width(), image.height() / 2);
    const int x0 = lower.width() - 84, x1 = lower.width() - 10;  // right of O3 (84 px)
    QVERIFY2(countNear(lower, x0, x1, QColor(255, 0, 0)) > 10, "no +max red in the scale");
    QVERIFY2(countNear(lower, x0, x1, QColor(0, 0, 255)) > 10, "no -max blue in the scale");
  }
};

QTEST_MAIN(TestMultiheadView)
#include "test_multihead_view.moc"

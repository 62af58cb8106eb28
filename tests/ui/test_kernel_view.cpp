// The Kernel view offscreen: it simulates small launches on its worker, the animation reaches
// the last step, a click on a cell follows that cell's thread (re-tracing its block when
// needed), bad input is refused, and frames render in both modes.
#include <QComboBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QtTest>

#include "ui/widgets/grouped_bmm_canvas.h"
#include "ui/widgets/grouped_bmm_panel.h"
#include "ui/widgets/kernel_canvas.h"
#include "ui/widgets/kernel_view.h"

using namespace matmulviz::ui;

namespace {

constexpr int kSimTimeoutMs = 60000;  // a small launch takes milliseconds; ASan is slower

/// Sets `spec` and waits for the launch to be shown.
bool launchAndWait(KernelView& view, const KernelLaunchSpec& spec) {
  QSignalSpy ready(&view, &KernelView::launchReady);
  view.setLaunch(spec);
  return ready.wait(kSimTimeoutMs) || ready.count() > 0;
}

int distinctColours(const QImage& image) {
  QSet<QRgb> seen;
  for (int y = 0; y < image.height(); y += 7) {
    for (int x = 0; x < image.width(); x += 7) seen.insert(image.pixel(x, y));
  }
  return int(seen.size());
}

}  // namespace

class TestKernelView : public QObject {
  Q_OBJECT

 private slots:
  void animationReachesTheEnd_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<int>("unit");
    QTest::addRow("lesson naive, k-steps")
        << "naive" << 5 << 40 << 10 << 16 << int(KernelView::StepUnit::KStep);
    QTest::addRow("coalesced 9x7x11 tpb4, threads")
        << "coalesced" << 9 << 7 << 11 << 4 << int(KernelView::StepUnit::Thread);
    QTest::addRow("smem_tiled 40x37x33 tpb8, phases")
        << "smem_tiled" << 40 << 37 << 33 << 8 << int(KernelView::StepUnit::BarrierPhase);
  }
  void animationReachesTheEnd() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, tpb);
    QFETCH(int, unit);
    KernelView view;
    view.resize(1200, 800);
    view.show();
    QVERIFY(launchAndWait(view, {kernel, m, k, n, tpb, 0}));
    QCOMPARE(view.launch().kernel, kernel);
    view.setStepUnit(KernelView::StepUnit(unit));
    QVERIFY(view.stepCount() > 1);
    QCOMPARE(view.currentStep(), 0);
    QSignalSpy steps(&view, &KernelView::stepChanged);
    view.setSpeed(100000);
    view.play();
    QVERIFY(view.isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(!view.isPlaying(), kSimTimeoutMs);
    QCOMPARE(view.currentStep(), view.stepCount() - 1);
    QVERIFY(!steps.isEmpty());
    QVERIFY2(view.narration().endsWith(QStringLiteral("Block done.")),
             qPrintable(view.narration()));
    view.stepBackward();
    QCOMPARE(view.currentStep(), view.stepCount() - 2);
    view.seek(0);
    view.seekToEnd();
    QCOMPARE(view.currentStep(), view.stepCount() - 1);
    const QImage frame = view.renderFrame(QSize(900, 600));
    QCOMPARE(frame.size(), QSize(900, 600));
    QVERIFY(distinctColours(frame) > 8);
  }

  void clickingACellFollowsItsThread() {
    KernelView view;
    view.resize(1400, 900);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(launchAndWait(view, {"naive", 5, 784, 10, 16, 0}));
    KernelCanvas* canvas = view.canvas();
    QSignalSpy narrated(&view, &KernelView::narrationChanged);
    QTest::mouseClick(canvas, Qt::LeftButton, {}, canvas->cellCenter(3, 7).toPoint());
    QVERIFY(view.model().followedCell());
    QCOMPARE(view.model().followedCell()->first, 3);
    QCOMPARE(view.model().followedCell()->second, 7);
    QVERIFY(!narrated.isEmpty());
    QVERIFY2(view.narration().startsWith(
                 QStringLiteral("thread (3,7) of block (0,0): C[3,7] += A[3,0] * B[0,7], k = 0")),
             qPrintable(view.narration()));
    view.stepForward();
    QVERIFY(view.narration().contains(QStringLiteral("A[3,1] * B[1,7], k = 1 of 784")));
  }

  void tileCaptionFollowsTheKernelsBarriers_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addRow("smem_tiled") << "smem_tiled";
    QTest::addRow("smem_tiled_no_sync: one barrier per tile") << "smem_tiled_no_sync";
  }
  void tileCaptionFollowsTheKernelsBarriers() {
    // The lesson's product, at the products of tile 2 of 49: both kernels show the same tile
    // (the painter took two barriers per tile for granted; no_sync has one).
    QFETCH(QString, kernel);
    KernelView view;
    view.resize(1400, 900);
    view.show();
    QVERIFY(launchAndWait(view, {kernel, 5, 784, 10, 16, 0}));
    const KernelTimeline& t = view.model().timeline();
    const KernelGeometry& g = view.model().result()->geometry;
    view.setStepUnit(KernelView::StepUnit::KStep);
    view.seek(t.phaseBegin(g.computePhase(1)) + 1);  // the first product of tile 1
    QCOMPARE(view.model().currentPhase(), g.computePhase(1));
    QCOMPARE(t.tileOfPhase(view.model().currentPhase()), 1);
    QVERIFY2(view.narration().contains("tile 2 of 49"), qPrintable(view.narration()));
    const QImage frame = view.canvas()->grab().toImage();
    QVERIFY(distinctColours(frame) > 4);
    const QString lookAt = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
    if (!lookAt.isEmpty()) QVERIFY(frame.save(lookAt + "/kernel-tile2-" + kernel + ".png"));
  }

  void kernelListMatchesTheCli() {
    // every kernel of `matmulviz-cli launch --kernel`; gather_bmm listed but not selectable
    KernelView view;
    QComboBox* combo = nullptr;
    for (QComboBox* c : view.findChildren<QComboBox*>())
      if (c->findData(QStringLiteral("naive")) >= 0) combo = c;
    QVERIFY(combo);
    for (const char* k : {"naive", "coalesced", "smem_tiled", "gather_bmm", "smem_tiled_no_sync",
                          "naive_no_bounds_check", "smem_tiled_divergent_barrier"})
      QVERIFY2(combo->findData(QString(k)) >= 0, k);
    const int gather = combo->findData(QStringLiteral("gather_bmm"));
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    QVERIFY(model && !model->item(gather)->isEnabled());
    QVERIFY(model->item(gather)->toolTip().contains("matmulviz-cli launch --kernel gather_bmm"));
    QVERIFY(gather < combo->findData(QStringLiteral("smem_tiled_no_sync")));
    const int grouped = combo->findData(QStringLiteral("grouped_bmm"));
    QVERIFY(grouped >= 0 && model->item(grouped)->isEnabled());
  }

  // Kernel 08 has a page of its own: choosing it shows the buckets its launches built and the
  // chosen block's shared tile; a click on a bucket or Left/Right changes the block; an A/B/C
  // launch brings the animation back. MATMULVIZ_SCREENSHOT_DIR=DIR saves grouped_bmm.png there.
  void groupedBmmShowsItsBucketsAndTile() {
    KernelView view;
    view.resize(1500, 900);
    QComboBox* combo = nullptr;
    for (QComboBox* c : view.findChildren<QComboBox*>())
      if (c->findData(QStringLiteral("naive")) >= 0) combo = c;
    QVERIFY(combo);
    combo->setCurrentIndex(combo->findData(QStringLiteral("grouped_bmm")));
    QVERIFY(view.showsGroupedBmm());
    GroupedBmmPanel* panel = view.groupedPanel();
    auto picture = panel->picture();
    QVERIFY(picture != nullptr);
    const GroupedBmmSpec& spec = picture->spec;
    QCOMPARE(int(picture->buckets.rows.size()), spec.items);
    QCOMPARE(picture->buckets.offsets.back(), spec.items);
    QVERIFY(picture->run.maxRelErr < 1e-5);
    QCOMPARE(picture->run.report.priorLaunches.size(), std::size_t(3));
    QVERIFY(picture->cFloatsRead() < picture->cFloatsReadByGatherBmm());
    // the view opens on a block that has items
    QVERIFY(picture->buckets.counts[std::size_t(panel->selectedBlock())] > 0);

    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto* canvas = panel->findChild<GroupedBmmCanvas*>();
    QVERIFY(canvas);
    // find a bucket by probing its counts cell: every bucket answers somewhere on the canvas
    int clicked = -1;
    for (int x = 0; x < canvas->width() && clicked < 0; x += 3) {
      for (int y = 0; y < 260 && clicked < 0; y += 3) {
        const int m = canvas->bucketAt({x, y});
        if (m >= 0 && m != panel->selectedBlock()) {
          QTest::mouseClick(canvas, Qt::LeftButton, {}, QPoint(x, y));
          clicked = m;
        }
      }
    }
    QVERIFY(clicked >= 0);
    QCOMPARE(panel->selectedBlock(), clicked);
    const int before = panel->selectedBlock();
    QTest::keyClick(canvas, before + 1 < spec.table ? Qt::Key_Right : Qt::Key_Left);
    QVERIFY(panel->selectedBlock() != before);

    const QImage image = panel->renderImage({1400, 760});
    QVERIFY(distinctColours(image) > 12);
    if (const QByteArray dir = qgetenv("MATMULVIZ_SCREENSHOT_DIR"); !dir.isEmpty()) {
      QVERIFY(view.grab().save(QString::fromLocal8Bit(dir) + "/grouped_bmm.png"));
      view.setPresentationMode(true);
      QTest::qWait(50);  // the layout follows the larger font
      QVERIFY(view.grab().save(QString::fromLocal8Bit(dir) + "/grouped_bmm-classroom.png"));
      view.setPresentationMode(false);
      panel->setSpec({64, 32, 2, 32, 32, 8});  // the largest picture the fields allow
      QVERIFY(view.grab().save(QString::fromLocal8Bit(dir) + "/grouped_bmm-large.png"));
      panel->setSpec(spec);
    }

    // a size the picture refuses keeps the last picture and says why
    QSignalSpy failed(panel, &GroupedBmmPanel::failed);
    GroupedBmmSpec big = spec;
    big.items = 65;
    panel->setSpec(big);
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.first().first().toString().contains("items = 65"));
    QCOMPARE(panel->picture()->spec, spec);

    QVERIFY(launchAndWait(view, {"naive", 5, 7, 6, 4}));
    QVERIFY(!view.showsGroupedBmm());
  }

  void followingACellOfAnotherBlockRetraces() {
    KernelView view;
    view.resize(1200, 800);
    view.show();
    QVERIFY(launchAndWait(view, {"smem_tiled", 40, 37, 33, 8, 0}));
    QCOMPARE(view.model().result()->tracedBlock, 0u);
    QSignalSpy ready(&view, &KernelView::launchReady);
    view.selectCell(21, 30);  // block (3, 2): x over columns
    QVERIFY(ready.wait(kSimTimeoutMs) || ready.count() > 0);
    QCOMPARE(view.model().result()->tracedBlock, 2u * 5u + 3u);
    QVERIFY(view.model().followedCell());
    QVERIFY2(view.narration().startsWith(QStringLiteral("thread (6,5) of block (3,2) stages")),
             qPrintable(view.narration()));
    QCOMPARE(view.launch().m, 40);
  }

  void badInputIsRefused_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("tpb");
    QTest::addRow("M 0") << "naive" << 0 << 16;
    QTest::addRow("TPB 64") << "naive" << 5 << 64;
    QTest::addRow("gather_bmm") << "gather_bmm" << 5 << 16;
  }
  void badInputIsRefused() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, tpb);
    KernelView view;
    QVERIFY(launchAndWait(view, {"naive", 5, 8, 10, 16, 0}));
    QSignalSpy failed(&view, &KernelView::launchFailed);
    view.setLaunch({kernel, m, 8, 10, tpb, 0});
    QCOMPARE(failed.count(), 1);
    QVERIFY(!failed.first().at(0).toString().isEmpty());
    QCOMPARE(view.launch().m, 5);  // the shown launch stays
    QCOMPARE(view.launch().kernel, QStringLiteral("naive"));
    for (QSpinBox* box : view.findChildren<QSpinBox*>()) {
      if (view.groupedPanel()->isAncestorOf(box)) continue;  // grouped_bmm's own, other ranges
      QCOMPARE(box->minimum(), 1);  // the fields refuse what checkKernelLaunch would
      QVERIFY(box->maximum() == 32 || box->maximum() == 100000);
    }
  }

  void diagnosticCellsAreMarked() {
    // the registry's kernels are correct, so a race is added to a real launch's report
    auto result = std::make_shared<KernelLaunchResult>(
        *simulateKernelLaunch({"smem_tiled", 12, 9, 10, 4, 0}, 0));
    matmulviz::sim::Diagnostic d;
    d.kind = matmulviz::sim::DiagnosticKind::SharedRace;
    d.block = {1, 2, 0};
    d.thread = {3, 1, 0};
    d.array = "C";
    d.index = {9, 7};  // the racing thread's own element: x over columns
    d.message = "a race";
    result->run.report.diagnostics.push_back(d);
    result->run.report.diagnosticCounts.sharedRaces = 1;
    KernelLaunchModel model;
    model.setResult(result);
    KernelCanvas canvas(&model);
    canvas.resize(900, 700);
    const QImage frame = canvas.renderImage(canvas.size());
    const QColor red = KernelPalette::standard().diagnostic;
    QCOMPARE(QColor(frame.pixel(canvas.cellCenter(9, 7).toPoint())), red);
    QVERIFY(QColor(frame.pixel(canvas.cellCenter(0, 0).toPoint())) != red);
    if (const QString dir = qEnvironmentVariable("MATMULVIZ_TEST_PNG_DIR"); !dir.isEmpty()) {
      frame.save(dir + QStringLiteral("/kernel_view_diagnostic.png"));
    }
  }

  void presentationModeToggles() {
    KernelView view;
    view.resize(1200, 800);
    QVERIFY(launchAndWait(view, {"naive", 5, 784, 10, 16, 0}));
    view.selectCell(3, 7);
    const QImage normal = view.renderFrame(QSize(1000, 700));
    view.setPresentationMode(true);
    QVERIFY(view.presentationMode());
    const QImage classroom = view.renderFrame(QSize(1000, 700));
    QVERIFY(classroom != normal);
    view.setPresentationMode(false);
    QVERIFY(!view.presentationMode());
    QCOMPARE(view.renderFrame(QSize(1000, 700)), normal);
  }
};

QTEST_MAIN(TestKernelView)
#include "test_kernel_view.moc"

// The main window stays on its screen (issue 17, point 12): a saved geometry larger than the
// screen is restored shrunk and moved onto it; long texts (an error, the Kernel view's labels)
// wrap instead of widening the window; classroom mode fits a 1280x720 projector and normal mode,
// with the scenario dock, a 1600x900 screen.

#include "ui/widgets/kernel_view.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/window_geometry.h"

#include <QtTest/QtTest>

#include <QGuiApplication>
#include <QLayout>
#include <QScreen>
#include <QSettings>
#include <QTemporaryDir>

using namespace matmulviz::ui;

namespace {

/// The descendants whose minimum width is over `over`, as a tree, for a failure message.
QString widest(const QWidget& root, int over = 400, int depth = 0) {
  QString out;
  for (QObject* o : root.children()) {
    const auto* w = qobject_cast<const QWidget*>(o);
    if (!w) continue;
    const QSize m = w->minimumSizeHint().expandedTo(w->minimumSize());
    if (m.width() > over)
      out += QStringLiteral("\n%1%2 '%3' %4x%5")
                 .arg(QString(depth * 2, ' '), QString::fromLatin1(w->metaObject()->className()),
                      w->objectName())
                 .arg(m.width())
                 .arg(m.height());
    out += widest(*w, over, depth + 1);
  }
  return out;
}

QSize minimumOf(QWidget& w) {
  w.layout()->activate();
  return w.minimumSizeHint().expandedTo(w.minimumSize());
}

}  // namespace

class TestWindowGeometry : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_window_geometry");
    QSettings().clear();
  }

  void clampsToTheScreen_data() {
    QTest::addColumn<QRect>("window");
    QTest::addColumn<QRect>("available");
    QTest::addColumn<QRect>("expected");
    const QRect screen(0, 0, 1280, 720);
    QTest::newRow("fits: unchanged")
        << QRect(10, 20, 800, 600) << screen << QRect(10, 20, 800, 600);
    QTest::newRow("too wide (1760 px)")
        << QRect(0, 0, 1760, 700) << screen << QRect(0, 0, 1280, 700);
    QTest::newRow("too tall, off the bottom")
        << QRect(100, 300, 900, 1000) << screen << QRect(100, 0, 900, 720);
    QTest::newRow("off the right edge")
        << QRect(1000, 0, 600, 400) << screen << QRect(680, 0, 600, 400);
    QTest::newRow("left of a second screen")
        << QRect(0, 0, 500, 500) << QRect(1280, 24, 1920, 1056) << QRect(1280, 24, 500, 500);
  }

  void clampsToTheScreen() {
    QFETCH(QRect, window);
    QFETCH(QRect, available);
    QFETCH(QRect, expected);
    QCOMPARE(clampToScreen(window, available), expected);
  }

  void restoredGeometryFitsTheScreen() {
    const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
    QWidget big;
    big.setGeometry(available.x(), available.y(), available.width() * 2, available.height() * 2);
    const QByteArray saved = big.saveGeometry();
    QWidget w;
    QVERIFY(restoreGeometryOnScreen(&w, saved));
    QVERIFY2(available.contains(w.frameGeometry()),
             qPrintable(QStringLiteral("%1x%2").arg(w.width()).arg(w.height())));
    QVERIFY(!restoreGeometryOnScreen(&w, QByteArray()));
  }

  // What a window needs at least: a 1280x720 projector in classroom mode, and no more after a
  // long error or a long Kernel view label.
  void fitsA720pProjector_data() {
    QTest::addColumn<bool>("classroom");
    QTest::addColumn<int>("view");
    QTest::addColumn<QString>("error");
    QTest::addColumn<int>("m");  // rows of C in the Kernel view's launch
    const QString longError = QStringLiteral("out of memory: ") + QString(300, 'x') +
                              QStringLiteral(" and a long sentence after it, ") + QString(200, 'y');
    QTest::newRow("normal, Kernel") << false << 0 << QString() << 5;
    QTest::newRow("normal, long error") << false << 0 << longError << 5;
    QTest::newRow("classroom, Kernel") << true << 0 << QString() << 5;
    QTest::newRow("classroom, Strategies") << true << 1 << QString() << 5;
    QTest::newRow("classroom, Memory") << true << 2 << QString() << 5;
    QTest::newRow("classroom, Gradients") << true << 3 << QString() << 5;
    QTest::newRow("classroom, Multi-head") << true << 4 << QString() << 5;
    QTest::newRow("classroom, long error") << true << 0 << longError << 5;
    QTest::newRow("normal, Kernel 50000 x 10") << false << 0 << QString() << 50000;
    QTest::newRow("classroom, Kernel 50000 x 10") << true << 0 << QString() << 50000;
  }

  void fitsA720pProjector() {
    QFETCH(bool, classroom);
    QFETCH(int, view);
    QFETCH(QString, error);
    QFETCH(int, m);
    MainWindow w(dir_.filePath("history.json"));
    w.resize(1200, 700);
    w.show();
    w.showView(MainWindow::View(view));
    w.kernelView()->setLaunch({"naive", m, 784, 10, 16, 0});
    QVERIFY(QTest::qWaitFor([&] { return !w.kernelView()->isSimulating(); }, 120'000));
    struct LeaveClassroom {  // the fonts are the application's: restore them on failure too
      MainWindow& w;
      ~LeaveClassroom() { w.setClassroomMode(false); }
    } leave{w};
    if (classroom) w.setClassroomMode(true);
    if (!error.isEmpty()) w.showError(error);
    QTest::qWait(50);
    const QSize min = minimumOf(w);
    // Classroom mode: a 1280x720 projector (the scenario dock hidden). Normal mode, with the
    // dock: a 1600x900 laptop screen.
    const QSize screen = classroom ? QSize(1280, 720) : QSize(1600, 900);
    QVERIFY2(min.width() <= screen.width() && min.height() <= screen.height(),
             qPrintable(QStringLiteral("needs %1x%2; widest: %3")
                            .arg(min.width())
                            .arg(min.height())
                            .arg(widest(w, 300))));
  }
};

QTEST_MAIN(TestWindowGeometry)
#include "test_window_geometry.moc"

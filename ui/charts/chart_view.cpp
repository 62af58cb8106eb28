#include "ui/charts/chart_view.h"

#include "core/util/atomic_file.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>

namespace matmulviz::ui {

ChartView::ChartView(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->setContextMenuPolicy(Qt::CustomContextMenu);
  plot_->setMouseTracking(true);
  plot_->installEventFilter(this);
  plot_->setNoAntialiasingOnDrag(true);
  connect(plot_, &QCustomPlot::customContextMenuRequested, this, &ChartView::showContextMenu);
  applyStyle();
}

ChartView::~ChartView() = default;

bool ChartView::exportTo(const QString& path, QString* error) {
  const bool shown = isVisible() && plot_->width() > 0 && plot_->height() > 0;
  return exportTo(path, shown ? plot_->size() : defaultExportSize(), error);
}

bool ChartView::exportTo(const QString& path, QSize size, QString* error) {
  auto fail = [&](const QString& why) {
    if (error) *error = path + QStringLiteral(": ") + why;
    return false;
  };
  const QString suffix = QFileInfo(path).suffix().toLower();
  const int w = size.width(), h = size.height();
  if (w <= 0 || h <= 0) return fail(QStringLiteral("the export size must be positive"));
  if (suffix != QLatin1String("png") && suffix != QLatin1String("pdf") &&
      suffix != QLatin1String("svg"))
    return fail(QStringLiteral("unknown format '%1' (allowed: png, svg, pdf)").arg(suffix));
  // Whole or not at all: drawn into path + ".tmp" (the format is chosen here, not by the
  // temporary's suffix), then renamed onto path.
  auto draw = [&](const std::string& tmpPath) {
    const QString tmp = QString::fromStdString(tmpPath);
    bool ok = false;
    if (suffix == QLatin1String("png")) {
      ok = plot_->savePng(tmp, w, h);
    } else if (suffix == QLatin1String("pdf")) {
      ok = writePdf(tmp, size);
    } else {
      QSvgGenerator generator;
      generator.setFileName(tmp);
      generator.setSize(size);
      generator.setViewBox(QRect(0, 0, w, h));
      generator.setTitle(chartName());
      QCPPainter painter;
      if (painter.begin(&generator)) {
        plot_->toPainter(&painter, w, h);
        ok = painter.end();
      }
    }
    return ok && QFileInfo(tmp).size() > 0;
  };
  try {
    replaceFileAtomically(path.toStdString(), draw);
  } catch (const std::runtime_error&) {
    return fail(QStringLiteral("could not be written"));
  }
  return true;
}

QString ChartView::csv() const {
  return {};
}

void ChartView::setLogScale(bool on) {
  if (!supportsLogScale() || on == logScale_) return;
  logScale_ = on;
  rebuild();
  emit logScaleChanged(on);
}

void ChartView::setPresentationMode(bool on) {
  if (on == presentation_) return;
  presentation_ = on;
  applyStyle();
  rebuild();
}

QStringList ChartView::seriesNames() const {
  QStringList names;
  for (int i = 0; i < plot_->plottableCount(); ++i) {
    const QString name = plot_->plottable(i)->name();
    if (!name.isEmpty()) names << name;
  }
  return names;
}

QStringList ChartView::texts() const {
  QStringList out;
  for (QCPLayoutElement* e : plot_->plotLayout()->elements(true))
    if (auto* t = qobject_cast<QCPTextElement*>(e)) out << t->text();
  for (QCPAxis* axis : plot_->axisRect()->axes()) out << axis->label();
  for (int i = 0; i < plot_->itemCount(); ++i)
    if (auto* t = qobject_cast<QCPItemText*>(plot_->item(i))) out << t->text();
  out.removeAll(QString());
  return out;
}

int ChartView::pointCount(const QString& series) const {
  for (int i = 0; i < plot_->plottableCount(); ++i) {
    QCPAbstractPlottable* p = plot_->plottable(i);
    if (p->name() != series) continue;
    if (auto* g = qobject_cast<QCPGraph*>(p)) return g->data()->size();
    if (auto* b = qobject_cast<QCPBars*>(p)) return b->data()->size();
    if (auto* m = qobject_cast<QCPColorMap*>(p))
      return m->data()->keySize() * m->data()->valueSize();
    if (auto* c = qobject_cast<QCPCurve*>(p)) return c->data()->size();
    return 0;
  }
  return -1;
}

void ChartView::replotNow() {
  plot_->replot(QCustomPlot::rpImmediateRefresh);
}

double ChartView::lastReplotMs() const {
  return plot_->replotTime(false);
}

QString ChartView::toolTipAt(const QPoint& pos) const {
  int dataIndex = -1;
  QCPAbstractPlottable* p = plot_->plottableAt(pos, false, &dataIndex);
  return p && dataIndex >= 0 ? toolTipFor(p, dataIndex) : QString();
}

QString ChartView::toolTipFor(QCPAbstractPlottable*, int) const {
  return {};
}

QColor ChartView::seriesColor(int i) const {
  // Okabe and Ito's colour-blind-safe palette; presentation: saturated, dark on white.
  static const QColor normal[] = {QColor(0, 114, 178),   QColor(230, 159, 0),  QColor(0, 158, 115),
                                  QColor(204, 121, 167), QColor(86, 180, 233), QColor(213, 94, 0),
                                  QColor(240, 228, 66),  QColor(0, 0, 0)};
  static const QColor contrast[] = {QColor(0, 0, 200),   QColor(220, 90, 0), QColor(0, 130, 0),
                                    QColor(170, 0, 170), QColor(0, 0, 0),    QColor(200, 0, 0),
                                    QColor(0, 140, 160), QColor(110, 70, 0)};
  const int n = 8;
  const int k = ((i % n) + n) % n;
  return presentation_ ? contrast[k] : normal[k];
}

int ChartView::fontPointSize(int normal) const {
  return presentation_ ? normal * 8 / 5 : normal;
}

double ChartView::lineWidth() const {
  return presentation_ ? 3.0 : 1.6;
}

void ChartView::setIntegerTicks(QCPAxis* axis) {
  auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
  ticker->setTickStep(1.0);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  axis->setTicker(ticker);
  axis->setNumberFormat(QStringLiteral("f"));
  axis->setNumberPrecision(0);
}

void ChartView::setTextTicks(QCPAxis* axis, const QSharedPointer<QCPAxisTickerText>& ticker) {
  axis->setTicker(ticker);
  axis->setNumberFormat(QStringLiteral("g"));  // no 'b': no power-of-ten typesetting
}

void ChartView::showPlaceholder(const QString& text) {
  auto* label = new QCPItemText(plot_);
  label->setObjectName(QStringLiteral("placeholder"));
  label->position->setType(QCPItemPosition::ptAxisRectRatio);
  label->position->setCoords(0.5, 0.5);
  label->setPositionAlignment(Qt::AlignCenter);
  label->setTextAlignment(Qt::AlignCenter);
  QFont f = font();
  f.setPointSize(fontPointSize(12));
  label->setFont(f);
  label->setColor(presentation_ ? QColor(60, 60, 60) : QColor(110, 110, 110));
  label->setText(text);
}

QString ChartView::placeholderText() const {
  for (int i = 0; i < plot_->itemCount(); ++i)
    if (auto* t = qobject_cast<QCPItemText*>(plot_->item(i));
        t && t->objectName() == QLatin1String("placeholder"))
      return t->text();
  return {};
}

void ChartView::setValueScale(QCPAxis* axis, bool log) {
  axis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  const QCPRange r = axis->range();
  const bool decades = log && r.lower > 0 && r.upper / r.lower >= 100;
  if (decades) {
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
  } else {
    axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    axis->setNumberFormat(QStringLiteral("g"));
    axis->setNumberPrecision(6);
  }
}

void ChartView::applyStyle() {
  QFont tick = font();
  tick.setPointSize(fontPointSize(9));
  QFont label = font();
  label.setPointSize(fontPointSize(10));
  const QColor text = presentation_ ? Qt::black : QColor(40, 40, 40);
  const QPen axisPen(text, presentation_ ? 2 : 1);
  for (QCPAxis* axis : plot_->axisRect()->axes()) {
    axis->setTickLabelFont(tick);
    axis->setLabelFont(label);
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->setBasePen(axisPen);
    axis->setTickPen(axisPen);
    axis->setSubTickPen(axisPen);
    axis->grid()->setPen(
        QPen(presentation_ ? QColor(170, 170, 170) : QColor(220, 220, 220), 1, Qt::DotLine));
  }
  plot_->legend->setFont(tick);
  plot_->legend->setBorderPen(QPen(QColor(180, 180, 180)));
  plot_->setBackground(Qt::white);
}

bool ChartView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot_ && event->type() == QEvent::MouseMove) {
    showToolTip(static_cast<QMouseEvent*>(event)->pos());
  } else if (watched == plot_ && event->type() == QEvent::Leave) {
    QToolTip::hideText();
  }
  return QWidget::eventFilter(watched, event);
}

void ChartView::showToolTip(const QPoint& pos) {
  const QString text = toolTipAt(pos);
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(plot_->mapToGlobal(pos), text, plot_);
  }
}

void ChartView::showContextMenu(const QPoint& pos) {
  QMenu menu(this);
  menu.addAction(tr("Export PNG…"), this, [this] { exportWithDialog(QStringLiteral("png")); });
  menu.addAction(tr("Export SVG…"), this, [this] { exportWithDialog(QStringLiteral("svg")); });
  menu.addAction(tr("Export PDF…"), this, [this] { exportWithDialog(QStringLiteral("pdf")); });
  menu.addSeparator();
  QAction* copy = menu.addAction(tr("Copy data as CSV"), this,
                                 [this] { QApplication::clipboard()->setText(csv()); });
  copy->setEnabled(!csv().isEmpty());
  if (supportsLogScale()) {
    QAction* log = menu.addAction(tr("Log scale"));
    log->setCheckable(true);
    log->setChecked(logScale_);
    connect(log, &QAction::toggled, this, &ChartView::setLogScale);
  }
  addMenuActions(menu);
  menu.exec(plot_->mapToGlobal(pos));
}

void ChartView::addMenuActions(QMenu&) {}

bool ChartView::writePdf(const QString& path, QSize size) {
  return plot_->savePdf(path, size.width(), size.height(), QCP::epNoCosmetic,
                        QStringLiteral("matmulviz"), chartName());
}

void ChartView::exportWithDialog(const QString& suffix) {
  const QString filter = QStringLiteral("%1 (*.%2)").arg(suffix.toUpper(), suffix);
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export chart"), chartName() + QLatin1Char('.') + suffix, filter);
  if (path.isEmpty()) return;
  QString error;
  if (!exportTo(path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

bool ChartView::addTitleAndLegendRows() {
  QCustomPlot* p = plot();
  if (p->plotLayout()->rowCount() != 1) return false;
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QString()));
  p->plotLayout()->addElement(2, 0, p->legend);
  p->plotLayout()->setRowStretchFactor(0, 0.01);
  p->plotLayout()->setRowStretchFactor(2, 0.01);
  p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  return true;
}

QCPTextElement* ChartView::titleElement(int pointSize) {
  auto* title = static_cast<QCPTextElement*>(plot()->plotLayout()->element(0, 0));
  QFont f = font();
  f.setPointSize(fontPointSize(pointSize));
  f.setBold(true);
  title->setFont(f);
  return title;
}

}  // namespace matmulviz::ui

#include "ui/widgets/gradients_view.h"

#include "ui/charts/heatmap_chart.h"
#include "ui/models/tensor_grid_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

namespace matmulviz::ui {

GradientsView::GradientsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  tensor_ = new QComboBox;
  tensor_->setObjectName("gradTensor");
  tensor_->addItems({"dA", "dC"});
  strategy_ = new QComboBox;
  strategy_->setObjectName("gradStrategy");
  compare_ = new QComboBox;
  compare_->setObjectName("gradCompare");
  showDifference_ = new QCheckBox(tr("show the difference"));
  showDifference_->setObjectName("gradShowDifference");
  slice_ = new QSpinBox;
  slice_->setObjectName("gradSlice");
  // Counted from 1, as the heatmap's title counts them ("slice 1 of 2" is index 0).
  slice_->setToolTip(tr("Slice of a 3D gradient along its first index, counted from 1"));
  slice_->setRange(1, 1);
  row->addWidget(new QLabel(tr("Gradient")));
  row->addWidget(tensor_);
  row->addWidget(new QLabel(tr("of")));
  row->addWidget(strategy_);
  row->addWidget(new QLabel(tr("compared with")));
  row->addWidget(compare_);
  row->addWidget(showDifference_);
  row->addSpacing(12);
  row->addWidget(new QLabel(tr("slice")));
  row->addWidget(slice_);
  row->addStretch(1);
  layout->addLayout(row);
  auto* info = new QHBoxLayout;
  diff_ = new QLabel;
  diff_->setObjectName("gradDiff");
  hover_ = new QLabel(tr("Hover a cell for its value."));
  info->addWidget(diff_, 1);
  info->addWidget(hover_);
  layout->addLayout(info);
  message_ =
      new QLabel(tr("Run with requires_grad on a or c and \"run backward\" checked: the "
                    "gradients appear here."));
  message_->setWordWrap(true);
  layout->addWidget(message_);
  model_ = new TensorGridModel(this);
  chart_ = new HeatmapChart;
  chart_->setObjectName("gradientHeatmap");
  chart_->setModel(model_);
  chart_->setMinimumSize(400, 300);
  layout->addWidget(chart_, 1);
  for (QComboBox* c : {tensor_, strategy_, compare_})
    connect(c, &QComboBox::currentIndexChanged, this, &GradientsView::refresh);
  connect(showDifference_, &QCheckBox::toggled, this, &GradientsView::refresh);
  connect(slice_, &QSpinBox::valueChanged, model_, [this](int n) { model_->setSlice(n - 1); });
  connect(chart_, &HeatmapChart::hovered, this, [this](int r, int c, double v) {
    hover_->setText(tr("[%1, %2] = %3").arg(r).arg(c).arg(v, 0, 'g', 6));
  });
}

const StrategyRun* GradientsView::run(const QString& strategy) const {
  if (!report_) return nullptr;
  for (const StrategyRun& r : report_->runs)
    if (QString::fromStdString(r.strategy) == strategy) return &r;
  return nullptr;
}

Tensor GradientsView::gradient(const StrategyRun& r) const {
  return tensor_->currentText() == "dA" ? r.backward.dA : r.backward.dC;
}

void GradientsView::setMultiheadReport(std::shared_ptr<const MultiheadReport> report) {
  multihead_ = std::move(report);
  const bool has = multihead_ && multihead_->dA1.defined();
  const QSignalBlocker b(tensor_);
  for (const char* name : {"dA1", "dW1"}) {
    const int at = tensor_->findText(name);
    if (has && at < 0) tensor_->addItem(name);
    if (!has && at >= 0) tensor_->removeItem(at);
  }
  refresh();
}

void GradientsView::setReport(std::shared_ptr<const StrategiesReport> report) {
  report_ = std::move(report);
  const QSignalBlocker b1(strategy_), b2(compare_);
  strategy_->clear();
  compare_->clear();
  compare_->addItem(tr("(none)"));
  if (report_)
    for (const StrategyRun& r : report_->runs)
      if (r.backward.dA.defined() || r.backward.dC.defined()) {
        strategy_->addItem(QString::fromStdString(r.strategy));
        compare_->addItem(QString::fromStdString(r.strategy));
      }
  if (compare_->count() > 2) compare_->setCurrentIndex(compare_->count() - 1);
  refresh();
}

void GradientsView::select(const QString& tensor, const QString& strategy,
                           const QString& compareWith) {
  const QSignalBlocker b1(tensor_), b2(strategy_), b3(compare_);
  tensor_->setCurrentText(tensor);
  strategy_->setCurrentText(strategy);
  compare_->setCurrentIndex(compareWith.isEmpty() ? 0
                                                  : std::max(0, compare_->findText(compareWith)));
  refresh();
}

void GradientsView::refresh() {
  maxDiff_ = std::numeric_limits<double>::quiet_NaN();
  const bool multihead = tensor_->currentText() == "dA1" || tensor_->currentText() == "dW1";
  for (QWidget* w : std::initializer_list<QWidget*>{strategy_, compare_, showDifference_})
    w->setEnabled(!multihead);
  if (multihead) {
    const Tensor g = tensor_->currentText() == "dA1" ? multihead_->dA1 : multihead_->dW1;
    message_->hide();
    diff_->setText(tr("%1 of matmul_with_importance %2: zeros at unimportant tokens")
                       .arg(tensor_->currentText(), QString::fromStdString(g.shapeString())));
    model_->setTensor(g, tensor_->currentText() + ", multi-head");
    const QSignalBlocker b(slice_);
    resetSlice();
    return;
  }
  const StrategyRun* r = run(strategy_->currentText());
  const Tensor g = r ? gradient(*r) : Tensor();
  message_->setVisible(!g.defined());
  if (!g.defined()) {
    model_->clear();
    diff_->clear();
    slice_->setRange(1, 1);
    slice_->setSuffix(QString());
    return;
  }
  const QString name = tensor_->currentText() + ", " + strategy_->currentText();
  const StrategyRun* other = compare_->currentIndex() > 0 ? run(compare_->currentText()) : nullptr;
  const Tensor og = other ? gradient(*other) : Tensor();
  if (og.defined() && og.sizes() == g.sizes()) {
    maxDiff_ = TensorGridModel::maxAbsDiff(g, og);
    diff_->setText(
        tr("max |%1 of %2 - %1 of %3| = %4 (should be ~0)")
            .arg(tensor_->currentText(), strategy_->currentText(), compare_->currentText())
            .arg(maxDiff_, 0, 'g', 3));
  } else {
    diff_->setText(
        tr("%1 %2").arg(tensor_->currentText(), QString::fromStdString(g.shapeString())));
  }
  if (showDifference_->isChecked() && og.defined() && og.sizes() == g.sizes())
    model_->setDifference(g, og, name + " - " + compare_->currentText());
  else
    model_->setTensor(g, name);
  resetSlice();
}

void GradientsView::resetSlice() {
  const QSignalBlocker b(slice_);
  slice_->setRange(1, std::max(1, model_->sliceCount()));
  slice_->setValue(model_->slice() + 1);
  slice_->setSuffix(tr(" of %1").arg(std::max(1, model_->sliceCount())));
}

void GradientsView::setPresentationMode(bool on) {
  chart_->setPresentationMode(on);
}

}  // namespace matmulviz::ui

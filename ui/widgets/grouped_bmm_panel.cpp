#include "ui/widgets/grouped_bmm_panel.h"

#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>
#include <exception>

#include "ui/widgets/grouped_bmm_canvas.h"

namespace matmulviz::ui {
namespace {

QSpinBox* field(const QString& name, int max, const QString& what) {
  auto* box = new QSpinBox;
  box->setRange(1, max);
  box->setKeyboardTracking(false);
  box->setAccessibleName(name);
  box->setToolTip(QStringLiteral("%1: %2, 1..%3").arg(name, what).arg(max));
  return box;
}

}  // namespace

GroupedBmmPanel::GroupedBmmPanel(QWidget* parent) : QWidget(parent) {
  using L = GroupedBmmLimits;
  items_ =
      field(QStringLiteral("items"), L::maxItems, QStringLiteral("items n of a [items, I, J]"));
  table_ =
      field(QStringLiteral("table"), L::maxTable, QStringLiteral("matrices of c [table, J, K]"));
  i_ = field(QStringLiteral("I"), L::maxI, QStringLiteral("rows of each item"));
  j_ = field(QStringLiteral("J"), L::maxJK, QStringLiteral("columns of a, rows of c[m]"));
  k_ = field(QStringLiteral("K"), L::maxJK, QStringLiteral("columns of c[m] and out"));
  tpb_ = field(QStringLiteral("TPB"), L::maxTpb, QStringLiteral("threads per block side"));
  auto* run = new QPushButton(QStringLiteral("Simulate"));
  status_ = new QLabel;
  status_->setWordWrap(true);
  canvas_ = new GroupedBmmCanvas;

  auto* fields = new QHBoxLayout;
  const std::pair<const char*, QSpinBox*> boxes[] = {
      {"Items", items_}, {"Table", table_}, {"I", i_}, {"J", j_}, {"K", k_}, {"TPB", tpb_}};
  for (const auto& [name, box] : boxes) {
    auto* label = new QLabel(QLatin1String(name));
    label->setBuddy(box);
    fields->addWidget(label);
    fields->addWidget(box);
    fields->addSpacing(6);
  }
  fields->addWidget(run);
  fields->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(canvas_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(fields);
  layout->addWidget(status_);
  layout->addWidget(scroll, 1);

  const auto apply = [this] {
    if (!syncing_ && specFromFields() != spec_) setSpec(specFromFields());
  };
  for (QSpinBox* box : {items_, table_, i_, j_, k_, tpb_})
    connect(box, &QSpinBox::editingFinished, this, apply);
  connect(run, &QPushButton::clicked, this, [this] { setSpec(specFromFields()); });
  setSpec(spec_);
}

GroupedBmmSpec GroupedBmmPanel::specFromFields() const {
  GroupedBmmSpec s = spec_;
  s.items = items_->value();
  s.table = table_->value();
  s.I = i_->value();
  s.J = j_->value();
  s.K = k_->value();
  s.tpb = tpb_->value();
  return s;
}

void GroupedBmmPanel::setSpec(const GroupedBmmSpec& spec) {
  QString error = checkGroupedBmm(spec);
  std::shared_ptr<const GroupedBmmPicture> picture;
  if (error.isEmpty()) {
    try {
      picture = simulateGroupedBmmPicture(spec);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
  }
  syncing_ = true;
  const GroupedBmmSpec& shown = error.isEmpty() ? spec : spec_;
  items_->setValue(shown.items);
  table_->setValue(shown.table);
  i_->setValue(shown.I);
  j_->setValue(shown.J);
  k_->setValue(shown.K);
  tpb_->setValue(shown.tpb);
  syncing_ = false;
  if (!error.isEmpty()) {
    status_->setText(
        QStringLiteral("<span style='color:#b00000'>%1</span>").arg(error.toHtmlEscaped()));
    emit failed(error);
    return;
  }
  spec_ = spec;
  canvas_->setPicture(picture);
  const sim::LaunchStats& st = picture->run.report.stats;
  status_->setText(QStringLiteral("Simulated: the product ran %1 blocks of %2 x %2 threads, %3 "
                                  "FMAs, %4 shared loads; diagnostics: %5")
                       .arg(st.blocks)
                       .arg(spec.tpb)
                       .arg(st.fmas)
                       .arg(st.sharedLoads)
                       .arg(picture->run.report.diagnosticCounts.total()));
  emit simulated();
}

std::shared_ptr<const GroupedBmmPicture> GroupedBmmPanel::picture() const {
  return canvas_->picture();
}

void GroupedBmmPanel::selectBlock(int m) {
  canvas_->selectBlock(m);
}

int GroupedBmmPanel::selectedBlock() const {
  return canvas_->selectedBlock();
}

QImage GroupedBmmPanel::renderImage(QSize size) const {
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  QPainter painter(&image);
  painter.setFont(canvas_->font());
  canvas_->paint(painter, size);
  return image;
}

}  // namespace matmulviz::ui

#include "ui/widgets/segments_panel.h"

#include "ui/charts/event_picker.h"
#include "ui/models/allocator_state_model.h"
#include "ui/widgets/segments_canvas.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLabel>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <climits>

namespace matmulviz::ui {

SegmentsPanel::SegmentsPanel(QWidget* parent) : QWidget(parent) {
  setObjectName("segmentsPanel");
  model_ = new AllocatorStateModel(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  auto* row = new QHBoxLayout;
  title_ = new QLabel(tr("<b>Allocator state</b> after event"));
  spin_ = new QSpinBox;
  spin_->setObjectName("segmentsEvent");
  spin_->setSpecialValueText(tr("before the first"));
  spin_->setToolTip(
      tr("The event after which the segments are shown (Left/Right step); events "
         "are numbered as the Memory view's table numbers them: allocations, "
         "frees and segment changes"));
  slider_ = new QSlider(Qt::Horizontal);
  slider_->setObjectName("segmentsSlider");
  auto* back = new QToolButton;
  back->setArrowType(Qt::LeftArrow);
  back->setToolTip(tr("Previous event (Left)"));
  auto* forward = new QToolButton;
  forward->setArrowType(Qt::RightArrow);
  forward->setToolTip(tr("Next event (Right)"));
  row->addWidget(title_);
  row->addWidget(spin_);
  row->addWidget(back);
  row->addWidget(forward);
  row->addWidget(slider_, 1);
  layout->addLayout(row);
  event_ = new QLabel;
  event_->setObjectName("segmentsEventText");
  totals_ = new QLabel;
  totals_->setObjectName("segmentsTotals");
  totals_->setWordWrap(true);
  notes_ = new QLabel;
  notes_->setObjectName("segmentsNotes");
  notes_->setWordWrap(true);
  notes_->setStyleSheet("color: #b35900");
  for (QLabel* l : {event_, totals_, notes_}) {
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(l);
  }
  canvas_ = new SegmentsCanvas(model_);
  canvas_->setFocusPolicy(Qt::ClickFocus);
  auto* scroll = new QScrollArea;
  scroll->setWidget(canvas_);
  scroll->setWidgetResizable(true);
  scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  scroll->setMinimumHeight(90);
  layout->addWidget(scroll, 1);
  for (QWidget* w : {static_cast<QWidget*>(spin_), static_cast<QWidget*>(slider_),
                     static_cast<QWidget*>(canvas_)})
    w->installEventFilter(this);
  connect(spin_, &QSpinBox::valueChanged, this, [this](int v) {
    if (!updating_) setRow(v);
  });
  connect(slider_, &QSlider::valueChanged, this, [this](int v) {
    if (!updating_) setRow(v);
  });
  connect(back, &QToolButton::clicked, this, [this] { step(-1); });
  connect(forward, &QToolButton::clicked, this, [this] { step(1); });
  hide();
}

void SegmentsPanel::setHistories(AllocatorHistories histories, const QString& unavailable) {
  histories_ = std::move(histories);
  unavailable_ = histories_.isEmpty() ? unavailable : QString();
  model_->setHistory(nullptr);
  if (!unavailable_.isEmpty()) {
    setEnabled(false);
    event_->setText(unavailable_);
    totals_->clear();
    notes_->hide();
    show();
  } else {
    hide();
  }
}

bool SegmentsPanel::showDevice(const QString& name, int64_t row) {
  if (!unavailable_.isEmpty()) return false;
  for (const auto& h : histories_) {
    if (QStringLiteral("cuda:%1").arg(h->device()) != name) continue;
    setEnabled(true);
    model_->setHistory(h);
    const int last = int(std::min<int64_t>(h->timelineEventCount() - 1, INT_MAX - 1));
    updating_ = true;
    spin_->setRange(-1, last);
    slider_->setRange(-1, last);
    slider_->setPageStep(std::max(1, (last + 1) / 20));
    show();
    setRow(row >= 0 ? row : h->timelineEventCount() - 1);
    emit timelineRowSelected(row_);  // no echo
    updating_ = false;
    return true;
  }
  model_->setHistory(nullptr);
  hide();
  return false;
}

void SegmentsPanel::selectTimelineRow(int64_t row) {
  const auto* h = model_->history();
  // While the panel announces its own row, the tables' echo of it is not taken back.
  if (!h || row < 0 || updating_) return;
  updating_ = true;
  setRow(row);
  updating_ = false;
}

void SegmentsPanel::setTraceEvent(int64_t event) {
  const auto* h = model_->history();
  if (!h) return;
  event = std::clamp<int64_t>(event, -1, h->eventCount() - 1);
  if (event != model_->event()) model_->setEvent(event);
  row_ = h->timelineRowOfTraceEvent(event);
  const bool quiet = updating_;
  updating_ = true;
  spin_->setValue(int(std::min<int64_t>(row_, INT_MAX - 1)));
  slider_->setValue(int(std::min<int64_t>(row_, INT_MAX - 1)));
  showState();
  for (EventPicker* p : pickers_) p->setMarkedEvent(double(row_));
  if (!quiet) emit timelineRowSelected(row_);
  updating_ = quiet;
}

void SegmentsPanel::setRow(int64_t row) {
  const auto* h = model_->history();
  if (!h) return;
  row = std::clamp<int64_t>(row, -1, h->timelineEventCount() - 1);
  const int64_t event = row < 0 ? -1 : h->traceEventOfTimelineRow(row);
  if (event != model_->event()) model_->setEvent(event);
  row_ = row;
  const bool quiet = updating_;
  updating_ = true;
  spin_->setValue(int(std::min<int64_t>(row_, INT_MAX - 1)));
  slider_->setValue(int(std::min<int64_t>(row_, INT_MAX - 1)));
  showState();
  for (EventPicker* p : pickers_) p->setMarkedEvent(double(row_));
  if (!quiet) emit timelineRowSelected(row_);
  updating_ = quiet;
}

int64_t SegmentsPanel::traceEvent() const {
  return model_->event();
}

void SegmentsPanel::showState() {
  const auto* h = model_->history();
  event_->setText(model_->eventText(row_, h ? h->timelineEventCount() : 0));
  totals_->setText(model_->totalsText());
  QStringList notes;
  for (const std::string& n : model_->state().notes()) notes << QString::fromStdString(n);
  notes_->setText(notes.join(' '));
  notes_->setVisible(!notes.isEmpty());
}

void SegmentsPanel::step(int delta) {
  if (model_->history()) setRow(row_ + delta);
}

void SegmentsPanel::linkTable(QTableView* table) {
  connect(table, &QTableView::clicked, this,
          [this](const QModelIndex& index) { selectTimelineRow(index.row()); });
  connect(table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& index) {
            if (index.isValid()) selectTimelineRow(index.row());
          });
  connect(this, &SegmentsPanel::timelineRowSelected, table, [table](qint64 row) {
    if (row < 0 || row >= table->model()->rowCount()) return;
    table->selectRow(int(row));
    table->scrollTo(table->model()->index(int(row), 0));
  });
}

void SegmentsPanel::linkChart(ChartView* chart) {
  auto* picker = new EventPicker(chart);
  pickers_.append(picker);
  connect(picker, &EventPicker::picked, this, [this](qint64 row) {
    const auto* h = model_->history();
    if (!h) return;
    // The tables follow the click, not the other way round.
    setRow(std::clamp<qint64>(row, 0, h->timelineEventCount() - 1));
  });
}

void SegmentsPanel::setPresentationMode(bool on) {
  canvas_->setPresentationMode(on);
}

// Left/Right step through the events while the panel has focus: taken before the window's
// shortcuts (the Kernel view's step) see them.
bool SegmentsPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress) {
    const int key = static_cast<QKeyEvent*>(event)->key();
    if ((key == Qt::Key_Left || key == Qt::Key_Right) && model_->history()) {
      event->accept();
      if (event->type() == QEvent::KeyPress) step(key == Qt::Key_Right ? 1 : -1);
      return event->type() == QEvent::KeyPress;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace matmulviz::ui

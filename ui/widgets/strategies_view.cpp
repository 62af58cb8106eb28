#include "ui/widgets/strategies_view.h"
#include "core/util/format_units.h"

#include "core/memory/caching_allocator.h"
#include "core/strategies/strategy.h"
#include "ui/charts/strategies_chart.h"
#include "ui/models/qstring_of.h"
#include "ui/models/run_history.h"
#include "ui/models/strategies_table_model.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace matmulviz::ui {
namespace {

QString html(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

}  // namespace

StrategiesView::StrategiesView(RunHistory* history, QWidget* parent)
    : QWidget(parent), history_(history) {
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildToolbar());
  auto* charts = new QSplitter(Qt::Horizontal);
  timeChart_ = new StrategiesChart;
  timeChart_->setObjectName("timeChart");
  timeChart_->setMetric(StrategiesChart::Metric::Time);
  memoryChart_ = new StrategiesChart;
  memoryChart_->setObjectName("memoryChart");
  memoryChart_->setMetric(StrategiesChart::Metric::MaxMem);
  for (StrategiesChart* c : {timeChart_, memoryChart_}) {
    c->setHistory(history_);
    c->setMinimumSize(320, 260);
    charts->addWidget(c);
  }
  auto* bottom = new QSplitter(Qt::Horizontal);
  table_ = new StrategiesTableModel(this);
  table_->setHistory(history_);
  tableView_ = new QTableView;
  tableView_->setObjectName("strategiesTable");
  tableView_->setModel(table_);
  tableView_->setAlternatingRowColors(true);
  tableView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  tableView_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  connect(table_, &QAbstractItemModel::rowsInserted, tableView_, &QTableView::scrollToBottom);
  tableView_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  connect(tableView_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          [this] { compare_->setEnabled(selectedRunIds().size() == 2); });
  explanation_ = new QTextBrowser;
  explanation_->setObjectName("strategiesExplanation");
  explanation_->setPlaceholderText(
      tr("Run the strategies (Ctrl+R): each one's memory is explained here, block by block."));
  bottom->addWidget(buildRunsPanel());
  bottom->addWidget(explanation_);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(charts);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
}

QWidget* StrategiesView::buildRunsPanel() {
  // Above the table it acts on (in the toolbar's row the window would not fit a 720p
  // projector).
  auto* runs = new QWidget;
  auto* runsLayout = new QVBoxLayout(runs);
  runsLayout->setContentsMargins(0, 0, 0, 0);
  auto* compareRow = new QHBoxLayout;
  compare_ = new QPushButton(tr("Compare runs"));
  compare_->setObjectName("compareRuns");
  compare_->setShortcut(QKeySequence(tr("Ctrl+D")));
  compare_->setToolTip(
      tr("Select rows of two runs in the table (Ctrl+click), then compare them "
         "side by side (Ctrl+D)"));
  compare_->setEnabled(false);
  connect(compare_, &QPushButton::clicked, this, [this] {
    const QVector<int> ids = selectedRunIds();
    if (ids.size() == 2) emit compareRequested(ids[0], ids[1]);
  });
  compareRow->addWidget(compare_);
  auto* hint = new QLabel(tr("the rows of two runs (Ctrl+click)"));
  hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  compareRow->addWidget(hint, 1);
  runsLayout->addLayout(compareRow);
  runsLayout->addWidget(tableView_, 1);
  return runs;
}

QWidget* StrategiesView::buildToolbar() {
  auto* bar = new QWidget;
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  layout_ = new QComboBox;
  layout_->setObjectName("chartLayout");
  layout_->addItem(tr("Bars: latest run of each requires_grad setting"));
  layout_->addItem(tr("Lines: every run of the session"));
  memoryMetric_ = new QComboBox;
  memoryMetric_->setObjectName("memoryMetric");
  memoryMetric_->addItem(tr("maxMem (peak allocated)"));
  memoryMetric_->addItem(tr("curMem (allocated after the statement)"));
  row->addWidget(new QLabel(tr("Show")));
  row->addWidget(layout_);
  row->addSpacing(12);
  row->addWidget(new QLabel(tr("Memory")));
  row->addWidget(memoryMetric_);
  row->addStretch(1);
  row->addWidget(new QLabel(tr("Right-click a chart to export it or switch to a log scale.")));
  connect(layout_, &QComboBox::currentIndexChanged, this, [this](int i) {
    const auto l =
        i == 0 ? StrategiesChart::Layout::BarsLatest : StrategiesChart::Layout::LinesOverRuns;
    timeChart_->setLayout(l);
    memoryChart_->setLayout(l);
  });
  connect(memoryMetric_, &QComboBox::currentIndexChanged, this, [this](int i) {
    memoryChart_->setMetric(i == 0 ? StrategiesChart::Metric::MaxMem
                                   : StrategiesChart::Metric::CurMem);
  });
  return bar;
}

void StrategiesView::setReport(std::shared_ptr<const StrategiesReport> report) {
  explanation_->setHtml(report ? explain(*report) : QString());
}

QVector<int> StrategiesView::selectedRunIds() const {
  QVector<int> ids;
  const RunHistory* h = table_->history();
  if (!h) return ids;
  for (const QModelIndex& index : tableView_->selectionModel()->selectedRows()) {
    const auto ref = table_->rowRef(index.row());
    if (ref.entry < 0 || ref.entry >= h->size()) continue;
    const int id = h->entries()[ref.entry].id;
    if (!ids.contains(id)) ids << id;
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

QString StrategiesView::explanation() const {
  return explanation_->toPlainText();
}

QString StrategiesView::explain(const StrategiesReport& report) {
  QString out;
  const Workload& w = report.workload;
  out += QObject::tr("<p>a [%1, %2, %3] %4, c [%5, %3, %6], q [%1], on %7.</p>")
             .arg(w.n)
             .arg(w.i)
             .arg(w.j)
             .arg(html(std::string(dtypeName(w.dtype))))
             .arg(w.m)
             .arg(w.k)
             .arg(html(std::string(deviceKindName(report.device))));
  for (const StrategyRun& r : report.runs) {
    QString statement;
    try {
      statement = html(findStrategy(r.strategy).statement);
    } catch (const std::exception&) {
    }
    out += QString("<h3>%1</h3><p><code>%2</code></p>").arg(html(r.strategy), statement);
    if (!r.ok) {
      out += QString("<p style='color:#b00020'>%1</p>").arg(html(r.error));
      continue;
    }
    out += QObject::tr("<p>curMem %1, maxMem %2 (peak).</p>")
               .arg(bytesText(r.current.allocatedBytes), bytesText(r.peak.allocatedBytes));
    out += "<ul>";
    for (const KeptAlive& k : r.keptAlive) {
      if (k.whyNamesTheBlock())
        out += QString("<li>%1</li>").arg(html(k.why));
      else
        out += QObject::tr("<li><b>%1</b>, %2: %3</li>")
                   .arg(html(k.label), bytesText(k.bytes), html(k.why));
    }
    out += "</ul>";
  }
  for (const auto& note : report.notes) out += QString("<p><i>%1</i></p>").arg(html(note));
  return out;
}

void StrategiesView::setPresentationMode(bool on) {
  timeChart_->setPresentationMode(on);
  memoryChart_->setPresentationMode(on);
  QFont f = explanation_->font();
  f.setPointSizeF(on ? 16 : QFont().pointSizeF());
  explanation_->setFont(f);
}

}  // namespace matmulviz::ui

#include "ui/models/allocator_state_model.h"

#include "core/io/snapshot_frames.h"
#include "core/io/snapshot_timeline.h"
#include "core/util/format_units.h"

#include <QLocale>

namespace matmulviz::ui {

namespace {

using snapshot::BlockState;

constexpr quintptr kSegmentRow = 0;  // internalId of a segment row; a block's is segment + 1
constexpr int kMaxFrames = 40;       // frames in a hover text

QString sizeText(int64_t bytes) {
  return QString::fromStdString(formatSize(bytes));
}

}  // namespace

QString blockStateText(BlockState state) {
  switch (state) {
    case BlockState::ActiveAllocated:
      return QStringLiteral("allocated");
    case BlockState::ActivePendingFree:
    case BlockState::ActiveAwaitingFree:
      return QStringLiteral("pending free");
    case BlockState::Inactive:
      break;
  }
  return QStringLiteral("free");
}

QString addressText(int64_t address) {
  return QStringLiteral("0x") + QString::number(static_cast<qulonglong>(address), 16);
}

QString streamText(int64_t stream) {
  return stream == 0 ? QStringLiteral("0") : addressText(stream);
}

AllocatorStateModel::AllocatorStateModel(QObject* parent) : QAbstractItemModel(parent) {}

void AllocatorStateModel::setHistory(std::shared_ptr<const snapshot::AllocatorHistory> history) {
  history_ = std::move(history);
  setEvent(history_ ? history_->eventCount() - 1 : -1);
}

void AllocatorStateModel::setEvent(int64_t event) {
  beginResetModel();
  state_ = history_ ? history_->stateAfter(event) : snapshot::AllocatorState{};
  firstBlock_.clear();
  firstBlock_.reserve(int(state_.segments.size()) + 1);
  size_t b = 0;
  for (size_t s = 0; s < state_.segments.size(); ++s) {
    firstBlock_.append(int(b));
    while (b < state_.blocks.size() && state_.blocks[b].segment == s) ++b;
  }
  firstBlock_.append(int(b));
  endResetModel();
}

int AllocatorStateModel::blockCount(int segment) const {
  if (segment < 0 || segment + 1 >= firstBlock_.size()) return 0;
  return firstBlock_[segment + 1] - firstBlock_[segment];
}

QModelIndex AllocatorStateModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, kSegmentRow);
  return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex AllocatorStateModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == kSegmentRow) return {};
  return createIndex(int(child.internalId() - 1), 0, kSegmentRow);
}

int AllocatorStateModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return int(state_.segments.size());
  if (parent.column() != 0 || parent.internalId() != kSegmentRow) return 0;
  return blockCount(parent.row());
}

int AllocatorStateModel::columnCount(const QModelIndex&) const {
  return ColumnCount;
}

QVariant AllocatorStateModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  if (role == Qt::ToolTipRole)
    return index.internalId() == kSegmentRow
               ? segmentText(index.row())
               : blockText(firstBlock(int(index.internalId() - 1)) + index.row());
  if (role == Qt::TextAlignmentRole)
    return index.column() == Size || index.column() == Requested
               ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
               : QVariant();
  if (role != Qt::DisplayRole && role != RawRole) return {};
  if (index.internalId() == kSegmentRow) return segmentData(index.row(), index.column(), role);
  const int segment = int(index.internalId() - 1);
  return blockData(firstBlock(segment) + index.row(), index.column(), role);
}

QVariant AllocatorStateModel::segmentData(int segment, int column, int role) const {
  const snapshot::StateSegment& s = state_.segments[size_t(segment)];
  const bool raw = role == RawRole;
  switch (column) {
    case Address:
      return raw ? QVariant(qlonglong(s.address)) : QVariant(addressText(s.address));
    case Size:
      return raw ? QVariant(qlonglong(s.size)) : QVariant(sizeText(s.size));
    case State:
      return QStringLiteral("%1 pool%2")
          .arg(s.large ? QStringLiteral("large") : QStringLiteral("small"),
               s.expandable ? QStringLiteral(", expandable") : QString());
    case Stream:
      return raw ? QVariant(qlonglong(s.stream)) : QVariant(streamText(s.stream));
    case Frame:
      return frameText(s.stack);
    default:
      return {};
  }
}

QVariant AllocatorStateModel::blockData(int block, int column, int role) const {
  const snapshot::StateBlock& b = state_.blocks[size_t(block)];
  const bool raw = role == RawRole;
  const bool free = b.state == BlockState::Inactive;
  switch (column) {
    case Address:
      return raw ? QVariant(qlonglong(b.address)) : QVariant(addressText(b.address));
    case Size:
      return raw ? QVariant(qlonglong(b.size)) : QVariant(sizeText(b.size));
    case Requested:
      if (raw) return qlonglong(b.requestedSize);
      return free ? QString() : sizeText(b.requestedSize);
    case State:
      return blockStateText(b.state);
    case Stream:
      return segmentData(int(b.segment), Stream, role);
    case Frame:
      return frameText(b.stack);
    default:
      return {};
  }
}

QVariant AllocatorStateModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* kNames[] = {"address", "size", "requested", "state / pool", "stream", "frame"};
  return section >= 0 && section < ColumnCount ? tr(kNames[section]) : QVariant();
}

QString AllocatorStateModel::frameText(snapshot::StackId stack) const {
  if (!history_ || stack >= history_->snapshot().stacks.size()) return {};
  const auto& frames = history_->snapshot().stacks[stack];
  if (frames.empty()) return {};
  // As the timeline labels a block: the allocator's own "??" frames name no place.
  const snapshot::Frame& f =
      history_->snapshot().frames[snapshot::labelFrame(history_->snapshot(), frames)];
  return QStringLiteral("%1 %2").arg(QString::fromStdString(snapshot::frameLabel(f)),
                                     QString::fromStdString(f.name));
}

QString AllocatorStateModel::framesText(snapshot::StackId stack) const {
  if (!history_ || stack >= history_->snapshot().stacks.size() ||
      history_->snapshot().stacks[stack].empty())
    return tr("(no frames recorded)");
  const auto& frames = history_->snapshot().stacks[stack];
  QStringList lines;
  for (size_t i = 0; i < frames.size() && i < size_t(kMaxFrames); ++i) {
    const snapshot::Frame& f = history_->snapshot().frames[frames[i]];
    lines << QStringLiteral("%1:%2:%3")
                 .arg(QString::fromStdString(f.filename))
                 .arg(f.line)
                 .arg(QString::fromStdString(f.name));
  }
  if (frames.size() > size_t(kMaxFrames))
    lines << tr("... %1 more frames").arg(frames.size() - size_t(kMaxFrames));
  return lines.join('\n');
}

QString AllocatorStateModel::blockText(int block) const {
  if (block < 0 || size_t(block) >= state_.blocks.size()) return {};
  const snapshot::StateBlock& b = state_.blocks[size_t(block)];
  const snapshot::StateSegment& s = state_.segments[b.segment];
  if (b.state == BlockState::Inactive)
    return tr("free block %1, %2 (cached in segment %3, stream %4)")
        .arg(addressText(b.address), sizeText(b.size), addressText(s.address),
             streamText(s.stream));
  QString text = tr("block %1, %2 %3 (requested %4, stream %5)")
                     .arg(addressText(b.address), sizeText(b.size), blockStateText(b.state),
                          sizeText(b.requestedSize), streamText(s.stream));
  if (b.state != BlockState::ActiveAllocated)
    text += tr("\nfreed by the program, waiting for a stream's use of it to finish");
  return text + '\n' + framesText(b.stack);
}

QString AllocatorStateModel::segmentText(int segment) const {
  if (segment < 0 || size_t(segment) >= state_.segments.size()) return {};
  const snapshot::StateSegment& s = state_.segments[size_t(segment)];
  int64_t active = 0;
  for (int b = firstBlock(segment); b < firstBlock(segment) + blockCount(segment); ++b)
    if (state_.blocks[size_t(b)].state != BlockState::Inactive)
      active += state_.blocks[size_t(b)].size;
  QString text =
      tr("segment %1, %2, %3 pool%4, stream %5: %6 active, %7 free")
          .arg(addressText(s.address), sizeText(s.size), s.large ? tr("large") : tr("small"),
               s.expandable ? tr(" (expandable)") : QString())
          .arg(s.stream)
          .arg(sizeText(active), sizeText(s.size - active));
  if (s.fromTrace)
    text += tr("\nknown from the trace only: its pool is inferred from its size");
  else if (s.poolId[0] != 0 || s.poolId[1] != 0)
    text += tr("\nprivate pool (%1, %2), as a CUDA graph or a MemPool has")
                .arg(s.poolId[0])
                .arg(s.poolId[1]);
  return text + '\n' + framesText(s.stack);
}

QString AllocatorStateModel::eventText(int64_t row, int64_t rows) const {
  if (!history_) return {};
  const QString count = QLocale().toString(rows);
  if (row < 0) return tr("before the first of %1 events").arg(count);
  const QString head = tr("after event %1 of %2").arg(QLocale().toString(row), count);
  if (state_.event < 0) return head + tr(": alive before the recording started");
  const snapshot::DeviceTrace& t = history_->snapshot().traces[history_->device()];
  const size_t x = size_t(state_.event);
  QString what = QString::fromLatin1(snapshot::actionName(t.action[x]));
  if (t.action[x] == snapshot::TraceAction::Oom)
    what +=
        tr(" (requested %1, %2 free on the device)").arg(sizeText(t.size[x]), sizeText(t.addr[x]));
  else if (t.action[x] != snapshot::TraceAction::Snapshot)
    what += QStringLiteral(" %1, %2").arg(addressText(t.addr[x]), sizeText(t.size[x]));
  QString text =
      head + tr(" · PyTorch's trace entry %1: %2").arg(QLocale().toString(state_.event), what);
  if (const QString frame = frameText(t.stack[x]); !frame.isEmpty()) text += tr(" at ") + frame;
  return text;
}

QString AllocatorStateModel::totalsText() const {
  const auto& s = state_;
  return tr("%1 segments: reserved %2 · allocated %3 · active %4 (pending free %5) · requested "
            "%6 · free in segments %7 (largest block %8) · fragmentation %9%")
      .arg(s.segments.size())
      .arg(sizeText(s.reservedBytes), sizeText(s.allocatedBytes), sizeText(s.activeBytes),
           sizeText(s.activeBytes - s.allocatedBytes), sizeText(s.requestedBytes),
           sizeText(s.inactiveBytes), sizeText(s.largestInactive))
      .arg(QString::number(s.fragmentation() * 100, 'f', 0));
}

}  // namespace matmulviz::ui

#pragma once
// What an opened file is, in a few lines, for the Scenario panel while the window shows it
// (file, kind, devices, events, peak): the numbers the Memory view shows for the same file
// (events as it numbers them: allocations, frees and segment changes; the peak as its header
// names it). Qt Core only.

#include "ui/models/open_file.h"

#include <QString>
#include <QStringList>

namespace matmulviz::ui {

/// One line per fact, plain text: "file: x.pickle.gz", "kind: a PyTorch memory snapshot",
/// then per device or script "cuda:0: 1,182 events; peak allocated 20.0 MiB at event 553
/// (op index_Tensor, block snapshots.py:15)". A file without a timeline says what it holds
/// ("5 strategies", "a joint graph of 12 nodes").
QStringList openedFileSummary(const OpenedFile& file);

/// The kind of `file` in words: "a PyTorch memory snapshot" (", gzip-compressed" when its name
/// ends in .gz), "a Python run's report", "a strategies report", ...
QString openedFileKind(const OpenedFile& file);

}  // namespace matmulviz::ui

#pragma once
// How the app starts a comparison: File > Compare Reports… (Ctrl+Shift+D: two files, read on a
// worker thread), `matmulviz --compare A B`, and the Strategies view's "Compare runs" (Ctrl+D:
// two runs of the history). Keeps the reports of the session's last runs, so that two runs made
// or opened here compare with their memory timelines; older runs compare by their numbers. Shows
// the result in one Compare window, or a message box naming the file and the problem.

#include "ui/models/compared_files.h"

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>

#include <deque>
#include <memory>
#include <utility>

class QMenu;
class QWidget;

namespace matmulviz::ui {

class CompareWindow;
class RunHistory;

class CompareController : public QObject {
  Q_OBJECT
 public:
  /// `history`: the runs that compareRuns finds by id; `window`: the parent of dialogs and of
  /// the Compare window.
  CompareController(const RunHistory* history, QWidget* window);
  ~CompareController() override;

  /// Adds "Compare Reports…" (Ctrl+Shift+D) to `menu`.
  void addMenuActions(QMenu* menu);
  /// Keeps `report` as the report of history run `runId` (the last kReportsKept are kept).
  void remember(int runId, std::shared_ptr<const StrategiesReport> report);
  static constexpr int kReportsKept = 8;

  /// Asks for two files (one dialog where both can be chosen; a second one when only A was).
  void chooseFiles();
  /// Reads `pathA` and `pathB` on a worker thread and shows their comparison (or the message).
  void compareFiles(const QString& pathA, const QString& pathB);
  /// Compares history runs `idA` and `idB` (RunEntry::id) and shows them.
  void compareRuns(int idA, int idB);

  /// The Compare window (created on first use; nullptr before).
  CompareWindow* compareWindow() const;
  /// True while two files are being read.
  bool isLoading() const { return watcher_.isRunning(); }

 signals:
  /// A comparison is shown in the Compare window.
  void compared();
  /// Nothing was compared; `message` names the file and the problem, and was shown in a box.
  void failed(const QString& message);

 private:
  void show(std::shared_ptr<const ComparedFiles> files);
  void fail(const QString& message);

  const RunHistory* history_;
  QWidget* parentWindow_;
  QPointer<CompareWindow> window_;
  std::deque<std::pair<int, std::shared_ptr<const StrategiesReport>>> reports_;
  /// The result of reading two files: the comparison, or the message of what went wrong.
  struct Loaded {
    std::shared_ptr<const ComparedFiles> files;
    QString error;
  };
  QFutureWatcher<Loaded> watcher_;
};

}  // namespace matmulviz::ui

#pragma once
// Reads the files a user opens (File > Open, drag and drop, `matmulviz FILE...`) on a worker
// thread, one after another in the order given, so that a large report or snapshot never
// freezes the window: progress while a snapshot is parsed, Cancel, and each result or error
// handed back on the GUI thread.

#include "ui/models/open_file.h"

#include <QObject>
#include <QStringList>

#include <atomic>

class QThread;

namespace matmulviz::ui {

class FileLoader : public QObject {
  Q_OBJECT
 public:
  explicit FileLoader(QObject* parent = nullptr);
  ~FileLoader() override;  ///< cancels and waits for the file in flight

  /// Queues `paths`; each is read on a worker thread after those queued before it.
  void open(const QStringList& paths);
  bool isLoading() const { return thread_ != nullptr; }
  /// Stops the snapshot being parsed (a report is read whole) and drops the queued files.
  void cancel();
  /// Waits (at most `ms`, -1: no limit) until every queued file is read and its signal
  /// delivered; for tests and shutdown. False on timeout.
  bool wait(int ms);

 signals:
  void started(const QString& fileName);
  /// `fraction` in [0, 1] of the file being read (snapshots only).
  void progress(double fraction);
  void loaded(const matmulviz::ui::OpenedFile& file);
  /// `message` names the file and the problem ("'r.json': runs[0].ok must be true or false").
  void failed(const QString& path, const QString& message);
  /// The last queued file is read and its loaded() or failed() delivered.
  void idle();

 private:
  void startNext();
  void work(const QString& path);

  QStringList queue_;
  QThread* thread_ = nullptr;
  std::atomic<bool> cancel_{false};
};

}  // namespace matmulviz::ui

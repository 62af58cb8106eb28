#include "ui/widgets/file_loader.h"

#include "core/io/pickle_reader.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QMetaObject>
#include <QThread>

#include <new>

namespace matmulviz::ui {

FileLoader::FileLoader(QObject* parent) : QObject(parent) {}

FileLoader::~FileLoader() {
  cancel();
  if (thread_) thread_->wait();
}

void FileLoader::open(const QStringList& paths) {
  queue_ += paths;
  if (!thread_) startNext();
}

void FileLoader::cancel() {
  queue_.clear();
  cancel_ = true;
}

bool FileLoader::wait(int ms) {
  QDeadlineTimer deadline(ms < 0 ? QDeadlineTimer::Forever : QDeadlineTimer(ms));
  while (thread_ || !queue_.isEmpty()) {
    if (deadline.hasExpired()) return false;
    if (thread_) thread_->wait(QDeadlineTimer(qMin<qint64>(50, deadline.remainingTime())));
    QCoreApplication::sendPostedEvents(this);  // results, then the next file's start
  }
  return true;
}

void FileLoader::startNext() {
  if (queue_.isEmpty()) return;
  const QString path = queue_.takeFirst();
  cancel_ = false;
  thread_ = QThread::create([this, path] { work(path); });
  connect(thread_, &QThread::finished, this, [this] {
    thread_->deleteLater();
    thread_ = nullptr;
    if (queue_.isEmpty())
      emit idle();
    else
      startNext();
  });
  emit started(QFileInfo(path).fileName());
  thread_->start();
}

void FileLoader::work(const QString& path) {
  auto post = [this](auto fn) { QMetaObject::invokeMethod(this, fn, Qt::QueuedConnection); };
  QElapsedTimer sinceProgress;
  sinceProgress.start();
  auto onProgress = [&](double f) {
    if (sinceProgress.elapsed() < 50 && f < 1) return;  // at most 20 updates a second
    sinceProgress.restart();
    post([this, f] { emit progress(f); });
  };
  try {
    OpenedFile file = loadFile(path, onProgress, &cancel_);
    post([this, file = std::move(file)] { emit loaded(file); });
  } catch (const pickle::Cancelled&) {
    const QString name = QFileInfo(path).fileName();
    post([this, path, name] { emit failed(path, tr("'%1': cancelled").arg(name)); });
  } catch (const std::bad_alloc&) {
    const QString name = QFileInfo(path).fileName();
    post([this, path, name] {
      emit failed(path, tr("'%1': out of memory while reading it").arg(name));
    });
  } catch (const std::exception& e) {
    const QString message = QString::fromUtf8(e.what());
    post([this, path, message] { emit failed(path, message); });
  }
}

}  // namespace matmulviz::ui

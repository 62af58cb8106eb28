#pragma once
// The Program view's editor: a Python script in QScintilla (Python lexer, line numbers, a
// monospace font) and, after a run, a margin of two columns beside each line: the bytes the
// line allocated over the run, and the bytes it held at the peak (the largest in dark red). The
// highlighted line (from the timeline, the peak table or the flame bar) gets an orange
// background and is scrolled into view.

#include <Qsci/qsciscintilla.h>

#include <QHash>

#include <memory>

class QsciStyle;

namespace matmulviz::ui {

class ProgramRun;

class ProgramEditor : public QsciScintilla {
  Q_OBJECT
 public:
  enum Margin { LineNumbers, BytesMargin };

  explicit ProgramEditor(QWidget* parent = nullptr);
  ~ProgramEditor() override;

  /// Fills the margins from `run` (nullptr clears them).
  void setRun(std::shared_ptr<const ProgramRun> run);
  /// Highlights script line `line` (1-based; 0: none) and scrolls to it; with `moveCursor`, puts
  /// the cursor there too.
  void highlightLine(int line, bool moveCursor = true);
  int highlightedLine() const { return highlighted_; }
  /// The margin's columns beside line `line` (1-based): "64 MiB", or "" where it has none.
  QString allocatedTextOf(int line) const;
  QString peakTextOf(int line) const;

 signals:
  /// The cursor moved to another line (1-based), by the user or by highlightLine.
  void cursorLineChanged(int line);
  /// Esc in the editor (QScintilla takes the key before the window's Cancel shortcut sees it).
  void escapePressed();

 protected:
  void keyPressEvent(QKeyEvent* event) override;

 private:
  void setUpMargins();
  std::unique_ptr<QsciStyle> marginStyle_, peakStyle_;
  int highlighted_ = 0;
  int cursorLine_ = 0;
  int highlightMarker_ = -1;
  /// The margin's texts by 1-based line (QScintilla writes them, but cannot give them back).
  QHash<int, QString> allocatedText_, peakText_;
};

}  // namespace matmulviz::ui

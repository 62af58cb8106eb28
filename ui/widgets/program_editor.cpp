#include "ui/widgets/program_editor.h"

#include "core/util/format_units.h"
#include "ui/models/program_run.h"
#include "ui/models/qstring_of.h"

#include <Qsci/qscilexerpython.h>
#include <Qsci/qscistyle.h>
#include <Qsci/qscistyledtext.h>

#include <QFontDatabase>
#include <QKeyEvent>

namespace matmulviz::ui {

ProgramEditor::ProgramEditor(QWidget* parent) : QsciScintilla(parent) {
  setObjectName(QStringLiteral("programEditor"));
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSize(std::max(10, mono.pointSize()));
  auto* lexer = new QsciLexerPython(this);
  lexer->setDefaultFont(mono);
  lexer->setFont(mono, -1);  // every style: comments and strings too
  setLexer(lexer);
  setFont(mono);
  setUtf8(true);
  setIndentationsUseTabs(false);
  setIndentationWidth(4);
  setAutoIndent(true);
  setBraceMatching(QsciScintilla::SloppyBraceMatch);
  setCaretLineVisible(true);
  setCaretLineBackgroundColor(QColor(245, 245, 250));
  highlightMarker_ = markerDefine(QsciScintilla::Background);
  setMarkerBackgroundColor(QColor(255, 214, 153), highlightMarker_);
  setUpMargins();
  connect(this, &QsciScintilla::cursorPositionChanged, this, [this](int line, int) {
    if (line + 1 == cursorLine_) return;
    cursorLine_ = line + 1;
    emit cursorLineChanged(cursorLine_);
  });
}

ProgramEditor::~ProgramEditor() = default;

void ProgramEditor::setUpMargins() {
  setMargins(2);
  setMarginsFont(font());
  setMarginType(LineNumbers, NumberMargin);
  setMarginLineNumbers(LineNumbers, true);
  setMarginWidth(LineNumbers, QStringLiteral("00000"));
  setMarginType(BytesMargin, TextMargin);
  setMarginWidth(BytesMargin, 0);  // until a run fills it
  QFont bold = font();
  bold.setBold(true);
  marginStyle_ = std::make_unique<QsciStyle>(-1, QStringLiteral("bytes"), QColor(70, 70, 70),
                                             QColor(236, 240, 246), font());
  peakStyle_ = std::make_unique<QsciStyle>(-1, QStringLiteral("bytes at the peak"),
                                           QColor(170, 0, 0), QColor(252, 232, 230), bold);
}

void ProgramEditor::setRun(std::shared_ptr<const ProgramRun> run) {
  clearMarginText();
  allocatedText_.clear();
  peakText_.clear();
  if (!run || run->lines().isEmpty()) {
    setMarginWidth(BytesMargin, 0);
    return;
  }
  qint64 mostAtPeak = 0;
  for (const auto& l : run->lines()) mostAtPeak = std::max(mostAtPeak, l.aliveAtPeakBytes);
  for (auto it = run->lines().begin(); it != run->lines().end(); ++it) {
    allocatedText_[it.key()] = bytesText(it->allocatedBytes);
    if (it->aliveAtPeakBytes > 0) peakText_[it.key()] = bytesText(it->aliveAtPeakBytes);
  }
  // Two columns in one text margin, padded in the monospace font: QScintilla keeps one text per
  // line and margin, and a text margin of its own per column would not line up its styles.
  qsizetype width = 0;
  for (const QString& t : allocatedText_) width = std::max(width, t.size());
  for (const QString& t : peakText_) width = std::max(width, t.size());
  // Styles by number: QsciStyledText's constructor from a QsciStyle copies it onto the heap and
  // never frees it (QScintilla 2.13; LeakSanitizer in the sanitizer build).
  marginStyle_->apply(this);
  peakStyle_->apply(this);
  for (auto it = allocatedText_.begin(); it != allocatedText_.end(); ++it) {
    const QString peak = peakText_.value(it.key());
    const bool top = !peak.isEmpty() && run->lines().value(it.key()).aliveAtPeakBytes == mostAtPeak;
    QList<QsciStyledText> texts{
        QsciStyledText(QLatin1Char(' ') + it.value().rightJustified(width), marginStyle_->style()),
        QsciStyledText(QStringLiteral("  ") + peak.rightJustified(width) + QLatin1Char(' '),
                       top ? peakStyle_->style() : marginStyle_->style())};
    setMarginText(it.key() - 1, texts);
  }
  setMarginWidth(BytesMargin, QString(2 * width + 5, QLatin1Char('0')));
}

void ProgramEditor::highlightLine(int line, bool moveCursor) {
  markerDeleteAll(highlightMarker_);
  highlighted_ = line > 0 && line <= lines() ? line : 0;
  if (highlighted_ == 0) return;
  markerAdd(highlighted_ - 1, highlightMarker_);
  if (moveCursor) setCursorPosition(highlighted_ - 1, 0);
  ensureLineVisible(highlighted_ - 1);
}

void ProgramEditor::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && event->modifiers() == Qt::NoModifier) emit escapePressed();
  QsciScintilla::keyPressEvent(event);
}

QString ProgramEditor::allocatedTextOf(int line) const {
  return allocatedText_.value(line);
}

QString ProgramEditor::peakTextOf(int line) const {
  return peakText_.value(line);
}

}  // namespace matmulviz::ui

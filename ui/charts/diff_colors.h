#pragma once
// The colours of a difference B - A, as heaptrack's diff mode uses them: growth (B > A) red,
// shrink (B < A) green. One pair for the Compare window's charts and its tables.

#include <QColor>

namespace matmulviz::ui {

inline QColor growthColor() {
  return QColor(180, 0, 0);
}
inline QColor shrinkColor() {
  return QColor(0, 120, 40);
}

}  // namespace matmulviz::ui

#pragma once
// The widgets of KernelView, held in one struct so the view's header stays small. Internal.

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>

#include "ui/widgets/kernel_view.h"

namespace matmulviz::ui {

struct KernelView::Controls {
  QComboBox* kernel = nullptr;
  QSpinBox* m = nullptr;
  QSpinBox* k = nullptr;
  QSpinBox* n = nullptr;
  QSpinBox* tpb = nullptr;
  QPushButton* run = nullptr;
  QLabel* status = nullptr;
  QToolButton* start = nullptr;
  QToolButton* back = nullptr;
  QToolButton* play = nullptr;
  QToolButton* forward = nullptr;
  QToolButton* end = nullptr;
  QComboBox* unit = nullptr;
  QSlider* speed = nullptr;
  QLabel* speedLabel = nullptr;
  QSlider* position = nullptr;
  QLabel* positionLabel = nullptr;
  QTableView* stats = nullptr;
  QTableView* diagnostics = nullptr;
  QLabel* summary = nullptr;
  QLabel* diagnosticsLabel = nullptr;
  QSplitter* splitter = nullptr;
  /// Page 0: the A/B/C animation (playback, canvas, side panel); page 1: kernel 08's picture.
  QStackedWidget* pages = nullptr;
};

}  // namespace matmulviz::ui

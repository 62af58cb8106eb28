#include "ui/widgets/kernel_combo.h"

#include <QComboBox>

#include "ui/models/kernel_launch.h"

namespace matmulviz::ui {

void addKernelItems(QComboBox* combo) {
  bool separated = false;
  for (const QString& name : kernelViewKernels()) {
    if (isFaultyKernel(name) && !separated) {
      combo->insertSeparator(combo->count());  // the teaching kernels, wrong on purpose
      separated = true;
    }
    combo->addItem(kernelItemText(name), name);
  }
}

}  // namespace matmulviz::ui

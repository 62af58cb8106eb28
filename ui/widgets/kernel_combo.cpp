#include "ui/widgets/kernel_combo.h"

#include <QComboBox>
#include <QStandardItemModel>

#include "ui/models/kernel_launch.h"

namespace matmulviz::ui {

namespace {

/// `kernel` as a greyed-out item whose tooltip says why and where it runs.
void addUnselectable(QComboBox* combo, const QString& kernel) {
  combo->addItem(kernel + QStringLiteral(" (batched: matmulviz-cli launch)"), kernel);
  auto* model = qobject_cast<QStandardItemModel*>(combo->model());
  if (QStandardItem* item = model ? model->item(combo->count() - 1) : nullptr) {
    item->setEnabled(false);
    item->setToolTip(batchedKernelNote(kernel));
  }
}

}  // namespace

void addKernelItems(QComboBox* combo, bool withGrouped) {
  bool separated = false;
  for (const QString& name : kernelViewKernels()) {
    if (isFaultyKernel(name) && !separated) {
      // Batched kernels are listed, so that the list matches the CLI's, but not selectable.
      for (const QString& batched : batchedKernels()) addUnselectable(combo, batched);
      const QString grouped = QLatin1String(kGroupedKernel);
      if (withGrouped) {
        combo->addItem(grouped + QStringLiteral(" (buckets and shared tile)"), grouped);
      } else {
        addUnselectable(combo, grouped);
      }
      combo->insertSeparator(combo->count());  // the teaching kernels, wrong on purpose
      separated = true;
    }
    combo->addItem(kernelItemText(name), name);
  }
}

}  // namespace matmulviz::ui

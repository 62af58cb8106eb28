#pragma once
// The kernel list both kernel pickers show (the scenario panel's and the Kernel view's): the
// correct variants, the batched ones greyed out (no A/B/C diagram; the tooltip says to run them
// with matmulviz-cli launch), then, after a separator, the faulty teaching ones marked as such.
// Each item's data is the plain kernel name (what scenarios store).

class QComboBox;

namespace matmulviz::ui {

/// Appends the Kernel view's kernels (kernelViewKernels()) to `combo`; with `withGrouped`
/// (the Kernel view's picker) grouped_bmm too, selectable, after the batched ones: the view
/// draws it in a picture of its own. A scenario stores A/B/C launches only.
void addKernelItems(QComboBox* combo, bool withGrouped = false);

}  // namespace matmulviz::ui

#pragma once
// Kernel 08 (grouped_bmm) for the Kernel view: one small simulated launch with the buckets its
// first three launches built and the product's report, so the view can draw the histogram, the
// prefix sum, the scatter and the shared tile of any block. Qt Core only: numbers and strings.
//
//   auto picture = simulateGroupedBmmPicture({});   // 12 items, 5 matrices of 8 x 8
//   picture->buckets.rows;                           // item ids grouped by q

#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/registry.h"

namespace matmulviz::ui {

/// out[n] = a[n] @ c[q[n]] with a [items, I, J], c [table, J, K], in TPB x TPB blocks, inputs
/// from `seed` (kernels::makeInputs). Small enough to draw every item and every bucket.
struct GroupedBmmSpec {
  int items = 12;
  int table = 5;
  int I = 1;
  int J = 8;
  int K = 8;
  int tpb = 4;
  quint64 seed = 0;
  bool operator==(const GroupedBmmSpec&) const = default;
};

/// The ranges the picture accepts: every item and bucket stays a readable cell.
struct GroupedBmmLimits {
  static constexpr int maxItems = 64;
  static constexpr int maxTable = 32;
  static constexpr int maxI = 4;
  static constexpr int maxJK = 32;  ///< J and K: the shared tile drawn cell by cell
  static constexpr int maxTpb = 32;
};

/// Empty when the picture can show `spec`; else one sentence naming the field and its range.
QString checkGroupedBmm(const GroupedBmmSpec& spec);

struct GroupedBmmPicture {
  GroupedBmmSpec spec;
  kernels::MatmulInputs inputs;     ///< a, c (inputs.b) and q
  kernels::GroupedBuckets buckets;  ///< counts, offsets, rows as the bucketing left them
  kernels::SimulatedRun run;        ///< the product's report (prior launches: the bucketing)

  /// Buckets that hold at least one item: the blocks that stage their c[m].
  int usedMatrices() const;
  /// Floats of c read from global memory: by grouped_bmm (each used c[m] once) and by
  /// gather_bmm (every output element reads its column of c[q[n]]: items * I * J * K).
  std::int64_t cFloatsRead() const;
  std::int64_t cFloatsReadByGatherBmm() const;
};

/// Runs `spec` on the simulator (kernels::simulateGroupedBmm, every block untraced). Throws
/// std::invalid_argument with checkGroupedBmm's message.
std::shared_ptr<const GroupedBmmPicture> simulateGroupedBmmPicture(const GroupedBmmSpec& spec);

}  // namespace matmulviz::ui

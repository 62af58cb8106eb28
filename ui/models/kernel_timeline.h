#pragma once
// The animation of one block, read from its trace: the events of the traced block grouped into
// atoms (one iteration of a thread's k-loop, one staging of a tile element, one store, one idle
// exit), in execution order, and the steps of each unit over them. Nothing is re-derived from the
// kernel's source: which elements a thread multiplied comes from its loads in the trace (for
// smem_tiled, its shared loads resolved through the staging stores of the same tile).

#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "ui/models/kernel_launch.h"

namespace matmulviz::ui {

/// What one step forward advances (KernelView::StepUnit mirrors it).
enum class KernelStepUnit { Thread, KStep, BarrierPhase };

enum class KernelAtomKind : std::uint8_t {
  KStep,    ///< one iteration of the k-loop: a load from A (or As) and one from B (or Bs)
  Stage,    ///< smem_tiled: one thread copies its element of A and of B into As and Bs
  Store,    ///< the thread stores its C element and exits
  Exit,     ///< the thread exits without storing (outside C: idle)
  Partial,  ///< events that form no complete step (the trace was cut by its cap)
};

/// A group of consecutive trace events of one thread.
struct KernelAtom {
  std::uint32_t firstEvent = 0;  ///< index in the trace's events()
  std::uint32_t endEvent = 0;    ///< one past the last
  std::uint16_t thread = 0;      ///< linear threadIdx within the block (x fastest)
  std::uint16_t phase = 0;       ///< barriers this thread passed before the atom
  KernelAtomKind kind = KernelAtomKind::KStep;
  bool barrierAfter = false;  ///< the thread waits at __syncthreads() right after
};

/// One multiply-add of a thread, resolved to global elements. -1 coordinates: a zero (a tile
/// element past the edge of A or B); shared coordinates are -1 for kernels without tiles.
struct KernelProduct {
  std::int64_t atom = 0;
  std::int32_t k = 0;  ///< global k (tile * TPB + kk for smem_tiled; may reach past K there)
  std::int32_t aRow = -1, aCol = -1, bRow = -1, bCol = -1;
  std::int32_t asRow = -1, asCol = -1, bsRow = -1, bsCol = -1;
};

class KernelTimeline {
 public:
  KernelTimeline() = default;
  /// Groups the trace of `result->tracedBlock` into atoms. Keeps `result` alive.
  explicit KernelTimeline(std::shared_ptr<const KernelLaunchResult> result);

  const KernelLaunchResult* result() const { return result_.get(); }
  const std::shared_ptr<const KernelLaunchResult>& sharedResult() const { return result_; }
  const std::vector<KernelAtom>& atoms() const { return atoms_; }
  std::int64_t atomCount() const { return static_cast<std::int64_t>(atoms_.size()); }

  /// Steps of `unit`: 1 (nothing ran yet) + the unit's boundaries in the trace.
  std::int64_t stepCount(KernelStepUnit unit) const;
  /// Atoms executed when step `step` of `unit` is shown (0 at step 0).
  std::int64_t executedAt(KernelStepUnit unit, std::int64_t step) const;
  /// The first step of `unit` at which at least `executed` atoms ran.
  std::int64_t stepAt(KernelStepUnit unit, std::int64_t executed) const;

  /// Barrier phases of the block (barriers + 1), and where each starts in atoms().
  int phaseCount() const { return static_cast<int>(phaseBegin_.size()); }
  std::int64_t phaseBegin(int phase) const { return phaseBegin_.at(std::size_t(phase)); }
  /// Tile of A and B whose products are taken in `phase`, else the tile staged in it
  /// (KernelGeometry::tileComputedIn, tileStagedIn: from the kernel's barriers per tile); -1
  /// for a phase that does neither (smem_tiled's last, which only stores C).
  int tileOfPhase(int phase) const;

  /// Index of the thread's first atom, and of its Store or Exit atom; -1 when not traced.
  std::int64_t threadFirstAtom(int thread) const;
  std::int64_t threadDoneAtom(int thread) const;
  /// Threads of the block inside C (the bounds check passes).
  int activeThreads() const;

  /// smem_tiled: the global element copied into As (bTile false) or Bs at (r, c) of `tile`:
  /// {row, col}; {-1, -1} when a zero was staged; {-2, -2} when not traced.
  std::pair<std::int32_t, std::int32_t> stagedSource(int tile, bool bTile, int r, int c) const;

  /// The multiply-add of KStep atom `index`, resolved to global elements through the trace.
  KernelProduct productAt(std::int64_t index) const;
  /// Every multiply-add `thread` performed, in order, from the trace.
  std::vector<KernelProduct> productsOf(int thread) const;

  /// The sentence for the state after `executed` atoms ran (describes atom executed - 1).
  QString narrate(std::int64_t executed) const;
  /// "thread (3,7) of block (0,0)".
  QString threadName(int thread) const;

  /// Events the cap left out of the trace (the animation stops where the trace does).
  std::uint64_t droppedEvents() const;

 private:
  struct Builder;
  QString narrateAtom(const KernelAtom& atom) const;
  QString narrateKStep(const KernelAtom& atom) const;
  QString narrateStage(const KernelAtom& atom) const;
  QString narrateEnd(const KernelAtom& atom) const;
  const std::vector<std::int64_t>& boundaries(KernelStepUnit unit) const;

  std::shared_ptr<const KernelLaunchResult> result_;
  std::vector<KernelAtom> atoms_;
  std::vector<std::int64_t> threadEnds_;  ///< unit Thread: executed atoms at each step
  std::vector<std::int64_t> phaseEnds_;   ///< unit BarrierPhase
  std::vector<std::int64_t> phaseBegin_;
  std::vector<std::int64_t> firstAtom_, doneAtom_;  ///< per thread
  std::vector<std::int64_t> staged_;  ///< [tile][A|B][TPB*TPB]: packed row<<32|col, -1, -2
};

}  // namespace matmulviz::ui

#pragma once
// The thread context of the simulator: what a kernel body calls for blockIdx, threadIdx,
// blockDim, gridDim, global and shared memory, FMAs and the block barrier, when it runs on the
// CPU. Every access is bounds-checked (a bad read gives 0, a bad write is dropped, both
// reported); shared accesses are race-checked between barriers; with kTrace every access is
// recorded. The GPU's context (kernels/cuda/device_context.cuh) has the same members.
//
// Hot paths are inline and call nothing: counters live in the context (registers, once
// inlined), the first fault of a thread is parked in the context and reported at the next
// barrier or at exit.

#include <atomic>
#include <cstdint>
#include <source_location>
#include <type_traits>

#include "core/sim/block_state.h"
#include "core/sim/views.h"

namespace matmulviz::sim {

template <bool kTrace>
class BasicSimContext {
 public:
  BasicSimContext(ThreadSlot& slot, BlockState& block)
      : slot_(&slot),
        block_(&block),
        threadIdx_(slot.threadIdx),
        blockIdx_(block.blockIdx),
        blockDim_(block.config.blockDim),
        gridDim_(block.config.gridDim),
        shared_(block.shared),
        sharedBytes_(block.config.sharedBytes),
        shadow_(block.shadow),
        me_(static_cast<std::int16_t>(slot.linear)) {
    setEpoch(block.epoch);
  }

  BasicSimContext(const BasicSimContext&) = delete;
  BasicSimContext& operator=(const BasicSimContext&) = delete;

  Dim3 threadIdx() const { return threadIdx_; }
  Dim3 blockIdx() const { return blockIdx_; }
  Dim3 blockDim() const { return blockDim_; }
  Dim3 gridDim() const { return gridDim_; }

  /// Base of the block's dynamic shared memory (`extern __shared__` on the GPU), sharedBytes
  /// long, filled with 0xFF bytes (NaN as float) at block start so uninitialised reads show.
  void* sharedMemory() const { return shared_; }

  /// acc + a * b, counted as one FMA (2 FLOPs).
  float fma(float a, float b, float acc) {
    ++c_.fmas;
    return a * b + acc;
  }

  // Global memory: load(view, i...) and store(view, i..., value), 1 to 3 coordinates.
  template <class T>
  std::remove_const_t<T> load(const GlobalView<T>& v, std::int64_t i0) {
    return globalLoad(v, 1, i0, 0, 0);
  }
  template <class T>
  std::remove_const_t<T> load(const GlobalView<T>& v, std::int64_t i0, std::int64_t i1) {
    return globalLoad(v, 2, i0, i1, 0);
  }
  template <class T>
  std::remove_const_t<T> load(const GlobalView<T>& v, std::int64_t i0, std::int64_t i1,
                              std::int64_t i2) {
    return globalLoad(v, 3, i0, i1, i2);
  }
  template <class T>
  void store(const GlobalView<T>& v, std::int64_t i0, std::type_identity_t<T> value) {
    globalStore(v, 1, i0, 0, 0, value);
  }
  template <class T>
  void store(const GlobalView<T>& v, std::int64_t i0, std::int64_t i1,
             std::type_identity_t<T> value) {
    globalStore(v, 2, i0, i1, 0, value);
  }
  template <class T>
  void store(const GlobalView<T>& v, std::int64_t i0, std::int64_t i1, std::int64_t i2,
             std::type_identity_t<T> value) {
    globalStore(v, 3, i0, i1, i2, value);
  }

  /// atomicAdd(&v[i0], value) on a 1-d view: adds `value` and returns the value before, in one
  /// indivisible step even while other blocks of the launch run on other host threads
  /// (std::atomic_ref). Counted and traced as one load and one store. Out of bounds: reported
  /// like a store, nothing added, 0 returned. What the returned value is depends on the order
  /// in which threads arrive: one host thread runs blocks in linear order and a block's threads
  /// in linear order, so a launch that uses it (kernel 08's scatter) runs on one host thread
  /// to stay reproducible.
  template <class T>
  T atomicAdd(const GlobalView<T>& v, std::int64_t i0, std::type_identity_t<T> value) {
    if (!inBounds(v, 1, i0, 0, 0)) [[unlikely]] {
      parkFault(*slot_, v.name, false, true, 1, i0, 0, 0, v.sizes, TileFault::None);
      ++c_.globalFaults;
      return T{};
    }
    ++c_.loads[sizeClass<T>()];
    ++c_.stores[sizeClass<T>()];
    if constexpr (kTrace) {
      record(TraceEventKind::GlobalLoad, v.id, i0, 0, 0);
      record(TraceEventKind::GlobalStore, v.id, i0, 0, 0);
    }
    return std::atomic_ref<T>(v.data[i0]).fetch_add(value, std::memory_order_relaxed);
  }

  // Shared memory: load(tile, row, col), store(tile, row, col, value).
  template <class T>
  T load(const SharedView<T>& v, std::int64_t r, std::int64_t c) {
    const std::size_t byte = sharedByte(v, r, c, false);
    if (byte == kFault) [[unlikely]]
      return T{};
    ShadowCell* cells = shadowOf<T>(byte);
    for (std::size_t w = 0; w < wordsOf<T>(); ++w) onSharedRead(cells[w], v, r, c);
    ++c_.sharedLoads;
    if constexpr (kTrace) record(TraceEventKind::SharedLoad, v.id, r, c, 0);
    return *reinterpret_cast<const T*>(shared_ + byte);
  }
  template <class T>
  void store(const SharedView<T>& v, std::int64_t r, std::int64_t c,
             std::type_identity_t<T> value) {
    const std::size_t byte = sharedByte(v, r, c, true);
    if (byte == kFault) [[unlikely]]
      return;
    ShadowCell* cells = shadowOf<T>(byte);
    for (std::size_t w = 0; w < wordsOf<T>(); ++w) onSharedWrite(cells[w], v, r, c);
    ++c_.sharedStores;
    if constexpr (kTrace) record(TraceEventKind::SharedStore, v.id, r, c, 0);
    *reinterpret_cast<T*>(shared_ + byte) = value;
  }

  /// __syncthreads(): waits until every thread of the block arrives here. Threads that exit or
  /// wait at another barrier are reported as barrier divergence and the block goes on.
  void syncthreads(std::source_location where = std::source_location::current()) {
    flushReports();  // the runner counts barrier waits
    if constexpr (kTrace) {
      record(TraceEventKind::Barrier, 0, static_cast<std::int64_t>(where.line()), 0, 0);
    }
    slot_->waitAtBarrier(where.file_name(), where.line());
    setEpoch(block_->epoch);
  }

  /// Called once by the launcher after the body returns: reports and merges counters.
  void finish() {
    flushReports();
    if constexpr (kTrace) {
      record(TraceEventKind::ThreadExit, 0, static_cast<std::int64_t>(c_.fmas), 0, 0);
    }
    LaunchCounters counters;
    for (int k = 0; k < 4; ++k) {
      counters.globalLoads += c_.loads[k];
      counters.globalStores += c_.stores[k];
      counters.globalLoadBytes += c_.loads[k] << k;
      counters.globalStoreBytes += c_.stores[k] << k;
    }
    const bool touchedGlobal = counters.globalLoads + counters.globalStores > 0;
    counters.activeThreads = touchedGlobal ? 1 : 0;
    counters.outOfBoundsOnlyThreads = !touchedGlobal && c_.globalFaults > 0 ? 1 : 0;
    counters.sharedLoads = c_.sharedLoads;
    counters.sharedStores = c_.sharedStores;
    counters.fmas = c_.fmas;
    block_->counters += counters;
  }

 private:
  template <class T>
  static constexpr std::size_t wordsOf() {
    return sizeof(T) < 4 ? 1 : sizeof(T) / 4;
  }

  /// What this thread did, merged into the block's LaunchCounters at exit. Global accesses are
  /// counted per element size (1, 2, 4, 8 bytes), so that a kernel with one element type keeps
  /// one counter per direction in a register rather than a count and a byte count.
  struct ThreadCounters {
    std::uint64_t loads[4] = {0, 0, 0, 0};
    std::uint64_t stores[4] = {0, 0, 0, 0};
    std::uint64_t sharedLoads = 0;
    std::uint64_t sharedStores = 0;
    std::uint64_t fmas = 0;
    std::uint64_t globalFaults = 0;  ///< out-of-bounds global accesses (reported, not done)
  };

  template <class T>
  static constexpr int sizeClass() {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "global views hold elements of 1, 2, 4 or 8 bytes");
    return sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
  }

  static bool outside(std::int64_t i, std::int64_t size) {
    return static_cast<std::uint64_t>(i) >= static_cast<std::uint64_t>(size);
  }

  template <class T>
  bool inBounds(const GlobalView<T>& v, int rank, std::int64_t i0, std::int64_t i1,
                std::int64_t i2) const {
    if (outside(i0, v.sizes[0])) return false;
    if (rank >= 2 && outside(i1, v.sizes[1])) return false;
    if (rank >= 3 && outside(i2, v.sizes[2])) return false;
    return rank == v.rank;
  }

  template <class T>
  std::int64_t offsetOf(const GlobalView<T>& v, int rank, std::int64_t i0, std::int64_t i1,
                        std::int64_t i2) const {
    return rank == 1 ? v.offset(i0) : rank == 2 ? v.offset(i0, i1) : v.offset(i0, i1, i2);
  }

  template <class T>
  std::remove_const_t<T> globalLoad(const GlobalView<T>& v, int rank, std::int64_t i0,
                                    std::int64_t i1, std::int64_t i2) {
    if (!inBounds(v, rank, i0, i1, i2)) [[unlikely]] {
      parkFault(*slot_, v.name, false, false, rank, i0, i1, i2, v.sizes, TileFault::None);
      ++c_.globalFaults;
      return std::remove_const_t<T>{};
    }
    ++c_.loads[sizeClass<T>()];
    if constexpr (kTrace) record(TraceEventKind::GlobalLoad, v.id, i0, i1, i2);
    return v.data[offsetOf(v, rank, i0, i1, i2)];
  }

  template <class T>
  void globalStore(const GlobalView<T>& v, int rank, std::int64_t i0, std::int64_t i1,
                   std::int64_t i2, T value) {
    if (!inBounds(v, rank, i0, i1, i2)) [[unlikely]] {
      parkFault(*slot_, v.name, false, true, rank, i0, i1, i2, v.sizes, TileFault::None);
      ++c_.globalFaults;
      return;
    }
    ++c_.stores[sizeClass<T>()];
    if constexpr (kTrace) record(TraceEventKind::GlobalStore, v.id, i0, i1, i2);
    v.data[offsetOf(v, rank, i0, i1, i2)] = value;
  }

  static constexpr std::size_t kFault = ~std::size_t{0};

  /// Byte offset of v[r, c] in the block's shared memory, or kFault (reported) when (r, c) is
  /// outside the tile or the tile does not lie inside the shared memory. The second test depends
  /// on the view only: folded into the row bound, it becomes a value the compiler computes once
  /// outside a kernel's loops, leaving one branch per access.
  template <class T>
  std::size_t sharedByte(const SharedView<T>& v, std::int64_t r, std::int64_t c, bool store) {
    const std::uintptr_t base =
        reinterpret_cast<std::uintptr_t>(v.data) - reinterpret_cast<std::uintptr_t>(shared_);
    // Arithmetic rather than && and ?: so that it stays a value the compiler hoists out of a
    // kernel's loops, not branches it repeats at every access.
    const bool aligned = (base & (alignof(T) - 1)) == 0;
    const bool tileInside =
        aligned & (base <= sharedBytes_) &
        (static_cast<std::uint64_t>(v.rows) * static_cast<std::uint64_t>(v.cols) * sizeof(T) <=
         sharedBytes_ - base);
    const std::int64_t rows = v.rows & -static_cast<std::int64_t>(tileInside);
    if (outside(r, rows) | outside(c, v.cols)) [[unlikely]] {
      const std::int64_t sizes[3] = {v.rows, v.cols, 1};
      const TileFault tile = tileInside ? TileFault::None
                             : aligned  ? TileFault::OutsideBuffer
                                        : TileFault::Misaligned;
      parkFault(*slot_, v.name, true, store, 2, r, c, 0, sizes, tile);
      return kFault;
    }
    return base + static_cast<std::size_t>(v.offset(r, c)) * sizeof(T);
  }

  /// The shadow cells of the element at `byte`: one per 4 bytes. Elements of 4 bytes or more are
  /// aligned (sharedByte checks it), so byte / 4 cells of 8 bytes start at byte * 2.
  template <class T>
  ShadowCell* shadowOf(std::size_t byte) const {
    if constexpr (alignof(T) >= 4) {
      return reinterpret_cast<ShadowCell*>(reinterpret_cast<std::byte*>(shadow_) + byte * 2);
    } else {
      return shadow_ + (byte >> 2);
    }
  }

  template <class T>
  void onSharedRead(ShadowCell& cell, const SharedView<T>& v, std::int64_t r, std::int64_t c) {
    if (cell.bits == readMany_) [[likely]]
      return;  // nobody wrote it this epoch and several threads read it: nothing to record
    if (cell.epoch() != epoch_) {
      cell.bits = ShadowCell::pack(epoch_, ShadowCell::kNone, me_);  // first read this epoch
      return;
    }
    const std::int16_t writer = cell.writer();
    std::int16_t reader = cell.reader();
    if (writer >= 0 && writer != me_) [[unlikely]]
      parkRace(*slot_, RaceKind::ReadAfterWrite, v.name, r, c, writer);
    if (reader != me_) reader = reader == ShadowCell::kNone ? me_ : ShadowCell::kMany;
    cell.bits = ShadowCell::pack(epoch_, writer, reader);
  }

  template <class T>
  void onSharedWrite(ShadowCell& cell, const SharedView<T>& v, std::int64_t r, std::int64_t c) {
    const std::uint64_t bits = cell.bits;
    if (bits == writeMine_) [[likely]]
      return;
    if (cell.epoch() != epoch_) {
      cell.bits = writeMine_;
      return;
    }
    const std::int16_t writer = cell.writer();
    const std::int16_t reader = cell.reader();
    if (writer >= 0 && writer != me_) [[unlikely]] {
      parkRace(*slot_, RaceKind::WriteAfterWrite, v.name, r, c, writer);
    } else if (reader == ShadowCell::kMany || (reader >= 0 && reader != me_)) [[unlikely]] {
      parkRace(*slot_, RaceKind::WriteAfterRead, v.name, r, c, reader);
    }
    cell.bits = ShadowCell::pack(epoch_, me_, reader);
  }

  void setEpoch(std::uint32_t epoch) {
    epoch_ = epoch;
    readMany_ = ShadowCell::pack(epoch, ShadowCell::kNone, ShadowCell::kMany);
    writeMine_ = ShadowCell::pack(epoch, me_, ShadowCell::kNone);
  }

  // The cold paths write to the thread's slot, never to the context.
  [[gnu::cold, gnu::noinline]] static void parkFault(ThreadSlot& slot, const char* array,
                                                     bool shared, bool store, int rank,
                                                     std::int64_t i0, std::int64_t i1,
                                                     std::int64_t i2, const std::int64_t* sizes,
                                                     TileFault tile) {
    PendingFault& fault = slot.fault;
    slot.reportsPending = true;
    if (fault.count++ == 0) {
      fault.shared = shared;
      fault.store = store;
      fault.tile = tile;
      fault.array = array;
      fault.rank = rank;
      fault.index[0] = i0;
      fault.index[1] = i1;
      fault.index[2] = i2;
      for (int d = 0; d < 3; ++d) fault.sizes[d] = sizes[d];
    }
  }

  [[gnu::cold, gnu::noinline]] static void parkRace(ThreadSlot& slot, RaceKind kind,
                                                    const char* array, std::int64_t r,
                                                    std::int64_t c, int other) {
    slot.reportsPending = true;
    if (slot.race.count++ == 0) slot.race = PendingRace{1, kind, array, r, c, other};
  }

  [[gnu::cold, gnu::noinline]] static void flushSlow(ThreadSlot& slot, BlockState& block,
                                                     Dim3 blockIdx, Dim3 threadIdx, Dim3 blockDim) {
    slot.reportsPending = false;
    if (slot.fault.count != 0) {
      block.diagnostics->outOfBounds(blockIdx, threadIdx, slot.fault);
      slot.fault.count = 0;
    }
    if (slot.race.count != 0) {
      block.diagnostics->race(blockIdx, threadIdx, blockDim, slot.race);
      slot.race.count = 0;
    }
  }

  // Arguments to out-of-line calls are copies or live in the slot: the context's address must
  // never escape, so that the compiler keeps its counters in registers across a kernel's loops.
  void flushReports() {
    if (slot_->reportsPending) [[unlikely]]
      flushSlow(*slot_, *block_, blockIdx_, threadIdx_, blockDim_);
  }

  void record(TraceEventKind kind, int array, std::int64_t i0, std::int64_t i1, std::int64_t i2) {
    if (block_->trace == nullptr) return;
    TraceEvent e;
    e.block = static_cast<std::uint32_t>(block_->blockLinear);
    e.thread = static_cast<std::uint16_t>(slot_->linear);
    e.kind = kind;
    e.array = static_cast<std::uint8_t>(array);
    e.index[0] = static_cast<std::int32_t>(i0);
    e.index[1] = static_cast<std::int32_t>(i1);
    e.index[2] = static_cast<std::int32_t>(i2);
    block_->trace->push(e);
  }

  ThreadSlot* slot_;
  BlockState* block_;
  Dim3 threadIdx_;
  Dim3 blockIdx_;
  Dim3 blockDim_;
  Dim3 gridDim_;
  std::byte* shared_;
  std::size_t sharedBytes_;
  ShadowCell* shadow_;
  std::int16_t me_;
  std::uint32_t epoch_ = 0;
  std::uint64_t readMany_ = 0;   // shadow of a word read by several threads, no writer
  std::uint64_t writeMine_ = 0;  // shadow of a word written by this thread only, unread
  ThreadCounters c_;
};

/// The context of an untraced thread and of a traced one (every access recorded).
using SimThreadContext = BasicSimContext<false>;
using TracingSimContext = BasicSimContext<true>;

}  // namespace matmulviz::sim

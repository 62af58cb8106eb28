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

  // Shared memory: load(tile, row, col), store(tile, row, col, value).
  template <class T>
  T load(const SharedView<T>& v, std::int64_t r, std::int64_t c) {
    const std::size_t byte = sharedByte(v, r, c, false);
    if (byte == kFault) [[unlikely]]
      return T{};
    for (std::size_t w = 0; w < wordsOf<T>(); ++w) onSharedRead(shadow_[(byte >> 2) + w], v, r, c);
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
    for (std::size_t w = 0; w < wordsOf<T>(); ++w) onSharedWrite(shadow_[(byte >> 2) + w], v, r, c);
    ++c_.sharedStores;
    if constexpr (kTrace) record(TraceEventKind::SharedStore, v.id, r, c, 0);
    *reinterpret_cast<T*>(shared_ + byte) = value;
  }

  /// __syncthreads(): waits until every thread of the block arrives here. Threads that exit or
  /// wait at another barrier are reported as barrier divergence and the block goes on.
  void syncthreads(std::source_location where = std::source_location::current()) {
    flushReports();
    ++c_.barrierWaits;
    if constexpr (kTrace) {
      record(TraceEventKind::Barrier, 0, static_cast<std::int64_t>(where.line()), 0, 0);
    }
    slot_->waitAtBarrier(where.file_name(), where.line());
    setEpoch(block_->epoch);
  }

  /// Called once by the launcher after the body returns: reports and merges counters.
  void finish() {
    flushReports();
    if (c_.globalLoads + c_.globalStores > 0) c_.activeThreads = 1;
    if constexpr (kTrace) {
      record(TraceEventKind::ThreadExit, 0, static_cast<std::int64_t>(c_.fmas), 0, 0);
    }
    const LaunchCounters counters = c_;
    block_->counters += counters;
  }

 private:
  template <class T>
  static constexpr std::size_t wordsOf() {
    return sizeof(T) < 4 ? 1 : sizeof(T) / 4;
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
      parkFault(slot_->fault, v.name, false, false, rank, i0, i1, i2, v.sizes, false);
      return std::remove_const_t<T>{};
    }
    ++c_.globalLoads;
    c_.globalLoadBytes += sizeof(T);
    if constexpr (kTrace) record(TraceEventKind::GlobalLoad, v.id, i0, i1, i2);
    return v.data[offsetOf(v, rank, i0, i1, i2)];
  }

  template <class T>
  void globalStore(const GlobalView<T>& v, int rank, std::int64_t i0, std::int64_t i1,
                   std::int64_t i2, T value) {
    if (!inBounds(v, rank, i0, i1, i2)) [[unlikely]] {
      parkFault(slot_->fault, v.name, false, true, rank, i0, i1, i2, v.sizes, false);
      return;
    }
    ++c_.globalStores;
    c_.globalStoreBytes += sizeof(T);
    if constexpr (kTrace) record(TraceEventKind::GlobalStore, v.id, i0, i1, i2);
    v.data[offsetOf(v, rank, i0, i1, i2)] = value;
  }

  static constexpr std::size_t kFault = ~std::size_t{0};

  /// Byte offset of v[r, c] in the block's shared memory, or kFault (reported) when (r, c) is
  /// outside the tile or the tile does not lie inside the shared memory. The second test
  /// depends on the view only, so the compiler hoists it out of a kernel's loops.
  template <class T>
  std::size_t sharedByte(const SharedView<T>& v, std::int64_t r, std::int64_t c, bool store) {
    const std::uintptr_t base =
        reinterpret_cast<std::uintptr_t>(v.data) - reinterpret_cast<std::uintptr_t>(shared_);
    const bool tileInside =
        base <= sharedBytes_ &&
        static_cast<std::uint64_t>(v.rows) * static_cast<std::uint64_t>(v.cols) * sizeof(T) <=
            sharedBytes_ - base;
    if (outside(r, v.rows) || outside(c, v.cols) || !tileInside) [[unlikely]] {
      const std::int64_t sizes[3] = {v.rows, v.cols, 1};
      parkFault(slot_->fault, v.name, true, store, 2, r, c, 0, sizes, !tileInside);
      return kFault;
    }
    return base + static_cast<std::size_t>(v.offset(r, c)) * sizeof(T);
  }

  template <class T>
  void onSharedRead(ShadowCell& cell, const SharedView<T>& v, std::int64_t r, std::int64_t c) {
    const std::uint64_t bits = cell.bits;
    if (bits == readMany_ || bits == readMine_) [[likely]]
      return;  // nobody wrote it this epoch; already read by several threads, or by this one
    if (cell.epoch() != epoch_) {
      cell.bits = readMine_;
      return;
    }
    const std::int16_t writer = cell.writer();
    std::int16_t reader = cell.reader();
    if (writer >= 0 && writer != me_) [[unlikely]]
      parkRace(slot_->race, RaceKind::ReadAfterWrite, v.name, r, c, writer);
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
      parkRace(slot_->race, RaceKind::WriteAfterWrite, v.name, r, c, writer);
    } else if (reader == ShadowCell::kMany || (reader >= 0 && reader != me_)) [[unlikely]] {
      parkRace(slot_->race, RaceKind::WriteAfterRead, v.name, r, c, reader);
    }
    cell.bits = ShadowCell::pack(epoch_, me_, reader);
  }

  void setEpoch(std::uint32_t epoch) {
    epoch_ = epoch;
    readMany_ = ShadowCell::pack(epoch, ShadowCell::kNone, ShadowCell::kMany);
    readMine_ = ShadowCell::pack(epoch, ShadowCell::kNone, me_);
    writeMine_ = ShadowCell::pack(epoch, me_, ShadowCell::kNone);
  }

  // The cold paths write to the thread's slot, never to the context.
  [[gnu::cold, gnu::noinline]] static void parkFault(PendingFault& fault, const char* array,
                                                     bool shared, bool store, int rank,
                                                     std::int64_t i0, std::int64_t i1,
                                                     std::int64_t i2, const std::int64_t* sizes,
                                                     bool outsideBuffer) {
    if (fault.count++ == 0) {
      fault.shared = shared;
      fault.store = store;
      fault.outsideBuffer = outsideBuffer;
      fault.array = array;
      fault.rank = rank;
      fault.index[0] = i0;
      fault.index[1] = i1;
      fault.index[2] = i2;
      for (int d = 0; d < 3; ++d) fault.sizes[d] = sizes[d];
    }
  }

  [[gnu::cold, gnu::noinline]] static void parkRace(PendingRace& race, RaceKind kind,
                                                    const char* array, std::int64_t r,
                                                    std::int64_t c, int other) {
    if (race.count++ == 0) race = PendingRace{1, kind, array, r, c, other};
  }

  // Arguments to out-of-line calls are copies or live in the slot: the context's address must
  // never escape, so that the compiler keeps its counters in registers across a kernel's loops.
  void flushReports() {
    ThreadSlot& slot = *slot_;
    if (slot.fault.count != 0) [[unlikely]] {
      block_->diagnostics->outOfBounds(Dim3(blockIdx_), Dim3(threadIdx_), slot.fault);
      slot.fault.count = 0;
    }
    if (slot.race.count != 0) [[unlikely]] {
      block_->diagnostics->race(Dim3(blockIdx_), Dim3(threadIdx_), Dim3(blockDim_), slot.race);
      slot.race.count = 0;
    }
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
  std::uint64_t readMine_ = 0;   // shadow of a word read by this thread only, no writer
  std::uint64_t writeMine_ = 0;  // shadow of a word written by this thread only, unread
  LaunchCounters c_;
};

/// The context of an untraced thread and of a traced one (every access recorded).
using SimThreadContext = BasicSimContext<false>;
using TracingSimContext = BasicSimContext<true>;

}  // namespace matmulviz::sim

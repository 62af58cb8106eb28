#pragma once
// Writes large PyTorch memory snapshots (torch.cuda.memory._dump_snapshot) for tests and
// benchmarks, byte for byte as Python's pickler (protocol 4) lays out such a dict: every
// container and every new string memoized, repeated keys, actions and frame lists as memo gets.
// Python takes minutes and gigabytes to pickle ten million dicts; this takes seconds.
//
// The trace: `events` entries, alloc/free_completed pairs of a training-like loop (a few
// persistent blocks, then iterations whose forward allocates activations that the backward
// frees in reverse), sizes from 512 B to 64 MiB rounded as the caching allocator rounds them,
// times 1 us apart plus jitter, `stacks` distinct frame lists drawn from `stacks` * 2 / 3
// frames. Deterministic for a given seed.

#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace matmulviz::testing {

struct GeneratedSnapshot {
  uint64_t events = 0;
  uint64_t bytes = 0;
};

class SnapshotGenerator {
 public:
  /// Writes the snapshot to `path` (bytes). Throws std::runtime_error when it cannot be written.
  static GeneratedSnapshot write(const std::string& path, uint64_t events, int stacks = 3000,
                                 uint32_t seed = 1) {
    SnapshotGenerator g(stacks, seed);
    g.root(events);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    const bool ok = std::fwrite(g.out_.data(), 1, g.out_.size(), f) == g.out_.size();
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error("cannot write " + path);
    return {g.events_, g.out_.size()};
  }

 private:
  SnapshotGenerator(int stacks, uint32_t seed) : rng_(seed), stackCount_(stacks) {}

  std::vector<uint8_t> out_;
  std::mt19937_64 rng_;
  int stackCount_;
  uint64_t memo_ = 0;
  uint64_t events_ = 0;
  int64_t time_ = 1'700'000'000'000'000;
  std::unordered_map<std::string, uint64_t> strings_;
  std::vector<int64_t> stackMemo_;  // memo index of each stack's list, -1 before first use
  std::vector<int64_t> frameMemo_;

  void op(uint8_t b) { out_.push_back(b); }
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void memoize() {
    op(0x94);
    ++memo_;
  }
  void get(uint64_t index) {
    if (index < 256) {
      op('h');
      le(index, 1);
    } else {
      op('j');
      le(index, 4);
    }
  }
  void str(const std::string& s) {
    if (const auto it = strings_.find(s); it != strings_.end()) return get(it->second);
    if (s.size() < 256) {
      op(0x8c);
      le(s.size(), 1);
    } else {
      op('X');
      le(s.size(), 4);
    }
    out_.insert(out_.end(), s.begin(), s.end());
    strings_[s] = memo_;
    memoize();
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      op('K');
      le(uint64_t(v), 1);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      le(uint64_t(v), 4);
    } else {
      int n = 1;
      while (n < 8 && !(v >> (8 * n - 1) == 0 || v >> (8 * n - 1) == -1)) ++n;
      op(0x8a);
      le(n, 1);
      le(uint64_t(v), n);
    }
  }

  void frame(int id) {
    if (frameMemo_[id] >= 0) return get(uint64_t(frameMemo_[id]));
    op('}');
    frameMemo_[id] = int64_t(memo_);
    memoize();
    op('(');
    str("filename");
    str("/src/model/layer" + std::to_string(id % 97) + ".py");
    str("line");
    integer(10 + id % 400);
    str("name");
    str("fn" + std::to_string(id));
    op('u');
  }

  void stack(int id) {
    if (stackMemo_[id] >= 0) return get(uint64_t(stackMemo_[id]));
    op(']');
    stackMemo_[id] = int64_t(memo_);
    memoize();
    op('(');
    const int frames = int(frameMemo_.size());
    for (int k = 0; k < 3 + id % 4; ++k) frame((id * 7 + k * 131) % frames);
    op('e');
  }

  void event(const char* action, int64_t addr, int64_t size, int stackId) {
    op('}');
    memoize();
    op('(');
    str("action");
    str(action);
    str("addr");
    integer(addr);
    str("size");
    integer(size);
    str("stream");
    integer(0);
    str("time_us");
    time_ += 1 + int64_t(rng_() % 3);
    integer(time_);
    str("frames");
    stack(stackId);
    op('u');
    ++events_;
  }

  void root(uint64_t events);
  void trace(uint64_t events);
};

inline void SnapshotGenerator::root(uint64_t events) {
  stackMemo_.assign(size_t(stackCount_), -1);
  frameMemo_.assign(size_t(std::max(1, stackCount_ * 2 / 3)), -1);
  op(0x80);
  op(4);
  op('}');
  memoize();
  op('(');
  str("segments");
  op(']');  // one segment, nothing active at the snapshot (every block of the trace was freed)
  memoize();
  op('}');
  memoize();
  op('(');
  for (const char* k : {"device", "address", "total_size", "allocated_size", "active_size",
                        "requested_size", "stream"}) {
    str(k);
    integer(std::string(k) == "total_size" ? int64_t{2} << 30 : 0);
  }
  str("segment_type");
  str("large");
  str("blocks");
  op(']');
  memoize();
  op('u');
  op('a');
  str("device_traces");
  op(']');
  memoize();
  op(']');
  memoize();
  trace(events);
  op('a');
  op('u');
  op('.');
}

inline void SnapshotGenerator::trace(uint64_t events) {
  std::vector<std::pair<int64_t, int64_t>> live;  // (addr, size), freed in reverse
  uint64_t next = 0, inBatch = 0;
  auto alloc = [&](int64_t size) {
    const int64_t addr =
        int64_t{0x7f0000000000} + int64_t(next++ % (1u << 20)) * (int64_t{1} << 27);
    live.push_back({addr, size});
    return addr;
  };
  auto begin = [&] {  // APPENDS of 1000 items, as Python's pickler batches them
    if (inBatch++ == 0) op('(');
  };
  auto end = [&] {
    if (inBatch == 1000) {
      op('e');
      inBatch = 0;
    }
  };
  std::uniform_int_distribution<int> pick(0, stackCount_ - 1);
  std::lognormal_distribution<double> sizeDist(13.0, 2.2);  // median ~ 440 KiB
  uint64_t written = 0;
  while (written + 2 <= events) {
    const uint64_t depth = std::min<uint64_t>((events - written) / 2, 20 + rng_() % 200);
    for (uint64_t k = 0; k < depth; ++k) {
      int64_t size = std::min<int64_t>(int64_t(sizeDist(rng_)), int64_t{64} << 20);
      size = size < (1 << 20) ? (size + 511) / 512 * 512
                              : (size + (2 << 20) - 1) / (2 << 20) * (2 << 20);
      begin();
      size = std::max<int64_t>(size, 512);
      event("alloc", alloc(size), size, pick(rng_));
      end();
    }
    for (uint64_t k = 0; k < depth; ++k) {
      const auto [addr, size] = live.back();
      live.pop_back();
      begin();
      event("free_completed", addr, size, pick(rng_));
      end();
    }
    written += 2 * depth;
  }
  if (inBatch) op('e');
}

}  // namespace matmulviz::testing

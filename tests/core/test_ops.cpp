// Every op of the engine, forward and backward, against float64 references written with plain
// loops (op_check.h): values on the host, the same values and gradients on a cpu device (whose
// allocator must be back to zero afterwards), sizes and dtypes on the meta device, gradients by
// finite differences, and float32/float16/bfloat16 products against the float64 reference.

#include "core/memory/host_backing.h"
#include "core/ops/ops.h"
#include "op_check.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

using RefFn = std::function<Ref(const std::vector<Ref>&)>;

/// One row: the float inputs (random contiguous leaves of `shapes`), which of them require grad
/// (empty: all), the op on the engine and its float64 reference on plain arrays.
struct OpCase {
  std::vector<Shape> shapes;
  OpFn op;
  RefFn ref;
  std::vector<bool> grad;
};

}  // namespace

Q_DECLARE_METATYPE(OpCase)
Q_DECLARE_METATYPE(matmulviz::DType)

namespace {

// ---- float64 references: index arithmetic only, no engine code ----

/// Python's slice(start, end, step).indices(n) for step > 0: (start, length).
std::pair<int64_t, int64_t> pySlice(int64_t n, int64_t start, int64_t end, int64_t step) {
  auto clampIndex = [n](int64_t i) {
    if (i < 0) i += n;
    return std::clamp<int64_t>(i, 0, n);
  };
  start = clampIndex(start);
  end = clampIndex(end);
  const int64_t length = end > start ? (end - start + step - 1) / step : 0;
  return {start, length};
}

Ref refSlice(const Ref& in, int64_t dim, int64_t start, int64_t end, int64_t step) {
  const auto d = static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(in.sizes.size()) : dim);
  const auto [first, length] = pySlice(in.sizes[d], start, end, step);
  Shape sizes = in.sizes;
  sizes[d] = length;
  return refGather(in, sizes, [d, first = first, step](Shape i) {
    i[d] = first + i[d] * step;
    return i;
  });
}

Ref refSelect(const Ref& in, int64_t dim, int64_t index) {
  const auto d = static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(in.sizes.size()) : dim);
  if (index < 0) index += in.sizes[d];
  Shape sizes = in.sizes;
  sizes.erase(sizes.begin() + static_cast<int64_t>(d));
  return refGather(in, sizes, [d, index](Shape i) {
    i.insert(i.begin() + static_cast<int64_t>(d), index);
    return i;
  });
}

Ref refPermute(const Ref& in, std::vector<int64_t> dims) {
  const auto n = static_cast<int64_t>(dims.size());
  for (int64_t& d : dims) d = d < 0 ? d + n : d;
  Shape sizes(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) sizes[i] = in.sizes[dims[i]];
  return refGather(in, sizes, [dims](const Shape& i) {
    Shape j(dims.size());
    for (size_t k = 0; k < dims.size(); ++k) j[dims[k]] = i[k];
    return j;
  });
}

Ref refTranspose(const Ref& in, int64_t d0, int64_t d1) {
  const auto n = static_cast<int64_t>(in.sizes.size());
  std::vector<int64_t> dims(in.sizes.size());
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[d0 < 0 ? d0 + n : d0], dims[d1 < 0 ? d1 + n : d1]);
  return refPermute(in, dims);
}

/// Broadcasting as NumPy: right-aligned, size-1 dims repeat.
Ref refExpand(const Ref& in, Shape sizes) {
  const size_t lead = sizes.size() - in.sizes.size();
  for (size_t i = lead; i < sizes.size(); ++i)
    if (sizes[i] == -1) sizes[i] = in.sizes[i - lead];
  return refGather(in, sizes, [&in, lead](const Shape& i) {
    Shape j(in.sizes.size());
    for (size_t k = 0; k < j.size(); ++k) j[k] = in.sizes[k] == 1 ? 0 : i[k + lead];
    return j;
  });
}

Ref refIndex(const Ref& in, const Shape& qSizes, const std::vector<int64_t>& q) {
  Shape sizes = qSizes;
  sizes.insert(sizes.end(), in.sizes.begin() + 1, in.sizes.end());
  const size_t qDims = qSizes.size();
  return refGather(in, sizes, [&](const Shape& i) {
    int64_t flat = 0;
    for (size_t d = 0; d < qDims; ++d) flat = flat * qSizes[d] + i[d];
    int64_t row = q[static_cast<size_t>(flat)];
    if (row < 0) row += in.sizes[0];
    Shape j{row};
    j.insert(j.end(), i.begin() + static_cast<int64_t>(qDims), i.end());
    return j;
  });
}

Ref refAdd(const Ref& a, const Ref& b) {
  Ref out = a;
  for (size_t i = 0; i < out.values.size(); ++i) out.values[i] += b.values[i];
  return out;
}

Ref refSum(const Ref& a) {
  return {{}, {std::accumulate(a.values.begin(), a.values.end(), 0.0)}};
}

/// torch.matmul's semantics (NumPy's): 1-d operands get a dim that is removed afterwards, batch
/// dims broadcast, out[b] = a[b] @ c[b] with a plain triple loop.
Ref refMatmul(Ref a, Ref b) {
  const bool aVector = a.sizes.size() == 1, bVector = b.sizes.size() == 1;
  if (aVector) a.sizes.insert(a.sizes.begin(), 1);
  if (bVector) b.sizes.push_back(1);
  const Shape batchA(a.sizes.begin(), a.sizes.end() - 2),
      batchB(b.sizes.begin(), b.sizes.end() - 2);
  const size_t nb = std::max(batchA.size(), batchB.size());
  Shape batch(nb);
  for (size_t i = 0; i < nb; ++i) {
    const int64_t da = i + batchA.size() < nb ? 1 : batchA[i + batchA.size() - nb];
    const int64_t db = i + batchB.size() < nb ? 1 : batchB[i + batchB.size() - nb];
    batch[i] = da == 1 ? db : da;
  }
  const int64_t n = a.sizes[a.sizes.size() - 2], k = a.sizes.back(), p = b.sizes.back();
  Shape sizes = batch;
  sizes.insert(sizes.end(), {n, p});
  auto operandIndex = [nb](const Shape& outIdx, const Shape& opBatch, int64_t r, int64_t c) {
    Shape j;
    for (size_t d = 0; d < opBatch.size(); ++d)
      j.push_back(opBatch[d] == 1 ? 0 : outIdx[d + nb - opBatch.size()]);
    j.push_back(r);
    j.push_back(c);
    return j;
  };
  Ref out{sizes, std::vector<double>(static_cast<size_t>(numelOf(sizes)))};
  for (int64_t f = 0; f < out.numel(); ++f) {
    Shape idx(sizes.size());
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1, rest = f; d >= 0; --d) {
      idx[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    const int64_t i = idx[nb], j = idx[nb + 1];
    double acc = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      acc += a.at(operandIndex(idx, batchA, i, kk)) * b.at(operandIndex(idx, batchB, kk, j));
    out.values[f] = acc;
  }
  if (aVector) out.sizes.erase(out.sizes.end() - 2);
  if (bVector) out.sizes.pop_back();
  return out;
}

Ref refCat(const std::vector<Ref>& ins, int64_t dim) {
  const auto d =
      static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(ins[0].sizes.size()) : dim);
  Shape sizes = ins[0].sizes;
  sizes[d] = 0;
  for (const Ref& r : ins) sizes[d] += r.sizes[d];
  Ref out{sizes, {}};
  for (int64_t f = 0; f < numelOf(sizes); ++f) {
    Shape idx(sizes.size());
    for (int64_t e = static_cast<int64_t>(sizes.size()) - 1, rest = f; e >= 0; --e) {
      idx[e] = rest % sizes[e];
      rest /= sizes[e];
    }
    size_t which = 0;
    while (idx[d] >= ins[which].sizes[d]) idx[d] -= ins[which++].sizes[d];
    out.values.push_back(ins[which].at(idx));
  }
  return out;
}

/// out[n] = a[n] @ c[q[n]] with plain loops: a [N, I, J], c [M, J, K].
Ref refGatherBmm(const Ref& a, const Ref& c, const std::vector<int64_t>& q) {
  const int64_t N = a.sizes[0], I = a.sizes[1], J = a.sizes[2], K = c.sizes[2];
  Ref out{{N, I, K}, std::vector<double>(static_cast<size_t>(N * I * K))};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t k = 0; k < K; ++k) {
        double acc = 0;
        for (int64_t j = 0; j < J; ++j) acc += a.at({n, i, j}) * c.at({q[n], j, k});
        out.values[(n * I + i) * K + k] = acc;
      }
  return out;
}

double maxAbs(const Ref& r) {
  double m = 0;
  for (double v : r.values) m = std::max(m, std::abs(v));
  return m;
}

// ---- running a row ----

uint64_t rowSeed() {
  return qHash(QByteArray(QTest::currentDataTag()));
}

HostBacking& hostBacking() {
  static HostBacking backing(int64_t{1} << 30);  // 1 GiB of address space: small tensors only
  return backing;
}

DevicePtr makeDevice(DeviceKind kind) {
  static MetaBacking meta;
  SegmentBacking& backing = kind == DeviceKind::Meta ? static_cast<SegmentBacking&>(meta)
                                                     : static_cast<SegmentBacking&>(hostBacking());
  return std::make_shared<DeviceContext>(kind, backing, CachingAllocator::Options{});
}

std::vector<Tensor> makeInputs(const OpCase& c, DType dtype, const DevicePtr& device, uint64_t seed,
                               bool withGrad) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    std::string label = "x";  // not "x" + to_string(i): GCC 12 warns falsely (-Wrestrict)
    label += std::to_string(i);
    Tensor x = randomTensor(c.shapes[i], dtype, seed + i, device, label);
    if (withGrad && (c.grad.empty() || c.grad[i])) x.setRequiresGrad(true);
    xs.push_back(x);
  }
  return xs;
}

std::vector<Ref> refsOf(const std::vector<Tensor>& xs) {
  std::vector<Ref> refs;
  for (const Tensor& x : xs) refs.push_back(toRef(x));
  return refs;
}

/// The forward on the host against the reference, the gradients by finite differences, the
/// same forward and backward on a cpu device (equal results, allocator back to 0 bytes after),
/// and sizes on the meta device.
void runCase(const OpCase& c) {
  const uint64_t seed = rowSeed();
  const Tolerance exact{1e-12, 1e-12};
  const std::vector<Tensor> xs = makeInputs(c, DType::Float64, nullptr, seed, true);
  const Ref want = c.ref(refsOf(xs));
  OPCHECK(checkTensor(c.op(xs), want, DType::Float64, exact, "forward (host)"));
  OPCHECK(checkGradients(c.op, xs, seed + 1000));

  const DevicePtr cpu = makeDevice(DeviceKind::Cpu);
  {
    const std::vector<Tensor> ds = makeInputs(c, DType::Float64, cpu, seed, true);
    const Tensor out = c.op(ds);
    QCOMPARE(out.deviceKind(), DeviceKind::Cpu);
    OPCHECK(checkTensor(out, want, DType::Float64, exact, "forward (cpu device)"));
    if (out.requiresGrad()) {
      out.backward(
          tensorOn(out.sizes(), randomValues(out.numel(), seed + 1000), DType::Float64, cpu, "g"));
      for (size_t i = 0; i < ds.size(); ++i) {
        if (!ds[i].requiresGrad() || !xs[i].grad().defined()) continue;
        QVERIFY2(ds[i].grad().defined(), "no gradient on the cpu device");
        QCOMPARE(ds[i].grad().deviceKind(), DeviceKind::Cpu);
        OPCHECK(checkTensor(ds[i].grad(), toRef(xs[i].grad()), DType::Float64, exact,
                            "gradient (cpu device) of input " + std::to_string(i)));
      }
    }
  }
  // Everything but the cuBLAS workspaces, which PyTorch 2.x keeps for the life of the process.
  int64_t leftBytes = 0;
  for (const AllocationRecord* r : cpu->allocator().liveRecords())
    if (r->category != MemoryCategory::CublasWorkspace) leftBytes += r->blockBytes;
  QVERIFY2(leftBytes == 0, "cpu device: memory still allocated after every tensor was dropped");

  const DevicePtr meta = makeDevice(DeviceKind::Meta);
  const std::vector<Tensor> ms = makeInputs(c, DType::Float64, meta, seed, true);
  const Tensor out = c.op(ms);
  QCOMPARE(out.sizes(), want.sizes);
  QVERIFY(!out.hasData());
}

/// A product computed in `dtype` from inputs rounded to `dtype`, against the float64 reference
/// of the rounded inputs, with productTolerance(dtype).
void runDtypeCase(const OpCase& c, DType dtype) {
  const std::vector<Tensor> xs = makeInputs(c, dtype, nullptr, rowSeed(), false);
  const Ref want = c.ref(refsOf(xs));
  OPCHECK(checkTensor(c.op(xs), want, dtype, productTolerance(dtype, maxAbs(want)),
                      std::string("forward in ") + std::string(dtypeName(dtype))));
}

/// Set while productDtypes_data() adds rows: row() then fills its dtype column too.
std::optional<DType> rowDType;

void row(const char* name, std::vector<Shape> shapes, OpFn op, RefFn ref,
         std::vector<bool> grad = {}) {
  auto& r = QTest::newRow(name) << OpCase{std::move(shapes), std::move(op), std::move(ref),
                                          std::move(grad)};
  if (rowDType) r << *rowDType;
}

// The rows of the products, shared by the float64 suites and the dtype table.
void mmRows(const char* prefix = "") {
  auto name = [prefix](const char* n) { return (std::string(prefix) + n); };
  auto mmRef = [](const std::vector<Ref>& r) { return refMatmul(r[0], r[1]); };
  auto mmOp = [](const std::vector<Tensor>& x) { return mm(x[0], x[1]); };
  row(name("mm [3,5]@[5,7]").c_str(), {{3, 5}, {5, 7}}, mmOp, mmRef);
  row(name("mm [1,1]@[1,1]").c_str(), {{1, 1}, {1, 1}}, mmOp, mmRef);
  row(name("mm outer [7,1]@[1,3]").c_str(), {{7, 1}, {1, 3}}, mmOp, mmRef);
  row(name("mm K=37 [3,37]@[37,5]").c_str(), {{3, 37}, {37, 5}}, mmOp, mmRef);
  row(
      name("mm transposed operands").c_str(), {{5, 3}, {7, 5}},
      [](const std::vector<Tensor>& x) { return mm(transpose(x[0], 0, 1), transpose(x[1], 0, 1)); },
      [](const std::vector<Ref>& r) {
        return refMatmul(refTranspose(r[0], 0, 1), refTranspose(r[1], 0, 1));
      });
  row(
      name("mm step-2 slice operand (copied for BLAS)").c_str(), {{3, 9}, {5, 2}},
      [](const std::vector<Tensor>& x) { return mm(slice(x[0], 1, 0, 9, 2), x[1]); },
      [](const std::vector<Ref>& r) { return refMatmul(refSlice(r[0], 1, 0, 9, 2), r[1]); });
}

void bmmRows(const char* prefix = "") {
  auto name = [prefix](const char* n) { return (std::string(prefix) + n); };
  auto ref = [](const std::vector<Ref>& r) { return refMatmul(r[0], r[1]); };
  auto op = [](const std::vector<Tensor>& x) { return bmm(x[0], x[1]); };
  row(name("bmm [2,3,5]@[2,5,7]").c_str(), {{2, 3, 5}, {2, 5, 7}}, op, ref);
  row(name("bmm [1,1,1]@[1,1,1]").c_str(), {{1, 1, 1}, {1, 1, 1}}, op, ref);
  row(name("bmm K=29 [3,2,29]@[3,29,3]").c_str(), {{3, 2, 29}, {3, 29, 3}}, op, ref);
  row(
      name("bmm transposed mat2").c_str(), {{2, 3, 5}, {2, 7, 5}},
      [](const std::vector<Tensor>& x) { return bmm(x[0], transpose(x[1], 1, 2)); },
      [](const std::vector<Ref>& r) { return refMatmul(r[0], refTranspose(r[1], 1, 2)); });
  row(
      name("bmm expanded batch (stride 0)").c_str(), {{1, 3, 5}, {4, 5, 2}},
      [](const std::vector<Tensor>& x) {
        return bmm(expand(x[0], {4, 3, 5}), x[1]);
      },
      [](const std::vector<Ref>& r) {
        return refMatmul(refExpand(r[0], {4, 3, 5}), r[1]);
      });
}

void matmulRows(const char* prefix = "") {
  auto name = [prefix](const char* n) { return (std::string(prefix) + n); };
  auto ref = [](const std::vector<Ref>& r) { return refMatmul(r[0], r[1]); };
  auto op = [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); };
  row(name("matmul 1x1 dot [5]@[5]").c_str(), {{5}, {5}}, op, ref);
  row(name("matmul 2x1 mv [3,5]@[5]").c_str(), {{3, 5}, {5}}, op, ref);
  row(name("matmul 1x2 [5]@[5,7]").c_str(), {{5}, {5, 7}}, op, ref);
  row(name("matmul 2x2 [3,5]@[5,7]").c_str(), {{3, 5}, {5, 7}}, op, ref);
  row(name("matmul 3x2 fold [2,3,5]@[5,7]").c_str(), {{2, 3, 5}, {5, 7}}, op, ref);
  row(name("matmul 3x2 fold, mat2 no grad").c_str(), {{2, 3, 5}, {5, 7}}, op, ref, {true, false});
  row(
      name("matmul 3x2 non-foldable batch (bmm path)").c_str(), {{3, 2, 5}, {5, 7}},
      [](const std::vector<Tensor>& x) {
        return matmul(permute(x[0], {1, 0, 2}), x[1]);
      },
      [](const std::vector<Ref>& r) {
        return refMatmul(refPermute(r[0], {1, 0, 2}), r[1]);
      },
      {true, false});
  row(name("matmul 2x3 [3,5]@[2,5,7] (fold, transposed)").c_str(), {{3, 5}, {2, 5, 7}}, op, ref);
  row(name("matmul 2x3 self no grad (bmm path)").c_str(), {{3, 5}, {2, 5, 7}}, op, ref,
      {false, true});
  row(name("matmul 3x3 [2,3,5]@[2,5,7]").c_str(), {{2, 3, 5}, {2, 5, 7}}, op, ref);
  row(name("matmul 3x3 broadcast [1,3,5]@[4,5,2]").c_str(), {{1, 3, 5}, {4, 5, 2}}, op, ref);
  row(name("matmul 4x3 [2,1,3,4]@[5,4,2]").c_str(), {{2, 1, 3, 4}, {5, 4, 2}}, op, ref);
  row(name("matmul 3x1 [2,3,5]@[5]").c_str(), {{2, 3, 5}, {5}}, op, ref);
  row(
      name("matmul 3x1 non-foldable (bmm path)").c_str(), {{3, 2, 5}, {5}},
      [](const std::vector<Tensor>& x) {
        return matmul(permute(x[0], {1, 0, 2}), x[1]);
      },
      [](const std::vector<Ref>& r) {
        return refMatmul(refPermute(r[0], {1, 0, 2}), r[1]);
      },
      {true, false});
  row(name("matmul 1x3 [5]@[2,5,3]").c_str(), {{5}, {2, 5, 3}}, op, ref);
  row(name("matmul 4x1 [2,3,1,5]@[5]").c_str(), {{2, 3, 1, 5}, {5}}, op, ref);
  row(name("matmul 3x2 K=31 [2,3,31]@[31,5]").c_str(), {{2, 3, 31}, {31, 5}}, op, ref);
}

/// gatherBmm rows: q with repeats (m = 2 three times) and an unused index (m = 1).
void gatherBmmRows(const char* prefix = "") {
  auto name = [prefix](const char* n) { return (std::string(prefix) + n); };
  auto add = [&](const char* n, Shape a, Shape c, std::vector<int64_t> q, std::vector<bool> grad) {
    const Tensor qt = int64Tensor({static_cast<int64_t>(q.size())}, q);
    row(
        name(n).c_str(), {std::move(a), std::move(c)},
        [qt](const std::vector<Tensor>& x) { return gatherBmm(x[0], x[1], qt); },
        [q](const std::vector<Ref>& r) { return refGatherBmm(r[0], r[1], q); }, std::move(grad));
  };
  add("gatherBmm N=5 M=4 repeats, m=1 unused", {5, 3, 7}, {4, 7, 2}, {2, 0, 2, 3, 2}, {});
  add("gatherBmm N=1 M=1", {1, 1, 1}, {1, 1, 1}, {0}, {});
  add("gatherBmm I=1 K=1", {3, 1, 5}, {2, 5, 1}, {1, 1, 0}, {});
  add("gatherBmm J=23", {4, 2, 23}, {3, 23, 3}, {2, 2, 0, 2}, {});
  add("gatherBmm only a requires grad", {5, 3, 7}, {4, 7, 2}, {3, 3, 1, 0, 3}, {true, false});
  add("gatherBmm only c requires grad", {5, 3, 7}, {4, 7, 2}, {3, 3, 1, 0, 3}, {false, true});
  // Strided operands: c[m] with K = 1 and a row stride of 3 (a column of a wider c), c and a
  // transposed, c broadcast over M (stride 0).
  const Tensor q = int64Tensor({4}, {1, 0, 1, 2});
  const std::vector<int64_t> qv{1, 0, 1, 2};
  // In place (float64/float32 only: float16/bfloat16 are always packed to float32).
  row(
      name("gatherBmm c = wide[..., 1:2] (K=1, row stride 3)").c_str(), {{4, 2, 5}, {3, 5, 3}},
      [q](const std::vector<Tensor>& x) { return gatherBmm(x[0], slice(x[1], 2, 1, 2), q); },
      [qv](const std::vector<Ref>& r) {
        return refGatherBmm(r[0], refSlice(r[1], 2, 1, 2, 1), qv);
      },
      {});
  row(
      name("gatherBmm transposed a and c").c_str(), {{4, 5, 2}, {3, 3, 5}},
      [q](const std::vector<Tensor>& x) { return gatherBmm(mT(x[0]), mT(x[1]), q); },
      [qv](const std::vector<Ref>& r) {
        return refGatherBmm(refTranspose(r[0], 1, 2), refTranspose(r[1], 1, 2), qv);
      });
  row(
      name("gatherBmm c broadcast over M (stride 0)").c_str(), {{4, 2, 5}, {1, 5, 3}},
      [q](const std::vector<Tensor>& x) {
        return gatherBmm(x[0], expand(x[1], {3, 5, 3}), q);
      },
      [qv](const std::vector<Ref>& r) {
        return refGatherBmm(r[0], refExpand(r[1], {3, 5, 3}), qv);
      });
  row(
      name("gatherBmm a = wide[:, :, 1:6] (row stride 7)").c_str(), {{4, 2, 7}, {3, 5, 3}},
      [q](const std::vector<Tensor>& x) { return gatherBmm(slice(x[0], 2, 1, 6), x[1], q); },
      [qv](const std::vector<Ref>& r) {
        return refGatherBmm(refSlice(r[0], 2, 1, 6, 1), r[1], qv);
      });
  if (prefix[0] == '\0') {  // 0-size cases: float64 suites only
    add("gatherBmm N=0", {0, 3, 5}, {2, 5, 4}, {}, {});
    add("gatherBmm I=0", {3, 0, 5}, {2, 5, 4}, {1, 0, 1}, {});
    add("gatherBmm J=0", {3, 2, 0}, {2, 0, 4}, {1, 0, 1}, {});
    add("gatherBmm K=0", {3, 2, 5}, {2, 5, 0}, {1, 0, 1}, {});
  }
}

}  // namespace

class TestOps : public QObject {
  Q_OBJECT

 private slots:
  void slice_data() {
    QTest::addColumn<OpCase>("c");
    auto ref = [](int64_t d, int64_t s, int64_t e, int64_t st) {
      return [=](const std::vector<Ref>& r) { return refSlice(r[0], d, s, e, st); };
    };
    auto op = [](int64_t d, int64_t s, int64_t e, int64_t st) {
      return [=](const std::vector<Tensor>& x) { return matmulviz::slice(x[0], d, s, e, st); };
    };
    row("dim 0 step 1 [5,3] 1:4", {{5, 3}}, op(0, 1, 4, 1), ref(0, 1, 4, 1));
    row("dim 1 step 2 [3,7] 0:7:2", {{3, 7}}, op(1, 0, 7, 2), ref(1, 0, 7, 2));
    row("negative start [7] -3:", {{7}}, op(0, -3, 7, 1), ref(0, -3, 7, 1));
    row("negative start and end, step 2 [3,7,2] -6:-1:2", {{3, 7, 2}}, op(1, -6, -1, 2),
        ref(1, -6, -1, 2));
    row("start below -size clamps [5] -9:2", {{5}}, op(0, -9, 2, 1), ref(0, -9, 2, 1));
    row("end past size clamps [5,3] 2:100", {{5, 3}}, op(0, 2, 100, 1), ref(0, 2, 100, 1));
    row("empty result [5,3] 3:3", {{5, 3}}, op(0, 3, 3, 1), ref(0, 3, 3, 1));
    row("end before start [5,3] 4:1", {{5, 3}}, op(0, 4, 1, 1), ref(0, 4, 1, 1));
    row("size-0 input [0,3]", {{0, 3}}, op(0, 0, 2, 1), ref(0, 0, 2, 1));
    row("dim -1 step 3 [3,1,7] 1::3", {{3, 1, 7}}, op(-1, 1, 7, 3), ref(-1, 1, 7, 3));
    row(
        "slice of a transposed view", {{3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::slice(matmulviz::transpose(x[0], 0, 1), 0, 1, 5, 2);
        },
        [](const std::vector<Ref>& r) { return refSlice(refTranspose(r[0], 0, 1), 0, 1, 5, 2); });
    row(
        "slice of a slice", {{7, 3}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::slice(matmulviz::slice(x[0], 0, 1, 7, 2), 0, 1, 3);
        },
        [](const std::vector<Ref>& r) { return refSlice(refSlice(r[0], 0, 1, 7, 2), 0, 1, 3, 1); });
  }
  void slice() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void narrow_data() {
    QTest::addColumn<OpCase>("c");
    row(
        "dim 0 [5,3] start 1 length 3", {{5, 3}},
        [](const std::vector<Tensor>& x) { return matmulviz::narrow(x[0], 0, 1, 3); },
        [](const std::vector<Ref>& r) { return refSlice(r[0], 0, 1, 4, 1); });
    row(
        "negative start dim 1 [3,7] start -5 length 3", {{3, 7}},
        [](const std::vector<Tensor>& x) { return matmulviz::narrow(x[0], 1, -5, 3); },
        [](const std::vector<Ref>& r) { return refSlice(r[0], 1, 2, 5, 1); });
    row(
        "length 0 [3,7]", {{3, 7}},
        [](const std::vector<Tensor>& x) { return matmulviz::narrow(x[0], -1, 7, 0); },
        [](const std::vector<Ref>& r) { return refSlice(r[0], 1, 7, 7, 1); });
    row(
        "whole dim [1,5]", {{1, 5}},
        [](const std::vector<Tensor>& x) { return matmulviz::narrow(x[0], 0, 0, 1); },
        [](const std::vector<Ref>& r) { return r[0]; });
  }
  void narrow() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void select_data() {
    QTest::addColumn<OpCase>("c");
    auto r = [](int64_t d, int64_t i) {
      return [=](const std::vector<Ref>& x) { return refSelect(x[0], d, i); };
    };
    auto o = [](int64_t d, int64_t i) {
      return [=](const std::vector<Tensor>& x) { return matmulviz::select(x[0], d, i); };
    };
    row("dim 0 [5,3] index 2", {{5, 3}}, o(0, 2), r(0, 2));
    row("dim 1 negative index [3,7] -1", {{3, 7}}, o(1, -1), r(1, -1));
    row("dim -2 negative index [2,5,3] -5", {{2, 5, 3}}, o(-2, -5), r(-2, -5));
    row("1-d to 0-dim [7] index 4", {{7}}, o(0, 4), r(0, 4));
    row("size-0 rest [3,0] index 1", {{3, 0}}, o(0, 1), r(0, 1));
    row(
        "select of a transposed view", {{3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::select(matmulviz::transpose(x[0], 0, 1), 0, -2);
        },
        [](const std::vector<Ref>& x) { return refSelect(refTranspose(x[0], 0, 1), 0, -2); });
  }
  void select() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void view_data() {
    QTest::addColumn<OpCase>("c");
    auto add = [](const char* n, Shape in, Shape sizes, Shape want) {
      row(
          n, {std::move(in)},
          [sizes](const std::vector<Tensor>& x) { return matmulviz::view(x[0], sizes); },
          [want](const std::vector<Ref>& r) { return refReshape(r[0], want); });
    };
    add("[3,5] -> [5,3]", {3, 5}, {5, 3}, {5, 3});
    add("[3,5] -> [-1]", {3, 5}, {-1}, {15});
    add("[2,3,5] -> [6,-1]", {2, 3, 5}, {6, -1}, {6, 5});
    add("[7] -> [1,7,1]", {7}, {1, 7, 1}, {1, 7, 1});
    add("0-dim -> [1,1]", {}, {1, 1}, {1, 1});
    add("[1,1] -> 0-dim", {1, 1}, {}, {});
    add("size 0 [0,3] -> [-1]", {0, 3}, {-1}, {0});
    add("size 0 [0,3] -> [3,0,5]", {0, 3}, {3, 0, 5}, {3, 0, 5});
    row(
        "view of a column slice (viewable) [4,6] -> [2,2,3]", {{4, 6}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::view(matmulviz::slice(x[0], 1, 0, 3), {2, 2, 3});
        },
        [](const std::vector<Ref>& r) {
          return refReshape(refSlice(r[0], 1, 0, 3, 1), {2, 2, 3});
        });
    row(
        "view of a transposed view merging nothing", {{3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::view(matmulviz::transpose(x[0], 0, 1), {5, 1, 3});
        },
        [](const std::vector<Ref>& r) {
          return refReshape(refTranspose(r[0], 0, 1), {5, 1, 3});
        });
  }
  void view() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void reshape_data() {
    QTest::addColumn<OpCase>("c");
    row(
        "view case [3,5] -> [5,-1]", {{3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::reshape(x[0], {5, -1});
        },
        [](const std::vector<Ref>& r) {
          return refReshape(r[0], {5, 3});
        });
    row(
        "copy case: transposed [3,5] -> [-1]", {{3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::reshape(matmulviz::transpose(x[0], 0, 1), {-1});
        },
        [](const std::vector<Ref>& r) { return refReshape(refTranspose(r[0], 0, 1), {15}); });
    row(
        "copy case: expanded [1,5] -> [3,5] -> [15]", {{1, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::reshape(matmulviz::expand(x[0], {3, 5}), {15});
        },
        [](const std::vector<Ref>& r) {
          return refReshape(refExpand(r[0], {3, 5}), {15});
        });
    row(
        "copy case: step-2 slice [7,3] -> [4,3] -> [12]", {{7, 3}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::reshape(matmulviz::slice(x[0], 0, 0, 7, 2), {-1});
        },
        [](const std::vector<Ref>& r) { return refReshape(refSlice(r[0], 0, 0, 7, 2), {12}); });
    row(
        "size 0 [3,0] -> [0,7]", {{3, 0}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::reshape(x[0], {0, 7});
        },
        [](const std::vector<Ref>& r) {
          return refReshape(r[0], {0, 7});
        });
  }
  void reshape() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void permute_data() {
    QTest::addColumn<OpCase>("c");
    auto add = [](const char* n, Shape in, std::vector<int64_t> dims) {
      row(
          n, {std::move(in)},
          [dims](const std::vector<Tensor>& x) { return matmulviz::permute(x[0], dims); },
          [dims](const std::vector<Ref>& r) { return refPermute(r[0], dims); });
    };
    add("[2,3,5] (2,0,1)", {2, 3, 5}, {2, 0, 1});
    add("[2,3,5] negative dims (-1,0,-2)", {2, 3, 5}, {-1, 0, -2});
    add("[3,1,7] (1,2,0)", {3, 1, 7}, {1, 2, 0});
    add("identity [3,5]", {3, 5}, {0, 1});
    add("0-dim ()", {}, {});
    add("size 0 [2,0,3] (2,1,0)", {2, 0, 3}, {2, 1, 0});
  }
  void permute() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void transpose_data() {
    QTest::addColumn<OpCase>("c");
    auto add = [](const char* n, Shape in, int64_t d0, int64_t d1) {
      row(
          n, {std::move(in)},
          [=](const std::vector<Tensor>& x) { return matmulviz::transpose(x[0], d0, d1); },
          [=](const std::vector<Ref>& r) { return refTranspose(r[0], d0, d1); });
    };
    add("[3,5] 0,1", {3, 5}, 0, 1);
    add("[2,3,5] 0,2", {2, 3, 5}, 0, 2);
    add("[2,3,5] -1,-2", {2, 3, 5}, -1, -2);
    add("same dim [3,5] 1,1", {3, 5}, 1, 1);
    add("size 0 [0,7] 0,1", {0, 7}, 0, 1);
  }
  void transpose() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void expand_data() {
    QTest::addColumn<OpCase>("c");
    auto add = [](const char* n, Shape in, Shape sizes) {
      row(
          n, {std::move(in)},
          [sizes](const std::vector<Tensor>& x) { return matmulviz::expand(x[0], sizes); },
          [sizes](const std::vector<Ref>& r) { return refExpand(r[0], sizes); });
    };
    add("[3,1] -> [3,5]", {3, 1}, {3, 5});
    add("[1] -> [2,3,7] (leading dims)", {1}, {2, 3, 7});
    add("[3,1] -> [2,-1,5]", {3, 1}, {2, -1, 5});
    add("[1,5] -> [7,5]", {1, 5}, {7, 5});
    add("no-op [3,5] -> [3,5]", {3, 5}, {3, 5});
    add("to size 0 [3,1] -> [3,0]", {3, 1}, {3, 0});
    add("0-dim -> [3,2]", {}, {3, 2});
    add("[5] -> [1,5] (leading size 1)", {5}, {1, 5});
  }
  void expand() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void unsqueezeSqueeze_data() {
    QTest::addColumn<OpCase>("c");
    auto uns = [](const char* n, Shape in, int64_t d, Shape want) {
      row(
          n, {std::move(in)},
          [d](const std::vector<Tensor>& x) { return matmulviz::unsqueeze(x[0], d); },
          [want](const std::vector<Ref>& r) { return refReshape(r[0], want); });
    };
    auto sq = [](const char* n, Shape in, int64_t d, Shape want) {
      row(
          n, {std::move(in)},
          [d](const std::vector<Tensor>& x) { return matmulviz::squeeze(x[0], d); },
          [want](const std::vector<Ref>& r) { return refReshape(r[0], want); });
    };
    uns("unsqueeze [3,5] dim 0", {3, 5}, 0, {1, 3, 5});
    uns("unsqueeze [3,5] dim 1", {3, 5}, 1, {3, 1, 5});
    uns("unsqueeze [3,5] dim -1", {3, 5}, -1, {3, 5, 1});
    uns("unsqueeze 0-dim dim 0", {}, 0, {1});
    uns("unsqueeze size 0 [0] dim 0", {0}, 0, {1, 0});
    sq("squeeze [3,1,5] dim 1", {3, 1, 5}, 1, {3, 5});
    sq("squeeze [3,1] dim -1", {3, 1}, -1, {3});
    sq("squeeze [1] dim 0 -> 0-dim", {1}, 0, {});
    sq("squeeze of a non-1 dim is a no-op [3,5] dim 0", {3, 5}, 0, {3, 5});
    row(
        "unsqueeze of a transposed view", {{3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::unsqueeze(matmulviz::transpose(x[0], 0, 1), 1);
        },
        [](const std::vector<Ref>& r) {
          return refReshape(refTranspose(r[0], 0, 1), {5, 1, 3});
        });
  }
  void unsqueezeSqueeze() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void contiguousClone_data() {
    QTest::addColumn<OpCase>("c");
    row(
        "contiguous of a contiguous tensor", {{3, 5}},
        [](const std::vector<Tensor>& x) { return matmulviz::contiguous(x[0]); },
        [](const std::vector<Ref>& r) { return r[0]; });
    row(
        "contiguous of a transposed view", {{3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::contiguous(matmulviz::transpose(x[0], 0, 1));
        },
        [](const std::vector<Ref>& r) { return refTranspose(r[0], 0, 1); });
    row(
        "contiguous of a step-2 slice", {{3, 7}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::contiguous(matmulviz::slice(x[0], 1, 1, 7, 2));
        },
        [](const std::vector<Ref>& r) { return refSlice(r[0], 1, 1, 7, 2); });
    row(
        "contiguous of an expanded view", {{3, 1}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::contiguous(matmulviz::expand(x[0], {2, 3, 5}));
        },
        [](const std::vector<Ref>& r) {
          return refExpand(r[0], {2, 3, 5});
        });
    row(
        "clone [3,5]", {{3, 5}},
        [](const std::vector<Tensor>& x) { return matmulviz::clone(x[0]); },
        [](const std::vector<Ref>& r) { return r[0]; });
    row(
        "clone 0-dim", {{}}, [](const std::vector<Tensor>& x) { return matmulviz::clone(x[0]); },
        [](const std::vector<Ref>& r) { return r[0]; });
    row(
        "clone size 0 [0,5]", {{0, 5}},
        [](const std::vector<Tensor>& x) { return matmulviz::clone(x[0]); },
        [](const std::vector<Ref>& r) { return r[0]; });
    row(
        "clone of a permuted view", {{2, 3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::clone(matmulviz::permute(x[0], {1, 2, 0}));
        },
        [](const std::vector<Ref>& r) {
          return refPermute(r[0], {1, 2, 0});
        });
  }
  void contiguousClone() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void index_data() {
    QTest::addColumn<OpCase>("c");
    auto add = [](const char* n, Shape in, Shape qSizes, std::vector<int64_t> q) {
      const Tensor qt = int64Tensor(qSizes, q);
      row(
          n, {std::move(in)},
          [qt](const std::vector<Tensor>& x) { return matmulviz::index(x[0], qt); },
          [qSizes, q](const std::vector<Ref>& r) { return refIndex(r[0], qSizes, q); });
    };
    add("1-d index with repeats [7,3] q=[2,0,2,6,2]", {7, 3}, {5}, {2, 0, 2, 6, 2});
    add("negative indices [5,3] q=[-1,0,-5,-1]", {5, 3}, {4}, {-1, 0, -5, -1});
    add("2-d index [5,3] q=[[1,4,1],[0,-2,1]]", {5, 3}, {2, 3}, {1, 4, 1, 0, -2, 1});
    add("1-d input [7] q=[6,6,0]", {7}, {3}, {6, 6, 0});
    add("3-d input [4,2,3] q=[3,3,1]", {4, 2, 3}, {3}, {3, 3, 1});
    add("empty index [5,3] q=[]", {5, 3}, {0}, {});
    add("size-0 input [0,3] q=[]", {0, 3}, {0}, {});
    add("size-0 rows [5,0] q=[1,1]", {5, 0}, {2}, {1, 1});
    add("2-d index [1,3] q=[[0],[0]]", {1, 3}, {2, 1}, {0, 0});
    const Tensor q0 = int64Tensor({}, {-2});
    row(
        "0-dim index -2 (a view, as select)", {{5, 3}},
        [q0](const std::vector<Tensor>& x) { return matmulviz::index(x[0], q0); },
        [](const std::vector<Ref>& r) { return refSelect(r[0], 0, -2); });
    const Tensor q = int64Tensor({3}, {4, 0, 4});
    row(
        "index of a transposed view (rows not contiguous)", {{3, 5}},
        [q](const std::vector<Tensor>& x) {
          return matmulviz::index(matmulviz::transpose(x[0], 0, 1), q);
        },
        [](const std::vector<Ref>& r) {
          return refIndex(refTranspose(r[0], 0, 1), {3}, {4, 0, 4});
        });
    const Tensor qs = int64Tensor({5}, {0, 1, 2, 1, 0});
    row(
        "index with a step-2 sliced index", {{7, 2}},
        [qs](const std::vector<Tensor>& x) {
          return matmulviz::index(x[0], matmulviz::slice(qs, 0, 0, 5, 2));
        },
        [](const std::vector<Ref>& r) {
          return refIndex(r[0], {3}, {0, 2, 0});
        });
  }
  void index() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void add_data() {
    QTest::addColumn<OpCase>("c");
    auto ref = [](const std::vector<Ref>& r) { return refAdd(r[0], r[1]); };
    auto op = [](const std::vector<Tensor>& x) { return matmulviz::add(x[0], x[1]); };
    row("[3,5] + [3,5]", {{3, 5}, {3, 5}}, op, ref);
    row("0-dim + 0-dim", {{}, {}}, op, ref);
    row("size 0 [0,3]", {{0, 3}, {0, 3}}, op, ref);
    row("only b requires grad", {{7}, {7}}, op, ref, {false, true});
    row(
        "matmulviz::add(x, x): gradients meet at one input", {{3, 5}},
        [](const std::vector<Tensor>& x) { return matmulviz::add(x[0], x[0]); },
        [](const std::vector<Ref>& r) { return refAdd(r[0], r[0]); });
    row(
        "transposed + contiguous", {{5, 3}, {3, 5}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::add(matmulviz::transpose(x[0], 0, 1), x[1]);
        },
        [](const std::vector<Ref>& r) { return refAdd(refTranspose(r[0], 0, 1), r[1]); });
    row(
        "x + matmulviz::clone(x)", {{2, 3}},
        [](const std::vector<Tensor>& x) { return matmulviz::add(x[0], matmulviz::clone(x[0])); },
        [](const std::vector<Ref>& r) { return refAdd(r[0], r[0]); });
  }
  void add() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void sum_data() {
    QTest::addColumn<OpCase>("c");
    auto op = [](const std::vector<Tensor>& x) { return matmulviz::sum(x[0]); };
    auto ref = [](const std::vector<Ref>& r) { return refSum(r[0]); };
    row("[3,5]", {{3, 5}}, op, ref);
    row("[7]", {{7}}, op, ref);
    row("0-dim", {{}}, op, ref);
    row("size 0 [0,3]", {{0, 3}}, op, ref);
    row(
        "sum of an expanded view", {{3, 1}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::sum(matmulviz::expand(x[0], {2, 3, 5}));
        },
        [](const std::vector<Ref>& r) {
          return refSum(refExpand(r[0], {2, 3, 5}));
        });
    row(
        "sum of a step-2 slice", {{3, 7}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::sum(matmulviz::slice(x[0], 1, 0, 7, 2));
        },
        [](const std::vector<Ref>& r) { return refSum(refSlice(r[0], 1, 0, 7, 2)); });
  }
  void sum() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void mm_data() {
    QTest::addColumn<OpCase>("c");
    mmRows();
    auto op = [](const std::vector<Tensor>& x) { return matmulviz::mm(x[0], x[1]); };
    auto ref = [](const std::vector<Ref>& r) { return refMatmul(r[0], r[1]); };
    row("K=0 [3,0]@[0,5]", {{3, 0}, {0, 5}}, op, ref);
    row("M=0 [0,5]@[5,3]", {{0, 5}, {5, 3}}, op, ref);
    row("N=0 [3,5]@[5,0]", {{3, 5}, {5, 0}}, op, ref);
    row("only self requires grad", {{3, 5}, {5, 7}}, op, ref, {true, false});
    row("only mat2 requires grad", {{3, 5}, {5, 7}}, op, ref, {false, true});
    row(
        "matmulviz::mm(x, x) [5,5]", {{5, 5}},
        [](const std::vector<Tensor>& x) { return matmulviz::mm(x[0], x[0]); },
        [](const std::vector<Ref>& r) { return refMatmul(r[0], r[0]); });
  }
  void mm() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void bmm_data() {
    QTest::addColumn<OpCase>("c");
    bmmRows();
    auto op = [](const std::vector<Tensor>& x) { return matmulviz::bmm(x[0], x[1]); };
    auto ref = [](const std::vector<Ref>& r) { return refMatmul(r[0], r[1]); };
    row("batch 0 [0,3,5]@[0,5,2]", {{0, 3, 5}, {0, 5, 2}}, op, ref);
    row("K=0 [2,3,0]@[2,0,5]", {{2, 3, 0}, {2, 0, 5}}, op, ref);
    row("only self requires grad", {{2, 3, 5}, {2, 5, 7}}, op, ref, {true, false});
    row("only mat2 requires grad", {{2, 3, 5}, {2, 5, 7}}, op, ref, {false, true});
  }
  void bmm() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void matmul_data() {
    QTest::addColumn<OpCase>("c");
    matmulRows();
    auto op = [](const std::vector<Tensor>& x) { return matmulviz::matmul(x[0], x[1]); };
    auto ref = [](const std::vector<Ref>& r) { return refMatmul(r[0], r[1]); };
    row("size 0 batch [0,3,5]@[5,2]", {{0, 3, 5}, {5, 2}}, op, ref);
    row("K=0 [2,3,0]@[0,4]", {{2, 3, 0}, {0, 4}}, op, ref);
    row("K=0 dot [0]@[0]", {{0}, {0}}, op, ref);
    row("3x3 batch 0 broadcast [0,3,5]@[1,5,2]", {{0, 3, 5}, {1, 5, 2}}, op, ref);
  }
  void matmul() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void cat_data() {
    QTest::addColumn<OpCase>("c");
    auto add = [](const char* n, std::vector<Shape> shapes, int64_t dim,
                  std::vector<bool> grad = {}) {
      row(
          n, std::move(shapes),
          [dim](const std::vector<Tensor>& x) { return matmulviz::cat(x, dim); },
          [dim](const std::vector<Ref>& r) { return refCat(r, dim); }, std::move(grad));
    };
    add("dim 0, 3 inputs [2,3] [1,3] [4,3]", {{2, 3}, {1, 3}, {4, 3}}, 0);
    add("dim 1, 3 inputs [3,2] [3,1] [3,4]", {{3, 2}, {3, 1}, {3, 4}}, 1);
    add("dim -1, 3-d inputs", {{2, 3, 1}, {2, 3, 5}, {2, 3, 2}}, -1);
    add("with a size-0 input", {{3, 0}, {3, 2}, {3, 1}}, 1);
    add("one input", {{5}}, 0);
    add("only the middle requires grad", {{2, 3}, {1, 3}, {4, 3}}, 0, {false, true, false});
    row(
        "matmulviz::cat([x, x]) dim 1", {{3, 2}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::cat({x[0], x[0]}, 1);
        },
        [](const std::vector<Ref>& r) {
          return refCat({r[0], r[0]}, 1);
        });
    row(
        "cat of transposed views", {{3, 2}, {5, 2}},
        [](const std::vector<Tensor>& x) {
          return matmulviz::cat(
              {matmulviz::transpose(x[0], 0, 1), matmulviz::transpose(x[1], 0, 1)}, 1);
        },
        [](const std::vector<Ref>& r) {
          return refCat({refTranspose(r[0], 0, 1), refTranspose(r[1], 0, 1)}, 1);
        });
  }
  void cat() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  void gatherBmm_data() {
    QTest::addColumn<OpCase>("c");
    gatherBmmRows();
  }
  void gatherBmm() {
    QFETCH(OpCase, c);
    runCase(c);
  }

  /// Products in float32/float16/bfloat16 against the float64 reference (productTolerance).
  void productDtypes_data() {
    QTest::addColumn<OpCase>("c");
    QTest::addColumn<DType>("dtype");
    const std::pair<const char*, DType> dtypes[] = {
        {"float32 ", DType::Float32}, {"float16 ", DType::Float16}, {"bfloat16 ", DType::BFloat16}};
    for (const auto& [prefix, dtype] : dtypes) {
      rowDType = dtype;  // row() adds the dtype column while this is set
      mmRows(prefix);
      bmmRows(prefix);
      matmulRows(prefix);
      gatherBmmRows(prefix);
      rowDType.reset();
    }
  }
  void productDtypes() {
    QFETCH(OpCase, c);
    QFETCH(DType, dtype);
    runDtypeCase(c, dtype);
  }

  /// expand's backward (sum_to_size) in float16/bfloat16 must accumulate in float32, as
  /// PyTorch's sum does: n ones summed into one element give exactly n (a power of two, exact
  /// in the dtype), where rounding to the dtype after every addition stalls at 2048 (float16)
  /// or 256 (bfloat16), the first values whose successor is not representable.
  void expandBackwardAccumulation_data() {
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<int>("n");
    QTest::newRow("float32 n=4096") << DType::Float32 << 4096;
    QTest::newRow("float16 n=4096") << DType::Float16 << 4096;
    QTest::newRow("bfloat16 n=1024") << DType::BFloat16 << 1024;
  }
  void expandBackwardAccumulation() {
    QFETCH(DType, dtype);
    QFETCH(int, n);
    Tensor x = fromDoubles({1}, {0.5}, dtype);
    x.setRequiresGrad(true);
    const Tensor out = matmulviz::expand(x, {n});
    out.backward(fromDoubles({n}, std::vector<double>(static_cast<size_t>(n), 1.0), dtype));
    QCOMPARE(x.grad().dtype(), dtype);
    QCOMPARE(x.grad().item(0), double(n));
  }
};

QTEST_GUILESS_MAIN(TestOps)
#include "test_ops.moc"

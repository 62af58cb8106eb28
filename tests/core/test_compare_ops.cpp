// The bool-producing ops and their consumers: comparisons (core/ops/compare.h) against plain
// loops, with PyTorch's common dtype (at::result_type), no autograd, the output as the only
// allocation; nonzero; boolean-mask indexing (indexWithMask): values, gradients by finite
// differences, PyTorch's error texts, and the allocator events of at::index's mask expansion
// (nonzero's index alive only during the op).

#include "core/autograd/node.h"
#include "core/memory/caching_allocator.h"
#include "core/ops/compare.h"
#include "core/ops/ops.h"
#include "op_check.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The message of the exception of type E that f throws, "" when it throws none.
template <class E, class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

bool refHolds(CompareOp op, double x, double y) {
  switch (op) {
    case CompareOp::Eq:
      return x == y;
    case CompareOp::Ne:
      return x != y;
    case CompareOp::Lt:
      return x < y;
    case CompareOp::Le:
      return x <= y;
    case CompareOp::Gt:
      return x > y;
    case CompareOp::Ge:
      return x >= y;
  }
  return false;
}

const CompareOp kOps[] = {CompareOp::Eq, CompareOp::Ne, CompareOp::Lt,
                          CompareOp::Le, CompareOp::Gt, CompareOp::Ge};

/// Alloc/Free events of a device as "+label" / "-label", in order.
std::vector<std::string> allocEvents(const DevicePtr& d, size_t from = 0) {
  const CachingAllocator& a = d->allocator();
  std::vector<std::string> out;
  for (size_t i = from; i < a.events().size(); ++i) {
    const MemoryEvent& e = a.events()[i];
    if (e.kind == MemoryEventKind::Alloc) out.push_back("+" + a.record(e.allocationId).label);
    if (e.kind == MemoryEventKind::Free) out.push_back("-" + a.record(e.allocationId).label);
  }
  return out;
}

std::vector<double> values(const Tensor& t) {
  return hostReadable(t, "values").toDoubles();
}

}  // namespace

Q_DECLARE_METATYPE(matmulviz::DType)

class TestCompareOps : public QObject {
  Q_OBJECT

 private slots:
  // Every op, broadcasting [2,1,3] against [4,1], NaN included (unordered: only ne holds).
  void compareBroadcastsLikeTheReference() {
    std::vector<double> va = randomValues(6, 1), vb = randomValues(4, 2);
    va[1] = kNaN;
    va[4] = vb[2];  // some equal pairs
    vb[0] = va[0];
    const Tensor a = fromDoubles({2, 1, 3}, va, DType::Float64);
    const Tensor b = fromDoubles({4, 1}, vb, DType::Float64);
    for (CompareOp op : kOps) {
      const Tensor out = compare(op, a, b);
      QCOMPARE(out.dtype(), DType::Bool);
      QCOMPARE(out.sizes(), (Shape{2, 4, 3}));
      QVERIFY(out.isContiguous());
      const std::vector<double> got = out.toDoubles();
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 4; ++j)
          for (int64_t k = 0; k < 3; ++k)
            QCOMPARE(got[(i * 4 + j) * 3 + k], refHolds(op, va[i * 3 + k], vb[j]) ? 1.0 : 0.0);
    }
  }

  void compareReadsStridedOperands() {
    const Tensor base = fromDoubles({2, 3}, {1, 5, 2, 4, 3, 6}, DType::Float32);
    const Tensor t = transpose(base, 0, 1);  // [[1,4],[5,3],[2,6]]
    QCOMPARE(values(gt(t, fromDoubles({2}, {2, 4}, DType::Float32))),
             (std::vector<double>{0, 0, 1, 0, 0, 1}));
    QCOMPARE(
        values(eq(t, transpose(fromDoubles({2, 3}, {1, 0, 2, 4, 3, 0}, DType::Float32), 0, 1))),
        (std::vector<double>{1, 1, 0, 1, 1, 0}));
  }

  void compareWithScalars() {
    const Tensor t = fromDoubles({5}, {-1, 0, 0.5, 2, kNaN}, DType::Float32);
    QCOMPARE(compare(CompareOp::Gt, t, 0, ScalarKind::Int).toDoubles(),
             (std::vector<double>{0, 0, 1, 1, 0}));
    QCOMPARE(compare(CompareOp::Le, t, 0.5, ScalarKind::Float).toDoubles(),
             (std::vector<double>{1, 1, 1, 0, 0}));
    QCOMPARE(compare(CompareOp::Ne, t, 2, ScalarKind::Int).toDoubles(),
             (std::vector<double>{1, 1, 1, 0, 1}));
    QCOMPARE(compare(CompareOp::Eq, t, 1, ScalarKind::Bool).toDoubles(),
             (std::vector<double>{0, 0, 0, 0, 0}));
  }

  // at::result_type: the dtype both sides are rounded to before comparing.
  void commonDType_data() {
    QTest::addColumn<DType>("a");
    QTest::addColumn<bool>("aZeroDim");
    QTest::addColumn<DType>("b");
    QTest::addColumn<bool>("bZeroDim");
    QTest::addColumn<DType>("want");
    const DType f32 = DType::Float32, f16 = DType::Float16, bf16 = DType::BFloat16,
                f64 = DType::Float64, i64 = DType::Int64, b = DType::Bool;
    QTest::newRow("float16 with bfloat16") << f16 << false << bf16 << false << f32;
    QTest::newRow("float32 with float64") << f32 << false << f64 << false << f64;
    QTest::newRow("int64 with float16") << i64 << false << f16 << false << f16;
    QTest::newRow("bool with int64") << b << false << i64 << false << i64;
    QTest::newRow("float32 with a 0-dim float64") << f32 << false << f64 << true << f32;
    QTest::newRow("int64 with a 0-dim float64") << i64 << false << f64 << true << f64;
    QTest::newRow("bool with a 0-dim int64") << b << false << i64 << true << i64;
    QTest::newRow("0-dim float16 with 0-dim float64") << f16 << true << f64 << true << f64;
  }
  void commonDType() {
    QFETCH(DType, a);
    QFETCH(bool, aZeroDim);
    QFETCH(DType, b);
    QFETCH(bool, bZeroDim);
    QFETCH(DType, want);
    const Tensor ta = empty(aZeroDim ? Shape{} : Shape{2}, a, nullptr, "a");
    const Tensor tb = empty(bZeroDim ? Shape{} : Shape{2}, b, nullptr, "b");
    QCOMPARE(compareDType(ta, tb), want);
    QCOMPARE(compareDType(tb, ta), want);
  }

  void commonDTypeWithScalars() {
    const Tensor h = empty({2}, DType::Float16, nullptr, "h");
    const Tensor l = empty({2}, DType::Int64, nullptr, "l");
    const Tensor b = empty({2}, DType::Bool, nullptr, "b");
    QCOMPARE(compareDType(h, ScalarKind::Float), DType::Float16);
    QCOMPARE(compareDType(l, ScalarKind::Float), DType::Float32);  // the default dtype
    QCOMPARE(compareDType(l, ScalarKind::Bool), DType::Int64);
    QCOMPARE(compareDType(b, ScalarKind::Int), DType::Int64);
    QCOMPARE(compareDType(b, ScalarKind::Bool), DType::Bool);
  }

  // The values as PyTorch compares them: 0.1 rounded to float16 for a float16 tensor, int64
  // exactly (2^53 + 1 != 2^53), an int64 tensor against 1.5 in float32.
  void comparesInTheCommonDType() {
    const Tensor h = fromDoubles({1}, {0.1}, DType::Float16);
    QCOMPARE(eq(h, fromDoubles({}, {0.1}, DType::Float64)).toDoubles(), std::vector<double>{1});
    QCOMPARE(compare(CompareOp::Eq, h, 0.1, ScalarKind::Float).toDoubles(), std::vector<double>{1});
    QCOMPARE(eq(h, fromDoubles({1}, {0.1}, DType::Float64)).toDoubles(), std::vector<double>{0});
    Tensor big = empty({1}, DType::Int64, nullptr, "big");
    Tensor big1 = empty({1}, DType::Int64, nullptr, "big + 1");
    big.data<int64_t>()[0] = int64_t{1} << 53;
    big1.data<int64_t>()[0] = (int64_t{1} << 53) + 1;
    QCOMPARE(eq(big, big1).toDoubles(), std::vector<double>{0});
    QCOMPARE(lt(big, big1).toDoubles(), std::vector<double>{1});
    const Tensor l = fromDoubles({3}, {1, 2, 3}, DType::Int64);
    QCOMPARE(compare(CompareOp::Gt, l, 1.5, ScalarKind::Float).toDoubles(),
             (std::vector<double>{0, 1, 1}));
    const Tensor bools = fromDoubles({2}, {1, 0}, DType::Bool);
    QCOMPARE(eq(bools, fromDoubles({2}, {1, 1}, DType::Int64)).toDoubles(),
             (std::vector<double>{1, 0}));
  }

  void compareIsOutsideTheGraph() {
    Tensor x = randomTensor({4}, DType::Float32, 3);
    x.setRequiresGrad(true);
    for (CompareOp op : kOps) {
      const Tensor out = compare(op, x, x);
      QVERIFY(!out.requiresGrad());
      QVERIFY(!out.gradFn());
      QVERIFY(!compare(op, x, 0.0, ScalarKind::Float).gradFn());
    }
  }

  // The output is the only device allocation; a 0-dim host tensor is read as a CPU scalar.
  void compareAllocatesItsOutputOnly() {
    const DevicePtr cpu = makeDevice(DeviceKind::Cpu, {});
    {
      const Tensor a = tensorOn({2, 3}, {1, 2, 3, 4, 5, 6}, DType::Float32, cpu, "a");
      const size_t from = cpu->allocator().events().size();
      const Tensor out = gt(a, fromDoubles({}, {3}, DType::Float32));
      QCOMPARE(out.deviceKind(), DeviceKind::Cpu);
      QCOMPARE(out.toDoubles(), (std::vector<double>{0, 0, 0, 1, 1, 1}));
      QCOMPARE(allocEvents(cpu, from), std::vector<std::string>{"+gt output"});
      QCOMPARE(cpu->allocator().record(out.storage().allocationId()).requestedBytes, int64_t{6});
      const Tensor s = compare(CompareOp::Le, a, 2, ScalarKind::Int);
      QCOMPARE(allocEvents(cpu, from), (std::vector<std::string>{"+gt output", "+le output"}));
      QCOMPARE(le(fromDoubles({}, {3}, DType::Float32), a).deviceKind(), DeviceKind::Cpu);
      const std::string err = errorOf<std::invalid_argument>([&] {
        eq(a, fromDoubles({2, 3}, std::vector<double>(6, 0), DType::Float32));
      });
      QCOMPARE(err, std::string("eq: expected both operands to be on the same device"));
    }
    QCOMPARE(cpu->allocator().current().allocatedBytes, int64_t{0});
  }

  void compareOnMetaHasSizesOnly() {
    const DevicePtr meta = makeDevice(DeviceKind::Meta, {});
    const Tensor a = empty({3, 1}, DType::Float32, meta, "a");
    const Tensor b = empty({4}, DType::Float32, meta, "b");
    const Tensor out = ne(a, b);
    QCOMPARE(out.sizes(), (Shape{3, 4}));
    QCOMPARE(out.dtype(), DType::Bool);
    QVERIFY(!out.hasData());
    QVERIFY(!compare(CompareOp::Ge, a, 1, ScalarKind::Int).hasData());
  }

  void compareShapeError() {
    const Tensor a = empty({3, 2}, DType::Float32, nullptr, "a");
    const Tensor b = empty({3}, DType::Float32, nullptr, "b");
    QCOMPARE(errorOf<std::invalid_argument>([&] { lt(a, b); }),
             std::string("The size of tensor a (2) must match the size of tensor b (3) at "
                         "non-singleton dimension 1"));
  }

  // ~m, m1 & m2, m1 | m2, m1 ^ m2: logical on bool, bitwise on int64, in the common dtype.
  void bitwiseOps() {
    const Tensor a = fromDoubles({4}, {1, 1, 0, 0}, DType::Bool);
    const Tensor b = fromDoubles({2, 1}, {1, 0}, DType::Bool);
    QCOMPARE(bitwiseNot(a).toDoubles(), (std::vector<double>{0, 0, 1, 1}));
    QCOMPARE(bitwiseNot(a).dtype(), DType::Bool);
    const Tensor both = bitwise(BitwiseOp::And, a, b);
    QCOMPARE(both.sizes(), (Shape{2, 4}));
    QCOMPARE(both.dtype(), DType::Bool);
    QCOMPARE(both.toDoubles(), (std::vector<double>{1, 1, 0, 0, 0, 0, 0, 0}));
    QCOMPARE(bitwise(BitwiseOp::Or, a, b).toDoubles(),
             (std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0}));
    QCOMPARE(bitwise(BitwiseOp::Xor, a, b).toDoubles(),
             (std::vector<double>{0, 0, 1, 1, 1, 1, 0, 0}));
    QCOMPARE(bitwise(BitwiseOp::Or, a, 0, ScalarKind::Bool).dtype(), DType::Bool);
    const Tensor l = fromDoubles({2}, {5, 3}, DType::Int64);
    QCOMPARE(bitwiseNot(l).toDoubles(), (std::vector<double>{-6, -4}));
    QCOMPARE(bitwise(BitwiseOp::And, l, 6, ScalarKind::Int).toDoubles(),
             (std::vector<double>{4, 2}));
    const Tensor mixed = bitwise(BitwiseOp::Or, fromDoubles({2}, {1, 0}, DType::Bool), l);
    QCOMPARE(mixed.dtype(), DType::Int64);
    QCOMPARE(mixed.toDoubles(), (std::vector<double>{5, 3}));
    const Tensor f = fromDoubles({2}, {1, 0}, DType::Float32);
    QCOMPARE(errorOf<std::invalid_argument>([&] { bitwiseNot(f); }),
             std::string("\"bitwise_not_cpu\" not implemented for 'Float'"));
    QCOMPARE(
        errorOf<std::invalid_argument>([&] { bitwise(BitwiseOp::And, a, 1, ScalarKind::Float); }),
        std::string("\"bitwise_and_cpu\" not implemented for 'Float'"));
    const DevicePtr cpu = makeDevice(DeviceKind::Cpu, {});
    {
      const Tensor da = tensorOn({4}, {1, 1, 0, 0}, DType::Bool, cpu, "a");
      const size_t from = cpu->allocator().events().size();
      const Tensor out = bitwise(BitwiseOp::Xor, da, true, ScalarKind::Bool);
      QCOMPARE(out.toDoubles(), (std::vector<double>{0, 0, 1, 1}));
      QCOMPARE(allocEvents(cpu, from), std::vector<std::string>{"+bitwise_xor output"});
      QCOMPARE(errorOf<std::invalid_argument>(
                   [&] { bitwiseNot(tensorOn({1}, {1}, DType::Float64, cpu, "f")); }),
               std::string("\"bitwise_not_cuda\" not implemented for 'Double'"));
    }
  }

  // mask.sum() counts the true elements: an int64 result (at::sum of an integral tensor).
  void sumOfBoolAndInt64IsInt64() {
    const Tensor m = transpose(fromDoubles({2, 3}, {1, 0, 1, 1, 1, 0}, DType::Bool), 0, 1);
    const Tensor s = sum(m);
    QCOMPARE(s.dtype(), DType::Int64);
    QCOMPARE(s.sizes(), Shape{});
    QCOMPARE(s.item(), 4.0);
    Tensor big = empty({2}, DType::Int64, nullptr, "big");
    big.data<int64_t>()[0] = int64_t{1} << 53;
    big.data<int64_t>()[1] = 1;
    QCOMPARE(*sum(big).data<int64_t>(), (int64_t{1} << 53) + 1);  // exact, not through double
    const DevicePtr meta = makeDevice(DeviceKind::Meta, {});
    QCOMPARE(sum(empty({3}, DType::Bool, meta, "m")).dtype(), DType::Int64);
    // Per dim: m is [[1,1],[0,1],[1,0]] (the transpose), rows sum to [2,1,1], columns to [2,2].
    const Tensor rows = sumDims(m, {1}, false);
    QCOMPARE(rows.dtype(), DType::Int64);
    QCOMPARE(rows.toDoubles(), (std::vector<double>{2, 1, 1}));
    QCOMPARE(sumDims(m, {0}, true).sizes(), (Shape{1, 2}));
    QCOMPARE(sumDims(m, {0}, true).toDoubles(), (std::vector<double>{2, 2}));
    // Summing a size-1 dim reduces nothing: still a new int64 tensor.
    const Tensor col = fromDoubles({3, 1}, {1, 0, 1}, DType::Bool);
    const Tensor same = sumDims(col, {1}, true);
    QCOMPARE(same.dtype(), DType::Int64);
    QCOMPARE(same.sizes(), (Shape{3, 1}));
    QCOMPARE(same.toDoubles(), (std::vector<double>{1, 0, 1}));
  }

  void nonzeroLikePyTorch() {
    const Tensor t = fromDoubles({2, 3}, {0, 1.5, 0, kNaN, 0, -2}, DType::Float32);
    const Tensor nz = nonzero(t);
    QCOMPARE(nz.dtype(), DType::Int64);
    QCOMPARE(nz.sizes(), (Shape{3, 2}));
    QCOMPARE(nz.toDoubles(), (std::vector<double>{0, 1, 1, 0, 1, 2}));
    QCOMPARE(nonzero(fromDoubles({4}, {0, 0, 0, 0}, DType::Bool)).sizes(), (Shape{0, 1}));
    QCOMPARE(nonzero(fromDoubles({}, {3}, DType::Int64)).sizes(), (Shape{1, 0}));
    QCOMPARE(nonzero(transpose(t, 0, 1)).toDoubles(),  // row-major over the view
             (std::vector<double>{0, 1, 1, 0, 2, 1}));
    const DevicePtr meta = makeDevice(DeviceKind::Meta, {});
    QVERIFY(!errorOf<std::invalid_argument>([&] {
               nonzero(empty({2}, DType::Bool, meta, "m"));
             }).empty());
  }

  // t[mask]: the selected sub-tensors in row-major order, a new contiguous tensor.
  void indexWithMask_data() {
    QTest::addColumn<Shape>("sizes");
    QTest::addColumn<Shape>("maskSizes");
    QTest::addColumn<std::vector<double>>("mask");
    QTest::addColumn<bool>("transposed");
    QTest::newRow("rows of [3,4]")
        << Shape{3, 4} << Shape{3} << std::vector<double>{1, 0, 1} << false;
    QTest::newRow("full mask of [3,4]")
        << Shape{3, 4} << Shape{3, 4} << std::vector<double>{1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1}
        << false;
    QTest::newRow("leading [2,3] of [2,3,4]")
        << Shape{2, 3, 4} << Shape{2, 3} << std::vector<double>{1, 0, 1, 0, 0, 1} << false;
    QTest::newRow("none true") << Shape{3, 4} << Shape{3} << std::vector<double>{0, 0, 0} << false;
    QTest::newRow("1-d") << Shape{5} << Shape{5} << std::vector<double>{0, 1, 1, 0, 1} << false;
    QTest::newRow("rows of a transposed [4,3] (strided rows)")
        << Shape{3, 4} << Shape{4} << std::vector<double>{1, 1, 0, 1} << true;
  }
  void indexWithMask() {
    QFETCH(Shape, sizes);
    QFETCH(Shape, maskSizes);
    QFETCH(std::vector<double>, mask);
    QFETCH(bool, transposed);
    const Tensor m = fromDoubles(maskSizes, mask, DType::Bool);
    const OpFn op = [m, transposed](const std::vector<Tensor>& x) {
      return matmulviz::indexWithMask(transposed ? transpose(x[0], 0, 1) : x[0], m);
    };
    Tensor x = randomTensor(sizes, DType::Float64, 7);
    x.setRequiresGrad(true);
    // The reference: walk the (maybe transposed) input row-major, keep the selected blocks.
    const Ref in = toRef(transposed ? transpose(x, 0, 1) : x);
    const int64_t k = static_cast<int64_t>(maskSizes.size());
    const int64_t inner = numelOf(in.sizes) / numelOf(maskSizes);
    Ref want{{0}, {}};
    want.sizes.insert(want.sizes.end(), in.sizes.begin() + k, in.sizes.end());
    for (size_t p = 0; p < mask.size(); ++p) {
      if (mask[p] == 0) continue;
      ++want.sizes[0];
      for (int64_t e = 0; e < inner; ++e)
        want.values.push_back(in.values[p * static_cast<size_t>(inner) + e]);
    }
    const Tensor out = op({x});
    QVERIFY(out.isContiguous());
    OPCHECK(checkTensor(out, want, DType::Float64, {0, 0}, "t[mask]"));
    QCOMPARE(QString::fromStdString(out.gradFn()->name()), QString("IndexBackward0"));
    const auto saved = out.gradFn()->savedTensors();
    QCOMPARE(saved.size(), size_t{1});
    QCOMPARE(saved[0].first, std::string("indices"));
    QVERIFY(saved[0].second.impl() == m.impl());  // the mask itself, as PyTorch saves it
    OPCHECK(checkGradients(op, {x}, 11));

    // The same on a cpu device: equal values and gradients, nothing left allocated.
    const DevicePtr cpu = makeDevice(DeviceKind::Cpu, {});
    {
      Tensor d = tensorOn(sizes, x.toDoubles(), DType::Float64, cpu, "x");
      d.setRequiresGrad(true);
      const Tensor dm = tensorOn(maskSizes, mask, DType::Bool, cpu, "mask");
      const Tensor dout = matmulviz::indexWithMask(transposed ? transpose(d, 0, 1) : d, dm);
      QCOMPARE(dout.deviceKind(), DeviceKind::Cpu);
      OPCHECK(checkTensor(dout, want, DType::Float64, {0, 0}, "t[mask] (cpu device)"));
      const std::vector<double> g = randomValues(dout.numel(), 5);
      dout.backward(tensorOn(dout.sizes(), g, DType::Float64, cpu, "g"));
      x.setGrad(Tensor());
      op({x}).backward(fromDoubles(dout.sizes(), g, DType::Float64));
      OPCHECK(checkTensor(d.grad(), toRef(x.grad()), DType::Float64, {0, 0}, "grad (cpu)"));
    }
    QCOMPARE(cpu->allocator().current().allocatedBytes, int64_t{0});
  }

  // As at::index: nonzero's [n, k] index first, then the output; the index dies with the op. A
  // host mask's index columns are copied to the device one by one (make_info).
  void indexWithMaskMemory() {
    const DevicePtr cpu = makeDevice(DeviceKind::Cpu, {});
    {
      const Tensor t = tensorOn({2, 3, 4}, std::vector<double>(24, 1), DType::Float32, cpu, "t");
      const std::vector<double> bits{1, 0, 1, 0, 0, 1};
      const Tensor dm = tensorOn({2, 3}, bits, DType::Bool, cpu, "mask");
      size_t from = cpu->allocator().events().size();
      const Tensor out = matmulviz::indexWithMask(t, dm);
      QCOMPARE(allocEvents(cpu, from),
               (std::vector<std::string>{"+nonzero output", "+indexed copy", "-nonzero output"}));
      QCOMPARE(out.sizes(), (Shape{3, 4}));

      from = cpu->allocator().events().size();
      const Tensor hostMask = fromDoubles({2, 3}, bits, DType::Bool);
      const Tensor out2 = matmulviz::indexWithMask(t, hostMask);
      QCOMPARE(allocEvents(cpu, from),
               (std::vector<std::string>{"+mask index copied to the device",
                                         "+mask index copied to the device", "+indexed copy",
                                         "-mask index copied to the device",
                                         "-mask index copied to the device"}));
      QCOMPARE(out2.toDoubles(), out.toDoubles());
    }
    QCOMPARE(cpu->allocator().current().allocatedBytes, int64_t{0});
  }

  // t[mask] = v: a one-element host value is masked_fill_ (no allocation, converted); a tensor
  // of values goes through nonzero's index, alive during the op only.
  void indexPutWithMask() {
    const DevicePtr cpu = makeDevice(DeviceKind::Cpu, {});
    {
      const Tensor t = tensorOn({3, 2}, {0, 1, 2, 3, 4, 5}, DType::Float32, cpu, "t");
      const Tensor m = tensorOn({3}, {1, 0, 1}, DType::Bool, cpu, "mask");
      size_t from = cpu->allocator().events().size();
      matmulviz::indexPutWithMask(t, m, fromDoubles({}, {-1.5}, DType::Float64));
      QCOMPARE(t.toDoubles(), (std::vector<double>{-1.5, -1.5, 2, 3, -1.5, -1.5}));
      QVERIFY(allocEvents(cpu, from).empty());

      from = cpu->allocator().events().size();
      matmulviz::indexPutWithMask(t, m, tensorOn({2, 1}, {7, 8}, DType::Float32, cpu, "v"));
      QCOMPARE(t.toDoubles(), (std::vector<double>{7, 7, 2, 3, 8, 8}));
      QCOMPARE(allocEvents(cpu, from),
               (std::vector<std::string>{"+v", "+nonzero output", "-nonzero output", "-v"}));

      matmulviz::indexPutWithMask(transpose(t, 0, 1), tensorOn({2}, {0, 1}, DType::Bool, cpu, "m"),
                                  fromDoubles({3}, {4, 5, 6}, DType::Float32));
      QCOMPARE(t.toDoubles(), (std::vector<double>{7, 4, 2, 5, 8, 6}));
      QCOMPARE(errorOf<std::invalid_argument>([&] {
                 matmulviz::indexPutWithMask(t, m, fromDoubles({3}, {1, 2, 3}, DType::Float32));
               }),
               std::string("shape mismatch: value tensor of shape [3] cannot be broadcast to "
                           "indexing result of shape [2, 2]"));
      QCOMPARE(errorOf<std::invalid_argument>([&] {
                 matmulviz::indexPutWithMask(t, m, fromDoubles({2}, {1, 2}, DType::Float64));
               }),
               std::string("Index put requires the source and destination dtypes match, got "
                           "Float for the destination and Double for the source."));
    }
    QCOMPARE(cpu->allocator().current().allocatedBytes, int64_t{0});
  }

  void indexWithMaskErrors() {
    const Tensor t = empty({3, 4}, DType::Float32, nullptr, "t");
    QCOMPARE(errorOf<std::out_of_range>([&] {
               matmulviz::indexWithMask(t, fromDoubles({2}, {1, 0}, DType::Bool));
             }),
             std::string("The shape of the mask [2] at index 0 does not match the shape of the "
                         "indexed tensor [3, 4] at index 0"));
    QCOMPARE(
        errorOf<std::out_of_range>([&] {
          matmulviz::indexWithMask(t, fromDoubles({3, 3}, std::vector<double>(9, 1), DType::Bool));
        }),
        std::string("The shape of the mask [3, 3] at index 1 does not match the shape of "
                    "the indexed tensor [3, 4] at index 1"));
    QCOMPARE(errorOf<std::out_of_range>([&] {
               matmulviz::indexWithMask(t, empty({3, 4, 1}, DType::Bool, nullptr, "m"));
             }),
             std::string("too many indices for tensor of dimension 2"));
    QVERIFY(!errorOf<std::invalid_argument>([&] {
               matmulviz::indexWithMask(t, fromDoubles({3}, {1, 0, 1}, DType::Int64));
             }).empty());
    const DevicePtr meta = makeDevice(DeviceKind::Meta, {});
    const std::string err = errorOf<std::invalid_argument>([&] {
      matmulviz::indexWithMask(empty({3, 4}, DType::Float32, meta, "t"),
                               empty({3}, DType::Bool, meta, "m"));
    });
    QVERIFY2(err.find("meta") != std::string::npos, err.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCompareOps)
#include "test_compare_ops.moc"

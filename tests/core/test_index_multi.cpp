// Advanced indexing with several index tensors (indexTensors), index_put_ through them
// (indexPut) and in-place assignment recorded as CopySlices (copyIntoRecorded): values and
// layouts as PyTorch 1.13 gives them, node names, saved tensors, gradients, PyTorch's error
// texts, and the allocator events (host indices copied to the device for the op only).

#include "core/autograd/node.h"
#include "core/memory/caching_allocator.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "op_check.h"

#include <QtTest/QtTest>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

template <class E, class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

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

std::vector<double> iota(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
  return v;
}

Tensor longs(const Shape& sizes, const std::vector<double>& v) {
  return fromDoubles(sizes, v, DType::Int64);
}

}  // namespace

class TestIndexMulti : public QObject {
  Q_OBJECT

 private slots:
  // x[[0, 2], [1, 3]], broadcast x[[[0], [2]], [1, 3]], and x[[1, 0], :, [2, 3]] (the indexed
  // dims apart: the broadcast dims first), values, shapes and strides from PyTorch 1.13.
  void valuesAndLayoutLikePyTorch() {
    const Tensor x34 = fromDoubles({3, 4}, iota(12), DType::Float32);
    Tensor y = indexTensors(x34, {longs({2}, {0, 2}), longs({2}, {1, 3})});
    QCOMPARE(y.sizes(), (Shape{2}));
    QCOMPARE(y.toDoubles(), (std::vector<double>{1, 11}));
    y = indexTensors(x34, {longs({2, 1}, {0, 2}), longs({2}, {1, 3})});
    QCOMPARE(y.sizes(), (Shape{2, 2}));
    QCOMPARE(y.strides(), (Shape{2, 1}));
    QCOMPARE(y.toDoubles(), (std::vector<double>{1, 3, 9, 11}));
    const Tensor x234 = fromDoubles({2, 3, 4}, iota(24), DType::Float32);
    y = indexTensors(x234, {longs({2}, {1, 0}), std::nullopt, longs({2}, {2, 3})});
    QCOMPARE(y.sizes(), (Shape{2, 3}));
    QCOMPARE(y.strides(), (Shape{3, 1}));
    QCOMPARE(y.toDoubles(), (std::vector<double>{14, 18, 22, 3, 7, 11}));
    // adjacent indexed dims after a whole dim stay in place: x[:, [0, 2], [1, -1]] -> [2, 2]
    y = indexTensors(x234, {std::nullopt, longs({2}, {0, 2}), longs({2}, {1, -1})});
    QCOMPARE(y.sizes(), (Shape{2, 2}));
    QCOMPARE(y.toDoubles(), (std::vector<double>{1, 11, 13, 23}));
  }

  void errorsLikePyTorch() {
    const Tensor x = fromDoubles({3, 4}, iota(12), DType::Float32);
    QCOMPARE(errorOf<std::out_of_range>([&] {
               indexTensors(x, {longs({2}, {0, 1}), longs({3}, {0, 1, 2})});
             }),
             std::string("shape mismatch: indexing tensors could not be broadcast together with "
                         "shapes [2], [3]"));
    QCOMPARE(errorOf<std::out_of_range>([&] {
               indexTensors(x, {longs({1}, {0}), longs({1}, {4})});
             }),
             std::string("index 4 is out of bounds for dimension 1 with size 4"));
    QCOMPARE(errorOf<std::invalid_argument>([&] {
               indexPut(x, {longs({2}, {0, 1}), longs({2}, {0, 1})},
                        fromDoubles({3}, {1, 2, 3}, DType::Float32));
             }),
             std::string("shape mismatch: value tensor of shape [3] cannot be broadcast to "
                         "indexing result of shape [2]"));
  }

  // IndexBackward0 saves both index tensors; its gradient accumulates repeated positions.
  void backwardAccumulates() {
    Tensor x = fromDoubles({3, 4}, iota(12), DType::Float64);
    x.setRequiresGrad(true);
    const Tensor i = longs({3}, {0, 0, 2}), j = longs({3}, {1, 1, 3});
    const Tensor y = indexTensors(x, {i, j});
    QCOMPARE(y.gradFn()->name(), std::string("IndexBackward0"));
    const auto saved = y.gradFn()->savedTensors();
    QCOMPARE(saved.size(), size_t{2});
    QCOMPARE(saved[0].first, std::string("indices"));
    QVERIFY(saved[0].second.impl() == i.impl() && saved[1].second.impl() == j.impl());
    y.backward(fromDoubles({3}, {1, 10, 100}, DType::Float64));
    std::vector<double> want(12, 0);
    want[1] = 11;
    want[11] = 100;
    QCOMPARE(x.grad().toDoubles(), want);
  }

  // At::index's memory: the host indices' device copies, then the output; the copies die with
  // the op. Device indices: the output only.
  void memoryEvents() {
    const DevicePtr cpu = makeDevice(DeviceKind::Cpu, {});
    {
      const Tensor t = tensorOn({3, 4}, iota(12), DType::Float32, cpu, "t");
      size_t from = cpu->allocator().events().size();
      const Tensor out = indexTensors(t, {longs({2}, {0, 2}), longs({2}, {1, 3})});
      QCOMPARE(allocEvents(cpu, from),
               (std::vector<std::string>{
                   "+index copied to the device", "+index copied to the device", "+indexed copy",
                   "-index copied to the device", "-index copied to the device"}));
      const Tensor di = tensorOn({2}, {0, 2}, DType::Int64, cpu, "i");
      from = cpu->allocator().events().size();
      const Tensor out2 = indexTensors(t, {di, di});
      QCOMPARE(allocEvents(cpu, from), (std::vector<std::string>{"+indexed copy"}));
      QCOMPARE(out2.toDoubles(), (std::vector<double>{0, 10}));
      // index_put_: nothing but the host index copies
      from = cpu->allocator().events().size();
      indexPut(t, {longs({2}, {0, 1}), di}, fromDoubles({}, {-1}, DType::Float32));
      QCOMPARE(allocEvents(cpu, from), (std::vector<std::string>{"+index copied to the device",
                                                                 "-index copied to the device"}));
      from = cpu->allocator().events().size();
      indexPut(t, {di, di}, tensorOn({2}, {7, 8}, DType::Float32, cpu, "v"));
      QCOMPARE(allocEvents(cpu, from), (std::vector<std::string>{"+v", "-v"}));
      QCOMPARE(t.toDoubles(), (std::vector<double>{7, 1, 2, 3, 4, 5, -1, 7, 8, 9, 8, 11}));
    }
    QCOMPARE(cpu->allocator().current().allocatedBytes, int64_t{0});
  }

  // y = x * 2; y[0] = 0 (golden setitem_records_copy_slices); and y = x.clone(); y[1:] = z with
  // z broadcast: through ExpandBackward0 (copy_to's expand_inplace), z's gradient summed.
  void copySlices() {
    Tensor x = fromDoubles({3}, {1, 1, 1}, DType::Float32);
    x.setRequiresGrad(true);
    const Tensor y = mul(x, fromDoubles({}, {2}, DType::Float32));
    copyIntoRecorded(y, select(y, 0, 0), fromDoubles({}, {0}, DType::Float32));
    QCOMPARE(y.gradFn()->name(), std::string("CopySlices"));
    QCOMPARE(y.toDoubles(), (std::vector<double>{0, 2, 2}));
    sum(y).backward(fromDoubles({}, {1}, DType::Float32));
    QCOMPARE(x.grad().toDoubles(), (std::vector<double>{0, 2, 2}));

    Tensor a = fromDoubles({2, 3}, iota(6), DType::Float64);
    a.setRequiresGrad(true);
    Tensor z = fromDoubles({3}, {5, 6, 7}, DType::Float64);
    z.setRequiresGrad(true);
    const Tensor b = clone(a);
    copyIntoRecorded(b, slice(b, 0, 1, 2), z);
    QCOMPARE(b.toDoubles(), (std::vector<double>{0, 1, 2, 5, 6, 7}));
    QCOMPARE(b.gradFn()->nextEdges.size(), size_t{2});
    QCOMPARE(b.gradFn()->nextEdges[1].fn->name(), std::string("ExpandBackward0"));
    b.backward(fromDoubles({2, 3}, {1, 2, 3, 4, 5, 6}, DType::Float64));
    QCOMPARE(a.grad().toDoubles(), (std::vector<double>{1, 2, 3, 0, 0, 0}));
    QCOMPARE(z.grad().toDoubles(), (std::vector<double>{4, 5, 6}));

    QCOMPARE(errorOf<std::logic_error>([&] {
               copyIntoRecorded(a, select(a, 0, 0), fromDoubles({}, {0}, DType::Float64));
             }),
             std::string("a leaf Variable that requires grad is being used in an in-place "
                         "operation."));
    const Tensor v = slice(b, 0, 0, 1);  // a view of b, which requires grad
    QVERIFY(!errorOf<NotSupportedError>([&] {
               copyIntoRecorded(v, select(v, 0, 0), fromDoubles({}, {0}, DType::Float64));
             }).empty());
  }

  // y = x.clone(); y[[0, 2], [1, 3]] = v: IndexPutBackward0; x's gradient zero where written,
  // v's the gradient at those places; a broadcast v's summed.
  void indexPutBackward() {
    Tensor x = fromDoubles({3, 4}, iota(12), DType::Float64);
    x.setRequiresGrad(true);
    Tensor v = fromDoubles({2}, {5, 6}, DType::Float64);
    v.setRequiresGrad(true);
    const Tensor y = clone(x);
    const Tensor i = longs({2}, {0, 2}), j = longs({2}, {1, 3});
    indexPut(y, {i, j}, v);
    QCOMPARE(y.gradFn()->name(), std::string("IndexPutBackward0"));
    QCOMPARE(y.gradFn()->savedTensors().size(), size_t{2});
    QCOMPARE(y.toDoubles(), (std::vector<double>{0, 5, 2, 3, 4, 5, 6, 7, 8, 9, 10, 6}));
    y.backward(fromDoubles({3, 4}, iota(12), DType::Float64));
    QCOMPARE(x.grad().toDoubles(), (std::vector<double>{0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0}));
    QCOMPARE(v.grad().toDoubles(), (std::vector<double>{1, 11}));

    Tensor w = fromDoubles({}, {7}, DType::Float64);
    w.setRequiresGrad(true);
    const Tensor z = clone(x);
    indexPut(z, {std::nullopt, longs({2}, {0, 0})}, w);  // z[:, [0, 0]] = w
    z.backward(fromDoubles({3, 4}, iota(12), DType::Float64));
    QCOMPARE(w.grad().toDoubles(), (std::vector<double>{2 * (0 + 4 + 8)}));
    QCOMPARE(errorOf<std::logic_error>([&] {
               indexPut(x, {i, j}, v);
             }),
             std::string("a leaf Variable that requires grad is being used in an in-place "
                         "operation."));
  }

  // The forward copy allocates nothing.
  void copySlicesMemory() {
    const DevicePtr cpu = makeDevice(DeviceKind::Cpu, {});
    {
      Tensor t = tensorOn({4}, iota(4), DType::Float32, cpu, "t");
      t.setRequiresGrad(true);
      const Tensor y = clone(t);
      const size_t from = cpu->allocator().events().size();
      copyIntoRecorded(y, slice(y, 0, 0, 2), fromDoubles({}, {9}, DType::Float32));
      QVERIFY(allocEvents(cpu, from).empty());
      QCOMPARE(y.gradFn()->name(), std::string("CopySlices"));
    }
    QCOMPARE(cpu->allocator().current().allocatedBytes, int64_t{0});
  }
};

QTEST_GUILESS_MAIN(TestIndexMulti)
#include "test_index_multi.moc"

// View semantics as PyTorch's: which ops share storage and allocate nothing, which copy, the
// sizes/strides/storage_offset they produce, the errors they raise, the device copy of a host
// index, and autograd's saving rules (what keeps which allocation alive, and when it goes).
// Every memory check runs on a cpu device (HostBacking), whose allocator accounts like CUDA's.

#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/memory/host_backing.h"
#include "core/ops/ops.h"
#include "op_check.h"

#include <QtTest/QtTest>

#include <functional>
#include <stdexcept>
#include <string>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

using UnaryOp = std::function<Tensor(const Tensor&)>;

/// The view and saving rules, in the forum post's PyTorch: no cuBLAS workspace among the blocks.
DevicePtr cpuDevice() {
  static HostBacking backing(int64_t{1} << 30);  // 1 GiB of address space: small tensors only
  return std::make_shared<DeviceContext>(
      DeviceKind::Cpu, backing, CachingAllocator::Options{std::nullopt, true, forumPyTorchModel()});
}

int64_t allocated(const DevicePtr& d) {
  return d->allocator().current().allocatedBytes;
}

/// PyTorch's round_size: max(512, round_up(bytes, 512)).
int64_t blockBytes(int64_t bytes) {
  return std::max<int64_t>(512, (bytes + 511) / 512 * 512);
}

bool hasHolder(const Tensor& t, const std::string& fragment) {
  for (const auto& [why, count] : t.storage().holders())
    if (why.find(fragment) != std::string::npos && count > 0) return true;
  return false;
}

std::string holdersOf(const Tensor& t) {
  std::string s;
  for (const auto& [why, count] : t.storage().holders())
    s += "'" + why + "' x" + std::to_string(count) + "; ";
  return s.empty() ? "(none)" : s;
}

template <typename Exception>
void expectThrow(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
  } catch (const Exception& e) {
    const std::string what = e.what();
    QVERIFY2(what.find(fragment) != std::string::npos,
             ("message '" + what + "' lacks '" + fragment + "'").c_str());
    return;
  } catch (const std::exception& e) {
    QFAIL((std::string("wrong exception type: ") + e.what()).c_str());
  }
  QFAIL(("no exception; expected one saying '" + fragment + "'").c_str());
}

}  // namespace

Q_DECLARE_METATYPE(UnaryOp)
Q_DECLARE_METATYPE(matmulviz::Shape)

class TestViews : public QObject {
  Q_OBJECT

 private slots:
  /// Views share the input's storage and allocate nothing.
  void viewsAllocateNothing_data() {
    QTest::addColumn<Shape>("sizes");
    QTest::addColumn<UnaryOp>("op");
    auto add = [](const char* name, Shape sizes, UnaryOp op) {
      QTest::newRow(name) << sizes << op;
    };
    add("slice step 2", {5, 7}, [](const Tensor& t) { return slice(t, 1, 1, 7, 2); });
    add("slice negative start", {5, 7}, [](const Tensor& t) { return slice(t, 0, -2, 5); });
    add("narrow", {5, 7}, [](const Tensor& t) { return narrow(t, 1, 2, 3); });
    add("select negative index", {5, 7}, [](const Tensor& t) { return select(t, 0, -1); });
    add("view -1", {5, 7}, [](const Tensor& t) { return view(t, {-1}); });
    add("reshape (view case)", {5, 7}, [](const Tensor& t) { return reshape(t, {7, 5}); });
    add("permute", {2, 3, 5}, [](const Tensor& t) { return permute(t, {2, 0, 1}); });
    add("transpose", {5, 7}, [](const Tensor& t) { return transpose(t, 0, 1); });
    add("mT", {2, 5, 7}, [](const Tensor& t) { return mT(t); });
    add("expand", {5, 1}, [](const Tensor& t) { return expand(t, {3, 5, 7}); });
    add("unsqueeze", {5, 7}, [](const Tensor& t) { return unsqueeze(t, 1); });
    add("squeeze", {5, 1, 7}, [](const Tensor& t) { return squeeze(t, 1); });
    add("contiguous of a contiguous tensor", {5, 7}, [](const Tensor& t) { return contiguous(t); });
    add("index with a 0-dim int64 tensor", {5, 7},
        [](const Tensor& t) { return index(t, int64Tensor({}, {3})); });
    add("index with a 0-dim negative index", {5, 7},
        [](const Tensor& t) { return index(t, int64Tensor({}, {-5})); });
    add("chain: select of a slice of a transpose", {5, 7},
        [](const Tensor& t) { return select(slice(transpose(t, 0, 1), 0, 1, 7, 3), 1, 2); });
  }
  void viewsAllocateNothing() {
    QFETCH(Shape, sizes);
    QFETCH(UnaryOp, op);
    const DevicePtr device = cpuDevice();
    Tensor x = randomTensor(sizes, DType::Float32, 1, device);
    x.setRequiresGrad(true);  // a view of a tensor requiring grad still allocates nothing
    const int64_t before = allocated(device);
    const size_t events = device->allocator().events().size();
    const Tensor v = op(x);
    QCOMPARE(allocated(device), before);
    QCOMPARE(device->allocator().events().size(), events);
    QVERIFY(v.storagePtr() == x.storagePtr());
  }

  /// Copies allocate one new block of the rounded size: advanced indexing with a >= 1-d index,
  /// reshape of a non-viewable tensor, clone, contiguous of a non-contiguous tensor, products.
  void copiesAllocate_data() {
    QTest::addColumn<Shape>("sizes");
    QTest::addColumn<UnaryOp>("op");
    QTest::addColumn<qint64>("outBytes");
    auto add = [](const char* name, Shape sizes, UnaryOp op, qint64 bytes) {
      QTest::newRow(name) << sizes << op << bytes;
    };
    add(
        "index with a 1-d index", {5, 7},
        [](const Tensor& t) {
          return index(t, int64Tensor({3}, {4, 0, 4}));
        },
        3 * 7 * 4);
    add(
        "index with a 1-element 1-d index", {5, 7},
        [](const Tensor& t) { return index(t, int64Tensor({1}, {2})); }, 7 * 4);
    add(
        "index with a 2-d index", {5, 7},
        [](const Tensor& t) {
          return index(t, int64Tensor({2, 1}, {1, 2}));
        },
        2 * 7 * 4);
    add(
        "reshape of a transposed tensor", {5, 7},
        [](const Tensor& t) { return reshape(transpose(t, 0, 1), {-1}); }, 35 * 4);
    add(
        "reshape of an expanded tensor", {5, 1},
        [](const Tensor& t) {
          return reshape(expand(t, {3, 5, 7}), {15, 7});
        },
        105 * 4);
    add(
        "clone", {5, 7}, [](const Tensor& t) { return clone(t); }, 35 * 4);
    add(
        "contiguous of a transposed tensor", {5, 7},
        [](const Tensor& t) { return contiguous(transpose(t, 0, 1)); }, 35 * 4);
    add(
        "cat", {5, 7},
        [](const Tensor& t) {
          return cat({t, t, t}, 0);
        },
        3 * 35 * 4);
    add(
        "mm", {5, 7}, [](const Tensor& t) { return mm(t, transpose(t, 0, 1)); }, 25 * 4);
    add(
        "large block (> 1 MiB) index", {600, 700},
        [](const Tensor& t) {
          return index(t, int64Tensor({1000}, std::vector<int64_t>(1000, 3)));
        },
        1000 * 700 * 4);
  }
  void copiesAllocate() {
    QFETCH(Shape, sizes);
    QFETCH(UnaryOp, op);
    QFETCH(qint64, outBytes);
    const DevicePtr device = cpuDevice();
    const Tensor x = randomTensor(sizes, DType::Float32, 2, device);
    const int64_t before = allocated(device);
    const Tensor out = op(x);
    QVERIFY(out.storagePtr() != x.storagePtr());
    QCOMPARE(out.storage().nbytes(), outBytes);
    // What stays allocated after the op is the output only (temporaries are gone).
    QCOMPARE(allocated(device) - before, blockBytes(outBytes));
  }

  /// sizes, strides and storage_offset as PyTorch gives them (numbers from its rules in
  /// TensorShape.cpp and ExpandUtils.cpp: inferExpandGeometry).
  void geometry_data() {
    QTest::addColumn<Shape>("sizes");
    QTest::addColumn<UnaryOp>("op");
    QTest::addColumn<Shape>("wantSizes");
    QTest::addColumn<Shape>("wantStrides");
    QTest::addColumn<qint64>("wantOffset");
    auto add = [](const char* name, Shape in, UnaryOp op, Shape s, Shape st, qint64 off) {
      QTest::newRow(name) << in << op << s << st << off;
    };
    // x = torch.empty(4, 5, 6): strides (30, 6, 1)
    const Shape x{4, 5, 6};
    add(
        "x[:, 1:5:2]", x, [](const Tensor& t) { return slice(t, 1, 1, 5, 2); }, {4, 2, 6},
        {30, 12, 1}, 6);
    add(
        "x[..., -4:]", x, [](const Tensor& t) { return slice(t, -1, -4, 6); }, {4, 5, 4},
        {30, 6, 1}, 2);
    add(
        "x[1::2]", x, [](const Tensor& t) { return slice(t, 0, 1, 4, 2); }, {2, 5, 6}, {60, 6, 1},
        30);
    add(
        "x[:, 7:9] (empty)", x, [](const Tensor& t) { return slice(t, 1, 7, 9); }, {4, 0, 6},
        {30, 6, 1}, 30);
    add(
        "x.narrow(2, -3, 2)", x, [](const Tensor& t) { return narrow(t, 2, -3, 2); }, {4, 5, 2},
        {30, 6, 1}, 3);
    add(
        "x.select(1, -2)", x, [](const Tensor& t) { return select(t, 1, -2); }, {4, 6}, {30, 1},
        18);
    add(
        "x[3]", x, [](const Tensor& t) { return select(t, 0, 3); }, {5, 6}, {6, 1}, 90);
    add(
        "x[torch.tensor(-1)]", x, [](const Tensor& t) { return index(t, int64Tensor({}, {-1})); },
        {5, 6}, {6, 1}, 90);
    add(
        "x[1::2][:, :, 3]", x, [](const Tensor& t) { return select(slice(t, 0, 1, 4, 2), 2, 3); },
        {2, 5}, {60, 6}, 33);
    add(
        "x.permute(2, 0, 1)", x,
        [](const Tensor& t) {
          return permute(t, {2, 0, 1});
        },
        {6, 4, 5}, {1, 30, 6}, 0);
    add(
        "x.transpose(0, 2)", x, [](const Tensor& t) { return transpose(t, 0, 2); }, {6, 5, 4},
        {1, 6, 30}, 0);
    add(
        "x[1:].permute(1, 2, 0)", x,
        [](const Tensor& t) {
          return permute(slice(t, 0, 1, 4), {1, 2, 0});
        },
        {5, 6, 3}, {6, 1, 30}, 30);
    add(
        "x.unsqueeze(1)", x, [](const Tensor& t) { return unsqueeze(t, 1); }, {4, 1, 5, 6},
        {30, 30, 6, 1}, 0);
    add(
        "x.unsqueeze(-1)", x, [](const Tensor& t) { return unsqueeze(t, -1); }, {4, 5, 6, 1},
        {30, 6, 1, 1}, 0);
    add(
        "x.view(20, 6)", x,
        [](const Tensor& t) {
          return view(t, {20, 6});
        },
        {20, 6}, {6, 1}, 0);
    add(
        "x[:, :, 1:4].view(4, 5, 3, 1)", x,
        [](const Tensor& t) {
          return view(slice(t, 2, 1, 4), {4, 5, 3, 1});
        },
        {4, 5, 3, 1}, {30, 6, 1, 1}, 1);
    // y = torch.empty(3, 1): strides (1, 1)
    add(
        "y.expand(2, 3, 5)", {3, 1},
        [](const Tensor& t) {
          return expand(t, {2, 3, 5});
        },
        {2, 3, 5}, {0, 1, 0}, 0);
    add(
        "y.expand(-1, 4)", {3, 1},
        [](const Tensor& t) {
          return expand(t, {-1, 4});
        },
        {3, 4}, {1, 0}, 0);
    add(
        "y.expand(3, 1) keeps strides", {3, 1},
        [](const Tensor& t) {
          return expand(t, {3, 1});
        },
        {3, 1}, {1, 1}, 0);
    // z = torch.empty(5): a new leading dim of size 1 gets stride size*stride of the next dim
    add(
        "z.expand(1, 5)", {5},
        [](const Tensor& t) {
          return expand(t, {1, 5});
        },
        {1, 5}, {5, 1}, 0);
    add(
        "z.expand(3, 1, 5)", {5},
        [](const Tensor& t) {
          return expand(t, {3, 1, 5});
        },
        {3, 1, 5}, {0, 5, 1}, 0);
    add(
        "torch.empty(()).expand(2, 1)", {},
        [](const Tensor& t) {
          return expand(t, {2, 1});
        },
        {2, 1}, {0, 0}, 0);
  }
  void geometry() {
    QFETCH(Shape, sizes);
    QFETCH(UnaryOp, op);
    QFETCH(Shape, wantSizes);
    QFETCH(Shape, wantStrides);
    QFETCH(qint64, wantOffset);
    const Tensor v = op(randomTensor(sizes, DType::Float32, 3));
    QCOMPARE(v.sizes(), wantSizes);
    QCOMPARE(v.strides(), wantStrides);
    QCOMPARE(v.storageOffset(), wantOffset);
  }

  /// A tensor of 0 bytes takes no block: PyTorch's CUDA allocator skips malloc for size 0
  /// (NativeCachingAllocator::allocate: `if (size != 0) malloc(...)`).
  void emptyTensorAllocatesNothing() {
    const DevicePtr device = cpuDevice();
    const Tensor t = empty({0, 3}, DType::Float32, device, "empty");
    QCOMPARE(allocated(device), int64_t{0});
  }

  void viewErrors() {
    const Tensor x = randomTensor({3, 5}, DType::Float32, 4);
    OPCHECK(expectThrow<std::invalid_argument>([&] { view(transpose(x, 0, 1), {-1}); },
                                               "view size is not compatible"));
    OPCHECK(expectThrow<std::invalid_argument>([&] { view(slice(x, 1, 0, 5, 2), {9}); },
                                               "view size is not compatible"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] {
          view(x, {4, -1});
        },
        "is invalid for input of size 15"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] {
          view(x, {-1, -1});
        },
        "only one dimension can be inferred"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] {
          reshape(x, {2, 7});
        },
        "shape '[2, 7]' is invalid for input of size 15"));
    // Past the end is a RuntimeError in PyTorch (TORCH_CHECK), not an IndexError.
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] { narrow(x, 1, 3, 3); }, "start (3) + length (3) exceeds dimension size (5)."));
  }

  void badDims_data() {
    QTest::addColumn<UnaryOp>("op");
    auto add = [](const char* name, UnaryOp op) { QTest::newRow(name) << op; };
    add("slice dim 2 of 2-d", [](const Tensor& t) { return slice(t, 2, 0, 1); });
    add("slice dim -3 of 2-d", [](const Tensor& t) { return slice(t, -3, 0, 1); });
    add("narrow dim 2", [](const Tensor& t) { return narrow(t, 2, 0, 1); });
    add("narrow start -6 of size 5", [](const Tensor& t) { return narrow(t, 1, -6, 1); });
    add("select dim -3", [](const Tensor& t) { return select(t, -3, 0); });
    add("select index 3 of size 3", [](const Tensor& t) { return select(t, 0, 3); });
    add("select index -4 of size 3", [](const Tensor& t) { return select(t, 0, -4); });
    add("transpose dim 2", [](const Tensor& t) { return transpose(t, 0, 2); });
    add("permute dim 5", [](const Tensor& t) { return permute(t, {0, 5}); });
    add("unsqueeze dim 3 of 2-d", [](const Tensor& t) { return unsqueeze(t, 3); });
    add("unsqueeze dim -4 of 2-d", [](const Tensor& t) { return unsqueeze(t, -4); });
    add("squeeze dim 2", [](const Tensor& t) { return squeeze(t, 2); });
    add("cat dim 2", [](const Tensor& t) { return cat({t, t}, 2); });
    add("select of a 0-dim tensor",
        [](const Tensor& t) { return select(select(select(t, 0, 0), 0, 0), 0, 0); });
  }
  void badDims() {
    QFETCH(UnaryOp, op);
    const Tensor x = randomTensor({3, 5}, DType::Float32, 5);
    try {
      op(x);
    } catch (const std::out_of_range&) {
      return;
    } catch (const std::exception& e) {
      QFAIL((std::string("not std::out_of_range: ") + e.what()).c_str());
    }
    QFAIL("no exception");
  }

  void indexOutOfBounds_data() {
    QTest::addColumn<Shape>("qSizes");
    QTest::addColumn<std::vector<qint64>>("q");
    QTest::addColumn<QString>("message");
    QTest::newRow("5 of size 5") << Shape{2} << std::vector<qint64>{0, 5}
                                 << "index 5 is out of bounds for dimension 0 with size 5";
    QTest::newRow("-6 of size 5") << Shape{3} << std::vector<qint64>{1, -6, 2}
                                  << "index -6 is out of bounds for dimension 0 with size 5";
    QTest::newRow("2-d index") << Shape{2, 2} << std::vector<qint64>{0, 1, 2, 7}
                               << "index 7 is out of bounds";
    QTest::newRow("0-dim index 5") << Shape{} << std::vector<qint64>{5}
                                   << "index 5 is out of bounds for dimension 0 with size 5";
  }
  void indexOutOfBounds() {
    QFETCH(Shape, qSizes);
    QFETCH(std::vector<qint64>, q);
    QFETCH(QString, message);
    const DevicePtr device = cpuDevice();
    const Tensor x = randomTensor({5, 3}, DType::Float32, 6, device);
    const int64_t before = allocated(device);
    const Tensor qt = int64Tensor(qSizes, std::vector<int64_t>(q.begin(), q.end()));
    OPCHECK(expectThrow<std::out_of_range>([&] { index(x, qt); }, message.toStdString()));
    QCOMPARE(allocated(device), before);  // checked before anything is allocated
  }

  void productErrors() {
    const Tensor a = randomTensor({3, 5}, DType::Float32, 7);
    const Tensor b = randomTensor({4, 7}, DType::Float32, 8);
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] { matmul(a, b); }, "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x7)"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] { matmul(a, randomTensor({4}, DType::Float32, 9)); }, "size mismatch, got 3, 3x5,4"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] { matmul(randomTensor({3}, DType::Float32, 9), randomTensor({4}, DType::Float32, 9)); },
        "inconsistent tensor size, expected tensor [3] and src [4]"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] {
          matmul(randomTensor({2, 3, 5}, DType::Float32, 9),
                 randomTensor({3, 4, 2}, DType::Float32, 9));
        },
        "must match the size of tensor b (3) at non-singleton dimension 0"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] {
          matmul(randomTensor({2, 3, 5}, DType::Float32, 9),
                 randomTensor({3, 5, 2}, DType::Float32, 9));
        },
        "must match the size"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] { matmul(randomTensor({}, DType::Float32, 9), a); }, "at least 1D"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] { mm(a, b); }, "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x7)"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] {
          bmm(randomTensor({2, 3, 5}, DType::Float32, 9),
              randomTensor({3, 5, 2}, DType::Float32, 9));
        },
        "Expected size for first two dimensions of batch2 tensor"));
    OPCHECK(expectThrow<std::invalid_argument>(
        [&] {
          mm(a, randomTensor({5, 2}, DType::Float64, 9));
        },
        "expected scalar type Float but found Double"));
  }

  /// A host index used on a device tensor is copied to the device (N * 8 bytes) for the
  /// gather and freed before the op ends; the output stays.
  void hostIndexDeviceCopy_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<bool>("fused");
    QTest::newRow("index N=3") << 3 << false;
    QTest::newRow("index N=70 (560 bytes: 1024-byte block)") << 70 << false;
    QTest::newRow("gatherBmm N=5") << 5 << true;
  }
  void hostIndexDeviceCopy() {
    QFETCH(int, N);
    QFETCH(bool, fused);
    const DevicePtr device = cpuDevice();
    const Tensor c = randomTensor({4, 3, 5}, DType::Float32, 10, device, "c");
    std::vector<int64_t> qv(static_cast<size_t>(N));
    for (int i = 0; i < N; ++i) qv[i] = (i * 7) % 4;
    const Tensor q = int64Tensor({N}, qv);
    QCOMPARE(q.deviceKind(), DeviceKind::Host);
    const Tensor a = randomTensor({N, 2, 3}, DType::Float32, 11, device, "a");
    const size_t first = device->allocator().events().size();
    const int64_t before = allocated(device);
    const Tensor out = fused ? gatherBmm(a, c, q) : index(c, q);
    const auto& alloc = device->allocator();
    const auto& events = alloc.events();
    // Find the Alloc of the index copy: a request of exactly N * 8 bytes.
    int64_t copyId = -1;
    size_t allocAt = 0, freeAt = 0;
    for (size_t i = first; i < events.size(); ++i) {
      if (events[i].kind == MemoryEventKind::Alloc &&
          alloc.record(events[i].allocationId).requestedBytes == int64_t{N} * 8 &&
          events[i].allocationId != out.storage().allocationId()) {
        copyId = events[i].allocationId;
        allocAt = i;
        break;
      }
    }
    QVERIFY2(copyId != -1, "no allocation of N * 8 bytes for the index copy");
    QCOMPARE(events[allocAt].bytes, blockBytes(int64_t{N} * 8));
    for (size_t i = allocAt + 1; i < events.size(); ++i)
      if (events[i].kind == MemoryEventKind::Free && events[i].allocationId == copyId) freeAt = i;
    QVERIFY2(freeAt != 0, "the index copy was never freed");
    QVERIFY(!alloc.record(copyId).alive);
    // Freed while the op still runs: the Free event belongs to the op itself.
    QCOMPARE(QString::fromStdString(alloc.opNames()[events[freeAt].opId]),
             QString(fused ? "gather_bmm" : "index"));
    QVERIFY(alloc.record(out.storage().allocationId()).alive);
    QCOMPARE(allocated(device) - before, blockBytes(out.nbytes()));
  }

  /// mm/bmm save mat2 iff self requires grad, self iff mat2 requires grad
  /// (tools/autograd/derivatives.yaml); backward releases them.
  void productSavingRules_data() {
    QTest::addColumn<bool>("batched");
    QTest::addColumn<bool>("selfGrad");
    QTest::addColumn<bool>("mat2Grad");
    for (bool batched : {false, true})
      for (bool s : {false, true})
        for (bool m : {false, true}) {
          const std::string name = std::string(batched ? "bmm" : "mm") + (s ? " self" : "") +
                                   (m ? " mat2" : "") + (s || m ? " requires grad" : " no grad");
          QTest::newRow(name.c_str()) << batched << s << m;
        }
  }
  void productSavingRules() {
    QFETCH(bool, batched);
    QFETCH(bool, selfGrad);
    QFETCH(bool, mat2Grad);
    const DevicePtr device = cpuDevice();
    Tensor a =
        randomTensor(batched ? Shape{2, 3, 5} : Shape{3, 5}, DType::Float32, 12, device, "a");
    Tensor b =
        randomTensor(batched ? Shape{2, 5, 7} : Shape{5, 7}, DType::Float32, 13, device, "b");
    a.setRequiresGrad(selfGrad);
    b.setRequiresGrad(mat2Grad);
    const int64_t before = allocated(device);
    const Tensor out = batched ? bmm(a, b) : mm(a, b);
    QCOMPARE(allocated(device) - before, blockBytes(out.nbytes()));  // saving costs nothing new
    const std::string node = batched ? "BmmBackward0" : "MmBackward0";
    QCOMPARE(hasHolder(b, "saved as mat2 of " + node), selfGrad);
    QCOMPARE(hasHolder(a, "saved as self of " + node), mat2Grad);
    if (!selfGrad) QVERIFY2(b.storage().holders().empty(), holdersOf(b).c_str());
    if (!mat2Grad) QVERIFY2(a.storage().holders().empty(), holdersOf(a).c_str());
    QCOMPARE(out.requiresGrad(), selfGrad || mat2Grad);
    if (!out.requiresGrad()) {
      QVERIFY(!out.gradFn());
      return;
    }
    QCOMPARE(QString::fromStdString(out.gradFn()->name()), QString::fromStdString(node));
    out.backward(tensorOn(out.sizes(), randomValues(out.numel(), 14), DType::Float32, device, "g"));
    QVERIFY2(a.storage().holders().empty(), holdersOf(a).c_str());
    QVERIFY2(b.storage().holders().empty(), holdersOf(b).c_str());
    QCOMPARE(a.grad().defined(), selfGrad);
    QCOMPARE(b.grad().defined(), mat2Grad);
  }

  /// CatBackward0 saves no tensors (only sizes); gatherBmm saves references to a and c by the
  /// same rule as bmm, and nothing new.
  void catSavesNothing() {
    const DevicePtr device = cpuDevice();
    Tensor a = randomTensor({2, 3}, DType::Float32, 15, device, "a");
    Tensor b = randomTensor({4, 3}, DType::Float32, 16, device, "b");
    a.setRequiresGrad(true);
    b.setRequiresGrad(true);
    const int64_t before = allocated(device);
    const Tensor out = cat({a, b}, 0);
    QCOMPARE(allocated(device) - before, blockBytes(out.nbytes()));
    QVERIFY2(a.storage().holders().empty(), holdersOf(a).c_str());
    QVERIFY2(b.storage().holders().empty(), holdersOf(b).c_str());
    QCOMPARE(QString::fromStdString(out.gradFn()->name()), QString("CatBackward0"));
  }

  /// split: one SplitBackward0 node, each piece its output output_nr; backward through two of
  /// three pieces gives each its own gradient and zeros for the unused one (split_backward).
  void splitIsOneNodeWithSeveralOutputs() {
    const DevicePtr device = cpuDevice();
    Tensor x = tensorOn({2, 5}, std::vector<double>(10, 1.0), DType::Float32, device, "x");
    x.setRequiresGrad(true);
    const std::vector<Tensor> parts = split(x, 2, 1);
    QCOMPARE(parts.size(), size_t{3});
    for (size_t i = 0; i < parts.size(); ++i) {
      QCOMPARE(parts[i].gradFn(), parts[0].gradFn());
      QCOMPARE(parts[i].outputNr(), static_cast<uint32_t>(i));
    }
    QCOMPARE(QString::fromStdString(parts[0].gradFn()->name()), QString("SplitBackward0"));
    QCOMPARE(parts[2].size(1), int64_t{1});
    const Tensor y = add(sum(parts[0]), sum(mul(parts[2], parts[2])));
    y.backward(tensorOn({}, {1.0}, DType::Float32, device, "g"));
    QCOMPARE(x.grad().toDoubles(), (std::vector<double>{1, 1, 0, 0, 2, 1, 1, 0, 0, 2}));
  }

  /// A view made under NoGradGuard of a tensor that requires grad requires grad, but no gradient
  /// reaches it: an op on it with grad mode on records a node whose edge leads nowhere.
  void noGradViewRequiresGradWithoutAccumulator() {
    const DevicePtr device = cpuDevice();
    Tensor x = tensorOn({3}, {1, 2, 3}, DType::Float32, device, "x");
    x.setRequiresGrad(true);
    Tensor v;
    {
      NoGradGuard noGrad;
      v = view(x, {3});
    }
    QVERIFY(v.requiresGrad());
    QVERIFY(v.isLeaf());
    const Tensor y = sum(v);
    QVERIFY(y.requiresGrad());
    QVERIFY(!y.gradFn()->needsInputGrad(0));
  }

  void gatherBmmSavingRule() {
    const DevicePtr device = cpuDevice();
    Tensor a = randomTensor({3, 2, 5}, DType::Float32, 17, device, "a");
    Tensor c = randomTensor({4, 5, 3}, DType::Float32, 18, device, "c");
    a.setRequiresGrad(true);
    const Tensor q = int64Tensor({3}, {1, 1, 3});
    const Tensor out = gatherBmm(a, c, q);
    QVERIFY2(hasHolder(c, "saved as c of GatherBmmBackward"), holdersOf(c).c_str());
    QVERIFY2(a.storage().holders().empty(), holdersOf(a).c_str());
    out.backward(tensorOn(out.sizes(), randomValues(out.numel(), 19), DType::Float32, device, "g"));
    QVERIFY2(c.storage().holders().empty(), holdersOf(c).c_str());
  }

  /// A saved view keeps its whole storage alive: with only out = mm(a[0:2], c[q][0]) left,
  /// the whole c[q] allocation stays (saved as mat2 because a requires grad); backward frees it.
  void savedViewKeepsStorageAlive() {
    const DevicePtr device = cpuDevice();
    Tensor a = randomTensor({3, 5}, DType::Float32, 20, device, "a");
    a.setRequiresGrad(true);
    Tensor c = randomTensor({4, 5, 70}, DType::Float32, 21, device, "c");
    Tensor cq = index(c, int64Tensor({3}, {1, 3, 1}));  // [3, 5, 70]: 4200 bytes
    const int64_t cId = c.storage().allocationId();
    const int64_t cqId = cq.storage().allocationId();
    Tensor out = mm(slice(a, 0, 0, 2), select(cq, 0, 0));  // mat2 needs 1400 of the 4200 bytes
    c = Tensor();
    cq = Tensor();
    const auto& alloc = device->allocator();
    QVERIFY2(!alloc.record(cId).alive, "c has no reason to live");
    QVERIFY2(alloc.record(cqId).alive, "the saved view's storage (c[q]) must stay alive");
    QCOMPARE(alloc.record(cqId).requestedBytes, int64_t{3 * 5 * 70 * 4});
    const Storage* saved = device->storageOf(cqId);
    QVERIFY(saved != nullptr);
    bool mat2 = false;
    for (const auto& [why, count] : saved->holders())
      mat2 = mat2 || why.find("saved as mat2 of MmBackward0") != std::string::npos;
    QVERIFY2(mat2, "c[q]'s holder should say 'saved as mat2 of MmBackward0'");
    QCOMPARE(allocated(device), blockBytes(15 * 4) + blockBytes(4200) + blockBytes(2 * 70 * 4));
    out.backward(tensorOn(out.sizes(), randomValues(out.numel(), 22), DType::Float32, device, "g"));
    QVERIFY2(!alloc.record(cqId).alive, "backward must release the saved c[q]");
    QVERIFY(a.grad().defined());
  }

  /// Under NoGradGuard no op records a node or saves a tensor. A view of a tensor that requires
  /// grad still requires grad, with no grad_fn (PyTorch's views created in no_grad mode).
  void noGradBuildsNoGraph() {
    const DevicePtr device = cpuDevice();
    Tensor a = randomTensor({3, 5}, DType::Float32, 23, device, "a");
    Tensor b = randomTensor({5, 7}, DType::Float32, 24, device, "b");
    Tensor a3 = randomTensor({3, 2, 5}, DType::Float32, 25, device, "a3");
    Tensor c3 = randomTensor({4, 5, 7}, DType::Float32, 26, device, "c3");
    for (Tensor* t : {&a, &b, &a3, &c3}) t->setRequiresGrad(true);
    const Tensor q = int64Tensor({3}, {0, 3, 3});
    std::vector<Tensor> outs;
    {
      NoGradGuard noGrad;
      outs = {mm(a, b),
              bmm(a3, expand(unsqueeze(b, 0), {3, 5, 7})),
              matmul(a3, b),
              slice(a, 0, 1, 3),
              select(a, 1, -1),
              view(a, {-1}),
              reshape(transpose(a, 0, 1), {-1}),
              expand(unsqueeze(a, 0), {2, 3, 5}),
              index(a, int64Tensor({3}, {0, 2, -1})),
              add(a, a),
              sum(a),
              cat({a, a}, 1),
              clone(a),
              gatherBmm(a3, c3, q)};
    }
    QVERIFY(GradMode::isEnabled());
    const std::vector<bool> views = {false, false, false, true,  true,  true,  false,
                                     true,  false, false, false, false, false, false};
    QCOMPARE(views.size(), outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      QVERIFY2(
          outs[i].requiresGrad() == views[i],
          ("output " + std::to_string(i) + (views[i] ? " does not require" : " requires") + " grad")
              .c_str());
      QVERIFY2(outs[i].isLeaf(), ("output " + std::to_string(i) + " is not a leaf").c_str());
      QVERIFY2(!outs[i].gradFn(), ("output " + std::to_string(i) + " has a grad_fn").c_str());
    }
    for (Tensor* t : {&a, &b, &a3, &c3})
      QVERIFY2(t->storage().holders().empty(), holdersOf(*t).c_str());
  }
};

QTEST_GUILESS_MAIN(TestViews)
#include "test_views.moc"

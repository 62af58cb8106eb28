// matmul_with_multi_head and matmul_with_importance (the multi-head assignment): values against
// float64 references, gradients by finite differences, the tie rule, errors, side effects and
// memory.
#include "core/autograd/grad_mode.h"
#include "core/memory/host_backing.h"
#include "core/multihead/multihead.h"
#include "core/multihead/multihead_report.h"
#include "op_check.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace matmulviz;
using namespace matmulviz::test;
Q_DECLARE_METATYPE(matmulviz::DType)

namespace {

DevicePtr cpuDevice() {
  static HostBacking backing(int64_t{1} << 30);
  // The forum post's PyTorch: these tests count an op's own blocks; the cuBLAS workspace that
  // PyTorch 2.x adds at the first matmul is test_cublas_workspace's.
  return std::make_shared<DeviceContext>(
      DeviceKind::Cpu, backing, CachingAllocator::Options{std::nullopt, true, forumPyTorchModel()});
}

/// O2[i, j, n, f] = sum_d A1[i, j, n*hd + d] * W1[n*hd + d, f], in float64.
Ref multiHeadRef(const Ref& A1, const Ref& W1, int64_t nh) {
  const int64_t b = A1.sizes[0], s = A1.sizes[1], h = A1.sizes[2], e = W1.sizes[1];
  const int64_t hd = h / nh;
  Ref out{{b, s, nh, e}, {}};
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < s; ++j)
      for (int64_t n = 0; n < nh; ++n)
        for (int64_t f = 0; f < e; ++f) {
          double acc = 0;
          for (int64_t d = 0; d < hd; ++d)
            acc += A1.at({i, j, n * hd + d}) * W1.at({n * hd + d, f});
          out.values.push_back(acc);
        }
  return out;
}

int64_t countSpans(const CachingAllocator& alloc, const std::string& op) {
  int64_t n = 0;
  for (const auto& span : alloc.opSpans())
    if (alloc.opNames()[static_cast<size_t>(span.opId)] == op) ++n;
  return n;
}

Tensor probabilities(const Shape& sizes, const std::vector<double>& v) {
  return fromDoubles(sizes, v, DType::Float32);
}

}  // namespace

class TestMultihead : public QObject {
  Q_OBJECT

 private slots:
  void multiHeadValues_data() {
    QTest::addColumn<Shape>("sizes");  // b, s, h, e, nh
    QTest::addColumn<DType>("dtype");
    for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
      const std::string n(dtypeName(dt));
      QTest::newRow((n + " odd").c_str()) << Shape{3, 5, 9, 7, 3} << dt;
      QTest::newRow((n + " one head").c_str()) << Shape{2, 3, 4, 5, 1} << dt;
      QTest::newRow((n + " hd 1").c_str()) << Shape{1, 4, 6, 2, 6} << dt;
      QTest::newRow((n + " tile+1").c_str()) << Shape{2, 17, 34, 17, 2} << dt;
    }
  }
  void multiHeadValues() {
    QFETCH(Shape, sizes);
    QFETCH(DType, dtype);
    const int64_t b = sizes[0], s = sizes[1], h = sizes[2], e = sizes[3], nh = sizes[4];
    auto device = cpuDevice();
    const Tensor A1 = randomTensor({b, s, h}, dtype, 1, device, "A1");
    const Tensor W1 = randomTensor({h, e}, dtype, 2, device, "W1");
    const Ref want = multiHeadRef(toRef(A1), toRef(W1), nh);
    double maxAbs = 1e-30;
    for (double v : want.values) maxAbs = std::max(maxAbs, std::abs(v));
    const int64_t before = device->allocator().current().allocatedBytes;
    const Tensor O2 = matmulWithMultiHead(A1, W1, nh);
    OPCHECK(checkTensor(O2, want, dtype, productTolerance(dtype, maxAbs), "O2"));
    // One bmm, and its output is the only new memory: every reshape is a view.
    QCOMPARE(countSpans(device->allocator(), "bmm"), int64_t{1});
    QCOMPARE(device->allocator().current().allocatedBytes - before,
             std::max<int64_t>(512, (O2.nbytes() + 511) / 512 * 512));
  }

  void multiHeadGradients() {
    const OpFn op = [](const std::vector<Tensor>& x) { return matmulWithMultiHead(x[0], x[1], 3); };
    Tensor A1 = randomTensor({2, 3, 6}, DType::Float64, 3);
    Tensor W1 = randomTensor({6, 4}, DType::Float64, 4);
    A1.setRequiresGrad(true);
    W1.setRequiresGrad(true);
    OPCHECK(checkGradients(op, {A1, W1}, 5));
  }

  void importanceGradients() {
    const Tensor P = probabilities({2, 4}, {0.9, 0.2, 0.6, 0.7, 0.1, 0.8, 0.3, 0.95});
    Tensor A1 = randomTensor({2, 4, 6}, DType::Float64, 6);
    Tensor W1 = randomTensor({6, 5}, DType::Float64, 7);
    const Tensor g = randomTensor({4, 2, 5}, DType::Float64, 8);  // t = 4: top_k 2, top_p 0.5
    const auto r = matmulWithImportance(A1, toDType(P, DType::Float64), W1, 2, 0.5, 2, g);
    QCOMPARE(r.selectedTokens, (std::vector<int64_t>{0, 3, 5, 7}));
    // The engine's own autograd through the same views, checked by finite differences.
    A1.setRequiresGrad(true);
    W1.setRequiresGrad(true);
    const Tensor idx = int64Tensor({4}, r.selectedTokens);
    const OpFn op = [&](const std::vector<Tensor>& x) {
      const Tensor rows = index(reshape(x[0], {8, 6}), idx);
      return matmulWithMultiHead(reshape(rows, {1, 4, 6}), x[1], 2);
    };
    OPCHECK(checkGradients(op, {A1, W1}, 9));
    A1.setGrad(Tensor());
    W1.setGrad(Tensor());
    op({A1, W1}).backward(reshape(g, {1, 4, 2, 5}));
    OPCHECK(checkTensor(r.dA1, toRef(A1.grad()), DType::Float64, {1e-12, 1e-12}, "dA1"));
    OPCHECK(checkTensor(r.dW1, toRef(W1.grad()), DType::Float64, {1e-12, 1e-12}, "dW1"));
  }

  void mask_data() {
    QTest::addColumn<std::vector<double>>("p");
    QTest::addColumn<double>("topP");
    QTest::addColumn<int>("topK");  // 0: none
    QTest::addColumn<std::vector<int>>("want");
    // Ties at the top_k boundary: the lower sequence index wins.
    QTest::newRow("tie at boundary")
        << std::vector<double>{0.2, 0.5, 0.5, 0.5} << 0.0 << 2 << std::vector<int>{0, 1, 1, 0};
    QTest::newRow("all equal") << std::vector<double>{0.3, 0.3, 0.3, 0.3} << 0.3 << 3
                               << std::vector<int>{1, 1, 1, 0};
    QTest::newRow("top_p boundary inclusive")
        << std::vector<double>{0.1, 0.05, 0.1, 0.7} << 0.1 << 0 << std::vector<int>{1, 0, 1, 1};
    QTest::newRow("top_p 0 keeps all")
        << std::vector<double>{0.0, 0.0, 0.5, 0.1} << 0.0 << 0 << std::vector<int>{1, 1, 1, 1};
    QTest::newRow("top_p 1") << std::vector<double>{1.0, 0.99, 1.0, 0.1} << 1.0 << 1
                             << std::vector<int>{1, 0, 0, 0};
    QTest::newRow("none") << std::vector<double>{0.2, 0.3, 0.1, 0.0} << 0.9 << 0
                          << std::vector<int>{0, 0, 0, 0};
    // NaN ranks first in top_k (as torch.topk) but is never >= top_p.
    QTest::newRow("nan takes a top_k slot")
        << std::vector<double>{0.9, NAN, 0.8, 0.1} << 0.0 << 2 << std::vector<int>{1, 0, 0, 0};
  }
  void mask() {
    QFETCH(std::vector<double>, p);
    QFETCH(double, topP);
    QFETCH(int, topK);
    QFETCH(std::vector<int>, want);
    const auto k = topK ? std::optional<int64_t>(topK) : std::nullopt;
    const auto m = importanceMask(probabilities({1, 4}, p), topP, k);
    QCOMPARE(std::vector<int>(m.begin(), m.end()), want);
  }

  void errors_data() {
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("prefix");
    for (const char* w : {"heads", "heads0"}) QTest::newRow(w) << w << "num_heads:";
    for (const char* w : {"top_p_neg", "top_p_big", "top_p_nan"}) QTest::newRow(w) << w << "top_p:";
    for (const char* w : {"top_k0", "top_k_big"}) QTest::newRow(w) << w << "top_k:";
    QTest::newRow("P shape") << "P_shape"
                             << "P:";
    QTest::newRow("W1 rows") << "W1_rows"
                             << "W1:";
    QTest::newRow("W1 dtype") << "W1_dtype"
                              << "W1:";
    QTest::newRow("A1 rank") << "A1_rank"
                             << "A1:";
    QTest::newRow("grad_output shape") << "g_shape"
                                       << "grad_output:";
    QTest::newRow("grad_output dtype") << "g_dtype"
                                       << "grad_output:";
  }
  void errors() {
    QFETCH(QString, what);
    QFETCH(QString, prefix);
    const std::string w = what.toStdString();
    Tensor A1 = randomTensor({2, 3, 4}, DType::Float32, 1);
    Tensor W1 = randomTensor({4, 2}, DType::Float32, 2);
    Tensor P = probabilities({2, 3}, {0.5, 0.6, 0.7, 0.1, 0.2, 0.9});
    Tensor g = randomTensor({6, 2, 2}, DType::Float32, 3);
    int64_t heads = 2;
    double topP = 0.0;
    std::optional<int64_t> topK;
    if (w == "heads") heads = 3;
    if (w == "heads0") heads = 0;
    if (w == "top_p_neg") topP = -0.1;
    if (w == "top_p_big") topP = 1.5;
    if (w == "top_p_nan") topP = NAN;
    if (w == "top_k0") topK = 0;
    if (w == "top_k_big") topK = 4;
    if (w == "P_shape") P = probabilities({3, 2}, {0.5, 0.6, 0.7, 0.1, 0.2, 0.9});
    if (w == "W1_rows") W1 = randomTensor({5, 2}, DType::Float32, 2);
    if (w == "W1_dtype") W1 = randomTensor({4, 2}, DType::Float16, 2);
    if (w == "A1_rank") A1 = randomTensor({6, 4}, DType::Float32, 1);
    if (w == "g_shape") g = randomTensor({5, 2, 2}, DType::Float32, 3);
    if (w == "g_dtype") g = randomTensor({6, 2, 2}, DType::BFloat16, 3);
    try {
      matmulWithImportance(A1, P, W1, heads, topP, topK, g);
      QFAIL("no error");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).startsWith(prefix), e.what());
    }
  }

  void noSideEffects_data() {
    QTest::addColumn<bool>("requiresGrad");
    QTest::addColumn<bool>("gradMode");
    QTest::addColumn<bool>("backward");
    for (bool rg : {false, true})
      for (bool gm : {false, true})
        for (bool bw : {false, true})
          QTest::newRow(QStringLiteral("rg %1 gm %2 bw %3").arg(rg).arg(gm).arg(bw).toLatin1())
              << rg << gm << bw;
  }
  void noSideEffects() {
    QFETCH(bool, requiresGrad);
    QFETCH(bool, gradMode);
    QFETCH(bool, backward);
    auto device = cpuDevice();
    Tensor A1 = randomTensor({2, 5, 6}, DType::Float32, 1, device, "A1");
    Tensor W1 = randomTensor({6, 3}, DType::Float32, 2, device, "W1");
    Tensor P = tensorOn({2, 5}, randomValues(10, 3), DType::Float32, device, "P");
    A1.setRequiresGrad(requiresGrad);
    W1.setRequiresGrad(requiresGrad);
    const auto a0 = A1.toDoubles(), w0 = W1.toDoubles(), p0 = P.toDoubles();
    const auto t = static_cast<int64_t>(std::ranges::count(importanceMask(P, 0.0, 3), 1));
    Tensor g = backward ? randomTensor({t, 3, 3}, DType::Float32, 4, device, "g") : Tensor();
    const int64_t before = device->allocator().current().allocatedBytes;
    GradMode::setEnabled(gradMode);
    auto r = matmulWithImportance(A1, P, W1, 3, 0.0, 3, g);
    const bool modeAfter = GradMode::isEnabled();
    GradMode::setEnabled(true);
    QCOMPARE(modeAfter, gradMode);
    QCOMPARE(A1.requiresGrad(), requiresGrad);
    QCOMPARE(W1.requiresGrad(), requiresGrad);
    QVERIFY(!A1.grad().defined());
    QVERIFY(!W1.grad().defined());
    QVERIFY(A1.toDoubles() == a0 && W1.toDoubles() == w0 && P.toDoubles() == p0);
    QVERIFY(!r.O3.gradFn());
    QVERIFY(!r.O3.requiresGrad());
    QCOMPARE(r.dA1.defined(), backward);
    // Back to inputs + outputs: nothing saved, no temporaries.
    int64_t outputs = 0;
    for (const Tensor* x : {&r.O3, &r.dA1, &r.dW1})
      if (x->defined())
        outputs += device->allocator().record(x->storage().allocationId()).blockBytes;
    QCOMPARE(device->allocator().current().allocatedBytes, before + outputs);
    for (const AllocationRecord* rec : device->allocator().liveRecords())
      QVERIFY2(device->storageOf(rec->id)->holders().empty(), rec->label.c_str());
  }

  void noGraphWithoutGradOutput() {
    MultiheadConfig c;
    c.topP = 0.2;
    const auto r = runMultihead(c);
    QVERIFY(r.savedForBackward.empty());
    QCOMPARE(r.savedBytes, int64_t{0});
    QVERIFY(!std::isnan(r.normO3));
    QVERIFY(std::isnan(r.normDA1));
  }

  // The report's timeline carries the categories the engine set (issue 15): inputs, the
  // gathered rows A3 (saved for backward when they are), O3, and what backward allocates.
  void timelineCategories() {
    MultiheadConfig c;
    c.topP = 0.2;
    c.backward = true;
    const auto r = runMultihead(c);
    std::map<std::string, MemoryCategory> byLabel;
    bool anyGradient = false;
    for (const AllocationRecord& rec : r.timeline.records) {
      byLabel[rec.label] = rec.category;
      anyGradient = anyGradient || rec.category == MemoryCategory::Gradients;
    }
    for (const char* input : {"A1", "P", "W1"}) QCOMPARE(byLabel.at(input), MemoryCategory::Inputs);
    QCOMPARE(byLabel.at("grad_output"), MemoryCategory::Gradients);
    QCOMPARE(byLabel.at("A3 = A1[mask]"), MemoryCategory::SavedForBackward);  // saved by mm
    QCOMPARE(byLabel.at("dA1"), MemoryCategory::Gradients);
    QVERIFY(anyGradient);
  }

  void noImportantToken() {
    auto device = cpuDevice();
    const Tensor A1 = randomTensor({2, 3, 4}, DType::BFloat16, 1, device, "A1");
    const Tensor W1 = randomTensor({4, 5}, DType::BFloat16, 2, device, "W1");
    const Tensor P = tensorOn({2, 3}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, DType::BFloat16, device);
    const Tensor g = empty({0, 2, 5}, DType::BFloat16, device, "g");
    const auto r = matmulWithImportance(A1, P, W1, 2, 0.9, 1, g);
    QCOMPARE(r.O3.sizes(), (Shape{0, 2, 5}));
    QVERIFY(r.selectedTokens.empty());
    QCOMPARE(r.dA1.sizes(), (Shape{2, 3, 4}));
    QCOMPARE(r.dW1.sizes(), (Shape{4, 5}));
    for (double v : r.dA1.toDoubles()) QCOMPARE(v, 0.0);
    for (double v : r.dW1.toDoubles()) QCOMPARE(v, 0.0);
  }
};

QTEST_GUILESS_MAIN(TestMultihead)
#include "test_multihead.moc"

// einsum (the fast.ai lesson): values and PyTorch's error messages against the golden fixtures
// (tests/reference/golden/einsum.json, from tests/reference/make_golden.py), gradients by
// finite differences, and memory: einsum('ik,kj->ij') is mm, allocating only its output.
#include "core/memory/host_backing.h"
#include "core/ops/einsum.h"
#include "op_check.h"

#include <QtTest/QtTest>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(MATMULVIZ_REFERENCE_DIR) + "/einsum.json");
    if (!in)
      throw std::runtime_error("cannot open the golden fixtures in " MATMULVIZ_REFERENCE_DIR);
    return nlohmann::json::parse(in);
  }();
  return j;
}

/// Tolerance table of einsum against PyTorch (relative to max |ref|). One pairwise product
/// or sum rounds once to the dtype, as PyTorch does; a chain of n operands rounds n - 1 times
/// where the golden side (float32, one final rounding) rounds once: twice op_check's
/// productTolerance (float32 2e-5, float16 2e-3, bfloat16 2e-2).
Tolerance einsumTolerance(DType dtype, const Ref& ref) {
  double maxAbs = 1e-30;
  for (double v : ref.values) maxAbs = std::max(maxAbs, std::abs(v));
  const Tolerance t = productTolerance(dtype, maxAbs);
  return {2 * t.atol, 2 * t.rtol};
}

DevicePtr cpuDevice() {
  static HostBacking backing(int64_t{1} << 30);
  // The forum post's PyTorch: these tests count an op's own blocks; the cuBLAS workspace that
  // PyTorch 2.x adds at the first matmul is test_cublas_workspace's.
  return std::make_shared<DeviceContext>(
      DeviceKind::Cpu, backing, CachingAllocator::Options{std::nullopt, true, forumPyTorchModel()});
}

}  // namespace

class TestEinsum : public QObject {
  Q_OBJECT

 private slots:
  void golden_data() {
    QTest::addColumn<int>("caseIndex");
    const auto& cases = fixtures().at("cases");
    for (size_t i = 0; i < cases.size(); ++i)
      QTest::newRow(cases[i].at("name").get<std::string>().c_str()) << static_cast<int>(i);
  }
  void golden() {
    QFETCH(int, caseIndex);
    const auto& c = fixtures().at("cases").at(static_cast<size_t>(caseIndex));
    const DType dtype = parseDType(c.at("dtype").get<std::string>());
    auto device = cpuDevice();
    std::vector<Tensor> ops;
    const auto& shapes = c.at("shapes");
    for (size_t i = 0; i < shapes.size(); ++i)
      ops.push_back(tensorOn(shapes[i].get<Shape>(), c.at("operands")[i].get<std::vector<double>>(),
                             dtype, device));
    const Tensor out = einsum(c.at("equation").get<std::string>(), ops);
    const Ref want{c.at("out_shape").get<Shape>(), c.at("out").get<std::vector<double>>()};
    OPCHECK(checkTensor(out, want, dtype, einsumTolerance(dtype, want), "einsum"));
  }

  void errors_data() {
    QTest::addColumn<int>("caseIndex");
    const auto& errors = fixtures().at("errors");
    for (size_t i = 0; i < errors.size(); ++i)
      QTest::newRow(errors[i].at("equation").get<std::string>().c_str()) << static_cast<int>(i);
  }
  void errors() {
    QFETCH(int, caseIndex);
    const auto& c = fixtures().at("errors").at(static_cast<size_t>(caseIndex));
    std::vector<Tensor> ops;
    for (const auto& s : c.at("shapes"))
      ops.push_back(zeros(s.get<Shape>(), DType::Float32, {}, "x"));
    try {
      einsum(c.at("equation").get<std::string>(), ops);
      QFAIL("no error");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(std::string(e.what()), c.at("message").get<std::string>());
    }
  }

  void matmulIsMm_data() {
    QTest::addColumn<Shape>("sizes");  // M, K, N
    QTest::newRow("5x784x10 (the lesson)") << Shape{5, 784, 10};
    QTest::newRow("odd") << Shape{7, 13, 3};
    QTest::newRow("1x1x1") << Shape{1, 1, 1};
  }
  void matmulIsMm() {
    QFETCH(Shape, sizes);
    auto device = cpuDevice();
    const Tensor A = randomTensor({sizes[0], sizes[1]}, DType::Float32, 1, device, "A");
    const Tensor B = randomTensor({sizes[1], sizes[2]}, DType::Float32, 2, device, "B");
    const int64_t before = device->allocator().current().allocatedBytes;
    const Tensor viaEinsum = einsum("ik,kj->ij", {A, B});
    // Only the product's output is new memory: every alignment step is a view.
    const int64_t block = std::max<int64_t>(512, (viaEinsum.nbytes() + 511) / 512 * 512);
    QCOMPARE(device->allocator().current().allocatedBytes - before, block);
    QCOMPARE(viaEinsum.toDoubles(), mm(A, B).toDoubles());
  }

  void gradients_data() {
    QTest::addColumn<QString>("equation");
    QTest::addColumn<std::vector<Shape>>("shapes");
    QTest::newRow("mm") << "ik,kj->ij" << std::vector<Shape>{{3, 4}, {4, 2}};
    QTest::newRow("diagonal") << "ii->i" << std::vector<Shape>{{3, 3}};
    QTest::newRow("outer") << "i,j->ij" << std::vector<Shape>{{3}, {2}};
    QTest::newRow("sum") << "ij->i" << std::vector<Shape>{{3, 4}};
    QTest::newRow("bmm") << "bij,bjk->bik" << std::vector<Shape>{{2, 3, 4}, {2, 4, 2}};
    QTest::newRow("broadcast") << "...ij,jk" << std::vector<Shape>{{2, 1, 3, 4}, {4, 2}};
    QTest::newRow("chain") << "ij,jk,kl->il" << std::vector<Shape>{{2, 3}, {3, 4}, {4, 2}};
    QTest::newRow("multihead") << "bsnd,nde->bsne" << std::vector<Shape>{{2, 3, 2, 2}, {2, 2, 3}};
  }
  void gradients() {
    QFETCH(QString, equation);
    QFETCH(std::vector<Shape>, shapes);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < shapes.size(); ++i) {
      inputs.push_back(randomTensor(shapes[i], DType::Float64, 10 + i));
      inputs.back().setRequiresGrad(true);
    }
    const std::string eq = equation.toStdString();
    OPCHECK(checkGradients([&](const std::vector<Tensor>& x) { return einsum(eq, x); }, inputs, 7));
  }
};

QTEST_GUILESS_MAIN(TestEinsum)
#include "test_einsum.moc"

// matmul_with_multi_head and matmul_with_importance against PyTorch's own results: the
// fixtures tests/reference/golden/importance.json, written by tests/reference/make_golden.py
// (see tests/reference/README.md). Every case runs through runMultihead (a fresh simulated
// device), so the memory invariants are checked on the same runs.
#include "core/multihead/multihead.h"
#include "core/multihead/multihead_report.h"
#include "core/ops/ops.h"
#include "op_check.h"

#include <QtTest/QtTest>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(MATMULVIZ_REFERENCE_DIR) + "/importance.json");
    if (!in)
      throw std::runtime_error("cannot open the golden fixtures in " MATMULVIZ_REFERENCE_DIR);
    return nlohmann::json::parse(in);
  }();
  return j;
}

std::vector<double> values(const nlohmann::json& v) {
  return v.get<std::vector<double>>();
}

/// The tolerance table of the multi-head matmul assignment's products (golden side: float32
/// accumulation, one rounding to the dtype; engine side: the same, summed in another order). Each
/// output element is one product of K <= 9 terms, so the float32 accumulation differs by far less
/// than the dtype's rounding: the table is op_check's productTolerance (float32 1e-5,
/// float16 1e-3, bfloat16 1e-2, relative to max |ref|): one rounding step of the dtype
/// (2^-11, 2^-8) when both sides round a value sitting near a rounding boundary differently,
/// with a 2x margin.
Tolerance tableTolerance(DType dtype, const Ref& ref) {
  double maxAbs = 0;
  for (double v : ref.values) maxAbs = std::max(maxAbs, std::abs(v));
  return productTolerance(dtype, std::max(maxAbs, 1e-30));
}

void checkAgainst(const Tensor& got, const Shape& sizes, const nlohmann::json& want, DType dtype,
                  const std::string& what) {
  const Ref ref{sizes, values(want)};
  checkTensor(got, ref, dtype, tableTolerance(dtype, ref), what);
}

}  // namespace

class TestMultiheadGolden : public QObject {
  Q_OBJECT

 private slots:
  void importance_data() {
    QTest::addColumn<int>("caseIndex");
    const auto& cases = fixtures().at("cases");
    QVERIFY(cases.size() >= 40);
    for (size_t i = 0; i < cases.size(); ++i)
      QTest::newRow(cases[i].at("name").get<std::string>().c_str()) << static_cast<int>(i);
  }

  void importance() {
    QFETCH(int, caseIndex);
    const auto& c = fixtures().at("cases").at(static_cast<size_t>(caseIndex));
    const DType dtype = parseDType(c.at("dtype").get<std::string>());
    MultiheadConfig cfg;
    cfg.b = c.at("b");
    cfg.s = c.at("s");
    cfg.h = c.at("h");
    cfg.e = c.at("e");
    cfg.numHeads = c.at("num_heads");
    cfg.topP = c.at("top_p");
    if (!c.at("top_k").is_null()) cfg.topK = c.at("top_k").get<int64_t>();
    cfg.dtype = dtype;
    cfg.backward = !c.at("grad_output").is_null();
    const int64_t t = c.at("t");
    MultiheadInputs in;
    in.A1 = fromDoubles({cfg.b, cfg.s, cfg.h}, values(c.at("A1")), dtype);
    in.P = fromDoubles({cfg.b, cfg.s}, values(c.at("P")), dtype);
    in.W1 = fromDoubles({cfg.h, cfg.e}, values(c.at("W1")), dtype);
    if (cfg.backward)
      in.gradOutput = fromDoubles({t, cfg.numHeads, cfg.e}, values(c.at("grad_output")), dtype);

    const MultiheadReport r = runMultihead(cfg, in);
    QCOMPARE(r.t, t);
    const auto wantMask = c.at("mask").get<std::vector<int>>();
    QCOMPARE(std::vector<int>(r.mask.begin(), r.mask.end()), wantMask);
    OPCHECK(checkAgainst(r.O3, {t, cfg.numHeads, cfg.e}, c.at("O3"), dtype, "O3"));
    if (cfg.backward) {
      OPCHECK(checkAgainst(r.dA1, {cfg.b, cfg.s, cfg.h}, c.at("dA1"), dtype, "dA1"));
      OPCHECK(checkAgainst(r.dW1, {cfg.h, cfg.e}, c.at("dW1"), dtype, "dW1"));
      // Saved for backward: the gathered A3 (new memory, unless t = 0) and W1's storage.
      QVERIFY(!r.savedForBackward.empty());
      QCOMPARE(r.savedBytes > 0, t > 0);
    } else {
      QVERIFY(!r.dA1.defined());
      QVERIFY(!r.dW1.defined());
      QVERIFY(r.savedForBackward.empty());
      QCOMPARE(r.savedBytes, int64_t{0});
    }
    // After return only the inputs and the outputs are alive, and the cuBLAS workspaces that
    // PyTorch 2.x keeps for the life of the process (core/memory/cublas_workspace.h).
    for (const KeptAlive& k : r.keptAlive)
      QVERIFY2(k.why.rfind("input ", 0) == 0 || k.why.rfind("output ", 0) == 0 ||
                   k.label.rfind("cuBLAS workspace", 0) == 0,
               (k.label + ": " + k.why).c_str());
  }

  void multiHead_data() { importance_data(); }

  void multiHead() {
    QFETCH(int, caseIndex);
    const auto& c = fixtures().at("cases").at(static_cast<size_t>(caseIndex));
    const DType dtype = parseDType(c.at("dtype").get<std::string>());
    const int64_t b = c.at("b"), s = c.at("s"), h = c.at("h"), e = c.at("e");
    const int64_t nh = c.at("num_heads");
    const Tensor A1 = fromDoubles({b, s, h}, values(c.at("A1")), dtype);
    const Tensor W1 = fromDoubles({h, e}, values(c.at("W1")), dtype);
    const Tensor O2 = matmulWithMultiHead(A1, W1, nh);
    OPCHECK(checkAgainst(O2, {b, s, nh, e}, c.at("O2"), dtype, "O2"));
  }
};

QTEST_GUILESS_MAIN(TestMultiheadGolden)
#include "test_multihead_golden.moc"

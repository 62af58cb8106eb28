// The pointwise ops of core/ops/pointwise.h (and the broadcasting add of ops.h): values against
// hand-computed ones, result dtypes (at::result_type), autograd node names and what each node
// saves, gradients by finite differences (op_check.h), the allocations each op makes on a
// cpu device (its outputs only), meta mode (no data, graph built) and the refusal of a device
// with its own compute backend (NotSupportedError).

#include "core/autograd/grad_mode.h"
#include "core/autograd/node.h"
#include "core/memory/host_backing.h"
#include "core/ops/ops.h"
#include "core/ops/pointwise.h"
#include "op_check.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>

using namespace matmulviz;
using namespace matmulviz::test;

namespace {

constexpr Tolerance kExact{0, 0};
constexpr Tolerance kFloat{1e-6, 1e-6};

Tensor host(const Shape& sizes, const std::vector<double>& values, DType dtype = DType::Float32) {
  return fromDoubles(sizes, values, dtype);
}

Tensor leaf(const Shape& sizes, const std::vector<double>& values) {
  Tensor t = fromDoubles(sizes, values, DType::Float64);
  t.setRequiresGrad(true);
  return t;
}

Tensor randomLeaf(const Shape& sizes, uint64_t seed) {
  Tensor t = randomTensor(sizes, DType::Float64, seed);
  t.setRequiresGrad(true);
  return t;
}

/// The saved tensor named `name` of t's grad_fn (undefined when not saved).
Tensor saved(const Tensor& t, const std::string& name) {
  for (const auto& [n, s] : t.gradFn()->savedTensors())
    if (n == name) return s;
  return Tensor();
}

HostBacking& hostBacking() {
  static HostBacking backing(int64_t{1} << 28);
  return backing;
}

DevicePtr cpuDevice() {
  return std::make_shared<DeviceContext>(DeviceKind::Cpu, hostBacking(),
                                         CachingAllocator::Options{});
}

DevicePtr metaDevice() {
  static MetaBacking meta;
  return std::make_shared<DeviceContext>(DeviceKind::Meta, meta, CachingAllocator::Options{});
}

/// A device whose memory only its backend may touch: every primitive refuses.
class RefusingBackend final : public ComputeBackend {
 public:
  std::string name() const override { return "test cuda"; }
  void copy(const Tensor&, const Tensor&) override { fail(); }
  void fillZero(const Tensor&) override { fail(); }
  void addInPlace(const Tensor&, const Tensor&) override { fail(); }
  void mulInPlace(const Tensor&, const Tensor&) override { fail(); }
  void sumInto(const Tensor&, const Shape&, const Tensor&) override { fail(); }
  void gemm(const Tensor&, const Tensor&, const Tensor&) override { fail(); }
  void indexRows(const Tensor&, const Tensor&, const Tensor&) override { fail(); }
  void indexAddRows(const Tensor&, const Tensor&, const Tensor&) override { fail(); }
  void gatherBmm(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override { fail(); }
  void gatherBmmGrouped(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        const Tensor&) override {
    fail();
  }
  void gatherBmmGradA(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {
    fail();
  }
  void gatherBmmGradC(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {
    fail();
  }
  void synchronize() override {}

 private:
  [[noreturn]] static void fail() { throw std::logic_error("RefusingBackend: primitive called"); }
};

/// Counts the allocations (Alloc events) `fn` makes on `device`.
template <typename F>
int64_t allocationsDuring(const DevicePtr& device, F&& fn) {
  const auto& events = device->allocator().events();
  const size_t before = events.size();
  fn();
  int64_t n = 0;
  for (size_t i = before; i < events.size(); ++i)
    if (events[i].kind == MemoryEventKind::Alloc) ++n;
  return n;
}

std::vector<double> valuesOf(const Tensor& t) {
  return t.toDoubles();
}

}  // namespace

class TestPointwise : public QObject {
  Q_OBJECT

 private slots:
  void addBroadcasts() {
    const Tensor a = host({3, 1}, {0, 1, 2});
    const Tensor b = host({4}, {0, 10, 20, 30});
    const Tensor out = add(a, b);
    OPCHECK(checkTensor(out, {{3, 4}, {0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32}},
                        DType::Float32, kExact, "add"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             add(host({2, 3}, {1, 2, 3, 4, 5, 6}), host({4}, {1, 2, 3, 4})));
    try {
      add(host({2, 3}, std::vector<double>(6)), host({3, 2}, std::vector<double>(6)));
      QFAIL("no error");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(std::string(e.what()),
               std::string("The size of tensor a (3) must match the size of tensor b (2) at "
                           "non-singleton dimension 1"));
    }
  }

  void subDivValues() {
    const Tensor a = host({3}, {1, 2, -3});
    const Tensor b = host({3}, {4, 0, 0});
    OPCHECK(checkTensor(sub(a, b), {{3}, {-3, 2, -3}}, DType::Float32, kExact, "sub"));
    const std::vector<double> q = valuesOf(div(a, b));
    QCOMPARE(q[0], 0.25);
    QVERIFY(std::isinf(q[1]) && q[1] > 0);
    QVERIFY(std::isinf(q[2]) && q[2] < 0);
  }

  void resultTypes() {
    const Tensor i64 = host({2}, {7, -7}, DType::Int64);
    const Tensor f32 = host({2}, {1, 2});
    const Tensor f16 = host({2}, {1, 2}, DType::Float16);
    const Tensor bf16 = host({2}, {1, 2}, DType::BFloat16);
    const Tensor f64zero = host({}, {1.5}, DType::Float64);
    QCOMPARE(add(f16, f32).dtype(), DType::Float32);
    QCOMPARE(add(f16, bf16).dtype(), DType::Float32);
    QCOMPARE(add(f32, f64zero).dtype(), DType::Float32);  // a 0-dim tensor ranks lower
    QCOMPARE(add(i64, f64zero).dtype(), DType::Float64);  // ... unless of a higher category
    QCOMPARE(add(i64, i64).dtype(), DType::Int64);
    QCOMPARE(div(i64, i64).dtype(), DType::Float32);
    QCOMPARE(mul(f16, f32).dtype(), DType::Float32);
    OPCHECK(checkTensor(mul(i64, i64), {{2}, {49, 49}}, DType::Int64, kExact, "int64 * int64"));
    QCOMPARE(mulScalar(i64, {2, true}).dtype(), DType::Int64);
    QCOMPARE(addScalar(i64, {1.5, false}).dtype(), DType::Float32);
    QCOMPARE(divScalar(i64, {2, true}).dtype(), DType::Float32);
    QCOMPARE(mulScalar(f16, {0.1, false}).dtype(), DType::Float16);
    QCOMPARE(cos(i64).dtype(), DType::Float32);
    QCOMPARE(relu(i64).dtype(), DType::Int64);
    QCOMPARE(neg(i64).dtype(), DType::Int64);
    OPCHECK(checkTensor(divScalar(i64, {2, true}), {{2}, {3.5, -3.5}}, DType::Float32, kExact,
                        "int64 / 2"));
    OPCHECK(checkTensor(mulScalar(i64, {3, true}), {{2}, {21, -21}}, DType::Int64, kExact,
                        "int64 * 3"));
    OPCHECK(checkTensor(addScalar(f16, {0.1, false}), {{2}, {1.099609375, 2.099609375}},
                        DType::Float16, kExact, "half + 0.1"));
  }

  void scalarValues() {
    const Tensor x = host({3}, {0, 1, 2});
    OPCHECK(checkTensor(addScalar(x, {1, true}), {{3}, {1, 2, 3}}, DType::Float32, kExact, "+"));
    OPCHECK(checkTensor(subScalar(x, {1.5, false}), {{3}, {-1.5, -0.5, 0.5}}, DType::Float32,
                        kExact, "-"));
    OPCHECK(
        checkTensor(rsubScalar(x, {10, true}), {{3}, {10, 9, 8}}, DType::Float32, kExact, "rsub"));
    OPCHECK(
        checkTensor(mulScalar(x, {0.5, false}), {{3}, {0, 0.5, 1}}, DType::Float32, kExact, "*"));
    OPCHECK(
        checkTensor(divScalar(x, {4, true}), {{3}, {0, 0.25, 0.5}}, DType::Float32, kExact, "/"));
    OPCHECK(checkTensor(rdivScalar(addScalar(x, {1, true}), {1, true}), {{3}, {1, 0.5, 1.0 / 3.0}},
                        DType::Float32, kFloat, "rdiv"));
  }

  void nodeNamesAndSaved() {
    const Tensor x = leaf({2}, {0.5, -1});
    const Tensor y = leaf({2}, {2, 4});
    const Tensor c = host({2}, {1, 2}, DType::Float64);
    QCOMPARE(add(x, y).gradFn()->name(), std::string("AddBackward0"));
    QCOMPARE(sub(x, y).gradFn()->name(), std::string("SubBackward0"));
    QCOMPARE(addScalar(x, {1, true}).gradFn()->name(), std::string("AddBackward0"));
    QCOMPARE(subScalar(x, {1, true}).gradFn()->name(), std::string("SubBackward0"));
    QCOMPARE(rsubScalar(x, {1, true}).gradFn()->name(), std::string("RsubBackward1"));
    QCOMPARE(neg(x).gradFn()->name(), std::string("NegBackward0"));

    // a number has no edge: next_functions ((AccumulateGrad, 0), (None, 0)); rsub has one
    QCOMPARE(addScalar(x, {1, true}).gradFn()->nextEdges.size(), size_t{2});
    QVERIFY(!addScalar(x, {1, true}).gradFn()->nextEdges[1].valid());
    QCOMPARE(rsubScalar(x, {1, true}).gradFn()->nextEdges.size(), size_t{1});

    const Tensor m = mulScalar(x, {2, true});
    QCOMPARE(m.gradFn()->name(), std::string("MulBackward0"));
    QVERIFY(!saved(m, "self").defined());
    QCOMPARE(saved(m, "other").dim(), int64_t{0});
    QCOMPARE(saved(m, "other").dtype(), DType::Int64);
    QCOMPARE(saved(m, "other").item(), 2.0);
    const Tensor dsc = divScalar(x, {2.5, false});
    QCOMPARE(dsc.gradFn()->name(), std::string("DivBackward0"));
    QCOMPARE(saved(dsc, "other").dtype(), DType::Float64);

    // DivBackward0: other when either needs a gradient, self only when other does
    const Tensor d1 = div(x, c);
    QCOMPARE(d1.gradFn()->name(), std::string("DivBackward0"));
    QVERIFY(saved(d1, "other").defined() && !saved(d1, "self").defined());
    const Tensor d2 = div(c, y);
    QVERIFY(saved(d2, "other").defined() && saved(d2, "self").defined());

    const Tensor r = rdivScalar(x, {2, true});
    QCOMPARE(r.gradFn()->name(), std::string("MulBackward0"));
    const std::shared_ptr<Node> recip = r.gradFn()->nextEdges[0].fn;
    QCOMPARE(recip->name(), std::string("ReciprocalBackward0"));
    QCOMPARE(recip->savedTensors().at(0).first, std::string("result"));

    struct Case {
      Tensor out;
      const char* node;
      const char* slot;
      bool savesInput;
    };
    const Tensor soft = softmax(x, 0);
    const Tensor top = topk(x, 1, 0).first;
    for (const Case& k :
         {Case{cos(x), "CosBackward0", "self", true}, Case{sin(x), "SinBackward0", "self", true},
          Case{exp(x), "ExpBackward0", "result", false},
          Case{relu(x), "ReluBackward0", "result", false},
          Case{soft, "SoftmaxBackward0", "result", false}}) {
      QCOMPARE(k.out.gradFn()->name(), std::string(k.node));
      const Tensor s = saved(k.out, k.slot);
      QVERIFY2(s.defined(), k.node);
      // self is the input itself; result shares the output's storage (no cycle through grad_fn)
      QVERIFY(&s.storage() == (k.savesInput ? &x.storage() : &k.out.storage()));
      QVERIFY(!s.gradFn() || k.savesInput);
    }
    QCOMPARE(top.gradFn()->name(), std::string("TopkBackward0"));
    QCOMPARE(saved(top, "indices").dtype(), DType::Int64);
    QCOMPARE(mean(x).gradFn()->name(), std::string("MeanBackward0"));
    QCOMPARE(meanDims(x, {0}, false).gradFn()->name(), std::string("MeanBackward1"));
    QCOMPARE(stack({x, y}, 0).gradFn()->name(), std::string("StackBackward0"));
    QVERIFY(stack({x, y}, 0).gradFn()->savedTensors().empty());
  }

  void broadcastGradients() {
    const OpFn addOp = [](const std::vector<Tensor>& v) { return add(v[0], v[1]); };
    const OpFn subOp = [](const std::vector<Tensor>& v) { return sub(v[0], v[1]); };
    const OpFn divOp = [](const std::vector<Tensor>& v) { return div(v[0], v[1]); };
    OPCHECK(checkGradients(addOp, {randomLeaf({3, 1}, 1), randomLeaf({4}, 2)}, 3));
    OPCHECK(checkGradients(subOp, {randomLeaf({2, 3, 4}, 4), randomLeaf({3, 1}, 5)}, 6));
    Tensor denom = tensorOn({1, 4}, {1.5, -2, 3, 0.75}, DType::Float64, {});
    denom.setRequiresGrad(true);
    OPCHECK(checkGradients(divOp, {randomLeaf({3, 4}, 7), denom}, 8));
    // hand-computed: (a * b + b).sum() with a [3, 1] = 0..2, b [4] = 0..3:
    // d/da = sum(b) = 6 per row, d/db = sum(a) + 3 rows = 6
    const Tensor a = leaf({3, 1}, {0, 1, 2});
    const Tensor b = leaf({4}, {0, 1, 2, 3});
    sum(add(mul(a, b), b)).backward(host({}, {1}, DType::Float64));
    OPCHECK(checkTensor(a.grad(), {{3, 1}, {6, 6, 6}}, DType::Float64, kExact, "a.grad"));
    OPCHECK(checkTensor(b.grad(), {{4}, {6, 6, 6, 6}}, DType::Float64, kExact, "b.grad"));
  }

  void scalarAndUnaryGradients() {
    const std::vector<OpFn> ops = {
        [](const std::vector<Tensor>& v) {
          return addScalar(v[0], {2, true});
        },
        [](const std::vector<Tensor>& v) {
          return subScalar(v[0], {2, true});
        },
        [](const std::vector<Tensor>& v) {
          return rsubScalar(v[0], {2, true});
        },
        [](const std::vector<Tensor>& v) {
          return mulScalar(v[0], {-1.5, false});
        },
        [](const std::vector<Tensor>& v) {
          return divScalar(v[0], {4, true});
        },
        [](const std::vector<Tensor>& v) {
          return rdivScalar(addScalar(v[0], {3, true}), {2, true});
        },
        [](const std::vector<Tensor>& v) { return neg(v[0]); },
        [](const std::vector<Tensor>& v) { return cos(v[0]); },
        [](const std::vector<Tensor>& v) { return sin(v[0]); },
        [](const std::vector<Tensor>& v) { return exp(v[0]); },
        [](const std::vector<Tensor>& v) { return relu(v[0]); },
        [](const std::vector<Tensor>& v) { return softmax(v[0], -1); },
        [](const std::vector<Tensor>& v) { return softmax(v[0], 0); },
        [](const std::vector<Tensor>& v) { return topk(v[0], 2, 1).first; },
        [](const std::vector<Tensor>& v) { return topk(v[0], 2, 0, false).first; },
        [](const std::vector<Tensor>& v) { return mean(v[0]); },
        [](const std::vector<Tensor>& v) { return meanDims(v[0], {1}, false); },
        [](const std::vector<Tensor>& v) {
          return meanDims(v[0], {0, -1}, true);
        },
        [](const std::vector<Tensor>& v) {
          return stack({v[0], mulScalar(v[0], {2, true})}, 1);
        },
    };
    for (size_t i = 0; i < ops.size(); ++i) {
      // random values in [-1, 1): away from relu's kink with probability one
      OPCHECK(checkGradients(ops[i], {randomLeaf({3, 4}, 100 + i)}, 200 + i));
    }
  }

  void unaryValues() {
    const Tensor x = host({4}, {0, 0.5, 1, 1.5});
    OPCHECK(checkTensor(cos(x),
                        {{4}, {1, 0.8775825500488281, 0.5403023362159729, 0.07073719799518585}},
                        DType::Float32, kFloat, "cos"));  // PyTorch: 1 ulp off at 1.0
    OPCHECK(checkTensor(sin(x),
                        {{4}, {0, 0.4794255495071411, 0.8414709568023682, 0.9974949955940247}},
                        DType::Float32, kFloat, "sin"));
    const std::vector<double> e = valuesOf(exp(host({3}, {-1, 0, 100})));
    QCOMPARE(e[1], 1.0);
    QVERIFY(std::isinf(e[2]));
    OPCHECK(
        checkTensor(relu(host({3}, {-1, 0, 2})), {{3}, {0, 0, 2}}, DType::Float32, kExact, "relu"));
    OPCHECK(checkTensor(neg(host({2}, {0, -3}, DType::Int64)), {{2}, {0, 3}}, DType::Int64, kExact,
                        "neg int64"));
  }

  void softmaxValues() {
    const Tensor x = host({2, 3}, {0, 1, 2, 3, 4, 5});
    const double s = 1 + std::exp(1.0) + std::exp(2.0);
    OPCHECK(checkTensor(softmax(x, -1),
                        {{2, 3},
                         {1 / s, std::exp(1.0) / s, std::exp(2.0) / s, 1 / s, std::exp(1.0) / s,
                          std::exp(2.0) / s}},
                        DType::Float32, kFloat, "softmax last"));
    const double p = 1 / (1 + std::exp(3.0));
    OPCHECK(checkTensor(softmax(x, 0), {{2, 3}, {p, p, p, 1 - p, 1 - p, 1 - p}}, DType::Float32,
                        kFloat, "softmax dim 0"));
    // large values do not overflow (max subtracted)
    const double q = 1 / (1 + std::exp(1.0));
    OPCHECK(checkTensor(softmax(host({2}, {1000, 1001}), 0), {{2}, {q, 1 - q}}, DType::Float32,
                        kFloat, "softmax large"));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, softmax(x, 2));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, softmax(host({3}, {0, 1, 2}, DType::Int64), 0));
  }

  void topkValues() {
    auto [v, i] = topk(host({4}, {0.1, 0.7, 0.3, 0.9}), 2, -1);
    OPCHECK(checkTensor(v, {{2}, {0.9, 0.7}}, DType::Float32, kFloat, "values"));
    OPCHECK(checkTensor(i, {{2}, {3, 1}}, DType::Int64, kExact, "indices"));
    auto [vs, is] = topk(host({4}, {0.1, 0.7, 0.3, 0.9}), 3, 0, false);
    OPCHECK(checkTensor(is, {{3}, {0, 2, 1}}, DType::Int64, kExact, "smallest"));
    auto [v0, i0] = topk(host({3, 2}, {0, 1, 2, 3, 4, 5}), 2, 0);
    OPCHECK(checkTensor(v0, {{2, 2}, {4, 5, 2, 3}}, DType::Float32, kExact, "dim 0 values"));
    OPCHECK(checkTensor(i0, {{2, 2}, {2, 2, 1, 1}}, DType::Int64, kExact, "dim 0 indices"));
    auto [vt, it] = topk(host({4}, {1, 2, 2, 0}), 2, 0);  // ties: lower index first
    OPCHECK(checkTensor(it, {{2}, {1, 2}}, DType::Int64, kExact, "ties"));
    try {
      topk(host({3}, {1, 1, 1}), 4, 0);
      QFAIL("no error");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(std::string(e.what()), std::string("selected index k out of range"));
    }
    // gradient: scattered at the chosen indices
    const Tensor x = leaf({4}, {0.1, 0.7, 0.3, 0.9});
    sum(topk(x, 2, 0).first).backward(host({}, {1}, DType::Float64));
    OPCHECK(checkTensor(x.grad(), {{4}, {0, 1, 0, 1}}, DType::Float64, kExact, "topk grad"));
  }

  void meanValues() {
    const Tensor x = host({2, 3, 4}, [] {
      std::vector<double> v(24);
      for (int i = 0; i < 24; ++i) v[i] = i;
      return v;
    }());
    OPCHECK(checkTensor(mean(x), {{}, {11.5}}, DType::Float32, kExact, "mean"));
    OPCHECK(checkTensor(meanDims(x, {1, 2}, true), {{2, 1, 1}, {5.5, 17.5}}, DType::Float32, kExact,
                        "keepdim"));
    OPCHECK(checkTensor(meanDims(x, {-1}, false), {{2, 3}, {1.5, 5.5, 9.5, 13.5, 17.5, 21.5}},
                        DType::Float32, kExact, "last dim"));
    OPCHECK(checkTensor(mean(host({3}, {1, 2, 4}, DType::BFloat16)), {{}, {2.328125}},
                        DType::BFloat16, kExact, "bfloat16 rounds once"));
    QVERIFY(std::isnan(mean(host({0}, {})).item()));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, mean(host({2}, {1, 2}, DType::Int64)));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, meanDims(x, {5}, false));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, meanDims(x, {1, -2}, false));
  }

  void stackValues() {
    const Tensor a = host({3}, {0, 1, 2});
    const Tensor b = host({3}, {1, 1, 1});
    OPCHECK(checkTensor(stack({a, b}, 1), {{3, 2}, {0, 1, 1, 1, 2, 1}}, DType::Float32, kExact,
                        "stack dim 1"));
    OPCHECK(checkTensor(stack({a, b}, -2), {{2, 3}, {0, 1, 2, 1, 1, 1}}, DType::Float32, kExact,
                        "stack dim -2"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, stack({}, 0));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, stack({a, b}, 2));
    try {
      stack({host({2}, {1, 2}), a}, 0);
      QFAIL("no error");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(std::string(e.what()),
               std::string("stack expects each tensor to be equal size, but got [2] at entry 0 "
                           "and [3] at entry 1"));
    }
  }

  /// Each op allocates exactly its outputs (no temporaries), as PyTorch's CUDA kernels do.
  void allocatesOutputsOnly() {
    const DevicePtr dev = cpuDevice();
    const Tensor x = tensorOn({4, 5}, randomValues(20, 1), DType::Float32, dev);
    const Tensor row = tensorOn({5}, randomValues(5, 2), DType::Float32, dev);
    const Tensor h = tensorOn({5}, randomValues(5, 3), DType::Float16, dev);
    const Tensor i64 = tensorOn({5}, {1, 2, 3, 4, 5}, DType::Int64, dev);
    QCOMPARE(allocationsDuring(dev, [&] { add(x, row); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { sub(x, h); }), int64_t{1});  // promotion in place
    QCOMPARE(allocationsDuring(dev, [&] { div(i64, i64); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { mul(h, x); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { mulScalar(x, {2, true}); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { divScalar(i64, {2, true}); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { rdivScalar(x, {2, true}); }), int64_t{2});
    QCOMPARE(allocationsDuring(dev, [&] { cos(x); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { softmax(x, 1); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { topk(x, 2, 1); }), int64_t{2});
    QCOMPARE(allocationsDuring(dev, [&] { meanDims(x, {0}, false); }), int64_t{1});
    QCOMPARE(allocationsDuring(dev, [&] { stack({x, x, x}, 0); }), int64_t{1});
    // backward: CosBackward0 is grad * -self.sin(): sin, neg, mul
    Tensor w = tensorOn({4, 5}, randomValues(20, 4), DType::Float32, dev);
    w.setRequiresGrad(true);
    const Tensor y = cos(w);
    const Tensor g = tensorOn({4, 5}, randomValues(20, 5), DType::Float32, dev);
    QCOMPARE(allocationsDuring(dev, [&] { y.backward(g); }), int64_t{3});
  }

  void metaBuildsGraphWithoutData() {
    const DevicePtr meta = metaDevice();
    Tensor x = empty({3, 4}, DType::Float32, meta, "x");
    x.setRequiresGrad(true);
    const Tensor y = softmax(addScalar(div(cos(x), exp(x)), {1, true}), -1);
    QVERIFY(!y.hasData());
    QCOMPARE(y.gradFn()->name(), std::string("SoftmaxBackward0"));
    const auto [v, i] = topk(y, 2, 1);
    QCOMPARE(v.sizes(), (Shape{3, 2}));
    QCOMPARE(stack({mean(x), mean(x)}, 0).sizes(), (Shape{2}));
  }

  void refusesAComputeBackend() {
    static RefusingBackend backend;
    const DevicePtr dev = std::make_shared<DeviceContext>(DeviceKind::Cpu, hostBacking(),
                                                          CachingAllocator::Options{}, &backend);
    const Tensor x = empty({2, 3}, DType::Float32, dev, "x");
    const Tensor r = empty({3}, DType::Float32, dev, "r");
    try {
      cos(x);
      QFAIL("no error");
    } catch (const NotSupportedError& e) {
      QVERIFY(std::string(e.what()).find("cos") != std::string::npos);
      QVERIFY(std::string(e.what()).find("test cuda") != std::string::npos);
    }
    QVERIFY_THROWS_EXCEPTION(NotSupportedError, sub(x, r));
    QVERIFY_THROWS_EXCEPTION(NotSupportedError, add(x, r));  // broadcasting
    QVERIFY_THROWS_EXCEPTION(NotSupportedError, mulScalar(x, {2, true}));
    QVERIFY_THROWS_EXCEPTION(NotSupportedError, softmax(x, 0));
    QVERIFY_THROWS_EXCEPTION(NotSupportedError, topk(x, 1, 0));
    QVERIFY_THROWS_EXCEPTION(NotSupportedError, mean(x));
  }
};

QTEST_GUILESS_MAIN(TestPointwise)
#include "test_pointwise.moc"

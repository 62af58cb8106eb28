// snapshot::categoryOfStack (matmulviz's categories from a snapshot's frames), the snapshot
// timeline using them, and the hover text of a block (snapshot_block_text.h): its facts and its
// frames innermost first, the viewer's plumbing frames left out and repeats elided.
#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_block_text.h"
#include "core/io/snapshot_categories.h"
#include "core/io/snapshot_timeline.h"

#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::snapshot;

Q_DECLARE_METATYPE(matmulviz::MemoryCategory)

namespace {

/// A snapshot whose stack 1 is `frames` ("file|name" each, innermost first).
MemorySnapshot withStack(const QStringList& frames) {
  MemorySnapshot s;
  s.stacks = {{}, {}};
  for (const QString& f : frames) {
    s.frames.push_back({f.section('|', 0, 0).toStdString(), 7, f.section('|', 1).toStdString()});
    s.stacks[1].push_back(uint32_t(s.frames.size() - 1));
  }
  return s;
}

}  // namespace

class TestSnapshotCategories : public QObject {
  Q_OBJECT
 private slots:
  void rules_data();
  void rules();
  void timelineUsesThem();
  void blockText();
  void timelineBlocksMatchRecords();
  void cppFramesWithoutFile();
  void recorderFramesAreSkipped();
  void lifetimeRules_data();
  void lifetimeRules();
};

void TestSnapshotCategories::rules_data() {
  QTest::addColumn<QStringList>("frames");
  QTest::addColumn<MemoryCategory>("category");
  QTest::addColumn<QString>("reason");  // a part of categoryReason; empty: none
  using C = MemoryCategory;
  const QString py = "/home/u/train.py|main";
  QTest::newRow("no frames") << QStringList{} << C::Other << "";
  QTest::newRow("plain python") << QStringList{"/home/u/model.py|forward", py} << C::Other << "";
  QTest::newRow("engine_run_backward")
      << QStringList{"/usr/lib/python3/dist-packages/torch/autograd/graph.py|_engine_run_backward",
                     "/usr/lib/python3/dist-packages/torch/autograd/__init__.py|backward", py}
      << C::Gradients << "torch.autograd.backward";  // the first rule in the table's order
  QTest::newRow("autograd.grad") << QStringList{"/x/torch/autograd/__init__.py|grad", py}
                                 << C::Gradients << "autograd.grad";
  QTest::newRow("grad elsewhere is no rule")
      << QStringList{"/home/u/util.py|grad", py} << C::Other << "";
  QTest::newRow("custom Function.backward")
      << QStringList{"/home/u/ops.py|backward", py} << C::Gradients << "named backward";
  QTest::newRow("engine thread (C++)")
      << QStringList{"??|at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)",
                     "??|torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&"
                     ")",
                     "??|torch::autograd::Engine::evaluate_function(...)"}
      << C::Gradients << "autograd engine";
  QTest::newRow("optimizer") << QStringList{"??|at::_ops::mm::call(...)",
                                            "/x/torch/optim/adam.py|_single_tensor_adam",
                                            "/x/torch/optim/adam.py|step", py}
                             << C::OptimizerState << "torch/optim/";
  QTest::newRow("adam's _init_group")
      << QStringList{"/x/torch/optim/adam.py|_init_group", "/x/torch/optim/adam.py|step", py}
      << C::OptimizerState << "_init_group";
  QTest::newRow("cuBLAS workspace")
      << QStringList{"??|c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::"
                     "allocate(unsigned long)",
                     "??|at::cuda::setWorkspaceForHandle(cublasContext*, c10::cuda::CUDAStream)",
                     "??|at::cuda::getCurrentCUDABlasHandle()", "??|at::_ops::mm::call(...)", py}
      << C::CublasWorkspace << "setWorkspaceForHandle";
  QTest::newRow("Module.cuda(): parameter") << QStringList{"/x/torch/nn/modules/module.py|<lambda>",
                                                           "/x/torch/nn/modules/module.py|_apply",
                                                           "/x/torch/nn/modules/module.py|cuda", py}
                                            << C::Parameter << "Module._apply";
  QTest::newRow("Linear.__init__: parameter")
      << QStringList{"/x/torch/nn/modules/linear.py|__init__", py} << C::Parameter << "__init__";
  QTest::newRow("index: gathered copy")
      << QStringList{"??|at::_ops::empty_memory_format::call(...)", "??|at::native::index(...)",
                     "??|at::_ops::index_Tensor::call(...)", py}
      << C::GatheredCopy << "at::_ops::index_Tensor";
  QTest::newRow("embedding: gathered copy")
      << QStringList{"??|at::_ops::embedding::call(...)", py} << C::GatheredCopy << "gather";
  QTest::newRow("bmm in matmul: outputs")
      << QStringList{"??|at::_ops::empty_strided::call(...)", "??|at::_ops::bmm::call(...)",
                     "??|at::_ops::matmul::call(...)", py}
      << C::Outputs << "at::_ops::bmm";
  QTest::newRow("matmul's copy: other")
      << QStringList{"??|at::_ops::empty_strided::call(...)", "??|at::_ops::clone::call(...)",
                     "??|at::_ops::matmul::call(...)", py}
      << C::Other << "";
  QTest::newRow("mm_out is not mm")
      << QStringList{"??|at::_ops::mmx::call(...)", py} << C::Other << "";
}

void TestSnapshotCategories::rules() {
  QFETCH(QStringList, frames);
  QFETCH(MemoryCategory, category);
  QFETCH(QString, reason);
  const MemorySnapshot s = withStack(frames);
  QCOMPARE(categoryOfStack(s, 1), category);
  const QString why = QString::fromStdString(categoryReason(s, 1));
  if (reason.isEmpty())
    QVERIFY2(why.isEmpty(), qPrintable(why));
  else
    QVERIFY2(why.contains(reason), qPrintable(why));
  QCOMPARE(categoriesOfStacks(s).at(1), category);
  QCOMPARE(categoryOfStack(s, 99), MemoryCategory::Other);  // no such stack
}

void TestSnapshotCategories::timelineUsesThem() {
  MemorySnapshot s = withStack({"/x/torch/autograd/graph.py|_engine_run_backward"});
  DeviceTrace t;
  for (const auto& [addr, stack] : {std::pair{0x100, 1u}, std::pair{0x200, 0u}}) {
    t.action.push_back(TraceAction::Alloc);
    t.addr.push_back(addr);
    t.size.push_back(512);
    t.stream.push_back(0);
    t.timeUs.push_back(-1);
    t.stack.push_back(stack);
  }
  s.traces = {t};
  const MemoryTimeline tl = toMemoryTimeline(s, 0);
  QCOMPARE(tl.records.size(), size_t(2));
  QCOMPARE(tl.records[0].category, MemoryCategory::Gradients);
  // No frame in a snapshot of Python stacks: the autograd engine's thread; kept: a gradient.
  QCOMPARE(tl.records[1].category, MemoryCategory::Gradients);
  QVERIFY(QString::fromStdString(categoryRulesText()).contains("gradients"));
}

void TestSnapshotCategories::blockText() {
  MemorySnapshot s =
      withStack({"/x/torch/autograd/graph.py|_engine_run_backward",
                 "Python/ceval.c|_PyEval_EvalFrameDefault", "/home/u/loop.py|step",
                 "/home/u/loop.py|step", "/home/u/loop.py|step", "/home/u/t.py|main"});
  s.stacks[1][3] = s.stacks[1][2];  // the same frame three times in a row
  s.stacks[1][4] = s.stacks[1][2];
  DeviceTrace t;
  for (const auto& [a, us] :
       {std::pair{TraceAction::Alloc, 1000}, {TraceAction::FreeCompleted, 1250}}) {
    t.action.push_back(a);
    t.addr.push_back(0x7f00);
    t.size.push_back(2048);
    t.stream.push_back(0);
    t.timeUs.push_back(us);
    t.stack.push_back(1);
  }
  s.traces = {t};
  const QString text = QString::fromStdString(describeBlock(s, 0, {0x7f00, 2048, 2000, 1, 0, 1}));
  const QStringList lines = text.split('\n');
  QCOMPARE(lines.value(0), QStringLiteral("block 0x7f00: 2 KiB (requested 1.95 KiB)"));
  QCOMPARE(lines.value(1),
           QStringLiteral("allocated at trace entry 0 (0 us); freed at trace entry 1 (250 us)"));
  QVERIFY2(lines.value(2).startsWith("category: gradients ("), qPrintable(lines.value(2)));
  QCOMPARE(lines.value(3), QStringLiteral("stack, innermost first:"));
  QCOMPARE(lines.mid(4), (QStringList{"/x/torch/autograd/graph.py:7 _engine_run_backward",
                                      "/home/u/loop.py:7 step", "<repeats 2 times>",
                                      "/home/u/t.py:7 main"}));  // ceval.c left out
  const QString none = QString::fromStdString(describeBlock(s, 0, {0x10, 512, 512, 0, -1, -1}));
  QVERIFY(none.contains("allocated before the recording started; alive at the end"));
  QVERIFY(none.contains("no frames recorded"));
  QVERIFY(none.contains("(no rule matched its frames or its lifetime)"));
  QVERIFY(QString::fromStdString(stackText(s, 1, 2)).endsWith("... 2 more frames\n"));
}

void TestSnapshotCategories::timelineBlocksMatchRecords() {
  // The timeline test's shape: a block alive at the start, alloc/free, a free without alloc,
  // an alloc at an address still alive (ends the earlier block).
  MemorySnapshot s = withStack({"/home/u/t.py|main"});
  Segment seg;
  seg.blockCount = 1;
  s.segments = {seg};
  s.blocks = {{0, 0x1000, 1024, 1000, BlockState::ActiveAllocated, 0}};
  DeviceTrace t;
  auto add = [&](TraceAction a, int64_t addr, int64_t size) {
    t.action.push_back(a);
    t.addr.push_back(addr);
    t.size.push_back(size);
    t.stream.push_back(0);
    t.timeUs.push_back(-1);
    t.stack.push_back(1);
  };
  add(TraceAction::Alloc, 0x3000, 2048);
  add(TraceAction::FreeCompleted, 0x3000, 2048);
  add(TraceAction::FreeCompleted, 0x4000, 4096);
  add(TraceAction::Alloc, 0x5000, 8192);
  add(TraceAction::Alloc, 0x5000, 512);
  s.traces = {t};
  const MemoryTimeline tl = toMemoryTimeline(s, 0);
  const std::vector<BlockFacts> blocks = timelineBlocks(s, 0);
  QCOMPARE(blocks.size(), tl.records.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    QCOMPARE(blocks[i].size, tl.records[i].blockBytes);
    QCOMPARE(blocks[i].requested, tl.records[i].requestedBytes);
    QCOMPARE(blocks[i].freeEvent >= 0, !tl.records[i].alive);
  }
  QCOMPARE(blocks[3].allocEvent, int64_t(3));
  QCOMPARE(blocks[3].freeEvent, int64_t(4));  // ended by the second alloc at 0x5000
  QCOMPARE(traceTimeUs(t, 2), 3.0);           // no times: the entry's index + 1
}

void TestSnapshotCategories::cppFramesWithoutFile() {
  MemorySnapshot s =
      withStack({"??|c10::cuda::CUDACachingAllocator::malloc(int)", "/home/u/model.py|forward"});
  QCOMPARE(QString::fromStdString(stackText(s, 1)),
           QStringLiteral("c10::cuda::CUDACachingAllocator::malloc(int)\n"
                          "/home/u/model.py:7 forward\n"));
  DeviceTrace t;
  t.action = {TraceAction::Alloc};
  t.addr = {0x100};
  t.size = {512};
  t.stream = {0};
  t.timeUs = {-1};
  t.stack = {1};
  s.traces = {t};
  // The timeline's label and op: the innermost frame with a file, not the allocator's malloc.
  const MemoryTimeline tl = toMemoryTimeline(s, 0);
  QCOMPARE(tl.records.at(0).label, std::string("model.py:7"));
  QCOMPARE(tl.opNames.at(size_t(tl.records[0].opId)), std::string("forward"));
}

void TestSnapshotCategories::recorderFramesAreSkipped() {
  // A stack recorded with C++ frames, innermost first, as PyTorch 2.11 writes it.
  MemorySnapshot s = withStack(
      {"??|torch::unwind::unwind()", "??|torch::CapturedTraceback::gather(bool, bool, bool)",
       "memory_snapshot.cpp|torch::cuda::(anonymous namespace)::gather_with_cpp()",
       "CUDACachingAllocator.cpp|c10::cuda::CUDACachingAllocator::Native::"
       "DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)",
       "??|at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)",
       "RegisterCUDA_0.cpp|at::(anonymous namespace)::create_out(...)",
       "??|at::_ops::index_Tensor::call(at::Tensor const&, ...)",
       "??|torch::autograd::THPVariable_getitem(_object*, _object*)", "/home/u/forum.py|<module>",
       "??|_PyEval_EvalFrameDefault"});
  s.frames[8].line = 15;
  QCOMPARE(labelFrame(s, s.stacks[1]), uint32_t(8));
  DeviceTrace t;
  t.action = {TraceAction::Alloc};
  t.addr = {0x100};
  t.size = {1 << 20};
  t.stream = {0};
  t.timeUs = {-1};
  t.stack = {1};
  s.traces = {t};
  const MemoryTimeline tl = toMemoryTimeline(s, 0);
  QCOMPARE(tl.records.at(0).label, std::string("forum.py:15"));
  QCOMPARE(tl.opNames.at(size_t(tl.records[0].opId)), std::string("index_Tensor"));
  // Without a Python frame: the innermost frame that is none of the machinery.
  MemorySnapshot cpp =
      withStack({"??|torch::unwind::unwind()", "memory_snapshot.cpp|gather_with_cpp()",
                 "CUDACachingAllocator.cpp|c10::cuda::CUDACachingAllocator::x()",
                 "Blas.cpp|at::native::addmm_out_cuda_impl(...)"});
  QCOMPARE(labelFrame(cpp, cpp.stacks[1]), uint32_t(3));
}

void TestSnapshotCategories::lifetimeRules_data() {
  QTest::addColumn<QStringList>("made");   // the allocation's frames ("" none)
  QTest::addColumn<QStringList>("freed");  // the free's frames; "alive": never freed
  QTest::addColumn<qint64>("size");
  QTest::addColumn<MemoryCategory>("category");
  QTest::addColumn<QString>("rule");
  using C = MemoryCategory;
  const QString script = "/home/u/train.py|<module>";
  const QString fwd = "/x/torch/nn/functional.py|linear";
  const QStringList alive{"alive"};
  QTest::newRow("engine thread, freed in backward")
      << QStringList{} << QStringList{} << qint64(4096) << C::AutogradDetail << "autograd engine";
  QTest::newRow("engine thread, kept: .grad")
      << QStringList{} << alive << qint64(4096) << C::Gradients << ".grad";
  QTest::newRow("engine thread, freed by zero_grad")
      << QStringList{} << QStringList{"/x/torch/optim/optimizer.py|zero_grad", script}
      << qint64(4096) << C::Gradients << ".grad";
  QTest::newRow("engine thread, 32 MiB kept: workspace")
      << QStringList{} << alive << qint64(32 << 20) << C::CublasWorkspace << "by size";
  QTest::newRow("forward, freed by the engine: activation")
      << QStringList{fwd, script} << QStringList{} << qint64(4096) << C::Activation
      << "saved for backward";
  QTest::newRow("forward, freed in its function: temporary")
      << QStringList{fwd, script} << QStringList{fwd, script} << qint64(4096) << C::Temporary
      << "linear";
  QTest::newRow("forward, freed by the script: activation")
      << QStringList{fwd, script} << QStringList{script} << qint64(4096) << C::Activation
      << "forward";
  QTest::newRow("the script's own line: input")
      << QStringList{script} << alive << qint64(4096) << C::Inputs << "own line";
  QTest::newRow("optimizer step, freed in it: temporary")
      << QStringList{"/x/torch/optim/adam.py|_multi_tensor_adam", script}
      << QStringList{"/x/torch/optim/adam.py|adam", script} << qint64(4096) << C::Temporary
      << "optimizer step";
}

void TestSnapshotCategories::lifetimeRules() {
  QFETCH(QStringList, made);
  QFETCH(QStringList, freed);
  QFETCH(qint64, size);
  QFETCH(MemoryCategory, category);
  QFETCH(QString, rule);
  // stack 1: the allocation's frames (or none: stack 0), stack 2: the free's.
  MemorySnapshot s;
  s.stacks = {{}};
  auto stackOf = [&](const QStringList& frames) -> StackId {
    if (frames.isEmpty()) return 0;
    std::vector<uint32_t> ids;
    for (const QString& f : frames) {
      s.frames.push_back({f.section('|', 0, 0).toStdString(), 3, f.section('|', 1).toStdString()});
      ids.push_back(uint32_t(s.frames.size() - 1));
    }
    s.stacks.push_back(ids);
    return StackId(s.stacks.size() - 1);
  };
  const StackId allocStack = stackOf(made);
  const bool isFreed = freed != QStringList{"alive"};
  const StackId freeStack = isFreed ? stackOf(freed) : 0;
  if (s.frames.empty()) stackOf({"/home/u/other.py|f"});  // Python stacks were recorded
  DeviceTrace t;
  auto add = [&](TraceAction a, StackId stack) {
    t.action.push_back(a);
    t.addr.push_back(0x1000);
    t.size.push_back(size);
    t.stream.push_back(0);
    t.timeUs.push_back(-1);
    t.stack.push_back(stack);
  };
  add(TraceAction::Alloc, allocStack);
  if (isFreed) add(TraceAction::FreeCompleted, freeStack);
  s.traces = {t};
  const BlockCategorizer categorizer(s, 0);
  QVERIFY(categorizer.pythonStacksOnly());
  const CategoryChoice c = categorizer.categorize({allocStack, size, 0, isFreed ? 1 : -1});
  QCOMPARE(c.category, category);
  QVERIFY2(QString::fromStdString(c.rule).contains(rule), c.rule.c_str());
  QCOMPARE(toMemoryTimeline(s, 0).records.at(0).category, category);
  // With C++ frames recorded, no thread or lifetime rule applies: a stack without frames is
  // no evidence of the autograd engine's thread.
  s.frames.push_back({"??", 0, "at::native::foo()"});
  QCOMPARE(BlockCategorizer(s, 0).pythonStacksOnly(), false);
}

QTEST_GUILESS_MAIN(TestSnapshotCategories)
#include "test_snapshot_categories.moc"

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
                             << C::Other << "torch/optim/";
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
  QCOMPARE(tl.records[1].category, MemoryCategory::Other);
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
  QVERIFY(none.contains("(no rule matched its frames)"));
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

QTEST_GUILESS_MAIN(TestSnapshotCategories)
#include "test_snapshot_categories.moc"

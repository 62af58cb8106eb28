// The graph file (kind "budget-graph", core/partitioner/graph_json.h): a written graph reads back
// node for node and plans the same; every malformed document is refused with the file's name and
// the key path of the problem.

#include "core/partitioner/budget.h"
#include "core/partitioner/example_graphs.h"
#include "core/partitioner/graph_json.h"

#include <QtTest/QtTest>

using namespace matmulviz::partitioner;
using matmulviz::ReportLoadError;

namespace {

std::string problemOf(const std::string& text) {
  try {
    parseGraphJson(text, "g.json");
  } catch (const ReportLoadError& e) {
    if (e.file() != "g.json") return "wrong file: " + e.file();
    return e.problem();
  }
  return "accepted";
}

/// The mm+cos chain's file with `edit` applied to its JSON.
template <typename Edit>
std::string edited(Edit edit) {
  nlohmann::ordered_json j = graphToJson(mmCosChain(2, 8), {"chain", "c.py", "f"});
  edit(j);
  return j.dump();
}

void sameGraph(const JointGraph& a, const JointGraph& b) {
  QCOMPARE(a.size(), b.size());
  for (NodeId i = 0; i < a.size(); ++i) {
    const Node &x = a.node(i), &y = b.node(i);
    QCOMPARE(x.name, y.name);
    QCOMPARE(x.op, y.op);
    QVERIFY(x.kind == y.kind && x.value == y.value);
    QCOMPARE(x.args, y.args);
    QCOMPARE(x.nestedArgs, y.nestedArgs);
    QCOMPARE(x.users, y.users);
    QCOMPARE(x.bytes, y.bytes);
    QCOMPARE(x.storage, y.storage);
    QCOMPARE(x.staticParameter, y.staticParameter);
    QCOMPARE(x.flops, y.flops);
  }
  QVERIFY(std::ranges::equal(a.forwardOutputs(), b.forwardOutputs()));
  QVERIFY(std::ranges::equal(a.gradOutputs(), b.gradOutputs()));
}

}  // namespace

class TestPartitionerGraphJson : public QObject {
  Q_OBJECT
 private slots:
  void roundTripKeepsEveryNodeAndPlan() {
    for (const JointGraph& g : {mmCosChain(5, 512), mmCosChain(3, 64, true),
                                transformerLike({.layers = 2, .seq = 128})}) {
      const std::string text = graphToJson(g, {"t", "s.py", "f"}).dump();
      const GraphDocument doc = parseGraphJson(text, "g.json");
      QCOMPARE(doc.source.title, std::string("t"));
      QCOMPARE(doc.source.function, std::string("f"));
      sameGraph(g, doc.graph);
      QCOMPARE(graphToJson(doc.graph, doc.source).dump(), text);
      for (double b : {0.0, 0.1, 0.3, 0.5, 1.0}) {
        const BudgetPlan p = chooseSavedValues(g, b), q = chooseSavedValues(doc.graph, b);
        QCOMPARE(p.saved, q.saved);
        QCOMPARE(p.recomputed, q.recomputed);
        QCOMPARE(p.activationBytes, q.activationBytes);
      }
    }
  }

  void envelopeAndNullGradient() {
    nlohmann::ordered_json j = graphToJson(mmCosChain(1, 4), {"x", "", ""});
    QCOMPARE(j["format"].get<std::string>(), std::string("matmulviz-report"));
    QCOMPARE(j["kind"].get<std::string>(), std::string("budget-graph"));
    QCOMPARE(j["forward_outputs"].get<int>(), 1);
    QCOMPARE(j["nodes"].back()["kind"].get<std::string>(), std::string("output"));
    // A primal that needs no gradient: null in the output's arguments.
    j["nodes"].back()["args"][1] = nullptr;
    const GraphDocument doc = parseGraphJson(j.dump(), "g.json");
    QCOMPARE(doc.graph.gradOutputs()[0], kNoNode);
    QVERIFY(looksLikeGraphFile(j.dump()));
    QVERIFY(!looksLikeGraphFile(R"({"format": "matmulviz-report", "kind": "budget"})"));
  }

  void refusalsNameTheKeyPath_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    auto row = [](const char* tag, const std::string& text, const char* expected) {
      QTest::newRow(tag) << QString::fromStdString(text) << QString(expected);
    };
    row("empty", "", "is empty");
    row("not json", "{\"nodes\": [", "is not JSON");
    row("no envelope", "{}", "is not a matmulviz report");
    row("other kind", edited([](auto& j) { j["kind"] = "budget"; }), "kind is 'budget'");
    row("version", edited([](auto& j) { j["version"] = 2; }), "version is 2");
    row("unknown key", edited([](auto& j) { j["extra"] = 1; }), "extra is not a key");
    row("missing title", edited([](auto& j) { j.erase("title"); }), "title is missing");
    row("node key", edited([](auto& j) { j["nodes"][2]["shape"] = 1; }),
        "nodes[2].shape is not a key");
    row("later arg", edited([](auto& j) { j["nodes"][5]["args"][0] = 5; }), "nodes[5].args[0]");
    row("arg of node 0", edited([](auto& j) { j["nodes"][0]["args"] = {0}; }),
        "nodes[0].args[0] names a node");
    row("negative bytes", edited([](auto& j) { j["nodes"][3]["bytes"] = -1; }),
        "nodes[3].bytes is -1");
    row("huge flops", edited([](auto& j) { j["nodes"][3]["flops"] = 1e300; }), "nodes[3].flops");
    row("fraction", edited([](auto& j) { j["nodes"][3]["bytes"] = 1.5; }), "nodes[3].bytes");
    row("kind", edited([](auto& j) { j["nodes"][1]["kind"] = "get_attr"; }),
        "nodes[1].kind is 'get_attr' (allowed: primal, tangent, call_function, output)");
    row("value type", edited([](auto& j) { j["nodes"][1]["value"] = 3; }), "nodes[1].value");
    row("call without op", edited([](auto& j) { j["nodes"][4]["op"] = ""; }),
        "nodes[4].op is empty");
    row("primal with args", edited([](auto& j) { j["nodes"][1]["args"] = {0}; }),
        "nodes[1].args must be empty");
    row("duplicate name", edited([](auto& j) { j["nodes"][1]["name"] = "primals_1"; }),
        "duplicate node name 'primals_1'");
    row("no output", edited([](auto& j) { j["nodes"].erase(j["nodes"].size() - 1); }),
        "has no output node");
    row("node after output", edited([](auto& j) { j["nodes"].push_back(j["nodes"][3]); }),
        "follows the output node");
    row("gradient count", edited([](auto& j) { j["nodes"].back()["args"].erase(1); }),
        "one gradient or null per primal");
    row("null forward output", edited([](auto& j) { j["nodes"].back()["args"][0] = nullptr; }),
        "is a forward output");
    row("parameter tangent", edited([](auto& j) {
          for (auto& n : j["nodes"])
            if (n["kind"] == "tangent") n["static_parameter"] = true;
        }),
        "static_parameter is true for a node that is not a primal");
    row("storage of a tuple", edited([](auto& j) { j["nodes"][4]["value"] = "tuple"; }),
        "nodes[4].storage must be null");
  }
  void refusalsNameTheKeyPath() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const QString problem = QString::fromStdString(problemOf(text.toStdString()));
    QVERIFY2(problem.contains(expected), qPrintable(problem));
  }

  void readsAFileByItsName() {
    QTemporaryDir dir;
    const QString path = dir.filePath("chain.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(graphToJson(mmCosChain(2, 8), {"c", "", ""}).dump()));
    f.close();
    QCOMPARE(readGraphFile(path.toStdString()).graph.size(), mmCosChain(2, 8).size());
    try {
      readGraphFile(dir.filePath("missing.json").toStdString());
      QFAIL("a missing file was read");
    } catch (const ReportLoadError& e) {
      QCOMPARE(e.file(), std::string("missing.json"));
    }
  }
};

QTEST_APPLESS_MAIN(TestPartitionerGraphJson)
#include "test_partitioner_graph_json.moc"

// matmulviz-cli strategies and devices, end to end: the built executable runs through QProcess
// as a user runs it, and its exit code, messages, JSON (README, "More of the command line"),
// Chrome trace and .npy files are checked. Workloads are small on cpu; the seed's full workload
// (and larger) runs only on the meta device, so the suite stays fast, under ASan too.

#include "core/io/npy.h"
#include "core/tensor/tensor.h"

#include "tests/common/cli_process.h"

#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace matmulviz;
Q_DECLARE_METATYPE(matmulviz::DType)

namespace {

constexpr int kFastMs = 60'000;   // runs that take well under a second without sanitizers
constexpr int kSlowMs = 300'000;  // the seed's workload on meta, strategy2's backward estimate

// Set by tests/cli/CMakeLists.txt when the build (this test and matmulviz-cli) runs under
// AddressSanitizer/UBSan, where the engine's per-row ops are about 20x slower: the two checks
// that need 131072 or 16384 of them (seed table strategy1/strategy2, slowBackwardIsSkipped)
// run in the optimised build only, as tests/core/test_seed_table_cpu does.
#ifdef MATMULVIZ_SANITIZED_BUILD
constexpr bool kSanitizedBuild = true;
#else
constexpr bool kSanitizedBuild = false;
#endif

using matmulviz::testing::CliResult;

/// Runs matmulviz-cli with `args` in `workingDir` (the test's own when empty).
CliResult runCli(const QStringList& args, int timeoutMs = kFastMs, const QString& workingDir = {}) {
  return matmulviz::testing::runCliProcess(QStringLiteral(MATMULVIZ_CLI_PATH), args,
                                           {timeoutMs, workingDir});
}

/// The JSON object of `bytes`, or an empty object with `error` set.
QJsonObject parseObject(const QByteArray& bytes, QString* error) {
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(bytes, &pe);
  if (pe.error != QJsonParseError::NoError) {
    *error = pe.errorString() + QStringLiteral(" at offset %1").arg(pe.offset);
    return {};
  }
  if (!doc.isObject()) *error = QStringLiteral("not a JSON object");
  return doc.object();
}

QJsonObject findRun(const QJsonObject& report, const QString& strategy) {
  for (const QJsonValue& r : report.value("runs").toArray())
    if (r.toObject().value("strategy").toString() == strategy) return r.toObject();
  return {};
}

QStringList keysOf(const QJsonObject& o) {
  return o.keys();
}

// Deterministic values in [-1, 1) (exact in float32), a different stream per `salt`.
std::vector<double> values(int64_t count, uint64_t salt) {
  std::vector<double> v(static_cast<size_t>(count));
  uint64_t x = 0x9E3779B97F4A7C15ull * (salt + 1);
  for (auto& e : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    e = static_cast<double>(x >> 40) / static_cast<double>(1ull << 23) - 1.0;
  }
  return v;
}

/// A host tensor of `dtype` holding `v` (through npy::write's input type: a host Tensor).
Tensor hostTensor(const Shape& sizes, const std::vector<double>& v, DType dtype) {
  Tensor t = empty(sizes, dtype, nullptr, "test input");
  for (int64_t e = 0; e < t.numel(); ++e) storeFromDouble(t.dataPtr(), dtype, e, v[size_t(e)]);
  return t;
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// The base workload of the bad-input rows and the .npy files written for them: sizes that are
// not multiples of anything, and a strategy3 tail (97 % 10 = 7).
constexpr int64_t kN = 97, kM = 13, kI = 2, kJ = 5, kK = 7;

}  // namespace

class TestCliStrategies : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString in(const QString& name) const { return dir_.filePath(QStringLiteral("in/") + name); }

 private slots:
  void initTestCase();

  void badInput_data();
  void badInput();
  void outOfMemory_data();
  void outOfMemory();
  void jsonContract_data();
  void jsonContract();
  void seedTableOnMeta_data();
  void seedTableOnMeta();
  void timeline_data();
  void timeline();
  void numpyRoundTrip_data();
  void numpyRoundTrip();
  void nonFiniteFailsTheCheck_data();
  void nonFiniteFailsTheCheck();
  void everyStrategyFails();
  void slowBackwardIsSkipped();
  void backwardWithNothingRequiringGrad();
  void devices();
  void cudaRunsOrSaysWhy();
  void costModelPrediction();
  void costModelFromFile_data();
  void costModelFromFile();
  void calibrateWithoutGpu();
};

void TestCliStrategies::initTestCase() {
  QVERIFY2(QFileInfo::exists(QStringLiteral(MATMULVIZ_CLI_PATH)), MATMULVIZ_CLI_PATH);
  QVERIFY(dir_.isValid());
  QVERIFY(QDir(dir_.path()).mkpath(QStringLiteral("in")));

  // Inputs of the bad-input rows, for the base workload a [97, 2, 5], c [13, 5, 7], q [97].
  std::vector<double> q(kN);
  for (int64_t n = 0; n < kN; ++n) q[size_t(n)] = double(n % kM);
  q[17] = double(kM);  // outside [0, M)
  npy::write(in("q_out_of_range.npy").toStdString(), hostTensor({kN}, q, DType::Int64));
  npy::write(in("q_float32.npy").toStdString(),
             hostTensor({kN}, std::vector<double>(kN, 1.0), DType::Float32));
  npy::write(in("a_wrong_shape.npy").toStdString(),
             hostTensor({kN, kI, kJ + 1}, values(kN * kI * (kJ + 1), 1), DType::Float32));
  npy::write(in("a_int64.npy").toStdString(),
             hostTensor({kN, kI, kJ}, std::vector<double>(kN * kI * kJ, 3.0), DType::Int64));
  npy::write(in("c_wrong_shape.npy").toStdString(),
             hostTensor({kM, kJ + 1, kK}, values(kM * (kJ + 1) * kK, 2), DType::Float32));
  npy::write(in("grad_output_wrong_shape.npy").toStdString(),
             hostTensor({kN, kI, kK + 1}, values(kN * kI * (kK + 1), 3), DType::Float32));
  const QString good = in("a_good.npy");
  npy::write(good.toStdString(), hostTensor({kN, kI, kJ}, values(kN * kI * kJ, 4), DType::Float32));
  const QByteArray bytes = readFile(good);
  QVERIFY(bytes.size() > 128);
  QVERIFY(writeFile(in("a_truncated.npy"), bytes.left(bytes.size() - 6)));
  QVERIFY(writeFile(in("a_truncated_header.npy"), bytes.left(20)));
  QByteArray bigEndian = bytes;
  const qsizetype descr = bigEndian.indexOf("'<f4'");
  QVERIFY(descr > 0 && descr < 128);
  bigEndian[descr + 1] = '>';
  QVERIFY(writeFile(in("a_big_endian.npy"), bigEndian));
}

// Exit code 2, a message naming the argument and what is allowed, nothing on stdout, and no
// output file (--json, --timeline, --save-dir and the working directory are one folder that
// must stay empty).
void TestCliStrategies::badInput_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("argName");      // the argument the message must name ("" = none)
  QTest::addColumn<QStringList>("message");  // further words the message must contain

  auto row = [](const char* name, QStringList args, const char* argName, QStringList message) {
    QTest::newRow(name) << args << QString::fromLatin1(argName) << message;
  };
  row("--n 0", {"--n", "0"}, "--n", {"'0'", "1 to"});
  row("--n -5", {"--n", "-5"}, "--n", {"'-5'", "is negative", "1 to"});
  row("--n 1.5", {"--n", "1.5"}, "--n", {"'1.5'", "not a whole number", "1 to"});
  row("--n 1e3", {"--n", "1e3"}, "--n", {"'1e3'", "write 1000"});
  row("--n 12x", {"--n", "12x"}, "--n", {"'12x'", "1 to"});
  row("--k 0", {"--k", "0"}, "--k", {"1 to"});
  row("--batch 0", {"--batch", "0"}, "--batch", {"1 to"});
  row("--strategies bogus", {"--strategies", "bogus"}, "--strategies",
      {"bogus", "strategy1", "strategy2", "strategy3", "direct", "fused"});
  row("--strategies direct,,fused", {"--strategies", "direct,,fused"}, "--strategies",
      {"strategy1", "fused"});
  row("--dtype int8", {"--dtype", "int8"}, "--dtype", {"int8", "float32", "float16", "bfloat16"});
  row("--dtype float64", {"--dtype", "float64"}, "--dtype", {"float32", "float16", "bfloat16"});
  row("--requires-grad b", {"--requires-grad", "b"}, "--requires-grad", {"'b'", "none", "a,c"});
  row("--device tpu", {"--device", "tpu"}, "--device", {"tpu", "cpu", "meta", "cuda"});
  row("--device-memory 12x", {"--device-memory", "12x"}, "--device-memory", {"12x", "GiB"});
  row("--repeats 0", {"--repeats", "0"}, "--repeats", {"1 to 1000"});
  row("--seed -1", {"--seed", "-1"}, "--seed", {"0 to"});
  row("--preset nope", {"--preset", "nope"}, "--preset", {"nope", "small", "seed000"});
  row("unknown option", {"--bogus", "1"}, "--bogus", {});
  row("--model x100", {"--model", "x100"}, "--model", {"x100", "h200", "h100", "a100", "t4"});
  row("--q index >= M", {"--q", "@IN@/q_out_of_range.npy"}, "--q", {"q[17] = 13", "[0, 13)"});
  row("--q float32", {"--q", "@IN@/q_float32.npy"}, "--q", {"float32", "int64"});
  row("--a wrong shape", {"--a", "@IN@/a_wrong_shape.npy"}, "--a", {"[97, 2, 5]", "[97, 2, 6]"});
  row("--a int64", {"--a", "@IN@/a_int64.npy"}, "--a", {"int64", "float32"});
  row("--a truncated data", {"--a", "@IN@/a_truncated.npy"}, "--a", {"truncated"});
  row("--a truncated header", {"--a", "@IN@/a_truncated_header.npy"}, "--a",
      {"a_truncated_header"});
  row("--a big-endian", {"--a", "@IN@/a_big_endian.npy"}, "--a", {"big-endian"});
  row("--a missing file", {"--a", "@IN@/no_such_file.npy"}, "--a", {"no_such_file.npy"});
  row("--c wrong shape", {"--c", "@IN@/c_wrong_shape.npy"}, "--c", {"[13, 5, 7]"});
  row("--grad-output wrong shape",
      {"--backward", "--requires-grad", "a", "--grad-output", "@IN@/grad_output_wrong_shape.npy"},
      "--grad-output", {"[97, 2, 7]"});
  row("--json into a missing directory", {"--json", "@OUT@/missing/report.json"}, "--json",
      {"does not exist"});
  row("--timeline into a missing directory", {"--timeline", "@OUT@/missing/trace.json"},
      "--timeline", {"does not exist"});
  row("--timeline -", {"--timeline", "-"}, "--timeline", {"file path"});
  row("--save-dir is a file", {"--save-dir", "@IN@/a_good.npy"}, "--save-dir", {"not a directory"});
  // Paths the OS refuses: the flag and the OS's reason, before any work.
  row("--save-dir in /proc", {"--save-dir", "/proc/matmulviz-x"}, "--save-dir",
      {"cannot create '/proc/matmulviz-x'"});
  row("--save-dir empty", {"--save-dir", ""}, "--save-dir", {"''"});
  row("--timeline in /proc/1", {"--timeline", "/proc/1/x"}, "--timeline",
      {"cannot create a file in '/proc/1'"});
  row("--json in /proc/1", {"--json", "/proc/1/x"}, "--json", {"cannot create a file in"});
  // q [N] int64 stays in host RAM on meta too: the message says so, and the threshold.
  row("q too large for RAM on meta",
      {"--device", "meta", "--n", "1000000000000", "--strategies", "direct"}, "",
      {"host index q", "8 bytes a row", "7.28 TiB", "85% of that", "smaller N"});
  // a [2e9, 2, 5] float32 alone is 80 GB: refused before allocating, pointing at meta.
  row("too large for RAM on cpu", {"--n", "2000000000", "--m", "1000000"}, "", {"meta"});
}

void TestCliStrategies::badInput() {
  QFETCH(QStringList, args);
  QFETCH(QString, argName);
  QFETCH(QStringList, message);

  QTemporaryDir outDir(dir_.filePath(QStringLiteral("out-XXXXXX")));
  QVERIFY(outDir.isValid());
  for (QString& a : args) {
    a.replace(QStringLiteral("@IN@"), dir_.filePath(QStringLiteral("in")));
    a.replace(QStringLiteral("@OUT@"), outDir.path());
  }
  QStringList full{QStringLiteral("strategies")};
  const QStringList base{"--n",       QString::number(kN),
                         "--m",       QString::number(kM),
                         "--i",       QString::number(kI),
                         "--j",       QString::number(kJ),
                         "--k",       QString::number(kK),
                         "--batch",   "10",
                         "--repeats", "1"};
  for (qsizetype p = 0; p < base.size(); p += 2)
    if (!args.contains(base[p])) full << base[p] << base[p + 1];
  full += args;
  if (!args.contains(QStringLiteral("--json"))) full << "--json" << outDir.filePath("report.json");
  if (!args.contains(QStringLiteral("--timeline")))
    full << "--timeline" << outDir.filePath("trace.json");
  if (!args.contains(QStringLiteral("--save-dir"))) full << "--save-dir" << outDir.filePath("save");

  const CliResult r = runCli(full, kFastMs, outDir.path());
  QVERIFY2(r.finished && !r.crashed, qPrintable(r.describe()));
  QVERIFY2(r.exitCode == 2, qPrintable(r.describe()));
  QVERIFY2(r.out.isEmpty(), r.out.left(500).constData());
  const QStringList left = QDir(outDir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
  QVERIFY2(left.isEmpty(), qPrintable(QStringLiteral("left behind: ") + left.join(", ")));

  const QString err = QString::fromUtf8(r.err);
  QVERIFY2(!err.contains(QStringLiteral("terminate called")), qPrintable(err));
  for (const QString& word : message)
    QVERIFY2(err.contains(word), qPrintable(QStringLiteral("'%1' not in: %2").arg(word, err)));
  if (!argName.isEmpty()) {
    QVERIFY2(err.contains(argName),
             qPrintable(QStringLiteral("'%1' not in: %2").arg(argName, err)));
  }
}

// c[q] of N=1000, J=K=64 is 15.6 MiB and does not fit into 8 MiB; fused needs a + c + out
// (about 1.5 MiB) and does. Exit code 1; the failing runs say why, the others still run.
void TestCliStrategies::outOfMemory_data() {
  QTest::addColumn<QString>("requiresGrad");
  QTest::newRow("no grad") << "none";
  QTest::newRow("a requires grad") << "a";
  QTest::newRow("a,c require grad") << "a,c";
}

void TestCliStrategies::outOfMemory() {
  QFETCH(QString, requiresGrad);
  const CliResult r = runCli({"strategies", "--n", "1000", "--m", "64", "--repeats", "1",
                              "--device-memory", "8MiB", "--requires-grad", requiresGrad,
                              "--strategies", "strategy1,direct,fused", "--json", "-"});
  QVERIFY2(r.finished && !r.crashed, qPrintable(r.describe()));
  QCOMPARE(r.exitCode, 1);
  QString error;
  const QJsonObject report = parseObject(r.out, &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  QCOMPARE(report.value("runs").toArray().size(), 3);
  for (const char* failing : {"strategy1", "direct"}) {
    const QJsonObject run = findRun(report, failing);
    QVERIFY2(!run.isEmpty(), failing);
    QCOMPARE(run.value("ok").toBool(true), false);
    const QString e = run.value("error").toString();
    QVERIFY2(e.contains(QStringLiteral("out of memory: tried to allocate")), qPrintable(e));
    QVERIFY2(e.contains(QStringLiteral("capacity 8.00 MiB")), qPrintable(e));
  }
  const QJsonObject fused = findRun(report, "fused");
  QCOMPARE(fused.value("ok").toBool(false), true);
  QVERIFY(fused.value("error").isNull());
  QVERIFY2(fused.value("max_rel_err").toDouble(1) < 1e-5, qPrintable(r.describe()));
  QCOMPARE(fused.value("output_shape").toArray(), (QJsonArray{1000, 1, 64}));
}

// `--json -`: stdout is exactly the contract's JSON (progress goes to stderr).
void TestCliStrategies::jsonContract_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QJsonObject>("workload");  // expected values
  QTest::addColumn<QJsonArray>("requiresGrad");
  QTest::addColumn<QStringList>("strategies");  // in the order they run
  QTest::addColumn<double>("maxRelErr");

  const QStringList all{"strategy1", "strategy2", "strategy3", "direct", "fused"};
  auto workload = [](int n, int m, int i, int j, int k, int batch, const char* dtype) {
    return QJsonObject{{"n", n}, {"m", m},         {"i", i},        {"j", j},
                       {"k", k}, {"batch", batch}, {"dtype", dtype}};
  };
  QTest::newRow("N=1000 M=64 float32")
      << QStringList{"--n", "1000", "--m", "64"} << workload(1000, 64, 1, 64, 64, 256, "float32")
      << QJsonArray{} << all << 1e-5;
  QTest::newRow("odd sizes, tail, grad a,c")
      << QString("--n 997 --m 31 --i 3 --j 5 --k 7 --batch 10 --requires-grad a,c").split(' ')
      << workload(997, 31, 3, 5, 7, 10, "float32") << QJsonArray{"a", "c"} << all << 1e-5;
  // The preset runs backward too: strategy1's (1000 zero-filled copies of c[q]) is left out.
  QTest::newRow("preset small, chosen strategies")
      << QStringList{"--preset", "small", "--strategies", "fused,strategy3,direct,strategy2"}
      << workload(1000, 64, 2, 16, 24, 96, "float32") << QJsonArray{"a", "c"}
      << QStringList{"fused", "strategy3", "direct", "strategy2"} << 1e-5;
  QTest::newRow("preset small, options override it")
      << QStringList{"--preset", "small", "--n", "333", "--requires-grad", "c"}
      << workload(333, 64, 2, 16, 24, 96, "float32") << QJsonArray{"c"} << all << 1e-5;
  // float16/bfloat16 store the output rounded: half an ulp of the dtype, relative to max|ref|.
  QTest::newRow("float16") << QStringList{"--n", "500", "--m", "17", "--dtype", "float16"}
                           << workload(500, 17, 1, 64, 64, 256, "float16") << QJsonArray{} << all
                           << 1e-3;
  QTest::newRow("bfloat16")
      << QStringList{"--n", "500", "--m", "17", "--dtype", "bfloat16", "--requires-grad", "a"}
      << workload(500, 17, 1, 64, 64, 256, "bfloat16") << QJsonArray{"a"} << all << 8e-3;
}

void TestCliStrategies::jsonContract() {
  QFETCH(QStringList, args);
  QFETCH(QJsonObject, workload);
  QFETCH(QJsonArray, requiresGrad);
  QFETCH(QStringList, strategies);
  QFETCH(double, maxRelErr);

  const CliResult r = runCli(QStringList{"strategies", "--repeats", "2", "--json", "-"} + args);
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  QString error;
  const QJsonObject report = parseObject(r.out, &error);
  QVERIFY2(error.isEmpty(), qPrintable(error + "\n" + QString::fromUtf8(r.out.left(500))));

  const QJsonObject w = report.value("workload").toObject();
  for (auto it = workload.begin(); it != workload.end(); ++it)
    QVERIFY2(w.value(it.key()) == it.value(),
             qPrintable(it.key() + ": " + QJsonDocument(w).toJson(QJsonDocument::Compact)));
  QCOMPARE(report.value("device").toString(), QStringLiteral("cpu"));

  const QJsonArray runs = report.value("runs").toArray();
  QStringList names;
  for (const QJsonValue& v : runs) names << v.toObject().value("strategy").toString();
  QCOMPARE(names, strategies);

  const QStringList runKeys{"strategy",      "requires_grad", "ok",
                            "error",         "time_s",        "cur_mem_bytes",
                            "max_mem_bytes", "cur_mem_mib",   "max_mem_mib",
                            "output_shape",  "max_rel_err",   "kept_alive"};
  const QJsonArray outputShape{w.value("n"), w.value("i"), w.value("k")};
  for (const QJsonValue& v : runs) {
    const QJsonObject run = v.toObject();
    const QString where = run.value("strategy").toString();
    for (const QString& key : runKeys)
      QVERIFY2(run.contains(key), qPrintable(where + ": no " + key));
    QCOMPARE(run.value("requires_grad").toArray(), requiresGrad);
    QVERIFY2(run.value("ok").toBool(false), qPrintable(where));
    QVERIFY2(run.value("error").isNull(), qPrintable(where));

    const QJsonObject t = run.value("time_s").toObject();
    QCOMPARE(keysOf(t), (QStringList{"cold", "max", "median", "min"}));
    for (const QString& key : keysOf(t))
      QVERIFY2(t.value(key).isDouble() && t.value(key).toDouble() >= 0, qPrintable(key));
    QVERIFY2(t.value("min").toDouble() <= t.value("median").toDouble() &&
                 t.value("median").toDouble() <= t.value("max").toDouble(),
             qPrintable(where));

    const qint64 cur = run.value("cur_mem_bytes").toInteger(-1);
    const qint64 max = run.value("max_mem_bytes").toInteger(-1);
    QVERIFY2(cur > 0 && max >= cur, qPrintable(where));
    QCOMPARE(run.value("cur_mem_mib").toInteger(-1), cur >> 20);
    QCOMPARE(run.value("max_mem_mib").toInteger(-1), max >> 20);

    QCOMPARE(run.value("output_shape").toArray(), outputShape);
    const double err = run.value("max_rel_err").toDouble(1);
    QVERIFY2(run.value("max_rel_err").isDouble() && err < maxRelErr,
             qPrintable(where + ": max_rel_err " + QString::number(err)));

    // FLOPs as PyTorch's FlopCounterMode counts them (torch/utils/flop_counter.py: mm_flop,
    // bmm_flop = 2 * m * n * k per matrix): every strategy computes n products [i, j] @ [j, k];
    // the backward one more per input that requires grad.
    const QJsonObject flops = run.value("flops").toObject();
    const qint64 forwardFlops = 2 * w.value("n").toInteger() * w.value("i").toInteger() *
                                w.value("j").toInteger() * w.value("k").toInteger();
    QCOMPARE(keysOf(flops), (QStringList{"backward", "forward"}));
    QCOMPARE(flops.value("forward").toInteger(-1), forwardFlops);
    if (run.value("backward").toObject().value("status").toString() == "ran")
      QCOMPARE(flops.value("backward").toInteger(-1), requiresGrad.size() * forwardFlops);
    else
      QVERIFY2(flops.value("backward").isNull(), qPrintable(where));

    const QJsonArray kept = run.value("kept_alive").toArray();
    QVERIFY2(run.value("kept_alive").isArray(), qPrintable(where));
    for (const QJsonValue& k : kept) {
      const QJsonObject o = k.toObject();
      QVERIFY2(o.value("label").isString() && !o.value("label").toString().isEmpty(),
               qPrintable(where));
      QVERIFY2(o.value("bytes").isDouble() && o.value("bytes").toInteger(-1) >= 0,
               qPrintable(where));
      QVERIFY2(o.value("why").isString() && !o.value("why").toString().isEmpty(),
               qPrintable(where));
    }
  }
}

// The forum post's table (curMem/maxMem MiB) at the seed's workload, every strategy isolated, under
// the post's PyTorch (--pytorch forum: no cuBLAS workspace).
void TestCliStrategies::seedTableOnMeta_data() {
  QTest::addColumn<QString>("requiresGrad");
  QTest::addColumn<QStringList>("table");  // strategy1, strategy2, strategy3, direct, fused

  QTest::newRow("none") << "none" << QStringList{"96/2208", "96/160", "96/128", "96/2144", "96/97"};
  QTest::newRow("c") << "c" << QStringList{"96/2208", "96/160", "96/128", "96/2144", "96/97"};
  QTest::newRow("a") << "a"
                     << QStringList{"2144/2208", "96/160", "2144/2176", "2144/2144", "96/97"};
  QTest::newRow("a,c") << "a,c"
                       << QStringList{"2144/2208", "96/160", "2144/2176", "2144/2144", "96/97"};
}

void TestCliStrategies::seedTableOnMeta() {
  QFETCH(QString, requiresGrad);
  QFETCH(QStringList, table);

  QStringList strategies{"strategy1", "strategy2", "strategy3", "direct", "fused"};
  if (kSanitizedBuild) {  // strategy1/strategy2 take ~30 s each here; see kSanitizedBuild
    strategies = strategies.mid(2);
    table = table.mid(2);
  }
  const CliResult r =
      runCli({"strategies", "--device", "meta", "--repeats", "1", "--pytorch", "forum",
              "--requires-grad", requiresGrad, "--strategies", strategies.join(','), "--json", "-"},
             kSlowMs);
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  QString error;
  const QJsonObject report = parseObject(r.out, &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  QCOMPARE(report.value("device").toString(), QStringLiteral("meta"));
  QCOMPARE(report.value("workload").toObject(), (QJsonObject{{"n", 131072},
                                                             {"m", 2048},
                                                             {"i", 1},
                                                             {"j", 64},
                                                             {"k", 64},
                                                             {"batch", 256},
                                                             {"dtype", "float32"}}));

  QStringList got;
  for (const QString& s : strategies) {
    const QJsonObject run = findRun(report, s);
    got << QStringLiteral("%1/%2")
               .arg(run.value("cur_mem_mib").toInteger(-1))
               .arg(run.value("max_mem_mib").toInteger(-1));
    QVERIFY2(run.value("max_rel_err").isNull(), qPrintable(s + ": meta has no data"));
  }
  QCOMPARE(got, table);

  // direct with a requiring grad keeps c[q] (2 GiB) alive as bmm's saved mat2.
  const QJsonArray kept = findRun(report, "direct").value("kept_alive").toArray();
  const auto cq = std::find_if(kept.begin(), kept.end(), [](const QJsonValue& v) {
    return v.toObject().value("label").toString() == QStringLiteral("c[q]");
  });
  if (requiresGrad.contains('a')) {
    QVERIFY2(cq != kept.end(), qPrintable(QJsonDocument(kept).toJson()));
    const QJsonObject o = cq->toObject();
    QCOMPARE(o.value("bytes").toInteger(), qint64{2048} << 20);
    const QString why = o.value("why").toString();
    QVERIFY2(why.contains(QStringLiteral("mat2 of BmmBackward0")), qPrintable(why));
    QVERIFY2(why.contains(QStringLiteral("a requires grad")), qPrintable(why));
  } else {
    QVERIFY2(cq == kept.end(), qPrintable(QJsonDocument(kept).toJson()));
  }
}

// --timeline: a Chrome trace (Trace Event Format) object that Perfetto opens: memory as
// counter events ("C"), ops as complete events ("X").
void TestCliStrategies::timeline_data() {
  QTest::addColumn<QStringList>("args");
  QTest::newRow("cpu, small") << QStringList{"--n", "300", "--m", "20", "--requires-grad", "a"};
  QTest::newRow("cpu, backward")
      << QString("--n 200 --m 16 --i 2 --j 16 --k 24 --requires-grad a,c --backward").split(' ');
  QTest::newRow("meta, N=1M") << QStringList{"--device", "meta",  "--n",          "1000000",
                                             "--m",      "16384", "--strategies", "direct,fused"};
}

void TestCliStrategies::timeline() {
  QFETCH(QStringList, args);
  QTemporaryDir outDir(dir_.filePath(QStringLiteral("timeline-XXXXXX")));
  const QString path = outDir.filePath("trace.json");
  const CliResult r =
      runCli(QStringList{"strategies", "--repeats", "1", "--timeline", path} + args, kSlowMs);
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  QCOMPARE(QDir(outDir.path()).entryList(QDir::Files), QStringList{"trace.json"});

  QString error;
  const QJsonObject trace = parseObject(readFile(path), &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  QVERIFY(trace.value("traceEvents").isArray());
  int counters = 0, complete = 0;
  for (const QJsonValue& v : trace.value("traceEvents").toArray()) {
    const QJsonObject e = v.toObject();
    const QString ph = e.value("ph").toString();
    QVERIFY2(!ph.isEmpty() && e.contains("name"), qPrintable(QJsonDocument(e).toJson()));
    if (ph == QStringLiteral("C")) {
      ++counters;
      QVERIFY(e.value("ts").isDouble());
      QVERIFY(e.value("args").isObject() && !e.value("args").toObject().isEmpty());
    } else if (ph == QStringLiteral("X")) {
      ++complete;
      QVERIFY(e.value("ts").isDouble());
      QVERIFY2(e.value("dur").toDouble(-1) >= 0, qPrintable(QJsonDocument(e).toJson()));
    }
  }
  QVERIFY2(counters > 0, "no counter events");
  QVERIFY2(complete > 0, "no complete events");
}

// --save-dir writes DIR/<strategy>/{out,dA,dC,grad_output}.npy; --a/--c/--q/--grad-output read
// .npy files. Inputs from files give the outputs and gradients a float64 loop gives.
void TestCliStrategies::numpyRoundTrip_data() {
  QTest::addColumn<bool>("fromFiles");
  QTest::addColumn<DType>("fileDType");  // of the a, c, grad_output files
  QTest::newRow("random inputs") << false << DType::Float32;
  QTest::newRow("float32 files") << true << DType::Float32;
  QTest::newRow("float64 files") << true << DType::Float64;
}

void TestCliStrategies::numpyRoundTrip() {
  QFETCH(bool, fromFiles);
  QFETCH(DType, fileDType);
  const int64_t N = 61, M = 9, I = 2, J = 5, K = 3;
  QTemporaryDir work(dir_.filePath(QStringLiteral("npy-XXXXXX")));
  const QString save = work.filePath("save");
  QStringList args{"strategies",
                   "--n",
                   QString::number(N),
                   "--m",
                   QString::number(M),
                   "--i",
                   QString::number(I),
                   "--j",
                   QString::number(J),
                   "--k",
                   QString::number(K),
                   "--batch",
                   "8",
                   "--repeats",
                   "1",
                   "--backward",
                   "--requires-grad",
                   "a,c",
                   "--save-dir",
                   save,
                   "--json",
                   "-"};

  std::vector<double> a = values(N * I * J, 11), c = values(M * J * K, 12),
                      g = values(N * I * K, 13), q(N);
  for (int64_t n = 0; n < N; ++n) q[size_t(n)] = double((n * 5 + 2) % M);
  q[0] = M - 1;  // the last matrix is used
  if (fromFiles) {
    auto put = [&](const char* name, const Shape& s, const std::vector<double>& v, DType t) {
      const QString p = work.filePath(name);
      npy::write(p.toStdString(), hostTensor(s, v, t));
      args << QStringLiteral("--") + QString::fromLatin1(name).section('.', 0, 0) << p;
    };
    put("a.npy", {N, I, J}, a, fileDType);
    put("c.npy", {M, J, K}, c, fileDType);
    put("q.npy", {N}, q, DType::Int64);
    put("grad-output.npy", {N, I, K}, g, fileDType);
  }

  const CliResult r = runCli(args);
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  QString error;
  const QJsonObject report = parseObject(r.out, &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));

  // The float64 reference of out, dA, dC for the file inputs.
  std::vector<double> out(N * I * K, 0.0), dA(N * I * J, 0.0), dC(M * J * K, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t m = int64_t(q[size_t(n)]);
    for (int64_t i = 0; i < I; ++i)
      for (int64_t j = 0; j < J; ++j)
        for (int64_t k = 0; k < K; ++k) {
          const double av = a[(n * I + i) * J + j], cv = c[(m * J + j) * K + k],
                       gv = g[(n * I + i) * K + k];
          out[(n * I + i) * K + k] += av * cv;
          dA[(n * I + i) * J + j] += gv * cv;
          dC[(m * J + j) * K + k] += av * gv;
        }
  }
  auto check = [&](const QString& path, const Shape& shape,
                   const std::vector<double>* ref) -> QString {
    if (!QFileInfo::exists(path)) return QStringLiteral("missing: ") + path;
    Tensor t;
    try {
      t = npy::read(path.toStdString());
    } catch (const npy::NpyError& e) {
      return QString::fromStdString(e.what());
    }
    if (t.sizes() != shape)
      return path + QStringLiteral(": shape ") + QString::fromStdString(t.shapeString());
    if (!ref) return QString();
    const std::vector<double> got = t.toDoubles();
    double scale = 0, diff = 0;
    for (size_t e = 0; e < got.size(); ++e) {
      scale = std::max(scale, std::abs((*ref)[e]));
      diff = std::max(diff, std::abs(got[e] - (*ref)[e]));
    }
    return diff <= 1e-5 * scale ? QString() : path + QStringLiteral(": max diff %1").arg(diff);
  };

  int withBackward = 0;
  for (const QJsonValue& v : report.value("runs").toArray()) {
    const QJsonObject run = v.toObject();
    const QString s = run.value("strategy").toString();
    const QString d = save + "/" + s + "/";
    const bool ran =
        run.value("backward").toObject().value("status").toString() == QStringLiteral("ran");
    withBackward += ran;
    const QString outErr = check(d + "out.npy", {N, I, K}, fromFiles ? &out : nullptr);
    QVERIFY2(outErr.isEmpty(), qPrintable(outErr));
    if (!ran) continue;
    for (const auto& [name, shape, ref] :
         {std::tuple{"dA.npy", Shape{N, I, J}, &dA}, std::tuple{"dC.npy", Shape{M, J, K}, &dC},
          std::tuple{"grad_output.npy", Shape{N, I, K}, &g}}) {
      const QString e = check(d + name, shape, fromFiles ? ref : nullptr);
      QVERIFY2(e.isEmpty(), qPrintable(e));
    }
  }
  QCOMPARE(withBackward, 5);
}

// strategy2's backward materialises a zero gradient of all of c per row (select's backward):
// at N=16384, M=4096 that is about 1 TiB of writes, estimated at well over a minute. Without
// --force it is skipped with the estimate, and the run still succeeds.
// A NaN or Inf in an output or its float64 reference fails the accuracy check: max_rel_err is
// null in the JSON (which stays valid), the run's warnings name the tensor, exit code 1.
void TestCliStrategies::nonFiniteFailsTheCheck_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<bool>("json");
  QTest::addColumn<QStringList>("failing");  // tensors the warnings name
  QTest::addColumn<bool>("dcChecked");       // dC's error is a finite number
  QTest::newRow("NaN a, JSON") << QStringList{"--a", "@IN@/a_nan.npy"} << true
                               << QStringList{"out holds"} << false;
  QTest::newRow("NaN a, table") << QStringList{"--a", "@IN@/a_nan.npy"} << false
                                << QStringList{"out holds"} << false;
  // c full of Inf: out and dA are not finite (nor their references), dC = a^T g is
  QTest::newRow("Inf c, backward a,c")
      << QStringList{"--c", "@IN@/c_inf.npy", "--backward", "--requires-grad", "a,c"} << true
      << QStringList{"out holds", "dA holds"} << true;
}

void TestCliStrategies::nonFiniteFailsTheCheck() {
  QFETCH(QStringList, args);
  QFETCH(bool, json);
  QFETCH(QStringList, failing);
  QFETCH(bool, dcChecked);
  npy::write(
      in("a_nan.npy").toStdString(),
      hostTensor({kN, kI, kJ}, std::vector<double>(kN * kI * kJ, std::nan("")), DType::Float32));
  npy::write(in("c_inf.npy").toStdString(),
             hostTensor({kM, kJ, kK},
                        std::vector<double>(kM * kJ * kK, std::numeric_limits<double>::infinity()),
                        DType::Float32));
  for (QString& a : args) a.replace(QStringLiteral("@IN@"), dir_.filePath(QStringLiteral("in")));
  QStringList full{"strategies",
                   "--n",
                   QString::number(kN),
                   "--m",
                   QString::number(kM),
                   "--i",
                   QString::number(kI),
                   "--j",
                   QString::number(kJ),
                   "--k",
                   QString::number(kK),
                   "--batch",
                   "10",
                   "--repeats",
                   "1"};
  full += args;
  if (json)
    full << "--json"
         << "-";
  const CliResult r = runCli(full);
  QVERIFY2(r.finished && !r.crashed, qPrintable(r.describe()));
  QVERIFY2(r.exitCode == 1, qPrintable(r.describe()));
  if (!json) {
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains(QRegularExpression(QStringLiteral("\\n(strategy1 .* NaN)\\n"))),
             qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("warning: strategy1: out holds 1358 NaN and 0 Inf of "
                                         "1358 elements")),
             qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("accuracy check fails")), qPrintable(out));
    return;
  }
  QString error;
  const QJsonObject report = parseObject(r.out, &error);  // valid JSON: no NaN in it
  QVERIFY2(error.isEmpty(), qPrintable(error + ": " + r.out.left(300)));
  QCOMPARE(report.value("runs").toArray().size(), 5);
  for (const QJsonValue& v : report.value("runs").toArray()) {
    const QJsonObject run = v.toObject();
    const QString name = run.value("strategy").toString();
    QVERIFY2(run.value("ok").toBool(), qPrintable(name));
    QVERIFY2(run.value("max_rel_err").isNull(), qPrintable(name));
    QCOMPARE(run.value("accuracy_failed").toBool(), true);
    const QJsonArray warnings = run.value("warnings").toArray();
    QCOMPARE(warnings.size(), failing.size());
    for (qsizetype w = 0; w < failing.size(); ++w)
      QVERIFY2(warnings[w].toString().startsWith(failing[w]), qPrintable(warnings[w].toString()));
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains(QStringLiteral("warning: ") + name + QStringLiteral(": out holds")),
             qPrintable(err));
    if (dcChecked) {
      const QJsonObject backward = run.value("backward").toObject();
      QVERIFY2(backward.value("max_rel_err_da").isNull(), qPrintable(name));
      QVERIFY2(backward.value("max_rel_err_dc").toDouble(1) < 1e-5, qPrintable(name));
    }
  }
}

// Every strategy out of memory: "-" for their curMem/maxMem (a statement that did not finish
// has none), and no claim about what stays alive.
void TestCliStrategies::everyStrategyFails() {
  const CliResult r =
      runCli({"strategies", "--preset", "small", "--repeats", "1", "--device-memory", "1KiB"});
  QVERIFY2(r.finished && !r.crashed, qPrintable(r.describe()));
  QCOMPARE(r.exitCode, 1);
  const QString out = QString::fromUtf8(r.out);
  for (const char* s : {"strategy1", "strategy2", "strategy3", "direct", "fused"}) {
    const QRegularExpression failed(
        QStringLiteral("\\n%1 +- +- +- +-  FAILED: out of memory").arg(QString::fromLatin1(s)));
    QVERIFY2(out.contains(failed), qPrintable(QString::fromLatin1(s) + ": " + out));
  }
  QVERIFY2(!out.contains(QStringLiteral("every strategy leaves only")), qPrintable(out));
  QVERIFY2(out.contains(QStringLiteral("no strategy finished its statement")), qPrintable(out));
}

void TestCliStrategies::slowBackwardIsSkipped() {
  if (kSanitizedBuild) QSKIP("16384 per-row ops and a float64 reference take ~35 s under ASan");
  QTemporaryDir outDir(dir_.filePath(QStringLiteral("slow-XXXXXX")));
  const QString json = outDir.filePath("report.json");
  const CliResult r =
      runCli({"strategies", "--n", "16384", "--m", "4096", "--strategies", "strategy2", "--repeats",
              "1", "--backward", "--requires-grad", "a,c", "--json", json},
             kSlowMs);
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  const QString text = QString::fromUtf8(r.out);
  QVERIFY2(text.contains(QStringLiteral("--force")), qPrintable(text));
  const QRegularExpressionMatch m =
      QRegularExpression(QStringLiteral("about (\\d+) s")).match(text);
  QVERIFY2(m.hasMatch() && m.captured(1).toInt() > 60, qPrintable(text));

  QString error;
  const QJsonObject report = parseObject(readFile(json), &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  const QJsonObject backward = findRun(report, "strategy2").value("backward").toObject();
  QCOMPARE(backward.value("status").toString(), QStringLiteral("skipped"));
  QVERIFY2(backward.value("estimate_s").toDouble() > 60,
           qPrintable(QJsonDocument(backward).toJson()));
  QVERIFY(backward.value("message").toString().contains(QStringLiteral("--force")));
}

// The engine says that nothing requires grad (BackwardOutcome::Reason); the CLI adds its flag.
void TestCliStrategies::backwardWithNothingRequiringGrad() {
  const CliResult r = runCli({"strategies", "--n", "20", "--m", "4", "--strategies", "direct",
                              "--repeats", "1", "--device", "meta", "--backward"});
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  const QString text = QString::fromUtf8(r.out);
  QVERIFY2(text.contains(
               QStringLiteral("  direct: skipped: nothing requires grad: use --requires-grad a, "
                              "c or a,c\n")),
           qPrintable(text));
}

void TestCliStrategies::devices() {
  const CliResult r = runCli({"devices"});
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
  for (const char* device : {"cpu", "meta", "cuda"}) {
    const auto line = std::find_if(lines.begin(), lines.end(), [&](const QString& l) {
      return l.startsWith(QLatin1String(device) + ' ');
    });
    QVERIFY2(line != lines.end(),
             qPrintable(QString::fromLatin1(device) + " not in:\n" + QString::fromUtf8(r.out)));
    const QStringList words = line->simplified().split(' ');
    QVERIFY2(words.size() >= 3, qPrintable(*line));  // name, yes/no, details or the reason
    QVERIFY2(words[1] == QStringLiteral("yes") || words[1] == QStringLiteral("no"),
             qPrintable(*line));
  }
}

/// --device cuda runs the strategies on a GPU with the cpu device's memory numbers, or (no GPU
/// here) exits 1 with the probe's reason.
void TestCliStrategies::cudaRunsOrSaysWhy() {
  const QStringList args{"strategies", "--n", "256", "--m", "16", "--repeats", "1", "--json", "-"};
  const CliResult r = runCli(args + QStringList{"--device", "cuda"});
  if (!matmulviz::testing::cudaAnswers(QStringLiteral(MATMULVIZ_CLI_PATH))) {
    QVERIFY2(r.finished && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.err).contains("CUDA is not available"), qPrintable(r.describe()));
    return;
  }
  QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
  const CliResult cpu = runCli(args + QStringList{"--device", "cpu"});
  QString error;
  const QJsonObject gpuReport = parseObject(r.out, &error),
                    cpuReport = parseObject(cpu.out, &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  for (const char* s : {"strategy1", "strategy2", "strategy3", "direct", "fused"}) {
    QCOMPARE(findRun(gpuReport, s).value("max_mem_bytes"),
             findRun(cpuReport, s).value("max_mem_bytes"));
    QVERIFY2(findRun(gpuReport, s).value("max_rel_err").toDouble() < 1e-5, s);
  }
}

/// --model adds the cost model's prediction, labelled as a model: the per-row strategies are
/// host-bound (PyTorch's ops, one launch per row), direct and fused are not.
void TestCliStrategies::costModelPrediction() {
  const CliResult r = runCli({"strategies", "--device", "meta", "--repeats", "1", "--n", "4096",
                              "--m", "64", "--model", "h100", "--json", "-"});
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 0, qPrintable(r.describe()));
  QString error;
  const QJsonObject report = parseObject(r.out, &error);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  for (const char* s : {"strategy1", "strategy2", "strategy3", "direct", "fused"}) {
    const QJsonObject p = findRun(report, s).value("predicted").toObject();
    QVERIFY2(p.value("model").toString().contains("(model)"), s);
    QVERIFY2(p.value("time_s").toDouble() > 0, s);
  }
  const QJsonObject s1 = findRun(report, "strategy1").value("predicted").toObject();
  QVERIFY(s1.value("launches").toDouble() >= 4096);
  QCOMPARE(s1.value("bound").toString(), QStringLiteral("host"));
  QVERIFY2(s1.value("explanation").toString().contains("4096 rows x 3 ops x 6 us on the host"),
           qPrintable(s1.value("explanation").toString()));
  const QJsonObject fused = findRun(report, "fused").value("predicted").toObject();
  QCOMPARE(fused.value("launches").toDouble(), 5.0);  // kernel 08: 1 memset, 4 launches
  QVERIFY(fused.value("time_s").toDouble() < s1.value("time_s").toDouble());
}

/// --model FILE: a profile file as `calibrate` writes it gives its own predictions; a file that
/// is not one is bad input (exit 2) naming --model and the field.
void TestCliStrategies::costModelFromFile_data() {
  QTest::addColumn<QString>("bandwidth");  // the file's bandwidth_bytes_per_s
  QTest::addColumn<int>("exitCode");
  QTest::addColumn<QString>("expected");  // in stderr, or the run's model name
  QTest::addRow("a profile") << "1e12" << 0 << "My GPU (calibrated)";
  QTest::addRow("a negative bandwidth") << "-1" << 2 << "--model: ";
  QTest::addRow("not JSON") << "}" << 2 << "not a JSON object";
}
void TestCliStrategies::costModelFromFile() {
  QFETCH(QString, bandwidth);
  QFETCH(int, exitCode);
  QFETCH(QString, expected);
  const QString path = dir_.filePath(QStringLiteral("profile.json"));
  const QString text = QString::fromUtf8(
                           R"json({"format": "matmulviz-gpu-profile", "version": 1, "key": "mine",
              "name": "My GPU (calibrated)", "compute_capability": 89,
              "bandwidth_bytes_per_s": %1, "float32_flops_per_s": 8e13, "sgemm_flops_per_s": 6e13,
              "launch_latency_s": 3e-6, "on_chip_bytes_per_s": 2e13, "host_op_s": 6e-6,
              "blocking_copy_s": 3e-5, "host_to_device_bytes_per_s": 2e10})json")
                           .arg(bandwidth);
  QVERIFY(writeFile(path, bandwidth == "}" ? QByteArray("}") : text.toUtf8()));
  const CliResult r =
      runCli({"strategies", "--device", "meta", "--repeats", "1", "--n", "512", "--m", "64",
              "--strategies", "direct", "--model", path, "--json", "-"});
  QVERIFY2(r.finished && !r.crashed && r.exitCode == exitCode, qPrintable(r.describe()));
  if (exitCode != 0) {
    QVERIFY2(QString::fromUtf8(r.err).contains(expected), qPrintable(r.describe()));
    return;
  }
  QString error;
  const QJsonObject p = findRun(parseObject(r.out, &error), "direct").value("predicted").toObject();
  QVERIFY2(error.isEmpty(), qPrintable(error));
  QCOMPARE(p.value("model").toString(), expected);
  QVERIFY(p.value("time_s").toDouble() > 0);
}

/// calibrate needs a GPU: without one it says so and exits 1 (a run failed), writing nothing.
void TestCliStrategies::calibrateWithoutGpu() {
  if (matmulviz::testing::cudaAnswers(QStringLiteral(MATMULVIZ_CLI_PATH)))
    QSKIP("a GPU answers here: calibrate would measure it (a few seconds), not tested here");
  const QString out = dir_.filePath(QStringLiteral("calibrated.json"));
  const CliResult r = runCli({"calibrate", "--out", out});
  QVERIFY2(r.finished && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
  QVERIFY2(r.err.contains("no GPU to measure"), qPrintable(r.describe()));
  QVERIFY(!QFileInfo::exists(out));
}

QTEST_GUILESS_MAIN(TestCliStrategies)
#include "test_cli_strategies.moc"

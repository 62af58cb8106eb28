// matmulviz-cli multihead and einsum, end to end: the built executable runs through QProcess
// as a user runs it; exit codes, messages naming the argument, the JSON report and the .npy
// round trip (outputs saved, fed back as inputs, same results).
#include "core/io/npy.h"
#include "core/tensor/tensor.h"

#include "tests/common/cli_process.h"

#include <QtTest/QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <limits>

using namespace matmulviz;

namespace {

// Under the sanitizers each process costs ~0.3 s of CPU: rows that only exercise argument
// parsing (the same code as the release build runs, no memory work) are left to that build.
#ifdef MATMULVIZ_SANITIZED_BUILD
constexpr bool kSanitizedBuild = true;
#else
constexpr bool kSanitizedBuild = false;
#endif

using matmulviz::testing::CliResult;

CliResult runCli(const QStringList& args) {
  return matmulviz::testing::runCliProcess(QStringLiteral(MATMULVIZ_CLI_PATH), args);
}

QJsonObject parse(const QByteArray& bytes) {
  return QJsonDocument::fromJson(bytes).object();
}

/// A .npy file holding `sizes` of `dtype` with deterministic values in [0, 1).
QString writeNpy(const QTemporaryDir& dir, const QString& name, const Shape& sizes, DType dtype) {
  Tensor t = empty(sizes, dtype, nullptr, "x");
  for (int64_t i = 0; i < t.numel(); ++i)
    storeFromDouble(t.dataPtr(), dtype, i, static_cast<double>((i * 37) % 101) / 101.0);
  const QString path = dir.filePath(name);
  npy::write(path.toStdString(), t);
  return path;
}

/// A float32 .npy file holding `sizes` all equal to `value` (NaN, Inf).
QString writeFilled(const QTemporaryDir& dir, const QString& name, const Shape& sizes,
                    double value) {
  Tensor t = empty(sizes, DType::Float32, nullptr, "x");
  for (int64_t i = 0; i < t.numel(); ++i) storeFromDouble(t.dataPtr(), DType::Float32, i, value);
  const QString path = dir.filePath(name);
  npy::write(path.toStdString(), t);
  return path;
}

}  // namespace

class TestCliMultihead : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void doneWhenCommand() {
    const CliResult r =
        runCli({"multihead",  "--b",     "2",   "--s",        "8",
                "--h",        "16",      "--e", "4",          "--heads",
                "4",          "--top-p", "0.1", "--top-k",    "3",
                "--backward", "--json",  "-",   "--timeline", dir_.filePath("trace.json")});
    QVERIFY2(r.ok() && r.exitCode == 0, r.err.constData());
    QFile trace(dir_.filePath("trace.json"));
    QVERIFY(trace.open(QIODevice::ReadOnly));
    QVERIFY(!QJsonDocument::fromJson(trace.readAll()).isNull());
    const QJsonObject j = parse(r.out);
    QCOMPARE(j["device"].toString(), QStringLiteral("cpu"));
    const int t = j["t"].toInt(-1);
    QVERIFY(t >= 0 && t <= 6);  // at most top_k = 3 per sequence
    const QJsonArray shape = j["O3_shape"].toArray();
    QCOMPARE(shape.size(), 3);
    QCOMPARE(shape[0].toInt(), t);
    QCOMPARE(shape[1].toInt(), 4);
    QCOMPARE(shape[2].toInt(), 4);
    const QJsonObject norms = j["norms"].toObject();
    for (const char* k : {"O3", "dA1", "dW1"}) QVERIFY2(norms[k].isDouble(), k);
    QCOMPARE(j["mask"].toArray().size(), 2);
    QVERIFY(j["memory"].toObject()["max_mem_bytes"].toDouble() > 0);
    QVERIFY(!j["allocations"].toArray().isEmpty());
    if (t > 0) QVERIFY(j["memory"].toObject()["saved_for_backward_bytes"].toDouble() > 0);
    // FLOPs as PyTorch's FlopCounterMode counts them (torch/utils/flop_counter.py: bmm_flop =
    // 2 * b * m * n * k): one bmm [nh, t, hd] @ [nh, hd, e] forward, two in backward (A1 and W1).
    const qint64 bmm = 2 * 4 * t * (16 / 4) * 4;
    QCOMPARE(j["flops"].toObject()["forward"].toInteger(-1), bmm);
    QCOMPARE(j["flops"].toObject()["backward"].toInteger(-1), 2 * bmm);
  }

  void withoutBackwardNothingSaved() {
    const CliResult r = runCli({"multihead", "--top-p", "0.2", "--json", "-"});
    QVERIFY2(r.ok() && r.exitCode == 0, r.err.constData());
    const QJsonObject j = parse(r.out);
    QVERIFY(j["saved_for_backward"].toArray().isEmpty());
    QVERIFY(j["norms"].toObject()["dA1"].isNull());
    QVERIFY(j["flops"].toObject()["backward"].isNull());
  }

  // One row per kind of bad input the issue names; the finer cases (top_p < 0, top_k 0, sizes
  // of 0, einsum's other messages) are covered in-process by test_multihead and test_einsum,
  // so this suite starts few processes (each costs ~0.3 s of CPU under the sanitizers).
  void badInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("argName");
    QTest::newRow("h % heads") << QStringList{"--h", "10", "--heads", "4"} << "--heads";
    QTest::newRow("top_p > 1") << QStringList{"--top-p", "1.01"} << "--top-p";
    if (!kSanitizedBuild)
      QTest::newRow("top_k > s") << QStringList{"--s", "5", "--top-k", "6"} << "--top-k";
    if (!kSanitizedBuild) QTest::newRow("dtype") << QStringList{"--dtype", "int64"} << "--dtype";
    QTest::newRow("A1 shape") << QStringList{"--A1", "A1_bad.npy", "--h", "16"} << "--A1";
    QTest::newRow("A1 int64") << QStringList{"--A1", "A1_int.npy"} << "--A1";
    QTest::newRow("A1 truncated") << QStringList{"--A1", "A1_trunc.npy"} << "--A1";
    QTest::newRow("A1 big-endian") << QStringList{"--A1", "A1_be.npy"} << "--A1";
    if (!kSanitizedBuild)
      QTest::newRow("W1 rows") << QStringList{"--h", "16", "--W1", "W1_bad.npy"} << "--W1";
    if (!kSanitizedBuild)
      QTest::newRow("P shape") << QStringList{"--s", "8", "--P", "P_bad.npy"} << "--P";
    QTest::newRow("grad_output shape")
        << QStringList{"--top-p", "0", "--grad-output", "g_bad.npy"} << "--grad-output";
  }
  void badInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, argName);
    writeNpy(dir_, "A1_bad.npy", {2, 8, 12}, DType::Float32);
    writeNpy(dir_, "A1_int.npy", {2, 8, 16}, DType::Int64);
    writeNpy(dir_, "W1_bad.npy", {15, 4}, DType::Float32);
    writeNpy(dir_, "P_bad.npy", {2, 7}, DType::Float32);
    writeNpy(dir_, "g_bad.npy", {3, 4, 4}, DType::Float32);
    QFile::remove(dir_.filePath("A1_trunc.npy"));
    QFile::copy(writeNpy(dir_, "A1_ok.npy", {2, 8, 16}, DType::Float32),
                dir_.filePath("A1_trunc.npy"));
    QFile trunc(dir_.filePath("A1_trunc.npy"));
    QVERIFY(trunc.resize(trunc.size() - 4));
    QFile le(dir_.filePath("A1_ok.npy"));
    QVERIFY(le.open(QIODevice::ReadOnly));
    QByteArray bytes = le.readAll();
    bytes.replace("'<f4'", "'>f4'");
    QFile be(dir_.filePath("A1_be.npy"));
    QVERIFY(be.open(QIODevice::WriteOnly) && be.write(bytes) == bytes.size());
    be.close();
    for (QString& a : args)
      if (a.endsWith(".npy")) a = dir_.filePath(a);
    const QString json = dir_.filePath("report.json");
    QFile::remove(json);
    const CliResult r = runCli(QStringList{"multihead", "--json", json} + args);
    QVERIFY(r.ok());
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(argName.toUtf8()), r.err.constData());
    QVERIFY(!QFile::exists(json));
  }

  void npyRoundTrip() {
    const QString first = dir_.filePath("first"), second = dir_.filePath("second");
    const QStringList common{"multihead", "--b",     "3", "--s",     "5",       "--h",
                             "6",         "--e",     "5", "--heads", "3",       "--top-p",
                             "0.2",       "--top-k", "4", "--dtype", "bfloat16"};
    CliResult r = runCli(common + QStringList{"--backward", "--save-dir", first, "--json", "-"});
    QVERIFY2(r.ok() && r.exitCode == 0, r.err.constData());
    const QJsonObject j1 = parse(r.out);
    auto f = [&](const QString& d, const char* n) { return QDir(d).filePath(QString(n) + ".npy"); };
    r = runCli(common + QStringList{"--A1", f(first, "A1"), "--P", f(first, "P"), "--W1",
                                    f(first, "W1"), "--grad-output", f(first, "grad_output"),
                                    "--save-dir", second, "--json", "-"});
    QVERIFY2(r.ok() && r.exitCode == 0, r.err.constData());
    const QJsonObject j2 = parse(r.out);
    QCOMPARE(j2["t"].toInt(), j1["t"].toInt());
    QCOMPARE(j2["norms"].toObject(), j1["norms"].toObject());
    for (const char* n : {"O3", "dA1", "dW1", "mask"})
      QCOMPARE(npy::read(f(second, n).toStdString()).toDoubles(),
               npy::read(f(first, n).toStdString()).toDoubles());
  }

  void einsumCommand_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("expect");  // in the JSON's output_shape, or in stderr
    // FLOPs of its one bmm (torch/utils/flop_counter.py's bmm_flop = 2 * b * m * n * k)
    QTest::addColumn<qint64>("flops");
    QTest::newRow("mm") << QStringList{"ik,kj->ij", "--shapes", "2x3,3x4"} << 0 << "[2,4]"
                        << qint64{2 * 2 * 4 * 3};
    QTest::newRow("float16 bmm") << QStringList{"bij,bjk->bik", "--shapes", "2x3x4,2x4x5",
                                                "--dtype", "float16"}
                                 << 0 << "[2,3,5]" << qint64{2 * 2 * 3 * 5 * 4};
    if (!kSanitizedBuild)
      QTest::newRow("mismatch") << QStringList{"ik,kj->ij", "--shapes", "2x3,4x4"} << 2
                                << "subscript k has size 4" << qint64{0};
    if (!kSanitizedBuild)
      QTest::newRow("bad shape") << QStringList{"ij->i", "--shapes", "2y3"} << 2 << "--shapes"
                                 << qint64{0};
    if (!kSanitizedBuild)
      QTest::newRow("no meta device") << QStringList{"ij->i", "--shapes", "2x3", "--device", "meta"}
                                      << 2 << "--device: 'meta' is not offered here" << qint64{0};
  }
  void einsumCommand() {
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, expect);
    QFETCH(qint64, flops);
    const CliResult r = runCli(QStringList{"einsum"} + args + QStringList{"--json", "-"});
    QVERIFY(r.ok());
    QCOMPARE(r.exitCode, exitCode);
    if (exitCode == 0) {
      const QJsonObject j = parse(r.out);
      const QByteArray shape =
          QJsonDocument(j["output_shape"].toArray()).toJson(QJsonDocument::Compact);
      QCOMPARE(QString::fromUtf8(shape), expect);
      QVERIFY(j["max_rel_err"].toDouble() < 1e-2);
      QCOMPARE(j["device"].toString(), QStringLiteral("cpu"));
      QCOMPARE(j["flops"].toObject()["forward"].toInteger(-1), flops);
    } else {
      QVERIFY2(r.err.contains(expect.toUtf8()), r.err.constData());
    }
  }

  /// NaN or Inf in the inputs: the output is not finite, so the check fails (exit 1), the JSON
  /// stays valid (null for the error or norm) and the warnings name the tensor.
  void nonFiniteFailsTheCheck_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("nullField");  // JSON pointer-ish: "max_rel_err" or "norms/O3"
    QTest::addColumn<QString>("warning");    // how the first warning starts
    QTest::newRow("einsum, Inf A")
        << QStringList{"einsum", "ij,jk->ik", "--inputs", "inf_A.npy,B.npy"} << "max_rel_err"
        << "out holds";
    QTest::newRow("einsum, NaN B")
        << QStringList{"einsum", "ij,jk->ik", "--inputs", "A.npy,nan_B.npy"} << "max_rel_err"
        << "out holds";
    QTest::newRow("multihead, NaN A1")
        << QStringList{"multihead", "--A1", "nan_A1.npy", "--top-p", "0", "--backward"}
        << "norms/O3"
        << "O3 holds";
  }
  void nonFiniteFailsTheCheck() {
    QFETCH(QStringList, args);
    QFETCH(QString, nullField);
    QFETCH(QString, warning);
    writeNpy(dir_, "A.npy", {3, 4}, DType::Float32);
    writeNpy(dir_, "B.npy", {4, 5}, DType::Float32);
    writeFilled(dir_, "inf_A.npy", {3, 4}, std::numeric_limits<double>::infinity());
    writeFilled(dir_, "nan_B.npy", {4, 5}, std::nan(""));
    writeFilled(dir_, "nan_A1.npy", {2, 8, 16}, std::nan(""));
    for (QString& a : args) {
      QStringList files = a.split(',');
      for (QString& f : files)
        if (f.endsWith(".npy")) f = dir_.filePath(f);
      a = files.join(',');
    }
    const CliResult r = runCli(args + QStringList{"--json", "-"});
    QVERIFY(r.ok());
    QVERIFY2(r.exitCode == 1, qPrintable(r.describe()));
    QJsonParseError pe;
    const QJsonObject j = QJsonDocument::fromJson(r.out, &pe).object();
    QVERIFY2(pe.error == QJsonParseError::NoError, r.out.constData());
    const QStringList path = nullField.split('/');
    const QJsonValue v = path.size() == 1 ? j[path[0]] : j[path[0]].toObject()[path[1]];
    QVERIFY2(v.isNull(), r.out.constData());
    QCOMPARE(j["accuracy_failed"].toBool(), true);
    QVERIFY2(j["warnings"].toArray().first().toString().startsWith(warning), r.out.constData());
    QVERIFY2(r.err.contains("warning: " + warning.toUtf8()), r.err.constData());
  }

  /// An output directory the OS refuses: exit 2 before any work, naming the flag and the
  /// reason; a file where the directory should be is refused too.
  void saveDirRefused_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("multihead in /proc") << QStringList{"multihead", "--save-dir", "/proc/x"}
                                        << "--save-dir: cannot create '/proc/x': ";
    QTest::newRow("einsum in /proc")
        << QStringList{"einsum", "ij,jk->ik", "--shapes", "2x3,3x4", "--save-dir", "/proc/x"}
        << "--save-dir: cannot create '/proc/x': ";
    QTest::newRow("multihead timeline in /proc/1")
        << QStringList{"multihead", "--timeline", "/proc/1/x"}
        << "--timeline: cannot create a file in '/proc/1': ";
    QTest::newRow("einsum json in /proc/1")
        << QStringList{"einsum", "ij,jk->ik", "--shapes", "2x3,3x4", "--json", "/proc/1/x"}
        << "--json: cannot create a file in '/proc/1': ";
  }
  void saveDirRefused() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const CliResult r = runCli(args);
    QVERIFY(r.ok());
    QVERIFY2(r.exitCode == 2, qPrintable(r.describe()));
    QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
    QVERIFY2(r.out.isEmpty(), r.out.constData());
  }

  /// --device cuda: on a GPU, the cpu device's results and memory; without one (here), exit 1
  /// with the probe's reason before any work, for both commands.
  void cudaRunsOrSaysWhy_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("multihead") << QStringList{"multihead", "--top-p", "0.3", "--backward"};
    QTest::newRow("einsum") << QStringList{"einsum", "bij,bjk->bik", "--shapes", "2x3x4,2x4x5"};
  }
  void cudaRunsOrSaysWhy() {
    QFETCH(QStringList, args);
    const CliResult cuda = runCli(args + QStringList{"--device", "cuda", "--json", "-"});
    QVERIFY(cuda.ok());
    if (!matmulviz::testing::cudaAnswers(QStringLiteral(MATMULVIZ_CLI_PATH))) {
      QCOMPARE(cuda.exitCode, 1);
      QVERIFY2(cuda.err.contains("--device cuda: CUDA is not available"), cuda.err.constData());
      QVERIFY(cuda.out.isEmpty());
      return;
    }
    QVERIFY2(cuda.exitCode == 0, cuda.err.constData());
    const CliResult cpu = runCli(args + QStringList{"--json", "-"});
    QVERIFY2(cpu.ok() && cpu.exitCode == 0, cpu.err.constData());
    const QJsonObject onGpu = parse(cuda.out), onCpu = parse(cpu.out);
    QCOMPARE(onGpu["memory"].toObject(), onCpu["memory"].toObject());
    QCOMPARE(onGpu["device"].toString(), QStringLiteral("cuda"));
  }
};

QTEST_GUILESS_MAIN(TestCliMultihead)
#include "test_cli_multihead.moc"

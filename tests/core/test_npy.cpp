// npy::read / readChecked / write: round trips of every dtype, layouts NumPy writes (hand-built
// bytes, as numpy/lib/format.py lays them out), and every error with the words a user needs.

#include "core/io/npy.h"
#include "core/memory/host_backing.h"
#include "core/ops/ops.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <string>

using namespace matmulviz;
Q_DECLARE_METATYPE(matmulviz::DType)
Q_DECLARE_METATYPE(matmulviz::Shape)

namespace {

// magic, version, little-endian header length, header (as given: no padding added), data.
QByteArray npyBytes(const QByteArray& header, const QByteArray& data = {}, int major = 1,
                    int minor = 0) {
  QByteArray out("\x93NUMPY", 6);
  out += char(major);
  out += char(minor);
  const int lenBytes = major == 1 ? 2 : 4;
  for (int i = 0; i < lenBytes; ++i) out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

QByteArray floats(std::initializer_list<float> values) {
  QByteArray out;
  for (float f : values) out.append(reinterpret_cast<const char*>(&f), sizeof f);
  return out;
}

// numpy.save(np.arange(6, dtype='<f4').reshape(2, 3)) with NumPy >= 1.14: 128 bytes of header.
QByteArray numpyHeader2x3() {
  QByteArray h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  h += QByteArray(118 - h.size() - 1, ' ') + '\n';
  return h;
}

std::vector<double> testValues(int64_t n, DType dtype) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)  // exact in float16/bfloat16: multiples of 1/4 below 64
    v[i] = dtype == DType::Int64  ? double(i * 7919 - 50000)
           : dtype == DType::Bool ? double(i % 3 == 1)
                                  : double(i % 200) * 0.25 - 17.0;
  return v;
}

}  // namespace

class TestNpy : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string path(const char* name) { return (dir_.path() + "/" + name).toStdString(); }
  std::string file(const char* name, const QByteArray& bytes) {
    QFile f(QString::fromStdString(path(name)));
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) qFatal("cannot write");
    return path(name);
  }
  static QByteArray contents(const std::string& p) {
    QFile f(QString::fromStdString(p));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }

 private slots:
  void roundTrip_data() {
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<Shape>("shape");
    const std::pair<const char*, Shape> shapes[] = {{"0-d", {}},
                                                    {"[7]", {7}},
                                                    {"[3, 5]", {3, 5}},
                                                    {"[2, 0, 3]", {2, 0, 3}},
                                                    {"[0]", {0}},
                                                    {"[2, 3, 17]", {2, 3, 17}},
                                                    {"[1, 1, 1, 1]", {1, 1, 1, 1}}};
    for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int64,
                     DType::Bool})
      for (const auto& [name, shape] : shapes)
        QTest::addRow("%s %s", dtypeName(dt).data(), name) << dt << shape;
  }
  void roundTrip() {
    QFETCH(DType, dtype);
    QFETCH(Shape, shape);
    const Tensor t = fromDoubles(shape, testValues(numelOf(shape), dtype), dtype);
    const std::string p = path("rt.npy");
    npy::write(p, t);
    const QByteArray bytes = contents(p);
    const int64_t headerEnd = bytes.indexOf('\n') + 1;
    QCOMPARE(headerEnd % 64, 0);  // numpy/lib/format.py ARRAY_ALIGN
    const DType stored = dtype == DType::BFloat16 ? DType::Float32 : dtype;
    QCOMPARE(bytes.size() - headerEnd, numelOf(shape) * elementSize(stored));
    QVERIFY(!std::filesystem::exists(p + ".tmp"));

    const Tensor r = npy::read(p);
    QCOMPARE(r.dtype(), stored);  // bfloat16 is written as float32
    QCOMPARE(r.sizes(), shape);
    QCOMPARE(r.strides(), contiguousStrides(shape));
    QCOMPARE(r.label(), std::string("rt.npy"));
    QCOMPARE(r.toDoubles(), t.toDoubles());
  }

  void nonContiguous_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("transpose") << 0;
    QTest::newRow("slice step 2") << 1;
    QTest::newRow("expand (stride 0)") << 2;
    QTest::newRow("permute of a narrow, bfloat16") << 3;
    QTest::newRow("cpu device, transpose") << 4;
  }
  void nonContiguous() {
    QFETCH(int, kind);
    HostBacking backing;
    const auto cpu =
        std::make_shared<DeviceContext>(DeviceKind::Cpu, backing, CachingAllocator::Options{});
    const DType dt = kind == 3 ? DType::BFloat16 : DType::Float64;
    Tensor base = fromDoubles({4, 6, 5}, testValues(120, dt), dt);
    if (kind == 4) {
      Tensor c = empty({4, 6, 5}, dt, cpu, "c");
      copyInto(c, base);
      base = c;
    }
    Tensor v;
    switch (kind) {
      case 0:
      case 4:
        v = transpose(base, 0, 2);
        break;
      case 1:
        v = slice(base, 1, 1, 6, 2);
        break;
      case 2:
        v = expand(select(select(base, 0, 1), 0, 2), {3, 5});
        break;
      default:
        v = permute(narrow(base, 2, 1, 3), {2, 0, 1});
        break;
    }
    QVERIFY(!v.isContiguous());
    const size_t events = cpu->allocator().events().size();
    npy::write(path("nc.npy"), v);
    QCOMPARE(cpu->allocator().events().size(), events);  // writing allocates nothing on a device
    const Tensor r = npy::read(path("nc.npy"));
    QCOMPARE(r.sizes(), v.sizes());
    QCOMPARE(r.toDoubles(), v.toDoubles());
  }

  // The exact bytes numpy.save writes, both ways.
  void numpyLayout() {
    const std::string p = path("np.npy");
    npy::write(p, fromDoubles({2, 3}, {0, 1, 2, 3, 4, 5}, DType::Float32));
    QCOMPARE(contents(p), npyBytes(numpyHeader2x3(), floats({0, 1, 2, 3, 4, 5})));
    npy::write(p, fromDoubles({5}, {1, 2, 3, 4, 5}, DType::Float32));
    QVERIFY(contents(p).contains("'shape': (5,), }"));
    npy::write(p, fromDoubles({}, {2.5}, DType::Float32));
    QVERIFY(contents(p).contains("'shape': (), }"));
  }

  void readNumpyFiles_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<Shape>("shape");
    const QByteArray data = floats({0, 1, 2, 3, 4, 5});
    QTest::newRow("numpy >= 1.14, v1.0") << npyBytes(numpyHeader2x3(), data) << Shape{2, 3};
    QTest::newRow("v2.0") << npyBytes(numpyHeader2x3(), data, 2) << Shape{2, 3};
    QTest::newRow("v3.0 (utf-8)") << npyBytes(numpyHeader2x3(), data, 3) << Shape{2, 3};
    QTest::newRow("old 16-byte alignment")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }    \n", data)
        << Shape{6};
    QTest::newRow("double quotes, other key order, no trailing comma")
        << npyBytes("{\"shape\": (3,2), \"fortran_order\": False, \"descr\": \"<f4\"}\n", data)
        << Shape{3, 2};
    QTest::newRow("0-d") << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n",
                                     floats({7}))
                         << Shape{};
    QTest::newRow("empty dim")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 0), }\n") << Shape{4, 0};
  }
  void readNumpyFiles() {
    QFETCH(QByteArray, bytes);
    QFETCH(Shape, shape);
    const Tensor t = npy::read(file("in.npy", bytes));
    QCOMPARE(t.sizes(), shape);
    QCOMPARE(t.dtype(), DType::Float32);
    for (int64_t i = 0; i < t.numel(); ++i) QCOMPARE(t.item(i), shape.empty() ? 7.0 : double(i));
  }

  // numpy.save(np.array([True, False, True])): descr '|b1', one byte per element; a byte other
  // than 0 or 1 (np.frombuffer(b'\x02', bool) is True) reads as true.
  void readNumpyBool() {
    const QByteArray data("\x01\x00\x01\x02", 4);
    const QByteArray header = "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }\n";
    const Tensor t = npy::read(file("b.npy", npyBytes(header, data)));
    QCOMPARE(t.dtype(), DType::Bool);
    QCOMPARE(t.toDoubles(), (std::vector<double>{1, 0, 1, 1}));
    const std::string p = path("bw.npy");
    npy::write(p, fromDoubles({3}, {1, 0, 1}, DType::Bool));
    QVERIFY(contents(p).contains("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"));
    QVERIFY(contents(p).endsWith(QByteArray("\x01\x00\x01", 3)));
  }

  void readErrors_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("words");
    auto header = [](const char* descr, const char* fortran, const char* shape) {
      return QByteArray("{'descr': ") + descr + ", 'fortran_order': " + fortran +
             ", 'shape': " + shape + ", }\n";
    };
    const QByteArray f4 = header("'<f4'", "False", "(2, 3)");
    const QByteArray data = floats({0, 1, 2, 3, 4, 5});
    QTest::newRow("bad magic") << QByteArray("PK\x03\x04 a zip file") << QStringList{"not a .npy"};
    QTest::newRow("empty file") << QByteArray() << QStringList{"not a .npy"};
    QTest::newRow("version 4.0") << npyBytes(f4, data, 4) << QStringList{"version 4.0"};
    QTest::newRow("version 1.1") << npyBytes(f4, data, 1, 1) << QStringList{"version 1.1"};
    QTest::newRow("header past the end")
        << npyBytes(f4).left(30) << QStringList{"truncated .npy header"};
    QTest::newRow("not a dict") << npyBytes("[1, 2]\n") << QStringList{"malformed", "'{'"};
    QTest::newRow("missing key") << npyBytes("{'descr': '<f4', 'shape': (2, 3)}\n", data)
                                 << QStringList{"malformed", "fortran_order"};
    QTest::newRow("extra key")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}\n", data)
        << QStringList{"malformed", "unexpected key 'x'"};
    QTest::newRow("unterminated string")
        << npyBytes("{'descr: '<f4'}\n") << QStringList{"malformed"};
    QTest::newRow("float dim") << npyBytes(header("'<f4'", "False", "(2.5,)"), data)
                               << QStringList{"malformed", "expected ')'"};
    QTest::newRow("negative dim") << npyBytes(header("'<f4'", "False", "(-6,)"), data)
                                  << QStringList{"malformed", "tuple of ints"};
    QTest::newRow("huge dim") << npyBytes(header("'<f4'", "False", "(99999999999999999999,)"), data)
                              << QStringList{"malformed", "int64"};
    QTest::newRow("shape overflow")
        << npyBytes(header("'<f4'", "False", "(4294967296, 4294967296)"), data)
        << QStringList{"too large"};
    QTest::newRow("empty shape whose strides overflow (UBSan)")
        << npyBytes(header("'<f4'", "False", "(0, 1099511627776, 1099511627776)"))
        << QStringList{"shape [0, 1099511627776, 1099511627776] too large", "strides"};
    QTest::newRow("fortran_order not bool")
        << npyBytes(header("'<f4'", "0", "(2, 3)"), data) << QStringList{"malformed", "True"};
    QTest::newRow("text after dict") << npyBytes(f4 + "x", data) << QStringList{"malformed"};
    QTest::newRow("big-endian")
        << npyBytes(header("'>f4'", "False", "(2, 3)"), data)
        << QStringList{"byte order '>' (big-endian) is not supported; save with dtype '<f4'"};
    QTest::newRow("uint8") << npyBytes(header("'|u1'", "False", "(6,)"), QByteArray(6, 0))
                           << QStringList{"unsupported dtype '|u1'", "'<f4'"};
    QTest::newRow("int32") << npyBytes(header("'<i4'", "False", "(2, 3)"), data)
                           << QStringList{"unsupported dtype '<i4'"};
    QTest::newRow("V2 is not bfloat16")
        << npyBytes(header("'<V2'", "False", "(2, 6)"), data)
        << QStringList{"unsupported dtype '<V2'", "bfloat16", "float32"};
    QTest::newRow("structured") << npyBytes(header("[('a', '<f4')]", "False", "(6,)"), data)
                                << QStringList{"unsupported dtype", "structured"};
    QTest::newRow("fortran order") << npyBytes(header("'<f4'", "True", "(2, 3)"), data)
                                   << QStringList{"fortran_order True", "C order"};
    QTest::newRow("truncated data")
        << npyBytes(f4, data.left(20))
        << QStringList{"truncated data", "needs 24 bytes", "the file has 20"};
    QTest::newRow("trailing data")
        << npyBytes(f4, data + "junk")
        << QStringList{"trailing data", "needs 24 bytes", "the file has 28"};
  }
  void readErrors() {
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, words);
    const std::string p = file("bad.npy", bytes);
    try {
      npy::read(p);
      QFAIL("no exception");
    } catch (const npy::NpyError& e) {
      const QString msg = QString::fromUtf8(e.what());
      QVERIFY2(msg.startsWith("'" + QString::fromStdString(p) + "': "), e.what());
      for (const QString& w : words) QVERIFY2(msg.contains(w), e.what());
    }
  }

  void readFileErrors_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("words");
    QTest::newRow("missing") << "missing.npy"
                             << "cannot open: No such file or directory";
    QTest::newRow("directory") << "."
                               << "is a directory";
  }
  void readFileErrors() {
    QFETCH(QString, name);
    QFETCH(QString, words);
    try {
      npy::read(path(name.toUtf8().constData()));
      QFAIL("no exception");
    } catch (const npy::NpyError& e) {
      QVERIFY2(QString(e.what()).contains(words), e.what());
    }
  }

  void readChecked_data() {
    QTest::addColumn<Shape>("expected");
    QTest::addColumn<bool>("allowFloat16Only");
    QTest::addColumn<QString>("error");  // empty: accepted
    QTest::newRow("any shape") << Shape{} << false << "";
    QTest::newRow("exact") << Shape{2, 3} << false << "";
    QTest::newRow("wildcard") << Shape{-1, 3} << false << "";
    QTest::newRow("wrong size") << Shape{131072, 1, 64} << false
                                << "--a: '%1': expected shape [131072, 1, 64] but the file has "
                                   "[2, 3] (* = any size)";
    QTest::newRow("wrong dim, wildcard") << Shape{-1, 4} << false
                                         << "--a: '%1': expected shape [*, 4] but the file "
                                            "has [2, 3] (* = any size)";
    QTest::newRow("wrong rank") << Shape{6} << false
                                << "--a: '%1': expected shape [6] but the file has [2, 3]";
    QTest::newRow("wrong dtype") << Shape{} << true
                                 << "--a: '%1' has dtype float32; allowed: float16";
  }
  void readChecked() {
    QFETCH(Shape, expected);
    QFETCH(bool, allowFloat16Only);
    QFETCH(QString, error);
    const std::string p = file("a.npy", npyBytes(numpyHeader2x3(), floats({0, 1, 2, 3, 4, 5})));
    const std::vector<DType> allowed = allowFloat16Only
                                           ? std::vector{DType::Float16}
                                           : std::vector{DType::Float16, DType::Float32};
    try {
      const Tensor t = npy::readChecked(p, "--a", allowed, expected);
      QVERIFY2(error.isEmpty(), "no exception");
      QCOMPARE(t.sizes(), (Shape{2, 3}));
    } catch (const npy::NpyError& e) {
      QVERIFY2(!error.isEmpty(), e.what());
      QVERIFY2(QString(e.what()).contains(error.arg(QString::fromStdString(p))), e.what());
    }
  }

  void readCheckedNamesArgOnReadErrors() {
    const std::string p = file("z.npy", "PK\x03\x04");
    try {
      npy::readChecked(p, "--b", {DType::Float32});
      QFAIL("no exception");
    } catch (const npy::NpyError& e) {
      QVERIFY2(QString(e.what()).startsWith(QString::fromStdString("--b: '" + p + "': not a")),
               e.what());
    }
  }

  void writeErrors_data() {
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("words");
    QTest::newRow("missing directory") << "no/such/dir/x.npy"
                                       << "No such file or directory";
    QTest::newRow("target is a directory") << "isdir"
                                           << "cannot rename";
  }
  void writeErrors() {
    QFETCH(QString, where);
    QFETCH(QString, words);
    const std::string p = path(where.toUtf8().constData());
    if (where == "isdir") std::filesystem::create_directory(p);
    try {
      npy::write(p, fromDoubles({2}, {1, 2}, DType::Float32));
      QFAIL("no exception");
    } catch (const npy::NpyError& e) {
      QVERIFY2(QString(e.what()).contains(words), e.what());
      QVERIFY2(QString(e.what()).contains(QString::fromStdString(p)), e.what());
    }
    QCOMPARE(std::filesystem::is_directory(p), where == "isdir");
    QVERIFY(!std::filesystem::exists(p + ".tmp"));
    QVERIFY(!std::filesystem::exists(std::filesystem::path(p).parent_path()) || where == "isdir");
  }

  void writeMetaThrows() {
    MetaBacking backing;
    const auto meta =
        std::make_shared<DeviceContext>(DeviceKind::Meta, backing, CachingAllocator::Options{});
    QVERIFY_THROWS_EXCEPTION(npy::NpyError,
                             npy::write(path("m.npy"), empty({2, 3}, DType::Float32, meta, "m")));
    QVERIFY(!std::filesystem::exists(path("m.npy")));
  }

  void overwriteAndVersion2() {
    const std::string p = path("big.npy");
    npy::write(p, fromDoubles({3}, {1, 2, 3}, DType::Float64));
    const Shape many(22000, 1);  // "1, " x 22000 makes a header beyond 65535 bytes
    npy::write(p, fromDoubles(many, {4.5}, DType::Float64));
    const QByteArray bytes = contents(p);
    QCOMPARE(int(bytes[6]), 2);  // format version 2.0
    QCOMPARE((bytes.indexOf('\n') + 1) % 64, 0);
    const Tensor r = npy::read(p);
    QCOMPARE(r.sizes(), many);
    QCOMPARE(r.item(0), 4.5);
  }
};

QTEST_GUILESS_MAIN(TestNpy)
#include "test_npy.moc"

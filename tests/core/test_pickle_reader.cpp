// pickle::parse / readPickleFile: every accepted opcode on hand-made bytes (laid out as Python's
// Lib/pickle.py writes them), the fixtures Python's pickle wrote at protocols 2, 4 and 5
// (tests/reference/make_snapshot_fixtures.py), memo sharing, and every refusal with its message:
// object-building opcodes, truncation at every offset, hostile lengths and memo indices.

#include "core/io/pickle_opcodes.h"
#include "core/io/pickle_reader.h"

#include <QtTest/QtTest>

#include <sys/stat.h>

#include <atomic>
#include <cstring>
#include <string>

using namespace matmulviz::pickle;

namespace {

QByteArray fixture(const char* name) {
  QFile f(QStringLiteral(MATMULVIZ_SNAPSHOT_DIR "/") + name);
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read fixture %s", name);
  return f.readAll();
}

std::span<const uint8_t> span(const QByteArray& b) {
  return {reinterpret_cast<const uint8_t*>(b.constData()), static_cast<size_t>(b.size())};
}

// The bytes of a literal, NULs included.
template <size_t N>
QByteArray B(const char (&s)[N]) {
  return QByteArray(s, N - 1);
}

// PROTO 4, then `body`, then STOP.
QByteArray p4(const QByteArray& body) {
  return QByteArray("\x80\x04", 2) + body + '.';
}

QString errorOf(const QByteArray& bytes) {
  try {
    parse(span(bytes));
  } catch (const PickleError& e) {
    return QString::fromStdString(e.what());
  }
  return QStringLiteral("(no error)");
}

}  // namespace

class TestPickleReader : public QObject {
  Q_OBJECT

 private slots:
  void scalars_data();
  void scalars();
  void strings();
  void containers();
  void memoShares();
  void takeItems();
  void fixtures_data();
  void fixtures();
  void refused_data();
  void refused();
  void truncatedAtEveryOffset();
  void progressAndCancel();
  void readFile();
};

void TestPickleReader::scalars_data() {
  QTest::addColumn<QByteArray>("body");
  QTest::addColumn<int>("kind");
  QTest::addColumn<qint64>("integer");
  QTest::addColumn<double>("real");
  const int I = int(Kind::Int);
  QTest::newRow("NONE") << QByteArray("N") << int(Kind::None) << 0LL << 0.0;
  QTest::newRow("NEWTRUE") << QByteArray("\x88") << int(Kind::Bool) << 1LL << 0.0;
  QTest::newRow("NEWFALSE") << QByteArray("\x89") << int(Kind::Bool) << 0LL << 0.0;
  QTest::newRow("BININT1 255") << QByteArray("K\xff") << I << 255LL << 0.0;
  QTest::newRow("BININT2 65535") << QByteArray("M\xff\xff") << I << 65535LL << 0.0;
  QTest::newRow("BININT -2") << QByteArray("J\xfe\xff\xff\xff") << I << -2LL << 0.0;
  QTest::newRow("LONG1 0 bytes") << QByteArray("\x8a\x00", 2) << I << 0LL << 0.0;
  QTest::newRow("LONG1 -1") << QByteArray("\x8a\x01\xff") << I << -1LL << 0.0;
  QTest::newRow("LONG1 2**31") << QByteArray("\x8a\x05\x00\x00\x00\x80\x00", 7) << I << 2147483648LL
                               << 0.0;
  QTest::newRow("LONG1 int64 max") << QByteArray("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f") << I
                                   << std::numeric_limits<qint64>::max() << 0.0;
  QTest::newRow("LONG1 int64 min") << QByteArray("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80", 10)
                                   << I << std::numeric_limits<qint64>::min() << 0.0;
  QTest::newRow("LONG1 9 bytes -1")
      << QByteArray("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff") << I << -1LL << 0.0;
  QTest::newRow("BINFLOAT 1.5") << QByteArray("G\x3f\xf8\x00\x00\x00\x00\x00\x00", 9)
                                << int(Kind::Float) << 0LL << 1.5;
}

void TestPickleReader::scalars() {
  QFETCH(QByteArray, body);
  QFETCH(int, kind);
  QFETCH(qint64, integer);
  QFETCH(double, real);
  for (const char protocol : {'\x02', '\x04', '\x05'}) {
    const QByteArray bytes = QByteArray("\x80", 1) + protocol + body + '.';
    const Document doc = parse(span(bytes));
    QCOMPARE(int(doc.root().kind), kind);
    if (doc.root().kind == Kind::Float)
      QCOMPARE(doc.root().real, real);
    else
      QCOMPARE(qint64(doc.root().integer), integer);
  }
}

void TestPickleReader::strings() {
  const QByteArray text = "caf\xc3\xa9";  // UTF-8, kept as written
  const QByteArray forms[] = {QByteArray("\x8c\x05") + text,
                              QByteArray("X\x05\x00\x00\x00", 5) + text,
                              QByteArray("\x8d\x05\x00\x00\x00\x00\x00\x00\x00", 9) + text};
  for (const QByteArray& body : forms) {
    const QByteArray bytes = p4(body);
    const Document doc = parse(span(bytes));
    QCOMPARE(int(doc.root().kind), int(Kind::String));
    QCOMPARE(QByteArray(doc.string(doc.root()).data(), 5), text);
  }
}

void TestPickleReader::containers() {
  // {'a': [1, (2,), ()], 'b': (1, 2, 3, 4)} built with MARK/SETITEMS, APPENDS, APPEND, TUPLE1,
  // EMPTY_TUPLE, TUPLE, and one SETITEM.
  const QByteArray bytes =
      p4("}(\x8c\x01"
         "a](K\x01K\x02\x85)eK\x05"
         "a\x8c\x01"
         "b(K\x01K\x02K\x03K\x04tu"
         "\x8c\x01"
         "cK\x07s");
  const Document doc = parse(span(bytes));
  const Value& root = doc.root();
  QCOMPARE(int(root.kind), int(Kind::Dict));
  QCOMPARE(doc.items(root).size(), size_t(6));
  const Value* a = doc.find(root, "a");
  QVERIFY(a && a->kind == Kind::List);
  QCOMPARE(doc.items(*a).size(), size_t(4));
  QCOMPARE(int(doc.items(*a)[1].kind), int(Kind::Tuple));
  QCOMPARE(doc.items(doc.items(*a)[1]).size(), size_t(1));
  QCOMPARE(doc.items(doc.items(*a)[2]).size(), size_t(0));
  QCOMPARE(doc.items(*a)[3].integer, int64_t(5));
  QCOMPARE(doc.items(*doc.find(root, "b")).size(), size_t(4));
  QCOMPARE(doc.find(root, "c")->integer, int64_t(7));
  QVERIFY(!doc.find(root, "d"));
}

void TestPickleReader::memoShares() {
  // [x, x, x] where x = [] put in the memo once (MEMOIZE, BINPUT, LONG_BINPUT, sparse index).
  const QByteArray bytes =
      p4(B("](]\x94h\x00j\x00\x00\x00\x00q\x07h\x07"
           "e"));
  const Document doc = parse(span(bytes));
  const auto items = doc.items(doc.root());
  QCOMPARE(items.size(), size_t(4));
  for (const Value& v : items) QCOMPARE(v.container, items[0].container);
  QCOMPARE(doc.containerCount(), size_t(2));
  // A list that holds itself: kept as a cycle, not copied.
  const Document cyc =
      parse(span(p4(B("]\x94h\x00"
                      "a"))));
  QCOMPARE(cyc.items(cyc.root())[0].container, cyc.root().container);
}

// ParseOptions::takeItems: the first list's two dicts are taken as APPENDS hands them over; the
// list stays empty, a memo get of a taken dict gives None, the next container reuses a freed
// slot, and a dict memoized twice is emptied but never reused.
void TestPickleReader::takeItems() {
  // ([], [None, {}]): list0 = [], MARK, dict (memo 1), dict (memo 2, and again as memo 9),
  // APPENDS; list3 = [] (memo 3), memo get 1, APPEND, memo get 9, APPEND; TUPLE2.
  const QByteArray bytes =
      p4(B("]\x94(}\x94}\x94q\x09"
           "e]\x94h\x01"
           "ah\x09"
           "a\x86"));
  int calls = 0;
  std::vector<size_t> offered;
  ParseOptions options;
  options.takeItems = [&](const Document& doc, const Value& list, std::span<const Value> items) {
    ++calls;
    offered.push_back(items.size());
    return doc.items(list).empty() && items.front().kind == Kind::Dict && list.container == 0;
  };
  const Document doc = parse(span(bytes), options);
  QCOMPARE(calls, 3);  // the APPENDS, then each APPEND (refused)
  QCOMPARE(offered, (std::vector<size_t>{2, 1, 1}));
  const auto root = doc.items(doc.root());
  QCOMPARE(root.size(), size_t(2));
  QVERIFY(doc.items(root[0]).empty());
  const auto list3 = doc.items(root[1]);
  QCOMPARE(list3.size(), size_t(2));
  QCOMPARE(list3[0].kind, Kind::None);  // memo 1 held a taken dict
  QCOMPARE(list3[1].kind, Kind::Dict);  // memo 9 too, but memo 2 named it first: kept, emptied
  QVERIFY(doc.items(list3[1]).empty());
  QVERIFY(root[1].container != list3[1].container);
  // list0, the two dicts, the tuple; list3 took the slot of the dict memoized once.
  QCOMPARE(doc.containerCount(), size_t(4));
}

void TestPickleReader::fixtures_data() {
  QTest::addColumn<QString>("name");
  for (const char* v : {"2_0", "2_1", "2_6"})
    for (const char* p : {"2", "4", "5"})
      QTest::newRow(qPrintable(QStringLiteral("%1 p%2").arg(v, p)))
          << QStringLiteral("snapshot_%1_p%2.pickle").arg(v, p);
}

void TestPickleReader::fixtures() {
  QFETCH(QString, name);
  const QByteArray bytes = fixture(qPrintable(name));
  const Document doc = parse(span(bytes));
  QCOMPARE(int(doc.root().kind), int(Kind::Dict));
  const Value* traces = doc.find(doc.root(), "device_traces");
  QVERIFY(traces && traces->kind == Kind::List);
  const Value& first = doc.items(*traces)[0];
  QVERIFY(doc.items(first).size() >= 10);
  // Frame lists are shared through the memo: event 2 and event 3 hold the same list object.
  const Value* f2 = doc.find(doc.items(first)[2], "frames");
  const Value* f3 = doc.find(doc.items(first)[3], "frames");
  QVERIFY(f2 && f3);
  QCOMPARE(f2->container, f3->container);
}

void TestPickleReader::refused_data() {
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<QString>("message");
  const QByteArray P = QByteArray("\x80\x04", 2);
  QTest::newRow("empty") << QByteArray() << "byte 0: empty input: not a pickle";
  QTest::newRow("json") << QByteArray("{\"segments\": []}")
                        << "byte 0: not a pickle of protocol 2 to 5: it does not start with PROTO";
  QTest::newRow("protocol 1") << QByteArray("\x80\x01N.")
                              << "byte 0: protocol 1 (accepted: 2 to 5)";
  QTest::newRow("protocol 6") << QByteArray("\x80\x06N.") << "byte 0: protocol 6";
  QTest::newRow("GLOBAL os.system")
      << fixture("bad_os_system.pickle") << "byte 2: opcode GLOBAL (0x63) is refused";
  QTest::newRow("STACK_GLOBAL class")
      << fixture("bad_class_p4.pickle") << "opcode STACK_GLOBAL (0x93) is refused";
  QTest::newRow("GLOBAL class p2")
      << fixture("bad_class_p2.pickle") << "opcode GLOBAL (0x63) is refused";
  QTest::newRow("REDUCE") << p4("))R") << "byte 4: opcode REDUCE (0x52) is refused";
  QTest::newRow("BUILD") << p4("}}b") << "byte 4: opcode BUILD (0x62) is refused";
  QTest::newRow("NEWOBJ") << p4("))\x81") << "opcode NEWOBJ (0x81) is refused";
  QTest::newRow("BINPERSID") << p4("N\x51") << "opcode BINPERSID (0x51) is refused";
  QTest::newRow("EXT1") << p4("\x82\x01") << "opcode EXT1 (0x82) is refused";
  QTest::newRow("INST") << p4("(ios\nsystem\n") << "opcode INST (0x69) is refused";
  QTest::newRow("BINBYTES") << p4("C\x01x") << "opcode SHORT_BINBYTES (0x43) is not accepted";
  QTest::newRow("LONG4") << p4(QByteArray("\x8b\x01\x00\x00\x00\x01", 6))
                         << "opcode LONG4 (0x8b) is not accepted";
  QTest::newRow("DUP") << p4("N2") << "opcode DUP (0x32) is not accepted";
  QTest::newRow("no opcode") << p4("\xff") << "byte 2: byte 0xff is not a pickle opcode";
  QTest::newRow("LONG1 10 bytes") << p4(QByteArray("\x8a\x0a") + QByteArray(10, '\0'))
                                  << "LONG1 of 10 bytes: beyond int64";
  QTest::newRow("LONG1 2**63") << p4(QByteArray("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00", 11))
                               << "LONG1: the value does not fit int64";
  QTest::newRow("memo never put") << p4("h\x03") << "byte 2: memo index 3 was never put";
  QTest::newRow("put on empty") << p4("\x94") << "MEMOIZE: stack empty";
  QTest::newRow("APPEND to dict") << p4("}Na")
                                  << "APPEND needs a list below its items, found a dict";
  QTest::newRow("APPEND to tuple") << p4(")Na") << "found a tuple";
  QTest::newRow("SETITEM to list") << p4("]NNs") << "SETITEM needs a dict below its items";
  QTest::newRow("SETITEMS odd") << p4("}(NNNu") << "SETITEMS with an odd number of items";
  QTest::newRow("APPENDS no mark") << p4("]e") << "APPENDS without a MARK";
  QTest::newRow("APPENDS nothing below") << p4("(e") << "found none";
  QTest::newRow("pop past mark") << p4("](a") << "APPEND: stack empty";
  QTest::newRow("TUPLE2 short") << p4("N\x86") << "TUPLE2: stack empty";
  QTest::newRow("STOP two values") << p4("NN") << "STOP with 2 values on the stack (expected 1)";
  QTest::newRow("STOP empty") << p4("") << "STOP with 0 values";
  QTest::newRow("STOP open mark") << p4("N(") << "STOP with 1 open MARK(s)";
  QTest::newRow("trailing") << P + "N.xyz"
                            << "byte 3: 3 bytes after STOP";
  QTest::newRow("no STOP") << P + "N"
                           << "byte 3: the input ends without STOP";
  QTest::newRow("string past end") << P + QByteArray(
                                              "X\xff\xff\xff\x7f"
                                              "abc.")
                                   << "BINUNICODE needs 2147483647 bytes but only 4 are left";
  QTest::newRow("string8 huge") << P + QByteArray("\x8d\xff\xff\xff\xff\xff\xff\xff\xff.")
                                << "a string of 18446744073709551615 bytes";
  QTest::newRow("FRAME past end") << P + QByteArray("\x95\x00\x00\x00\x00\x00\x00\x01\x00N.", 11)
                                  << "FRAME of 281474976710656 bytes but only 2 are left";
  QTest::newRow("marks too deep") << p4(QByteArray(int(kMaxMarkDepth) + 1, '('))
                                  << "MARKs nested deeper than 1000";
}

void TestPickleReader::refused() {
  QFETCH(QByteArray, bytes);
  QFETCH(QString, message);
  const QString got = errorOf(bytes);
  if (!got.contains(message)) qWarning() << "got:" << got;
  QVERIFY(got.contains(message));
}

void TestPickleReader::truncatedAtEveryOffset() {
  for (const char* name :
       {"snapshot_2_0_p2.pickle", "snapshot_2_1_p4.pickle", "snapshot_2_6_p5.pickle"}) {
    const QByteArray whole = fixture(name);
    for (qsizetype n = 0; n < whole.size(); ++n) {
      // A copy of exactly n bytes on the heap, so that ASan sees any read past its end.
      const std::unique_ptr<uint8_t[]> cut(new uint8_t[size_t(n) + 1]);
      std::memcpy(cut.get(), whole.constData(), size_t(n));
      bool refused = false;
      try {
        parse(std::span<const uint8_t>(cut.get(), size_t(n)));
      } catch (const PickleError&) {
        refused = true;
      }
      if (!refused) QFAIL(qPrintable(QStringLiteral("%1 cut at %2 was accepted").arg(name).arg(n)));
    }
  }
}

void TestPickleReader::progressAndCancel() {
  const QByteArray bytes = fixture("snapshot_2_6_p4.pickle");
  ParseOptions options;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  options.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  parse(span(bytes), options);
  QVERIFY(!calls.empty());
  QCOMPARE(calls.back().first, uint64_t(bytes.size()));
  QCOMPARE(calls.back().second, uint64_t(bytes.size()));
  std::atomic<bool> cancel{true};
  options.cancel = &cancel;
  QVERIFY_THROWS_EXCEPTION(Cancelled, parse(span(bytes), options));
}

void TestPickleReader::readFile() {
  const PickleFile f = readPickleFile(MATMULVIZ_SNAPSHOT_DIR "/snapshot_2_1_p4.pickle");
  QCOMPARE(int(f.document.root().kind), int(Kind::Dict));
  QTemporaryDir dir;
  const std::string empty = (dir.path() + "/empty.pickle").toStdString();
  QFile(QString::fromStdString(empty)).open(QIODevice::WriteOnly);
  const std::string fifo = (dir.path() + "/fifo.pickle").toStdString();
  QCOMPARE(mkfifo(fifo.c_str(), 0600), 0);  // refused at once, not waited on
  for (const std::string& path :
       {empty, (dir.path() + "/missing.pickle").toStdString(), fifo, dir.path().toStdString()}) {
    try {
      readPickleFile(path);
      QFAIL("accepted");
    } catch (const PickleError& e) {
      QVERIFY2(QString(e.what()).startsWith(QString::fromStdString("'" + path + "': ")), e.what());
    }
  }
  QCOMPARE(opcodeName('c'), "GLOBAL");
  QVERIFY(buildsObjects(0x93));
  QVERIFY(!buildsObjects(']'));
}

QTEST_GUILESS_MAIN(TestPickleReader)
#include "test_pickle_reader.moc"

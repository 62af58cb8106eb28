#include "core/io/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string_view>

namespace matmulviz::npy {

static_assert(std::endian::native == std::endian::little,
              "npy.cpp copies elements as they are: it assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // then major, minor, header length (format.py)
constexpr std::pair<const char*, DType> kDescrs[] = {{"<f4", DType::Float32},
                                                     {"<f2", DType::Float16},
                                                     {"<f8", DType::Float64},
                                                     {"<i8", DType::Int64},
                                                     {"|b1", DType::Bool}};
using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw NpyError("'" + path + "': " + what);
}

// Parses the header's dict literal as numpy/lib/format.py (_read_array_header, via
// ast.literal_eval) accepts it: exactly the keys descr (a string), fortran_order (True or False)
// and shape (a tuple of ints), in any order, either quote, optional trailing commas.
class HeaderParser {
 public:
  std::string descr;
  bool fortranOrder = false;
  Shape shape;

  HeaderParser(std::string_view text, const std::string& path) : s_(text), path_(path) {
    std::set<std::string> seen;
    expect('{');
    while (!consume('}')) {
      const std::string key = parseString();
      expect(':');
      seen.insert(key);  // a repeated key overrides, as in a Python dict literal
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') fail(path_, "unsupported dtype: a structured dtype");
        descr = parseString();
      } else if (key == "fortran_order") {
        fortranOrder = parseBool();
      } else if (key == "shape") {
        shape = parseShape();
      } else {
        bad("unexpected key '" + key + "'");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    peek();
    if (pos_ != s_.size()) bad("text after the closing '}'");
    if (seen.size() != 3) bad("it needs the keys 'descr', 'fortran_order', 'shape'");
  }

 private:
  [[noreturn]] void bad(const std::string& why) {
    const size_t shown = std::min<size_t>(200, s_.find_last_not_of(" \n") + 1);
    fail(path_, "malformed .npy header (" + why + "): " + std::string(s_.substr(0, shown)));
  }
  char peek() {  // skips white space; '\0' at the end
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool consume(char c) { return peek() == c && pos_ < s_.size() ? (++pos_, true) : false; }
  void expect(char c) {
    if (!consume(c)) bad(std::string("expected '") + c + "'");
  }
  std::string parseString() {
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected a string");
    const size_t end = s_.find(q, ++pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool parseBool() {
    peek();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (s_.substr(pos_).starts_with(word)) return pos_ += std::strlen(word), value;
    bad("fortran_order is not True or False");
  }
  Shape parseShape() {
    Shape sizes;
    expect('(');
    while (!consume(')')) {
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("shape is not a tuple of ints");
      int64_t v = 0;
      const auto [end, err] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v);
      if (err != std::errc()) bad("a dimension does not fit in int64");
      pos_ = static_cast<size_t>(end - s_.data());
      sizes.push_back(v);
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return sizes;
  }

  std::string_view s_;
  const std::string& path_;
  size_t pos_ = 0;
};

DType dtypeOf(const std::string& descr, const std::string& path) {
  for (const auto& [name, dtype] : kDescrs)
    if (descr == name) return dtype;
  if (descr.starts_with('>')) {
    fail(path, "byte order '>' (big-endian) is not supported; save with dtype '<" +
                   descr.substr(1) + "' (e.g. a.astype('<" + descr.substr(1) + "'))");
  }
  fail(path,
       "unsupported dtype '" + descr +
           "': supported are '<f4' (float32), '<f2' (float16), '<f8' (float64), '<i8' "
           "(int64), '|b1' (bool)" +
           (descr.ends_with("V2") ? "; bfloat16 has no NumPy dtype: save it as float32" : ""));
}

// The elements of `t` in row-major order as `outType` (t's dtype, or float32 for bfloat16).
std::vector<char> rowMajorBytes(const Tensor& t, DType outType) {
  const int64_t n = t.numel(), es = t.elementSize(), outEs = elementSize(outType);
  std::vector<char> out(static_cast<size_t>(n * outEs));
  const char* data = static_cast<const char*>(t.dataPtr());
  Shape idx(t.sizes().size(), 0);
  int64_t offset = 0;  // elements
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype() == outType)  // int64 included: copied, never through double
      std::memcpy(out.data() + i * outEs, data + offset * es, static_cast<size_t>(es));
    else  // bfloat16 -> float32, exact
      storeFromDouble(out.data(), outType, i, loadAsDouble(data, t.dtype(), offset));
    for (int64_t d = t.dim() - 1; d >= 0; --d) {  // odometer over the logical index
      if (++idx[d] < t.sizes()[d]) {
        offset += t.strides()[d];
        break;
      }
      offset -= t.strides()[d] * (t.sizes()[d] - 1);
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

Tensor read(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a .npy file");
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  const auto fileSize = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) fail(path, "cannot get the file size: " + ec.message());
  auto readExactly = [&](void* dst, int64_t n) {
    return std::fread(dst, 1, static_cast<size_t>(n), f.get()) == static_cast<size_t>(n);
  };

  unsigned char pre[12];
  if (!readExactly(pre, 8) || std::memcmp(pre, kMagic, 6) != 0)
    fail(path, "not a .npy file (it does not start with the magic \"\\x93NUMPY\")");
  const int major = pre[6], minor = pre[7];
  if (minor != 0 || major < 1 || major > 3) {
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const int lenBytes = major == 1 ? 2 : 4;
  if (!readExactly(pre + 8, lenBytes)) fail(path, "truncated .npy header");
  int64_t headerLen = 0;
  for (int i = lenBytes - 1; i >= 0; --i) headerLen = headerLen << 8 | pre[8 + i];
  const int64_t dataStart = 8 + lenBytes + headerLen;
  if (dataStart > fileSize) fail(path, "truncated .npy header");
  std::string text(static_cast<size_t>(headerLen), '\0');
  if (!readExactly(text.data(), headerLen)) fail(path, "cannot read the .npy header");
  const HeaderParser h(text, path);
  const DType dtype = dtypeOf(h.descr, path);
  if (h.fortranOrder)
    fail(path, "fortran_order True is not supported; save np.ascontiguousarray(a) (C order)");
  // The bytes the data needs, and the largest stride (empty dimensions count as 1, as in
  // contiguousStrides): a shape such as (0, 2**40, 2**40) holds no data, but its strides would
  // overflow int64.
  int64_t expected = elementSize(dtype), span = expected;
  for (int64_t s : h.shape) {
    if (__builtin_mul_overflow(expected, s, &expected) ||
        __builtin_mul_overflow(span, std::max<int64_t>(s, 1), &span))
      fail(path, "shape " + shapeToString(h.shape) + " too large: its strides overflow int64");
  }
  const int64_t actual = fileSize - dataStart;
  if (actual != expected) {
    fail(path, std::string(actual < expected ? "truncated" : "trailing") + " data: shape " +
                   shapeToString(h.shape) + " of " + std::string(dtypeName(dtype)) + " needs " +
                   std::to_string(expected) + " bytes, the file has " + std::to_string(actual));
  }
  Tensor t = empty(h.shape, dtype, nullptr, std::filesystem::path(path).filename().string());
  if (!readExactly(t.dataPtr(), expected))
    fail(path, std::string("cannot read the data: ") + std::strerror(errno));
  return t;
}

Tensor readChecked(const std::string& path, const std::string& label,
                   const std::vector<DType>& allowed, const std::vector<int64_t>& expectedShape) {
  Tensor t;
  try {
    t = read(path);
  } catch (const NpyError& e) {
    throw NpyError(label + ": " + e.what());
  }
  if (std::find(allowed.begin(), allowed.end(), t.dtype()) == allowed.end()) {
    std::string names;
    for (DType d : allowed) names += (names.empty() ? "" : ", ") + std::string(dtypeName(d));
    throw NpyError(label + ": '" + path + "' has dtype " + std::string(dtypeName(t.dtype())) +
                   "; allowed: " + names);
  }
  if (expectedShape.empty()) return t;
  bool match = static_cast<int64_t>(expectedShape.size()) == t.dim();
  for (size_t i = 0; match && i < expectedShape.size(); ++i)
    match = expectedShape[i] < 0 || expectedShape[i] == t.sizes()[i];
  if (!match) {
    std::string want;
    for (int64_t e : expectedShape)
      want += (want.empty() ? "" : ", ") + (e < 0 ? std::string("*") : std::to_string(e));
    throw NpyError(label + ": '" + path + "': expected shape [" + want + "] but the file has " +
                   t.shapeString() + " (* = any size)");
  }
  return t;
}

void write(const std::string& path, const Tensor& t) {
  if (t.deviceKind() == DeviceKind::Cuda || !t.hasData()) {
    fail(path, "cannot write a " + std::string(deviceKindName(t.deviceKind())) +
                   " tensor: it has no host data (copy it to the host first)");
  }
  const DType outType = t.dtype() == DType::BFloat16 ? DType::Float32 : t.dtype();
  const char* descr = "";
  for (const auto& [name, dtype] : kDescrs)
    if (dtype == outType) descr = name;

  // numpy/lib/format.py _write_array_header / _wrap_header: the dict's repr, padded with
  // spaces so that magic + version + length + header + '\n' is a multiple of 64 bytes.
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.sizes().size(); ++i)
    header += (i ? ", " : "") + std::to_string(t.sizes()[i]);
  header += t.sizes().size() == 1 ? ",), }" : "), }";
  auto padding = [&](size_t lenBytes) { return 64 - (8 + lenBytes + header.size() + 1) % 64; };
  const int major = header.size() + padding(2) + 1 > 65535 ? 2 : 1;
  header += std::string(padding(major == 1 ? 2 : 4), ' ') + "\n";
  std::string pre = std::string(kMagic) + static_cast<char>(major) + '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    pre += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  pre += header;

  // No engine op is used, so writing a Cpu tensor allocates nothing in its device's model.
  std::vector<char> gathered;
  if (outType != t.dtype() || !t.isContiguous()) gathered = rowMajorBytes(t, outType);
  const char* data = gathered.empty() ? static_cast<const char*>(t.dataPtr()) : gathered.data();
  const auto bytes = static_cast<size_t>(t.numel() * elementSize(outType));

  const std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!f) fail(path, std::string("cannot write '" + tmp + "': ") + std::strerror(errno));
  const bool ok = std::fwrite(pre.data(), 1, pre.size(), f.get()) == pre.size() &&
                  (bytes == 0 || std::fwrite(data, 1, bytes, f.get()) == bytes);
  int err = ok ? 0 : errno;
  if (std::fclose(f.release()) != 0 && err == 0) err = errno;
  std::error_code ec;
  if (err == 0) std::filesystem::rename(tmp, path, ec);
  if (err != 0 || ec) {
    const std::string why = err != 0 ? "write failed: " + std::string(std::strerror(err))
                                     : "cannot rename '" + tmp + "' to it: " + ec.message();
    std::filesystem::remove(tmp, ec);
    fail(path, why);
  }
}

}  // namespace matmulviz::npy

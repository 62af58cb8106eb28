#pragma once
// Typed, range-checked reading of one JSON object read from a file (a preset, a report), so that
// no value is converted before it is known to fit: nlohmann::json's own get<int64_t>() on
// 1.31e41 is undefined behaviour, and its messages ("[json.exception.type_error.302] type must
// be number, but is string") name neither the file nor the field.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace matmulviz {

/// "(allowed: <minValue> to <maxValue>)", as the range errors of JSON fields end.
std::string allowedRangeText(int64_t minValue, int64_t maxValue);
/// `v` as printf's %g writes it ("1.31e+41", "2.5"), for a number named in an error.
std::string shortNumberText(double v);

/// nlohmann::json's exception message `what` without its "[json.exception.parse_error.101] "
/// tag, for messages that name the file themselves.
std::string jsonMessageWithoutTag(const std::string& what);

/// The fields of `object`, a JSON value of the file `what` names (e.g. "preset 'x.json'").
/// Every error is a std::invalid_argument "<what>: field '<key>' <why>", e.g.
/// "preset 'x.json': field 'n' is 1.31e+41 (allowed: 1 to 2147483647)" or
/// "preset 'x.json': field 'dtype' must be a string, but is a number".
class JsonFields {
 public:
  /// Throws std::invalid_argument "<what>: <context> must be a JSON object, but is <type>" when
  /// `object` is not an object (`context`: "the file", "field 'workload'").
  JsonFields(const nlohmann::json& object, std::string what,
             const std::string& context = "the file");

  bool has(const char* key) const { return object_.contains(key); }
  /// A whole number in [minValue, maxValue]; `fallback` when the field is absent. Integers and
  /// whole floating-point values (1e3) are accepted; fractions, non-finite values, other types
  /// and values outside the range are refused, compared before any conversion.
  int64_t integer(const char* key, int64_t fallback, int64_t minValue, int64_t maxValue) const;
  std::string string(const char* key, const std::string& fallback) const;
  bool boolean(const char* key, bool fallback) const;
  /// An array of strings; `fallback` when absent.
  std::vector<std::string> strings(const char* key, const std::vector<std::string>& fallback) const;
  /// The nested object `key` (absent: an empty object).
  JsonFields object(const char* key) const;

  /// Throws std::invalid_argument "<what>: field '<key>' <why>".
  [[noreturn]] void fail(const char* key, const std::string& why) const;
  const std::string& what() const { return what_; }

 private:
  const nlohmann::json& object_;
  std::string what_;
};

/// "a string", "a number", "an array", "an object", "a boolean", "null": for messages.
std::string jsonTypeName(const nlohmann::json& value);

}  // namespace matmulviz

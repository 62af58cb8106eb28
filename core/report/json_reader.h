#pragma once
// Typed reading of a JSON document that came from a file (a report), where every refusal names
// the file and the key path of the value ("runs[2].max_mem_bytes") and what is wrong, and no
// value is converted before it is known to fit (nlohmann::json's own get<int64_t>() on 1e300 is
// undefined behaviour).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace matmulviz {

/// A report file that cannot be opened: what() is "'<file>': <problem>", e.g.
/// "'r.json': runs[0].max_mem_bytes is -5 (allowed: 0 to 9223372036854775807)". `file` is the
/// name the caller gave (the app and the CLI give the file's name without its folder).
class ReportLoadError : public std::runtime_error {
 public:
  ReportLoadError(std::string file, std::string problem)
      : std::runtime_error("'" + file + "': " + problem),
        file_(std::move(file)),
        problem_(std::move(problem)) {}
  const std::string& file() const { return file_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_, problem_;
};

/// Reads values of one document; every method throws ReportLoadError naming `file` and `path`.
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const std::string& path, const std::string& why) const;
  /// `object[key]`; throws "<path>.<key> is missing" when absent. `object` must be an object.
  const nlohmann::json& member(const nlohmann::json& object, const std::string& path,
                               const char* key) const;
  /// `value` when it is an object / an array, else throws "<path> must be an object, but is ...".
  const nlohmann::json& object(const nlohmann::json& value, const std::string& path) const;
  const nlohmann::json& array(const nlohmann::json& value, const std::string& path) const;
  /// A whole number in [minValue, maxValue] (integers and whole floating-point values).
  int64_t integer(const nlohmann::json& value, const std::string& path, int64_t minValue,
                  int64_t maxValue) const;
  /// A finite number; with `nullIsNaN`, null reads as NaN (the writer's "not computed").
  double number(const nlohmann::json& value, const std::string& path, bool nullIsNaN = false) const;
  std::string string(const nlohmann::json& value, const std::string& path) const;
  bool boolean(const nlohmann::json& value, const std::string& path) const;

 private:
  std::string file_;
};

/// "<path>.<key>", or "<key>" when `path` is empty (the document's root).
std::string jsonPath(const std::string& path, const std::string& key);
/// "<path>[<index>]".
std::string jsonPath(const std::string& path, size_t index);

}  // namespace matmulviz

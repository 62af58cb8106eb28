#pragma once
// The tail every reporting subcommand shares (issue 15: "one emitReport"): the JSON report on
// stdout for `--json -`, otherwise the text report on stdout and the JSON into the file; then
// the optional Chrome trace and --save-dir tensors; the "wrote" lines; and, with `--json -`
// (where the text report that would say them is absent), the accuracy warnings on stderr.

#include <nlohmann/json.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace matmulviz::cli {

/// What the user asked for: the option values ("" = not given, "-" = stdout for json).
struct OutputOptions {
  std::string command;  ///< "strategies", for messages: "matmulviz-cli strategies: ..."
  std::string json, timeline, saveDir;
};

/// What the command has to write. `trace` is called only with a timeline path, `save` only
/// with a save directory (it may throw std::exception: reported as "--save-dir: <what>").
struct ReportWriters {
  nlohmann::ordered_json json;
  int jsonIndent = 2;  ///< nlohmann's dump indent; -1 writes it compact (a report with timelines)
  std::function<void(std::ostream&)> text;
  std::function<void(std::ostream&)> trace;
  std::function<void(const std::string& dir)> save;
  std::vector<std::string> warnings;  ///< "strategy1: out has NaN", printed with --json -
};

/// Writes what `o` asks for through `w`. Returns 1 when --save-dir could not be written, else 0;
/// the JSON and trace files are written atomically (writeFileAtomically; its runtime_error
/// propagates).
int emitOutputs(const OutputOptions& o, const ReportWriters& w);

}  // namespace matmulviz::cli

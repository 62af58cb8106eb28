#include "app/cli/emit_outputs.h"

#include "app/cli/output_files.h"

#include <exception>
#include <iostream>

namespace matmulviz::cli {

int emitOutputs(const OutputOptions& o, const ReportWriters& w) {
  if (o.json == "-") {
    std::cout << w.json.dump(w.jsonIndent) << "\n";
  } else {
    w.text(std::cout);
    if (!o.json.empty())
      writeFileAtomically(o.json,
                          [&](std::ostream& os) { os << w.json.dump(w.jsonIndent) << "\n"; });
  }
  if (!o.timeline.empty() && w.trace) writeFileAtomically(o.timeline, w.trace);
  if (!o.saveDir.empty() && w.save) {
    try {
      w.save(o.saveDir);
    } catch (const std::exception& e) {  // filesystem_error, npy::NpyError
      std::cerr << "matmulviz-cli " << o.command << ": --save-dir: " << e.what() << "\n";
      return 1;
    }
  }
  for (const auto* path : {&o.json, &o.timeline})
    if (!path->empty() && *path != "-") std::cerr << "[matmulviz] wrote " << *path << "\n";
  if (o.json == "-")  // else the text report on stdout says it
    for (const std::string& warning : w.warnings)
      std::cerr << "matmulviz-cli " << o.command << ": warning: " << warning << "\n";
  return 0;
}

}  // namespace matmulviz::cli

// matmulviz-cli compare: two reports side by side and their difference, as heaptrack's diff mode
// shows two profiles: the strategies' maxMem, curMem and time (A, B, B - A), and for each pair of
// memory timelines the peaks and the bytes at the peak by category and by label. Text on
// stdout; --json writes the comparison as a report of kind "compare"; --out renders its charts
// with the desktop app's chart code (built with the GUI libraries only).
#include "app/cli/commands.h"
#include "app/cli/output_files.h"
#include "app/cli/text_options.h"
#include "core/report/compare_json.h"
#include "core/report/compare_text.h"

#ifdef MATMULVIZ_HAVE_EXPORT
#include "app/cli/export_application.h"
#include "ui/charts/compare_export.h"
#endif

#include <iostream>
#include <memory>
#include <sstream>

namespace matmulviz::cli {

namespace {

struct CompareOptions {
  std::vector<std::string> files;  ///< A and B
  std::string json, out, formats = "png,svg,pdf,csv";
  int rows = 20;
};

/// "png,svg" -> {"png", "svg"}; throws std::invalid_argument naming a value not allowed.
std::vector<std::string> parseFormats(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string f; std::getline(ss, f, ',');) {
    if (f != "png" && f != "svg" && f != "pdf" && f != "csv")
      throw std::invalid_argument("--formats: '" + f +
                                  "' is not a format (allowed: png, svg, pdf, csv)");
    out.push_back(f);
  }
  return out;
}

/// Renders the charts into o.out; returns 0, or 1 when a file could not be written.
int writeCharts(const CompareOptions& o, const ReportComparison& c,
                const std::vector<std::string>& f) {
#ifdef MATMULVIZ_HAVE_EXPORT
  const auto app = makeApplication();
  QStringList formats;
  for (const std::string& s : f) formats << QString::fromStdString(s);
  QString error;
  const QStringList written =
      ui::exportCompareCharts(c, QString::fromStdString(o.out), formats, &error);
  for (const QString& file : written)
    std::cerr << "[matmulviz] wrote " << file.toStdString() << "\n";
  if (!error.isEmpty()) {
    std::cerr << "matmulviz-cli compare: " << error.toStdString() << "\n";
    return 1;
  }
  return 0;
#else
  (void)o, (void)c, (void)f;
  return 1;  // refused before: checkOptions
#endif
}

/// Checks the output options before any file is read; throws std::invalid_argument.
std::vector<std::string> checkOptions(const CompareOptions& o, const CLI::App& cmd) {
  checkOutputPath(o.json, "--json");
  if (o.rows < 0) throw std::invalid_argument("--rows: must be 0 (all) or more");
  const bool out = cmd.get_option("--out")->count() > 0;
  if (!out && cmd.get_option("--formats")->count() > 0)
    throw std::invalid_argument("--formats: needs --out DIR (the folder the charts go into)");
  if (!out) return {};
#ifndef MATMULVIZ_HAVE_EXPORT
  throw std::invalid_argument(
      "--out: this matmulviz-cli was built without the GUI libraries, "
      "which render the charts");
#endif
  std::vector<std::string> formats = parseFormats(o.formats);
  checkOutputDirectory(o.out, "--out");  // last: it creates the directory
  return formats;
}

int runCompareCommand(const CompareOptions& o, const CLI::App& cmd) {
  std::vector<std::string> formats;
  std::pair<CompareInput, CompareInput> loaded;
  ReportComparison c;
  try {
    formats = checkOptions(o, cmd);
    c = compareReportFiles(o.files.at(0), o.files.at(1), loaded);
  } catch (const std::invalid_argument& e) {  // CompareError too
    std::cerr << "matmulviz-cli compare: " << e.what() << "\n";
    return 2;
  } catch (const ReportLoadError& e) {
    std::cerr << "matmulviz-cli compare: " << e.what() << "\n";
    return 2;
  } catch (const snapshot::SnapshotError& e) {
    std::cerr << "matmulviz-cli compare: " << e.what() << "\n";
    return 2;
  }
  const auto json = compareToJson(c);
  if (o.json == "-") {
    std::cout << json.dump(2) << "\n";
  } else {
    writeCompareText(std::cout, c, size_t(o.rows));
    if (!o.json.empty())
      writeFileAtomically(o.json, [&](std::ostream& os) { os << json.dump(2) << "\n"; });
  }
  return o.out.empty() ? 0 : writeCharts(o, c, formats);
}

}  // namespace

Action addCompareCommand(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two reports (strategies --json, with --timeline for memory; Python runs' "
      "reports; PyTorch memory snapshots): per strategy maxMem, curMem and time, and per memory "
      "timeline the peaks and the bytes alive at the peak by category and label, as A, B and "
      "B - A, largest difference first; a Python run against a snapshot (or two of either) "
      "also event by event: the allocs and frees aligned by kind, request size and order, the "
      "first divergence named, and the totals at every matched event");
  cmd->add_option("files", o->files,
                  "the two report or snapshot files, A then B (differences are B - A); a file "
                  "that cannot be read exits 2 naming it")
      ->required()
      ->expected(2)
      ->type_name("A B");
  const TextOptions option{*cmd};
  option("--json", o->json,
         "write the comparison as JSON (a report of kind \"compare\") to PATH, or - for stdout "
         "(then no text)",
         "PATH|-");
  option("--out", o->out,
         "write the comparison's charts into DIR (created as mkdir -p): compare-strategies-*, "
         "compare-memory-<timeline>, compare-difference-<timeline>",
         "DIR");
  option("--formats", o->formats, "with --out: comma-separated png,svg,pdf,csv (default all)",
         "LIST");
  cmd->add_option("--rows", o->rows,
                  "at most N rows per per-label list and per event table in the text (0: all; "
                  "default 20)")
      ->type_name("N");
  return [o, cmd] { return runCompareCommand(*o, *cmd); };
}

}  // namespace matmulviz::cli

// matmulviz-cli export: runs a strategies scenario with its memory timeline recorded and writes
// the desktop app's charts (the same chart code, rendered with no display), the table, the JSON
// report, the Chrome trace and CSVs into a folder. Prints the files written, one per line.
#include "app/cli/bad_input_text.h"
#include "app/cli/commands.h"
#include "app/cli/cuda_option.h"
#include "app/cli/export_application.h"
#include "app/cli/export_opened.h"
#include "app/cli/output_files.h"
#include "app/cli/run_for_cli.h"
#include "app/cli/scenario_options.h"
#include "core/costmodel/cost_model.h"
#include "core/costmodel/profile_file.h"
#include "core/costmodel/report_predictions.h"
#include "core/partitioner/graph_json.h"
#include "core/report/chrome_trace.h"
#include "core/report/report_json.h"
#include "core/report/report_load.h"
#include "core/report/report_text.h"
#include "core/strategies/prepare_run.h"
#include "core/strategies/preset.h"
#include "core/util/format_units.h"
#include "core/util/parse_size.h"
#include "ui/charts/budget_export.h"
#include "ui/charts/chart_export.h"
#include "ui/models/budget_explorer.h"
#include "ui/models/open_file.h"
#include "ui/models/run_history.h"
#include "ui/models/strategies_table_model.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

namespace matmulviz::cli {

namespace {

struct ExportOptions {
  ScenarioOptions scenario{.preset = "seed000"};
  std::string out, formats = "png,svg,pdf,csv,json", model = "h200", title, report;
  std::string budgetExample = "mm-cos-chain";  ///< the Budget view's charts; "none": not written
  double budget = 0.3;
  std::string budgetGraph;  ///< a graph file (kind "budget-graph"): its charts, not the example's
  std::string budgetScript, budgetFunction = "f";  ///< traced into budgetGraph first
};

const QStringList kFormats{"png", "svg", "pdf", "csv", "json"};

/// "png,svg" -> {"png", "svg"}; throws std::invalid_argument naming a value not allowed.
QStringList parseChartFormats(const std::string& text) {
  QStringList formats;
  for (const QString& f : QString::fromStdString(text).split(QLatin1Char(','))) {
    const QString format = f.trimmed().toLower();
    if (!kFormats.contains(format))
      throw std::invalid_argument("--formats: '" + f.toStdString() +
                                  "' is not a format (allowed: png, svg, pdf, csv, json)");
    if (!formats.contains(format)) formats << format;
  }
  return formats;
}

/// --budget-example names an example or "none"; --budget is within [0, 1]. Throws
/// std::invalid_argument naming the option.
void checkBudgetOptions(const ExportOptions& o) {
  QStringList allowed{QStringLiteral("none")};
  for (const ui::BudgetExample& e : ui::budgetExamples()) allowed << e.key;
  if (!allowed.contains(QString::fromStdString(o.budgetExample)))
    throw std::invalid_argument("--budget-example: unknown example '" + o.budgetExample +
                                "' (allowed: " + allowed.join(", ").toStdString() + ")");
  if (!o.budgetGraph.empty()) {
    try {
      ui::checkPlannable(partitioner::readGraphFile(o.budgetGraph).graph);
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("--budget-graph: ") + e.what());
    }
  }
  if (!(o.budget >= 0 && o.budget <= 1))
    throw std::invalid_argument("--budget: the valid range is 0 <= budget <= 1, not " +
                                std::to_string(o.budget));
}

/// The scenario options, with the timeline and the outputs (dA, dC for the heatmaps) kept.
RunConfig buildConfig(const ExportOptions& o, const CLI::App& cmd) {
  RunConfig c = scenarioConfig(o.scenario, cmd);
  c.recordTimeline = true;
  c.keepOutputs = true;
  return c;
}

/// The JSON report with the cost model's prediction added to each run, as `strategies` does.
nlohmann::ordered_json reportJson(const StrategiesReport& report,
                                  const costmodel::GpuProfile& gpu) {
  auto j = toJson(report);
  costmodel::addPredictions(j, report, gpu);
  return j;
}

/// The text report, then the cost model's predictions, labelled as a model (as `strategies
/// --model` prints them).
void writeTable(std::ostream& os, const StrategiesReport& report, const ui::RunEntry& entry) {
  writeTextReport(os, report);
  if (entry.results.isEmpty() || entry.results.front().predictedGpu.isEmpty()) return;
  os << "\npredicted forward time on " << entry.results.front().predictedGpu.toStdString()
     << " (a roofline model, not a measurement):\n";
  for (const ui::StrategyResult& r : entry.results) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-10s %10s  %s-bound\n", r.strategy.toUtf8().constData(),
                  formatSeconds(r.predictedS).c_str(), r.predictedBound.toUtf8().constData());
    os << line;
  }
}

/// Writes the table, JSON, trace and CSV files; returns their paths. Throws std::runtime_error.
QStringList writeReportFiles(const StrategiesReport& report, const ui::RunHistory& history,
                             const costmodel::GpuProfile& gpu, const QStringList& formats,
                             const QDir& dir) {
  QStringList written;
  auto path = [&](const char* name) { return dir.filePath(QLatin1String(name)).toStdString(); };
  auto write = [&](const char* name, const std::function<void(std::ostream&)>& fill) {
    writeFileAtomically(path(name), fill);
    written << QString::fromStdString(path(name));
  };
  write("table.txt", [&](std::ostream& os) { writeTable(os, report, history.entries().back()); });
  if (formats.contains(QLatin1String("json"))) {
    write("report.json", [&](std::ostream& os) { os << reportJson(report, gpu).dump(2) << "\n"; });
    write("timeline.json", [&](std::ostream& os) { writeChromeTrace(os, report); });
    write("history.json", [&](std::ostream& os) { os << history.toJson().toJson().toStdString(); });
  }
  if (formats.contains(QLatin1String("csv"))) {
    ui::StrategiesTableModel table;
    table.setHistory(&history);
    write("strategies.csv", [&](std::ostream& os) { os << table.toCsv().toStdString(); });
  }
  return written;
}

/// `export --report FILE`: the charts, table and files of a report read back (no run). Exit
/// status 2 when the report or an option is refused, 1 when writing fails or a run in the
/// report failed.
int exportReport(const ExportOptions& o, const CLI::App& cmd) {
  for (const char* runOption : {"--preset", "--n", "--m", "--i", "--j", "--k", "--batch", "--dtype",
                                "--requires-grad", "--strategies", "--repeats", "--seed",
                                "--device", "--device-memory", "--pytorch", "--gpu", "--backward"})
    if (cmd.get_option(runOption)->count() > 0) {
      std::cerr << "matmulviz-cli export: " << runOption
                << " is not allowed with --report (the report's runs are drawn as they are)\n";
      return 2;
    }
  costmodel::GpuProfile profile;
  const costmodel::GpuProfile* gpu = &profile;
  QStringList formats;
  ui::OpenedFile file;
  try {
    formats = parseChartFormats(o.formats);
    profile = costmodel::resolveGpuProfile(o.model);
    file = ui::loadFile(QString::fromStdString(o.report), snapshotProgress());
    checkOutputDirectory(o.out, "--out");
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli export: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {  // the loader's "'<file>': <problem>"
    std::cerr << "matmulviz-cli export: --report: " << e.what() << "\n";
    return 2;
  }
  const auto app = makeApplication();
  if (!file.report)  // a Python run, a snapshot, a joint graph, or a script (refused there)
    return exportOpenedFile(
        {QString::fromStdString(o.report), QString::fromStdString(o.out), formats, o.budget}, file);
  const StrategiesReport& report = *file.report;
  ui::RunHistory history;
  const std::string title =
      o.title.empty() ? std::filesystem::path(o.report).filename().string() : o.title;
  history.append(ui::runEntryFromReport(report, QString::fromStdString(title), gpu));
  const QDir dir(QString::fromStdString(o.out));
  QStringList written = writeReportFiles(report, history, *gpu, formats, dir);
  QString error;
  written += ui::exportStrategyCharts(history, report, dir.path(), formats, &error);
  if (const int failed = finishExport(written, error, o.out); failed != 0) return failed;
  return report.anyFailed() ? 1 : 0;
}

/// --budget-script: traces the function into a temporary graph file that --budget-graph then
/// names (removed with `dir`). Returns 0 or the tracer's exit status.
int traceBudgetScript(ExportOptions& o, QTemporaryDir& dir) {
  if (o.budgetScript.empty()) return 0;
  if (!o.budgetGraph.empty()) {
    std::cerr << "matmulviz-cli export: --budget-script and --budget-graph exclude each other\n";
    return 2;
  }
  if (!std::filesystem::is_regular_file(o.budgetScript)) {
    std::cerr << "matmulviz-cli export: --budget-script: no such script: " << o.budgetScript
              << "\n";
    return 2;
  }
  o.budgetGraph = dir.filePath("graph.json").toStdString();
  return traceToGraphFile(o.budgetScript, o.budgetFunction, o.budgetGraph);
}

int runExportCommand(const ExportOptions& given, const CLI::App& cmd) {
  if (!given.report.empty()) return exportReport(given, cmd);
  ExportOptions o = given;
  QTemporaryDir traced;
  if (const int status = traceBudgetScript(o, traced); status != 0) return status;
  RunConfig config;
  QStringList formats;
  costmodel::GpuProfile profile;
  const costmodel::GpuProfile* gpu = &profile;
  try {
    formats = parseChartFormats(o.formats);
    config = buildConfig(o, cmd);
    profile = costmodel::resolveGpuProfile(o.model);
    if (const auto noGpu = prepareCudaDevice(config, gpu)) {
      std::cerr << "matmulviz-cli export: " << *noGpu << "\n";
      return 1;
    }
    checkBudgetOptions(o);
    preflight(config);                     // sizes, devices, host RAM: before any allocation
    checkOutputDirectory(o.out, "--out");  // last: it creates the directory
  } catch (const BadInput& e) {
    std::cerr << "matmulviz-cli export: " << cliMessage(e) << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "matmulviz-cli export: " << e.what() << "\n";
    return 2;
  }
  const auto say = [](const std::string& what) { std::cerr << "[matmulviz] " << what << "\n"; };
  int status = 0;
  const std::optional<StrategiesReport> ran = runForCli(
      "export",
      [&](const ProgressFn& progress) {             // the "wrote" line ends it
        PreparedRun prepared = prepareRun(config);  // refuses before any allocation
        StrategyRunner runner(std::move(prepared.config), std::move(prepared.inputs));
        runner.checkFitsInHostMemory(progress);
        return runner.run(progress);
      },
      &status);
  if (!ran) return status;
  const StrategiesReport& report = *ran;
  const auto app = makeApplication();
  ui::RunHistory history;
  const QString title = QString::fromStdString(o.title.empty() ? o.scenario.preset : o.title);
  history.append(ui::runEntryFromReport(report, title, gpu));
  const QDir dir(QString::fromStdString(o.out));  // made by checkOutputDirectory
  QStringList written = writeReportFiles(report, history, *gpu, formats, dir);
  say("rendering the charts");
  QString error;
  written += ui::exportStrategyCharts(history, report, dir.path(), formats, &error);
  if (error.isEmpty() && !o.budgetGraph.empty())
    written += ui::exportBudgetGraphFileCharts(QString::fromStdString(o.budgetGraph), o.budget,
                                               dir.path(), formats, &error);
  else if (error.isEmpty() && o.budgetExample != "none")
    written += ui::exportBudgetCharts(QString::fromStdString(o.budgetExample), o.budget, dir.path(),
                                      formats, &error);
  if (const int failed = finishExport(written, error, o.out); failed != 0) return failed;
  return report.anyFailed() ? 1 : 0;
}

}  // namespace

Action addExportCommand(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Run a strategies scenario and write its charts (PNG, SVG, PDF; the desktop app's chart "
      "code, no display needed), table, JSON report, Chrome trace and CSVs into a folder");
  const TextOptions option{*cmd};
  option("--out", o->out,
         "the folder to write into; it and its missing parents are created (as mkdir -p) before "
         "the run",
         "DIR")
      ->required();
  option("--formats", o->formats, "comma-separated: png,svg,pdf,csv,json (default all)", "LIST");
  addScenarioOptions(*cmd, o->scenario, ScenarioDefaults::FromPreset,
                     "cpu (real data) | meta (memory only) | cuda (a GPU) (default: the preset's)");
  option("--model", o->model,
         "GPU profile of the cost model's predicted time (a model, not a measurement): h200 "
         "(default, the GPU the memory model defaults to) | h100 | a100 | t4 | FILE",
         "GPU");
  option("--title", o->title, "the run's title in the charts and history (default: the preset)",
         "TEXT");
  option("--report", o->report,
         "draw a file instead of running (made on any machine): a report of `strategies --json` "
         "(its Memory charts need the run's timeline: `strategies --timeline`), a Python run's "
         "report (`run SCRIPT --report`), a PyTorch memory snapshot (.pickle) or a graph file "
         "(`budget --graph-out`; its Budget charts at --budget)",
         "FILE");
  option("--budget-example", o->budgetExample,
         "the example graph whose Budget charts (forward graph, Pareto frontier, derived memory "
         "timeline) are written: mm-cos-chain (default) | mm-cos-chain-parameters | "
         "transformer-2 | none",
         "NAME");
  option("--budget-graph", o->budgetGraph,
         "write the Budget charts of this traced joint graph instead of the example's (a graph "
         "file: matmulviz-cli budget SCRIPT --function F --graph-out FILE --no-sweep)",
         "FILE");
  option("--budget-script", o->budgetScript,
         "trace a function of this Python script and write its Budget charts (as --budget-graph "
         "of the file `budget --graph-out` writes)",
         "SCRIPT");
  option("--budget-function", o->budgetFunction, "the function --budget-script traces (default f)",
         "NAME");
  cmd->add_option("--budget", o->budget,
                  "the activation memory budget of those charts, 0 to 1 (default 0.3)")
      ->type_name("B");
  return [o, cmd] { return runExportCommand(*o, *cmd); };
}

}  // namespace matmulviz::cli

#pragma once
// One line per string option in a subcommand's declaration, each with its --help type name.

#include <CLI/CLI.hpp>

#include <string>

namespace matmulviz::cli {

/// Declares string options on one command: `option("--json", o.json, "help", "PATH")` adds
/// --json writing into o.json (which must outlive the command), shown as PATH in --help, and
/// returns it (for ->required()).
struct TextOptions {
  CLI::App& cmd;
  CLI::Option* operator()(const char* name, std::string& into, const std::string& help,
                          const char* type) const;
};

}  // namespace matmulviz::cli

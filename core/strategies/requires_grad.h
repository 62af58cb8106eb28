#pragma once
// Which inputs of the gathered batched matmul out[n] = a[n] @ c[q[n]] require grad: the one
// form this setting takes everywhere (run config, reports, presets, the app's scenario and run
// history), with one parse and one format (issue 15, "typed messages").

#include <string>
#include <string_view>
#include <vector>

namespace matmulviz {

struct RequiresGrad {
  bool a = false;  ///< a [N, I, J] requires grad
  bool c = false;  ///< c [M, J, K] requires grad

  /// "none" (or ""), "a", "c", "a,c" (also "c,a"); throws BadInput (field "requires_grad",
  /// allowed "none, a, c, a,c") for anything else, which each front end words as its own option.
  static RequiresGrad parse(std::string_view text);
  /// The inverse of parse: "none", "a", "c" or "a,c".
  std::string text() const;
  /// The names of the inputs that require grad, in argument order: [], ["a"], ["c"], ["a", "c"]
  /// (the reports' JSON array).
  std::vector<std::string> names() const;
  /// From names(); throws BadInput for a name other than "a" or "c", or one given twice.
  static RequiresGrad fromNames(const std::vector<std::string>& names);
  bool any() const { return a || c; }
  bool operator==(const RequiresGrad&) const = default;
};

}  // namespace matmulviz

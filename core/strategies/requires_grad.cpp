#include "core/strategies/requires_grad.h"

#include "core/util/bad_input.h"

namespace matmulviz {

namespace {

constexpr const char* kAllowed = "none, a, c, a,c";

BadInput refused(std::string_view text) {
  const std::string value(text);
  return BadInput("requires_grad", value, kAllowed,
                  "'" + value + "' is not allowed (allowed: " + kAllowed + ")");
}

}  // namespace

RequiresGrad RequiresGrad::parse(std::string_view text) {
  if (text == "none" || text.empty()) return {};
  if (text == "a") return {.a = true, .c = false};
  if (text == "c") return {.a = false, .c = true};
  if (text == "a,c" || text == "c,a") return {.a = true, .c = true};
  throw refused(text);
}

std::string RequiresGrad::text() const {
  if (a && c) return "a,c";
  if (a) return "a";
  if (c) return "c";
  return "none";
}

std::vector<std::string> RequiresGrad::names() const {
  std::vector<std::string> out;
  if (a) out.emplace_back("a");
  if (c) out.emplace_back("c");
  return out;
}

RequiresGrad RequiresGrad::fromNames(const std::vector<std::string>& names) {
  RequiresGrad r;
  for (const std::string& name : names) {
    bool& flag = name == "a" ? r.a : name == "c" ? r.c : throw refused(name);
    if (flag) throw refused(name + " twice");
    flag = true;
  }
  return r;
}

}  // namespace matmulviz

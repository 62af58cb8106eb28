#include "core/io/pickle_document.h"

namespace matmulviz::pickle {

const char* kindName(Kind kind) {
  switch (kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "a bool";
    case Kind::Int:
      return "an int";
    case Kind::Float:
      return "a float";
    case Kind::String:
      return "a string";
    case Kind::List:
      return "a list";
    case Kind::Tuple:
      return "a tuple";
    case Kind::Dict:
      return "a dict";
  }
  return "an unknown value";
}

const Value* Document::find(const Value& dict, std::string_view key) const {
  if (dict.kind != Kind::Dict) return nullptr;
  const std::span<const Value> kv = items(dict);
  for (size_t i = kv.size(); i >= 2; i -= 2) {
    const Value& k = kv[i - 2];
    if (k.kind == Kind::String && string(k) == key) return &kv[i - 1];
  }
  return nullptr;
}

}  // namespace matmulviz::pickle

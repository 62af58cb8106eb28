#pragma once
// BadInput: a value the engine refuses, as data (issue 15, "typed messages"): which field of
// the run, the value given and what is allowed. Each front end words it in its own vocabulary:
// the CLI as its flag ("--dtype"), the app as the field of the scenario panel. what() is a
// plain sentence naming the field as the engine does ("dtype: ..."), with no front end's words.

#include <stdexcept>
#include <string>
#include <utility>

namespace matmulviz {

class BadInput : public std::invalid_argument {
 public:
  /// `field`: the engine's name ("n", "dtype", "device memory", "host memory"); `reason`: what
  /// is wrong and what to do, without the field's name (a front end puts its own before it).
  BadInput(std::string field, std::string value, std::string allowed, std::string reason)
      : std::invalid_argument(field + ": " + reason),
        field_(std::move(field)),
        value_(std::move(value)),
        allowed_(std::move(allowed)),
        reason_(std::move(reason)) {}

  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& allowed() const { return allowed_; }  ///< "" when it is not a list or range
  const std::string& reason() const { return reason_; }

 private:
  std::string field_, value_, allowed_, reason_;
};

}  // namespace matmulviz

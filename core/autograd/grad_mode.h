#pragma once
// torch.no_grad(): while a NoGradGuard lives, ops build no autograd graph.

namespace matmulviz {

class GradMode {
 public:
  static bool isEnabled();
  static void setEnabled(bool enabled);
};

class NoGradGuard {
 public:
  NoGradGuard() : previous_(GradMode::isEnabled()) { GradMode::setEnabled(false); }
  ~NoGradGuard() { GradMode::setEnabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace matmulviz

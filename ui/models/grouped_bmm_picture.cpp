#include "ui/models/grouped_bmm_picture.h"

#include <stdexcept>

namespace matmulviz::ui {
namespace {

QString checkRange(const char* name, int value, int max) {
  if (value < 1 || value > max)
    return QStringLiteral("%1 = %2: must be in 1..%3").arg(QLatin1String(name)).arg(value).arg(max);
  return {};
}

}  // namespace

QString checkGroupedBmm(const GroupedBmmSpec& s) {
  using L = GroupedBmmLimits;
  for (const QString& e :
       {checkRange("items", s.items, L::maxItems), checkRange("table", s.table, L::maxTable),
        checkRange("I", s.I, L::maxI), checkRange("J", s.J, L::maxJK),
        checkRange("K", s.K, L::maxJK), checkRange("TPB", s.tpb, L::maxTpb)}) {
    if (!e.isEmpty()) return e;
  }
  return {};
}

int GroupedBmmPicture::usedMatrices() const {
  int used = 0;
  for (int c : buckets.counts) used += c > 0 ? 1 : 0;
  return used;
}

std::int64_t GroupedBmmPicture::cFloatsRead() const {
  return std::int64_t{usedMatrices()} * spec.J * spec.K;
}

std::int64_t GroupedBmmPicture::cFloatsReadByGatherBmm() const {
  return std::int64_t{spec.items} * spec.I * spec.J * spec.K;
}

std::shared_ptr<const GroupedBmmPicture> simulateGroupedBmmPicture(const GroupedBmmSpec& spec) {
  if (const QString error = checkGroupedBmm(spec); !error.isEmpty())
    throw std::invalid_argument(error.toStdString());
  auto picture = std::make_shared<GroupedBmmPicture>();
  picture->spec = spec;
  const kernels::MatmulProblem problem{spec.I, spec.J, spec.K, spec.items, spec.table};
  picture->inputs = kernels::makeInputs(problem, true, spec.seed);
  kernels::SimulatedRun& run = picture->run;
  run.out.assign(static_cast<std::size_t>(kernels::outputElements(problem, true)), 0.f);
  sim::LaunchOptions options;
  options.kernel = "grouped_bmm";
  run.report = kernels::simulateGroupedBmm(problem, spec.tpb, picture->inputs, run.out.data(),
                                           options, &picture->buckets);
  run.maxRelErr =
      kernels::maxRelErr(run.out.data(), kernels::referenceMatmul(problem, true, picture->inputs));
  return picture;
}

}  // namespace matmulviz::ui

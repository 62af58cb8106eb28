#include "ui/models/kernel_launch.h"

#include <QStringList>
#include <stdexcept>

namespace matmulviz::ui {
namespace {

QString checkSize(const char* name, int value, int max) {
  if (value < 1 || value > max) {
    return QStringLiteral("%1 = %2: must be in 1..%3").arg(QLatin1String(name)).arg(value).arg(max);
  }
  return {};
}

}  // namespace

QStringList kernelViewKernels() {
  QStringList names;
  for (bool faulty : {false, true}) {
    for (const kernels::KernelVariant& v : kernels::kernelVariants()) {
      if (v.reference || v.gathered || v.faulty != faulty) continue;
      names.append(QString::fromUtf8(v.name.data(), qsizetype(v.name.size())));
    }
  }
  return names;
}

QStringList batchedKernels() {
  QStringList names;
  for (const kernels::KernelVariant& v : kernels::kernelVariants())
    if (v.gathered && !v.reference && v.name != kGroupedKernel)
      names.append(QString::fromUtf8(v.name.data(), qsizetype(v.name.size())));
  return names;
}

QString batchedKernelNote(const QString& kernel) {
  return QStringLiteral(
             "%1 is batched (out[n] = a[n] @ c[q[n]]) and has no single A/B/C diagram; run it "
             "with matmulviz-cli launch --kernel %1")
      .arg(kernel);
}

bool isFaultyKernel(const QString& kernel) {
  const kernels::KernelVariant* v = kernels::findKernel(kernel.toStdString());
  return v != nullptr && v->faulty;
}

QString kernelItemText(const QString& kernel) {
  return isFaultyKernel(kernel) ? kernel + QStringLiteral(" (faulty, for teaching)") : kernel;
}

QString checkKernelLaunch(const KernelLaunchSpec& s) {
  if (!kernelViewKernels().contains(s.kernel)) {
    return QStringLiteral(
               "kernel %1: the Kernel view shows %2 (gather_bmm is batched and has no "
               "A/B/C diagram; run it with matmulviz-cli launch)")
        .arg(s.kernel, kernelViewKernels().join(QStringLiteral(", ")));
  }
  using L = KernelLaunchLimits;
  for (const QString& e : {checkSize("M", s.m, L::maxDim), checkSize("K", s.k, L::maxDim),
                           checkSize("N", s.n, L::maxDim), checkSize("TPB", s.tpb, L::maxTpb)}) {
    if (!e.isEmpty()) return e;
  }
  const std::int64_t m = s.m, k = s.k, n = s.n;
  if (m * n > L::maxOutputs) {
    return QStringLiteral(
               "M x N = %1 outputs: the view simulates at most %2 (for example 4096 x "
               "4096)")
        .arg(m * n)
        .arg(L::maxOutputs);
  }
  if (m * k > L::maxInputElements || k * n > L::maxInputElements) {
    return QStringLiteral("M x K = %1 and K x N = %2: each input may hold at most %3 elements")
        .arg(m * k)
        .arg(k * n)
        .arg(L::maxInputElements);
  }
  if (static_cast<double>(m) * n * k > L::maxFmas) {
    return QStringLiteral(
               "M x N x K = %1 multiply-adds would take minutes to simulate; the view "
               "allows %2")
        .arg(static_cast<double>(m) * n * k, 0, 'g', 3)
        .arg(L::maxFmas, 0, 'g', 3);
  }
  return {};
}

KernelGeometry KernelGeometry::of(const KernelLaunchSpec& s) {
  KernelGeometry g;
  g.M = s.m;
  g.K = s.k;
  g.N = s.n;
  g.tpb = s.tpb;
  // the faulty teaching kernels keep the shape of the kernel they break (their registry entry)
  if (const kernels::KernelVariant* v = kernels::findKernel(s.kernel.toStdString())) {
    g.xOverRows = v->xOverRows;
    g.barriersPerTile = v->barriersPerTile;
  }
  g.tiled = g.barriersPerTile > 0;
  const std::int64_t rowBlocks = (g.M + g.tpb - 1) / g.tpb;
  const std::int64_t colBlocks = (g.N + g.tpb - 1) / g.tpb;
  g.gridX = g.xOverRows ? rowBlocks : colBlocks;
  g.gridY = g.xOverRows ? colBlocks : rowBlocks;
  return g;
}

int KernelGeometry::tileStagedIn(int phase) const {
  if (barriersPerTile <= 0 || phase < 0 || phase % barriersPerTile != 0) return -1;
  return phase / barriersPerTile < tilePhases() ? phase / barriersPerTile : -1;
}

int KernelGeometry::tileComputedIn(int phase) const {
  if (barriersPerTile <= 0 || phase < 1 || (phase - 1) % barriersPerTile != 0) return -1;
  return (phase - 1) / barriersPerTile < tilePhases() ? (phase - 1) / barriersPerTile : -1;
}

KernelGeometry::BlockThread KernelGeometry::at(std::int64_t row, std::int64_t col) const {
  BlockThread t;
  const std::int64_t x = xOverRows ? row : col;
  const std::int64_t y = xOverRows ? col : row;
  t.bx = x / tpb;
  t.by = y / tpb;
  t.tx = static_cast<int>(x % tpb);
  t.ty = static_cast<int>(y % tpb);
  return t;
}

std::int64_t KernelGeometry::blockRow0(std::uint64_t block) const {
  return (xOverRows ? blockX(block) : blockY(block)) * tpb;
}

std::int64_t KernelGeometry::blockCol0(std::uint64_t block) const {
  return (xOverRows ? blockY(block) : blockX(block)) * tpb;
}

std::int64_t KernelGeometry::rowOf(std::uint64_t block, int thread) const {
  return blockRow0(block) + (xOverRows ? thread % tpb : thread / tpb);
}

std::int64_t KernelGeometry::colOf(std::uint64_t block, int thread) const {
  return blockCol0(block) + (xOverRows ? thread / tpb : thread % tpb);
}

std::shared_ptr<const KernelLaunchResult> simulateKernelLaunch(const KernelLaunchSpec& spec,
                                                               std::uint64_t tracedBlock,
                                                               std::size_t traceCapBytes) {
  if (const QString error = checkKernelLaunch(spec); !error.isEmpty()) {
    throw std::invalid_argument(error.toStdString());
  }
  const kernels::KernelVariant* variant = kernels::findKernel(spec.kernel.toStdString());
  auto result = std::make_shared<KernelLaunchResult>();
  result->spec = spec;
  result->geometry = KernelGeometry::of(spec);
  result->file = QString::fromUtf8(variant->file.data(), qsizetype(variant->file.size()));
  result->summary = QString::fromUtf8(variant->summary.data(), qsizetype(variant->summary.size()));
  if (tracedBlock >= result->geometry.blocks()) tracedBlock = 0;
  result->tracedBlock = tracedBlock;
  sim::LaunchOptions options;
  options.trace = true;
  options.traceBlocks = {tracedBlock};
  options.traceCapBytes = traceCapBytes;
  const kernels::MatmulProblem problem{spec.m, spec.k, spec.n, 1, 1};
  result->run = kernels::runSimulated(*variant, problem, spec.tpb, spec.seed, options);
  return result;
}

}  // namespace matmulviz::ui

// The kernel variants of kernels/ as real __global__ functions: each wrapper builds the GPU's
// thread context (and, for smem_tiled, its tiles from dynamic shared memory) and calls the same
// body the simulator runs.
#include "kernels/cuda/cuda_kernels.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/01_naive.h"
#include "kernels/02_coalesced.h"
#include "kernels/03_smem_tiled.h"
#include "kernels/04_gather_bmm.h"
#include "kernels/08_grouped_bmm.h"
#include "kernels/cuda/device_buffer.cuh"
#include "kernels/cuda/device_context.cuh"

namespace matmulviz::kernels::cuda {
namespace {

__global__ void naiveKernel(MatmulArgs args) {
  DeviceContext ctx;
  naiveMatmul(ctx, args);
}

__global__ void coalescedKernel(MatmulArgs args) {
  DeviceContext ctx;
  coalescedMatmul(ctx, args);
}

__global__ void smemTiledKernel(MatmulArgs args, int tpb) {
  DeviceContext ctx;
  smemTiledMatmul(ctx, args, SmemTiles::carve(ctx.sharedMemory(), tpb));
}

__global__ void gatherBmmKernel(GatherBmmArgs args) {
  DeviceContext ctx;
  gatherBmm(ctx, args);
}

__global__ void groupHistogramKernel(GroupedBmmArgs args) {
  DeviceContext ctx;
  groupHistogram(ctx, args);
}

__global__ void groupOffsetsKernel(GroupedBmmArgs args) {
  DeviceContext ctx;
  groupOffsets(ctx, args);
}

__global__ void groupScatterKernel(GroupedBmmArgs args) {
  DeviceContext ctx;
  groupScatter(ctx, args);
}

__global__ void groupedBmmKernel(GroupedBmmArgs args) {
  DeviceContext ctx;
  groupedBmm(ctx, args);
}

dim3 toDim3(const sim::Dim3& d) {
  return dim3(d.x, d.y, d.z);
}

int asInt(std::int64_t v) {
  return static_cast<int>(v);
}

void checkQ(const MatmulProblem& p, const MatmulInputs& in) {
  if (static_cast<std::int64_t>(in.q.size()) != p.batch) {
    throw std::invalid_argument("q has " + std::to_string(in.q.size()) +
                                " entries, expected batch = " + std::to_string(p.batch));
  }
  for (std::size_t n = 0; n < in.q.size(); ++n) {
    if (in.q[n] < 0 || in.q[n] >= p.table) {
      throw std::invalid_argument("q[" + std::to_string(n) + "] = " + std::to_string(in.q[n]) +
                                  " is outside 0.." + std::to_string(p.table - 1) +
                                  "; the GPU kernel would read outside c");
    }
  }
}

/// One warm-up launch, then `repeats` timed ones.
template <class Launch>
CudaRun timeLaunches(Launch&& launch, int repeats) {
  if (repeats < 1) throw std::invalid_argument("repeats must be at least 1");
  CudaRun run;
  run.device = currentDeviceName();
  launch();
  MATMULVIZ_CUDA_CHECK(cudaGetLastError());
  MATMULVIZ_CUDA_CHECK(cudaDeviceSynchronize());
  EventTimer timer;
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    timer.start();
    launch();
    MATMULVIZ_CUDA_CHECK(cudaGetLastError());
    ms.push_back(timer.stopMs());
  }
  medianMin(ms, run.medianMs, run.minMs);
  return run;
}

}  // namespace

namespace {

GatherBmmArgs deviceGatherArgs(const MatmulProblem& p, const float* a, const float* c,
                               const std::int64_t* q, float* out) {
  return gatherBmmArgs(a, c, q, out, asInt(p.batch), asInt(p.M), asInt(p.K), asInt(p.N),
                       asInt(p.table));
}

/// 08: each timed launch is the whole kernel, from q to out: the memset that zeroes the buckets,
/// the bucketing's three launches and the grouped product.
CudaRun runGroupedBmm(const MatmulProblem& p, int tpb, const MatmulInputs& in, int repeats,
                      DeviceBuffer<float>& a, DeviceBuffer<float>& c, DeviceBuffer<float>& out) {
  const GroupedBmmConfigs configs =
      GroupedBmmConfigs::of(asInt(p.batch), asInt(p.K), asInt(p.N), asInt(p.table), tpb);
  DeviceBuffer<std::int64_t> q(in.q);
  DeviceBuffer<int> buckets(static_cast<std::size_t>(GroupedBmmWorkspace::ints(p.batch, p.table)));
  const GroupedBmmArgs args =
      groupedBmmArgs(deviceGatherArgs(p, a.get(), c.get(), q.get(), out.get()), buckets.get());
  return timeLaunches(
      [&] {
        MATMULVIZ_CUDA_CHECK(cudaMemsetAsync(buckets.get(), 0, buckets.size() * sizeof(int)));
        groupHistogramKernel<<<toDim3(configs.histogram.gridDim),
                               toDim3(configs.histogram.blockDim)>>>(args);
        groupOffsetsKernel<<<toDim3(configs.offsets.gridDim), toDim3(configs.offsets.blockDim),
                             configs.offsets.sharedBytes>>>(args);
        groupScatterKernel<<<toDim3(configs.scatter.gridDim), toDim3(configs.scatter.blockDim)>>>(
            args);
        groupedBmmKernel<<<toDim3(configs.grouped.gridDim), toDim3(configs.grouped.blockDim),
                           configs.grouped.sharedBytes>>>(args);
      },
      repeats);
}

}  // namespace

CudaRun runKernel(std::string_view name, const MatmulProblem& p, int tpb, const MatmulInputs& in,
                  int repeats) {
  const bool grouped = name == "grouped_bmm";
  const bool gathered = name == "gather_bmm" || grouped;
  if (name != "naive" && name != "coalesced" && name != "smem_tiled" && !gathered) {
    throw std::invalid_argument("unknown kernel '" + std::string(name) +
                                "'; choose naive, coalesced, smem_tiled, gather_bmm or "
                                "grouped_bmm");
  }
  validate(p, gathered);
  if (gathered) checkQ(p, in);
  DeviceBuffer<float> a(in.a);
  DeviceBuffer<float> b(in.b);
  DeviceBuffer<float> out(static_cast<std::size_t>(outputElements(p, gathered)));
  MATMULVIZ_CUDA_CHECK(cudaMemset(out.get(), 0, out.size() * sizeof(float)));

  CudaRun run;
  if (grouped) {
    run = runGroupedBmm(p, tpb, in, repeats, a, b, out);
  } else if (gathered) {
    DeviceBuffer<std::int64_t> q(in.q);
    const GatherBmmArgs args = deviceGatherArgs(p, a.get(), b.get(), q.get(), out.get());
    const sim::LaunchConfig config = gatherBmmConfig(args.N, args.I, args.K, tpb);
    run = timeLaunches(
        [&] { gatherBmmKernel<<<toDim3(config.gridDim), toDim3(config.blockDim)>>>(args); },
        repeats);
  } else {
    MatmulArgs args;
    args.a = sim::view2d<const float>(a.get(), p.M, p.K, kArrayA, "A");
    args.b = sim::view2d<const float>(b.get(), p.K, p.N, kArrayB, "B");
    args.c = sim::view2d<float>(out.get(), p.M, p.N, kArrayC, "C");
    args.M = asInt(p.M);
    args.K = asInt(p.K);
    args.N = asInt(p.N);
    if (name == "naive") {
      const sim::LaunchConfig config = naiveConfig(args.M, args.N, tpb);
      run = timeLaunches(
          [&] { naiveKernel<<<toDim3(config.gridDim), toDim3(config.blockDim)>>>(args); }, repeats);
    } else if (name == "coalesced") {
      const sim::LaunchConfig config = coalescedConfig(args.M, args.N, tpb);
      run = timeLaunches(
          [&] { coalescedKernel<<<toDim3(config.gridDim), toDim3(config.blockDim)>>>(args); },
          repeats);
    } else {
      const sim::LaunchConfig config = smemTiledConfig(args.M, args.N, tpb);
      run = timeLaunches(
          [&] {
            smemTiledKernel<<<toDim3(config.gridDim), toDim3(config.blockDim),
                              config.sharedBytes>>>(args, tpb);
          },
          repeats);
    }
  }
  run.out = out.toHost();
  return run;
}

}  // namespace matmulviz::kernels::cuda

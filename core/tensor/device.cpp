#include "core/tensor/device.h"

#include "core/memory/host_backing.h"
#include "core/util/bad_input.h"

#include <malloc.h>

#include <stdexcept>

namespace matmulviz {

std::string_view deviceKindName(DeviceKind k) {
  switch (k) {
    case DeviceKind::Host:
      return "host";
    case DeviceKind::Cpu:
      return "cpu";
    case DeviceKind::Meta:
      return "meta";
    case DeviceKind::Cuda:
      return "cuda";
  }
  return "?";
}

DeviceKind parseDeviceKind(std::string_view s) {
  if (s == "cpu") return DeviceKind::Cpu;
  if (s == "meta") return DeviceKind::Meta;
  if (s == "cuda") return DeviceKind::Cuda;
  throw std::invalid_argument("unknown device '" + std::string(s) + "' (allowed: cpu, meta, cuda)");
}

namespace {

HostBacking& cpuBacking() {
  static HostBacking host;
  return host;
}

SegmentBacking& backingFor(DeviceKind kind) {
  static MetaBacking meta;
  switch (kind) {
    case DeviceKind::Cpu:
      return cpuBacking();
    case DeviceKind::Meta:
      return meta;
    default:
      break;
  }
  const std::string name(deviceKindName(kind));
  throw BadInput("device", name, "cpu, meta",
                 "the engine makes cpu and meta devices itself; a " + name +
                     " device comes from its backend (RunConfig::deviceFactory; cuda: "
                     "kernels/cuda/cuda_device.h useCudaDeviceIfAsked)");
}

}  // namespace

DevicePtr makeDevice(DeviceKind kind, CachingAllocator::Options options,
                     const DeviceFactory& factory) {
  if (factory) return factory(options);
  return std::make_shared<DeviceContext>(kind, backingFor(kind), options);
}

int64_t releaseUnusedHostMemory() {
  const int64_t released = cpuBacking().releaseFreePages();
  malloc_trim(0);
  return released;
}

}  // namespace matmulviz

#include "core/tensor/device.h"

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

}  // namespace matmulviz

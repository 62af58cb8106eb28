#include "python/src/recorder.h"

#include "core/memory/cublas_workspace.h"

#include "core/tensor/storage.h"
#include "core/util/atomic_file.h"
#include "python/src/runtime.h"

#include <frameobject.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <unordered_set>
#include <utility>

namespace py = pybind11;
using Json = nlohmann::ordered_json;

namespace matmulviz::python {

Recorder& recorder() {
  static Recorder* r = new Recorder();  // never destroyed: the allocator's observer refers to it
  return *r;
}

void Recorder::start(const std::string& packageDir, std::vector<std::string> otherSkipDirs) {
  packageDir_ = packageDir;
  otherSkipDirs_ = std::move(otherSkipDirs);
  frames_.clear();
  frameIds_.clear();
  marks_.clear();
  active_ = true;
  attach(Runtime::instance().cuda());
  Runtime::instance().setDeviceObserver([this](const DevicePtr& d) { attach(d); });
}

void Recorder::attach(const DevicePtr& device) {
  if (device_ && device_ != device) {
    device_->allocator().setAllocationObserver({});
    device_->allocator().setHolderObserver({});
    device_->allocator().setRecordTimeline(false);
  }
  device_ = device;
  frameOf_.clear();
  marks_.clear();
  holderLog_.clear();
  CachingAllocator& a = device_->allocator();
  firstEvent_ = a.events().size();
  a.setRecordTimeline(true);
  a.setAllocationObserver([this](const AllocationRecord& r) { onAllocation(r.id); });
  a.setHolderObserver(
      [this](int64_t id, const std::string& why, int delta) { onHolder(id, why, delta); });
}

void Recorder::onHolder(int64_t id, const std::string& why, int delta) {
  auto [it, inserted] = holderWhyIds_.emplace(why, static_cast<int32_t>(holderWhys_.size()));
  if (inserted) holderWhys_.push_back(why);
  holderLog_.push_back({device_->allocator().events().size(), id, it->second, delta});
}

std::unordered_set<int64_t> Recorder::savedByAutograd() const {
  std::unordered_set<int64_t> out;
  for (const HolderChange& c : holderLog_)
    if (c.delta > 0) out.insert(c.id);
  return out;
}

MemoryCategory Recorder::categoryOf(const AllocationRecord& r,
                                    const std::unordered_set<int64_t>& saved,
                                    const std::unordered_set<int64_t>& named) {
  // PyTorch's memory profiler's vocabulary (torch/profiler/_memory_profiler.py, Category), as
  // the snapshot reader gives it (core/io/snapshot_categories.h). The category set where the
  // block was made first (parameter, gradients, autograd detail, optimizer state, inputs).
  if (r.category != MemoryCategory::Other) return r.category;
  // ACTIVATION: a block autograd saved for the backward and the caller does not hold.
  if (saved.count(r.id) && !named.count(r.id)) return MemoryCategory::Activation;
  // TEMPORARY: made and freed within one call of an op.
  if (r.freedInItsOp) return MemoryCategory::Temporary;
  return MemoryCategory::Other;
}

Json Recorder::holdersAt(size_t peakEvent, const std::vector<int64_t>& live) const {
  // Replayed up to the next event: a block saved right after the peak's allocation counts.
  std::map<int64_t, std::map<int32_t, int64_t>> held;
  for (const HolderChange& c : holderLog_) {
    if (c.events > peakEvent + 1) break;
    if ((held[c.id][c.why] += c.delta) == 0) held[c.id].erase(c.why);
  }
  Json out = Json::object();
  for (const int64_t id : live) {
    const auto it = held.find(id);
    if (it == held.end() || it->second.empty()) continue;
    Json list = Json::array();
    for (const auto& [why, count] : it->second)
      if (count > 0) list.push_back({{"why", holderWhys_[why]}, {"count", count}});
    if (!list.empty()) out[std::to_string(id)] = std::move(list);
  }
  return out;
}

void Recorder::stop() {
  if (!active_) return;
  Runtime::instance().setDeviceObserver({});
  device_->allocator().setAllocationObserver({});
  device_->allocator().setHolderObserver({});
  device_->allocator().setRecordTimeline(false);
  active_ = false;
}

void Recorder::mark(const std::string& name) {
  if (!active_) return;
  marks_.push_back({device_->allocator().elapsedUs(), name, device_->allocator().events().size()});
}

bool Recorder::skipped(const std::string& file) const {
  if (file.rfind(packageDir_, 0) == 0) return true;
  for (const std::string& dir : otherSkipDirs_)
    if (file.rfind(dir, 0) == 0) return true;
  return false;
}

void Recorder::onAllocation(int64_t allocationId) {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (frame) Py_INCREF(frame);
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    const py::handle codeObj(reinterpret_cast<PyObject*>(code));
    const std::string file = py::str(codeObj.attr("co_filename"));
    if (!skipped(file)) {
      const int line = PyFrame_GetLineNumber(frame);
      const std::string function = py::str(codeObj.attr("co_name"));
      Py_DECREF(code);
      Py_DECREF(frame);
      const std::string key = file + ":" + std::to_string(line) + ":" + function;
      auto [it, inserted] = frameIds_.emplace(key, static_cast<int32_t>(frames_.size()));
      if (inserted) frames_.push_back({file, line, function});
      frameOf_[allocationId] = it->second;
      return;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
}

namespace {

Json peakJson(const std::vector<MemoryEvent>& events, size_t first) {
  // The peak's event first, then the blocks live there in one replay up to it: copying the live
  // set at every new peak would cost the square of the events in a run that only grows.
  int64_t best = -1;
  size_t bestIndex = first;
  for (size_t i = first; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    if (e.kind == MemoryEventKind::Alloc && e.after.allocatedBytes > best) {
      best = e.after.allocatedBytes;
      bestIndex = i;
    }
  }
  if (best < 0) return nullptr;
  std::unordered_set<int64_t> live;
  for (size_t i = first; i <= bestIndex; ++i) {
    const MemoryEvent& e = events[i];
    if (e.kind == MemoryEventKind::Alloc) live.insert(e.allocationId);
    if (e.kind == MemoryEventKind::Free) live.erase(e.allocationId);
  }
  std::vector<int64_t> atPeak(live.begin(), live.end());
  std::sort(atPeak.begin(), atPeak.end());
  return Json{{"allocated_bytes", best},
              {"event", bestIndex - first},
              {"time_us", events[bestIndex].timeUs},
              {"live", atPeak}};
}

}  // namespace

void Recorder::write(const std::string& path, const py::dict& extra) const {
  const DevicePtr device = device_ ? device_ : Runtime::instance().cuda();
  const CachingAllocator& a = device->allocator();
  const auto& events = a.events();
  const size_t first = std::min(firstEvent_, events.size());
  py::module_ linecache = py::module_::import("linecache");
  py::module_ json = py::module_::import("json");

  Json j;
  j["format"] = "matmulviz-report";
  j["version"] = 1;
  j["kind"] = "python";
  Json e = Json::parse(std::string(py::str(json.attr("dumps")(extra))));
  for (auto& [k, v] : e.items()) j[k] = v;
  j["device"] = {{"name", "cuda:0"},
                 {"mode", Runtime::instance().mode() == CudaMode::Meta ? "meta" : "data"},
                 {"capacity_bytes",
                  a.options().capacityBytes ? Json(*a.options().capacityBytes) : Json(nullptr)}};
  {  // which PyTorch and GPU the model followed (docs/report-format.md, "pytorch")
    const PyTorchModel& m = a.options().pytorch;
    const auto config = effectiveCublasWorkspaceConfig(m);
    j["device"]["pytorch"] = {{"version", std::string(pytorchVersionName(m.version))},
                              {"gpu", m.gpu},
                              {"cublas_workspace_config", config ? Json(*config) : Json(nullptr)},
                              {"described", m.describe()}};
  }
  Json frames = Json::array();
  for (const PythonFrame& f : frames_) {
    const std::string code = py::str(linecache.attr("getline")(f.file, f.line).attr("strip")());
    frames.push_back(
        {{"file", f.file}, {"line", f.line}, {"function", f.function}, {"code", code}});
  }
  j["frames"] = std::move(frames);
  j["ops"] = a.opNames();

  // Events and allocations as rows of a table (a run makes millions of them: keys per row
  // would triple the file).
  Json evs = Json::array();
  std::unordered_set<int64_t> ids;
  for (size_t i = first; i < events.size(); ++i) {
    const MemoryEvent& ev = events[i];
    evs.push_back(Json::array({static_cast<int>(ev.kind), ev.allocationId, ev.bytes,
                               std::round(ev.timeUs * 1000.0) / 1000.0, ev.after.allocatedBytes,
                               ev.after.reservedBytes, ev.opId}));
    if (ev.allocationId >= 0) ids.insert(ev.allocationId);
  }
  Json kinds = Json::array();
  for (MemoryEventKind k :
       {MemoryEventKind::Alloc, MemoryEventKind::Free, MemoryEventKind::SegmentAlloc,
        MemoryEventKind::SegmentFree, MemoryEventKind::Oom})
    kinds.push_back(memoryEventKindName(k));
  j["events"] = {{"columns", {"kind", "id", "bytes", "time_us", "allocated", "reserved", "op"}},
                 {"kinds", std::move(kinds)},
                 {"rows", std::move(evs)}};

  const std::unordered_set<int64_t> saved = savedByAutograd();
  std::unordered_set<int64_t> named;  // blocks a Python variable held (extra's "variables")
  if (j.contains("variables") && j["variables"].is_object())
    for (const auto& [key, names] : j["variables"].items()) named.insert(std::stoll(key));
  std::vector<int64_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  Json allocs = Json::array();
  Json keptAlive = Json::object();
  for (int64_t id : sorted) {
    const auto it = a.records().find(id);
    if (it == a.records().end()) continue;
    const AllocationRecord& r = it->second;
    if (const Storage* s = device->storageOf(id); s && !s->holders().empty()) {
      Json keptBy = Json::array();
      for (const auto& [why, count] : s->holders())
        keptBy.push_back({{"why", why}, {"count", count}});
      keptAlive[std::to_string(id)] = std::move(keptBy);
    }
    const auto f = frameOf_.find(id);
    const MemoryCategory category = categoryOf(r, saved, named);
    allocs.push_back(Json::array({id, r.label, r.opId, r.requestedBytes, r.blockBytes,
                                  r.small ? "small" : "large",
                                  f == frameOf_.end() ? Json(nullptr) : Json(f->second), r.alive,
                                  std::string(memoryCategoryName(category))}));
  }
  j["allocations"] = {{"columns",
                       {"id", "label", "op", "requested_bytes", "block_bytes", "pool", "frame",
                        "alive", "category"}},
                      {"rows", std::move(allocs)}};
  j["kept_alive_by"] = std::move(keptAlive);
  j["peak"] = peakJson(events, first);
  if (!j["peak"].is_null())
    j["peak"]["kept_alive_by"] = holdersAt(first + j["peak"]["event"].get<size_t>(),
                                           j["peak"]["live"].get<std::vector<int64_t>>());
  Json marks = Json::array();
  for (const Mark& m : marks_)
    marks.push_back({{"time_us", m.timeUs},
                     {"name", m.name},
                     {"event", std::min(m.events, events.size()) - std::min(first, m.events)}});
  j["marks"] = std::move(marks);

  replaceFileAtomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp);
    out << j.dump() << '\n';
    return static_cast<bool>(out.flush());
  });
}

void bindRecorder(py::module_& m) {
  m.def(
      "_record_start",
      [](const std::string& packageDir, std::vector<std::string> otherSkipDirs) {
        recorder().start(packageDir, std::move(otherSkipDirs));
      },
      py::arg("package_dir"), py::arg("other_skip_dirs") = std::vector<std::string>{});
  m.def("_record_stop", [] { recorder().stop(); });
  m.def("_record_active", [] { return recorder().active(); });
  m.def("_record_mark", [](const std::string& name) { recorder().mark(name); });
  m.def("_record_write",
        [](const std::string& path, const py::dict& extra) { recorder().write(path, extra); });
}

}  // namespace matmulviz::python

#include "python/src/recorder.h"

#include "core/tensor/storage.h"
#include "core/util/atomic_file.h"
#include "python/src/runtime.h"

#include <frameobject.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <unordered_set>

namespace py = pybind11;
using Json = nlohmann::ordered_json;

namespace matmulviz::python {

Recorder& recorder() {
  static Recorder* r = new Recorder();  // never destroyed: the allocator's observer refers to it
  return *r;
}

void Recorder::start(const std::string& packageDir) {
  packageDir_ = packageDir;
  CachingAllocator& a = Runtime::instance().cuda()->allocator();
  firstEvent_ = a.events().size();
  frames_.clear();
  frameIds_.clear();
  frameOf_.clear();
  marks_.clear();
  a.setRecordTimeline(true);
  a.setAllocationObserver([this](const AllocationRecord& r) { onAllocation(r.id); });
  active_ = true;
}

void Recorder::stop() {
  if (!active_) return;
  Runtime::instance().cuda()->allocator().setAllocationObserver({});
  Runtime::instance().cuda()->allocator().setRecordTimeline(false);
  active_ = false;
}

void Recorder::mark(const std::string& name) {
  if (!active_) return;
  marks_.emplace_back(Runtime::instance().cuda()->allocator().elapsedUs(), name);
}

void Recorder::onAllocation(int64_t allocationId) {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (frame) Py_INCREF(frame);
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    const py::handle codeObj(reinterpret_cast<PyObject*>(code));
    const std::string file = py::str(codeObj.attr("co_filename"));
    if (file.rfind(packageDir_, 0) != 0) {
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
  std::unordered_set<int64_t> live;
  int64_t best = -1;
  size_t bestIndex = first;
  std::vector<int64_t> atPeak;
  for (size_t i = first; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    if (e.kind == MemoryEventKind::Alloc) live.insert(e.allocationId);
    if (e.kind == MemoryEventKind::Free) live.erase(e.allocationId);
    if (e.kind == MemoryEventKind::Alloc && e.after.allocatedBytes > best) {
      best = e.after.allocatedBytes;
      bestIndex = i;
      atPeak.assign(live.begin(), live.end());
    }
  }
  std::sort(atPeak.begin(), atPeak.end());
  if (best < 0) return nullptr;
  return Json{{"allocated_bytes", best},
              {"event", bestIndex - first},
              {"time_us", events[bestIndex].timeUs},
              {"live", atPeak}};
}

}  // namespace

void Recorder::write(const std::string& path, const py::dict& extra) const {
  const DevicePtr& device = Runtime::instance().cuda();
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
  Json frames = Json::array();
  for (const PythonFrame& f : frames_) {
    const std::string code = py::str(linecache.attr("getline")(f.file, f.line).attr("strip")());
    frames.push_back(
        {{"file", f.file}, {"line", f.line}, {"function", f.function}, {"code", code}});
  }
  j["frames"] = std::move(frames);
  j["ops"] = a.opNames();

  Json evs = Json::array();
  std::unordered_set<int64_t> ids;
  for (size_t i = first; i < events.size(); ++i) {
    const MemoryEvent& ev = events[i];
    evs.push_back({{"kind", memoryEventKindName(ev.kind)},
                   {"id", ev.allocationId},
                   {"bytes", ev.bytes},
                   {"time_us", ev.timeUs},
                   {"allocated", ev.after.allocatedBytes},
                   {"reserved", ev.after.reservedBytes},
                   {"op", ev.opId}});
    if (ev.allocationId >= 0) ids.insert(ev.allocationId);
  }
  j["events"] = std::move(evs);

  std::vector<int64_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  Json allocs = Json::array();
  for (int64_t id : sorted) {
    const auto it = a.records().find(id);
    if (it == a.records().end()) continue;
    const AllocationRecord& r = it->second;
    Json keptBy = Json::array();
    if (const Storage* s = device->storageOf(id))
      for (const auto& [why, count] : s->holders())
        keptBy.push_back({{"why", why}, {"count", count}});
    const auto f = frameOf_.find(id);
    allocs.push_back({{"id", id},
                      {"label", r.label},
                      {"op", r.opId},
                      {"requested_bytes", r.requestedBytes},
                      {"block_bytes", r.blockBytes},
                      {"pool", r.small ? "small" : "large"},
                      {"frame", f == frameOf_.end() ? Json(nullptr) : Json(f->second)},
                      {"alive", r.alive},
                      {"kept_alive_by", std::move(keptBy)}});
  }
  j["allocations"] = std::move(allocs);
  j["peak"] = peakJson(events, first);
  Json marks = Json::array();
  for (const auto& [t, name] : marks_) marks.push_back({{"time_us", t}, {"name", name}});
  j["marks"] = std::move(marks);

  replaceFileAtomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp);
    out << j.dump() << '\n';
    return static_cast<bool>(out.flush());
  });
}

void bindRecorder(py::module_& m) {
  m.def("_record_start", [](const std::string& packageDir) { recorder().start(packageDir); });
  m.def("_record_stop", [] { recorder().stop(); });
  m.def("_record_active", [] { return recorder().active(); });
  m.def("_record_mark", [](const std::string& name) { recorder().mark(name); });
  m.def("_record_write",
        [](const std::string& path, const py::dict& extra) { recorder().write(path, extra); });
}

}  // namespace matmulviz::python

#pragma once
// The results of `python3 -m matmulviz.simulate SCRIPT ... --search LO:HI --stats PATH`: every
// trial of the largest-batch search (a value of the script's own argument, whether its
// simulated run fit the GPU, its peaks) and the answer, as the app's batch-search chart draws
// them. Written by python/matmulviz/simulate/_search.py (write_results).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace matmulviz {

struct SearchTrial {
  int64_t value = 0;
  bool fits = false;
  int64_t peakAllocatedBytes = 0;  ///< torch.cuda.max_memory_allocated() at its end
  int64_t peakReservedBytes = 0;   ///< max_memory_reserved()
  std::string where;               ///< "train.py:42": the line that ran out of memory, or ""
  double seconds = 0;
  std::string error;  ///< a run that failed otherwise, its last line; "" when none
};

struct SearchResults {
  std::string argument;  ///< the argument searched ("--batch_size")
  int64_t lo = 1, hi = 1;
  std::optional<int64_t> capacityBytes;  ///< the GPU's, when known
  std::optional<int64_t> largest;        ///< the largest value that fits; none: not even lo
  double seconds = 0;
  std::string error;                ///< why the search stopped early, or ""
  std::vector<SearchTrial> trials;  ///< by value
};

/// Reads the file at `path`. Throws ReportLoadError (core/report/json_reader.h) naming `name`
/// (the file's name as the caller shows it) and the key that is wrong.
SearchResults readSearchResultsFile(const std::string& path, const std::string& name);
/// The same from the document's text.
SearchResults readSearchResults(const std::string& text, const std::string& name);

}  // namespace matmulviz

#!/usr/bin/env bash
# Rewrites the Python runs' reports that tests/cli/test_cli_compare_snapshot.cpp and
# tests/ui/test_compare_events.cpp compare with the real snapshots: two programs of ../programs
# run on matmulviz.torch with the release build's package (scripts/python). They are fixtures of
# the compare tool, not goldens of the engine (tests/python/test_gpu_snapshots.py runs the
# programs afresh); rewrite them when the report format changes.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../../.." && pwd)"
cd "$root"
for p in mlp_backward mlp_backward_extra_temporary; do
  scripts/python -m matmulviz "tests/reference/gpu/programs/$p.py" \
    --report "tests/reference/gpu/runs/$p.json"
done

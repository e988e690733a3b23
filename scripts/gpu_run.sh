#!/usr/bin/env bash
# The corpus on a GPU machine, inside a deadline, resumable (README: "On a GPU machine").
#
#   scripts/gpu_run.sh OUT [--wheels DIR] [--deadline SECONDS] [-n N] [--devices cuda] [-k EXPR] [-- RUN ARGS]
#
# 1. The torch to test is the one `${PYTHON:-python3}` imports; it is never installed or replaced.
# 2. What the harness needs and that environment lacks is installed from DIR (scripts/gpu_wheels.sh
#    makes it) with no network (pip --no-index), torch and its CUDA libraries held at their versions;
#    then the project itself, from this tree (editable).
# 3. scripts/gpu_run.py: a preflight (a worker's memory cap, the device, its compiler), then the cases
#    written for the device, the other backends, inductor; at the deadline the running phase stops as
#    with Ctrl-C, every finished record kept. OUT gets results/, unfinished.txt and report/; the same
#    command again resumes where it stopped. Exit status: gpu_run.py's (0, 1 failures, 3 unfinished).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: $0 OUT [--wheels DIR] [--deadline SECONDS] [-n N] [--devices LIST] [-- RUN ARGS]"
if [ $# -lt 1 ] || [[ $1 == -* ]]; then echo "$usage" >&2; exit 2; fi
out=$1; shift
wheels=""
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --wheels) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; wheels=$2; shift 2 ;;
    --wheels=*) wheels=${1#--wheels=}; shift ;;
    *) pass+=("$1"); shift ;;
  esac
done
py=${PYTHON:-python3}

if ! "$py" -c "import torch" 2>/dev/null; then
  echo "$0: $py cannot import torch: run it with the Python whose torch is to be tested (PYTHON=...)" >&2
  exit 2
fi
"$py" -c "import torch; print(f'gpu_run: torch {torch.__version__} (git {torch.version.git_version}), cuda {torch.version.cuda}, from {torch.__file__}')"
command -v nvidia-smi >/dev/null && nvidia-smi -L || true

# pip installs only what is missing or too old for the harness (its default strategy); torch and what
# came with it (triton, the CUDA libraries) are held at their versions besides.
held=$(mktemp)
trap 'rm -f "$held"' EXIT
"$py" -m pip list --format=freeze 2>/dev/null | grep -iE '^(torch|triton|pytorch-triton[a-z-]*|nvidia-[a-z0-9-]+)==' \
  >"$held" || true
source=(--no-index)
if [ -n "$wheels" ]; then
  [ -d "$wheels" ] || { echo "$0: --wheels $wheels: no such folder (scripts/gpu_wheels.sh makes one)" >&2; exit 2; }
  source+=(--find-links "$wheels")
fi
if ! "$py" -m pip install --quiet --disable-pip-version-check --no-cache-dir "${source[@]}" -c "$held" -e .; then
  echo "$0: the harness's dependencies could not be installed without network; give --wheels DIR made by" \
       "scripts/gpu_wheels.sh DIR $("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')" >&2
  exit 2
fi

exec "$py" scripts/gpu_run.py "$out" "${pass[@]}"

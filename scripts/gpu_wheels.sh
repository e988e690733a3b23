#!/usr/bin/env bash
# The wheel folder that scripts/gpu_run.sh installs from on a machine with no network: every runtime
# dependency of the harness (pyproject.toml's, with theirs) and what builds the project (setuptools,
# wheel), as binary wheels for the GPU machine's Python and platform. The install there takes only
# what that machine lacks; torch is never among them.
#
#   scripts/gpu_wheels.sh DIR [PYTHON_VERSION]     # default 3.12, x86-64 Linux (manylinux)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 DIR [PYTHON_VERSION]   (e.g. $0 .gpu-wheels 3.12)" >&2
  exit 2
fi
dir=$1
pyv=${2:-3.12}
case "$pyv" in
  3.[0-9]|3.[0-9][0-9]) ;;
  *) echo "$0: PYTHON_VERSION $pyv: give MAJOR.MINOR, e.g. 3.12" >&2; exit 2 ;;
esac
py=${PYTHON:-python3}
mapfile -t reqs < <("$py" - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    project = tomllib.load(f)
for req in [*project["project"]["dependencies"], *project["build-system"]["requires"]]:
    print(req.split("#")[0].strip())
PY
)
platforms=()
for tag in manylinux1 manylinux2010 manylinux2014 manylinux_2_17 manylinux_2_24 manylinux_2_27 manylinux_2_28 \
           manylinux_2_31 manylinux_2_34 manylinux_2_35 manylinux_2_39; do
  platforms+=(--platform "${tag}_x86_64")
done
mkdir -p "$dir"
"$py" -m pip download --quiet --dest "$dir" --only-binary=:all: --python-version "$pyv" --implementation cp \
  "${platforms[@]}" "${reqs[@]}"
echo "$dir: $(ls "$dir" | wc -l) wheels, $(du -sh "$dir" | cut -f1) for Python $pyv:"
ls "$dir"

#!/usr/bin/env bash
# `make lock`: resolve the dependencies afresh in a throw-away venv and write requirements.lock, the pins that
# `make install` (and so CI) installs with. torch and its CUDA/NVIDIA companions are left out on purpose: the
# machine's own CPU wheel (TORCH_WHEELS) or PyPI's default build serves, within setup.cfg's range.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --upgrade pip
wheel=$(ls "${TORCH_WHEELS:-/opt/wheels}"/torch-*.whl 2>/dev/null | sort -V | tail -n 1 || true)
if [ -n "$wheel" ]; then "$tmp/venv/bin/pip" install --quiet "$wheel"; fi
"$tmp/venv/bin/pip" install --quiet -e '.[dev,spark]'
{
  echo "# Resolved dependency versions for make install and CI; refresh with \`make lock\` (scripts/lock.sh)."
  echo "# Python $("$tmp/venv/bin/python" -c 'import platform; print(platform.python_version())'), $(date -u +%Y-%m-%d). torch is not pinned here (see scripts/lock.sh)."
  "$tmp/venv/bin/pip" freeze --exclude-editable | grep -v -i -E '^(torch|triton|nvidia-|cuda-)' | LC_ALL=C sort -f
} > requirements.lock
echo "wrote requirements.lock ($(grep -vc '^#' requirements.lock) pins)"

#!/usr/bin/env bash
# Shared set-up of scripts/run and scripts/test: installs the Debian 12 packages trainscope needs (only the missing
# ones; through sudo when not root), then configures and builds Release into build/.
#   setup.sh              the packages, then the Release build
#   setup.sh --packages   the packages only (scripts/test --sanitize / --tsan build elsewhere)
#   setup.sh --fuzz       the packages and clang-14 + libFuzzer, no build (scripts/fuzz only; CI never needs them)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-build}"
case "$mode" in
  build | --packages | --fuzz) ;;
  *) echo "usage: scripts/setup.sh [--packages | --fuzz]" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake pkg-config
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc libshaderc-dev spirv-cross
  libglm-dev doctest-dev zlib1g-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libglfw3-dev libimgui-dev libstb-dev fonts-dejavu-core xvfb xauth xdotool
  libopenblas-dev libopenblas0-pthread
  dataset-fashion-mnist fortunes
  ccache
)
if [ "$mode" = --fuzz ]; then packages+=(clang-14 libfuzzer-14-dev); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "trainscope: installing ${missing[*]}" >&2
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then sudo=(sudo); else
      echo "trainscope: need root or sudo to install: ${missing[*]}" >&2; exit 1
    fi
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

if [ "$mode" != build ]; then exit 0; fi

jobs="$(nproc 2>/dev/null || echo 2)"
# A compiler cache (Debian's ccache): a rebuild after a small change, or a fresh clone of sources already compiled on
# this machine, compiles only what changed. CCACHE_BASEDIR makes the cached paths relative to the checkout, so clones
# in other directories (CI's clean clone, git worktrees) share the cache. TRAINSCOPE_CCACHE=0 builds without it.
launcher=()
if [ "${TRAINSCOPE_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$root"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  launcher=(-UCMAKE_C_COMPILER_LAUNCHER -UCMAKE_CXX_COMPILER_LAUNCHER)
fi
# TRAINSCOPE_NATIVE: this build runs here only, so everything is compiled for this CPU (a package is portable:
# scripts/package).
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DTRAINSCOPE_NATIVE=ON "${launcher[@]}" >&2
cmake --build "$root/build" -j "$jobs" >&2

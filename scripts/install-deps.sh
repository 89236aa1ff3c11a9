#!/usr/bin/env bash
# Installs the Debian packages remat builds with, when any is missing (Debian 12). Needs root or sudo.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build ccache git pkg-config clang-format-19
  libboost-test-dev libboost-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libhdf5-dev hdf5-tools xxhash libthrust-dev
  python3 # the tests read SVG back with its XML parser (xml.etree)
  libopenblas-dev # remat::dense's CPU BLAS (CBLAS)
  librandom123-dev # remat::rnn's dropout masks (Philox, on the CPU and in CUDA kernels)
  python3-venv # scripts/install-python.sh: the Python references of the crosscheck tests
  libsundials-dev # remat::cvodes (SUNDIALS's CVODES; its examples' published output is a test reference)
  python3-torch # the RNN crosscheck's reference (PyTorch 1.13, CPU), seen through build/python-venv
  libopenmpi-dev openmpi-bin # remat::mpi and the MPI tests (mpirun)
  libhdf5-openmpi-dev # remat::mpi's parallel HDF5 level (the serial remat::hdf5 keeps libhdf5-dev)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Installs the Debian packages Cairn builds with, only those that are missing. Idempotent.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git curl python3
  librdkafka-dev protobuf-compiler libprotobuf-dev librocksdb-dev libyaml-cpp-dev
  libboost-dev libboost-system-dev libgtest-dev libgmock-dev libssl-dev zlib1g-dev
  nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev libsodium-dev libjemalloc-dev
  # open-addressing hash maps (absl::flat_hash_map) for the projections' bulk loads
  libabsl-dev
  # the embedded log's record CRC, with carry-less multiplication
  libisal-dev
  # trials' log_policies patterns (Go's regular expression syntax, linear-time matching)
  libre2-dev
  # consumers without Cairn code: kcat and the example Python consumer (examples/gpu_hours)
  kcat python3-confluent-kafka python3-protobuf
  # the web UI's charts (served by the master) and its browser tests (tests/web)
  libjs-chart.js chromium chromium-driver python3-selenium python3-yaml
  # interactive tasks' SSH: ssh-keygen reads the keys base/ssh_keys.h makes (tests), sshd serves
  # shells
  openssh-client openssh-server
  # notebooks: Jupyter and the Python kernel agents start for them
  jupyter-notebook python3-ipykernel
  # trials' prepared environments (runtime_packages): venvs made by the harness, pip inside them
  python3-venv python3-pip
  # Determined's own Python package (0.38.1) in trials and its CLI, as the tests run them: its
  # dependencies, torch (CPU, gloo) and torchvision for the PyTorch tutorials
  python3-requests python3-ruamel.yaml python3-termcolor python3-tabulate python3-filelock
  python3-pathspec python3-torch python3-torchvision
  # Determined's system-metrics profiler (core_context.profiler, `profiling.enabled`)
  python3-psutil
  # the tests' stand-in for lomond (Determined's CLI tunnels `det shell open` through it; lomond
  # is not packaged): tests/tools/cli_site
  python3-websocket
  # container agents (--runtime container): runc runs tasks, umoci unpacks OCI archives (and
  # builds the tests' image from busybox-static), tini-static is each container's init, skopeo
  # pulls from registries
  runc umoci tini skopeo busybox-static
  # checkpoints in object stores: the SDKs trials write S3 and Azure Blob with (Determined's
  # package and cairn_harness)
  python3-boto3 python3-azure-storage
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: every package is present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"

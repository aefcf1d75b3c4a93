#!/usr/bin/env bash
# Installs the protocol servers the object-store tests run on loopback and Debian does not package:
# s3rver (S3) and azurite (Microsoft's Azure Blob emulator), from npm, pinned, into
# build/test-servers. Idempotent: a second run with the same versions does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
S3RVER_VERSION=3.7.1
AZURITE_VERSION=3.37.0
prefix=build/test-servers
stamp="$prefix/.installed-s3rver-$S3RVER_VERSION-azurite-$AZURITE_VERSION"
if [[ -f "$stamp" ]]; then
  echo "install-test-servers: s3rver $S3RVER_VERSION and azurite $AZURITE_VERSION are present"
  exit 0
fi
if ! command -v npm > /dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm
fi
mkdir -p "$prefix"
echo "install-test-servers: installing s3rver $S3RVER_VERSION and azurite $AZURITE_VERSION from npm"
npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
  "s3rver@$S3RVER_VERSION" "azurite@$AZURITE_VERSION"
touch "$stamp"

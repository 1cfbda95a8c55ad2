#!/usr/bin/env bash
# Install Debian's chromium for the headless-browser test of the review report
# (tests/headless_chromium.py; the test is skipped without it). Idempotent.
# Run as root by .ci/run.
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
fi
echo "install-chromium: $(chromium --version)"

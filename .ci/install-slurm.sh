#!/usr/bin/env bash
# Install what tests/slurm_cluster.py needs to bring up a single-node SLURM
# cluster from Debian's packages: slurm-wlm (slurmctld, slurmd, client tools)
# and munge. Idempotent and quick: does nothing when the daemons are already
# installed. Needs root (or sudo) and a Debian/Ubuntu apt.
#
# No accounting database: the test cluster answers job-status queries with
# squeue (MinJobAge is raised) and logs every finished job with
# jobcomp/filetxt, so slurmdbd and mariadb-server are not needed.
set -euo pipefail

need=()
for bin in slurmctld slurmd sbatch squeue scontrol munged; do
    command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || need+=("$bin")
done
if [ "${#need[@]}" -eq 0 ]; then
    echo "install-slurm: slurm-wlm and munge already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends keeps it small; the packages' postinst scripts try
# to start services through systemd/invoke-rc.d, which is harmless when there
# is no init system (the test starts the daemons itself).
$SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge
for bin in slurmctld slurmd sbatch munged; do
    command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || {
        echo "install-slurm: $bin still missing after install" >&2
        exit 1
    }
done
echo "install-slurm: installed $(slurmctld -V 2>/dev/null || echo slurm)"

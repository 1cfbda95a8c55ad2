"""A throw-away, single-node SLURM cluster for tests, built from Debian's packages.

Usage (as root, after ``.ci/install-slurm.sh``)::

    from slurm_cluster import SlurmCluster

    with SlurmCluster() as cluster:          # about 1 s to come up
        cluster.run(["sbatch", "--wrap", "true"])
        print(cluster.jobs())                # every job the scheduler has seen

The context manager starts three daemons as children of this process, in the
foreground, so their PIDs are known exactly: ``munged`` (authentication),
``slurmctld`` (controller) and ``slurmd -N localhost`` (the one compute node).
On exit -- also when the body or the start-up raised, and at interpreter exit
if neither ran -- it cancels every job of the cluster, kills any ``slurmstepd``
or job process left behind by *this* cluster (recognised by its private
``SLURM_CONF`` in ``/proc/<pid>/environ``), then stops the three daemons by PID
(SIGTERM, then SIGKILL after a grace period) and removes what it wrote. While
it runs, SIGTERM (``timeout``, a cancelled CI job) raises KeyboardInterrupt so
that this cleanup runs. Should the test process be killed outright (SIGKILL),
the kernel kills the daemons (``PR_SET_PDEATHSIG``), and the next start kills
what is left of that cluster's jobs, deletes its directory and replaces its
stale symlink.
One cluster at a time per machine (``/etc/slurm/slurm.conf`` is shared): do not
run the SLURM tests in parallel (pytest-xdist).

What it writes, and where
-------------------------
Everything lives in one temporary directory (``tempfile.mkdtemp`` under
``$TMPDIR``, or ``base_dir``), removed on exit unless ``keep=True``:
the munge key, socket, pid, seed and log files; ``slurm.conf`` and
``gres.conf``; the controller's state directory; the node's spool directory;
the daemons' logs and pid files; the job completion log (``jobcomp.txt``); and
the fake GPU device nodes (``mknod <tmp>/dev/gpu<i> c 1 3``, i.e. aliases of
``/dev/null``: SLURM only wants a character device to bind a GPU GRES to; jobs
then see ``CUDA_VISIBLE_DEVICES``, while a CPU-only torch still reports no CUDA).

The only thing written outside the temporary directory is **one symlink,
``/etc/slurm/slurm.conf`` -> ``<tmp>/etc/slurm.conf``**: the executor plugin's
job-step launcher strips ``SLURM_CONF`` from the environment, so ``srun``
inside a job only finds the configuration at the compiled-in default path.
The symlink is removed on exit. If ``/etc/slurm/slurm.conf`` already exists
and is not a stale symlink left by a crashed run of this helper, the cluster
refuses to start (it never overwrites a real configuration). Nothing goes to
``/etc/munge``, ``/run/munge``, ``/var/spool`` or ``/var/log``: munged is
pointed at the temporary directory with its command-line options, and SLURM
with ``AuthInfo=socket=...``.

Design choices
--------------
* No accounting database (no ``slurmdbd``/MariaDB): fewer daemons, a smaller
  install (no database server) and a start-up of about a second. The
  executor plugin is then told to poll job status with ``squeue`` (its
  default ``sacct`` fails without accounting storage and the run would hang),
  which is reliable because ``MinJobAge`` is raised to an hour: finished jobs
  stay in the controller's memory for the whole test.
* Jobs are counted from the scheduler itself, two independent ways: the
  controller's job table (``scontrol show job``: every job this fresh cluster
  ever accepted, with its ``Comment``, which the plugin sets to the rule or
  group name, and its state) and the job completion log written by
  ``slurmctld`` (``JobCompType=jobcomp/filetxt``: one line per finished,
  failed or cancelled job). The cluster is created fresh for each use (new
  state directory, job ids start at 1), so nothing from earlier runs is
  counted.
* ``SlurmdParameters=config_overrides`` lets the node announce more CPUs,
  memory and GPUs than the machine has, so the shipped profile's real
  resource requests (several CPUs per GPU, gigabytes of memory) are accepted
  on a 2-core CI runner; what runs is tiny.
* ``ProctrackType=proctrack/linuxproc`` and ``TaskPlugin=task/none``: no
  cgroups and no systemd needed (containers, CI runners).
"""

from __future__ import annotations

import atexit
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_SLURM_CONF = Path("/etc/slurm/slurm.conf")
# What only this test cluster needs, as a profile layered over the shipped one (`--profile slurm --profile
# <dir with this as profile.yaml>`; a key here replaces the same key of the shipped profile).
PROFILE_OVERLAY = """\
# no accounting database in the test cluster: poll with squeue (MinJobAge=3600)
slurm-status-command: squeue
# first status check after 2 s instead of 40 s
slurm-init-seconds-before-status-checks: 2
# no accounts in the test cluster (the plugin would try to guess one)
slurm-no-account: true
slurm-keep-successful-logs: true
latency-wait: 5
"""
_MARKER = "# written by icl-kmeans tests/slurm_cluster.py"
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo", "srun")


def _which(name: str) -> str | None:
    return shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)),
        None,
    )


def unavailable_reason() -> str | None:
    """Why a cluster cannot be started here, or None if it can."""
    if os.name != "posix" or not Path("/proc").is_dir():
        return "needs Linux"
    if os.geteuid() != 0:
        return "needs root (slurmd, munged and /etc/slurm/slurm.conf)"
    missing = [b for b in DAEMONS + CLIENTS if _which(b) is None]
    if missing:
        return (
            f"SLURM/munge binaries missing ({', '.join(missing)}); "
            "run .ci/install-slurm.sh"
        )
    if SYSTEM_SLURM_CONF.exists() or SYSTEM_SLURM_CONF.is_symlink():
        if not _is_stale_symlink(SYSTEM_SLURM_CONF):
            return (
                f"{SYSTEM_SLURM_CONF} exists (a real SLURM configuration, or another "
                "test cluster is running); refusing to replace it"
            )
    return None


def _is_stale_symlink(path: Path) -> bool:
    """A symlink left by a crashed run of this helper: its target is gone, or
    it is one of our configurations whose controller no longer runs. (A link
    to a live test cluster is not stale: one cluster at a time per machine.)"""
    if not path.is_symlink():
        return False
    target = Path(os.readlink(path))
    if not target.exists():
        return True
    try:
        if _MARKER not in target.read_text():
            return False
    except OSError:
        return False
    return not _alive(target.parent.parent / "run" / "slurmctld.pid", "slurmctld")


def _alive(pidfile: Path, comm: str) -> bool:
    try:
        pid = int(pidfile.read_text().split()[0])
        return Path(f"/proc/{pid}/comm").read_text().strip().startswith(comm)
    except (OSError, ValueError, IndexError):
        return False


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def _free_port() -> int:
    """A port that is free now and outside the kernel's ephemeral range.

    An ephemeral port (``bind(0)``) can be taken as the source port of any
    outgoing connection between this check and the daemon's own bind (a CI
    run lost slurmd that way: "Address already in use"); ports below the
    range are only ever taken by an explicit bind.
    """
    low = _ephemeral_range()[0]
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(20000, low) if low > 20001 else rng.randrange(1024, 65536)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free TCP port below the ephemeral range")


@dataclass
class SlurmJob:
    """One job as the controller knows it (``scontrol show job -o``)."""

    job_id: str
    name: str
    state: str
    comment: str
    restarts: int
    exit_code: str
    std_out: str
    raw: dict = field(repr=False, default_factory=dict)


class SlurmCluster:
    """Context manager for a single-node SLURM cluster (see module docstring).

    Parameters
    ----------
    cpus, memory_mb, gpus:
        What the node ``localhost`` announces (``config_overrides``: may exceed
        the real machine). ``gpus`` fake GPUs are configured as GRES ``gpu``.
    partition:
        Name of the single (default) partition.
    base_dir:
        Parent of the temporary directory (default: ``$TMPDIR`` or ``/tmp``).
        Must be searchable by everybody (munged checks the socket's path).
    keep:
        Keep the temporary directory (logs) after stopping.
    start_timeout:
        Seconds to wait for the node to become idle.
    """

    def __init__(
        self,
        *,
        cpus: int = 32,
        memory_mb: int = 256_000,
        gpus: int = 4,
        partition: str = "gpu",
        base_dir: str | os.PathLike | None = None,
        keep: bool = False,
        start_timeout: float = 30.0,
    ):
        self.cpus = cpus
        self.memory_mb = memory_mb
        self.gpus = gpus
        self.partition = partition
        self.base_dir = base_dir
        self.keep = keep
        self.start_timeout = start_timeout
        self.dir: Path | None = None
        self.procs: dict[str, subprocess.Popen] = {}
        self._installed_symlink = False
        self._stopped = True
        self._old_sigterm = None

    # ------------------------------------------------------------ paths/env
    @property
    def conf(self) -> Path:
        assert self.dir is not None
        return self.dir / "etc" / "slurm.conf"

    @property
    def jobcomp_log(self) -> Path:
        assert self.dir is not None
        return self.dir / "log" / "jobcomp.txt"

    @property
    def env(self) -> dict[str, str]:
        """Environment for SLURM client commands pointing at this cluster."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        for var in list(env):  # don't inherit settings of an enclosing job
            if var.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")) and var != "SLURM_CONF":
                del env[var]
        return env

    @property
    def user_env(self) -> dict[str, str]:
        """Environment of a user on a login node: no SLURM_CONF, so SLURM's
        clients (and the executor plugin) find the cluster through
        /etc/slurm/slurm.conf, as on a real cluster."""
        env = self.env
        del env["SLURM_CONF"]
        return env

    def run(self, args: list[str], check: bool = True, timeout: float = 30, **kw):
        """Run a SLURM client command against this cluster, return CompletedProcess."""
        return subprocess.run(
            args, env=self.env, text=True, capture_output=True, check=check,
            timeout=timeout, **kw,
        )

    # ------------------------------------------------------------ lifecycle
    def __enter__(self) -> "SlurmCluster":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, attempts: int = 3) -> "SlurmCluster":
        """Start munged, slurmctld and slurmd; a daemon that loses its port to
        another process (a race no port choice can close) is retried with new ports."""
        for attempt in range(1, attempts + 1):
            try:
                return self._start_once()
            except RuntimeError as err:
                if attempt == attempts or "Address already in use" not in str(err):
                    raise

    def _start_once(self) -> "SlurmCluster":
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(f"cannot start a SLURM cluster: {reason}")
        self._stopped = False
        atexit.register(self.stop)
        # SIGTERM (e.g. from `timeout` or a CI cancel) would end Python without
        # running any cleanup: turn it into KeyboardInterrupt while we run.
        self._old_sigterm = None
        if threading.current_thread() is threading.main_thread() and signal.getsignal(
            signal.SIGTERM
        ) in (signal.SIG_DFL, None):
            self._old_sigterm = signal.signal(signal.SIGTERM, _interrupt)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.procs = {}
        self.dir = Path(tempfile.mkdtemp(prefix="icl-kmeans-slurm-", dir=self.base_dir))
        d = self.dir
        # munged refuses a socket whose path is not searchable by everybody
        d.chmod(0o755)
        for sub in ("etc", "log", "run", "state", "spool", "dev", "munge", "munge/key"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        (d / "munge").chmod(0o755)  # socket folder: 755
        (d / "munge" / "key").chmod(0o700)  # key folder: 700
        key = d / "munge" / "key" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        munge_socket = d / "munge" / "munge.socket"

        gpu_files = []
        for i in range(self.gpus):
            dev = d / "dev" / f"gpu{i}"
            os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))  # S_IFCHR, like /dev/null
            gpu_files.append(dev)

        ctld_port, slurmd_port = _free_port(), _free_port()
        while slurmd_port == ctld_port:  # both were free, but only one daemon can have it
            slurmd_port = _free_port()
        gres = f" Gres=gpu:{self.gpus}" if self.gpus else ""
        self.conf.write_text(
            f"""{_MARKER}
# temporary single-node cluster in {d}; removed when the test ends
ClusterName=iclkmeans
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={d / "state"}
SlurmdSpoolDir={d / "spool"}
SlurmctldPidFile={d / "run" / "slurmctld.pid"}
SlurmdPidFile={d / "run" / "slurmd.pid"}
SlurmctldLogFile={d / "log" / "slurmctld.log"}
SlurmdLogFile={d / "log" / "slurmd.log"}
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
GresTypes=gpu
# no accounting storage: job status via squeue, finished jobs kept 1 h
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=3600
JobCompType=jobcomp/filetxt
JobCompLoc={self.jobcomp_log}
KillWait=2
InactiveLimit=0
SchedulerParameters=sched_interval=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb}{gres} State=UNKNOWN
PartitionName={self.partition} Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
        )
        (d / "etc" / "gres.conf").write_text(
            "".join(f"NodeName=localhost Name=gpu File={f}\n" for f in gpu_files)
        )

        # the only file outside the temporary directory
        if SYSTEM_SLURM_CONF.is_symlink() and _is_stale_symlink(SYSTEM_SLURM_CONF):
            _clean_stale(Path(os.readlink(SYSTEM_SLURM_CONF)))
            SYSTEM_SLURM_CONF.unlink()
        SYSTEM_SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SYSTEM_SLURM_CONF.symlink_to(self.conf)
        self._installed_symlink = True

        env = self.env
        self._spawn(
            "munged",
            [_which("munged"), "--foreground", "--force",
             f"--key-file={key}", f"--socket={munge_socket}",
             f"--pid-file={d / 'munge' / 'munged.pid'}",
             f"--log-file={d / 'log' / 'munged.log'}",
             f"--seed-file={d / 'munge' / 'munged.seed'}"],
            env,
        )
        self._wait_for(lambda: munge_socket.exists(), "munged socket")
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.conf)], env)
        self._wait_for(
            lambda: self.run(["scontrol", "ping"], check=False).stdout.count("UP") > 0,
            "slurmctld",
        )
        self._spawn("slurmd", [_which("slurmd"), "-D", "-N", "localhost", "-f", str(self.conf)], env)
        self._wait_for(self._node_idle, "node localhost idle")

    def _spawn(self, name: str, argv: list, env: dict) -> None:
        assert self.dir is not None
        out = open(self.dir / "log" / f"{name}.stdout", "wb")
        self.procs[name] = subprocess.Popen(
            [str(a) for a in argv], env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent,
        )
        out.close()

    def _node_idle(self) -> bool:
        state = self.run(["sinfo", "-h", "-N", "-o", "%T"], check=False).stdout.strip()
        if state.startswith(("down", "drain")):
            self.run(["scontrol", "update", "NodeName=localhost", "State=RESUME"], check=False)
        return state == "idle"

    def _wait_for(self, pred, what: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(
                        f"{name} exited with {p.returncode} while waiting for {what}:\n"
                        + self.logs(name)
                    )
            try:
                if pred():
                    return
            except (subprocess.SubprocessError, OSError):
                pass
            time.sleep(0.2)
        raise TimeoutError(f"timed out waiting for {what}:\n{self.logs()}")

    def stop(self) -> None:
        """Cancel jobs, stop the daemons by PID, remove what was written. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        try:
            if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
                self.cancel_all()
        finally:
            self._kill_leftovers(spare_daemons=True)
            for name in reversed(list(self.procs)):
                _terminate(self.procs[name])
            self._kill_leftovers()
            if self._installed_symlink:
                try:
                    if SYSTEM_SLURM_CONF.is_symlink() and Path(os.readlink(SYSTEM_SLURM_CONF)) == self.conf:
                        SYSTEM_SLURM_CONF.unlink()
                except OSError:
                    pass
                self._installed_symlink = False
            if self.dir is not None and not self.keep:
                shutil.rmtree(self.dir, ignore_errors=True)
            try:
                atexit.unregister(self.stop)
                if self._old_sigterm is not None:
                    signal.signal(signal.SIGTERM, self._old_sigterm)
                    self._old_sigterm = None
            except Exception:
                pass

    def cancel_all(self, timeout: float = 20.0) -> None:
        """Cancel every job of this cluster and wait until none is running."""
        self.run(["scancel", "--partition", self.partition], check=False)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.run(["squeue", "-h", "-t", "PD,R,CG,CF,S,RQ", "-o", "%i"], check=False).stdout
            if not out.strip():
                return
            time.sleep(0.5)

    def _kill_leftovers(self, spare_daemons: bool = False) -> None:
        if self.dir is not None:
            spare = {p.pid for p in self.procs.values() if p.poll() is None}
            _kill_marked(self.conf, spare, spare_daemons)

    # ------------------------------------------------------------ queries
    def jobs(self) -> list[SlurmJob]:
        """Every job the controller accepted since start (MinJobAge keeps them)."""
        out = self.run(["scontrol", "show", "job", "-o"], check=False).stdout
        jobs = []
        for line in out.splitlines():
            if not line.startswith("JobId="):
                continue
            raw = _parse_scontrol_line(line)
            jobs.append(
                SlurmJob(
                    job_id=raw.get("JobId", ""),
                    name=raw.get("JobName", ""),
                    state=raw.get("JobState", ""),
                    comment=raw.get("Comment", ""),
                    restarts=int(raw.get("Restarts", "0") or 0),
                    exit_code=raw.get("ExitCode", ""),
                    std_out=raw.get("StdOut", ""),
                    raw=raw,
                )
            )
        return sorted(jobs, key=lambda j: int(j.job_id))

    def completed_records(self) -> list[dict]:
        """The job completion log (one dict per finished/failed/cancelled job)."""
        if not self.jobcomp_log.exists():
            return []
        recs = []
        for line in self.jobcomp_log.read_text().splitlines():
            recs.append(dict(re.findall(r"(\w+)=(\S*)", line)))
        return recs

    def wait_for_job_state(self, pred, timeout: float = 60.0, poll: float = 0.5) -> SlurmJob:
        """Wait until some job satisfies ``pred(job)``; return it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for job in self.jobs():
                if pred(job):
                    return job
            time.sleep(poll)
        raise TimeoutError(f"no job matched within {timeout} s; jobs: {self.jobs()}")

    def logs(self, *names: str) -> str:
        """Tail of the daemons' logs (for failure messages)."""
        if self.dir is None:
            return ""
        names = names or ("munged", "slurmctld", "slurmd")
        parts = []
        for n in names:
            for f in (self.dir / "log" / f"{n}.log", self.dir / "log" / f"{n}.stdout"):
                if f.exists():
                    parts.append(f"--- {f}\n" + "\n".join(f.read_text(errors="replace").splitlines()[-30:]))
        return "\n".join(parts)


def _parse_scontrol_line(line: str) -> dict:
    """Parse one ``scontrol show job -o`` line (values may contain spaces)."""
    keys = list(re.finditer(r"(?:^|\s)([A-Za-z:/]+)=", line))
    out = {}
    for i, m in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        out[m.group(1)] = line[m.end():end].strip()
    return out


def _kill_marked(conf: Path, spare: set[int] = frozenset(), spare_daemons: bool = False) -> None:
    """SIGKILL every process of the cluster configured by ``conf``: slurmstepd
    processes and jobs' processes that outlived their job (and, unless
    ``spare_daemons``, the daemons themselves).

    They are recognised by the cluster's private ``SLURM_CONF=<conf>`` in
    their environment (we start the daemons with it; slurmd passes it on to
    slurmstepd and to the jobs); nothing else on the machine is touched.
    """
    marker = f"SLURM_CONF={conf}".encode()
    spare = set(spare) | {os.getpid()}
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit() or int(pid_dir.name) in spare:
            continue
        try:
            if spare_daemons and (pid_dir / "comm").read_text().strip() in DAEMONS + ("slurmscriptd",):
                continue  # slurmctld's helper slurmscriptd: it stops with slurmctld
            if marker in (pid_dir / "environ").read_bytes().split(b"\0"):
                os.kill(int(pid_dir.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


def _clean_stale(conf: Path) -> None:
    """Remove what a killed earlier run left: its processes and its directory."""
    root = conf.parent.parent
    _kill_marked(conf)
    if root.name.startswith("icl-kmeans-slurm-") and (root / "etc" / "slurm.conf") == conf:
        shutil.rmtree(root, ignore_errors=True)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the test process dies, even
    by SIGKILL, so that no daemon outlives it (Linux prctl PR_SET_PDEATHSIG).
    SIGKILL, not SIGTERM: an orphaned slurmctld can hang in its shutdown."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


def _terminate(proc: subprocess.Popen, grace: float = 5.0) -> None:
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace)
    except ProcessLookupError:
        pass


if __name__ == "__main__":  # manual check: python tests/slurm_cluster.py
    t0 = time.monotonic()
    with SlurmCluster(keep=False) as c:
        print(f"cluster up in {time.monotonic() - t0:.1f} s at {c.dir}")
        print(c.run(["sinfo"]).stdout)
        jid = c.run(["sbatch", "--parsable", "--gpus=1", f"--output={c.dir}/job-%j.out", "--wrap",
                     "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"]).stdout.strip()
        j = c.wait_for_job_state(lambda j: j.job_id == jid and j.state == "COMPLETED", 30)
        print(j)
        print(Path(j.std_out).read_text())
        print(c.completed_records())
    print(f"done in {time.monotonic() - t0:.1f} s")

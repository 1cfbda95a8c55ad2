"""Make ``snakemake --cores all --profile slurm`` find the shipped SLURM profile.

Snakemake resolves a bare profile name ``slurm`` by looking, in this order, for
``./slurm`` (relative to the current directory), ``$XDG_CONFIG_HOME/snakemake/slurm``
(``~/.config/snakemake/slurm``) and ``/etc/xdg/snakemake/slurm``; it never looks
under ``workflow/profiles/``. :func:`install_profile` puts a symbolic link to
the repository's ``workflow/profiles/slurm`` at the user location, so later
changes to the shipped profile take effect without reinstalling. Site settings
(account, partition, GPU model, QoS, extra sbatch flags) are not written into
the profile: they are read from ``ICL_KMEANS_SLURM_*`` environment variables
when snakemake starts (see the profile's header).

Usage::

    python -m icl_kmeans install-slurm-profile     # via the package CLI
    python -m icl_kmeans.slurm_profile [--dest DIR] [--force] [--copy]

No torch (or any other heavy) import here.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import sys
import time
from pathlib import Path

PROFILE_NAME = "slurm"
PROFILE_REL = Path("workflow") / "profiles" / PROFILE_NAME


class ProfileExistsError(FileExistsError):
    """A different profile already exists at the destination."""


def user_config_dir() -> Path:
    """Snakemake's per-user profile directory (platformdirs' user config dir)."""
    try:  # what snakemake itself uses (snakemake.common.get_appdirs)
        from platformdirs import AppDirs

        return Path(AppDirs("snakemake", "snakemake").user_config_dir)
    except ImportError:  # pragma: no cover - platformdirs comes with snakemake
        base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
        return Path(base) / "snakemake"


def default_dest() -> Path:
    return user_config_dir() / PROFILE_NAME


def shipped_profile(start: Path | None = None) -> Path:
    """The repository's ``workflow/profiles/slurm`` directory.

    Found next to this source file (``src/icl_kmeans`` in a checkout or an
    editable install), else by walking up from ``start`` (default: the current
    directory).
    """
    candidates = [Path(__file__).resolve().parents[2]]
    here = (start or Path.cwd()).resolve()
    candidates += [here, *here.parents]
    for root in candidates:
        prof = root / PROFILE_REL
        if (prof / "profile.yaml").is_file():
            return prof
    raise FileNotFoundError(
        f"cannot find {PROFILE_REL}/profile.yaml; run this from the icl-kmeans repository"
    )


def _same(dest: Path, source: Path) -> bool:
    """Is ``dest`` already the shipped profile (a link to it or an equal copy)?"""
    if dest.is_symlink():
        try:
            return dest.resolve(strict=True) == source.resolve()
        except (OSError, RuntimeError):
            return False
    if dest.is_dir():
        cmp = filecmp.dircmp(dest, source)
        return not (cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files)
    return False


def install_profile(
    dest: str | os.PathLike | None = None,
    force: bool = False,
    *,
    copy: bool = False,
    source: str | os.PathLike | None = None,
) -> Path:
    """Link (or copy) the shipped SLURM profile to ``dest``.

    Parameters
    ----------
    dest:
        Where to put it; default ``~/.config/snakemake/slurm`` (Snakemake's
        user profile directory), where ``--profile slurm`` finds it.
    force:
        Replace a different existing profile at ``dest``; it is first renamed
        to ``<dest>.bak-<timestamp>`` (nothing is deleted).
    copy:
        Copy the directory instead of linking it (to edit it freely, outside
        the repository). A link is the default: it follows the repository.
    source:
        The profile directory to install; default: the shipped one.

    Returns the destination path. Idempotent: installing the same profile
    again does nothing. A dangling symlink (e.g. the repository moved) is
    replaced without ``force``.
    """
    src = Path(source) if source is not None else shipped_profile()
    if not (src / "profile.yaml").is_file():
        raise FileNotFoundError(f"{src} has no profile.yaml")
    src = src.resolve()
    dst = Path(dest).expanduser() if dest is not None else default_dest()

    if dst.is_symlink() and not dst.exists():
        dst.unlink()  # dangling: the old target is gone
    elif dst.exists() or dst.is_symlink():
        same = _same(dst, src)
        if same and (not force or dst.is_symlink() != copy):
            return dst  # already installed (as asked, or force not given)
        if not same and not force:
            what = f"a link to {os.readlink(dst)}" if dst.is_symlink() else "a different profile"
            raise ProfileExistsError(
                f"{dst} already exists and is {what}; use --force to replace it "
                f"(it will be kept as {dst.name}.bak-<timestamp>)"
            )
        if same:  # only switching between link and copy: nothing to keep
            if dst.is_symlink():
                dst.unlink()
            else:
                shutil.rmtree(dst)
        else:
            dst.rename(dst.with_name(f"{dst.name}.bak-{time.strftime('%Y%m%d%H%M%S')}"))

    dst.parent.mkdir(parents=True, exist_ok=True)
    if copy:
        shutil.copytree(src, dst)
    else:
        dst.symlink_to(src, target_is_directory=True)
    return dst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m icl_kmeans.slurm_profile",
        description="Install the shipped SLURM profile so that "
        "`snakemake --cores all --profile slurm` finds it.",
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=None,
        help=f"destination directory (default: {default_dest()})",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a different existing profile (kept as <dest>.bak-<timestamp>)",
    )
    parser.add_argument(
        "--copy",
        action="store_true",
        help="copy instead of symlinking (to edit it outside the repository)",
    )
    args = parser.parse_args(argv)
    try:
        dst = install_profile(args.dest, args.force, copy=args.copy)
    except (ProfileExistsError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    target = f"a link to {os.readlink(dst)}" if dst.is_symlink() else "a copy of the shipped profile"
    print(f"{dst} is {target}")
    print("Set site settings in your environment, e.g. in ~/.bashrc:")
    print("  export ICL_KMEANS_SLURM_ACCOUNT=<account> ICL_KMEANS_SLURM_PARTITION=<gpu partition>")
    print("Then, from the repository root: snakemake --cores all --profile slurm")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The pinned conda environments (envs/*.yaml) and the rules that use them.

Conda channels cannot be reached from CI, so this checks what can be checked
without them: every env file parses and lists its channels (conda-forge, no
`defaults`); every package is pinned to one exact version; packages that are
also pip-installed share pyproject.toml's pin (the pip environment of the
README and CI), so the two never drift; every rule's `conda:` file exists;
every env installs this checkout's package (its post-deploy script) and no
workflow file edits sys.path; and (marked `network`) the pip equivalents of the
pins resolve on the package index, and the post-deploy script installs the
package into a fresh environment.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
ENV_DIR = REPO / "envs"
ENV_FILES = sorted(ENV_DIR.glob("*.yaml"))
RULE_FILES = [p for p in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))] if p.is_file()]

# conda-forge name -> pip name, where they differ
CONDA_TO_PIP = {
    "pytorch": "torch",
    "matplotlib-base": "matplotlib",
    "seaborn-base": "seaborn",
}
# conda packages without a pip counterpart in pyproject.toml (pip and setuptools: the post-deploy
# script's editable install of the checkout; pyproject's build-system asks for setuptools>=77)
CONDA_ONLY = {"python", "pip", "setuptools"}
# name=version or name=version=build; version: digits and dots only (exact)
PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)=(?P<version>\d+\.\d+\.\d+(?:\.\d+)*)(?:=(?P<build>[A-Za-z0-9_.*]+))?$")


def pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def pip_pins() -> dict[str, str]:
    """Exact pins of pyproject.toml (dependencies and optional dependencies)."""
    proj = pyproject()["project"]
    reqs = list(proj["dependencies"])
    for extra in proj.get("optional-dependencies", {}).values():
        reqs += extra
    pins = {}
    for req in reqs:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;,]+)\s*", req)
        assert m, f"pyproject.toml requirement is not an exact pin: {req!r}"
        pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def load_env(path: Path) -> dict:
    env = yaml.safe_load(path.read_text())
    assert isinstance(env, dict), f"{path.name}: not a mapping"
    return env


def conda_pins(path: Path) -> dict[str, re.Match]:
    pins = {}
    for dep in load_env(path)["dependencies"]:
        assert isinstance(dep, str), f"{path.name}: unexpected entry {dep!r} (no pip: section, please)"
        m = PIN.match(dep.strip())
        assert m, f"{path.name}: {dep!r} is not pinned exactly as name=X.Y.Z[=build]"
        pins[m.group("name").lower()] = m
    return pins


def test_env_files_exist():
    names = {p.stem for p in ENV_FILES}
    assert names == {"torch", "torch-cpu", "analysis"}, names


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_parses_with_channels(path):
    env = load_env(path)
    assert set(env) <= {"name", "channels", "dependencies"}, set(env)
    assert env.get("name"), "every env has a name"
    channels = env.get("channels") or []
    assert channels and channels[0] == "conda-forge", channels
    assert "defaults" not in channels and "nodefaults" in channels, channels
    assert set(channels) <= {"conda-forge", "nodefaults", "pytorch", "nvidia"}, channels
    assert env.get("dependencies"), "no dependencies"


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_every_pin_is_exact_and_equals_pyproject(path):
    pins = pip_pins()
    requires = SpecifierSet(pyproject()["project"]["requires-python"])
    for name, m in conda_pins(path).items():
        version = m.group("version")
        if name == "python":
            assert version in requires, f"{path.name}: python={version} outside requires-python {requires}"
            continue
        pip_name = canonicalize_name(CONDA_TO_PIP.get(name, name))
        assert name in CONDA_ONLY or pip_name in pins, (
            f"{path.name}: {name} has no exact pin in pyproject.toml; add {pip_name}=={version} "
            "there (the pip environment and the conda envs share their pins)"
        )
        if pip_name in pins:
            assert version == pins[pip_name], (
                f"{path.name}: {name}={version} but pyproject.toml pins {pip_name}=={pins[pip_name]}"
            )


def test_torch_env_selects_a_cuda_build():
    """A GPU job must never get conda-forge's CPU build of pytorch silently."""
    pins = conda_pins(ENV_DIR / "torch.yaml")
    assert "pytorch" in pins
    assert (pins["pytorch"].group("build") or "").startswith("cuda"), pins["pytorch"].group(0)


def test_cpu_torch_env_is_the_cuda_env_with_the_cpu_build():
    cuda, cpu = conda_pins(ENV_DIR / "torch.yaml"), conda_pins(ENV_DIR / "torch-cpu.yaml")
    assert (cpu["pytorch"].group("build") or "").startswith("cpu"), cpu["pytorch"].group(0)
    assert {n: m.group("version") for n, m in cpu.items()} == {n: m.group("version") for n, m in cuda.items()}


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_every_env_installs_the_checkout(path):
    """Snakemake runs <env>.post-deploy.sh inside a new env: it installs this checkout (editable, no deps:
    the env file holds them), found through ICL_KMEANS_CHECKOUT, which the workflow sets."""
    script = path.with_name(path.stem + ".post-deploy.sh")
    assert script.is_file(), f"{script.name} missing: the env would lack the icl_kmeans package"
    text = script.read_text()
    assert re.search(r"pip install .*--no-deps.*-e \"\$ICL_KMEANS_CHECKOUT\"", text), text
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert "os.environ.update(ICL_KMEANS_CHECKOUT=str(REPO))" in common


def test_no_workflow_file_edits_sys_path():
    files = [REPO / "Snakefile", *(REPO / "workflow").rglob("*.py"), *(REPO / "workflow").rglob("*.smk")]
    edits = [f"{p.relative_to(REPO)}" for p in files if re.search(r"sys\.path\.(insert|append)|PYTHONPATH", p.read_text())]
    assert not edits, f"the package is installed (pip or the envs' post-deploy), never put on sys.path: {edits}"


# --------------------------------------------------------------------- rules
RULE_HEADER = re.compile(r"^(?P<indent>[ \t]*)rule\b\s*(?P<name>\w*)\s*:", re.M)
EXEC = re.compile(r"^[ \t]+(shell|script|notebook|wrapper|run|cwl)\s*:", re.M)
CONDA = re.compile(r"^[ \t]+conda\s*:\s*(?:\n[ \t]*)?(?P<value>\S.*)$", re.M)


def rule_blocks():
    """(file, rule name, text) of every rule in the Snakefile and workflow/rules/*.smk."""
    for path in RULE_FILES:
        text = path.read_text()
        heads = list(RULE_HEADER.finditer(text))
        for i, m in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
            block = text[m.end() : end]
            name = m.group("name")
            if not name:  # `rule:` with `name:` below (rules made in a loop)
                nm = re.search(r"^[ \t]+name\s*:\s*(?:\n[ \t]*)?(\S.*)$", block, re.M)
                name = nm.group(1).strip() if nm else "<anonymous>"
            yield path, name, block


def require_rule_files():
    if not RULE_FILES:
        pytest.skip("no Snakefile or workflow/rules/*.smk yet: nothing names a conda env")


def env_variables() -> dict[str, list[str]]:
    """The env-file variables of workflow/rules/common.smk (TORCH_ENV, ANALYSIS_ENV): the paths each
    may take, relative to workflow/rules/."""
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    found = {}
    for m in re.finditer(r"^([A-Z_]+_ENV) = (.+?)(?=\n\S|\n\n)", common, re.M | re.S):
        found[m.group(1)] = re.findall(r"""["']([^"']+\.yaml)["']""", m.group(2))
    return found


def test_every_conda_directive_names_an_existing_env():
    require_rule_files()
    seen = 0
    variables = env_variables()
    assert set(variables) == {"TORCH_ENV", "ANALYSIS_ENV"}, variables
    for path, name, block in rule_blocks():
        for m in CONDA.finditer(block):
            value = m.group("value").split("#")[0].strip().rstrip(",")
            lit = re.fullmatch(r"""(["'])(.+)\1""", value)
            assert lit or value in variables, f"{path.name}: rule {name}: conda: {value} is neither a string nor an *_ENV"
            for rel in [lit.group(2)] if lit else variables[value]:
                env = (path.parent / rel).resolve()  # relative to the rule's file
                assert env.is_file(), f"{path.name}: rule {name}: {rel} -> {env} does not exist"
                assert env.parent == ENV_DIR.resolve(), f"{path.name}: rule {name}: {env} not in envs/"
            seen += 1
    assert seen, "no rule names a conda env"


def test_every_rule_that_runs_code_names_a_conda_env():
    require_rule_files()
    missing = [
        f"{path.name}: {name}"
        for path, name, block in rule_blocks()
        if (ex := EXEC.search(block)) and ex.group(1) != "run" and not CONDA.search(block)
    ]
    assert not missing, "rules without `conda:`:\n" + "\n".join(missing)


# ------------------------------------------------------------------ network
@pytest.mark.network
def test_pinned_packages_resolve_on_the_index(tmp_path):
    """The pip side of every pin exists as a wheel for this platform: the env
    files' packages (under their pip names) and pyproject.toml's pins.

    `pip install --dry-run` resolves from the index metadata without
    installing (and, where the index serves wheel metadata, without
    downloading the wheels, e.g. torch's).
    """
    wanted = dict(pip_pins())
    for path in ENV_FILES:
        for name, m in conda_pins(path).items():
            if name not in CONDA_ONLY:
                wanted[canonicalize_name(CONDA_TO_PIP.get(name, name))] = m.group("version")
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
         "--only-binary=:all:", "--disable-pip-version-check", "--quiet", "--report", str(report),
         *(f"{n}=={v}" for n, v in sorted(wanted.items()))],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = {
        canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"].split("+")[0]
        for item in json.loads(report.read_text())["install"]
    }
    assert got == wanted, {k: (wanted.get(k), got.get(k)) for k in set(got) | set(wanted) if got.get(k) != wanted.get(k)}


@pytest.mark.network
def test_post_deploy_script_installs_the_package_into_a_fresh_env(tmp_path):
    """What Snakemake does after creating an env, with a venv in place of conda: the env's pip and
    setuptools pins, then the post-deploy script; the package then imports from this checkout and has
    a version (which the provenance records)."""
    import os

    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    pins = conda_pins(ENV_DIR / "analysis.yaml")
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *(f"{n}=={pins[n].group('version')}" for n in ("pip", "setuptools"))], check=True, timeout=600)
    run_env = dict(os.environ, PATH=f"{env / 'bin'}{os.pathsep}{os.environ['PATH']}", ICL_KMEANS_CHECKOUT=str(REPO))
    run_env.pop("PYTHONPATH", None)
    proc = subprocess.run(["bash", str(ENV_DIR / "analysis.post-deploy.sh")], cwd=tmp_path, env=run_env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    where = subprocess.run(
        [str(env / "bin" / "python"), "-c",
         "import importlib.metadata as m, importlib.util as u; "
         "print(m.version('icl-kmeans')); print(u.find_spec('icl_kmeans').origin)"],
        cwd=tmp_path, env=run_env, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert where[0] == pyproject()["project"]["version"]
    assert Path(where[1]).resolve().is_relative_to(REPO / "src"), where

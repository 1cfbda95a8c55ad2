"""What an evaluation job computes: one frozen dataclass per kind (multistep, landscape, dissimilarity,
profile), and the test set they evaluate on. Figure specs build them through studies.Studies
(st.multistep(...), ...); the readers use their attributes. A kind without trained models or without
test sets has `models` / `testsets` empty as a class constant, so every spec answers both.

A rule receives a spec as the plain dict of `as_params()`: Snakemake's params rerun trigger compares the
repr of each param, and the provenance records (params, config_digest) digest them, so as_params gives the
keys in the order and the values of the types that the dicts these classes replaced had. A narrowed copy
(a subset's) is `dataclasses.replace(spec, models=...)`.

Pure Python (no torch): Snakemake builds the DAG from this at parse time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

DISTRIBUTION_KEYS = ("family", "n", "d", "k", "isotropic", "equal_weights", "scale")
NONE: Mapping = MappingProxyType({})  # the models or test sets of a kind that has none


def distribution_id(dist: Mapping) -> str:
    iso = "iso" if dist["isotropic"] else "aniso"
    w = "eq" if dist["equal_weights"] else "uneq"
    return f"{dist['family']}_n{dist['n']}_d{dist['d']}_k{dist['k']}_{iso}_{w}_s{dist['scale']:g}"


def testset_id(ts: Mapping) -> str:
    """A test set's id (its file's name): its distribution and its number of tasks."""
    return f"{distribution_id({k: ts[k] for k in DISTRIBUTION_KEYS})}_t{ts['tasks']}"


@dataclass(frozen=True)
class TestSet:
    """Held-out tasks of one distribution: `tasks` tasks of n points in d dimensions, k clusters."""

    __test__ = False  # not a pytest test class

    family: str
    n: int
    d: int
    k: int
    isotropic: bool
    equal_weights: bool
    scale: float
    tasks: int

    @property
    def id(self) -> str:
        return testset_id(asdict(self))

    def as_params(self) -> dict:
        """The test set as the rules (test_tasks, the evaluations) receive it: its fields, then its id."""
        return {**asdict(self), "id": self.id}


def _testsets(testsets: Mapping[str, TestSet]) -> dict:
    return {name: ts.as_params() for name, ts in testsets.items()}


class EvaluationSpec:
    """What the four kinds share: kind, models (label -> run id), testsets (name -> TestSet), as_params()."""

    kind: ClassVar[str]
    models: Mapping[str, str]
    testsets: Mapping[str, TestSet]

    def runs(self) -> list[str]:
        """The runs whose checkpoints the evaluation reads, sorted."""
        return sorted(set(self.models.values()))

    def as_params(self) -> dict:
        raise NotImplementedError


@dataclass(frozen=True)
class MultistepSpec(EvaluationSpec):
    """Each model run for `steps` steps on each test set, in each mode (naive, reembed), beside the
    baselines (lloyd, em) run on the same tasks."""

    kind: ClassVar[str] = "multistep"

    models: Mapping[str, str]
    modes: tuple[str, ...]
    testsets: Mapping[str, TestSet]
    steps: int
    baselines: tuple[str, ...]
    cross: str | None = None  # Fig 8: "train family x test family" (a note the params carry)
    lloyd_empty: str | None = None  # with the lloyd baseline: its empty-cluster convention (settings')
    baseline_seed: int | None = None  # with the lloyd baseline: reseed draws from it (settings' eval_seed)

    def __post_init__(self):
        if "lloyd" in self.baselines and (self.lloyd_empty is None or self.baseline_seed is None):
            raise ValueError("a multistep evaluation with the lloyd baseline needs lloyd_empty and baseline_seed")

    def as_params(self) -> dict:
        out = dict(kind=self.kind, models=dict(self.models), modes=list(self.modes),
                   testsets=_testsets(self.testsets), steps=self.steps, baselines=list(self.baselines))
        if self.cross is not None:
            out["cross"] = self.cross
        if "lloyd" in self.baselines:
            out.update(lloyd_empty=self.lloyd_empty, baseline_seed=self.baseline_seed)
        return out


@dataclass(frozen=True)
class LandscapeSpec(EvaluationSpec):
    """A loss ("loss") or gap ("gap") surface of the `regularizer` loss at `tau` around each model's
    parameters, resolution x resolution points, on `tasks` tasks of the model's test set."""

    kind: ClassVar[str] = "landscape"

    surface: str
    models: Mapping[str, str]
    tau: float
    regularizer: str
    resolution: int
    tasks: int
    testsets: Mapping[str, TestSet]

    def as_params(self) -> dict:
        return dict(kind=self.kind, surface=self.surface, models=dict(self.models), tau=self.tau,
                    regularizer=self.regularizer, resolution=self.resolution, tasks=self.tasks,
                    testsets=_testsets(self.testsets))


@dataclass(frozen=True)
class DissimilaritySpec(EvaluationSpec):
    """Earth-mover distances between the tasks of the test sets (one per family). No trained models."""

    kind: ClassVar[str] = "dissimilarity"
    models: ClassVar[Mapping[str, str]] = NONE

    testsets: Mapping[str, TestSet]

    def as_params(self) -> dict:
        return dict(kind=self.kind, testsets=_testsets(self.testsets))


@dataclass(frozen=True)
class ProfileSpec(EvaluationSpec):
    """OH vs BN timed over the grid ds x ks: n points, batch tasks, warmup then reps repetitions.
    No trained models, no test sets (random tasks)."""

    kind: ClassVar[str] = "profile"
    models: ClassVar[Mapping[str, str]] = NONE
    testsets: ClassVar[Mapping[str, TestSet]] = NONE

    ds: tuple[int, ...]
    ks: tuple[int, ...]
    n: int
    batch: int
    warmup: int
    reps: int

    def as_params(self) -> dict:
        return dict(kind=self.kind, ds=list(self.ds), ks=list(self.ks), n=self.n, batch=self.batch,
                    warmup=self.warmup, reps=self.reps)


KINDS = {cls.kind: cls for cls in (MultistepSpec, LandscapeSpec, DissimilaritySpec, ProfileSpec)}

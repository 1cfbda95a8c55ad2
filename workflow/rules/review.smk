# Artifact checking for paper review (src/icl_kmeans/review).
#   manifest  results/manifest.{parquet,tsv,json}: every artifact under results/ with its sha256 and the
#             provenance its job recorded (results/provenance/); after every target (rule all asks for it)
#   review    verifies every artifact against the manifest, rebuilds the figures and Table 1 from the
#             aggregated tables, checks the paper's claims, writes results/review/report.html.
#             No inputs and no outputs: it can never trigger training or evaluation, and it runs every
#             time it is asked for. Fails on any integrity problem, not on a claim that does not hold.
#   bundle    results/bundle.tar.gz: the verified results with the manifest, config and environment pins
import glob

REVIEW_CODE = [
    os.path.relpath(REPO / f"src/icl_kmeans/{m}.py")
    for m in ("review/manifest", "pipeline/provenance")
]
# The claims' rules: a changed rule decides the claims again, as a changed plotter redraws its figure.
CLAIMS_CODE = sorted(
    os.path.relpath(p)
    for p in (REPO / "src/icl_kmeans/review").glob("*.py")
    if p.name.startswith("claim") or p.name in ("trained.py", "verdict_history.py")
)
ENV_PINS = [os.path.relpath(REPO / "pyproject.toml")] + sorted(
    os.path.relpath(p) for p in glob.glob(str(REPO / "envs" / "*.yaml"))
)
# Ids of what the current settings produce (the manifest marks files of other configurations).
MANIFEST_KNOWN = dict(
    runs=sorted(STUDIES.runs),
    dists=sorted(DISTS),
    testsets=sorted(TESTSETS),
    figs=sorted(set(_studies.TARGETS) | set(_figure_registry.PART_IDS)),
)


# The claims table of Snakemake's report (`snakemake --report report.html`), from the figures' tables.
rule claims:
    input:
        tables=[TABLE.format(fig=f) for f in STUDIES.targets()],
        code=CLAIMS_CODE,
    output:
        report(
            "results/review/claims.csv",
            caption="../report/claims.rst",
            category="Claims",
        ),
    log:
        f"{LOGS}/review/claims.log",
    conda:
        ANALYSIS_ENV
    params:
        results=lambda wildcards, output: os.path.dirname(os.path.dirname(output[0])),
        settings=lambda wildcards: SETTINGS,
    script:
        "../scripts/claims.py"


rule manifest:
    input:
        targets=ALL_TARGET_FILES,
        code=REVIEW_CODE,
    output:
        parquet="results/manifest.parquet",
        tsv="results/manifest.tsv",
        meta="results/manifest.json",
    log:
        f"{LOGS}/review/manifest.log",
    conda:
        ANALYSIS_ENV
    params:
        results=lambda wildcards, output: os.path.dirname(output.parquet),
        settings=lambda wildcards: SETTINGS,
        targets=lambda wildcards: ALL_TARGET_FILES,
        known=lambda wildcards: MANIFEST_KNOWN,
    script:
        "../scripts/manifest.py"


rule review:
    log:
        f"{LOGS}/review/review.log",
    conda:
        ANALYSIS_ENV
    # Snakemake caps a job's threads at --cores; workflow.cores itself is unset under --report
    threads: 64
    params:
        results="results",
        out="results/review",
    script:
        "../scripts/review.py"


rule bundle:
    input:
        manifest=rules.manifest.output,
        config=os.path.relpath(REPO / "config.yaml"),
        preset=os.path.relpath(_settings.preset_file(SETTINGS["preset"])),
        pins=ENV_PINS,
    output:
        "results/bundle.tar.gz",
    log:
        f"{LOGS}/review/bundle.log",
    conda:
        ANALYSIS_ENV
    params:
        results=lambda wildcards, output: os.path.dirname(output[0]),
        settings=lambda wildcards: SETTINGS,
    script:
        "../scripts/bundle.py"

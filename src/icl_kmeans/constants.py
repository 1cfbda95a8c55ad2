"""Names shared by the model code and the torch-free pipeline (studies, figures), defined once.

No imports: Snakemake reads these while it parses the workflow.
"""

FAMILIES = ("normal", "cauchy", "gumbel", "laplace", "lognormal")  # task families (SPEC 8), in the paper's order
EMBEDDINGS = ("OH", "BN", "NA")  # token embeddings (SPEC 2)
REGULARIZERS = ("NE", "L2")  # smoothed losses (SPEC 6)

"""Names shared by the model code and the torch-free pipeline (studies, figures), defined once.

No imports: Snakemake reads these while it parses the workflow.
"""

FAMILIES = ("normal", "cauchy", "gumbel", "laplace", "lognormal")  # task families (science.md §8), in the paper's order
EMBEDDINGS = ("OH", "BN", "NA")  # token embeddings (science.md §2)
REGULARIZERS = ("NE", "L2")  # smoothed losses (science.md §6)

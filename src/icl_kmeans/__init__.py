"""icl_kmeans: transformers that learn k-means clustering in context (Park et al., 2026).

Public API (imported lazily, so that plotting code does not pay for torch):
    sample_tasks, TaskBatch, FAMILIES
    ClusterTransformer, lloyd_transformer
    lloyd, em
    kmeans_objective, smoothed_kmeans_loss, sparsemax, misclustering_rate
    TrainConfig, train, load_checkpoint, train_stack, TrainResult
"""

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "sample_tasks": "tasks", "TaskBatch": "tasks", "FAMILIES": "constants",
    "ClusterTransformer": "model", "lloyd_transformer": "model",
    "embed": "embeddings", "binary_codes": "embeddings", "embedding_width": "embeddings",
    "lloyd": "baselines", "em": "baselines",
    "kmeans_objective": "losses", "smoothed_kmeans_loss": "losses", "sparsemax": "losses",
    "misclustering_rate": "losses",
    "TrainConfig": "run_config", "train": "training", "load_checkpoint": "checkpoint", "TrainResult": "training",
    "train_stack": "training",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'icl_kmeans' has no attribute {name!r}")

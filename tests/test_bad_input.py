"""Bad input raises ValueError naming the argument (and never yields a silent NaN)."""

import math

import pytest
import torch

from icl_kmeans import (ClusterTransformer, TrainConfig, em, embedding_width, kmeans_objective, lloyd,
                        lloyd_transformer, misclustering_rate, sample_tasks, smoothed_kmeans_loss, train)

pytestmark = pytest.mark.usefixtures("single_thread")

X = torch.rand(2, 10, 3)
C = X[:, :4].clone()
NAN_X = X.clone()
NAN_X[1, 3, 0] = math.nan
INF_C = C.clone()
INF_C[0, 0, 2] = math.inf
MODEL = ClusterTransformer(3, 4, "OH")

# (label, callable, word that the message must contain)
CASES = [
    # shapes
    ("X 1-D", lambda: kmeans_objective(X[0, 0], C[0]), "X"),
    ("X 4-D", lambda: kmeans_objective(X[None], C[None]), "X"),
    ("C 1-D", lambda: lloyd(X[0], C[0, 0], 1), "C"),
    ("batched X, unbatched C", lambda: lloyd(X, C[0], 1), "C"),
    ("batch sizes", lambda: em(X, C[:1], 1), "batch"),
    ("d mismatch", lambda: smoothed_kmeans_loss(X, C[..., :2], 0.1), "d="),
    ("integer X", lambda: kmeans_objective(X.long(), C), "X"),
    ("X not a tensor", lambda: kmeans_objective(X.tolist(), C), "X"),
    ("model d", lambda: MODEL(X[..., :2], C[..., :2]), "d="),
    ("model k", lambda: MODEL(X, C[:, :3]), "k="),
    ("labels shape", lambda: misclustering_rate(torch.zeros(2, 9, dtype=torch.long), X, C), "labels"),
    # k < 2, n < k
    ("k=1 objective", lambda: kmeans_objective(X, C[:, :1]), "k="),
    ("k=1 lloyd", lambda: lloyd(X, C[:, :1], 1), "k="),
    ("k=1 sample", lambda: sample_tasks(1, 10, 2, 1, seed=0), "k="),
    ("k=1 model", lambda: ClusterTransformer(3, 1), "k="),
    ("k=1 width", lambda: embedding_width(3, 1, "BN"), "k="),
    ("n<k loss", lambda: smoothed_kmeans_loss(X[:, :3], C, 0.1), "n="),
    ("n<k sample", lambda: sample_tasks(1, 3, 2, 4, seed=0), "n="),
    ("n<k model", lambda: MODEL(X[:, :3], C), "n="),
    ("n<k em", lambda: em(X[:, :3], C, 1), "n="),
    # non-finite points
    ("NaN X objective", lambda: kmeans_objective(NAN_X, C), "X"),
    ("NaN X loss", lambda: smoothed_kmeans_loss(NAN_X, C, 0.1), "X"),
    ("NaN X model", lambda: MODEL(NAN_X, C), "X"),
    ("NaN X cluster", lambda: MODEL.cluster(NAN_X, C, 2), "X"),
    ("NaN X lloyd", lambda: lloyd(NAN_X, C, 1), "X"),
    ("NaN X em", lambda: em(NAN_X, C, 1), "X"),
    ("inf C lloyd", lambda: lloyd(X, INF_C, 1), "C"),
    ("inf C model", lambda: MODEL(X, INF_C), "C"),
    ("NaN X misclustering", lambda: misclustering_rate(torch.zeros(2, 10, dtype=torch.long), NAN_X, C), "X"),
    # unknown names
    ("family", lambda: sample_tasks(1, 10, 2, 2, family="uniform", seed=0), "family"),
    ("embedding model", lambda: ClusterTransformer(3, 4, "onehot"), "embedding"),
    ("embedding width", lambda: embedding_width(3, 4, "XX"), "embedding"),
    ("embedding lloyd_transformer", lambda: lloyd_transformer(3, 4, "XX"), "embedding"),
    ("NA lloyd_transformer", lambda: lloyd_transformer(3, 4, "NA"), "embedding"),
    ("regularizer", lambda: smoothed_kmeans_loss(X, C, 0.1, "L1"), "regularizer"),
    ("mode", lambda: MODEL.cluster(X, C, 2, mode="recurrent"), "mode"),
    ("empty policy", lambda: lloyd(X, C, 1, empty="drop"), "empty"),
    ("reseed without generator", lambda: lloyd(X, C, 1, empty="reseed"), "generator"),
    # tau and other numbers
    ("tau 0", lambda: smoothed_kmeans_loss(X, C, 0.0), "tau"),
    ("tau < 0", lambda: smoothed_kmeans_loss(X, C, -0.1), "tau"),
    ("tau NaN", lambda: smoothed_kmeans_loss(X, C, math.nan), "tau"),
    ("tau inf", lambda: smoothed_kmeans_loss(X, C, math.inf), "tau"),
    ("tau str", lambda: smoothed_kmeans_loss(X, C, "big"), "tau"),
    ("steps 0 lloyd", lambda: lloyd(X, C, 0), "steps"),
    ("steps 0 em", lambda: em(X, C, 0), "steps"),
    ("steps 0 cluster", lambda: MODEL.cluster(X, C, 0), "steps"),
    ("steps float", lambda: MODEL.cluster(X, C, 2.0), "steps"),
    ("gamma 0", lambda: ClusterTransformer(3, 4, gamma=0.0), "gamma"),
    ("gamma NaN", lambda: ClusterTransformer(3, 4, gamma=math.nan), "gamma"),
    ("dropout 1", lambda: ClusterTransformer(3, 4, dropout=1.0), "dropout"),
    ("d 0 model", lambda: ClusterTransformer(0, 4), "d="),
    ("scale 0", lambda: sample_tasks(1, 10, 2, 2, scale=0.0, seed=0), "scale"),
    ("scale NaN", lambda: sample_tasks(1, 10, 2, 2, scale=math.nan, seed=0), "scale"),
    ("batch 0", lambda: sample_tasks(0, 10, 2, 2, seed=0), "batch"),
    ("d 0 sample", lambda: sample_tasks(1, 10, 0, 2, seed=0), "d="),
    ("no seed", lambda: sample_tasks(1, 10, 2, 2), "seed"),
    ("seed and generator", lambda: sample_tasks(1, 10, 2, 2, seed=1, generator=torch.Generator()), "seed"),
    ("negative seed", lambda: sample_tasks(1, 10, 2, 2, seed=-1), "seed"),
]

BAD_CONFIG = [
    ("d", 0), ("d", 2.5), ("d", True), ("k", 1), ("n", 3), ("batch", 0), ("steps", 0), ("steps", 10.0),
    ("seed", -1), ("eval_every", 0), ("val_batches", 0), ("embedding", "oh"), ("regularizer", "KL"),
    ("family", "student"), ("tau", 0.0), ("tau", -1.0), ("tau", math.inf), ("lr", 0.0), ("lr", -0.01),
    ("lr", math.nan), ("scale", 0.0), ("gamma", 0.0), ("clip_grad", 0.0), ("clip_grad", -1.0),
    ("dropout", 1.0), ("dropout", -0.1), ("isotropic", "no"), ("equal_weights", 0), ("plateau", None),
    ("bias", "yes"),
]


@pytest.mark.parametrize("label,call,word", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_value_error_naming_the_argument(label, call, word):
    with pytest.raises(ValueError) as info:
        call()
    assert word in str(info.value), f"{label}: message {str(info.value)!r} does not name {word!r}"


@pytest.mark.parametrize("name,value", BAD_CONFIG, ids=[f"{n}={v!r}" for n, v in BAD_CONFIG])
def test_bad_train_config_value(name, value):
    kwargs = dict(d=2, k=4, n=5) if name == "n" else {}
    kwargs[name] = value
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        TrainConfig(**kwargs)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        train({**TrainConfig(steps=1).to_dict(), **kwargs})  # train() checks before doing anything


def test_unknown_config_keys():
    with pytest.raises(ValueError, match="learning_rate") as info:
        TrainConfig.from_dict({"d": 2, "learning_rate": 0.1})
    assert "allowed" in str(info.value)
    with pytest.raises(ValueError, match="learning_rate"):
        train({"d": 2, "learning_rate": 0.1})


def test_bad_train_arguments(tmp_path):
    config = TrainConfig(d=2, k=3, n=8, batch=2, steps=1, val_batches=1)
    with pytest.raises(ValueError, match="max_steps"):
        train(config, checkpoint=tmp_path / "c.pt", max_steps=-1)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device"):
            train(config, device="cuda")


def test_messages_name_value_and_allowed():
    with pytest.raises(ValueError) as info:
        smoothed_kmeans_loss(X, C, 0.1, "L1")
    assert "'L1'" in str(info.value) and "'NE'" in str(info.value) and "'L2'" in str(info.value)
    with pytest.raises(ValueError) as info:
        sample_tasks(1, 10, 2, 2, family="uniform", seed=0)
    assert "'uniform'" in str(info.value) and "'cauchy'" in str(info.value)
    with pytest.raises(ValueError) as info:
        smoothed_kmeans_loss(X, C, -0.5)
    assert "-0.5" in str(info.value) and "> 0" in str(info.value)

"""Command line: `python -m icl_kmeans {train,bench} --help`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys


def _train_parser(sub) -> None:
    from .run_config import TrainConfig

    p = sub.add_parser("train", help="train one model (science.md §7) and print its relative validation loss",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type in (bool, "bool"):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=f.name)
        elif f.name == "clip_grad":
            p.add_argument(flag, type=float, default=None, help="gradient-norm clipping (default: none)")
        else:
            typ = {"int": int, "float": float, "str": str}.get(str(f.type), type(f.default))
            p.add_argument(flag, type=typ, default=f.default, help=f.name)
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    p.add_argument("--checkpoint", default=None, help="checkpoint file: written as training goes, resumed if present")
    p.add_argument("--metrics", default=None, help="write the per-step metrics here (.parquet or .csv)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")


def _train(args) -> int:
    import torch

    from .run_config import TrainConfig
    from .training import train

    if args.threads:
        torch.set_num_threads(args.threads)
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    try:
        config = TrainConfig(**{k: v for k, v in vars(args).items() if k in fields})
        result = train(config, checkpoint=args.checkpoint, device=args.device, progress=True)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    m = result.metrics
    if args.metrics:
        (m.to_parquet if args.metrics.endswith(".parquet") else m.to_csv)(args.metrics, index=False)
    val = m.dropna(subset=["rel_val_loss"])
    print(val[["step", "train_loss", "rel_val_loss"]].to_string(index=False))
    final = val["rel_val_loss"].iloc[-1]
    print(json.dumps({"status": result.status, "steps": result.steps_done, "diverged_step": result.diverged_step,
                      "final_relative_validation_loss": round(float(final), 4), "device": result.device,
                      "wall_time_s": round(result.wall_time, 2)}))
    return 0 if result.status == "ok" else 3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icl_kmeans", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _train_parser(sub)
    sub.add_parser("bench", help="benchmark training step time and attention memory", add_help=False)
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "bench":
        from .benchmark.bench import main as bench_main

        return bench_main(argv[1:]) or 0
    args = parser.parse_args(argv)
    return _train(args)


if __name__ == "__main__":
    sys.exit(main())

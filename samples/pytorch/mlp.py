"""A PyTorch MLP through weir: exported to MLIR, compiled to native code, run on every core and
compared with PyTorch eager. Usage: python mlp.py [OUT_DIR] (the exported MLIR is written there).
"""

from __future__ import annotations

import sys
from pathlib import Path

import warnings

import torch

import weir.frontends.torch as wt


def main() -> None:
    # A deprecation inside torch.export itself, not in this program.
    warnings.filterwarnings("ignore", category=FutureWarning)
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    model.eval()
    x = torch.randn(2, 8)

    mlir = wt.export(model, x)
    print(f"export: {len(mlir.splitlines())} lines of linalg-on-tensors MLIR, function @main")
    with wt.compile(model, x, keep_mlir=out / "mlp.mlir") as mlp, torch.no_grad():
        y = mlp(x)
        diff = (y - model(x)).abs().max().item()
        print(f"compile (llvm-cpu, local-task): y{list(y.shape)} max |weir - eager| = {diff:.1e}")
        assert diff < 1e-5
    fast = torch.compile(model, backend="weir")
    diff = (fast(x) - model(x)).abs().max().item()
    print(f"torch.compile(backend='weir'): max |weir - eager| = {diff:.1e}")
    assert diff < 1e-5


if __name__ == "__main__":
    main()

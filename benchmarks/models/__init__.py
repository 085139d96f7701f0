"""The model zoo: PyTorch models with seeded random weights through weir.frontends.torch,
tested against eager (tests/models/) and benchmarked against eager, torch.compile's inductor and
IREE (`python -m benchmarks.models`). The list is registry.MODELS."""

"""Ways in from ML frameworks: each frontend turns a framework's model into MLIR that weir's
compiler takes, and hands back callables that speak the framework's tensors. Frontends sit above
the compiler and the runtime (which never import them or the frameworks); each needs its
framework installed as an optional extra (`pip install weir[torch]`, `weir[onnx]`)."""

# lit configuration for weir: compiler passes (weir-opt), phases (weir-compile --compile-to),
# tools and samples. The venv's bin directory must be on PATH (the Makefile sets it).
import os

import lit.formats

config.name = "weir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
repo_root = os.path.dirname(config.test_source_root)
config.environment["PATH"] = os.environ["PATH"]
# A checkout that runs the tools of another checkout's venv names itself on PYTHONPATH.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
config.substitutions.append(("%samples", os.path.join(repo_root, "samples")))
config.substitutions.append(("%python", os.path.join(repo_root, ".venv", "bin", "python")))

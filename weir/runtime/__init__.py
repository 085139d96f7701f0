"""The weir runtime: VM, HAL, executable loaders and built-in modules. Start at `api.py`."""

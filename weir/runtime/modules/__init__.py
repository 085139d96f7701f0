"""Built-in native modules: `hal` (linked into every context first)."""

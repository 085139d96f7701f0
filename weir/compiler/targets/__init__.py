"""Code generation targets, behind one small interface and a typed registry."""

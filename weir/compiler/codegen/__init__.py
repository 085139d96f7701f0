"""Code generation's shared layer: one outlined dispatch function (linalg on tensors) becomes the
kernel description of weir/format/kernel_description.py, the one form every target lowers from.
The reference target stores it as its payload and the runtime interprets it; llvm-cpu lowers it
to LLVM IR; a GPU target would start from it too. Nothing here is target specific."""

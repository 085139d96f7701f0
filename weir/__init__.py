"""weir: IREE's execution model in hackable Python."""

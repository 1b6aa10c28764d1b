"""CLI verb modules of the core."""

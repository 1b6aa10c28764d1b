"""Reusable widgets of the workbench."""

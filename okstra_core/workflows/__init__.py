"""Workflows: the validated writes built on the write primitives."""

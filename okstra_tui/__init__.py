"""okstra workbench: a Textual app over :mod:`okstra_core`."""

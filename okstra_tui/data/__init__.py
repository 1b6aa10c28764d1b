"""What the views show, read through okstra_core's read side, one module per view's concept.

Everything here reads through :mod:`okstra_core` (the read side and the safe
loaders); nothing parses a file itself. Functions return plain values or a
``LoadError`` so a view can show an inline error instead of failing. Most of it
runs in workers, off the UI thread.
"""

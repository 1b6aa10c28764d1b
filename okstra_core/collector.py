"""The cyclic garbage collector kept out of bulk building.

Reading a large kept value (a fact's recorded paths, a catalog's rows, a
whole inbox) allocates hundreds of thousands of containers, none of them
cyclic. Each allocation past the collector's threshold sets off a collection
that walks everything built so far, again and again: at 10,000 tasks about a
seventh of a warm ``okstra inbox``. :func:`paused` keeps the collector out for
the block; what the block left as garbage is collected afterwards as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic collection while the block runs (nested blocks leave it to the outermost).

    With *freeze*, what exists when the block ends is moved out of the collector's later full passes
    (``gc.freeze()``): for long-lived objects built in the block, which a later collection would otherwise
    walk once more. Whoever freezes undoes it when those objects are dropped (``gc.unfreeze()``).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze:
                gc.freeze()
            gc.enable()

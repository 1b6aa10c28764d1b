"""The keys that move the cursor of every list, table and tree of the workbench: one set, the same in every view.

A person who learned ``j``/``k`` or Home/End in one view finds them in the
next. Each list widget of the workbench takes :func:`with_list_keys` as its
bindings and names the actions below (``cursor_up``, ``cursor_down``,
``page_up``, ``page_down``, ``first``, ``last``).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding, BindingType

#: Every list's moves: the keys a person types, the action each list widget implements.
LIST_BINDINGS: tuple[Binding, ...] = (
    Binding("up,k", "cursor_up", "Up", show=False),
    Binding("down,j", "cursor_down", "Down", show=False),
    Binding("pageup", "page_up", "Page up", show=False),
    Binding("pagedown", "page_down", "Page down", show=False),
    Binding("home,ctrl+home", "first", "First row", show=False),
    Binding("end,ctrl+end", "last", "Last row", show=False),
)

#: The keys :data:`LIST_BINDINGS` takes.
LIST_KEYS = frozenset(key.strip() for b in LIST_BINDINGS for key in b.key.split(","))


def with_list_keys(own: Iterable[BindingType] = ()) -> list[BindingType]:
    """*own* bindings (a widget's other keys) without any of the list keys, then the list keys.

    For a widget declared with ``inherit_bindings=False``: a base class's
    binding of a list key (``DataTable`` scrolls sideways on Home) cannot win
    over the shared one.
    """
    kept = [b for b in own if not (isinstance(b, Binding) and set(b.key.split(",")) & LIST_KEYS)]
    return [*kept, *LIST_BINDINGS]

"""What the workbench says and disables when it runs read-only (``--read-only``, ``OKSTRA_READ_ONLY``).

The guard itself is the core's (:func:`okstra_core.read_only.read_only`, which
:mod:`okstra_core.writes` re-exports): every store write primitive refuses under
it; reading it here does not import the writers with the first frame. The workbench only reads it, to say so
up front: the badge on every view's top line, the wizard's write step, and the
keys and palette entries that would write, shown disabled with this reason.
"""

from __future__ import annotations

from rich.text import Text

from okstra_core.read_only import read_only

#: Why a writing key, palette entry or wizard step is disabled.
REASON = "read-only: this workbench writes nothing"

#: Actions that may change the store: shown disabled under the guard.
WRITING_ACTIONS = frozenset({"editor"})

#: The wizard's write step under the guard.
WIZARD_LINE = "read-only: nothing will be written. The review above shows exactly the bytes a write would make."

__all__ = ["REASON", "WIZARD_LINE", "WRITING_ACTIONS", "badge", "disabled", "read_only"]


def disabled(action: str) -> bool:
    """Whether *action* is disabled because the workbench is read-only."""
    return action in WRITING_ACTIONS and read_only()


def badge() -> Text:
    """The read-only badge (empty text when writes are possible)."""
    text = Text()
    if read_only():
        text.append(" READ-ONLY ", style="bold reverse yellow")  # a span: text appended after it is not styled so
    return text

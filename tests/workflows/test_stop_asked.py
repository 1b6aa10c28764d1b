"""A watching verb's SIGINT and SIGTERM: the first is only noted, so that the loop ends at its next wait, never
part-way through what the main thread was doing; a second one ends it at once."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from okstra_core.commands.common import StopAsked, Stopped


@pytest.mark.parametrize("sig", StopAsked.SIGNALS)
def test_the_first_signal_is_noted_and_raises_nothing(sig: int) -> None:
    lock = threading.Lock()
    with StopAsked() as stop:
        with lock:  # the handler runs where the main thread is: here, holding a lock another thread may wait on
            os.kill(os.getpid(), sig)
            for _ in range(1000):  # the handler runs between two bytecodes of the main thread
                if stop.asked:
                    break
            held = lock.locked()
        assert stop.asked and held
    assert not lock.locked()


@pytest.mark.parametrize("sig", StopAsked.SIGNALS)
def test_a_second_signal_ends_at_once(sig: int) -> None:
    with StopAsked() as stop, pytest.raises(Stopped):
        os.kill(os.getpid(), sig)
        while not stop.asked:
            pass
        os.kill(os.getpid(), sig)
        for _ in range(1_000_000):
            pass


def test_the_handlers_before_are_put_back_and_closing_ignores_signals() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with StopAsked() as stop:
        stop.closing()
        os.kill(os.getpid(), signal.SIGTERM)  # ignored: a signal while the watchers close ends nothing part-way
        assert not stop.asked
    assert signal.getsignal(signal.SIGTERM) is before

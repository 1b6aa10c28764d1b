"""Property: no write lands outside its authorised root, whatever relative path, '..', absolute
path or symlink it is handed."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okstra_core import writes
from okstra_core.errors import OkstraError

SEGMENTS = st.sampled_from(["a", "b", "..", ".", "in-link", "out-link", "out-file", "loop", "dangling", "c.json"])
PREFIXES = st.sampled_from(["", "ROOT/", "OUTSIDE/", "/", "/tmp/"])
OPS = st.sampled_from(["create", "append", "replace", "dir", "move"])


def _tree(base: Path) -> tuple[Path, Path]:
    root, outside = base / "root", base / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim.json").write_text("{}\n")
    (root / "in-link").symlink_to(root / "a")
    (root / "out-link").symlink_to(outside)
    (root / "out-file").symlink_to(outside / "victim.json")
    (root / "loop").symlink_to(root / "loop")
    (root / "dangling").symlink_to(outside / "nowhere")
    (root / "a" / "src.txt").write_text("move me\n")
    return root, outside


def _state(folder: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirs, files in os.walk(folder):
        for name in dirs + files:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                out[full] = "link:" + os.readlink(full)
            elif os.path.isdir(full):
                out[full] = "dir"
            else:
                with open(full, "rb") as fh:
                    out[full] = fh.read()
    return out


def _footprint(landing: str) -> dict[str, bytes | str | None]:
    """What a write landing at *landing* could leave behind, and only that (``/tmp`` may change meanwhile).

    The first component of *landing* that does not exist yet (or *landing* itself, when it does), the
    lock folder beside it and that name's temp files.
    """
    path = landing
    while not os.path.lexists(os.path.dirname(path)):
        path = os.path.dirname(path)
    parent, name = os.path.split(path)
    locks = os.path.join(parent, ".locks")
    names = [path, locks]
    with contextlib.suppress(OSError):
        names += [os.path.join(parent, n) for n in os.listdir(parent) if n.startswith(f".okstra-tmp-{name}.")]
    out: dict[str, bytes | str | None] = {}
    for entry in names:
        if os.path.islink(entry):
            out[entry] = "link:" + os.readlink(entry)
        elif os.path.isdir(entry):
            out[entry] = "dir:" + ",".join(sorted(os.listdir(entry))) if entry == locks else "dir"
        elif os.path.isfile(entry):
            with open(entry, "rb") as fh:
                out[entry] = fh.read()
        else:
            out[entry] = None
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=PREFIXES, parts=st.lists(SEGMENTS, min_size=1, max_size=5), op=OPS)
def test_no_write_escapes_its_root(prefix: str, parts: list[str], op: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root, outside = _tree(base)
        before_outside = _state(outside)
        text = prefix.replace("ROOT/", f"{root}/").replace("OUTSIDE/", f"{outside}/") + "/".join(parts)
        target = Path(text)
        real_root = os.path.realpath(root)
        written = target if target.is_absolute() else root / target
        before_target = _footprint(os.path.realpath(written))
        try:
            if op == "create":
                writes.create_only(root, target, b"x\n")
            elif op == "append":
                writes.append_jsonl(root, target, {"k": 1})
            elif op == "replace":
                writes.replace_locked(root, target, lambda _cur: b"{}\n")
            elif op == "dir":
                writes.ensure_dir(root, target if target.is_absolute() else root / target)
            else:
                writes.move_no_overwrite(root, root / "a" / "src.txt", target)
            landed = os.path.realpath(written)
            assert landed.startswith(real_root + os.sep) or (op == "dir" and landed == real_root), (
                f"{text} landed at {landed}"
            )
        except OkstraError:
            # Refused (escape, symlink, not a file, ...): a clear error, and nothing written first, anywhere
            # (a write outside the two folders compared below, then a raise, would otherwise pass unseen).
            assert _footprint(os.path.realpath(written)) == before_target, f"{op} {text!r} wrote, then refused"
        assert _state(outside) == before_outside, f"{op} {text!r} changed a folder outside the root"
        for name in os.listdir(base):
            assert name in ("root", "outside"), f"{op} {text!r} wrote {name} beside the root"

"""Agent invocations outside task runs: ``.okstra/agent-invocations/<purpose>/<id>.*``."""

from __future__ import annotations

from pathlib import Path

from ... import layout
from ...digests import sha256_bytes, sha256_json
from ...models.invocation import CompletionMarker, InvocationMeta, ResultEnvelope
from ..catalog import (
    COMPLETION_DIGEST,
    CROSS_INVOCATION_LINK,
    ENVELOPE_UNBOUND,
    INCOMPLETE_INVOCATION,
    NON_CANONICAL_SLUG,
    UNNAMED_ENTRY,
)
from ..unit import Entry, Unit

#: Suffix -> part, in publication order.
PARTS: dict[str, str] = {
    layout.INVOCATION_INSTRUCTIONS_SUFFIX: "instructions",
    layout.INVOCATION_PROMPT_SUFFIX: "prompt",
    layout.INVOCATION_META_SUFFIX: "meta",
    layout.INVOCATION_RESULT_SUFFIX: "result",
    layout.INVOCATION_COMPLETION_SUFFIX: "completion",
}
ORDER = tuple(PARTS.values())
_EXTRA = (".tmp", ".prompt.log")


def check_invocations(unit: Unit, base: Path) -> None:
    """Every purpose folder and every invocation in it."""
    for purpose in unit.entries(base):
        if purpose.kind != "dir":
            if purpose.kind == "file":
                unit.report(UNNAMED_ENTRY, purpose.path, "not part of the store's contract; not read")
            continue
        if not layout.is_canonical_slug(purpose.name):
            unit.report(NON_CANONICAL_SLUG, purpose.path, layout.not_a_slug("purpose folder", purpose.name))
        groups: dict[str, dict[str, Entry]] = {}
        for e in unit.entries(purpose.path):
            inv_id, _dot, _ = e.name.partition(".")
            suffix = e.name[len(inv_id) :]
            part = PARTS.get(suffix)
            if part is None:
                if suffix not in _EXTRA and e.kind != "bad":
                    unit.report(UNNAMED_ENTRY, e.path, "not a file of the agent-invocation contract; not read")
                continue
            groups.setdefault(inv_id, {})[part] = e
        for inv_id, parts in sorted(groups.items()):
            args = (unit, purpose.path, purpose.name, inv_id, parts)
            unit.guard("invocation", purpose.path / inv_id, _check_one, *args)
            unit.guard("invocation", purpose.path / inv_id, _owner_verdict, *args)


def _check_one(unit: Unit, folder: Path, purpose: str, inv_id: str, parts: dict[str, Entry]) -> None:
    paths = layout.InvocationPaths(folder, inv_id)
    first = next(iter(parts.values())).path
    if not layout.is_canonical_slug(inv_id):
        unit.report(NON_CANONICAL_SLUG, first, layout.not_a_slug("invocation id", inv_id))
    present = [p for p in ORDER if p in parts]
    if present:
        last = ORDER.index(present[-1])
        missing = [p for p in ORDER[:last] if p not in parts]
        if missing:
            unit.report(
                INCOMPLETE_INVOCATION,
                parts[present[-1]].path,
                f"{present[-1]} is published but the invocation has no {', '.join(missing)} file",
            )
    rel = {name: unit.rel(getattr(paths, name)) for name in ORDER}

    def other_invocation(target: str) -> bool:
        return target.startswith(unit.rel(layout.agent_invocations_dir(unit.root)) + "/") and not target.startswith(
            f"{unit.rel(folder)}/{inv_id}."
        )

    if "meta" in parts and parts["meta"].kind == "file":
        meta = unit.doc(paths.meta, InvocationMeta)
        if meta is not None:
            _bind(unit, paths.meta, purpose, inv_id, meta.purpose, meta.invocation_id)
            for label, target, expected, digest, part in (
                (
                    "instructionsPath",
                    meta.instructions_path,
                    rel["instructions"],
                    meta.instructions_sha256,
                    "instructions",
                ),
                ("promptPath", meta.prompt_path, rel["prompt"], meta.prompt_sha256, "prompt"),
            ):
                if target is None:
                    continue  # not recorded: the file is this invocation's by its name
                if target != expected:
                    rule = CROSS_INVOCATION_LINK if other_invocation(target) else ENVELOPE_UNBOUND
                    unit.report(rule, paths.meta, f"{label} {target!r} is not this invocation's {expected!r}")
                elif part in parts and parts[part].kind == "file":
                    data = unit.data(getattr(paths, part))
                    if data is not None and digest is not None and sha256_bytes(data) != digest:
                        unit.report(
                            INCOMPLETE_INVOCATION, paths.meta, f"{part} digest does not match the bytes of {expected}"
                        )
    if "result" in parts and parts["result"].kind == "file":
        env = unit.doc(paths.result, ResultEnvelope)
        if env is not None:
            _bind(unit, paths.result, purpose, inv_id, env.purpose, env.invocation_id)
            if env.prompt_meta_path is not None and env.prompt_meta_path != rel["meta"]:
                rule = CROSS_INVOCATION_LINK if other_invocation(env.prompt_meta_path) else ENVELOPE_UNBOUND
                unit.report(
                    rule,
                    paths.result,
                    f"promptMetaPath {env.prompt_meta_path!r} is not this invocation's {rel['meta']!r}",
                )
    if "completion" in parts and parts["completion"].kind == "file":
        done = unit.doc(paths.completion, CompletionMarker)
        if done is not None:
            _bind(unit, paths.completion, purpose, inv_id, done.purpose, done.invocation_id)
            if done.result_path is not None and done.result_path != rel["result"]:
                rule = CROSS_INVOCATION_LINK if other_invocation(done.result_path) else ENVELOPE_UNBOUND
                unit.report(
                    rule,
                    paths.completion,
                    f"resultPath {done.result_path!r} is not this invocation's {rel['result']!r}",
                )
            elif "result" in parts:
                envelope = unit.json(paths.result)
                recorded = done.envelope_sha256
                if envelope is not None and recorded is not None and (found := sha256_json(envelope)) != recorded:
                    unit.report(
                        COMPLETION_DIGEST,
                        paths.completion,
                        f"envelopeSha256 {recorded} is not the digest of the canonical result envelope ({found})",
                    )


def _bind(unit: Unit, path: Path, purpose: str, inv_id: str, got_purpose: str | None, got_id: str | None) -> None:
    if got_purpose is not None and got_purpose != purpose:
        unit.report(ENVELOPE_UNBOUND, path, f"purpose {got_purpose!r} is not the folder's {purpose!r}")
    if got_id is not None and got_id != inv_id:
        rule = CROSS_INVOCATION_LINK
        unit.report(rule, path, f"invocationId {got_id!r} is not this invocation's {inv_id!r}")


def _owner_verdict(unit: Unit, folder: Path, purpose: str, inv_id: str, parts: dict[str, Entry]) -> None:
    """What :func:`invocation_problems` (the consumers' gate) still objects to once the precise rules ran.

    The precise rules above name the file and the rule; anything the owner finds
    that they did not already report for this invocation is reported as OKS123.
    """
    if "meta" not in parts or parts["meta"].kind != "file" or not layout.is_canonical_slug(inv_id):
        return
    prefix = f"{unit.rel(folder)}/{inv_id}."
    if any(f.path.startswith(prefix) for f in unit.findings):
        return
    from ... import store
    from ...workflows.invocations import invocation_problems

    inv = store.Invocation(store.Project(unit.root), layout.InvocationPaths(folder, inv_id), purpose)
    with unit.owner():
        problems = invocation_problems(inv)
    for problem in problems:
        if "completion marker is missing" in problem:
            continue  # a result awaiting its marker is an in-flight publication, not a broken one
        unit.report(INCOMPLETE_INVOCATION, parts["meta"].path, problem)

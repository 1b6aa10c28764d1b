"""Shared model plumbing: camelCase aliases, strictness, v1/v2 invocation identity."""

from __future__ import annotations

import re
from typing import Annotated, Any, Final, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.alias_generators import to_camel

from .. import times

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
RelPath = Annotated[str, StringConstraints(min_length=1)]
Slug = Annotated[str, StringConstraints(pattern=r"^(?:[a-z0-9]+(?:-[a-z0-9]+)*|u-[0-9a-f]{12})$", max_length=64)]
OptionId = Annotated[str, StringConstraints(pattern=r"^IO-[0-9]{3}$")]
PrepId = Annotated[str, StringConstraints(pattern=r"^PREP-[0-9]{3}$")]
TaskKeyStr = Annotated[str, StringConstraints(pattern=r"^[^:]+:[^:]+:[^:]+$")]


def _real_time(value: str) -> str:
    problem = times.time_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


#: A time field (and a ``runDateTimeSegment``): a real moment, read by :func:`okstra_core.times.parse_time`.
Timestamp = Annotated[str, StringConstraints(min_length=1), AfterValidator(_real_time)]
_SEG = r"(?:[^/\\.][^/\\]*|\.[^/\\.][^/\\]*|\.\.[^/\\]+)"
#: Normalised POSIX text relative to its authority: no leading ``/``, no ``.``/``..``/empty parts, no ``\``.
RelPosixPath = Annotated[str, StringConstraints(pattern=rf"^{_SEG}(?:/{_SEG})*$")]
SeqText = Annotated[str, StringConstraints(pattern=r"^(?:[0-9]{3}|[1-9][0-9]{3,})$")]


_ON_CLASS: dict[tuple[type, str], bool] = {}


def model_attr(value: object, name: str) -> Any:
    """``getattr(value, name, None)``, without the cost of a miss on a pydantic model.

    A name a model lacks goes through pydantic's ``__getattr__`` (the model's,
    then its metaclass's), which raises; the rules ask documents of many kinds
    for fields only some kinds have, so the misses dominated. Fields are read
    from the instance's ``__dict__``, names defined on the class (properties,
    methods) through ``getattr``, and any other name from the keys the document
    added (``extra="allow"``), as pydantic's ``__getattr__`` would.
    """
    if not isinstance(value, BaseModel):
        return getattr(value, name, None)
    own = value.__dict__
    if name in own:
        return own[name]
    key = (type(value), name)
    on_class = _ON_CLASS.get(key)
    if on_class is None:
        on_class = _ON_CLASS[key] = any(name in k.__dict__ for k in type(value).__mro__)
    if on_class:
        return getattr(value, name, None)
    extra = value.__pydantic_extra__
    return extra.get(name) if extra else None


class _ProjectAdded:
    """Field marker: a field this project's writers add that the contract does not name (optional on read)."""

    def __repr__(self) -> str:
        return "ADDED"


#: Put in a field's ``Annotated[...]``: ``published_at: Annotated[Timestamp | None, ADDED] = None``.
#: The model is the one owner of which of its fields the contract names and which this project adds.
ADDED: Final = _ProjectAdded()


#: How many nested models :func:`absent_added` looks into: the rows of a long list past these are not visited.
ABSENT_ROWS_SEEN: Final = 200


def absent_added(doc: BaseModel, limit: int = ABSENT_ROWS_SEEN) -> list[str]:
    """On-disk names of the project-added fields *doc* lacks, nested rows as ``rows[].field``, in field order."""
    found: list[str] = []
    _collect_absent(doc, "", found, limit)
    return list(dict.fromkeys(found))


#: Per model class, each field's (attribute name, on-disk name, whether this project adds it, whether its
#: type can hold a model), in field order.
_FIELD_PLANS: dict[type[BaseModel], tuple[tuple[str, str, bool, bool], ...]] = {}


def _models_in(annotation: Any) -> set[type[BaseModel]] | None:
    """The model classes a validated value of *annotation* can be, or be a list of (None when unsure)."""
    if annotation is Any or annotation is object:
        return None
    if isinstance(annotation, type):
        return {annotation} if issubclass(annotation, BaseModel) else set()
    origin = get_origin(annotation)
    if origin is Literal:
        return set()
    args = get_args(annotation)
    if origin is Annotated:
        args = args[:1]
    if not args:
        return None
    found: set[type[BaseModel]] = set()
    for arg in args:
        inner = _models_in(arg)
        if inner is None:
            return None
        found |= inner
    return found


def _reaches_added(cls: type[BaseModel], seen: set[type[BaseModel]]) -> bool:
    """Whether a document of *cls* can lack a project-added field anywhere inside it (True when unsure)."""
    if cls in seen:
        return False  # a cycle adds nothing the first visit does not find
    seen.add(cls)
    for info in cls.model_fields.values():
        if ADDED in info.metadata:
            return True
        models = _models_in(info.annotation)
        if models is None or any(_reaches_added(m, seen) for m in models):
            return True
    return False


def _field_plan(cls: type[BaseModel]) -> tuple[tuple[str, str, bool, bool], ...]:
    """The fields of *cls* as :func:`absent_added` walks them, worked out once per class (the checker asks per file).

    A field is walked into only when what it can hold can lack a project-added field somewhere.
    """
    plan = _FIELD_PLANS.get(cls)
    if plan is None:
        rows = []
        for name, info in cls.model_fields.items():
            models = _models_in(info.annotation)
            nested = models is None or any(_reaches_added(m, set()) for m in models)
            rows.append((name, info.alias or name, ADDED in info.metadata, nested))
        plan = tuple(rows)
        _FIELD_PLANS[cls] = plan
    return plan


def _collect_absent(doc: BaseModel, prefix: str, found: list[str], budget: int) -> int:
    present = doc.model_fields_set
    for name, alias, added, nested in _field_plan(type(doc)):
        if budget <= 0:
            return budget
        if name not in present:
            if added:
                found.append(prefix + alias)
            continue
        if not nested:
            continue
        key = prefix + alias
        value = getattr(doc, name)
        if isinstance(value, BaseModel):
            budget = _collect_absent(value, key + ".", found, budget - 1)
        elif isinstance(value, list):
            for item in value:
                if budget <= 0:
                    break
                if isinstance(item, BaseModel):
                    budget = _collect_absent(item, key + "[].", found, budget - 1)
    return budget


class Model(BaseModel):
    """Base of every store model: camelCase on disk, unknown keys kept (forward-compatible)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def dump(self) -> dict[str, Any]:
        """The on-disk JSON value: aliases, no unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Strict(Model):
    """A shape the contract spells out (``{phase, status, rationale}``, ``{kind, path}``, ...).

    Its named keys are checked; like every model, extra keys are kept and are
    never an error (DECISIONS 5a: readers are tolerant of what others add).
    """


V2_FIELDS = ("participantRef", "roleExecutionRef", "invocationRef", "attempt", "executionLabel")
_V2_ATTRS = ("participant_ref", "role_execution_ref", "invocation_ref", "attempt", "execution_label")


def _v2_schema(schema: dict[str, Any]) -> None:
    schema["dependentRequired"] = {f: [o for o in V2_FIELDS if o != f] for f in V2_FIELDS}


class IdentityMismatch(ValueError):
    """A document mixes v1 and v2 invocation identity, carries part of it, or disagrees with its schemaVersion.

    A validator raises it so that pydantic's error data (``ctx["error"]``) says which contract rule failed.
    """


class InvocationIdentity(Model):
    """The five stored v2 invocation-identity fields: all present (v2) or none (v1).

    Readers take these as stored; they are never reparsed from ``workerId``.
    """

    model_config = ConfigDict(json_schema_extra=_v2_schema)

    participant_ref: str | None = None
    role_execution_ref: str | None = None
    invocation_ref: str | None = None
    attempt: Annotated[int, Field(ge=1)] | None = None
    execution_label: str | None = None

    @model_validator(mode="after")
    def _whole_v2(self) -> InvocationIdentity:
        present = [alias for alias, attr in zip(V2_FIELDS, _V2_ATTRS, strict=False) if getattr(self, attr) is not None]
        if present and len(present) != len(V2_FIELDS):
            missing = [f for f in V2_FIELDS if f not in present]
            raise IdentityMismatch(f"partial v2 payload: has {', '.join(present)} but not {', '.join(missing)}")
        return self

    @property
    def is_v2(self) -> bool:
        return self.participant_ref is not None


def require_uniform_identity(rows: list[InvocationIdentity], schema_version: str | None, what: str) -> None:
    """Reject a document whose rows mix v1 and v2 identity, or disagree with its schemaVersion (when it has one)."""
    if not rows:
        return
    v2 = [r.is_v2 for r in rows]
    if any(v2) and not all(v2):
        raise IdentityMismatch(f"mixed v1/v2 payload in {what}")
    major = (schema_version or "").split(".", 1)[0]
    if major == "2" and not all(v2):
        raise IdentityMismatch(f"schemaVersion {schema_version} requires v2 identity fields in every {what} row")
    if major == "1" and any(v2):
        raise IdentityMismatch(f"schemaVersion {schema_version} does not allow v2 identity fields in {what}")


def uniform_identity_schema(version_field: str, array_fields: list[str]) -> Any:
    """JSON Schema fragment enforcing :func:`require_uniform_identity` (a document without a version: rows free)."""

    def extra(schema: dict[str, Any]) -> None:
        v2_row = {"required": list(V2_FIELDS)}
        v1_row = {"not": {"anyOf": [{"required": [f]} for f in V2_FIELDS]}}
        schema["allOf"] = [
            {
                "if": {"properties": {version_field: {"pattern": "^2\\."}}, "required": [version_field]},
                "then": {"properties": {f: {"items": v2_row} for f in array_fields}},
            },
            {
                "if": {"properties": {version_field: {"pattern": "^1\\."}}, "required": [version_field]},
                "then": {"properties": {f: {"items": v1_row} for f in array_fields}},
            },
        ]

    return extra


def bare_list_schema(schema: dict[str, Any], item: str) -> None:
    """JSON Schema form of :func:`accept_bare_list`: the object, or the bare array of *item* definitions."""
    obj = {k: schema.pop(k) for k in ("type", "properties", "required", "additionalProperties") if k in schema}
    schema["anyOf"] = [obj, {"type": "array", "items": {"$ref": f"#/$defs/{item}"}}]


def accept_bare_list(key: str) -> Any:
    """A ``mode="before"`` validator body: a document written as a bare JSON array is read as ``{key: [...]}``.

    The contract names list documents (the task catalog, the timeline) without fixing
    their top-level shape; a writer that stores the list itself is read the same way.
    """

    def wrap(value: Any) -> Any:
        return {key: value} if isinstance(value, list) else value

    return wrap


STAMP_RE = re.compile(r"^[0-9]{8}T[0-9]{6,12}Z$")

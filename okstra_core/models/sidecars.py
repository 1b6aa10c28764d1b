"""Header blocks of user-response sidecars and design-prep requests and inputs."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import ADDED, OptionId, PrepId, RelPath, Sha256, TaskKeyStr, Timestamp


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class Header(BaseModel):
    """Kebab-case keys. An unknown key is kept (the checker warns about it: DECISIONS 3)."""

    model_config = ConfigDict(alias_generator=_kebab, populate_by_name=True, extra="allow")

    def unknown_keys(self) -> list[str]:
        """Keys this model does not name, in file order."""
        return list(self.model_extra or {})

    def dump(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class UserResponseHeader(Header):
    """Required: ``source-data-sha256`` (the digest of the exact report bytes the sidecar answers)."""

    kind: Annotated[Literal["user-response"] | None, ADDED] = None
    format_version: Annotated[Literal[1] | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    report: Annotated[RelPath | None, ADDED] = None
    source_data_sha256: Sha256
    mode: Annotated[Literal["comparison", "clarification"] | None, ADDED] = None
    selected_option: OptionId | None = None


class DesignPrepRequestHeader(Header):
    """Every key is this project's spelling: checked when present."""

    kind: Annotated[Literal["design-prep-request"] | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    report: Annotated[RelPath | None, ADDED] = None
    prep_id: Annotated[PrepId | None, ADDED] = None
    item_status: Annotated[Literal["provisional", "blocked"] | None, ADDED] = None
    assessment_fingerprint: Annotated[Sha256 | None, ADDED] = None
    report_language: Annotated[str | None, ADDED] = None
    template_version: Annotated[Annotated[int, Field(ge=1)] | None, ADDED] = None


class DesignPrepInputHeader(Header):
    """Every key is this project's spelling: checked when present (the file name carries item and revision)."""

    kind: Annotated[Literal["design-prep-input"] | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    report: Annotated[RelPath | None, ADDED] = None
    prep_id: Annotated[PrepId | None, ADDED] = None
    revision: Annotated[Annotated[int, Field(ge=1)] | None, ADDED] = None
    assessment_fingerprint: Annotated[Sha256 | None, ADDED] = None
    confirmed_at: Annotated[Timestamp | None, ADDED] = None
    confirmed_by: Annotated[str | None, ADDED] = None

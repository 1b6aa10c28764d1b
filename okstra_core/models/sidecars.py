"""Header blocks of user-response sidecars and design-prep requests and inputs."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import OptionId, PrepId, RelPath, Sha256, TaskKeyStr, Timestamp


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

    kind: Literal["user-response"] | None = None
    format_version: Literal[1] | None = None
    task_key: TaskKeyStr | None = None
    task_type: str | None = None
    report: RelPath | None = None
    source_data_sha256: Sha256
    mode: Literal["comparison", "clarification"] | None = None
    selected_option: OptionId | None = None


class DesignPrepRequestHeader(Header):
    """Every key is this project's spelling: checked when present."""

    kind: Literal["design-prep-request"] | None = None
    task_key: TaskKeyStr | None = None
    report: RelPath | None = None
    prep_id: PrepId | None = None
    item_status: Literal["provisional", "blocked"] | None = None
    assessment_fingerprint: Sha256 | None = None
    report_language: str | None = None
    template_version: Annotated[int, Field(ge=1)] | None = None


class DesignPrepInputHeader(Header):
    """Every key is this project's spelling: checked when present (the file name carries item and revision)."""

    kind: Literal["design-prep-input"] | None = None
    task_key: TaskKeyStr | None = None
    report: RelPath | None = None
    prep_id: PrepId | None = None
    revision: Annotated[int, Field(ge=1)] | None = None
    assessment_fingerprint: Sha256 | None = None
    confirmed_at: Timestamp | None = None
    confirmed_by: str | None = None

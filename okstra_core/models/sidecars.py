"""Header blocks of user-response sidecars and design-prep requests and inputs."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import OptionId, PrepId, RelPath, Sha256, TaskKeyStr, Timestamp


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class Header(BaseModel):
    """Kebab-case keys; unknown keys are errors."""

    model_config = ConfigDict(alias_generator=_kebab, populate_by_name=True, extra="forbid")

    def dump(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class UserResponseHeader(Header):
    kind: Literal["user-response"]
    format_version: Literal[1] = 1
    task_key: TaskKeyStr
    task_type: str
    report: RelPath
    source_data_sha256: Sha256
    mode: Literal["comparison", "clarification"]
    selected_option: OptionId | None = None


class DesignPrepRequestHeader(Header):
    kind: Literal["design-prep-request"]
    task_key: TaskKeyStr
    report: RelPath
    prep_id: PrepId
    item_status: Literal["provisional", "blocked"]
    assessment_fingerprint: Sha256
    report_language: str
    template_version: Annotated[int, Field(ge=1)]


class DesignPrepInputHeader(Header):
    kind: Literal["design-prep-input"]
    task_key: TaskKeyStr
    report: RelPath
    prep_id: PrepId
    revision: Annotated[int, Field(ge=1)]
    assessment_fingerprint: Sha256
    confirmed_at: Timestamp
    confirmed_by: str

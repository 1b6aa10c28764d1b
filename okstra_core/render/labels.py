"""Headings and labels of the reading copy and the HTML report, per report language.

The report data's narrative is written in its ``reportLanguage``; the words the
renderer adds around it follow the same language when a catalog exists for it,
and English otherwise. Codes and ids from the data (severities, statuses,
``IO-nnn``) are shown as they are stored. The task index is deliberately not
localised (see :mod:`okstra_core.render.task_index`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ..models.report import ConvergenceSummary

EN: Final[dict[str, str]] = {
    "summary": "Summary",
    "id": "ID",
    "title": "Title",
    "details": "Report details",
    "task_key": "Task key",
    "task_type": "Task type",
    "schema_version": "Schema version",
    "report_language": "Report language",
    "generated_at": "Generated at",
    "run_segment": "Run",
    "source_data": "Source data",
    "source_sha256": "Source data SHA-256",
    "selected_direction": "Selected direction",
    "findings": "Findings",
    "no_findings": "No findings were reported.",
    "severity": "Severity",
    "evidence": "Evidence",
    "options": "Option candidates",
    "mode": "Mode",
    "recommended": "Recommended",
    "risk": "Risk",
    "pros": "Pros",
    "cons": "Cons",
    "choose": "Choose this option",
    "preselected": "Preselected option",
    "confirmed_by": "Confirmed by",
    "confirmed_at": "Confirmed at",
    "plan": "Implementation plan",
    "stage": "Stage",
    "goal": "Goal",
    "tasks": "Tasks",
    "design_items": "Design items",
    "status": "Status",
    "question": "Question",
    "fields": "Fields to answer",
    "assessment": "Assessment",
    "legacy_unassessed": "No assessment recorded (legacy plan: legacy-unassessed).",
    "results": "Implementation results",
    "outcome": "Outcome",
    "changes": "Changes",
    "path": "Path",
    "change": "Change",
    "checks": "Checks",
    "check": "Check",
    "result": "Result",
    "verdict": "Verification verdict",
    "verdict_short": "Verdict",
    "criteria": "Criteria",
    "criterion": "Criterion",
    "convergence": "Convergence",
    "terminal_state": "Terminal state",
    "rounds": "Rounds",
    "confirmed": "Confirmed",
    "rejected": "Rejected",
    "disputed": "Disputed",
    "state_path": "State file",
    "clarifications": "Clarification questions",
    "context": "Context",
    "suggested": "Suggested answers",
    "use_suggestion": "Use",
    "answer": "Your answer",
    "user_response": "User response",
    "export": "Export user response",
    "export_hint": "Downloads {file} with your choice and answers. Store it in the run's user-responses/ folder.",
    "noscript": "Exporting needs JavaScript. Without it, `okstra user-response export` writes the same file.",
    "choose_first": "Choose one of the option candidates before exporting.",
    "exported": "Downloaded {file}.",
    "none": "none",
}

KO: Final[dict[str, str]] = {
    "summary": "요약",
    "id": "ID",
    "title": "제목",
    "details": "보고서 정보",
    "task_key": "작업 키",
    "task_type": "작업 유형",
    "schema_version": "스키마 버전",
    "report_language": "보고서 언어",
    "generated_at": "생성 시각",
    "run_segment": "실행",
    "source_data": "원본 데이터",
    "source_sha256": "원본 데이터 SHA-256",
    "selected_direction": "선택된 방향",
    "findings": "분석 결과",
    "no_findings": "보고된 결과가 없습니다.",
    "severity": "심각도",
    "evidence": "근거",
    "options": "옵션 후보",
    "mode": "모드",
    "recommended": "권장",
    "risk": "위험도",
    "pros": "장점",
    "cons": "단점",
    "choose": "이 옵션 선택",
    "preselected": "사전 선택된 옵션",
    "confirmed_by": "확인자",
    "confirmed_at": "확인 시각",
    "plan": "구현 계획",
    "stage": "단계",
    "goal": "목표",
    "tasks": "작업",
    "design_items": "설계 항목",
    "status": "상태",
    "question": "질문",
    "fields": "답변할 항목",
    "assessment": "평가",
    "legacy_unassessed": "평가가 기록되지 않았습니다 (레거시 계획: legacy-unassessed).",
    "results": "구현 결과",
    "outcome": "결과",
    "changes": "변경 사항",
    "path": "경로",
    "change": "변경",
    "checks": "검사",
    "check": "검사",
    "result": "결과",
    "verdict": "검증 판정",
    "verdict_short": "판정",
    "criteria": "기준",
    "criterion": "기준",
    "convergence": "수렴",
    "terminal_state": "최종 상태",
    "rounds": "라운드",
    "confirmed": "확정",
    "rejected": "기각",
    "disputed": "이견",
    "state_path": "상태 파일",
    "clarifications": "확인 질문",
    "context": "배경",
    "suggested": "제안 답변",
    "use_suggestion": "사용",
    "answer": "답변",
    "user_response": "사용자 응답",
    "export": "사용자 응답 내보내기",
    "export_hint": "선택과 답변을 담은 {file} 파일을 내려받습니다. 실행의 user-responses/ 폴더에 저장하세요.",
    "noscript": "내보내기에는 JavaScript가 필요합니다. `okstra user-response export` 명령이 같은 파일을 만듭니다.",
    "choose_first": "내보내기 전에 옵션 후보 하나를 선택하세요.",
    "exported": "{file} 파일을 내려받았습니다.",
    "none": "없음",
}

JA: Final[dict[str, str]] = {
    "summary": "概要",
    "id": "ID",
    "title": "タイトル",
    "details": "レポート情報",
    "task_key": "タスクキー",
    "task_type": "タスク種別",
    "schema_version": "スキーマバージョン",
    "report_language": "レポート言語",
    "generated_at": "生成日時",
    "run_segment": "実行",
    "source_data": "元データ",
    "source_sha256": "元データ SHA-256",
    "selected_direction": "選択された方針",
    "findings": "分析結果",
    "no_findings": "報告された結果はありません。",
    "severity": "重大度",
    "evidence": "根拠",
    "options": "選択肢の候補",
    "mode": "モード",
    "recommended": "推奨",
    "risk": "リスク",
    "pros": "利点",
    "cons": "欠点",
    "choose": "この選択肢を選ぶ",
    "preselected": "事前選択された選択肢",
    "confirmed_by": "確認者",
    "confirmed_at": "確認日時",
    "plan": "実装計画",
    "stage": "ステージ",
    "goal": "目標",
    "tasks": "作業",
    "design_items": "設計項目",
    "status": "状態",
    "question": "質問",
    "fields": "回答する項目",
    "assessment": "評価",
    "legacy_unassessed": "評価は記録されていません（旧形式の計画: legacy-unassessed）。",
    "results": "実装結果",
    "outcome": "結果",
    "changes": "変更",
    "path": "パス",
    "change": "変更",
    "checks": "チェック",
    "check": "チェック",
    "result": "結果",
    "verdict": "検証判定",
    "verdict_short": "判定",
    "criteria": "基準",
    "criterion": "基準",
    "convergence": "収束",
    "terminal_state": "最終状態",
    "rounds": "ラウンド",
    "confirmed": "確定",
    "rejected": "却下",
    "disputed": "係争",
    "state_path": "状態ファイル",
    "clarifications": "確認事項",
    "context": "背景",
    "suggested": "回答の候補",
    "use_suggestion": "使う",
    "answer": "回答",
    "user_response": "ユーザー応答",
    "export": "ユーザー応答をエクスポート",
    "export_hint": "選択と回答を含む {file} をダウンロードします。実行の user-responses/ "
    "フォルダーに保存してください。",
    "noscript": "エクスポートには JavaScript が必要です。`okstra user-response export` "
    "でも同じファイルを作成できます。",
    "choose_first": "エクスポートする前に選択肢を一つ選んでください。",
    "exported": "{file} をダウンロードしました。",
    "none": "なし",
}

CATALOGS: Final[dict[str, dict[str, str]]] = {"en": EN, "ko": KO, "ja": JA}
_NAMES: Final = {"english": "en", "korean": "ko", "japanese": "ja", "한국어": "ko", "日本語": "ja"}


def language_code(report_language: str | None) -> str:
    """The primary language subtag of *report_language* (``ko-KR`` -> ``ko``); ``en`` when unset."""
    if not report_language or not report_language.strip():
        return "en"
    text = report_language.strip().lower().replace("_", "-")
    return _NAMES.get(text, text.split("-", 1)[0])


def labels_for(report_language: str | None) -> dict[str, str]:
    """The label catalog for *report_language*; English where none exists."""
    return CATALOGS.get(language_code(report_language), EN)


def html_lang(report_language: str | None) -> str:
    """A safe value for the HTML ``lang`` attribute."""
    code = language_code(report_language)
    return code if code.replace("-", "").isalnum() and code.isascii() else "en"


def convergence_facts(conv: ConvergenceSummary) -> list[tuple[str, str | int | None, bool]]:
    """The convergence outcome as ``(label key, value, is_code)`` rows, in display order.

    The reading copy and the HTML report format these rows their own way.
    """
    rows: list[tuple[str, str | int | None, bool]] = [
        ("terminal_state", conv.terminal_state, True),
        ("rounds", conv.rounds, False),
        ("confirmed", conv.confirmed, False),
        ("rejected", conv.rejected, False),
        ("disputed", conv.disputed, False),
    ]
    if conv.state_path:
        rows.append(("state_path", conv.state_path, True))
    return rows

"""A run dir's log report (prompt and transcript figures, their pairs) as widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from okstra_core.text import visible

from .error_panel import ErrorPanel

if TYPE_CHECKING:
    from okstra_core.render.log_report import LogReport


def log_report_widgets(label: str, report: LogReport | str) -> list[Widget]:
    """Figures and prompt/transcript pairs as tables."""
    out: list[Widget] = [Static(Text(visible(label), style="bold"), classes="preview-title")]
    if isinstance(report, str):
        out.append(ErrorPanel(report, title="Log report"))
        return out
    doc = report.to_json()
    figures = Table.grid(padding=(0, 2))
    figures.add_column(style="bold")
    figures.add_column(justify="right")
    for key in ("promptCount", "promptBytes", "transcriptCount", "transcriptBytes", "totalBytes"):
        figures.add_row(key, f"{doc[key]:,}")
    out.append(Static(figures))
    for problem in doc.get("problems", []):
        out.append(ErrorPanel(problem, title="Log report"))
    if report.pairs:
        table = Table(title="prompt / transcript pairs", title_justify="left", title_style="bold", expand=True)
        table.add_column("prompt")
        table.add_column("role")
        table.add_column("prompt bytes", justify="right")
        table.add_column("transcript bytes", justify="right")
        for p in report.pairs:
            name = Text(visible(p.name + (" (flat)" if p.flat else "")))
            for problem in p.problems:
                name.append(f"\n! {visible(problem)}", style="yellow")
            table.add_row(
                name,
                Text(visible(p.role)),
                f"{p.prompt_bytes:,}" if p.prompt_bytes is not None else Text("-", style="dim"),
                f"{p.transcript_bytes:,}" if p.transcript_bytes is not None else Text("no .log", style="dim"),
            )
        out.append(Static(table))
    else:
        out.append(Static(Text("No prompts in this run dir.", style="dim")))
    return out

"""A one-page HTML report of a repository under one parameter set: counts,
the similarity curve, the hierarchy and sample queries.

The page is self-contained: plotly.js is written into it once, styles use
the reader's system fonts, and nothing refers to a network address, so it
opens offline in any browser (e-mailed, or put on a projector's laptop).
"""

from __future__ import annotations

import html
from dataclasses import asdict
from datetime import datetime

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from hsc.api import Index, QueryResponse
from hsc.explore.explain import hierarchy_plan, suggest_file, suggest_query, walk_file
from hsc.explore.figures import chart_config, file_similarity_curve, plot_text
from hsc.explore.tuning import leaves_at_maximum, oversized_groups
from hsc.hierarchy.groups import HierarchyPlan
from hsc.params import Parameters

# The hierarchy chart shows the files with the most leaves, at most this many.
MAX_REPORT_FILES = 150
SAMPLE_QUERIES = 3
RESULTS_SHOWN = 5

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 1100px; color: #222; line-height: 1.45; padding: 0 1rem; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
.muted { color: #666; } .grid { display: grid; grid-template-columns: repeat(4, 1fr); gap: 0.8rem; }
.count { background: #f4f6f8; border-radius: 6px; padding: 0.6rem 0.8rem; }
.count b { display: block; font-size: 1.5rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; margin: 0.6rem 0; }
th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid #eee; vertical-align: top; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.85rem; }
.changed { background: #fff3e0; }
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def _figure(figure: go.Figure, name: str) -> str:
    # The app's charts keep narrow margins (Streamlit's theme grows them to fit); on a page of its own
    # plotly.js does not, and the y tick labels were cut off under the axis title. Let the axes take
    # the room their labels need, the title a little apart from them.
    figure = go.Figure(figure)
    figure.update_xaxes(automargin=True, title_standoff=6)
    figure.update_yaxes(automargin=True, title_standoff=6)
    return pio.to_html(figure, full_html=False, include_plotlyjs=False, config=chart_config(name))


def _table(header: list[str], rows: list[list[object]], changed: list[bool] | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    marks = [" class='changed'" if changed and changed[n] else "" for n in range(len(rows))]
    body = "".join(
        f"<tr{marks[n]}>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>"
        for n, row in enumerate(rows)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def similarity_histogram(plan: HierarchyPlan) -> go.Figure:
    """How alike neighbouring leaves are across the repository, with the threshold."""
    similarities = plan.segmentation.similarities
    values = similarities[~np.isnan(similarities)]
    threshold = plan.parameters.similarity_drop_threshold
    figure = go.Figure(go.Histogram(x=values, nbinsx=50, marker={"color": "#1f77b4"}, name="pairs"))
    figure.add_vline(
        x=threshold,
        line={"color": "#d62728", "dash": "dash"},
        annotation_text=f"similarity_drop_threshold = {threshold:.2f}",
    )
    figure.update_layout(
        xaxis_title="cosine similarity of adjacent leaves (raw)",
        yaxis_title="pairs",
        height=300,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        showlegend=False,
    )
    return figure


def hierarchy_treemap(plan: HierarchyPlan, repository_name: str) -> go.Figure:
    """Repository → files → groups, sized by tokens, for the largest files."""
    table = plan.table
    tokens_per_file = np.bincount(table.file_index, weights=table.token_counts, minlength=len(table.paths))
    shown = np.sort(np.argsort(-tokens_per_file, kind="stable")[:MAX_REPORT_FILES])
    ids, labels, parents, values, hovers = ["repo"], [plot_text(repository_name)], [""], [0.0], [""]
    group_files = table.file_index[plan.group_starts]
    for file_number in shown.tolist():
        file_id = f"file{file_number}"
        ids.append(file_id)
        labels.append(plot_text(table.paths[file_number]))
        parents.append("repo")
        values.append(float(tokens_per_file[file_number]))
        hovers.append("file")
        for ordinal in np.flatnonzero(group_files == file_number).tolist():
            start, end = int(plan.group_starts[ordinal]), int(plan.group_ends[ordinal])
            ids.append(f"g{ordinal}")
            labels.append(plot_text(f"L{int(table.start_lines[start])} {table.scopes[start]}"))
            parents.append(file_id)
            values.append(float(plan.group_tokens[ordinal]))
            hovers.append(
                f"group of {end - start} leaves" + (" · summarised" if plan.needs_summary[ordinal] else "")
            )
    values[0] = float(sum(values[i] for i, parent in enumerate(parents) if parent == "repo"))
    figure = go.Figure(
        go.Treemap(
            ids=ids,
            labels=labels,
            parents=parents,
            values=values,
            branchvalues="total",
            customdata=hovers,
            hovertemplate="%{label}<br>%{customdata}<br>%{value} tokens<extra></extra>",
            maxdepth=3,
        )
    )
    figure.update_layout(
        height=560, margin={"l": 4, "r": 4, "t": 30, "b": 4}, uniformtext={"minsize": 10, "mode": "hide"}
    )
    return figure


def _query_section(response: QueryResponse) -> str:
    staged = {r.leaf_id for r in response.results}
    rows, changed = [], []
    for position in range(min(RESULTS_SHOWN, max(len(response.results), len(response.flat)))):
        a = response.results[position] if position < len(response.results) else None
        b = response.flat[position] if position < len(response.flat) else None
        rows.append(
            [
                position + 1,
                f"{a.scope} · {a.path}:{a.start_line} ({a.score:.3f})" if a else "",
                f"{b.scope} · {b.path}:{b.start_line} ({b.score:.3f})" if b else "",
            ]
        )
        changed.append(bool(b and b.leaf_id not in staged))
    return (
        f"<h3>“{_e(response.query)}”</h3>"
        f"<p class='muted'>The {_e(response.mode)} search read {response.leaves_compared} leaves "
        f"({len(response.opened_group_ids)} groups opened); "
        f"the flat search read {response.flat_leaves_compared}. Shaded: found by the flat search only.</p>"
        + _table(["rank", _e(response.mode), "flat search"], rows, changed)
    )


def default_queries(index: Index, hierarchy_id: int, plan: HierarchyPlan) -> list[str]:
    """A query per file for the suggested file and the largest ones (the name
    of each file's longest definition, in words)."""
    table = plan.table
    leaves_per_file = np.bincount(table.file_index, minlength=len(table.paths))
    paths = [suggest_file(plan)] + [table.paths[i] for i in np.argsort(-leaves_per_file, kind="stable")]
    queries: list[str] = []
    for path in paths:
        if path is None:
            continue
        query = suggest_query(walk_file(index, hierarchy_id, path, plan))
        if query not in queries:
            queries.append(query)
        if len(queries) == SAMPLE_QUERIES:
            break
    return queries


def build_report(index: Index, hierarchy_id: int, queries: list[str] | None = None) -> str:
    """The report of the hierarchy ``hierarchy_id`` as one HTML document."""
    hierarchy = index.hierarchy(hierarchy_id)
    repository = index.store.repository(int(hierarchy["repository_id"])) or {}
    plan = hierarchy_plan(index, hierarchy_id)
    table = plan.table
    if not len(table):
        raise ValueError("this repository has no leaves; index it first")
    params = plan.parameters
    name = str(repository.get("name") or "repository")
    queries = queries if queries else default_queries(index, hierarchy_id, plan)

    counts = [
        ("files", len(table.paths)),
        ("leaves", len(table)),
        ("groups", plan.group_count),
        ("topic boundaries", plan.segmentation.topic_boundary_count),
        ("leaves per group", f"{len(table) / max(plan.group_count, 1):.1f}"),
        ("median leaf tokens", int(np.median(table.token_counts))),
        ("summarised groups", len(oversized_groups(plan))),
        ("leaves at the maximum", len(leaves_at_maximum(table, params.maximum_chunk_token_length))),
    ]
    defaults = asdict(Parameters())
    parameter_rows = [
        [k, v, "" if defaults.get(k) == v else f"default {defaults.get(k)}"]
        for k, v in asdict(params).items()
    ]

    path = suggest_file(plan)
    walk = walk_file(index, hierarchy_id, path, plan) if path else None
    curve = ""
    if walk is not None and len(walk.similarities):
        figure = file_similarity_curve(walk)
        curve = _figure(figure, f"similarity-{path}")

    sections = [
        f"<h1>{_e(name)}</h1>",
        f"<p class='muted'>Parameter set <b>{_e(hierarchy['name'])}</b> · embedding model "
        f"{_e(repository.get('embedding_model') or index.settings.embedding_model)} · tokens: "
        f"{_e(index.settings.tokenizer)} · made {datetime.now():%Y-%m-%d %H:%M}</p>",
        "<div class='grid'>"
        + "".join(f"<div class='count'><b>{_e(v)}</b>{_e(k)}</div>" for k, v in counts)
        + "</div>",
        "<h2>Parameters</h2>",
        _table(["parameter", "value", "differs from"], parameter_rows, [bool(r[2]) for r in parameter_rows]),
        "<h2>Similarity of neighbouring leaves</h2>",
        "<p>A boundary falls where the smoothed similarity of adjacent leaves dips below the threshold; "
        "the leaves between boundaries form the mid-level groups.</p>",
        _figure(similarity_histogram(plan), "similarity-histogram"),
        curve,
        "<h2>Hierarchy</h2>",
        f"<p>Files → groups, sized by tokens (the {min(MAX_REPORT_FILES, len(table.paths))} largest files; "
        "click a file to open it).</p>",
        _figure(hierarchy_treemap(plan, name), "hierarchy"),
        "<h2>Sample queries</h2>",
    ]
    for text in queries:
        sections.append(_query_section(index.query(text, hierarchy_id=hierarchy_id, record=False)))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>hsc report · {_e(name)}</title><style>{STYLE}</style>"
        f"<script type='text/javascript'>{get_plotlyjs()}</script></head><body>"
        + "\n".join(sections)
        + "</body></html>"
    )

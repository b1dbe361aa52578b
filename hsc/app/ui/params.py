"""The algorithm's parameters, kept once per session and editable from any page.

Values live in one dict in ``st.session_state`` under the seed names. Each
page draws at most one widget per parameter: the sidebar leaves out those a
page edits itself (the Similarity sliders). A widget starts from the shared
value and, when the user moves it, its new value is taken into the dict
before anything reads it (:func:`take_moved_widgets`, at the start of a run).

The app never writes a widget's state, and uses no on_change callbacks:
with two widgets writing one value, or the app writing a widget, the
browser's next message can carry a value the server already replaced, and
rapid changes (a slider nudged with the arrow keys) would be undone. To
show new values after a reset or a loaded set, the widgets get new keys.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import streamlit as st

from hsc import Parameters
from hsc.app.ui.text import md
from hsc.params import describe, with_values

PARAMETERS = "hsc_parameters"
PARAMETER_ERROR = "hsc_parameter_error"
WIDGETS = "hsc_parameter_widgets"  # widget key -> (parameter name, generation) of the widgets drawn
GENERATION = "hsc_parameter_generation"  # bumped to redraw every widget from the shared values
EDITOR_LABEL = "hsc_parameter_editor_label"  # the label the sidebar's editor was drawn with

FIELDS: dict[str, dict[str, Any]] = {row["name"]: row for row in describe(Parameters)}

# What changing a stage's parameters takes effect on, for the editor's headings.
STAGE_EFFECTS = {
    "chunk": "cutting files into leaves: re-index to apply",
    "embed": "embedding: re-index to apply",
    "hierarchy": "boundaries and groups: previewed live, saved on the Hierarchy page",
    "query": "retrieval: applied to the next query",
}

# Widget bounds: the validity rules of Parameters, plus a step that suits each.
_NUMBER_LIMITS: dict[str, dict[str, Any]] = {
    "minimum_chunk_token_length": {"min_value": 0, "step": 4},
    "maximum_chunk_token_length": {"min_value": 8, "step": 16},
    "embedding_batch_size": {"min_value": 1, "step": 8},
    "similarity_drop_threshold": {"min_value": -1.0, "max_value": 1.0, "step": 0.01, "format": "%.2f"},
    "smoothing_window_size": {"min_value": 1, "step": 1},
    "maximum_merged_chunk_token_length": {"min_value": 1, "step": 64},
    "mid_level_top_k": {"min_value": 1, "step": 1},
    "leaf_level_top_k": {"min_value": 1, "step": 1},
}


def parameter_values() -> dict[str, Any]:
    if PARAMETERS not in st.session_state:
        st.session_state[PARAMETERS] = asdict(Parameters())
    return st.session_state[PARAMETERS]


def current_parameters() -> Parameters:
    return Parameters(**parameter_values())


def parameters_from(values: dict[str, Any]) -> Parameters:
    """Parameters from a saved set's values (e.g. ``index.hierarchies()[i]["parameters"]``)."""
    return with_values(Parameters(), values)


def set_parameters(values: dict[str, Any]) -> None:
    """Replace some of the session's parameters (e.g. with a saved set's) and
    redraw the widgets from them; invalid values raise ValueError and change
    nothing."""
    merged = with_values(current_parameters(), values)
    st.session_state[PARAMETERS] = asdict(merged)
    _redraw_widgets()


def _redraw_widgets() -> None:
    st.session_state[GENERATION] = st.session_state.get(GENERATION, 0) + 1


def take_moved_widgets() -> None:
    """Call before any widget is drawn: copy each parameter widget the user
    changed since the last run into the shared values.

    An invalid combination (e.g. a maximum below the minimum) is refused with
    a message in the sidebar, and the widgets are redrawn from the values kept.
    """
    widgets: dict[str, tuple[str, int]] = st.session_state.setdefault(WIDGETS, {})
    generation = st.session_state.get(GENERATION, 0)
    values = parameter_values()
    for key, (name, drawn_in) in list(widgets.items()):
        if key not in st.session_state or drawn_in != generation:
            # Dropped by Streamlit (a page left behind), or from before a reset: not the user's input.
            del widgets[key]
            continue
        if st.session_state[key] == values[name]:
            continue
        try:
            st.session_state[PARAMETERS] = asdict(
                with_values(current_parameters(), {name: st.session_state[key]})
            )
            values = parameter_values()
            st.session_state.pop(PARAMETER_ERROR, None)
        except ValueError as error:
            st.session_state[PARAMETER_ERROR] = str(error)
            _redraw_widgets()


def differing_from_defaults(values: dict[str, Any]) -> dict[str, Any]:
    defaults = asdict(Parameters())
    return {name: value for name, value in values.items() if defaults.get(name) != value}


def _widget_key(name: str, where: str) -> str:
    generation = st.session_state.get(GENERATION, 0)
    return f"param:{where}:{name}" + (f"#{generation}" if generation else "")


def parameter_input(
    name: str, where: str, slider: bool = False, slider_range: tuple[Any, Any] | None = None
) -> Any:
    """A widget for one parameter, labelled with its seed name and help text.

    ``where`` names the place (page, or sidebar of a page): Streamlit treats a
    widget on another page as another widget, so each starts from the shared
    value. Numbers get a number box (or a slider), named choices a segmented
    control, and a parameter this app does not know yet a widget by its type,
    so a new field in Parameters shows up without an edit here.
    """
    field = FIELDS[name]
    key = _widget_key(name, where)
    value = parameter_values()[name]
    st.session_state.setdefault(WIDGETS, {})[key] = (name, st.session_state.get(GENERATION, 0))
    common: dict[str, Any] = {"key": key, "help": field["help"]}
    if field["choices"]:  # a parameter that takes one of a few names
        return st.segmented_control(name, field["choices"], default=value, required=True, **common)
    if field["type"] == "str":
        return st.text_input(name, value=value, **common)
    limits = dict(_NUMBER_LIMITS.get(name, {"step": 0.01 if field["type"] == "float" else 1}))
    if slider:
        low, high = slider_range or (limits.get("min_value"), limits.get("max_value"))
        # Keep a value set elsewhere (sidebar, a saved set) inside the slider's range.
        low, high = min(low, value), max(high, value)
        return st.slider(
            name,
            min_value=low,
            max_value=high,
            value=value,
            step=limits.get("step"),
            format=limits.get("format"),
            **common,
        )
    return st.number_input(name, value=value, **limits, **common)


def _reset() -> None:
    st.session_state[PARAMETERS] = asdict(Parameters())
    st.session_state.pop(PARAMETER_ERROR, None)
    _redraw_widgets()


def editor_label() -> str:
    changed = differing_from_defaults(parameter_values())
    return f"Parameters ({len(changed)} changed)" if changed else "Parameters (defaults)"


def editor_label_is_stale() -> bool:
    """Whether the sidebar's editor, drawn before a page's fragment changed a parameter, now
    says the wrong count ("defaults" after a slider moved): a fragment's run does not redraw it."""
    return st.session_state.get(EDITOR_LABEL, editor_label()) != editor_label()


def parameter_editor(page: str, shown_on_page: tuple[str, ...] = ()) -> None:
    """Every parameter, grouped by the stage it affects (for the sidebar),
    except those in ``shown_on_page``, which that page draws itself."""
    error = st.session_state.get(PARAMETER_ERROR)
    if error:
        st.warning(md(f"Not applied: {error}"))
    label = editor_label()
    st.session_state[EDITOR_LABEL] = label
    # Stages in the order their first parameter comes, so a new stage shows up too.
    stages = list(dict.fromkeys(field["stage"] for field in FIELDS.values()))
    # The count goes above the expander, not in its label: an expander whose label changes is a
    # new element, drawn closed, so a tuner had to reopen it after every new parameter.
    st.caption(label)
    with st.expander("Show and change them", expanded=False, key="param:editor"):
        for stage in stages:
            effect = STAGE_EFFECTS.get(stage)
            st.caption(f"**{stage}** — {effect}" if effect else f"**{stage}**")
            for name, field in FIELDS.items():
                if field["stage"] != stage:
                    continue
                if name in shown_on_page:
                    # No value here: a slider on the page reruns only its part of the page, not the sidebar.
                    st.caption(f"{name}: set on this page")
                else:
                    parameter_input(name, f"sidebar:{page}")
        st.button("Reset to defaults", on_click=_reset, key="param:reset", width="stretch")

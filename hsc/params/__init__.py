"""The algorithm's eight parameters and the run's settings.

Parameter names are the seed's, exactly, so that a value read in a paper, a
TOML file, the command line or the app means the same thing everywhere.
Each field carries a help text in its metadata; the CLI and the app show it.

``fields`` declares and checks a field (and names the choices that stages share),
``parameters`` holds :class:`Parameters`, ``settings`` :class:`Settings`, and ``config``
reads them from TOML files, ``name=value`` pairs and forms. Every name is imported from here.
"""

from hsc.params.config import (
    STAGE_SET_WHERE,
    configure,
    describe,
    given_values,
    load_toml,
    parse_assignments,
    query_overrides,
    query_parameter_names,
    split_overrides,
    with_values,
)
from hsc.params.fields import (
    ATTRIBUTE_DOCSTRINGS,
    BOUNDARY_RULES,
    CONTEXT_MODULE_RULES,
    DEFINITION_VECTORS,
    FRAGMENT_MERGING,
    JAVA_CLASS_SCOPES,
    JOINED_RESULTS,
    OVERLOAD_SIGNATURES,
    REGION_DEFINITIONS,
    REGION_LEVELS,
    REGION_LEXICAL,
    REGION_NESTING,
    REGION_OUTLINES,
    RETRIEVAL_MODES,
    SCOPE_NAMES,
    SettingError,
    allowed,
    check_fields,
    language_minimums,
)
from hsc.params.parameters import CHUNK_FIELDS, SEED_PARAMETERS, Parameters
from hsc.params.settings import (
    DEFAULT_ENCODER,
    DEFAULT_MODEL,
    DEFAULT_TOKENIZER,
    DEVICES,
    ENCODE_PROCESSES,
    ENCODER_BACKENDS,
    EXECUTORS,
    INDEX_WORKERS,
    LONG_LEAF_RULES,
    VECTOR_STORAGES,
    Settings,
)

__all__ = [
    "ATTRIBUTE_DOCSTRINGS",
    "BOUNDARY_RULES",
    "CONTEXT_MODULE_RULES",
    "CHUNK_FIELDS",
    "DEFAULT_ENCODER",
    "DEFAULT_MODEL",
    "DEFAULT_TOKENIZER",
    "DEFINITION_VECTORS",
    "DEVICES",
    "ENCODER_BACKENDS",
    "ENCODE_PROCESSES",
    "EXECUTORS",
    "FRAGMENT_MERGING",
    "INDEX_WORKERS",
    "JAVA_CLASS_SCOPES",
    "JOINED_RESULTS",
    "LONG_LEAF_RULES",
    "OVERLOAD_SIGNATURES",
    "Parameters",
    "REGION_DEFINITIONS",
    "REGION_LEVELS",
    "REGION_LEXICAL",
    "REGION_OUTLINES",
    "REGION_NESTING",
    "RETRIEVAL_MODES",
    "SCOPE_NAMES",
    "SEED_PARAMETERS",
    "STAGE_SET_WHERE",
    "SettingError",
    "Settings",
    "VECTOR_STORAGES",
    "allowed",
    "check_fields",
    "configure",
    "describe",
    "given_values",
    "language_minimums",
    "load_toml",
    "parse_assignments",
    "query_overrides",
    "query_parameter_names",
    "split_overrides",
    "with_values",
]

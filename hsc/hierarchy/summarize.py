"""Summaries of mid-level groups and whole documents.

Two summarisers share one interface. ``DigestSummarizer`` needs no model: it
composes a compact outline (``hsc.hierarchy.digest``) from the facts the syntax tree gave
when the files were cut (what the text covers, the signatures of its
definitions with the first sentence of their docs, what it imports and its
most telling names). It is what runs when no Ollama server is configured or
answers.
``OllamaSummarizer`` asks an Ollama server for a prose summary and falls back
to the digest, with a note saying why, whenever the server cannot give one.

Both keep the summary within the request's token budget, counted with the
project's token counter, because the summary stands in for text that was too
long and is embedded and shown in the same places as that text.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import urllib.parse
from dataclasses import dataclass, field

from hsc.chunk.doctext import shorten as _shorten
from hsc.chunk.tokens import TokenCounter, get_counter, trim_to_budget
from hsc.hierarchy.digest import LANGUAGE_NAMES
from hsc.hierarchy.digest import digest as _digest
from hsc.hierarchy.summary import Summarizer, Summary, SummaryRequest
from hsc.params import Settings

DIGEST_MODEL = "digest-v2"  # v2: composed from syntax-tree facts (v1 read the code with patterns)
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"


class DigestSummarizer:
    """A deterministic outline of the code; needs no model and no server.

    ``reason`` says why the digest is in use when something else was wanted
    (e.g. Ollama did not answer); ``describe_summarizer`` shows it and each
    summary carries it as its note.
    """

    name = "digest"
    model = DIGEST_MODEL

    def __init__(self, counter: TokenCounter | None = None, reason: str = "") -> None:
        self.counter = counter if counter is not None else get_counter()
        self.reason = reason

    def summarise(self, request: SummaryRequest) -> Summary:
        note = f"{self.reason}; used the embedded digest" if self.reason else ""
        return Summary(_digest(request, self.counter), self.name, self.model, note=note)


# --------------------------------------------------------------------------------------------------------
# Ollama


def normalise_host(host: str) -> str:
    """``host`` as a base URL, with the defaults the Ollama client applies
    (http, port 11434), so messages show the address actually used."""
    host = host.strip().rstrip("/") or DEFAULT_OLLAMA_HOST
    if "://" not in host:
        host = f"http://{host}"
        split = urllib.parse.urlsplit(host)
        if split.port is None:
            host = f"http://{split.netloc or '127.0.0.1'}:11434{split.path}"
    return host


_OLLAMA_SYSTEM = (
    "You summarise source code for developers browsing a repository and for a code-search index. "
    "Answer with the summary only: plain text, no Markdown, no code, no preamble."
)


def _prompt(request: SummaryRequest, counter: TokenCounter, code_budget: int) -> str:
    language = LANGUAGE_NAMES.get(request.language.lower(), request.language or "code")
    words = max(12, int(request.token_budget * 0.6))
    if request.kind == "document":
        what = f"the whole file {request.path}"
        ask = "Say what the file is for, then name its main functions, classes or sections and what they do."
    else:
        scope = f" (scope {request.scope})" if request.scope else ""
        what = f"a part of {request.path}{scope}"
        ask = "Say what this code does, naming its key functions and classes and what each is for."
    code = "\n\n".join(
        f"--- {leaf_scope or request.scope or request.path} ---\n{text.rstrip()}"
        for text, leaf_scope in zip(request.texts, request.scopes, strict=True)
    )
    if counter.count(code) > code_budget:
        # Too long for the model's context: an outline of everything, then as much of the code as fits.
        outline = _digest(dataclasses.replace(request, token_budget=max(64, code_budget // 4)), counter)
        excerpt = trim_to_budget(code, code_budget - counter.count(outline) - 16, counter)
        code = f"Outline of all of it:\n{outline}\n\nThe code, from the start (the rest is cut):\n{excerpt}"
    return (
        f"Summarise {what}, written in {language}. {ask} "
        f"Mention important inputs, outputs and side effects. Use at most {words} words.\n\n"
        f"{code}\n\n"
        f"Summary of the code above in at most {words} words, plain text:"
    )


_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)
_PREAMBLE = re.compile(r"^(?:here(?:'s| is)[^\n]*?:|summary:)\s*", re.IGNORECASE)


def _clean_answer(text: str) -> str:
    text = _THINKING.sub("", text)
    text = re.sub(r"```[\w-]*", "", text)
    text = text.replace("**", "").strip()
    text = _PREAMBLE.sub("", text).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


@dataclass(frozen=True)
class _Failure:
    reason: str  # human text for the note
    lasting: bool  # True when later requests would fail the same way, so they should not be sent
    timeout: bool = False


def _failure(error: BaseException, model: str, timeout: float) -> _Failure:
    """What went wrong with a request to Ollama, in words a user can act on."""
    # The client libraries are imported where Ollama is used: an index or a
    # query with the digest summariser never pays their ~0.3 s (seconds under load).
    import httpx
    import ollama

    if isinstance(error, ollama.ResponseError):
        message = _shorten(" ".join(str(error.error).split()), 160)
        if error.status_code == 404 and "model" in message and "not found" in message:
            return _Failure(f'has no model "{model}" ({message})', lasting=True)
        # A missing endpoint or a refused login fails the same way every time; a server error may not.
        lasting = error.status_code in (401, 403, 404, 405)
        return _Failure(f"answered HTTP {error.status_code} ({message})", lasting=lasting)
    if isinstance(error, httpx.ConnectTimeout):
        return _Failure(f"did not accept a connection within {timeout:g} s", lasting=True)
    if isinstance(error, httpx.TimeoutException):
        return _Failure(f"did not answer within {timeout:g} s", lasting=False, timeout=True)
    if isinstance(error, ConnectionError):
        # The client replaces the transport error with a generic message; the original says why.
        cause = error.__context__ or error.__cause__
        detail = str(cause or error)
        if "refused" in detail.lower():
            detail = "connection refused"
        elif "name or service not known" in detail.lower() or "nodename nor servname" in detail.lower():
            detail = "unknown host name"
        return _Failure(f"did not answer ({_shorten(detail, 120)})", lasting=True)
    if isinstance(error, httpx.TransportError):
        return _Failure(f"broke the connection ({_describe_exception(error)})", lasting=True)
    if isinstance(error, (ValueError, TypeError)):
        return _Failure(f"sent a malformed answer ({_describe_exception(error)})", lasting=False)
    return _Failure(f"failed ({_describe_exception(error)})", lasting=False)


def _describe_exception(error: BaseException) -> str:
    return f"{type(error).__name__}: {_shorten(str(error), 120)}"


def _fallback_label(summarizer: Summarizer) -> str:
    if isinstance(summarizer, DigestSummarizer):
        return "the embedded digest"
    return describe_summarizer(summarizer)


class OllamaSummarizer:
    """Summaries written by a model on an Ollama server, with a fallback.

    Any failure gives the fallback's summary with a note that says what went
    wrong. Failures that would repeat (server unreachable, model missing, a
    time-out) are remembered, so a run over hundreds of groups costs at most
    one time-out, not one per group. :attr:`fallback_note` sums up what fell
    back in this run, for the command line and the app to say once.
    """

    name = "ollama"
    # A fixed context size: Ollama reloads a model whenever num_ctx changes, so it must not vary per request.
    context_tokens = 8192
    # A server that let one request time out is slow or hung: each further try would cost a full timeout.
    timeouts_before_giving_up = 1

    def __init__(
        self, host: str, model: str, timeout: float, counter: TokenCounter, fallback: Summarizer
    ) -> None:
        self.host = normalise_host(host)
        self.model = model
        self.timeout = timeout
        self.counter = counter
        self.fallback = fallback
        import httpx
        import ollama

        # Connecting should be quick even when generating is slow, so a dead address fails fast.
        timeouts = httpx.Timeout(timeout, connect=min(timeout, 5.0))
        self._client = ollama.Client(host=self.host, timeout=timeouts)
        self._lock = threading.Lock()
        self._gave_up = ""  # the note to repeat once the server is known to be unusable
        self._timeouts_in_a_row = 0
        self._fallbacks = 0
        self._first_fallback = ""

    def start_run(self) -> None:
        """Count fallbacks afresh (a server found unusable stays so for this instance)."""
        with self._lock:
            self._fallbacks = 0
            self._first_fallback = ""

    @property
    def fallback_note(self) -> str:
        """ "" while every summary came from Ollama; otherwise how many fell back and why."""
        with self._lock:
            if not self._fallbacks:
                return ""
            count = f"{self._fallbacks} summar{'y' if self._fallbacks == 1 else 'ies'} by the fallback"
            return f"{count}: {self._gave_up or self._first_fallback}"

    @property
    def unusable(self) -> str:
        """Why this instance no longer asks the server ("" while it still does)."""
        with self._lock:
            return self._gave_up

    def summarise(self, request: SummaryRequest) -> Summary:
        gave_up = self.unusable
        if gave_up:
            return self._fall_back(request, gave_up)
        if request.token_budget <= 0:
            return Summary("", self.name, self.model)
        # Headroom over the budget because the model's tokenizer is not ours; the answer is trimmed after.
        predict = min(request.token_budget + request.token_budget // 4 + 16, self.context_tokens // 2)
        code_budget = self.context_tokens - predict - 400
        try:
            response = self._client.generate(
                model=self.model,
                prompt=_prompt(request, self.counter, code_budget),
                system=_OLLAMA_SYSTEM,
                options={"num_predict": predict, "num_ctx": self.context_tokens, "temperature": 0.2},
                stream=False,
            )
            text = _clean_answer(response.response or "")
            if not text:
                raise ValueError("the answer has no response text")
        except Exception as error:  # any failure must still produce a summary
            return self._fall_back(request, self._note_for(error))
        with self._lock:
            self._timeouts_in_a_row = 0
        return Summary(trim_to_budget(text, request.token_budget, self.counter), self.name, self.model)

    def _note_for(self, error: BaseException) -> str:
        failure = _failure(error, self.model, self.timeout)
        fallback = _fallback_label(self.fallback)
        note = f"Ollama at {self.host} {failure.reason}; used {fallback}"
        with self._lock:
            self._timeouts_in_a_row = self._timeouts_in_a_row + 1 if failure.timeout else 0
            gives_up = failure.lasting or self._timeouts_in_a_row >= self.timeouts_before_giving_up
            if gives_up:
                if failure.timeout and self._timeouts_in_a_row > 1:
                    reason = f"{failure.reason}, {self._timeouts_in_a_row} times in a row"
                    note = f"Ollama at {self.host} {reason}; used {fallback}"
                note += " and will not ask it again in this run"
                self._gave_up = self._gave_up or note
        return note

    def _fall_back(self, request: SummaryRequest, note: str) -> Summary:
        with self._lock:
            self._fallbacks += 1
            self._first_fallback = self._first_fallback or note
        summary = self.fallback.summarise(request)
        return Summary(summary.text, summary.summariser, summary.model, note=note)


@dataclass(frozen=True)
class _Probe:
    answers: bool
    message: str
    models: list[str] = field(default_factory=list)


def _probe(host: str, timeout: float) -> _Probe:
    import httpx
    import ollama

    base = normalise_host(host)
    try:
        with ollama.Client(host=base, timeout=timeout) as client:
            listing = client.list()
    except Exception as error:  # whatever went wrong, the answer is "no" with the reason
        return _Probe(False, f"Ollama at {base} {_failure(error, '', timeout).reason}")
    models = [model.model or "" for model in listing.models]
    version = ""
    try:
        # The client has no call for the version; it is nice to show but not needed.
        answer = httpx.get(f"{base}/api/version", timeout=timeout)
        version = str(answer.json().get("version", "")) if answer.status_code == 200 else ""
    except (httpx.HTTPError, ValueError, AttributeError):
        version = ""
    label = f"Ollama {version}" if version else "Ollama"
    listed = ", ".join(models) if models else "no models pulled yet"
    return _Probe(True, f"{label} at {base} answers; models: {listed}", models)


def check_ollama(host: str, timeout: float = 2.0) -> tuple[bool, str]:
    """Whether an Ollama server answers at ``host``, and a message with its
    version and models, or with the error."""
    probe = _probe(host, timeout)
    return probe.answers, probe.message


def _has_model(models: list[str], wanted: str) -> bool:
    return wanted in models or (":" not in wanted and f"{wanted}:latest" in models)


def make_summarizer(settings: Settings, counter: TokenCounter) -> Summarizer:
    """The summariser ``settings.summariser`` asks for.

    "auto" uses Ollama when ``ollama_host`` is set, the server answers and has
    the model; otherwise the digest, whose ``reason`` says why.
    """
    choice = settings.summariser.strip().lower()
    if choice == "digest":
        return DigestSummarizer(counter)
    host = settings.ollama_host.strip()
    if choice == "ollama":
        return OllamaSummarizer(
            host or DEFAULT_OLLAMA_HOST,
            settings.ollama_model,
            settings.ollama_timeout,
            counter,
            DigestSummarizer(counter),
        )
    if choice != "auto":
        raise ValueError(f"summariser must be 'digest', 'ollama' or 'auto', got {settings.summariser!r}")
    if not host:
        return DigestSummarizer(counter)
    probe = _probe(host, timeout=min(2.0, settings.ollama_timeout))
    if not probe.answers:
        return DigestSummarizer(counter, reason=probe.message)
    if not _has_model(probe.models, settings.ollama_model):
        model = settings.ollama_model
        missing = f'Ollama at {normalise_host(host)} answers but has no model "{model}" (ollama pull {model})'
        return DigestSummarizer(counter, reason=missing)
    return OllamaSummarizer(
        host, settings.ollama_model, settings.ollama_timeout, counter, DigestSummarizer(counter)
    )


def fallback_note(summarizer: Summarizer | None) -> str:
    """Why summaries are not what the settings asked for, in one line ("" when they are):
    Ollama failed during the run, or "auto" found no usable server at the start."""
    if summarizer is None:
        return ""
    note = getattr(summarizer, "fallback_note", "")
    if note:
        return f"summaries: {note}"
    reason = getattr(summarizer, "reason", "")  # the digest chosen by "auto", and why
    return f"summaries by the embedded digest: {reason}" if reason else ""


def describe_summarizer(summarizer: Summarizer) -> str:
    """One line saying which summariser is in use, for a sidebar."""
    if isinstance(summarizer, DigestSummarizer):
        return "Embedded digest (no server)" + (f"; {summarizer.reason}" if summarizer.reason else "")
    if isinstance(summarizer, OllamaSummarizer):
        gave_up = summarizer.unusable
        status = "; not answering, so the embedded digest is used" if gave_up else ""
        return f"Ollama {summarizer.model} at {summarizer.host}{status}"
    return f"{summarizer.name} {summarizer.model}"

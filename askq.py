"""Ask the user structured questions: the tool an LLM agent calls mid-task.

A model that needs a decision from its user calls a tool with a batch of
questions.  askq turns whatever the model sent into one validated batch,
and the user's answers into a checked result for the model.  It is one file
with no dependencies: copy ``askq.py`` into a project and import it.

    >>> import askq
    >>> out = askq.ask('{"questions": [{"question": "Which database?",'
    ...                ' "options": ["SQLite", "Postgres (Recommended)"]}]}')
    >>> item = out.questions[0]
    >>> item.question_type, item.id, item.recommended
    (<QuestionType.SINGLE_CHOICE: 'SingleChoice'>, 'q0', 'Postgres')
    >>> [option.label for option in item.options]
    ['Postgres', 'SQLite']

The person's answers, however a UI collected them, are checked and become
the tool result the model reads, for every outcome (answered, declined,
timed out, nobody there).  prompt() asks on a terminal, prompt_web() in a
browser, and ``python askq.py serve`` is an MCP server with the tool:

    >>> answers = askq.collect_answers(out, {"q0": "sqlite"})
    >>> done = askq.QuestionOutput(out.questions, answers, "answered")
    >>> print(askq.result_text(done).splitlines()[2])
       picked: "SQLite"

Whatever a model plausibly meant is accepted: options as plain strings,
``questions`` sent as JSON inside a string, another harness's field names.
What cannot be shown to a user raises QuestionError, whose message is
written for the model, so that its next call gets it right:

    >>> askq.ask({"questions": []})
    Traceback (most recent call last):
      ...
    askq.QuestionError: No questions provided. Ask at least one question.

The file, in the order of one call's life (each part under a banner of its own):

    Vocabulary          constants and bounds, QuestionError, AnswerError, Outcome,
                        QuestionType, QuestionOption, QuestionItem, Attachment (a
                        file beside an answer, its type read from its bytes),
                        AnswerItem, QuestionInput, QuestionOutput, the questions a
                        UI asks with the batch's heading (_Questions)
    Shared helpers      naming a question in a message, text made safe to show,
                        display cells, the recommended mark, _Registry (names to
                        handlers, filled beside each handler), the rows of a
                        question (_Row, the row for typing), and the one naming
                        rule: _option_named(), which option a text names
    The tool            tool_description(), tool_definition(): what the model is shown
    Decoding            ask(), decode(): whatever the model sent, mended where it is
                        almost JSON.  In parts: the entry points, strict JSON and
                        its bounds, the repairs (one chain of steps), code fences,
                        the tolerant reader, tool-call markup (Cline's, a whole
                        call's envelope, one after the model's prose, a leak into a
                        field), the questions (and JSON envelopes, _EnvelopeLook),
                        the options, a recommendation stated in the text, field
                        readers
    Normalization       validate_and_normalize(): ids, placeholder questions, labels,
                        kinds, the recommendation
    Answers             collect_answers(): every answer form, checked against the
                        questions (a harness's form read back by its class, below);
                        assumed_answers(); the bounds on attached files
                        (_AttachmentBounds)
    Results             result_text(), declined_text(), unavailable_text(), error_text()
    Harness answers     harness_answers(): one _HarnessForm per runtime, which
                        writes its form and reads it back (its shape, unwrap(); its
                        own entries for a note; what it cannot carry); HARNESSES,
                        the names registered, read when asked for; attached files,
                        which no form carries, saved and said in notes (_files_said)
    Elicitation         the versions of MCP and what each brings (_PROTOCOLS, one
                        row a version, asked by every part); to_elicitation(),
                        from_elicitation(), input_request(); what is known of
                        clients' forms (_KNOWN_CLIENTS), which picks each
                        property's one arm of the schema for a client
    Line prompt         prompt(), prompt_async(), _LinePrompt
    Dialog              _Dialog (state and keys; a row's words, row_words(), which
                        the painter draws and the filter looks in), _Painter
                        (drawing), the terminal
    HTTP core           _HttpCore (the rules), a form's fields and files
                        (_multipart_form), _HttpServer (connections: each request
                        read by its deadline, those beyond its threads left waiting
                        in the listen backlog), _HttpResponse,
                        _HttpStream (an event stream, from a _StreamSource), and
                        _StreamPump (every stream of a server on one thread)
    Web page            prompt_web(), prompt_web_async(), _Ending (what a page reads
                        and commits through: its own, or its ask), _WebPage (the
                        handlers and the form's actions; after the end, the 409 to
                        a second device, in words from Results; one tap: an
                        option's signed link, _TAP_PATH, its POST an answer and its
                        GET one button), _PageHost (where a page is served, as an
                        ask sees it, and its taps, _TapAction), each kind's entry
                        (_WEB_ENTRIES), its files (_WebFiles), a preview's
                        Markdown (_markdown_html), _WebSession (a page on its own
                        server: waiting, ending, the grace period's timer)
    In-chat view        the MCP Apps document (_view_document()), the page's form
                        drawn for it (also as a client's form, which the view
                        answers with the form's own answer), and the app-only
                        tool that checks what the person did there, files
                        attached included, as the page does
                        (_view_tool_result())
    Asks                _Ask (one batch put to a person by serve, outliving the call
                        that asked, and the one owner of its life: its fingerprint,
                        owner, what was entered, outcome, delivery, its record; its
                        page, form, view and calls are views of it), _AskOwner;
                        the store: _AskRecord (the one typed, versioned record a
                        store ever sees, written and read there alone), _AskStore, one subclass a backend, registered by
                        its --store scheme beside its code (_MemoryStore,
                        _SqliteStore, _RedisStore over _RedisConnection, askq's
                        own Redis client), where the first ending committed wins,
                        each keeping an ask's files once, beside its record; the
                        board: _AskBoard (a process's asks as objects over its
                        store: written through, read again when shared, a page
                        found by its token's digest), prompt_web(store=...)'s page
    Telling the person  --notify: _Notifier (the person's command, run when an ask
                        opens and every --remind minutes while it stays open: one
                        heap of what is due, a few threads that run it), the
                        message it reads (_Notifier.message()) and its environment,
                        each with the page's taps when it has them
    MCP server          _McpServer: python askq.py serve (calls wait on their ask:
                        forms, pages, late answers, progress notes; or, for a
                        client that polls, the ask is a task: _AskTask in its
                        record, shown by _task_view(), told of to a
                        _TaskListener); what it sends
                        is an _Outgoing (the message and where it belongs), which a
                        _Transport carries: _LineTransport over stdio; over HTTP
                        (serve --http), _McpHttp (the transport's rules), _McpSession,
                        _Router (routes by what the _Outgoing names, never by
                        reading the message again), _Exchange (one POST's share,
                        as its event stream)
    Command line        main()
"""

import dataclasses
import enum
import functools
import json
import json.scanner
import math
import os
import re
import sys
import time
import typing as _typing
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    ClassVar,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Match,
    Optional,
    Pattern,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

# Annotations that subscript a generic (``"Dict[str, Any]"``) are written as
# strings, everywhere but in the records' fields: building each distinct one
# at import is a cost every import pays (the README has the figures), and a
# string is only read by the type checker.  The records' fields stay types,
# because dataclasses reads a string annotation through sys.modules, where a
# module run from its source text may not be.

# ===========================================================================
# Vocabulary: public constants, bounds, errors and the data model
#
# Everything the other parts speak in.

__all__ = [
    "ANSWER_ERROR_REASONS",
    "CUSTOM_RESPONSE_LABEL",
    "HARNESSES",  # noqa: F822 (the module's __getattr__ gives it: every form registered, when asked)
    "MAX_ASK_ATTACHMENT_BYTES",
    "MAX_ATTACHMENTS",
    "MAX_ATTACHMENT_BYTES",
    "MAX_DEPTH",
    "MAX_OPTIONS",
    "MAX_PAYLOAD_BYTES",
    "MAX_QUESTIONS",
    "MAX_TEXT",
    "RECOMMENDED_SUFFIX",
    "TOOL_NAME",
    "AnswerError",
    "AnswerItem",
    "Attachment",
    "Outcome",
    "QuestionError",
    "QuestionInput",
    "QuestionItem",
    "QuestionOption",
    "QuestionOutput",
    "QuestionType",
    "ask",
    "assumed_answers",
    "collect_answers",
    "declined_text",
    "decode",
    "error_text",
    "from_elicitation",
    "harness_answers",
    "input_request",
    "main",
    "prompt",
    "prompt_async",
    "prompt_web",
    "prompt_web_async",
    "result_text",
    "to_elicitation",
    "tool_definition",
    "tool_description",
    "unavailable_text",
    "validate_and_normalize",
]
__version__ = "0.1.0"
TOOL_NAME = "ask_questions"

# Every UI adds this free-text row to a choice question, so no option may
# carry it: the option would be unreachable behind the UI's own row.
CUSTOM_RESPONSE_LABEL = "Personalize your response"
RECOMMENDED_SUFFIX = "(Recommended)"

# Bounds.  The model is advised 1-4 questions of 2-4 options; these sit far
# above that so a verbose model is never refused, yet keep a runaway one
# from making a UI draw thousands of rows or askq parse megabytes.
MAX_QUESTIONS = 16
MAX_OPTIONS = 32
MAX_TEXT = 4000
MAX_PAYLOAD_BYTES = 1024 * 1024

# A valid call nests four levels deep.  Some embedded interpreters (Pyodide)
# crash outright when json.loads recurses a few thousand levels, so deeper
# JSON text is refused before it is parsed.
MAX_DEPTH = 32
_NO_QUESTIONS = "No questions provided. Ask at least one question."
_SUFFIX_LENGTH = len(RECOMMENDED_SUFFIX)
_SUFFIX_FOLDED = RECOMMENDED_SUFFIX.lower()
_CUSTOM_FOLDED = CUSTOM_RESPONSE_LABEL.lower()

# How much of a question's text an error message quotes to name it.
_QUOTE_CHARS = 60
_T = TypeVar("_T")


class QuestionError(ValueError):
    """A question call (or an answer) that askq refuses.

    ``str(err)`` is written for the model that made the call: it names the
    question by its place in the call (``questions[1]``, 0-based, like the
    array the model sent) and by its text, says what is wrong and how to
    fix it.  ``index`` is that place, or None when the problem is with the
    call as a whole.

        >>> try:
        ...     askq.ask({"questions": [{"question": "Pick", "type": "choice"}]})
        ... except askq.QuestionError as err:
        ...     print(err.index, err)  # doctest: +ELLIPSIS
        0 questions[0] ("Pick") is a choice question but has no 'options'...
    """

    def __init__(self, message: str, index: "Optional[int]" = None) -> None:
        super().__init__(message)
        self.message = message
        self.index = index

    def placed(self, index: int, question: "Optional[str]" = None) -> "QuestionError":
        """This error with the place of its question in front, unless it has
        one: the helpers that read a field know the field, not the question."""
        if self.index is not None:
            return self
        where = f"questions[{index}]" if question is None else _where(index, question)
        return type(self)(f"{where}: {self.message}", index)


class AnswerError(QuestionError):
    """Answers that askq cannot read: the fault of the harness or the UI that
    collected them, not of the model's call.  error_text() of one does not
    tell the model that the person was not asked.

    ``reason`` is one word of ANSWER_ERROR_REASONS, and ``question_id`` the
    id of the question concerned (None when the answers as a whole are at
    fault), so that a UI can tell the person in its own words what to fix.
    """

    def __init__(
        self, message: str, index: "Optional[int]" = None, reason: str = "malformed",
        question_id: "Optional[str]" = None,
    ) -> None:
        super().__init__(message, index)
        self.reason = reason
        self.question_id = question_id


ANSWER_ERROR_REASONS = (
    "required", "unknown_option", "unknown_question", "ambiguous_question", "two_answers",
    "custom_without_text", "custom_not_allowed", "malformed", "not_a_number", "out_of_range",
    "attachment_empty", "attachment_type", "attachment_too_large", "too_many_attachments", "attachment_cut_off",
)


class QuestionType(str, enum.Enum):
    """The kind of a question, derived from its options and multi-select."""

    TEXT = "Text"
    SINGLE_CHOICE = "SingleChoice"
    MULTI_CHOICE = "MultiChoice"
    NUMBER = "Number"  # a number the person types, within the question's bounds

    is_choice: bool
    """Whether the question is answered by picking options."""
    is_number: bool

    def __init__(self, value: str) -> None:
        # Plain attributes of each member, not properties, nor members read
        # through the enum class: code reads them for every question, and a
        # read through the enum class is slow.
        self.is_choice = value in ("SingleChoice", "MultiChoice")
        self.is_number = value == "Number"


class Outcome(str, enum.Enum):
    """What became of the questions once a person was asked.

    A ``str`` enum: ``output.status == "answered"`` holds for
    ``Outcome.ANSWERED``.  Every text chosen by outcome is in _OUTCOME_WORDS.
    """

    ANSWERED = "answered"
    DECLINED = "declined"
    TIMED_OUT = "timed_out"
    UNAVAILABLE = "unavailable"
    FOLLOW_UP = "follow_up"  # the person asked for more questions before the assistant goes on


class _Record:
    """What the five records below share: the ``repr`` and ``==`` that
    dataclasses would write, written once.  Generating them, or an
    ``__init__``, for each record is a cost every import would pay, so each
    record writes its ``__init__`` out and dataclasses adds only its fields."""

    __dataclass_fields__: "ClassVar[Dict[str, Any]]"  # each subclass is a dataclass, for mypy

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{field.name}={getattr(self, field.name)!r}" for field in dataclasses.fields(self) if field.repr
        )
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Record) and other.__class__ is self.__class__:
            return self._compared() == other._compared()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # records change, as dataclasses' do

    def _compared(self) -> "Tuple[Any, ...]":
        return tuple(getattr(self, field.name) for field in dataclasses.fields(self) if field.compare)


@dataclass(init=False, repr=False, eq=False)
class QuestionOption(_Record):
    """One choice of a choice question.

    ``preview`` is longer text (often Markdown) that a UI shows beside the
    option while it is highlighted.  ``recommended`` marks, on a
    multi-choice question, an option the model recommends: every UI badges
    it and none preselects it (a single choice keeps its one recommendation
    in ``QuestionItem.recommended``).
    """

    label: str
    description: Optional[str] = None
    preview: Optional[str] = None
    recommended: bool = False

    def __init__(
        self, label: str, description: "Optional[str]" = None, preview: "Optional[str]" = None, recommended: bool = False,
    ) -> None:
        self.label = label
        self.description = description
        self.preview = preview
        self.recommended = recommended

    def to_dict(self) -> "Dict[str, Any]":
        data: Dict[str, Any] = {"label": self.label}
        if self.description is not None:
            data["description"] = self.description
        if self.preview is not None:
            data["preview"] = self.preview
        if self.recommended:
            data["recommended"] = True
        return data


@dataclass(init=False, repr=False, eq=False)
class QuestionItem(_Record):
    """One question, as the model sent it or as askq normalized it.

    After normalization, ``question_type`` and ``multi_select`` agree,
    ``id`` is set and unique in the batch, and ``recommended`` names the
    first option of a single-choice question (or is None).  A NUMBER
    question has ``minimum``, ``maximum``, ``step`` and ``unit`` (each may
    be None); ``default`` is the text a free-text or number entry starts
    with, never an answer unless the person confirms it; ``secret`` marks
    typed text that must not be shown back.

        >>> askq.QuestionItem.single_choice("Tabs or spaces?", ["Tabs", "Spaces"]).to_dict()
        ... # doctest: +NORMALIZE_WHITESPACE
        {'question': 'Tabs or spaces?', 'options': [{'label': 'Tabs'}, {'label': 'Spaces'}],
         'required': True, 'question_type': 'SingleChoice'}
    """

    question: str
    header: Optional[str] = None
    options: Optional[List[QuestionOption]] = None
    multi_select: bool = False
    purpose: Optional[str] = None
    required: bool = True
    question_type: QuestionType = QuestionType.TEXT
    id: str = ""
    recommended: Optional[str] = None
    placeholder: Optional[str] = None
    allow_custom: bool = True
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    step: Optional[float] = None
    unit: Optional[str] = None
    default: Optional[str] = None
    secret: bool = False

    def __init__(
        self, question: str, header: "Optional[str]" = None, options: "Optional[List[QuestionOption]]" = None,
        multi_select: bool = False, purpose: "Optional[str]" = None, required: bool = True,
        question_type: QuestionType = QuestionType.TEXT, id: str = "", recommended: "Optional[str]" = None,
        placeholder: "Optional[str]" = None, allow_custom: bool = True, minimum: "Optional[float]" = None,
        maximum: "Optional[float]" = None, step: "Optional[float]" = None, unit: "Optional[str]" = None,
        default: "Optional[str]" = None, secret: bool = False,
    ) -> None:
        # Written out so that the fields of typed entries, which most
        # questions leave at their defaults, cost a question nothing then:
        # an attribute never set reads as the class's default.
        self.question = question
        self.header = header
        self.options = options
        self.multi_select = multi_select
        self.purpose = purpose
        self.required = required
        self.question_type = question_type
        self.id = id
        self.recommended = recommended
        self.placeholder = placeholder
        self.allow_custom = allow_custom
        if minimum is not None or maximum is not None or step is not None or unit is not None:
            self.minimum, self.maximum, self.step, self.unit = minimum, maximum, step, unit
        if default is not None or secret:
            self.default, self.secret = default, secret

    @classmethod
    def text(cls, question: str) -> "QuestionItem":
        """A free-text question."""
        return cls(question)

    @classmethod
    def single_choice(cls, question: str, labels: "Iterable[str]") -> "QuestionItem":
        """A question answered by picking one of ``labels``."""
        options = [QuestionOption(label) for label in labels]
        return cls(question, options=options, question_type=QuestionType.SINGLE_CHOICE)

    @classmethod
    def multi_choice(cls, question: str, labels: "Iterable[str]") -> "QuestionItem":
        """A question answered by picking any number of ``labels``."""
        options = [QuestionOption(label) for label in labels]
        return cls(question, options=options, multi_select=True, question_type=QuestionType.MULTI_CHOICE)

    def to_dict(self) -> "Dict[str, Any]":
        data: Dict[str, Any] = {"question": self.question}
        if self.header is not None:
            data["header"] = self.header
        if self.options is not None:
            data["options"] = [option.to_dict() for option in self.options]
        if self.multi_select:
            data["multiSelect"] = True
        if self.purpose is not None:
            data["purpose"] = self.purpose
        data["required"] = self.required
        data["question_type"] = self.question_type.value
        if self.id:
            data["id"] = self.id
        if self.recommended is not None:
            data["recommended"] = self.recommended
        if self.placeholder is not None:
            data["placeholder"] = self.placeholder
        if not self.allow_custom:
            data["allowCustom"] = False
        for name in _TYPED_ENTRY_FIELDS:
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        if self.secret:
            data["secret"] = True
        return data


# The fields of a typed entry, in the order to_dict() writes them.
_TYPED_ENTRY_FIELDS = ("minimum", "maximum", "step", "unit", "default")


# What a file attached to an answer may be, told by its first bytes alone
# (never by its name or what the browser says): (media type, what the
# bytes start with, where).  Anything else (HTML, SVG, an archive, a
# program) is refused; text is decided by _is_plain_text().
_MEDIA_SIGNATURES = (
    ("image/png", b"\x89PNG\r\n\x1a\n", 0),
    ("image/jpeg", b"\xff\xd8\xff", 0),
    ("image/gif", b"GIF87a", 0),
    ("image/gif", b"GIF89a", 0),
    ("image/webp", b"WEBP", 8),
    ("application/pdf", b"%PDF-", 0),
)
_TEXT_TYPE = "text/plain"
_IMAGE_TYPES = frozenset(("image/png", "image/jpeg", "image/gif", "image/webp"))

# Text that a browser would draw as a page or a picture: a tag at its start,
# or anywhere one of the elements that run script or hold another document.
_MARKUP = re.compile(
    rb"\A(?:\xef\xbb\xbf)?\s*<[A-Za-z!?/]"
    rb"|<\s*(?:!doctype|html|head|body|script|svg|iframe|object|embed|\?xml|style)[\s/>]",
    re.IGNORECASE,
)

_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")

# Bounds on what a person attaches, which a server may set otherwise: files
# on one question, bytes in one file, bytes in all files of one ask.
MAX_ATTACHMENTS = 5
MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024
MAX_ASK_ATTACHMENT_BYTES = 25 * 1024 * 1024
# A file's name as a person's device gave it, bounded; never a path.
_NAME_CHARS = 200


def _media_type(data: bytes) -> "Optional[str]":
    """The media type of a file as its bytes say, or None when it is none
    that askq takes."""
    for media_type, signature, offset in _MEDIA_SIGNATURES:
        if data.startswith(signature, offset) and (offset == 0 or data.startswith(b"RIFF")):
            return media_type
    return _TEXT_TYPE if _is_plain_text(data) else None


def _is_plain_text(data: bytes) -> bool:
    """Whether the bytes are text a person wrote: UTF-8, with no control
    character but line breaks and tabs (a binary file has them, a NUL
    above all), and no markup."""
    if _BINARY_BYTES.search(data) is not None or _MARKUP.search(data) is not None:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _file_name(name: Any) -> str:
    """A file's name made safe to keep and show: its last path part, no
    control characters, bounded; "attachment" when nothing is left."""
    text = name if isinstance(name, str) else ""
    text = re.split(r"[/\\]", text)[-1]
    text = "".join(char for char in text if char.isprintable()).strip()
    return text[:_NAME_CHARS] or "attachment"


@dataclass(init=False, repr=False, eq=False)
class Attachment(_Record):
    """A file the person attached to an answer: a picture from a phone's
    camera, a screenshot, a PDF or a text file.

    Built from the file's name and bytes alone: ``media_type`` is read
    from the bytes (PNG, JPEG, GIF, WebP, PDF or plain text), never from
    the name; ``size`` and ``sha256`` are the bytes'.  Any other file, and
    an empty one, raises AnswerError.  ``to_dict()`` leaves the bytes out.
    """

    name: str
    media_type: str
    size: int
    sha256: str
    data: bytes = dataclasses.field(repr=False)

    def __init__(self, name: str, data: bytes) -> None:
        import hashlib

        data = bytes(data)
        media_type = _media_type(data) if data else None
        if media_type is None:
            reason = "attachment_empty" if not data else "attachment_type"
            raise AnswerError(_ATTACHMENT_WORDS[reason].format(name=_quoted(_file_name(name))), reason=reason)
        self.name, self.media_type, self.size = _file_name(name), media_type, len(data)
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.data = data

    @property
    def is_image(self) -> bool:
        """Whether a UI may draw it as a picture."""
        return self.media_type in _IMAGE_TYPES

    def to_dict(self) -> "Dict[str, Any]":
        return {"name": self.name, "media_type": self.media_type, "size": self.size, "sha256": self.sha256}


# Why a file is refused, for the model and the harness (the page has its
# own words, by the same reasons).
_ATTACHMENT_WORDS = {
    "attachment_cut_off": "the file {name} arrived cut off (not whole); attach it again.",
    "attachment_empty": "the file {name} is empty; attach a file with something in it.",
    "attachment_type": (
        "the file {name} is none of the types an answer takes (PNG, JPEG, GIF, WebP, PDF or plain"
        " text, read from its bytes): attach a picture, a PDF or a text file."
    ),
}


@dataclass(init=False, repr=False, eq=False)
class AnswerItem(_Record):
    """The user's answer to the question with this ``id``.

    ``answer`` is text the user typed, ``selected`` the option labels they
    picked.  ``assumed`` is true when a policy filled the answer in (see
    assumed_answers()), not the user.  ``note`` is a remark the user added,
    never an answer by itself.  ``unanswered`` says why a question the user
    saw has no answer: "skipped" (an optional question passed over),
    "you_decide" (left to the assistant) or "discuss" (to talk over first).
    ``attachments`` are files the user attached (Attachment), kept beside
    whatever the question holds, like a note.
    """

    id: str
    answer: Optional[str] = None
    selected: Optional[List[str]] = None
    assumed: bool = False
    note: Optional[str] = None
    unanswered: Optional[str] = None
    attachments: Tuple[Attachment, ...] = dataclasses.field(default=(), repr=False)

    def __init__(
        self, id: str, answer: "Optional[str]" = None, selected: "Optional[List[str]]" = None, assumed: bool = False,
        note: "Optional[str]" = None, unanswered: "Optional[str]" = None, attachments: "Iterable[Attachment]" = (),
    ) -> None:
        self.id = id
        self.answer = answer
        self.selected = selected
        self.assumed = assumed
        self.note = note
        self.unanswered = unanswered
        if attachments:  # most answers have none: the class's default serves
            self.attachments = tuple(attachments)

    def __repr__(self) -> str:
        shown = super().__repr__()
        return f"{shown[:-1]}, attachments={list(self.attachments)!r})" if self.attachments else shown

    def to_dict(self) -> "Dict[str, Any]":
        selected = None if self.selected is None else list(self.selected)
        data: Dict[str, Any] = {"id": self.id, "answer": self.answer, "selected": selected}
        if self.assumed:
            data["assumed"] = True
        if self.note is not None:
            data["note"] = self.note
        if self.unanswered is not None:
            data["unanswered"] = self.unanswered
        if self.attachments:
            data["attachments"] = [attachment.to_dict() for attachment in self.attachments]
        return data


@dataclass(init=False, repr=False, eq=False)
class QuestionInput(_Record):
    """A batch of questions: the arguments of one tool call.

    ``title`` and ``purpose`` are the batch's own heading and why it is
    asked, when the call gives them beside its questions.
    """

    questions: List[QuestionItem]
    title: Optional[str] = None
    purpose: Optional[str] = None

    def __init__(
        self, questions: "List[QuestionItem]", title: "Optional[str]" = None, purpose: "Optional[str]" = None,
    ) -> None:
        self.questions = questions
        if title is not None or purpose is not None:  # most calls have neither: the class's defaults serve
            self.title, self.purpose = title, purpose

    def to_dict(self) -> "Dict[str, Any]":
        data: Dict[str, Any] = {"questions": [item.to_dict() for item in self.questions]}
        _put_heading(data, self)
        return data


@dataclass(init=False, repr=False, eq=False)
class QuestionOutput(_Record):
    """The normalized questions and, once someone was asked, the outcome.

    ``status`` is None until a person was asked; then "answered",
    "declined" (dismissed), "timed_out" or "unavailable" (nobody could be
    asked).  ``answers`` holds what the person answered, also the part
    answered before a dismissal or a timeout.  ``title`` and ``purpose``
    are the batch's, as in QuestionInput: every UI shows them above the
    questions.
    """

    questions: List[QuestionItem]
    answers: List[AnswerItem]
    status: Optional[str] = None
    title: Optional[str] = None
    purpose: Optional[str] = None

    def __init__(
        self, questions: "List[QuestionItem]", answers: "List[AnswerItem]", status: "Optional[str]" = None,
        title: "Optional[str]" = None, purpose: "Optional[str]" = None,
    ) -> None:
        self.questions, self.answers, self.status = questions, answers, status
        if title is not None or purpose is not None:
            self.title, self.purpose = title, purpose

    def to_dict(self) -> "Dict[str, Any]":
        """The JSON form; answers in any form collect_answers() takes are
        checked first, and only QuestionError is ever raised."""
        try:
            questions = [item.to_dict() for item in self.questions]
        except (AttributeError, TypeError):
            raise AnswerError("Expected the normalized questions: a QuestionOutput of QuestionItem.") from None
        data: Dict[str, Any] = {"questions": questions, "answers": _answer_dicts(self)}
        if self.status is not None:
            data["status"] = getattr(self.status, "value", self.status)
        _put_heading(data, self)
        return data

    def to_json(self, indent: "Optional[int]" = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)


# ===========================================================================
# Shared helpers
#
# Naming a question in a message, making model text safe to show, display
# widths, and the rules that every way of asking shares.

# JSON leaves these unescaped, yet some readers break lines at the first
# three, and the bidirectional controls reorder what a person reads.
_QUOTE_ESCAPED = (0x85, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))


# How a JSON value is named in a message; bool before int, which it subclasses.
_JSON_TYPE_NAMES = (
    (type(None), "null"), (bool, "a boolean"), ((int, float), "a number"), (str, "a string"), (list, "an array"),
    (dict, "an object"),
)


def _json_type(value: Any) -> str:
    """How a JSON value is named in a message: 'a number', 'null', ..."""
    for types, name in _JSON_TYPE_NAMES:
        if isinstance(value, types):
            return name
    return f"a Python {type(value).__name__}"


@functools.lru_cache(maxsize=None)
def _json_encoder() -> json.JSONEncoder:
    """One encoder that keeps non-ASCII text readable, made on first use."""
    return json.JSONEncoder(ensure_ascii=False)


def _quoted(text: str) -> str:
    """Text quoted as a JSON string: unambiguous, and one line whatever it holds."""
    quoted = _json_encoder().encode(text)
    return quoted if quoted.isascii() else quoted.translate(_quote_escapes())


@functools.lru_cache(maxsize=None)
def _quote_escapes() -> "Dict[int, str]":
    return {code: f"\\u{code:04x}" for code in _QUOTE_ESCAPED}


def _where(index: int, question: str) -> str:
    """Name a question in a message: its place in the call and its text."""
    if len(question) > _QUOTE_CHARS:
        question = question[: _QUOTE_CHARS - 3].rstrip() + "..."
    return f"questions[{index}] ({_quoted(question)})"


def _refused(index: int, item: QuestionItem, reason: str, problem: str) -> AnswerError:
    """The refusal of one question's answer: placed, with its reason and id."""
    return AnswerError(f"{_where(index, item.question)}{problem}", index, reason, item.id)


# What the prompt shows of model-written or user-typed text: control
# characters and bidirectional overrides could clear the screen, move the
# cursor, recolour or reorder what the user reads, so they are shown as
# escapes.  Lone surrogates, which no terminal encoding can write, too.
_UNSAFE_SOURCE = r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def _visible(text: str) -> str:
    """Text safe to print on a terminal: unsafe characters become escapes."""
    unsafe = _pattern(_UNSAFE_SOURCE)
    return unsafe.sub(_escape, text) if unsafe.search(text) else text


def _escape(match: "Match[str]") -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _cells(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(_char_cells(char) for char in text)


def _char_cells(char: str) -> int:
    import unicodedata

    if unicodedata.combining(char) or char in "\u200b\u200d\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _cut_cells(text: str, start: int, room: int) -> str:
    """The part of ``text`` from cell ``start`` that fits in ``room`` cells."""
    out, used = [], 0
    for char in text:
        size = _char_cells(char) if not char.isascii() else 1
        if used >= start and used + size - start <= room:
            out.append(char)
        used += size
    return "".join(out)


def _clipped(text: str, width: int) -> str:
    return text if _cells(text) <= width else _cut_cells(text, 0, width - 1) + "\u2026"


def _wrap(text: str, width: int, first: str, rest: str) -> "List[str]":
    """Words wrapped to ``width`` cells, the first line after ``first`` and
    the others after ``rest`` (a hanging indent); line breaks are kept."""
    lines: List[str] = []
    lead = first
    for paragraph in text.split("\n"):
        line, used = lead, _cells(lead)
        for word in paragraph.split(" "):
            size = _cells(word)
            if used > _cells(lead) and used + 1 + size > width:
                lines.append(line)
                lead = rest
                line, used = lead, _cells(lead)
            while used + size > width and size > 1:  # a word longer than a line
                room = max(width - used, 1)
                piece = _cut_cells(word, 0, room) or word[0]
                lines.append(line + piece)
                word = word[len(piece):]
                size = _cells(word)
                lead = rest
                line, used = lead, _cells(lead)
            separator = " " if used > _cells(lead) else ""
            line, used = line + separator + word, used + len(separator) + size
        lines.append(line)
        lead = rest
    return lines


def _fileno(stream: Any) -> "Optional[int]":
    """The descriptor under a stream that select() can wait on, or None."""
    try:
        fd = int(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return None
    if os.name == "nt":  # select() there takes sockets only
        return None
    return fd


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# A plain list at run time, as _HandlerTable below is a plain dict.
if _typing.TYPE_CHECKING:
    _ItemList = List[QuestionItem]
else:
    _ItemList = list


class _Questions(_ItemList):
    """The questions a UI asks, and the batch's own title and purpose, which
    every UI shows above them: the heading travels with the list that each
    UI's parts already pass along."""

    title: "Optional[str]" = None
    purpose: "Optional[str]" = None


def _question_list(questions: Any) -> "List[QuestionItem]":
    items = questions.questions if isinstance(questions, QuestionOutput) else questions
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, QuestionItem) for i in items):
        raise AnswerError("Expected the normalized questions: a QuestionOutput or a list of QuestionItem.")
    batch = _Questions(items)
    if isinstance(questions, QuestionOutput):
        batch.title, batch.purpose = questions.title, questions.purpose
    elif isinstance(items, _Questions):
        batch.title, batch.purpose = items.title, items.purpose
    return batch


def _heading(items: "Sequence[QuestionItem]") -> "Tuple[Optional[str], Optional[str]]":
    """The batch's title and purpose, as every UI shows them above the questions."""
    return (items.title, items.purpose) if isinstance(items, _Questions) else (None, None)


def _put_heading(data: "Dict[str, Any]", batch: "Union[QuestionInput, QuestionOutput]") -> None:
    """A batch's title and purpose into its JSON form, each only when set."""
    if batch.title is not None:
        data["title"] = batch.title
    if batch.purpose is not None:
        data["purpose"] = batch.purpose


def _position(key: Any) -> "Optional[int]":
    """The 0-based position a key names: an int, or its digits as a string
    (the forms that key entries by place); None for anything else."""
    if isinstance(key, int) and not isinstance(key, bool):
        return key if key >= 0 else None
    if isinstance(key, str) and key.isascii() and key.isdigit() and len(key) < 6:
        return int(key)
    return None


# The recommended mark in the languages models answer in, folded; it may
# stand before or after the label, in brackets of three kinds or after a dash.
# The model's own endorsements mark it too; words that give the option to
# the person ("your earlier choice", "你原本的倾向") are no mark.
_RECOMMENDED_WORDS = frozenset(word.lower() for word in (
    "Recommended", "推荐", "推薦", "推奨", "おすすめ", "권장", "추천", "Recomendado", "Recomendada",
    "Recommandé", "Recommandée", "Empfohlen", "Consigliato", "Consigliata", "Aanbevolen", "Zalecane",
    "Рекомендуется", "Рекомендовано", "Önerilen",
    "I recommend", "my recommendation", "my pick", "suggested", "preferred",
    "我主张", "我推荐", "我建议", "建议", "首选",
    "我提的", "我的建议", "my suggestion", "I'd go with", "I\u2019d go with",
))
_MARK_BRACKETS = {"(": ")", "[": "]", "\uff08": "\uff09", "\u3010": "\u3011"}
_MARK_DASHES = (" - ", " \u2014 ", " \u2013 ", "\u2014", "\u2013")
_MARK_OPENERS = {close: open_ for open_, close in _MARK_BRACKETS.items()}


def _without_mark(label: str) -> "Optional[str]":
    """A trimmed label without its one recommended mark, in any of the forms
    models write it: "X (Recommended)", "(Recommended) X",
    "X [recommended]", "X（推荐）", "X - Recommended"; None when it has none,
    or when nothing would remain to show."""
    if label[-_SUFFIX_LENGTH:].lower() == _SUFFIX_FOLDED:  # the form the tool asks for, first
        return label[:-_SUFFIX_LENGTH].rstrip() or None
    last, first = label[-1:], label[:1]
    if last in _MARK_OPENERS:
        start = label.rfind(_MARK_OPENERS[last])
        if start > 0 and label[start + 1: -1].strip().lower() in _RECOMMENDED_WORDS:
            return label[:start].rstrip() or None
    if first in _MARK_BRACKETS:
        end = label.find(_MARK_BRACKETS[first])
        if end > 0 and label[1:end].strip().lower() in _RECOMMENDED_WORDS:
            return label[end + 1:].lstrip() or None
    if " - " in label or "\u2014" in label or "\u2013" in label:
        for dash in _MARK_DASHES:
            head, found, tail = label.rpartition(dash)
            if found and tail.strip().lower() in _RECOMMENDED_WORDS:
                return head.rstrip() or None
    return None


def _may_hold_mark(label: str) -> bool:
    """Whether a label can carry a recommended mark at all: every form has a
    bracket, a dash or a character past ASCII.  Most labels have none, so
    one look spares them the call to _without_mark()."""
    return "(" in label or "[" in label or "-" in label or not label.isascii()


def _clean_label(label: str) -> str:
    """Trim a label and take off its one recommended mark."""
    label = label.strip()
    return _without_mark(label) or label


# The options of a Yes/No question, and the letters that name them.
_YES_NO_LABELS = ("Yes", "No")
_YES_NO_FOLDED = tuple(label.lower() for label in _YES_NO_LABELS)
_YES_NO_LETTERS = {label[0]: label for label in _YES_NO_FOLDED}


def _are_yes_no(options: "Sequence[QuestionOption]") -> bool:
    """Whether a question's options are exactly Yes and No, in any case and order."""
    return sorted(option.label.lower() for option in options) == sorted(_YES_NO_FOLDED)


_Handler = TypeVar("_Handler", bound="Callable[..., Any]")
# A plain dict at run time: subclassing a subscripted generic is a cost
# every import would pay, and only the checker reads the parameters.
if _typing.TYPE_CHECKING:
    _HandlerTable = Dict[Any, Any]
else:
    _HandlerTable = dict


class _Registry(_HandlerTable):
    """Names to handlers, each put in by ``on`` beside its handler (as
    bottle's routes are), so that a name is written once, where its handler
    is, and a search for the handler finds its callers."""

    def on(self, *names: Any) -> "Callable[[_Handler], _Handler]":
        def register(handler: _Handler) -> _Handler:
            for name in names:
                self[name] = handler
            return handler
        return register


def _yes_or_no(options: "Sequence[QuestionOption]", letter: str) -> str:
    """The label a "y" or "n" names on a question of Yes and No."""
    option = _option_named(options, letter)
    assert option is not None, "called for a Yes/No question only"
    return option.label


def _gives_answer(answer: "Optional[AnswerItem]") -> bool:
    """Whether an answer answers: a pick or typed text (a skip, a note alone
    or nothing at all does not)."""
    return answer is not None and (answer.answer is not None or bool(answer.selected))


class _StateWords:
    """One thing a person can say of a question instead of answering it
    (AnswerItem.unanswered), and every way it is said: the UIs' label, the
    line the model reads, the entry the harness forms write for it."""

    __slots__ = ("label", "marker", "name", "result", "settles")

    def __init__(self, name: str, label: str, result: str, marker: str, settles: bool) -> None:
        self.name = name
        self.label = label  # the person's words, in every UI
        self.result = result  # the line under the question in result_text()
        self.marker = marker  # an entry of a harness form's list, read back as the state
        self.settles = settles  # whether it meets the required check: the person's explicit word


_SKIPPED = "skipped"
_YOU_DECIDE = "you_decide"
_DISCUSS = "discuss"
_UNREACHED = "unreached"  # no state: what a harness form writes for a question the outcome left
_STATES = {
    state.name: state
    for state in (
        _StateWords(
            _SKIPPED, "Skip", "skipped: the question was optional and the user gave no answer", "(skipped)", False,
        ),
        _StateWords(
            _YOU_DECIDE, "You decide",
            "left to you: the user left this to you: choose, and say in your reply what you chose and why",
            "(left to you: choose, and say what you chose)", True,
        ),
        _StateWords(
            _DISCUSS, "Let's discuss",
            "to discuss: the user wants to discuss this before deciding: do not decide it yourself;"
            " take it up with them in your reply",
            "(the user wants to discuss this first)", True,
        ),
    )
}


class _Row:
    """One row of a choice question, as every way of asking draws it: an
    option to pick, or the row for typing an answer of one's own.  Each
    interface asks the row what it is (``option``, ``takes_text``); none
    finds a row by its text."""

    __slots__ = ("label", "option")
    takes_text = False

    def __init__(self, label: str, option: "Optional[QuestionOption]" = None) -> None:
        self.label = label
        self.option = option

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r})"


class _CustomRow(_Row):
    """The row for typing, CUSTOM_RESPONSE_LABEL: the same on every question."""

    __slots__ = ()
    takes_text = True


_CUSTOM_ROW = _CustomRow(CUSTOM_RESPONSE_LABEL)
# What a text an answer holds can pick: an option, or the row for typing.
_Pick = Union[QuestionOption, _CustomRow]
# A free-text question's one row in the dialog: the line being typed.
_TYPING_ROW = _CustomRow("")


def _question_rows(item: QuestionItem) -> "List[_Row]":
    """The rows every way of asking shows a question (line prompt, dialog,
    web page, MCP form): its options, then the row for typing, unless the
    call said ``allow_custom`` false.  A free-text question has no rows: it
    is one text field."""
    rows = [_Row(option.label, option) for option in item.options or ()]
    if rows and item.allow_custom:
        rows.append(_CUSTOM_ROW)
    return rows


def _is_recommended(item: QuestionItem, row: _Row) -> bool:
    """Whether a row carries the recommended badge: a single choice's one
    recommendation, or a multi-choice option marked so."""
    option = row.option
    return option is not None and (option.recommended or option.label == item.recommended)


def _names_custom_row(text: str) -> bool:
    """Whether a string is a pick of the row for typing (any case).  Only
    this, and normalization on labels it has already folded, compare a text
    with CUSTOM_RESPONSE_LABEL."""
    return text.strip().lower() == _CUSTOM_FOLDED


def _option_named(options: "Sequence[QuestionOption]", text: str) -> "Optional[QuestionOption]":
    """The option a string names: the one naming rule, wherever a text must
    name an option (answers, the prompts, forms read back, the recommended
    field).  Trimmed, without one recommended mark, it equals a label exactly,
    else without case; on a question whose options are exactly Yes and No,
    "y" and "n" name them.

        >>> options = [askq.QuestionOption("Postgres"), askq.QuestionOption("SQLite")]
        >>> askq._option_named(options, " postgres (Recommended)").label
        'Postgres'
    """
    cleaned = _clean_label(text)
    for option in options:
        if option.label == cleaned:
            return option
    folded = cleaned.lower()
    for option in options:
        if option.label.lower() == folded:
            return option
    letter = _YES_NO_LETTERS.get(folded)
    if letter is not None and _are_yes_no(options):
        return next(option for option in options if option.label.lower() == letter)
    return None


def _blank(text: str) -> bool:
    """Whether typed text says nothing: only whitespace and invisible format
    characters (a zero-width space alone never answers a question)."""
    if not text.strip():
        return True
    if text.isascii():
        return False
    import unicodedata

    return all(char.isspace() or unicodedata.category(char) == "Cf" for char in text)


def _custom_text(
    item: "QuestionItem", text: "Optional[str]", custom_picked: bool, options_picked: bool,
) -> "Tuple[Optional[str], Optional[str]]":
    """Text typed in a choice question's field for the custom row, as
    (typed answer, note): it is never dropped.  On a multi choice it is the
    typed part beside the picks; on a single choice it is the answer when
    the row or nothing else is picked, and the question's note when another
    option is (the person picked that one and said something about it)."""
    if item.question_type is QuestionType.MULTI_CHOICE or custom_picked or not options_picked:
        return text, None
    return None, text


def _with_note(note: "Optional[str]", more: "Optional[str]") -> "Optional[str]":
    """A note with more words for it after it, on a line of their own."""
    if more is None or _blank(more):
        return note
    return more.strip() if note is None or _blank(note) else f"{note.strip()}\n{more.strip()}"


def _shown_answer(item: QuestionItem, answer: "Optional[AnswerItem]", lines: bool = False) -> str:
    """An answer as the person reads it back (the dialog's review and summary,
    the page after sending): picks, then typed text in quotes as typed (a
    number as the model reads it, a secret's as "(hidden)"), then the note;
    safe to print, but not yet HTML-escaped.  Line breaks are kept only
    where ``lines`` says the reader shows them."""
    if answer is None:
        return "(not answered)"
    answer = _as_read(item, answer)
    parts = [_visible(label) for label in answer.selected or ()]
    if answer.answer is not None:
        parts.append("(hidden)" if item.secret else _said(answer.answer, lines))
    shown = ", ".join(parts) or "(skipped)"
    if answer.note is not None:
        shown += f"; note: {_said(answer.note, lines)}"
    return shown


def _said(text: str, lines: bool = False) -> str:
    """Text the person typed, read back to them in quotes exactly as they
    typed it (never a JSON escape), safe to print; on one line unless
    ``lines``."""
    shown = _visible(text)
    return f'"{shown if lines else shown.replace(chr(10), " / ")}"'


def _as_read(item: QuestionItem, answer: AnswerItem) -> AnswerItem:
    """An answer as the model reads it: a number in its one written form
    (when it is one the question takes), with its unit after it."""
    typed = answer.answer
    if typed is None or not item.question_type.is_number:
        return answer
    if _number_problem(item, typed) is None:
        answer = dataclasses.replace(answer, answer=_number_written(item, typed))
    return answer if item.unit is None else _with_unit(answer, item.unit)


# How often a loop that waits for a person looks up from waiting: the
# dialog for a new terminal size, the servers for an idle page.
_POLL_SECONDS = 0.25


# ===========================================================================
# The tool shown to the model
#
# tool_description() and tool_definition(): the schema and an example call,
# read from beside the module when they are askq's own, else built in.

_TOOL_DESCRIPTION = (
    "Ask the user one or more questions and wait for their answers. Put every"
    " question you need into this one call: each call interrupts the user, so"
    " batch them. Use 'purpose' to say why you need each answer; it helps the"
    " user answer well.\n\n"
    "Each question has:\n"
    "- question: the full question, clear and specific, ending with a question"
    " mark.\n"
    "- header: a very short tag shown beside it (at most 12 characters), such"
    " as \"Database\" or \"Auth method\".\n"
    "- options: 2-4 distinct choices, each {\"label\": 1-5 words, \"description\":"
    " what choosing it means or costs}. Leave 'options' out to ask for free"
    " text.\n"
    "- multiSelect: true when the user may pick several options; false (the"
    " default) when the choices exclude each other.\n"
    "- purpose: why you need the answer.\n"
    "- required: false when the user may skip the question (default true).\n\n"
    "The user can always type their own answer instead of picking one, so never"
    " add an 'Other' option of your own. To recommend an option, put it first"
    " and end its label with \" (Recommended)\".\n\n"
    "Do not ask what you can find out yourself from the code, the files or the"
    " conversation: ask only when you need the user's own decision. If a call"
    " ends before the user answers, it may be made again with the same questions"
    " to collect their answers."
)

# Built-in copies of schema.json and example_args.json, which override them
# when they stand beside this file; a test keeps the copies equal.
_BUILTIN_SCHEMA = """\
{
  "type": "object",
  "properties": {
    "questions": {
      "type": "array",
      "description": "The questions to ask, 1-4 of them, all in this one call.",
      "minItems": 1,
      "maxItems": 4,
      "items": {
        "type": "object",
        "properties": {
          "question": {
            "type": "string",
            "description": "The full question to show the user: clear, specific, ending with a question mark. For multiSelect, phrase it so several answers fit, e.g. \\"Which checks should run?\\""
          },
          "header": {
            "type": "string",
            "description": "A very short tag shown beside the question, at most 12 characters, e.g. \\"Database\\" or \\"Auth method\\"."
          },
          "options": {
            "type": "array",
            "description": "2-4 distinct choices. Leave out for a free-text question. Never add an 'Other' option: the user can always type their own answer. To recommend an option, put it first and end its label with \\" (Recommended)\\".",
            "items": {
              "type": "object",
              "properties": {
                "label": {
                  "type": "string",
                  "description": "What the user sees and picks: 1-5 words."
                },
                "description": {
                  "type": "string",
                  "description": "What choosing this option means, or what it costs."
                }
              },
              "required": ["label"]
            }
          },
          "multiSelect": {
            "type": "boolean",
            "default": false,
            "description": "true when the user may pick several options; false when the choices exclude each other."
          },
          "purpose": {
            "type": "string",
            "description": "Why you need this answer; it helps the user answer well."
          },
          "required": {
            "type": "boolean",
            "default": true,
            "description": "false when the user may skip this question."
          }
        },
        "required": ["question"]
      }
    }
  },
  "required": ["questions"]
}
"""
_BUILTIN_EXAMPLE_ARGS = """\
{
  "questions": [
    {
      "question": "Which database should the new service use?",
      "header": "Database",
      "purpose": "The schema, the migrations and the test setup depend on it.",
      "options": [
        {"label": "PostgreSQL (Recommended)", "description": "Same as the other services; needs a server"},
        {"label": "SQLite", "description": "One file and no server; fine for a single instance"}
      ]
    },
    {
      "question": "Which checks should run before every commit?",
      "header": "Checks",
      "multiSelect": true,
      "options": [
        {"label": "Unit tests", "description": "About 20 seconds"},
        {"label": "Type check", "description": "mypy in strict mode"},
        {"label": "Lint", "description": "ruff, under a second"}
      ]
    },
    {
      "question": "What should the service be called?",
      "header": "Name",
      "purpose": "Used for the package, the container image and the logs.",
      "required": false
    }
  ]
}
"""

# Where each model API wants the JSON Schema of a tool's arguments.
_PROVIDER_SCHEMA_KEYS = {
    "mcp": "inputSchema",
    "openai": "parameters",
    "openai-responses": "parameters",
    "anthropic": "input_schema",
    "gemini": "parametersJsonSchema",
}
_STRICT_PROVIDERS = ("openai", "openai-responses", "anthropic")

# Keywords strict mode takes everywhere; the rest (defaults, bounds) is dropped.
_STRICT_KEYWORDS = ("type", "description", "enum")
_BUILTIN_RESOURCES = {"schema.json": _BUILTIN_SCHEMA, "example_args.json": _BUILTIN_EXAMPLE_ARGS}
_resource_cache: "Dict[str, str]" = {}


def tool_description() -> "Dict[str, Any]":
    """The tool as shown to the model: name, description, schema, an example call.

        >>> sorted(askq.tool_description())
        ['description', 'exampleArgs', 'inputSchema', 'name']
    """
    return {
        "name": TOOL_NAME,
        "description": _TOOL_DESCRIPTION,
        "inputSchema": json.loads(_resource_text("schema.json")),
        "exampleArgs": json.loads(_resource_text("example_args.json")),
    }


def tool_definition(provider: str = "mcp", strict: bool = False) -> "Dict[str, Any]":
    """The tool in the shape a model API wants it.

    ``provider`` is one of "mcp" (an MCP Tool), "openai" (Chat Completions),
    "openai-responses" (Responses API), "anthropic" (Messages API) or
    "gemini" (a function declaration).  ``strict=True`` gives, for OpenAI's
    two APIs, the schema of strict function calling: every object closed,
    every property required, optional ones nullable; calls made under it
    (nulls, empty lists) decode to the same questions.  For "anthropic" it
    gives ``strict: true`` and a schema that strict tool use takes: every
    object closed, no bounds it does not take (``maxItems``), no type arrays.

        >>> askq.tool_definition("anthropic")["input_schema"]["required"]
        ['questions']
        >>> sorted(askq.tool_definition("openai")["function"])
        ['description', 'name', 'parameters']
        >>> askq.tool_definition("openai-responses", strict=True)["parameters"]["additionalProperties"]
        False
    """
    schema_key = _PROVIDER_SCHEMA_KEYS.get(provider)
    if schema_key is None:
        known = ", ".join(_PROVIDER_SCHEMA_KEYS)
        raise ValueError(f"Unknown provider {provider!r}; the known providers are: {known}.")
    if strict and provider not in _STRICT_PROVIDERS:
        raise ValueError(
            f"The provider {provider!r} has no strict mode; strict=True is for"
            f" {' and '.join(map(repr, _STRICT_PROVIDERS))}."
        )
    schema = json.loads(_resource_text("schema.json"))
    if strict:
        schema = _anthropic_strict_schema(schema) if provider == "anthropic" else _strict_schema(schema, True)
    function = {"name": TOOL_NAME, "description": _TOOL_DESCRIPTION, schema_key: schema}
    if strict and provider == "anthropic":
        return {**function, "strict": True}
    if provider == "openai":
        return {"type": "function", "function": {**function, "strict": True} if strict else function}
    if provider == "openai-responses":
        return {"type": "function", **function, "strict": strict}
    return function


# What Anthropic's strict tool use takes of a schema: no bounds on lengths or
# counts (minItems only 0 or 1), every object closed.  Optional properties
# stay optional, and no type is an array (its SDK's schema helper fails on one).
_ANTHROPIC_STRICT_KEYWORDS = ("type", "description", "enum", "required")


def _anthropic_strict_schema(schema: "Dict[str, Any]") -> "Dict[str, Any]":
    strict = {key: value for key, value in schema.items() if key in _ANTHROPIC_STRICT_KEYWORDS}
    if schema.get("minItems") in (0, 1):
        strict["minItems"] = schema["minItems"]
    if schema.get("type") == "object":
        strict["properties"] = {name: _anthropic_strict_schema(value) for name, value in schema.get("properties", {}).items()}
        strict["additionalProperties"] = False
    if "items" in schema:
        strict["items"] = _anthropic_strict_schema(schema["items"])
    return strict


def _strict_schema(schema: "Dict[str, Any]", required: bool) -> "Dict[str, Any]":
    """A schema as OpenAI's strict mode takes it: objects closed, every
    property required (the optional ones nullable), only the keywords strict
    mode accepts, the descriptions kept."""
    strict = {key: value for key, value in schema.items() if key in _STRICT_KEYWORDS}
    if schema.get("type") == "object":
        properties = schema.get("properties", {})
        needed = set(schema.get("required", ()))
        strict["properties"] = {name: _strict_schema(value, name in needed) for name, value in properties.items()}
        strict["required"] = list(properties)
        strict["additionalProperties"] = False
    if "items" in schema:
        strict["items"] = _strict_schema(schema["items"], True)
    if not required:
        strict["type"] = [strict["type"], "null"]
    return strict


def _resource_text(name: str) -> str:
    """A JSON file from beside this module, read once, when it is askq's own;
    the built-in copy when it is absent or someone else's."""
    text = _resource_cache.get(name)
    if text is None:
        text = _read_beside_module(name)
        if text is not None and not _is_own_resource(name, text):
            import warnings

            warnings.warn(
                f"askq: {name} beside askq.py is not askq's own (its {_RESOURCE_SHAPES[name]});"
                " the built-in copy is used instead.",
                RuntimeWarning,
                stacklevel=2,
            )
            text = None
        _resource_cache[name] = text = _BUILTIN_RESOURCES[name] if text is None else text
    return text


# What a file beside the module must be to count as askq's own: people
# vendor askq.py into folders that hold a schema.json of their own.
_RESOURCE_SHAPES = {
    "schema.json": "properties.questions.items.properties has no 'question'",
    "example_args.json": "content is no call that ask() accepts",
}


def _is_own_resource(name: str, text: str) -> bool:
    try:
        value = json.loads(text)
        if name == "example_args.json":
            ask(value)  # a QuestionError is a ValueError too
            return True
        return "question" in value["properties"]["questions"]["items"]["properties"]
    except (ValueError, KeyError, TypeError):
        return False


def _read_beside_module(name: str) -> "Optional[str]":
    """Read a file next to this module, through its loader so zip imports work."""
    module_file = globals().get("__file__")
    if not module_file:
        return None  # an interpreter that runs modules without files
    path = os.path.join(os.path.dirname(module_file), name)
    loader = globals().get("__loader__")
    try:
        if hasattr(loader, "get_data"):
            data = loader.get_data(path)  # type: ignore[union-attr]
        else:
            with open(path, "rb") as stream:
                data = stream.read()
    except OSError:
        return None
    return bytes(data).decode("utf-8-sig")


# ===========================================================================
# Decoding: whatever the model sent -> QuestionInput
#
# ask() is decode() then validate_and_normalize().  The sub-parts follow a
# call's text: the entry points, strict JSON within its bounds, the repairs
# of text it refuses (code fences, the tolerant reader, tool-call markup),
# then the questions, their options, a recommendation stated in a question's
# text, and the readers of single fields.

# ---------------------------------------------------------------------------
# Decoding: the entry points
#
# ask() and decode(), and the shapes a call comes in: a dict, a list of
# questions, or JSON text of either, encoded twice at times.

def ask(payload: Any) -> QuestionOutput:
    """Decode (unless given a QuestionInput) and normalize one tool call.

    Returns the normalized questions with no answers yet; raises
    QuestionError, written for the model, for a call that cannot be shown.
    """
    if isinstance(payload, QuestionInput):
        return QuestionOutput(validate_and_normalize(payload), [], None, payload.title, payload.purpose)
    # The items decode() made are ours alone, and of the types it promises:
    # normalize them in place, without a copy.
    root = _payload_root(payload)
    # A dict, the common case, has no text to search: no call for it.
    leaks = None if payload.__class__ is dict else _may_hold_markup(payload)
    output = QuestionOutput(_normalize(_decoded_items(root, leaks)), [])
    if len(root) > 1:  # a heading stands beside the questions: most calls hold nothing else
        output.title, output.purpose = _batch_heading(root)
    return output


def decode(payload: Any) -> QuestionInput:
    """Read a tool call's arguments into a QuestionInput, leniently.

    ``payload`` is a dict, JSON text (``str``, ``bytes``, ``bytearray``;
    double-encoded text is unwrapped), a list of questions, or a single
    question object.  The questions are decoded, not yet validated: pass
    the result to validate_and_normalize(), or call ask() for both.

        >>> askq.decode({"questions": ["Project name?"]})
        QuestionInput(questions=[QuestionItem(question='Project name?', header=None, \
options=None, multi_select=False, purpose=None, required=True, \
question_type=<QuestionType.TEXT: 'Text'>, id='', recommended=None, \
placeholder=None, allow_custom=True, minimum=None, maximum=None, step=None, \
unit=None, default=None, secret=False)], title=None, purpose=None)
    """
    root = _payload_root(payload)
    return QuestionInput(_decoded_items(root, _may_hold_markup(payload)), *_batch_heading(root))


def _decoded_items(root: "Union[Dict[Any, Any], List[Any]]", leaks: "Optional[bool]") -> "List[QuestionItem]":
    """The decoded questions; ``leaks`` says whether the call's text may
    hold leaked markup (None: the call came as objects, with no text)."""
    entries = _question_entries(root)
    return [_decode_entry(index, entry, leaks) for index, entry in enumerate(entries)]


def _may_hold_markup(payload: Any) -> "Optional[bool]":
    """Whether a call sent as text may hold leaked markup: a closing tag and
    a parameter's tag, or a backslash, which may escape them ('\\u003c').
    One search of the text decides it for every field of every question.
    None for a call handed in as objects, which has no text to search."""
    if isinstance(payload, str):
        # A look for one character is far cheaper than one for two.
        return "\\" in payload or "<" in payload and "</" in payload and "parameter" in payload
    if isinstance(payload, (bytes, bytearray)):
        return b"\\" in payload or b"<" in payload and b"</" in payload and b"parameter" in payload
    return None


def _batch_heading(root: "Union[Dict[Any, Any], List[Any]]") -> "Tuple[Optional[str], Optional[str]]":
    """The title and purpose of a call that holds its questions under
    'questions' (of a call that is one question, the title is its text)."""
    if isinstance(root, list) or "questions" not in root or _HEADING_KEYS.isdisjoint(root):
        return None, None
    return _first_text(root, _TITLE_KEYS), _first_text(root, _BATCH_PURPOSE_KEYS)


def _payload_root(payload: Any) -> Any:
    """The call as a dict or a list, parsing JSON text (twice if double-encoded)."""
    value = payload
    if isinstance(value, (str, bytes, bytearray)):
        value = _parse_json(payload, "The call", _CALL_REPAIRS)
        if isinstance(value, str):
            value = _parse_json(value, "The call", _CALL_REPAIRS)
    if value.__class__ is dict and "questions" in value:  # the common case, in one look
        return value
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        # A call inside an envelope holds no questions of its own: unwrapped only then.
        if "questions" in value or _first_text(value, _QUESTION_KEYS) is not None:
            return value
        inner = _EnvelopeLook().inside(value, _ENVELOPE_DEPTH)
        return value if inner is None else inner
    raise QuestionError(
        f"The call must be a JSON object like {{\"questions\": [...]}},"
        f" not {_json_type(value)}."
    )


# ---------------------------------------------------------------------------
# Decoding: strict JSON and its bounds
#
# _parse_json(): text over the size or depth bounds is refused before it
# is parsed; text that parses is taken as it is, and only the rest is
# handed to the repairs it is given.

# Outside strings, JSON's structure is ASCII: of the UTF-8 bytes of a text,
# keep quotes and brackets, with braces folded onto brackets (nesting is
# nesting, whichever the kind).
_FOLD_BRACES = bytes.maketrans(b"{}", b"[]")
_STRUCTURE = b'"[]{}'


def _parse_json(
    text: "Union[str, bytes, bytearray]", what: str, repairs: "Sequence[Callable[[str], Any]]" = (),
) -> Any:
    """Parse JSON text; every failure is a QuestionError that names ``what``.
    Text the strict parse refuses goes through ``repairs`` in order before
    it is refused: _REPAIRS for text from the model, _CALL_REPAIRS for a
    whole call.  Text within the bounds that parses is never repaired."""
    if isinstance(text, (bytes, bytearray)):
        _check_size(len(text), what)
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise QuestionError(f"{what} is not UTF-8 text.") from None
    elif len(text) * 4 > MAX_PAYLOAD_BYTES:  # else it cannot be too large
        _check_size(len(text.encode("utf-8", "surrogatepass")), what)
    if _too_deep(text):
        raise QuestionError(
            f"{what} nests arrays and objects more than {MAX_DEPTH} levels deep;"
            " a question call needs four."
        )
    try:
        return _decoded_json(text)
    except (ValueError, RecursionError) as err:
        value = _repaired(text, repairs) if repairs and not isinstance(err, _NotJsonConstant) else _UNREAD
        if value is _UNREAD:
            raise QuestionError(
                f"{what} is not valid JSON ({err}). Send the arguments as one JSON object."
            ) from None
        return value


def _check_size(size: int, what: str) -> None:
    if size > MAX_PAYLOAD_BYTES:
        raise QuestionError(
            f"{what} is {size} bytes of JSON; the limit is {MAX_PAYLOAD_BYTES}."
            " Ask fewer, shorter questions."
        )


def _too_deep(text: str, bound: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than ``bound``, outside strings."""
    if text.count("[") + text.count("{") <= bound:
        return False  # the common case: too few brackets to nest that deep
    brackets = _structure(text)
    # Each pass takes away every innermost pair, so the passes it takes to
    # take them all away are the depth of the deepest.
    depth = 0
    while depth <= bound:
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            break
        brackets, depth = shorter, depth + 1
    # Brackets left over make the text invalid, but json's parser descends
    # into every unclosed '[' it meets before it finds out.
    return depth + brackets.count(b"[") > bound


def _structure(text: str) -> bytes:
    """The brackets of JSON text that lie outside its strings, as '[' and ']'."""
    data = text.encode("utf-8", "surrogatepass")
    if b"\\" in data:
        # With escaped backslashes and quotes gone, every '"' left opens or
        # closes a string, as it does for json's own scanner.
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = data.translate(_FOLD_BRACES, _not_structure())
    # Two quotes side by side hold nothing, whether they open and close a
    # string or close one and open the next: without them, every other mark
    # stays on its side of the quotes.  Most texts have no quote left then.
    marks = marks.replace(b'""', b"")
    if b'"' in marks:
        marks = b"".join(marks.split(b'"')[::2])  # every other piece lies outside strings
    return marks


@functools.lru_cache(maxsize=None)
def _not_structure() -> bytes:
    """Every byte but quotes and brackets: what translate() deletes."""
    return bytes(byte for byte in range(256) if byte not in _STRUCTURE)


def _decoded_json(text: str) -> Any:
    """The value of JSON text; NaN and Infinity are refused."""
    # Where json has its C scanner (CPython, Pyodide), the decoder that
    # refuses NaN and Infinity is as fast as json.loads.  Elsewhere (PyPy)
    # only plain json.loads reaches the native parser: use it when neither
    # word appears.  Text it refuses is parsed again below, for an error that
    # can be read: the fast path's error for some characters fails when
    # turned into text on PyPy.
    scanner_in_c = getattr(json.scanner, "c_make_scanner", None) is not None
    if not scanner_in_c and "NaN" not in text and "Infinity" not in text:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return _json_decoder().decode(text)


@functools.lru_cache(maxsize=None)
def _json_decoder() -> json.JSONDecoder:
    """One decoder that refuses NaN and Infinity, made on first use (json.loads
    with a hook would build a new decoder on every call)."""
    return json.JSONDecoder(parse_constant=_refuse_constant)


class _NotJsonConstant(ValueError):
    """NaN or Infinity in JSON text: no JSON values, so refused, never repaired."""


def _refuse_constant(name: str) -> Any:
    raise _NotJsonConstant(f"{name} is not a JSON value")


# ---------------------------------------------------------------------------
# Decoding: the repairs
#
# Text from the model that the strict parse refused goes through a chain
# of repairs, each a function tried in order, the first that reads the
# text giving its value: raw control characters in strings, a code fence,
# a Python literal, the tolerant reader; then it is refused.

_UNREAD: Any = object()  # no repair could read the text


def _repaired(text: str, repairs: "Sequence[Callable[[str], Any]]") -> Any:
    """The value of text that the strict parse refused, by the first of
    ``repairs``, in their order, that reads it; _UNREAD when none does."""
    for repair in repairs:
        try:
            value = repair(text)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            continue
        if value is not _UNREAD:
            return value
    return _UNREAD


def _with_control_characters(text: str) -> Any:
    """Raw line breaks and tabs inside strings, as a model pretty-prints them."""
    return json.JSONDecoder(strict=False, parse_constant=_refuse_constant).decode(text)


def _inside_fence(text: str) -> Any:
    """Text in a Markdown code fence: the text inside, read again."""
    inner = _fenced(text)
    if inner is None:
        return _UNREAD
    try:
        return _decoded_json(inner)
    except ValueError:
        return _repaired(inner, _REPAIRS) if _fenced(inner) is None else _UNREAD


def _python_literal(text: str) -> Any:
    """A Python literal (single quotes, True, None): read, never evaluated.
    The text is within the size and depth bounds already."""
    import ast
    import warnings

    stripped = text.strip()
    if not stripped.startswith(("[", "{")):
        return _UNREAD
    with warnings.catch_warnings():  # a model's "\q" is no news for the harness's stderr
        warnings.simplefilter("ignore")
        value = ast.literal_eval(stripped)
    return value if isinstance(value, (dict, list)) else _UNREAD


def _tolerant(text: str) -> Any:
    return _tolerant_json(text, MAX_DEPTH)


def _markup_questions(text: str) -> Any:
    """A whole call in tool-call markup, as the list of its one question."""
    call = _markup_call(text)
    return _UNREAD if call is None else [call]


# The repairs of text from the model, in the order they are tried; a repair
# gives _UNREAD, or raises, for text it cannot read.
_REPAIRS = (_with_control_characters, _inside_fence, _python_literal, _tolerant)

def _envelope_parameters(text: str) -> Any:
    """A whole call in a tool-call envelope of markup, as its parameters."""
    call = _envelope_markup(text)
    return _UNREAD if call is None else call


def _parameters_after_prose(text: str) -> Any:
    """A whole call in a tool-call envelope after the model's prose, as its parameters."""
    call = _envelope_after_prose(text)
    return _UNREAD if call is None else call


# A whole call may be in tool-call markup instead, looked for first: JSON
# never starts like markup, so for broken JSON the look is one character's.
# Markup after prose is looked for last, in text that no other repair reads:
# JSON that names a tag in a string is read as JSON.
_CALL_REPAIRS = (_markup_questions, _envelope_parameters, *_REPAIRS, _parameters_after_prose)


@functools.lru_cache(maxsize=None)
def _pattern(source: str) -> "Pattern[str]":
    """A pattern of the repairs, compiled on first use: most runs never repair."""
    return re.compile(source)


# ---------------------------------------------------------------------------
# Decoding: code fences
#
# _fenced(): the text inside a Markdown code fence, for _inside_fence() to
# read again.

_FENCE_MARKS = ("`", "~")
# The info word after the opening fence ('json', 'JSON5', 'c++', ...).
_FENCE_INFO_SOURCE = (r"[ \t]*[\w.+#-]*")


def _fenced(text: str) -> "Optional[str]":
    """The text inside a Markdown code fence (```json ... ```, or ~~~, any info
    word or none), trimmed, when the whole trimmed text is one fence; else None.

    The fence opens the text and closes it, with at least as many marks;
    everything between is the content, fence-like lines included, since
    models put Markdown with fences of its own in string values.  A closing
    fence right after the content on its last line ('}```') and a fence on
    one line ('```json {...}```') count too: models write both.
    """
    body = text.strip()
    mark = body[:1]
    if mark not in _FENCE_MARKS:
        return None
    opening = len(body) - len(body.lstrip(mark))
    closing = len(body) - len(body.rstrip(mark))
    if opening < 3 or closing < opening or opening + closing > len(body):
        return None
    inner = body[opening : len(body) - closing]
    word = _pattern(_FENCE_INFO_SOURCE).match(inner)
    assert word is not None  # the pattern matches the empty text
    info = word.end()
    # The word is an info word only when a line break, a space or the
    # content's bracket follows it: '```Postgres, SQLite```' has none.
    if info < len(inner) and inner[info] not in "\r\n \t{[":
        info = 0
    return inner[info:].strip()


# ---------------------------------------------------------------------------
# Decoding: the tolerant reader
#
# _tolerant_json(): almost-JSON read in one pass, the last repair.

# Every pattern is linear in what it consumes: character classes under a
# star, and alternatives that start differently, so a failed match
# backtracks at most over what it scanned.
_SPACE_SOURCE = (r"\s*")
# Part of a string: up to its closing quote, an escape being two characters
# whatever they are ('\q', which JSON has no escape for, is kept as
# written).  At most 64 escapes a match, so that the regex engine's state
# for them stays bounded.
_STRING_PART_SOURCE = r'(?s)[^"\\]*(?:\\.[^"\\]*){0,64}'
# The escapes JSON has; any other backslash stays as it is.  A high and a
# low surrogate escaped one after the other are one character, as in json.
_ESCAPE_SOURCE = (
    r'\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(["\\/bfnrt]))'
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# A bare string, and a member that cannot be read, run up to one of these.
_BARE_RUN_SOURCE = (r"[^,}\]]*")
# JSON's number, ASCII digits only (``\d`` would take other scripts' digits).
_NUMBER_SOURCE = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
# A number or a literal is one when it ends at whitespace, a bracket, a
# comma or a quote ('1.5.3', '10MB', 'nullable' are bare strings), and what
# follows is a comma, a bracket, or the start of the next value, the comma
# between them missing ('[1 2]', '"a": 1 "b": 2').  A quote that only
# closes ('"a": 12",') is the stray quote of a bare string; the end of the
# text may have cut it ('12' of '128').
_TOKEN_FOLLOWS = r'(?=[\s,}\]"{\[])(?=\s*(?:[,}\]{\[]|"(?!\s*(?:[,}\]]|\Z))|-?[0-9]|true|false|null))'
# A scalar: (1) a number or (2) a literal, or else (3) a bare string: text
# that does not start like a JSON value, up to the next ',', '}' or ']'.
_SCALAR_SOURCE = (r"(?:(" + _NUMBER_SOURCE + r")|(true|false|null))" + _TOKEN_FOLLOWS + r"|([^,}\]]*)")
_LITERALS: "Dict[str, Any]" = {"true": True, "false": False, "null": None}
# The fast path: most of a broken text is valid JSON.  A run of simple
# values (strings with no escape, numbers, literals) is found by one match
# and read by one findall, in C.  A run holds at most 64 values: the regex
# engine keeps state for every repetition of a group (hundreds of bytes), so
# an unbounded run would take memory in proportion to the text.
_SIMPLE_STRING = r'"[^"\\]*"'
# A number or a literal with a stray quote after it and then a comma or a
# bracket is the number or literal, as the slow path would read it.  Runs
# take it, and empty arrays and objects, so that text dense with them does
# not take a step for each.
_STRAY_QUOTE = r'"(?=\s*[,}\]])'
_EMPTY_CONTAINER = r"\[\s*\]|\{\s*\}"
_SIMPLE_VALUE = (
    r"(?:" + _SIMPLE_STRING + "|" + _EMPTY_CONTAINER + r"|(?:" + _NUMBER_SOURCE + r"|true|false|null)(?:"
    + _STRAY_QUOTE + "|" + _TOKEN_FOLLOWS + "))"
)
_ITEMS_RUN = r"(?:" + _SIMPLE_VALUE + r"[\s,:]*){1,64}"
_MEMBERS_RUN = r"(?:" + _SIMPLE_STRING + r"\s*:\s*" + _SIMPLE_VALUE + r"[\s,]*){1,64}"
# What comes next in an array: (1) simple items, then (2) opening or
# (3) closing brackets; none of them: an item the slow path reads.  Commas
# only separate, so stray, doubled and trailing ones vanish, and so do
# colons in an array ('["a": "b"]'); missing commas are never needed.
_ARRAY_STEP_SOURCE = (
    r"[\s,:]*(" + _ITEMS_RUN + r")?(?:([\[{][\s\[{]*)|([\]}][\s\]}]*))?"
)
# What comes next in an object: (1) simple members, then (2) a key with no
# escape, (3) the colon after it if any and (4) the bracket its value opens
# if it does, or (5) closing brackets; none of them: a member the slow path
# reads.
_OBJECT_STEP_SOURCE = (
    r"[\s,]*(" + _MEMBERS_RUN + r')?(?:"([^"\\]*)"\s*(:?)\s*([\[{])?|([\]}][\s\]}]*))?'
)
# The values of a run, one match each: a string, a number's whole part and
# the rest of it (so that no call is needed to tell an int from a float), a
# literal, or an empty container; a member's name before it.
_ITEM_SOURCE = (
    r'(?:"([^"\\]*)"|(-?(?:0|[1-9][0-9]*))((?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)(?:' + _STRAY_QUOTE + r")?|(true|false|null)(?:" + _STRAY_QUOTE
    + r")?|(" + _EMPTY_CONTAINER + "))"
)
_MEMBER_SOURCE = r'"([^"\\]*)"\s*:\s*' + _ITEM_SOURCE
_CLOSERS = ",}]"
# Stands for the value that was being written when the text ended: it is
# dropped, with its key.
_MISSING: Any = object()


_Container = Union[Dict[str, Any], List[Any]]


def _tolerant_json(text: str, max_depth: int) -> Any:
    """The value of almost-JSON text, mended: invalid escapes kept as written,
    bare values read, missing commas supplied and stray ones dropped, a wrong
    bracket dropped where the right one follows, a member that cannot be read
    skipped, and what the end of the text left open closed, without the
    member being written.

    The top level must be an object or an array (after whitespace and a
    byte-order mark); text after it is ignored.  Strict JSON gives what
    json.loads gives, except that NaN and Infinity are bare strings.
    Raises ValueError when the text does not start with '{' or '[', when
    arrays and objects nest deeper than ``max_depth``, or (on Pythons that
    bound it) for an integer with too many digits, as json.loads does.
    """
    return _TolerantReader(text, max_depth).read()


def _run_value(string: str, whole: str, rest: str, literal: str, empty: str) -> Any:
    """The value of one match of a run: a number (its whole part and the
    rest), a literal, an empty container, or else a simple string."""
    if whole:
        return float(whole + rest) if rest else int(whole)
    if literal:
        return _LITERALS[literal]
    if empty:
        return [] if empty[0] == "[" else {}
    return string


class _TolerantReader:
    """One left-to-right pass over the text with an explicit stack of open
    containers: no recursion, so no RecursionError and no deep C stack.

    Every container is put in its parent as soon as it opens, so text that
    ends early leaves every open container closed and in place.  Each step
    consumes what it looked at; a failed fast match and the look-aheads (a
    wrong bracket's next bracket, what follows a number) cover only what
    the next step consumes, so every character is read a bounded number of
    times.
    """

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.end = len(text)
        self.pos = 0
        self.max_depth = max_depth
        self.stack: List[_Container] = []
        # The bracket that closes each open container, the innermost last.
        self.closing = ""

    def read(self) -> "_Container":
        """Read the top-level container and whatever mends into it."""
        text = self.text
        start = self.after_space(1 if text.startswith("\ufeff") else 0)
        if start >= self.end or text[start] not in "{[":
            raise ValueError("the text does not start with a JSON object or array")
        self.pos = start + 1
        root = self.open(text[start])
        stack = self.stack
        while stack and self.pos < self.end:
            top = stack[-1]
            if isinstance(top, dict):
                self.object_step(top)
            else:
                self.array_step(top)
        # Cut off (or not): the open containers are in place already.
        return root

    def array_step(self, items: "List[Any]") -> None:
        """Read what comes next in an array: simple items and brackets, or
        one item that needs the slow path."""
        step = _pattern(_ARRAY_STEP_SOURCE).match(self.text, self.pos)
        assert step is not None
        self.pos = step.end()
        run, openers, closers = step.groups()
        if run:
            items.extend(_run_value(*match) for match in self.run_matches(_ITEM_SOURCE, run))
        if openers:
            self.openers(items, step.start(2), openers)
        elif closers:
            self.closers(closers)
        elif not run and self.pos < self.end:
            # Not a bracket, so a string with escapes or cut off, or a scalar.
            value = self.string() if self.text[self.pos] == '"' else self.scalar()
            if value is not _MISSING:
                items.append(value)

    def object_step(self, members: "Dict[str, Any]") -> None:
        """Read what comes next in an object: simple members and a member
        with a plain key, or closing brackets, or one member that needs the
        slow path."""
        step = _pattern(_OBJECT_STEP_SOURCE).match(self.text, self.pos)
        assert step is not None
        self.pos = step.end()
        run, key, colon, opener, closers = step.groups()
        if run:
            for name, *value in self.run_matches(_MEMBER_SOURCE, run):
                members[name] = _run_value(*value)
        if opener and colon:
            members[key] = self.open(opener)
        elif key is not None:
            self.member_value(members, key, bool(colon))
        elif closers:
            self.closers(closers)
        elif not run and self.pos < self.end:
            self.member(members)

    def open(self, char: str) -> "_Container":
        """A new empty container for '{' or '[', pushed on the stack."""
        if len(self.stack) >= self.max_depth:
            raise _depth_error(self.max_depth)
        container: _Container = {} if char == "{" else []
        self.stack.append(container)
        self.closing += "}" if char == "{" else "]"
        return container

    def run_matches(self, source: str, run: str) -> "List[Tuple[str, ...]]":
        """The values of a run, one match of ``source`` each; an empty array
        or object among them is refused where the top container is as deep
        as containers may nest."""
        matches: List[Tuple[str, ...]] = _pattern(source).findall(run)
        if len(self.stack) >= self.max_depth and any(match[-1] for match in matches):
            raise _depth_error(self.max_depth)
        return matches

    def openers(self, items: "List[Any]", start: int, run: str) -> None:
        """Opening brackets (whitespace between them) at ``start``, in an array."""
        run = run.rstrip()  # the run takes the whitespace after it too
        if len(run) == 1:
            items.append(self.open(run))  # the common case: one bracket
            return
        brace = run.find("{")
        if brace >= 0 and brace + 1 < len(run):
            # '{{', '{[': a member that starts with a bracket cannot be read.
            self.pos = start + brace + 1
            self.skip_member()
            run = run[: brace + 1]
        # So every bracket but a last '{' opens an array: a chain of them.
        arrays = run.count("[")
        if len(self.stack) + arrays + (brace >= 0) > self.max_depth:
            raise _depth_error(self.max_depth)
        chain: List[Any] = [[] for _ in range(arrays)]
        if brace >= 0:
            chain.append({})
        items.append(chain[0])
        for parent, child in zip(chain, chain[1:]):
            parent.append(child)
        self.stack.extend(chain)
        self.closing += "]" * arrays + "}" * (brace >= 0)

    def closers(self, run: str) -> None:
        """Closing brackets (whitespace between and after them), of either kind."""
        marks = run if len(run) == 1 else "".join(run.split())  # without whitespace
        count = len(marks)
        if marks == self.closing[: -count - 1 : -1]:
            # The common case, every bracket right: all closed at once.
            del self.stack[-count:]
            self.closing = self.closing[:-count]
            return
        for index, char in enumerate(marks):
            right = self.closing[-1]
            # '{"label": "Custom"]}': a wrong bracket is a slip of the pen
            # when the right one comes next; otherwise it closes what is
            # open, as the model meant.  After the run comes no bracket.
            if char != right and index + 1 < count and marks[index + 1] == right:
                continue
            self.stack.pop()
            self.closing = self.closing[:-1]
            if not self.stack:
                return  # the top level is closed: what follows is ignored

    def member(self, members: "Dict[str, Any]") -> None:
        """An object member at self.pos (not whitespace, a comma or a
        bracket) whose key has an escape or is cut off, or that has none."""
        text = self.text
        if text[self.pos] != '"':
            self.skip_member()  # 'junk,', 'a: 1', '{{': no key to read
            return
        key = self.string()
        if key is _MISSING:
            return  # cut off in the key
        self.pos = self.after_space(self.pos)
        colon = self.pos < self.end and text[self.pos] == ":"
        if colon:
            self.pos = self.after_space(self.pos + 1)
        self.member_value(members, key, colon)

    def member_value(self, members: "Dict[str, Any]", key: str, colon: bool) -> None:
        """The value of the member ``key``, at self.pos past the key, the
        colon if ``colon`` and whitespace."""
        if not colon:
            # '"question "stray words": "x"': the key read is "question ",
            # and nothing after it can be trusted up to the next member.
            self.skip_member()
        elif self.pos < self.end and self.text[self.pos] not in _CLOSERS:
            value = self.value()  # none ('"a": ,'): the member is dropped
            if value is not _MISSING:
                members[key] = value

    def after_space(self, at: int) -> int:
        """Where the whitespace at ``at`` ends."""
        space = _pattern(_SPACE_SOURCE).match(self.text, at)
        assert space is not None  # this pattern, like all matched so, matches ''
        return space.end()

    def skip_member(self) -> None:
        """Skip a member that cannot be read, up to the next ',' or bracket.

        The stop is the next ',', '}' or ']' as written, not inside strings:
        a member this broken has no quotes to trust.  A ']' stops it too: it
        may be the object's end written with the wrong bracket.
        """
        skipped = _pattern(_BARE_RUN_SOURCE).match(self.text, self.pos)
        assert skipped is not None
        self.pos = skipped.end()

    def value(self) -> Any:
        """The value at self.pos (not whitespace, a comma or a bracket); an
        opened container is pushed and returned empty, to be filled."""
        char = self.text[self.pos]
        if char == "{" or char == "[":
            self.pos += 1
            return self.open(char)
        if char == '"':
            return self.string()
        return self.scalar()

    def string(self) -> Any:
        """The string whose opening quote is at self.pos, or _MISSING when the
        text ends inside it.  Raw control characters are kept as they are."""
        text, start = self.text, self.pos + 1
        end = start
        while True:
            part = _pattern(_STRING_PART_SOURCE).match(text, end)
            assert part is not None
            end = part.end()
            if end < self.end and text[end] == '"':
                break
            if end + 1 >= self.end:  # no closing quote, or a last backslash
                self.pos = self.end
                return _MISSING
            # A backslash: the part ended after its 64 escapes; read on.
        self.pos = end + 1
        content = text[start:end]
        return _pattern(_ESCAPE_SOURCE).sub(_unescaped, content) if "\\" in content else content

    def scalar(self) -> Any:
        """A number, a literal or a bare string at self.pos."""
        found = _pattern(_SCALAR_SOURCE).match(self.text, self.pos)
        assert found is not None
        self.pos = found.end()
        number, literal, bare = found.groups()
        if bare is None:
            return _number(number) if number else _LITERALS[literal]
        if self.pos >= self.end:
            return _MISSING  # '+6 dB', 'NaN', '-5 dB' or '12' of '128', cut off
        bare = bare.strip()
        if bare.endswith('"'):
            # '"header":Next step",': the opening quote was forgotten; the
            # closing one belongs to the bare string and is not part of it.
            bare = bare[:-1].rstrip()
        return _scalar_value(bare)


def _depth_error(max_depth: int) -> ValueError:
    return ValueError(f"arrays and objects nest more than {max_depth} levels deep")


def _unescaped(escape: "Match[str]") -> str:
    """The character a valid JSON escape stands for."""
    high, low, code, simple = escape.groups()
    if simple:
        return _SIMPLE_ESCAPES[simple]
    if code:
        return chr(int(code, 16))
    return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))


def _scalar_value(token: str) -> Any:
    """A literal or number token as JSON reads it; any other text as itself
    (so a bare 'false"' with its stray quote is still false)."""
    if token in _LITERALS:
        return _LITERALS[token]
    if _pattern(_NUMBER_SOURCE).fullmatch(token) is None:
        return token
    return _number(token)


def _number(token: str) -> "Union[int, float]":
    """A JSON number token as json reads it: a fraction or an exponent makes a float."""
    if "." in token or "e" in token or "E" in token:
        return float(token)
    return int(token)  # may raise ValueError for too many digits, as json does


# ---------------------------------------------------------------------------
# Decoding: tool-call markup
#
# _markup_call(): a call, or the value of 'questions', in the markup of
# Cline, Roo Code and Kilo Code.  _envelope_markup(): a whole call in the
# envelope of a model that writes its tool calls as text, and
# _envelope_after_prose() the same after the model's prose.  _leak_repaired():
# the same envelope's parameters leaked into a string field.

_MARKUP_STARTS = ("<ask_followup_question>", "<question>")
# A tag of the markup: its name, then anything up to the next '<' or '>'.
# Only the markup's names are looked for, so other text costs nothing.  The
# '>' is optional so that a match never fails once it started, and so never
# backtracks: a '<question' that is no tag matches with an empty last group.
_MARKUP_TAG_SOURCE = (
    r"<(/?)(ask_followup_question|question|follow_up|suggest|options)(?![\w.:-])([^<>]*)(>?)"
)
# Elements whose text is read; the others only end an element left open.
_MARKUP_TEXT_ELEMENTS = frozenset(("question", "suggest", "options"))


def _markup_call(text: str) -> "Optional[Dict[str, Any]]":
    """The call in Cline/Roo/Kilo markup, or None when ``text`` does not start
    (after whitespace) with <ask_followup_question> or <question>.

    Gives "question" (the first non-blank <question>) and "options" (the
    <suggest> texts, else what <options> holds), each only when present.
    """
    first = text[:1]
    if first != "<" and not first.isspace():
        return None  # the common case, JSON text: no copy of it made
    start = len(text) - len(text.lstrip())
    if not text.startswith(_MARKUP_STARTS, start):
        return None
    question = ""
    suggestions: List[str] = []
    options: Any = None
    for name, raw in _markup_elements(text, start):
        if name == "question":
            question = question or _markup_text(raw)
        elif name == "suggest":
            label = _markup_text(raw)
            if label:
                suggestions.append(label)
        elif options is None:
            options = _markup_options(raw)
    call: Dict[str, Any] = {}
    if question:
        call["question"] = question
    if suggestions or options is not None:
        call["options"] = suggestions or options
    return call


def _markup_elements(text: str, start: int) -> "Iterator[Tuple[str, str]]":
    """(name, raw text) of each <question>, <suggest> and <options>, in order,
    up to </ask_followup_question>.

    An element's text ends at its closing tag, or, when that is missing, at
    the next tag of the markup.  One that is still open when the text ends
    was being written when the model's output was cut off: it is dropped,
    as the tolerant reader drops the JSON member being written.  Other tags are text.
    """
    open_name: Optional[str] = None
    content = 0
    for tag in _pattern(_MARKUP_TAG_SOURCE).finditer(text, start):
        closing, name, rest, done = tag.groups()
        if not done:
            continue  # '<question' and no '>' before the next '<': text
        if open_name is not None:
            yield open_name, text[content : tag.start()]
            ends_it = closing and name == open_name
            open_name = None
            if ends_it:
                continue
        if closing and name == "ask_followup_question":
            return
        if not closing and name in _MARKUP_TEXT_ELEMENTS and not rest.endswith("/"):
            open_name, content = name, tag.end()  # attributes (mode="code") ignored


def _markup_text(raw: str) -> str:
    """An element's text, trimmed, with entities (&amp; &#39; &#x41; ...) unescaped."""
    import html

    return html.unescape(raw).strip()


def _markup_options(raw: str) -> Any:
    """What <options> holds: Cline's JSON array of labels, read tolerantly,
    its strings unescaped; else its text, which askq splits into options
    like any options sent as plain text; None when blank."""
    body = raw.strip()
    try:
        value = _tolerant_json(body, MAX_DEPTH)
    except ValueError:
        return _markup_text(body) or None
    if isinstance(value, list):
        return [_markup_text(entry) if isinstance(entry, str) else entry for entry in value]
    return value


# The envelope of a call written as text: Qwen's and Hermes' markup
# ('<tool_call>\n<function=NAME>\n<parameter=KEY>VALUE</parameter>') and
# Anthropic's ('<function_calls>\n<invoke name="NAME">\n<parameter
# name="KEY">VALUE</parameter>', under any namespace prefix).  Closing tags
# are optional, and the text may end anywhere.  Names and prefixes are
# bounded, so that each '<' costs a bounded look.
_TAG_PREFIX = r"(?:[\w.-]{1,32}:)?"
_ENVELOPE_TAG_SOURCE = r"<" + _TAG_PREFIX + r"(?:(tool_call)\s{0,8}>|function_calls\s{0,8}>|function=|invoke[\s>])"
_ENVELOPE_START_SOURCE = r"\s*" + _ENVELOPE_TAG_SOURCE
_PARAMETER_SOURCE = (
    r"<" + _TAG_PREFIX + r"parameter(?:=([^<>\n]{1,64})|\s{1,8}name\s{0,8}=\s{0,8}[\"']([^\"'<>]{1,64})[\"']\s{0,8})>"
)
_CLOSING_TAG_SOURCE = r"</" + _TAG_PREFIX + r"[\w.-]{1,64}\s{0,8}>"
_PARAMETER_END_SOURCE = r"</" + _TAG_PREFIX + r"parameter\s{0,8}>"
# A tag the model was writing when its output was cut off.
_CUT_TAG_SOURCE = r"</?(?:[A-Za-z_][\w.:=-]{0,64}(?:\s[^<>]{0,200})?)?"
# Hermes' form of the envelope: JSON inside <tool_call>, up to its end.
_TOOL_CALL_END_SOURCE = r"</" + _TAG_PREFIX + r"tool_call\s{0,8}>"


def _envelope_markup(text: str) -> "Optional[Dict[str, Any]]":
    """The parameters of a call in Qwen/Hermes or Anthropic markup (each
    value JSON when it reads as JSON, else its text, the first of each key
    kept); None when ``text`` does not start, after whitespace, with
    <tool_call>, <function=, <function_calls> or <invoke.  The names of the
    function and the tool are not read: models call askq by their
    harness's name for it."""
    first = text[:1]
    if first != "<" and not first.isspace():
        return None
    start = _pattern(_ENVELOPE_START_SOURCE).match(text)
    if start is None:
        return None
    call = dict(_parameters(text, start.start()))
    if not call and start.group(1):
        envelope = _hermes_envelope(text[start.end():])
        if envelope is not None:
            return envelope
    return call


def _envelope_after_prose(text: str) -> "Optional[Dict[str, Any]]":
    """The parameters of a call in tool-call markup that the model wrote
    after a line of its own prose ('I'll ask which stack to use.\n\n<tool_call>
    ...'), the prose dropped; None when no envelope follows, or when the one
    that follows holds no parameter (then the text is prose that names a tag)."""
    start = _pattern(_ENVELOPE_TAG_SOURCE).search(text)
    if start is None:
        return None
    return _envelope_markup(text[start.start():]) or None


def _hermes_envelope(body: str) -> "Optional[Dict[str, Any]]":
    """The JSON a <tool_call> holds ('{"name": ..., "arguments": {...}}'),
    which the call's own rules unwrap; None when it holds none."""
    end = _pattern(_TOOL_CALL_END_SOURCE).search(body)
    inner = (body if end is None else body[: end.start()]).strip()
    if not inner.startswith("{"):
        return None
    value = _parameter_value(inner)
    return value if isinstance(value, dict) else None


def _parameters(text: str, start: int) -> "Iterator[Tuple[str, Any]]":
    """(key, value) of each <parameter=KEY> or <parameter name="KEY"> from
    ``start``, in order.  A value ends at its </parameter>, else at the
    next parameter or the end of the text; closing tags after it, and a
    tag cut off at the end, are not part of it.  Blank values are left out,
    and only the first value of a key is read: the first is the one kept."""
    tags = list(_pattern(_PARAMETER_SOURCE).finditer(text, start))
    read = set()
    for place, tag in enumerate(tags):
        key = (tag.group(1) or tag.group(2)).strip()
        if key in read:
            continue
        end = tags[place + 1].start() if place + 1 < len(tags) else len(text)
        closed = _pattern(_PARAMETER_END_SOURCE).search(text, tag.end(), end)
        value = _parameter_value(_without_closing_tags(text[tag.end(): end if closed is None else closed.start()]))
        if value is not None:
            read.add(key)
            yield key, value


def _holds_markup(entry: "Dict[Any, Any]") -> bool:
    """Whether a string value of an object holds a '<' (a loop, not any():
    a generator costs each value a resumption)."""
    for value in entry.values():
        if value.__class__ is str and "<" in value:
            return True
    return False


# Markup leaked into a string field: a model that writes its calls as
# markup closes a field with a tag of its own and goes on with the next
# parameter, which the harness kept as part of the field's text:
# 'Commit it?</question>\n<parameter name="choices">["Commit", "Skip"]'.


class _LeakedMarkup(Exception):
    """A text of an entry holds tool-call markup that a model leaked into it:
    _decode_entry() reads the entry again with every field searched.  Only
    the decoding of an entry raises it, and only _decode_entry() catches it."""


def _check_leaks(*texts: "Optional[str]") -> None:
    """Raise _LeakedMarkup when a text holds leaked markup; a text with a
    '<' that is no leak ('a < b') passes."""
    for text in texts:
        if text is not None and "</" in text and _leak_in(text) is not None:
            raise _LeakedMarkup()


def _leak_repaired(entry: "Dict[Any, Any]") -> "Optional[Dict[Any, Any]]":
    """A copy of an entry with leaked markup taken out of its string fields
    and those of its options: each such field ends at the closing tag before
    the first leaked <parameter name="K">, and each leaked parameter gives
    the entry's key K its value where the entry has no usable K.  None when
    no field holds a leak."""
    leaked: List[Tuple[str, Any]] = []
    repaired = _fields_repaired(entry, leaked)
    for key in _OPTIONS_KEYS:
        options = entry.get(key)
        mended: Any = None
        if isinstance(options, list):
            mended = [_option_repaired(option, leaked) for option in options]
            mended = None if all(new is old for new, old in zip(mended, options)) else mended
        elif isinstance(options, dict):  # one option, or labels mapped to their descriptions
            mended = _fields_repaired(options, leaked)
        if mended is not None:
            repaired = dict(entry) if repaired is None else repaired
            repaired[key] = mended
    if repaired is None:
        return None
    for key, value in leaked:
        present = repaired.get(key)
        if present is None or isinstance(present, str) and not present.strip():
            repaired[key] = value
    return repaired


def _fields_repaired(fields: "Dict[Any, Any]", leaked: "List[Tuple[str, Any]]") -> "Optional[Dict[Any, Any]]":
    """A copy of an object with each string field that holds a leak ended
    before it, the leaked parameters added to ``leaked``; None when no field
    holds one."""
    repaired: Optional[Dict[Any, Any]] = None
    for key, value in fields.items():
        if isinstance(value, str) and "</" in value:  # one search for each field, the rest only where it finds one
            found = _leak_in(value)
            if found is not None:
                repaired = dict(fields) if repaired is None else repaired
                repaired[key], parameters = found
                leaked.extend(parameters)
    return repaired


def _option_repaired(option: Any, leaked: "List[Tuple[str, Any]]") -> Any:
    """An option entry (an object or a label) with its leaks taken out as
    _fields_repaired() takes them; the entry itself when it holds none."""
    if isinstance(option, dict):
        repaired = _fields_repaired(option, leaked)
        return option if repaired is None else repaired
    found = _leak_in(option) if isinstance(option, str) and "</" in option else None
    if found is None:
        return option
    leaked.extend(found[1])
    return found[0]


def _leak_in(text: str) -> "Optional[Tuple[str, List[Tuple[str, Any]]]]":
    """The text before the leak and the leaked (key, value) pairs, in order;
    None when the text holds no closing tag followed by a leaked parameter."""
    for tag in _pattern(_PARAMETER_SOURCE).finditer(text):
        head = _without_closing_tag(text[: tag.start()])
        if head is not None:
            return head, list(_parameters(text, tag.start()))
    return None


def _without_closing_tag(head: str) -> "Optional[str]":
    """Text that ends (before whitespace) in a closing tag, without it; None
    when it does not end in one."""
    end = _end_of_closing_tag(head, len(head.rstrip()))
    return None if end is None else head[:end].rstrip()


def _end_of_closing_tag(text: str, end: int) -> "Optional[int]":
    """Where the closing tag that ``text[:end]`` ends with starts; None when
    it ends with none."""
    start = text.rfind("</", 0, end)
    if start < 0 or _pattern(_CLOSING_TAG_SOURCE).fullmatch(text, start, end) is None:
        return None
    return start


def _without_closing_tags(raw: str) -> str:
    """A parameter's value without the closing tags the model ended it with
    ('["A", "B"]</invoke>'), nor a tag it was writing when its output was
    cut off ('Stack</para'), trimmed."""
    end = len(raw.rstrip())
    cut = raw.rfind("<", 0, end)
    if cut >= 0 and _pattern(_CUT_TAG_SOURCE).fullmatch(raw, cut, end) is not None:
        end = len(raw[:cut].rstrip())
    while raw.endswith(">", 0, end):
        start = _end_of_closing_tag(raw, end)
        if start is None:
            break
        end = start
        while end and raw[end - 1].isspace():
            end -= 1
    return raw[:end].strip()


def _parameter_value(text: str) -> Any:
    """A parameter's value: JSON when it reads as JSON, through the repairs
    (text cut off included); else the text.  None when blank."""
    if not text:
        return None
    try:
        return _parse_json(text, "a parameter", _REPAIRS)
    except QuestionError:
        return text


# ---------------------------------------------------------------------------
# Decoding: the questions
#
# The question entries of a call, each read into a QuestionItem by the
# tables below: for each field the first key present with a usable value
# wins; an unusable value falls through to the next key.

_QUESTION_KEYS = ("question", "prompt", "message", "text", "title", "header")
_HEADER_KEYS = ("header", "label")
_PURPOSE_KEYS = ("purpose", "description", "context")
# VS Code's explanation of a question: the purpose, unless it is the question text.
_MESSAGE_KEY = "message"
_OPTIONS_KEYS = ("options", "choices", "suggestions", "follow_up", "followUp")
_MULTI_SELECT_KEYS = ("multiSelect", "multiple", "multi_select", "multiselect", "allowMultiple", "allow_multiple")
_SELECTION_MODE_KEYS = ("selectionMode", "selection_mode")

# Fields read from one key only.
_REQUIRED_KEY = "required"
_ID_KEY = "id"
_KIND_KEYS = ("type", "method", "input_type", "inputType", "kind")
_RECOMMENDED_KEY = "recommended"  # on a question, a label; on an option, a boolean
_PLACEHOLDER_KEY = "placeholder"

# Keys most questions leave out; one look decides whether to read them.
# On a choice question a default names the recommended option; on a
# free-text or number question it is the text the entry starts with.
_DEFAULT_KEYS = ("default", "defaultValue", "default_value", "defaultAnswer", "default_answer")
_TYPED_DEFAULT_KEYS = ("defaultValue", "default_value", "default")
_ALLOW_CUSTOM_KEYS = (
    "allowFreeformInput", "allow_freeform_input", "allowOther", "allow_other", "allowCustom", "allow_custom", "custom",
)
_SECRET_KEYS = ("isSecret", "is_secret", "secret", "sensitive", "password")
# A number question's bounds, read only on a question of that kind.
_MINIMUM_KEYS = ("min", "minimum")
_MAXIMUM_KEYS = ("max", "maximum")
_STEP_KEY = "step"
_UNIT_KEYS = ("unit",)
_RARE_QUESTION_KEYS = frozenset(_KIND_KEYS + _DEFAULT_KEYS + _ALLOW_CUSTOM_KEYS + _SECRET_KEYS)
# Most entries say nothing of multi-select or the rare fields: one look for any of their keys.
_UNCOMMON_QUESTION_KEYS = _RARE_QUESTION_KEYS.union(_MULTI_SELECT_KEYS, _SELECTION_MODE_KEYS)

# The batch's own heading and purpose, beside its questions (Crush's
# confirm_title and confirm_description among them).
_TITLE_KEYS = ("title", "form_title", "confirm_title")
_BATCH_PURPOSE_KEYS = ("description", "confirm_description")
_HEADING_KEYS = frozenset(_TITLE_KEYS + _BATCH_PURPOSE_KEYS)

# A call sent inside a JSON envelope: {"name": ..., "arguments": ARGS},
# {"function": {...}}, {"type": "tool_use", "input": ...}, {"tool_calls": [...]},
# and the function-call shape of Gemini and LangChain, {"name": ..., "args": ARGS}
# and {"functionCall": {...}} (OpenAI's older messages: {"function_call": {...}}).
_ENVELOPE_KEYS = ("arguments", "args", "input", "function", "functionCall", "function_call")
_ENVELOPE_KEY_SET = frozenset(_ENVELOPE_KEYS)
_TOOL_CALLS_KEY = "tool_calls"
# How many envelopes one call may be wrapped in: the deepest sent is three.
_ENVELOPE_DEPTH = 4

# Text that may be JSON, fenced JSON or a Python literal: anything else in
# 'questions' is a sentence.
_JSON_STARTS = ("[", "{", "`", '"')

# `type` words, folded by _kind(): lower case, no "_", "-" or spaces.
_TEXT_KIND = "text"
_CHOICE_KIND = "choice"
_MULTI_KIND = "multi"
_YES_NO_KIND = "yesno"
_NUMBER_KIND = "number"
_INTEGER_KIND = "integer"  # a number question whose step is 1 unless the call says otherwise
_SECRET_KIND = "secret"  # typed text not to be shown back; the kind follows from the options
_KIND_WORDS = {
    word: kind
    for kind, words in (
        (_TEXT_KIND, ("text", "freetext", "string", "input")),
        (_CHOICE_KIND, ("choice", "single", "singlechoice", "singleselect", "select", "radio")),
        (_MULTI_KIND, ("multi", "multiple", "multichoice", "multiselect", "checkbox", "checkboxes")),
        (_YES_NO_KIND, ("yesno", "boolean", "bool", "confirm")),
        (_NUMBER_KIND, ("number", "numeric", "float", "decimal")),
        (_INTEGER_KIND, ("integer", "int")),
        (_SECRET_KIND, ("password", "secret")),
    )
    for word in words
}


def _question_entries(root: "Union[Dict[Any, Any], List[Any]]") -> "List[Any]":
    """The raw question entries, counted before any of them is looked at."""
    if isinstance(root, list):
        entries: List[Any] = root
    elif "questions" in root:
        entries = _questions_value(root["questions"])
    elif _first_text(root, _QUESTION_KEYS) is not None:
        entries = [root]
    else:
        raise _EnvelopeLook().refusal(root)
    _check_question_count(len(entries))
    return entries


class _EnvelopeLook:
    """The look into a call's JSON envelopes for the call inside, which
    keeps where it went: a call that holds no questions is refused for what
    its envelope holds instead, not for lacking a 'questions' array that it
    may well have, deeper than askq looks."""

    __slots__ = ("seen", "trail")

    def __init__(self) -> None:
        self.trail: Tuple[str, ...] = ()  # the keys followed to what was seen last
        self.seen: Any = _UNREAD  # the last arguments looked at; _UNREAD: no envelope

    def inside(
        self, envelope: "Dict[Any, Any]", depth: int, trail: "Tuple[str, ...]" = (),
    ) -> "Optional[Union[Dict[Any, Any], List[Any]]]":
        """The call inside an envelope that holds no questions of its own:
        its arguments (an object, or JSON text of one), or, of its tool
        calls, the first that holds questions; None when there is none."""
        if depth <= 0:
            if not _ENVELOPE_KEY_SET.isdisjoint(envelope) or _TOOL_CALLS_KEY in envelope:
                self.trail, self.seen = trail, _TOO_DEEP
            return None
        for key in _ENVELOPE_KEYS:
            if key in envelope:
                inner = _envelope_value(envelope[key], key)
                self.trail, self.seen = trail + (key,), inner
                if isinstance(inner, dict):
                    return inner if _holds_questions(inner) else self.inside(inner, depth - 1, self.trail)
        calls = envelope.get(_TOOL_CALLS_KEY)
        if isinstance(calls, list):
            for call in calls:
                inner = self.inside(call, depth - 1, trail + (_TOOL_CALLS_KEY,)) if isinstance(call, dict) else None
                if inner is not None:
                    return inner
            self.trail, self.seen = trail + (_TOOL_CALLS_KEY,), calls
        return None

    def refusal(self, call: "Dict[Any, Any]") -> QuestionError:
        """The refusal of a call with no questions, looked into again: what
        it holds, or what its envelope holds where the questions should be."""
        self.inside(call, _ENVELOPE_DEPTH)
        seen, where = self.seen, ".".join(self.trail)
        if seen is _UNREAD:
            problem = "The call has no 'questions' array" + _keys_it_has(call)
        elif seen is _TOO_DEEP:
            problem = f"The call is wrapped in more than {_ENVELOPE_DEPTH} tool-call envelopes ({where})"
        elif self.trail[-1] == _TOOL_CALLS_KEY and isinstance(seen, list):
            count = f"{len(seen)} call{'s' if len(seen) > 1 else ''}"
            problem = (f"The call's '{where}' holds {count}, none with questions in its arguments"
                       if seen else f"The call's '{where}' is an empty array")
        elif isinstance(seen, dict):
            problem = (f"The call's '{where}' has no 'questions' array" + _keys_it_has(seen)
                       if seen else f"The call's '{where}' is an empty object")
        else:
            problem = f"The call's '{where}' is {_json_type(seen)}, not an object"
        return QuestionError(
            f"{_NO_QUESTIONS} {problem}: send {{\"questions\": [{{\"question\": \"...\"}}]}} as the tool's arguments."
        )


_TOO_DEEP: Any = object()  # envelopes inside envelopes, deeper than askq looks


def _keys_it_has(call: "Dict[Any, Any]") -> str:
    """The keys an object without questions has, for its refusal."""
    keys = [key for key in call if isinstance(key, str)]
    if not keys:
        return ""
    shown = ", ".join(_quoted(key[:_QUOTE_CHARS]) for key in keys[:_KEYS_SHOWN])
    return f" (it has {shown}{', ...' if len(keys) > _KEYS_SHOWN else ''})"


_KEYS_SHOWN = 6  # of an object refused for holding no questions


def _holds_questions(call: "Dict[Any, Any]") -> bool:
    return "questions" in call or _first_text(call, _QUESTION_KEYS) is not None


def _envelope_value(value: Any, key: str) -> Any:
    """An envelope's arguments: an object, or text of one (JSON through the
    repairs, or markup)."""
    if isinstance(value, str) and value.strip():
        return _parse_json(value.strip(), f"The call's '{key}'", _CALL_REPAIRS)
    return value


def _questions_value(value: Any) -> "List[Any]":
    """The value of 'questions': a list, one object, or JSON text of either."""
    if isinstance(value, str):
        stripped = value.strip()
        markup = _markup_call(stripped)
        if markup is not None:
            return [markup]
        if stripped.startswith(_JSON_STARTS):
            value = _parse_json(stripped, "'questions'", _REPAIRS)
        else:
            try:
                value = _parse_json(stripped, "'questions'")  # 42, true: JSON, but no questions
            except QuestionError:
                return [stripped]  # a plain sentence: one free-text question
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]
    if value is None:
        return []
    raise QuestionError(f"'questions' must be an array of question objects, not {_json_type(value)}.")


def _check_question_count(count: int) -> None:
    if count > MAX_QUESTIONS:
        raise QuestionError(
            f"The call has {count} questions; the limit is {MAX_QUESTIONS}. Ask only"
            " what you need now (1-4 questions is best) and the rest later."
        )


def _decode_entry(index: int, entry: Any, leaks: "Optional[bool]" = None) -> QuestionItem:
    """One question entry: an object, JSON text of an object, or plain text."""
    question = None
    try:
        if isinstance(entry, str):
            fields = _object_in_text(entry)
            if fields is None:
                question = _field_text(entry, "question")
                if question is None:
                    raise _missing_question(index)
                if "</" not in question:
                    return QuestionItem(question)
                fields = {"question": question}  # read for leaked markup below
            entry = fields
        if not isinstance(entry, dict):
            raise QuestionError(
                f"questions[{index}] is {_json_type(entry)}; each question must be an"
                " object like {\"question\": \"...\"} or a plain string.",
                index,
            )
        question = _first_text(entry, _QUESTION_KEYS)
        if question is None:
            raise _missing_question(index)
        try:  # a call's text has decided already whether to search (below)
            item: Optional[QuestionItem] = _decode_fields(question, entry, leaks is None)
        except _LeakedMarkup:  # a text read below the question's holds a leak
            item = None
        # Leaked markup may sit in any string field.  A call's text tells
        # whether any may hold one: if not, none is searched; if so, every
        # one is.  A call handed in as objects has no text: each text that
        # is read is looked at for a '<' (an option's where it is read, by
        # _decode_option()), an entry's other values where it has keys
        # beyond those read (by _decode_fields()), and every field is
        # searched only when one holds one.  A question under another key
        # than 'question' may have been read twice, as the question and
        # as the header: then every value is looked at.
        if item is not None and (leaks is None and not (
                "<" in question or "<" in (item.purpose or "") or "<" in (item.header or "")
                or "question" not in entry and _holds_markup(entry)) or leaks is False):
            return item
        repaired = _leak_repaired(entry)
        if repaired is None:
            return _decode_fields(question, entry, False) if item is None else item
        question = _first_text(repaired, _QUESTION_KEYS)
        if question is None:
            raise _missing_question(index)
        return _decode_fields(question, repaired, False)
    except QuestionError as err:
        raise err.placed(index, question) from None


def _object_in_text(text: str) -> "Optional[Dict[Any, Any]]":
    """The object a string entry holds as JSON text, or None for plain text."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        value = _parse_json(stripped, "questions[]", _REPAIRS)
    except QuestionError:
        return None
    return value if isinstance(value, dict) else None


def _missing_question(index: int) -> QuestionError:
    return QuestionError(
        f"questions[{index}] needs a non-empty 'question' (or 'header') field:"
        " the full question to show the user, ending with a question mark.",
        index,
    )


def _decode_fields(
    question: str,
    entry: "Dict[Any, Any]",
    search: bool = True,
    # Read once, at definition: a member read from its enum class goes
    # through the enum machinery on every read, and every question reads it.
    text_type: QuestionType = QuestionType.TEXT,
) -> QuestionItem:
    """The fields of an entry; with ``search``, a text of an option, the
    recommendation, the placeholder or one that no field reads that holds
    leaked markup raises _LeakedMarkup (without, it is read as it is)."""
    options, source = _decode_options(entry, search)
    header = _first_text(entry, _HEADER_KEYS)
    uncommon = not _UNCOMMON_QUESTION_KEYS.isdisjoint(entry)  # one look, where most entries have none
    multi_select = (uncommon and _decode_multi_select(entry)) or (source is not entry and _decode_multi_select(source))
    purpose = _first_text(entry, _PURPOSE_KEYS)
    # Positional: a dataclass takes keyword arguments markedly more slowly.
    item = QuestionItem(question, header, options, multi_select, purpose, True, text_type)
    # Most entries have no key beyond those read so far: then neither the
    # fields of one key each are looked for, nor a text that no field reads.
    unread = len(entry) - (1 if header is None else 2) - (0 if options is None else 1) \
        - (0 if purpose is None else 1) - (1 if uncommon else 0)
    if unread > 0:  # written out here: a call of its own cost the common path more than its bound
        if purpose is None and _MESSAGE_KEY in entry:
            purpose = _field_text(entry[_MESSAGE_KEY], _MESSAGE_KEY)
            item.purpose = None if purpose == question else purpose
            unread -= 1
        if _REQUIRED_KEY in entry:
            item.required = _boolean(entry[_REQUIRED_KEY]) is not False
            unread -= 1
        if _ID_KEY in entry:
            item.id = _identifier(entry[_ID_KEY]) or ""
            unread -= 1
        if _RECOMMENDED_KEY in entry:
            item.recommended = _field_text(entry[_RECOMMENDED_KEY], _RECOMMENDED_KEY)
            unread -= 1
        if _PLACEHOLDER_KEY in entry:
            item.placeholder = _field_text(entry[_PLACEHOLDER_KEY], _PLACEHOLDER_KEY)
            unread -= 1
        if search and (unread > 0 and _holds_markup(entry) or "<" in (item.recommended or "")
                       or "<" in (item.placeholder or "")):
            _check_leaks(item.recommended, item.placeholder, *[value for value in entry.values() if value.__class__ is str])
    if uncommon and not _RARE_QUESTION_KEYS.isdisjoint(entry):
        _decode_rare_fields(item, entry)
    return item


def _decode_multi_select(entry: "Dict[Any, Any]") -> bool:
    """Multi-select as an entry says it; called once a look found one of the
    uncommon keys (or on the rare question-as-option object)."""
    multi = _first_usable(entry, _MULTI_SELECT_KEYS, _boolean)
    if multi is None:
        multi = _first_usable(entry, _SELECTION_MODE_KEYS, _selection_mode)
    return bool(multi)


def _decode_rare_fields(item: QuestionItem, entry: "Dict[Any, Any]") -> None:
    """The fields few calls send: a kind word, a default, no custom row, a
    secret, a number's bounds.  A default names the recommendation of a
    choice (normalization drops it from other kinds), and is the start of
    the entry of any other question."""
    kind = _first_usable(entry, _KIND_KEYS, _kind)
    _apply_kind(item, kind)
    default = _first_usable(entry, _DEFAULT_KEYS, _text_or_number)
    if default is not None and item.recommended is None:
        item.recommended = default
    if not (item.options or item.question_type.is_choice):
        item.default = _first_usable(entry, _TYPED_DEFAULT_KEYS, _text_or_number)
    if _first_usable(entry, _ALLOW_CUSTOM_KEYS, _boolean) is False:
        item.allow_custom = False
    if _first_usable(entry, _SECRET_KEYS, _boolean):
        item.secret = True
    if kind == _NUMBER_KIND or kind == _INTEGER_KIND:
        step = _bound(entry[_STEP_KEY]) if _STEP_KEY in entry else None
        item.minimum, item.maximum, item.step = _settled_bounds(
            _first_usable(entry, _MINIMUM_KEYS, _bound), _first_usable(entry, _MAXIMUM_KEYS, _bound),
            1 if step is None and kind == _INTEGER_KIND else step,
        )
        item.unit = _first_text(entry, _UNIT_KEYS)


def _settled_bounds(
    minimum: "Optional[float]", maximum: "Optional[float]", step: "Optional[float]",
) -> "Tuple[Optional[float], Optional[float], Optional[float]]":
    """A number question's bounds with the impossible ones dropped: a minimum
    above the maximum (the maximum kept), a step that is not positive."""
    if minimum is not None and maximum is not None and minimum > maximum:
        minimum = None
    return minimum, maximum, step if step is None or step > 0 else None


def _kind(value: Any) -> "Optional[str]":
    if not isinstance(value, str):
        return None
    return _KIND_WORDS.get(value.lower().replace("_", "").replace("-", "").replace(" ", ""))


def _apply_kind(item: QuestionItem, kind: "Optional[str]") -> None:
    """Apply the `type` word of the older, typed design to a fresh item."""
    if kind == _TEXT_KIND:
        item.options = None
        item.multi_select = False
    elif kind == _MULTI_KIND:
        item.multi_select = True
        item.question_type = QuestionType.MULTI_CHOICE
    elif kind == _CHOICE_KIND:
        item.question_type = QuestionType.MULTI_CHOICE if item.multi_select else QuestionType.SINGLE_CHOICE
    elif kind == _YES_NO_KIND:
        item.multi_select = False
        item.question_type = QuestionType.SINGLE_CHOICE
        if not item.options:
            item.options = [QuestionOption(label) for label in _YES_NO_LABELS]
    elif kind == _NUMBER_KIND or kind == _INTEGER_KIND:
        item.options = None
        item.multi_select = False
        item.question_type = QuestionType.NUMBER
    elif kind == _SECRET_KIND:
        item.secret = True


# ---------------------------------------------------------------------------
# Decoding: the options
#
# The options of a question, however they were sent, and the one marked
# recommended.

# An option's label: the first of these keys with a usable value.
_OPTION_LABEL_KEYS = ("label", "text", "title", "value", "name", "option")
# Option fields read from one key only.
_OPTION_DESCRIPTION_KEY = "description"
_OPTION_PREVIEW_KEY = "preview"

# An object under 'options' with only these keys, a label key among them, is
# one option sent without its list; any other object maps labels to descriptions.
_OPTION_LABEL_KEY_SET = frozenset(_OPTION_LABEL_KEYS)
# The ways an option says it is the recommended one.
_OPTION_MARK_KEYS = (_RECOMMENDED_KEY, "default", "isDefault", "is_recommended")
_OPTION_MARK_KEY_SET = frozenset(_OPTION_MARK_KEYS)
_OPTION_FIELDS = _OPTION_LABEL_KEY_SET | {_OPTION_DESCRIPTION_KEY, _OPTION_PREVIEW_KEY, *_OPTION_MARK_KEYS}
_OPTIONS_KEY_SET = frozenset(_OPTIONS_KEYS)
_IGNORED_OPTION_KEYS = ("mode",)  # Roo Code's, on every suggestion
# The model's own "Other" option, which the custom row already offers (folded,
# without trailing ".", ":" or an ellipsis).
_OTHER_WORDS = (
    "other", "others", "other (please specify)", "other (specify)", "something else", "custom", "custom answer",
    "其他", "其它", "自定义", "その他", "기타", "otro", "otra", "otros", "autre", "andere", "sonstiges", "altro", "другое",
)
# With the trailing "." ":" or ellipsis models add, so that one lookup decides.
_OTHER_LABELS = frozenset(word + end for word in _OTHER_WORDS for end in ("", ".", ":", "\u2026", "..."))

# Options sent as plain text: one per line, else split on the first of these
# that occurs.  A line may start with a list marker, which is not the label.
_OPTION_TEXT_SEPARATORS = ("|", ";", ",")
_LIST_BULLETS = ("-", "*", "\u2022")


def _decode_options(
    entry: "Dict[Any, Any]", search: bool = True,
) -> "Tuple[Optional[List[QuestionOption]], Dict[Any, Any]]":
    """The options of an entry, each marked ``recommended`` where its object
    says so, and the object they came from: the entry, or the question's own
    fields that a model sent as its only option.  ``search`` as for
    _decode_fields()."""
    raw = _first_usable(entry, _OPTIONS_KEYS, _option_source)
    if raw is None:
        return None, entry
    if len(raw) > MAX_OPTIONS:
        _check_option_count(len(raw))
    if isinstance(raw, dict):
        described = [
            QuestionOption(_field_text(label, "label") or "", _field_text(description, _OPTION_DESCRIPTION_KEY))
            for label, description in raw.items()
            if isinstance(label, str)
        ]
        for pair in described if search else ():
            _check_leaks(pair.label, pair.description)
        return described, entry
    if isinstance(raw, list) and len(raw) == 1 and _is_question_as_option(raw[0]):
        return _decode_options(raw[0], search)[0], raw[0]
    options: List[QuestionOption] = []
    for value in raw:
        option = _decode_option(value, search)
        if option is None:
            continue
        options.append(option)
        # Only an entry with keys beyond the ones read into its option can
        # hold a mark key: counting them spares the look for one where, as
        # in most calls, no option has more.
        if isinstance(value, dict) and len(value) > 1 + (option.description is not None) + (option.preview is not None):
            _read_option_extras(option, value, search)
    return options, entry


def _read_option_extras(option: QuestionOption, value: "Dict[Any, Any]", search: bool) -> None:
    """The keys of an option entry beyond its label, description and
    preview: a mark, and (with ``search``) a text that may hold a leak."""
    if not _OPTION_MARK_KEY_SET.isdisjoint(value):
        option.recommended = _is_marked(value)
    if search and _holds_markup(value):
        _check_leaks(*[text for text in value.values() if text.__class__ is str])


def _option_source(value: Any) -> "Optional[Union[List[Any], Dict[Any, Any]]]":
    """A list of option entries or a label -> description object, maybe as JSON
    text; one option object sent without its list; or options as plain text."""
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped.startswith(("[", "{")):
            return _options_in_text(stripped)
        value = _parse_json(stripped, "'options'", _REPAIRS)
    if isinstance(value, dict):
        if _is_one_option(value):
            return [value]
        positions = _by_position(value)
        return value if positions is None else positions
    return value if isinstance(value, list) else None


def _is_one_option(value: "Dict[Any, Any]") -> bool:
    """An object whose keys, those with a value, are all option fields, a label among them."""
    if _OPTION_FIELDS.issuperset(value):
        return not _OPTION_LABEL_KEY_SET.isdisjoint(value)
    keys = {key for key, field in value.items() if field is not None and key not in _IGNORED_OPTION_KEYS}
    return _OPTION_FIELDS.issuperset(keys) and not _OPTION_LABEL_KEY_SET.isdisjoint(keys)


def _by_position(value: "Dict[Any, Any]") -> "Optional[List[Any]]":
    """The values of an object keyed by positions ("0", "1", ...), in their
    order; None when any key is not a position."""
    positions = {}
    for key, option in value.items():
        position = _position(key)
        if position is None:
            return None
        positions[position] = option
    return [positions[position] for position in sorted(positions)]


def _options_in_text(text: str) -> "Optional[List[str]]":
    """Labels from plain text: one a line, else split on a separator; None
    below two, when the text was most likely not meant as options."""
    if "\n" in text:
        parts = [_without_list_marker(line.strip()) for line in text.splitlines()]
    else:
        separator = next((mark for mark in _OPTION_TEXT_SEPARATORS if mark in text), None)
        parts = text.split(separator) if separator else [text]
    labels = [part.strip() for part in parts if part.strip()]
    return labels if len(labels) >= 2 else None


def _without_list_marker(line: str) -> str:
    """A line without its leading bullet ("-", "*", "\u2022") or number ("1.",
    "1)"); a marker is followed by a space, so "1.5 GB" keeps its number."""
    digits = len(line) - len(line.lstrip("0123456789"))
    if digits and line[digits: digits + 1] in (".", ")"):
        marker = digits + 1
    elif line.startswith(_LIST_BULLETS):
        marker = 1
    else:
        return line
    return line[marker:] if line[marker: marker + 1].isspace() else line


def _check_option_count(count: int) -> None:
    if count > MAX_OPTIONS:
        raise QuestionError(
            f"it has {count} options; the limit is {MAX_OPTIONS}. Offer 2-4 distinct"
            " options, or leave out 'options' to ask for free text."
        )


def _is_question_as_option(value: Any) -> bool:
    """An option that holds options of its own: the question's fields, sent as its only option."""
    return isinstance(value, dict) and _OPTION_LABEL_KEY_SET.isdisjoint(value) and not _OPTIONS_KEY_SET.isdisjoint(value)


def _decode_option(value: Any, search: bool = True) -> "Optional[QuestionOption]":
    """An option entry: an object with a label key, a label, or a number.
    With ``search``, a text of it that holds leaked markup raises
    _LeakedMarkup; a '<' is looked for where each text is read."""
    if isinstance(value, dict):
        label = _first_text(value, _OPTION_LABEL_KEYS, True)
        if label is None:  # a description alone is the label
            label = _field_text(value.get(_OPTION_DESCRIPTION_KEY), "label")
            if search and label is not None and "<" in label:
                _check_leaks(label)
            return None if label is None else QuestionOption(label)
        description = value.get(_OPTION_DESCRIPTION_KEY)
        # Nearly every option has a description: a plain one is read here,
        # which spares a call that costs more than the look for a '<' below.
        if description.__class__ is str and len(description) <= MAX_TEXT and "\\" not in description:
            description = description.strip() or None
        elif description is not None:
            description = _field_text(description, _OPTION_DESCRIPTION_KEY)
        preview = _field_text(value[_OPTION_PREVIEW_KEY], _OPTION_PREVIEW_KEY) if _OPTION_PREVIEW_KEY in value else None
        if search and ("<" in label or description is not None and "<" in description
                       or preview is not None and "<" in preview):
            _check_leaks(label, description, preview)
        return QuestionOption(label, description, preview)
    if isinstance(value, str):
        # Kept even when blank: normalization decides what blanks mean.
        label = value.strip()
        if search and "<" in label:
            _check_leaks(label)
        return QuestionOption(_mended(label, "label") if len(label) > MAX_TEXT or "\\" in label and "\\n" in label else label)
    label = _number_text(value)
    return None if label is None else QuestionOption(label)


def _is_marked(option: "Dict[Any, Any]") -> bool:
    return any(key in option and _boolean(option[key]) for key in _OPTION_MARK_KEYS)


# ---------------------------------------------------------------------------
# Decoding: a recommendation stated in the text
#
# "**Option 2 (Recommended)**: ...", "I recommend option B", "推荐选项2": a
# question whose options carry no mark may name its recommended one by its
# position, in the question's text or purpose.  Normalization asks for it
# only where no option carries a mark and nothing else recommends one.

# The words that name an option by its position, in the languages models
# answer in; the ASCII ones are looked for first by the stems below (either
# case of their first letter), so that a text without them costs two looks.
_POSITION_WORDS = ("option", "choice", "opción", "opcion", "opção", "opcao", "选项", "選項", "方案", "オプション", "옵션")
_POSITION_STEMS = ("ption", "hoice")
# A position: a number, a letter (A is the first), or a Chinese numeral.
_POSITION_SOURCE = r"(?P<place>[1-9][0-9]?|[a-h]|[一二三四五六七八九十])(?![0-9a-z])"
_CHINESE_NUMERALS = "一二三四五六七八九十"
# First-person words that state a recommendation in a sentence, beside the
# marks of an option's label.
_STATEMENT_WORDS = ("we recommend", "we suggest", "I suggest")
# A recommendation stated of a position, after it ("Option 2 (Recommended)",
# "Option B is recommended", "选项2（推荐）") or before it ("I recommend
# option 2", "Recommended: Option 2", "推荐选项2", "我建议选方案B"); a word that
# negates it ("not recommended: option 2") is no statement.
_STATED_AFTER_SOURCE = (
    r"{position}[\s*_]{0,8}(?:[(\[（【]\s{0,4}({words})\s{0,4}[)\]）】]"
    r"|(?:[-—–:：]|\s{1,4}is\s{1,4}(?:the\s{1,4})?|是|为|為)\s{0,4}({words})(?![a-z]))"
)
_STATED_BEFORE_SOURCE = (
    r"(?<![a-z])(?<!not )(?<!n't )(?<!不)({words})\s{0,4}(?:[:：]|\s{1,4}is\b|是|为|為)?[\s*_]{0,8}"
    r"(?:(?:going\s{1,4}with|to\s{1,4}use|the|with)\s{1,4})?(?:选择|選擇|选|選|采用|用)?\s{0,4}{position}"
)
# Every run of spaces or stars is bounded, so that a failed match backtracks
# over a bounded stretch, and a search stays linear in its text.
# A pure position tag on an option: "(Option 2)" after or before the label,
# "Option 2:" or "**Option 2**:" before it, "B)" or "2." before it.  Each
# pattern gives the position and the rest of the label.
_BRACKET_TAG = r"[(\[（【]\s{0,4}{position}\s{0,4}[)\]）】]"
_POSITION_TAG_SOURCES = (
    r"(?s)" + _BRACKET_TAG + r"\s{0,4}(?P<rest>.*)",
    r"(?s)(?P<rest>.*?)\s{0,4}" + _BRACKET_TAG,
    r"(?s)\*{0,2}\s{0,4}{position}\s{0,4}(?:\*{0,2}\s{0,4}[:：.)\-—–]|\*{0,2}\s{0,4}\Z)\s{0,4}\*{0,2}\s{0,4}(?P<rest>.*)",
    r"(?s)\(?(?P<place>[1-9]|[a-h])[).:]\s{1,4}(?P<rest>.*)",
)


@functools.lru_cache(maxsize=None)
def _position_pattern(source: str) -> "Pattern[str]":
    """One of the patterns above, with its words and positions filled in,
    compiled on first use: few calls state a recommendation in their text."""
    words = "|".join(
        re.escape(word) for word in sorted(_RECOMMENDED_WORDS.union(_STATEMENT_WORDS), key=len, reverse=True)
    )
    word = "(?:" + "|".join(re.escape(word) for word in _POSITION_WORDS) + ")"
    filled = source.replace("{words}", words).replace("{position}", word + r"\s{0,4}#?\s{0,4}" + _POSITION_SOURCE)
    return re.compile(filled, re.IGNORECASE)


def _stated_recommendation(item: QuestionItem, options: "List[QuestionOption]") -> "Optional[QuestionOption]":
    """The option that the question's text or purpose recommends by its
    position: by the options' position tags when all carry one, else by
    their places.  Pure position tags are taken off the labels (unless two
    labels would then be one).  None when neither text recommends an option
    there is."""
    position = _stated_position(item.question)
    if position is None and item.purpose is not None:
        position = _stated_position(item.purpose)
    if position is None:
        return None
    tags = [_position_tag(option.label) for option in options]
    labels = [option.label if tag is None else tag[1] for option, tag in zip(options, tags)]
    if len({label.lower() for label in labels}) == len(options):  # else only the tags tell them apart
        for option, label in zip(options, labels):
            option.label = label
    if any(tag is None for tag in tags):  # named by their places
        return options[position] if position < len(options) else None
    return next((option for option, tag in zip(options, tags) if tag is not None and tag[0] == position), None)


def _stated_position(text: str) -> "Optional[int]":
    """The 0-based position a text recommends, or None."""
    if text.isascii() and _POSITION_STEMS[0] not in text and _POSITION_STEMS[1] not in text:
        return None  # most texts name no position: two looks
    for source in (_STATED_AFTER_SOURCE, _STATED_BEFORE_SOURCE):
        found = _position_pattern(source).search(text)
        if found is not None:
            return _position_index(found.group("place"))
    return None


def _position_tag(label: str) -> "Optional[Tuple[int, str]]":
    """The 0-based position a label's pure tag names, and the label without
    it (the whole label when nothing else would remain); None untagged."""
    for source in _POSITION_TAG_SOURCES:
        found = _position_pattern(source).fullmatch(label)
        if found is not None:
            return _position_index(found.group("place")), found.group("rest").strip() or label
    return None


def _position_index(position: str) -> int:
    """The 0-based index of a written position: 2, B or 二 are the second."""
    if position.isdigit() and position.isascii():
        return int(position) - 1
    numeral = _CHINESE_NUMERALS.find(position)
    return numeral if numeral >= 0 else ord(position.lower()) - ord("a")


# ---------------------------------------------------------------------------
# Decoding: field readers
#
# One field's value as the type it is read into, or None when it is
# unusable, so that the next key is looked at; text over MAX_TEXT is
# refused.

# Boolean and selection-mode words, read trimmed and in lower case.
_BOOLEAN_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
_SELECTION_MODES = {"multiple": True, "multi": True, "single": False}


def _first_usable(entry: "Dict[Any, Any]", keys: "Sequence[str]", coerce: "Callable[[Any], Optional[_T]]") -> "Optional[_T]":
    for key in keys:
        if key in entry:
            value = coerce(entry[key])
            if value is not None:
                return value
    return None


def _first_text(entry: "Dict[Any, Any]", keys: "Sequence[str]", numbers: bool = False) -> "Optional[str]":
    """What _first_usable(entry, keys, _field_text) finds, written out in one
    call because nearly every field of every question is read through it.
    With ``numbers``, a finite number counts too, as its text."""
    for key in keys:
        if key in entry:
            value = entry[key]
            if isinstance(value, str):
                value = value.strip()
                # A look for one character is far cheaper than for two, and
                # most text has no backslash at all.
                if len(value) > MAX_TEXT or "\\" in value and "\\n" in value:
                    value = _mended(value, key)  # may leave it blank: then the next key
                if value:
                    return value
            elif isinstance(value, list):  # two phrasings of one text: the first
                value = _first_string(value, key)
                if value is not None:
                    return value
            elif numbers:
                value = _number_text(value)
                if value is not None:
                    return value
    return None


def _field_text(value: Any, key: str = "text") -> "Optional[str]":
    if isinstance(value, str):
        value = value.strip()
        if len(value) > MAX_TEXT or "\\" in value and "\\n" in value:
            value = _mended(value, key)
        return value or None
    if isinstance(value, list):
        return _first_string(value, key)
    return None


def _first_string(values: "List[Any]", key: str) -> "Optional[str]":
    """The first usable string of a list (models send two phrasings of one text)."""
    for value in values[:MAX_OPTIONS]:
        if isinstance(value, str):
            text = _field_text(value, key)
            if text is not None:
                return text
    return None


def _mended(text: str, key: str) -> str:
    """Trimmed text that may be long or hold an escaped line break, made right.

    A model that escapes line breaks twice sends a backslash and an "n"
    where it meant a line break; text that also holds a real line break
    meant its backslashes.  Text over MAX_TEXT is refused.
    """
    if "\\n" in text and "\n" not in text:
        text = text.replace("\\n", "\n").strip()
    if len(text) > MAX_TEXT:
        raise QuestionError(
            f"its {key!r} is {len(text)} characters long (it starts"
            f" {_quoted(text[:_QUOTE_CHARS])}); the limit is {MAX_TEXT}. Shorten it."
        )
    return text


def _number_text(value: Any) -> "Optional[str]":
    """A finite number as text; bools and non-finite floats are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        text = str(value)
    except ValueError:  # an int too long for this interpreter to print
        return None
    return _mended(text, "number") if len(text) > MAX_TEXT else text


def _text_or_number(value: Any) -> "Optional[str]":
    """Text, or a finite number as its text (a default sent as 8 or "8")."""
    return _field_text(value) if isinstance(value, (str, list)) else _number_text(value)


# A number as a person or a model types it: a sign, digits with a decimal
# point anywhere, an exponent; ASCII digits only.
_TYPED_NUMBER_SOURCE = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_INTEGER_DIGITS = 18  # an integer this long or shorter stays an int


def _typed_number(text: str) -> "Optional[float]":
    """The value of one number written as text (trimmed), or None; an
    integer stays an int, so that it is shown as it was written."""
    if _pattern(_TYPED_NUMBER_SOURCE).fullmatch(text) is None:
        return None
    if len(text) <= _INTEGER_DIGITS and text.lstrip("+-").isdigit():
        return int(text)
    value = float(text)
    return value if math.isfinite(value) else None


def _bound(value: Any) -> "Optional[float]":
    """A bound or step of a number question: a finite JSON number, or a
    numeric string."""
    if isinstance(value, str):
        return _typed_number(value.strip())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return value if math.isfinite(value) else None
    except OverflowError:  # an int too large for a float
        return None


def _identifier(value: Any) -> "Optional[str]":
    if isinstance(value, str):
        return _field_text(value, _ID_KEY)
    if isinstance(value, int) and not isinstance(value, bool):
        return _number_text(value)
    return None


def _boolean(value: Any) -> "Optional[bool]":
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {0: False, 1: True}.get(value)
    if isinstance(value, str):
        return _BOOLEAN_WORDS.get(value.strip().lower())
    return None


def _selection_mode(value: Any) -> "Optional[bool]":
    if isinstance(value, str):
        return _SELECTION_MODES.get(value.strip().lower())
    return None


# ===========================================================================
# Normalization and validation
#
# validate_and_normalize(): ids, placeholder questions refused, cleaned
# labels, kinds, the recommended option first.

# What a model sends as a question's whole text when it copied a template
# or the schema instead of writing the question (folded): shown to a
# person, it asks nothing.
_PLACEHOLDERS = frozenset((
    "placeholder", "question", "question text", "question here", "your question", "your question here",
    "the question", "enter question", "enter your question", "insert question here", "<question>",
    "<your question>", "[question]", "{question}", "todo", "tbd", "tba", "...", "\u2026", "?", "xxx", "string",
    "lorem ipsum", "问题", "待定",
))
_PLACEHOLDER_LENGTH = max(map(len, _PLACEHOLDERS))


def validate_and_normalize(input: QuestionInput) -> "List[QuestionItem]":
    """Validate a batch and return new, normalized items; ``input`` is unchanged.

    Normalization gives every question a unique id, cleans option labels
    (trimmed, the " (Recommended)" suffix taken off, blanks and repeats
    dropped), derives each kind, and moves the recommended option of a
    single-choice question to the top.

        >>> items = askq.validate_and_normalize(askq.QuestionInput([
        ...     askq.QuestionItem.multi_choice("Which checks?", ["Lint", " Lint", "Tests"])]))
        >>> items[0].id, [option.label for option in items[0].options]
        ('q0', ['Lint', 'Tests'])
    """
    items = input.questions if isinstance(input, QuestionInput) else None
    if not isinstance(items, list) or not all(isinstance(item, QuestionItem) for item in items):
        raise QuestionError("validate_and_normalize() takes a QuestionInput of QuestionItem.")
    _check_question_count(len(items))
    copies = []
    for index, item in enumerate(items):
        try:
            copies.append(_coerced_copy(item))
        except QuestionError as err:
            raise err.placed(index, None) from None
    return _normalize(copies)


def _coerced_copy(item: QuestionItem) -> QuestionItem:
    """A copy of an item built in code, with every field of the type decode()
    gives, which normalizing in place cannot reach through to the original."""
    options = item.options
    if isinstance(options, (list, tuple)):
        options = [_coerced_option(option) for option in options]
    elif options is not None:
        options = []  # not a list: a choice question with no usable option
    copy = QuestionItem(
        _field_text(item.question, "question") or "",  # blank: refused in its turn, by _normalize_item()
        _field_text(item.header, "header"),
        options,
        item.multi_select is True,
        _field_text(item.purpose, "purpose"),
        _boolean(item.required) is not False,
        _derived_kind(item),  # taken from the item as given, whatever 'options' held
        _identifier(item.id) or "",
        _field_text(item.recommended, "recommended"),
        _field_text(item.placeholder, "placeholder"),
        item.allow_custom is not False,
    )
    if item.default is not None and not copy.question_type.is_choice:  # most have none: the class's stands
        copy.default = _text_or_number(item.default)
    if item.secret is True:
        copy.secret = True
    if copy.question_type is QuestionType.NUMBER:
        copy.minimum, copy.maximum, copy.step = _settled_bounds(_bound(item.minimum), _bound(item.maximum), _bound(item.step))
        copy.unit = _field_text(item.unit, "unit")
    return copy


def _coerced_option(option: Any) -> QuestionOption:
    # A bare label, as a caller may list, becomes an option of its own.
    if not isinstance(option, QuestionOption):
        option = QuestionOption(option)
    return QuestionOption(
        _field_text(option.label, "label") or "",
        _field_text(option.description, "description"),
        _field_text(option.preview, "preview"),
        option.recommended is True,
    )


def _normalize(items: "List[QuestionItem]") -> "List[QuestionItem]":
    """Normalize decoded items in place; their count is checked already
    (by decode() on the raw entries, or before the copy was made)."""
    if not items:
        raise QuestionError(_NO_QUESTIONS)
    _assign_ids(items)
    for index, item in enumerate(items):
        _normalize_item(index, item)
    return items


def _assign_ids(items: "List[QuestionItem]") -> None:
    """Keep explicit ids, checked unique; give the rest ``q<index>``, made unique."""
    owners: Dict[str, int] = {}
    for index, item in enumerate(items):
        if item.id:
            first = owners.setdefault(item.id, index)
            if first != index:
                raise QuestionError(
                    f"{_where(first, items[first].question)} and"
                    f" {_where(index, item.question)} both have the id"
                    f" {_quoted(item.id)}. Give every question its own id, or leave"
                    " 'id' out.",
                    index,
                )
    if len(owners) == len(items):
        return
    for index, item in enumerate(items):
        if not item.id:
            candidate = f"q{index}"
            item.id = _free_id(candidate, owners) if candidate in owners else candidate
            owners[item.id] = index


def _free_id(base: str, taken: "Dict[str, int]") -> str:
    candidate, suffix = base, 0
    while candidate in taken:
        suffix += 1
        candidate = f"{base}-{suffix}"
    return candidate


def _normalize_item(index: int, item: QuestionItem, multi: QuestionType = QuestionType.MULTI_CHOICE) -> None:
    # ``multi`` is read once, at definition, as json's encoder keeps its fast
    # names: a member read through the enum class is slow, and this runs
    # for every question (so do _derived_kind and _normalize_choices).
    if len(item.question) <= _PLACEHOLDER_LENGTH:  # one look spares most questions the rest
        if not item.question:  # only an item built in code can get here without one
            raise _missing_question(index)
        if item.question.lower() in _PLACEHOLDERS:
            raise _placeholder_question(index, item.question)
    declared = item.question_type
    kind = _derived_kind(item)
    item.question_type = kind
    item.multi_select = kind is multi
    if kind.is_choice:
        _normalize_choices(index, item, declared)
    if not item.question_type.is_choice:
        item.options = item.recommended = None


def _placeholder_question(index: int, question: str) -> QuestionError:
    return QuestionError(
        f"{_where(index, question)} is the placeholder {_quoted(question)}, not a question. Write the"
        " full question to show the user in its 'question' field, ending with a question mark.",
        index,
    )


def _derived_kind(
    item: QuestionItem,
    text: QuestionType = QuestionType.TEXT,
    single: QuestionType = QuestionType.SINGLE_CHOICE,
    multi: QuestionType = QuestionType.MULTI_CHOICE,
    number: QuestionType = QuestionType.NUMBER,
) -> QuestionType:
    declared = item.question_type
    if declared is number:
        return number
    if item.multi_select is True or declared is multi:
        return multi
    if item.options or declared is single:
        return single
    return text


def _normalize_choices(
    index: int, item: QuestionItem, declared: QuestionType, single_kind: QuestionType = QuestionType.SINGLE_CHOICE,
) -> None:
    """Clean the options of a choice question, and settle its recommendation.
    A question that only its options made a choice, and whose options were all
    blank, becomes a free-text question (``declared`` is the kind it came with)."""
    if item.options is None:
        raise QuestionError(
            f"{_where(index, item.question)} is a choice question but has no 'options'. Give"
            " it 2-4 options, or leave out 'options' and 'multiSelect' to ask for free text.",
            index,
        )
    single = item.question_type is single_kind
    try:
        if len(item.options) > MAX_OPTIONS:
            _check_option_count(len(item.options))
        options, marks, dropped_other = _cleaned_options(item.options, item.allow_custom, single)
    except QuestionError as err:
        raise err.placed(index, item.question) from None
    if not options and (dropped_other or item.question_type is QuestionType.SINGLE_CHOICE and declared is QuestionType.TEXT):
        item.question_type = QuestionType.TEXT
        item.multi_select = False
        return
    if not options:
        raise QuestionError(
            f"{_where(index, item.question)} has zero options once blank and repeated labels"
            " are dropped. Give it 2-4 options with distinct, non-empty labels, or"
            " leave out 'options' to ask for free text.",
            index,
        )
    recommended = None
    if single:  # one recommendation, on the question; the options carry none
        recommended = _recommendation(item.recommended, options, marks)
        if recommended is None and marks == (None, None):
            stated = _stated_recommendation(item, options)
            recommended = None if stated is None else stated.label
        options = _recommended_first(options, recommended)
        for option in options:
            option.recommended = False
    item.options = options
    item.recommended = recommended


def _cleaned_options(
    raw_options: "List[QuestionOption]", custom_row: bool, single: bool
) -> "Tuple[List[QuestionOption], Tuple[Optional[str], Optional[str]], bool]":
    """Options without their recommended mark, blanks and repeats (compared
    without case), and, where the custom row offers it, the model's own
    "Other" (and, on a multi-choice question, its own copy of the custom
    row); the first label flagged ``recommended`` and the first that carried
    the mark in its text; whether an "Other" went.  Every option that was
    marked either way (or repeated one that was) is flagged.  On a
    ``single`` choice an option with the custom row's label is refused, as
    the tool's first design refuses it."""
    options: List[QuestionOption] = []
    kept: Dict[str, QuestionOption] = {}
    flagged: Optional[str] = None
    suffixed: Optional[str] = None
    dropped_other = False
    others: FrozenSet[str] = _OTHER_LABELS if custom_row else frozenset()
    for option in raw_options:
        label = option.label
        stem = _without_mark(label) if _may_hold_mark(label) else None
        if stem is not None:
            label = stem
        folded = label.lower()
        if folded in kept:
            first = kept[folded]  # a repeat passes its mark to the option it repeats
        elif not label or folded in others or folded == _CUSTOM_FOLDED and custom_row and not single:
            dropped_other = dropped_other or bool(label)
            continue
        else:
            option.label = label
            kept[folded] = first = option
            options.append(option)
        if option.recommended and flagged is None:
            flagged = first.label
        if stem is not None and suffixed is None:
            suffixed = first.label
        first.recommended = first.recommended or option.recommended or stem is not None
    if single and _CUSTOM_FOLDED in kept:
        raise QuestionError(
            f"it has the option {_quoted(kept[_CUSTOM_FOLDED].label)}, which collides with the reserved"
            " custom-answer label. Remove it: the user can always type their own answer."
        )
    return options, (flagged, suffixed), dropped_other


def _recommendation(
    requested: "Optional[str]", options: "List[QuestionOption]", marks: "Tuple[Optional[str], Optional[str]]"
) -> "Optional[str]":
    """The recommended label: the question's own field if it names an
    option, else the first option flagged recommended, else the first that
    carried the mark in its label."""
    named = None if requested is None else _option_named(options, requested)
    if named is not None:
        return named.label
    flagged, suffixed = marks
    return suffixed if flagged is None else flagged


def _recommended_first(
    options: "List[QuestionOption]", recommended: "Optional[str]"
) -> "List[QuestionOption]":
    if recommended is None or options[0].label == recommended:
        return options
    top = [option for option in options if option.label == recommended]
    return top + [option for option in options if option.label != recommended]


# ===========================================================================
# Answers
#
# collect_answers(): whatever a UI collected, checked against the questions;
# the one rule for which option a string names; assumed_answers().

_PICKED = "picked"
_TYPED = "typed"
_NOTE = "note"
_ASSUMED = "assumed"
_ATTACHED = "attached"


def collect_answers(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]", raw: Any, partial: bool = False
) -> "List[AnswerItem]":
    """Check what a UI collected against the normalized questions.

    ``raw`` may be any of the forms harnesses use:

    - a list of AnswerItem or ``{"id", "answer", "selected"}`` dicts;
    - a mapping from question id, question text or 0-based position (an
      int or its digits) to a string, a list of strings or None;
    - a list with one string, list of strings or None per question;
    - ``{"answers": {id: {"answers": [...]}}}``, or its inner mapping.

    A string names an option when it equals the label, whatever its case
    and with or without " (Recommended)"; on a multi-choice question, a
    comma-separated list of labels names those options; on a Yes/No
    question, "y" and "n" name Yes and No; CUSTOM_RESPONSE_LABEL picks the
    row for typing.  Any other string is typed text.  Returns one AnswerItem
    per question in question order (a skipped optional question as
    ``AnswerItem(id)``); with ``partial``, only for the questions that were
    answered or skipped, and a required question may lack an answer.
    Anything else raises AnswerError, naming the question.

        >>> out = askq.ask({"questions": [{"question": "Which?", "options": ["Alpha", "Beta"]}]})
        >>> askq.collect_answers(out, {"q0": "beta"})
        [AnswerItem(id='q0', answer=None, selected=['Beta'], assumed=False, note=None, unanswered=None)]
        >>> askq.collect_answers(out, [["neither"]])
        [AnswerItem(id='q0', answer='neither', selected=None, assumed=False, note=None, unanswered=None)]
    """
    items = _question_list(questions)
    given = _given_answers(items, raw)
    answers = []
    for index, item in enumerate(items):
        entry = given.get(index)
        if entry is None and partial:
            continue
        answer = _checked_answer(index, item, entry or _Given(), partial)
        if answer is not None:
            answers.append(answer)
    return answers


def assumed_answers(output: QuestionOutput) -> "List[AnswerItem]":
    """What a run without a person may go on with: each single-choice
    question's recommended option, marked ``assumed``; nothing for the
    other questions.  askq never calls this by itself: a timeout or a
    missing person is not consent.  The harness decides (the CLI's
    ``--assume recommended``).

        >>> out = askq.ask({"questions": [{"question": "Which?", "options": ["A", "B (Recommended)"]}]})
        >>> askq.assumed_answers(out)
        [AnswerItem(id='q0', answer=None, selected=['B'], assumed=True, note=None, unanswered=None)]
    """
    return [
        AnswerItem(item.id, None, [item.recommended], True)
        for item in _question_list(output)
        if item.question_type is QuestionType.SINGLE_CHOICE and item.recommended is not None
    ]


class _AttachmentBounds:
    """How much a person may attach: files on one question, bytes in one
    file, bytes in all the files of one ask.  A server sets its own."""

    __slots__ = ("each", "per_question", "total")

    def __init__(
        self, per_question: int = MAX_ATTACHMENTS, each: int = MAX_ATTACHMENT_BYTES,
        total: int = MAX_ASK_ATTACHMENT_BYTES,
    ) -> None:
        self.per_question, self.each, self.total = per_question, each, total

    def check(self, items: "Sequence[QuestionItem]", answers: "Iterable[AnswerItem]") -> None:
        """Refuse, naming the question, the answers whose files go beyond the bounds."""
        by_id = {item.id: (index, item) for index, item in enumerate(items)}
        total = 0
        for answer in answers:
            index, item = by_id[answer.id]
            if len(answer.attachments) > self.per_question:
                raise _refused(
                    index, item, "too_many_attachments",
                    f" has {len(answer.attachments)} files attached; it takes {self.per_question} at most.",
                )
            for attachment in answer.attachments:
                total += attachment.size
                if attachment.size > self.each or total > self.total:
                    raise _refused(index, item, "attachment_too_large", f": {self.too_large(attachment)}")

    def words(self) -> "Dict[str, str]":
        """The bounds as a person reads them, for the page's words."""
        return {"count": str(self.per_question), "each": _size_words(self.each), "total": _size_words(self.total)}

    def too_large(self, attachment: Attachment) -> str:
        if attachment.size > self.each:
            return f"the file {_quoted(attachment.name)} is {_size_words(attachment.size)}; a file may be {_size_words(self.each)} at most."
        return f"the files attached come to more than {_size_words(self.total)}, the most one set of answers takes."


def _files_taken(
    items: "Sequence[QuestionItem]", bounds: _AttachmentBounds, attached: "Dict[str, List[Attachment]]",
    sent: "Dict[str, List[Tuple[str, bytes]]]",
) -> "Tuple[Dict[str, List[Attachment]], Dict[int, str]]":
    """The files a person sends (name and bytes, by question id) added to
    those ``attached`` already, each question's once its bytes are a type
    askq takes and the bounds still hold; and the reason of each question's
    refusal, by its index.  The page and the in-chat view both take files so."""
    problems: Dict[int, str] = {}
    for index, item in enumerate(items):
        if not sent.get(item.id):
            continue
        try:
            taken = [Attachment(name, data) for name, data in sent[item.id]]
            merged = {**attached, item.id: [*attached.get(item.id, ()), *taken]}
            bounds.check(items, [AnswerItem(key, attachments=kept) for key, kept in merged.items()])
        except AnswerError as err:
            problems[index] = err.reason
            continue
        attached = merged
    return attached, problems


def _size_words(size: int) -> str:
    """A size as a person reads it: bytes, KB or MB (of 1024)."""
    if size < 1024:
        return f"{size} byte" + ("" if size == 1 else "s")
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB".replace(".0 ", " ")
    return f"{size / (1024 * 1024):.1f} MB".replace(".0 ", " ")


class _Given:
    """What was given for one question, before any check: picked labels,
    typed texts, whether the custom row was picked, whether a policy (not
    the person) gave it, the note, and the state of a question left
    without an answer."""

    __slots__ = ("assumed", "attachments", "custom", "note", "note_is_typed", "picked", "typed", "unanswered")

    def __init__(self) -> None:
        self.attachments: Tuple[Attachment, ...] = ()
        self.picked: List[str] = []
        self.typed: List[str] = []
        self.custom = False
        self.assumed = False
        self.note: Optional[str] = None
        self.unanswered: Optional[str] = None
        # The form sends free text as a note (Codex's user_note, Claude Code's
        # "(notes only)"): a note with nothing beside it is the typed answer.
        self.note_is_typed = False

    def add_text(self, item: QuestionItem, text: str, readers: "_EntryReader") -> None:
        """One string of an answer: a note (as the harness forms mark one), a
        state's marker, a pick or picks, typed text."""
        answer, note = text, None
        if text.startswith(readers.note_prefixes):  # a note entry, and nothing else
            prefix = next(prefix for prefix in readers.note_prefixes if text.startswith(prefix))
            answer, note = "", text[len(prefix):]
            self.note_is_typed = self.note_is_typed or prefix in readers.typed_note_prefixes
        for part in readers.note_parts:  # a note joined to the end of an answer
            if part in answer:
                answer, _, note = answer.partition(part)
        if note is not None:
            self.note = note if self.note is None else f"{self.note}\n{note}"
        if not answer:
            return
        if answer[:1] in readers.row_starts and self.read_row(item, answer.strip(), readers):
            return
        picks, typed = _picks_and_text(item, answer)
        self.add_picks(picks)
        if typed is not None:
            self.typed.append(typed)

    def read_row(self, item: QuestionItem, text: str, readers: "_EntryReader") -> bool:
        """Whether ``text`` is one of the forms' own entries, read: a state's
        marker, an outcome's (which says nothing of the question), or a
        row meaning "my answer is in the note"."""
        if text in readers.markers:
            self.unanswered = readers.markers[text] if self.unanswered is None else self.unanswered
            return True
        if item.question_type.is_choice and text.lower() in readers.note_rows:
            self.note_is_typed = True
            return True
        return False

    def add_picks(self, picks: "List[_Pick]") -> None:
        for pick in picks:
            if pick is _CUSTOM_ROW:
                self.custom = True
            else:
                self.picked.append(pick.label)

    def settle_note(self) -> "_Given":
        """The note as the typed answer, where the form sends free text so
        and nothing else was given."""
        if self.note_is_typed and self.note and not (self.typed or self.picked or self.custom or self.unanswered):
            self.typed, self.note = [self.note], None
        return self


def _given_answers(items: "List[QuestionItem]", raw: Any) -> "Dict[int, _Given]":
    """What was given for each question, by its index, before any check."""
    asides: Dict[Any, _Given] = {}
    readers: Optional[_EntryReader] = None  # a list is no harness's form: a form is a mapping
    if isinstance(raw, dict):
        raw, asides, readers = _read_form(items, raw)
    if isinstance(raw, dict):
        pairs = [(_answer_key(items, key), key, value) for key, value in raw.items()]
        given = [(index, _given_values(items, index, value, readers or _forms_view().reader, asides.get(key)))
                 for index, key, value in pairs]
        if asides:  # what a form said of questions its answers leave out
            given += [(_answer_key(items, key), aside.settle_note()) for key, aside in asides.items() if key not in raw]
    elif isinstance(raw, (list, tuple)) and any(isinstance(e, (dict, AnswerItem)) for e in raw):
        given = [_answer_entry(items, place, entry) for place, entry in enumerate(raw)]
    elif isinstance(raw, (list, tuple)):
        if len(raw) > len(items):
            raise AnswerError(
                f"The answers list {len(raw)} entries, one per question, but there are only"
                f" {len(items)} questions."
            )
        readers = readers or _forms_view().reader
        given = [(index, _given_values(items, index, value, readers)) for index, value in enumerate(raw)]
    else:
        raise AnswerError(
            "The answers must be a list of {\"id\", \"answer\", \"selected\"} objects, an"
            " object mapping question ids to answers, or a list with one answer per"
            f" question, not {_json_type(raw)}."
        )
    found: Dict[int, _Given] = {}
    for index, value in given:
        if index in found:
            raise _refused(index, items[index], "two_answers", " is answered twice; send one answer per question.")
        found[index] = value
    return found


def _read_form(items: "List[QuestionItem]", raw: "Dict[Any, Any]") -> "Tuple[Any, Dict[Any, _Given], _EntryReader]":
    """A mapping's answers made plain, what their form says beside them by
    key (notes, states), and the reader of their entries: the harness form
    whose shape they have reads them, its own entries only (_FormsView)."""
    view = _forms_view()
    for form in view.bare if view.wrapper_keys.isdisjoint(raw) else view.forms:
        found = form.unwrap(items, raw)
        if found is not None:
            return found[0], found[1], _entry_reader((form,))
    return raw, {}, view.reader


def _answer_key(items: "List[QuestionItem]", key: Any) -> int:
    """The question a key names: its id, else its text (also as the model sent
    it, before trimming and repair), else its position."""
    for index, item in enumerate(items):
        if item.id == key:
            return index
    text = _field_text(key, "question") if isinstance(key, str) else None
    named = [index for index, item in enumerate(items) if item.question in (key, text)]
    if len(named) == 1:
        return named[0]
    headed = [index for index, item in enumerate(items) if item.header is not None and item.header == key]
    if not named and len(headed) == 1:  # VS Code keys answers by header
        return headed[0]
    if named:
        ids = ", ".join(_quoted(items[index].id) for index in named)
        raise AnswerError(
            f"The answers name the question {_quoted(str(key))}, but {len(named)} questions"
            f" have that text; key the answers by id instead: {ids}.",
            reason="ambiguous_question",
        )
    position = _position(key)
    if position is not None and position < len(items):
        return position
    known = ", ".join(_quoted(item.id) for item in items)
    raise AnswerError(
        f"The answers name {_quoted(str(key))}, which is no question's id, text or position."
        f" The ids are: {known}.",
        reason="unknown_question",
    )


def _given_values(
    items: "List[QuestionItem]", index: int, value: Any, readers: "_EntryReader", aside: "Optional[_Given]" = None,
) -> _Given:
    """A string, a list of strings, None, or an answer object: each string
    picks, typed text, a note or a state, by the naming rule."""
    if isinstance(value, dict) and not _ENTRY_KEYS.isdisjoint(value):
        return _entry_given(index, items[index], value)
    texts = value if isinstance(value, (list, tuple)) else [] if value is None else [value]
    if not all(isinstance(text, str) for text in texts):
        number = _number_text(value) if items[index].question_type is QuestionType.NUMBER else None
        if number is None:  # a JSON number answers a number question as its digits would
            raise _refused(
                index, items[index], "malformed",
                f": its answer must be a string, a list of strings or null, not {_json_type(value)}.",
            )
        texts = [number]
    _check_pick_count(index, items[index], texts)
    given = aside or _Given()
    for text in texts:
        given.add_text(items[index], text, readers)
    return given.settle_note() if given.note_is_typed else given


# The keys of an answer object, whatever wraps it (VS Code's answers by
# header, any mapping from questions to objects).
_ENTRY_KEYS = frozenset(("answer", "selected", "freeText", "note", "notes", "skipped", "unanswered", "attachments"))


def _check_pick_count(index: int, item: QuestionItem, texts: "Sequence[str]") -> None:
    # Each string is matched against every option: bound the work.
    if len(texts) > MAX_OPTIONS + 1:
        raise _refused(
            index, item, "malformed",
            f" has {len(texts)} answers in one list; it has {len(item.options or ())} options"
            " and one typed answer at most.",
        )


def _answer_entry(items: "List[QuestionItem]", place: int, entry: Any) -> "Tuple[int, _Given]":
    """One {id, answer, selected} entry: the fields mean what they say."""
    if isinstance(entry, AnswerItem):
        index = _answer_key(items, entry.id)
        fields = (entry.answer, entry.selected, entry.assumed, entry.note, entry.unanswered)
        given = _fields_given(index, items[index], *fields)
        given.attachments = _attachments_given(index, items[index], entry.attachments)
        return index, given
    if isinstance(entry, dict):
        index = _answer_key(items, entry.get("id"))
        return index, _entry_given(index, items[index], entry)
    raise AnswerError(
        f"answers[{place}] is {_json_type(entry)}; each answer must be an object"
        " like {\"id\": \"q0\", \"answer\": \"...\", \"selected\": [\"...\"]}."
    )


def _entry_given(index: int, item: QuestionItem, entry: "Dict[Any, Any]") -> _Given:
    """An answer object's fields, also as VS Code names them (``freeText``,
    ``skipped: true``)."""
    state = entry.get("unanswered")
    if state is None and entry.get("skipped") is True:
        state = _SKIPPED
    given = _fields_given(
        index, item, entry.get("answer", entry.get("freeText")), entry.get("selected"), entry.get("assumed"),
        entry.get("note", entry.get("notes")), state,
    )
    given.attachments = _attachments_given(index, item, entry.get("attachments"))
    return given


def _attachments_given(index: int, item: QuestionItem, value: Any) -> "Tuple[Attachment, ...]":
    """An answer's files: Attachments, or (the JSON interface's form)
    objects with the file's ``name`` and its bytes as base64 ``data``,
    and, to tell a file cut off on its way, its ``size`` or ``sha256``."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise _refused(index, item, "malformed", f": 'attachments' must be a list of files, not {_json_type(value)}.")
    if len(value) > MAX_ATTACHMENTS * 4:  # each is read, then bounded by the server: bound the reading
        raise _refused(index, item, "too_many_attachments", f" has {len(value)} attachments; far too many.")
    try:
        return tuple(entry if isinstance(entry, Attachment) else _attachment_sent(entry) for entry in value)
    except AnswerError as err:
        raise _refused(index, item, err.reason, f": {err}") from None


def _attachment_sent(entry: Any) -> Attachment:
    """A file as the JSON interface sends it, checked: whole, and a type askq takes."""
    import base64
    import binascii

    if not isinstance(entry, dict) or not isinstance(entry.get("data"), str):
        raise AnswerError(
            "each attachment must be an object like {\"name\": \"shot.png\", \"data\": \"<base64 of the bytes>\"},"
            f" not {_json_type(entry)}.", reason="malformed",
        )
    name = _file_name(entry.get("name"))
    try:
        data = base64.b64decode(entry["data"].encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise AnswerError(_ATTACHMENT_WORDS["attachment_cut_off"].format(name=_quoted(name)), reason="attachment_cut_off") from None
    attachment = Attachment(name, data)
    size, digest = entry.get("size"), entry.get("sha256")
    if size is not None and size != attachment.size or digest is not None and digest != attachment.sha256:
        raise AnswerError(_ATTACHMENT_WORDS["attachment_cut_off"].format(name=_quoted(name)), reason="attachment_cut_off")
    return attachment


def _fields_given(
    index: int, item: QuestionItem, typed: Any, selected: Any, assumed: Any, note: Any, state: Any,
) -> _Given:
    if isinstance(selected, str):
        selected = [selected]
    for name, value in (("answer", typed), ("note", note)):
        if value is not None and not isinstance(value, str):
            raise _refused(index, item, "malformed", f": {name!r} must be a string or null, not {_json_type(value)}.")
    if state is not None and state not in _STATES:
        states = ", ".join(map(_quoted, _STATES))
        raise _refused(index, item, "malformed", f": 'unanswered' must be one of {states} or null, not {_quoted(state) if isinstance(state, str) else _json_type(state)}.")
    if selected is not None and not (
        isinstance(selected, (list, tuple)) and all(isinstance(label, str) for label in selected)
    ):
        raise _refused(
            index, item, "malformed", f": 'selected' must be a list of option labels or null, not {_json_type(selected)}."
        )
    _check_pick_count(index, item, selected or ())
    given = _Given()
    given.typed = [] if typed is None else [typed]
    given.assumed = assumed is True
    given.note = note
    given.unanswered = state
    for label in selected or ():
        given.add_picks(_picks_of_selected(index, item, label))
    return given


def _picks_of_selected(index: int, item: QuestionItem, label: str) -> "List[_Pick]":
    picks = _options_named_by(item, label)
    if picks is not None:
        return picks
    if not item.options:
        raise _refused(
            index, item, "unknown_option", " is a free-text question: it has no options to pick. Send the text as 'answer'."
        )
    options = ", ".join(_quoted(option.label) for option in item.options)
    raise _refused(
        index, item, "unknown_option",
        f": {_quoted(label)} is not one of its options ({options}). Pick one of those"
        + (", or send the text as a typed answer." if item.allow_custom else "."),
    )


def _checked_answer(index: int, item: QuestionItem, given: _Given, partial: bool) -> "Optional[AnswerItem]":
    texts = [text.strip() for text in given.typed if not _blank(text)]  # blank is no answer
    note = None if given.note is None or _blank(given.note) else given.note.strip()
    picked = [option.label for option in item.options or () if option.label in given.picked]
    _check_typed(index, item, texts, given.custom)
    if texts and item.question_type.is_number:
        _check_number(index, item, texts[0])
        texts[0] = _number_written(item, texts[0])
    if item.question_type is QuestionType.SINGLE_CHOICE and len(picked) + len(texts) > 1:
        raise _refused(
            index, item, "two_answers",
            " is a single-choice question: it takes one picked option or one typed answer, not more.",
        )
    if picked or texts:
        if given.unanswered in _STATES:
            raise _refused(
                index, item, "two_answers",
                f" has an answer and is also marked {given.unanswered!r}; send one or the other.",
            )
        return AnswerItem(item.id, texts[0] if texts else None, picked or None, given.assumed, note, None, given.attachments)
    return _unanswered(index, item, given.unanswered, note, partial, given.attachments)


def _unanswered(
    index: int, item: QuestionItem, state: "Optional[str]", note: "Optional[str]", partial: bool,
    attachments: "Tuple[Attachment, ...]" = (),
) -> "Optional[AnswerItem]":
    """A question without an answer: its state (an optional question given
    nothing is skipped), the note kept; refused when it is required and
    the person has not said to leave it or discuss it.  One a form marks
    as left by the outcome counts as not given at all."""
    if state == _UNREACHED:
        if partial and note is None and not attachments:
            return None
        state = None
    if state is None and not item.required and not (partial and (note is not None or attachments)):
        state = _SKIPPED  # given nothing; a note alone in a partial outcome stays on an unanswered question
    settled = state is not None and _STATES[state].settles
    if item.required and not settled:
        if not partial:
            alone = " (a note alone does not answer it)" if note is not None else " (attached files alone do not answer it)" if attachments else ""
            raise _refused(index, item, "required", f" is required but has no answer{alone}.")
        state = None  # a required question is never skipped: it is unanswered
    return AnswerItem(item.id, note=note, unanswered=state, attachments=attachments)


def _check_typed(index: int, item: QuestionItem, texts: "List[str]", custom: bool) -> None:
    if len(texts) > 1:
        raise _refused(index, item, "two_answers", f" has {len(texts)} typed answers; it takes one.")
    if custom and not texts:
        raise _refused(
            index, item, "custom_without_text",
            f": {CUSTOM_RESPONSE_LABEL!r} was picked, but no text was typed for it."
            " Send the typed text as the answer, or pick an option.",
        )
    if texts and item.question_type.is_choice and not item.allow_custom:
        options = ", ".join(_quoted(option.label) for option in item.options or ())
        raise _refused(
            index, item, "custom_not_allowed",
            f" takes only its options ({options}), not typed text: pick one of them.",
        )


def _check_number(index: int, item: QuestionItem, text: str) -> None:
    problem = _number_problem(item, text)
    if problem is not None:
        reason, words = problem
        raise _refused(index, item, reason, f": {_quoted(text)} {words}.")


def _number_problem(item: QuestionItem, text: str) -> "Optional[Tuple[str, str]]":
    """What is wrong with the text typed for a number question, as
    (reason, words), or None when it is one number within the question's
    bounds.  The person's decimal comma is a point, and the question's
    unit typed after the number is no part of it."""
    number = _number_digits(item, text)
    if number is None:
        separator = "comma" if "," in text else "point"
        return "not_a_number", (
            f"could be read two ways, its {separator} as a thousands separator or as a decimal {separator}:"
            f" {_GROUPED_ADVICE[separator]}; {_number_range(item)}"
        )
    value = _typed_number(number)
    if value is None:
        return "not_a_number", f"is not a number: {_number_range(item)}"
    return _range_problem(item, value)


def _range_problem(item: QuestionItem, value: float) -> "Optional[Tuple[str, str]]":
    """Why a number question does not take ``value``, or None."""
    low, high, step = item.minimum, item.maximum, item.step
    if low is not None and value < low or high is not None and value > high:
        return "out_of_range", f"is out of range: {_number_range(item)}"
    if step is not None:
        steps = (value - (low or 0)) / step
        if not math.isfinite(steps) or abs(steps - round(steps)) > 1e-9 * max(1.0, abs(steps)):
            return "out_of_range", f"is between the steps: {_number_range(item)}"
    return None


# A separator with exactly three digits after it and nothing else: a
# thousands separator to some, a decimal mark to others.  A comma is read
# as neither; a point is read the one way the question takes, and as
# neither when it takes both (never silently as the smaller number).
_GROUPED_NUMBER_SOURCE = r"[+-]?[1-9][0-9]{0,2}[,.][0-9]{3}"
_GROUPED_ADVICE = {
    "comma": "type it without the comma, or with a point for a decimal",
    "point": "type it without the point for a whole number, or with a 0 after its digits for a decimal",
}
_MINUS_SIGNS = str.maketrans({"\u2212": "-"})  # the typographic minus is a minus


def _typed_digits(item: QuestionItem, text: str) -> str:
    """What a person typed for a number question without the question's
    unit after it: the number's own characters, any minus as a hyphen."""
    number = text.strip().translate(_MINUS_SIGNS)
    unit = item.unit
    if unit and number.lower().endswith(unit.lower()):
        number = number[: len(number) - len(unit)].rstrip()
    return number


def _number_digits(item: QuestionItem, text: str) -> "Optional[str]":
    """The number typed for a number question as digits with a point and
    no separator, not yet checked as a number; None when it could be read
    two ways (the one rule every way of asking shares)."""
    number = _typed_digits(item, text)
    if _pattern(_GROUPED_NUMBER_SOURCE).fullmatch(number):
        return _grouped_reading(item, number)
    if number.count(",") == 1 and "." not in number:
        number = number.replace(",", ".")
    return number


def _grouped_reading(item: QuestionItem, number: str) -> "Optional[str]":
    """A number with one separator before three digits: with a point, the
    one reading the question can take (``1.000`` on a whole number is one
    thousand, a fraction there being no answer; at most ten, it is one);
    None when both could be meant, and always with a comma."""
    if "," in number:
        return None
    small, large = number, number.replace(".", "")
    fractions = item.step is None or not float(item.step).is_integer()
    taken = [reading for reading, sensible in ((small, fractions), (large, True))
             if sensible and _range_problem(item, float(reading)) is None]
    return taken[0] if len(taken) == 1 else small if not taken else None


def _typed_value(item: QuestionItem, text: str) -> "Optional[float]":
    """The number a person typed for a number question, or None."""
    number = _number_digits(item, text)
    return None if number is None else _typed_number(number)


def _number_written(item: QuestionItem, text: str) -> str:
    """A number the person typed in its one written form, for the model:
    a point, no separator, no exponent, no sign on zero (``3,5`` is
    ``3.5``, ``1e3`` is ``1000``); the unit is added where it is shown."""
    import decimal

    number = _number_digits(item, text)
    assert number is not None, "called for a number that was taken"
    written = format(decimal.Decimal(number).normalize(), "f")
    if written.startswith("-") and not written.strip("-0."):
        written = "0"
    return written


def _number_range(item: QuestionItem) -> str:
    """The numbers a number question takes, in words."""
    unit = f" {item.unit}" if item.unit else ""
    low, high = item.minimum, item.maximum
    if low is not None and high is not None:
        span = f" from {_shown_number(low)} to {_shown_number(high)}{unit}"
    elif low is not None:
        span = f" of at least {_shown_number(low)}{unit}"
    elif high is not None:
        span = f" of at most {_shown_number(high)}{unit}"
    else:
        span = f" (in {item.unit})" if item.unit else ""
    steps = f" in steps of {_shown_number(item.step)}" if item.step is not None else ""
    return f"it takes one number{span}{steps}"


def _shown_number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _options_named_by(item: QuestionItem, text: str) -> "Optional[List[_Pick]]":
    """The rows that ``text`` picks on ``item``, or None when it names none
    and is therefore typed text.

    The one rule for every way answers arrive: a label named as
    _option_named() says; CUSTOM_RESPONSE_LABEL picks the row for typing;
    on a multi-choice question, comma-separated labels name those options.

        >>> item = askq.ask({"questions": [{"question": "Which?", "multiSelect": True,
        ...                                 "options": ["Unit tests", "Lint"]}]}).questions[0]
        >>> [row.label for row in askq._options_named_by(item, "unit tests, LINT")]
        ['Unit tests', 'Lint']
        >>> askq._options_named_by(item, "tests") is None
        True
    """
    if not item.options:
        return None
    option = _option_named(item.options, text)
    if option is not None:
        return [option]
    if _names_custom_row(text):
        return [_CUSTOM_ROW]
    if item.question_type is QuestionType.MULTI_CHOICE and "," in text:
        parts = [part for part in text.split(",") if part.strip()]
        picks = [_row_named(item.options, part) for part in parts]
        if parts and all(pick is not None for pick in picks):
            return [pick for pick in picks if pick is not None]
    return None


def _picks_and_text(item: QuestionItem, text: str) -> "Tuple[List[_Pick], Optional[str]]":
    """What a string gives a question: the picks it names, and the rest as
    typed text.  On a multi-choice question a string that names no
    option whole is split at commas (a part in double quotes is one part,
    read as a JSON string); runs of parts that name an option, the longest
    first, are picks, and the other parts, joined again, the typed text:

        >>> item = askq.ask({"questions": [{"question": "Which?", "multiSelect": True,
        ...                                 "options": ["Unit tests", "Lint", "Docs, API"]}]}).questions[0]
        >>> picks, typed = askq._picks_and_text(item, "Unit tests, Lint, and a changelog check")
        >>> [row.label for row in picks], typed
        (['Unit tests', 'Lint'], 'and a changelog check')
        >>> picks, typed = askq._picks_and_text(item, 'lint, "Docs, API"')
        >>> [row.label for row in picks], typed
        (['Lint', 'Docs, API'], None)
    """
    whole = _options_named_by(item, text)
    if whole is not None:
        return whole, None
    if item.options and text[:1] == '"':  # a label the forms wrote as a JSON string
        quoted = _comma_parts(text)
        row = _row_named(item.options, quoted[0]) if len(quoted) == 1 and quoted[0] != text.strip() else None
        if row is not None:
            return [row], None
    if item.question_type is not QuestionType.MULTI_CHOICE or not item.options or "," not in text and text[:1] != '"':
        return [], text
    parts = _comma_parts(text)
    longest = 1 + max(option.label.count(",") for option in item.options)
    picks: List[_Pick] = []
    rest: List[str] = []
    at = 0
    while at < len(parts):
        for end in range(min(len(parts), at + longest), at, -1):
            row = _row_named(item.options, ", ".join(parts[at:end]))
            if row is not None:
                picks.append(row)
                at = end
                break
        else:
            rest.append(parts[at])
            at += 1
    if not picks:
        return [], text
    return picks, ", ".join(rest) or None


def _comma_parts(text: str) -> "List[str]":
    """The parts of a comma-joined string, trimmed; a part that is a JSON
    string (Claude Code quotes labels holding ", " or '"') is read as one."""
    parts: List[str] = []
    at, end = 0, len(text)
    while at <= end:
        while at < end and text[at] == " ":
            at += 1
        if text.startswith('"', at):
            try:
                value, close = _json_decoder().raw_decode(text, at)
            except ValueError:
                value, close = None, at
            comma = text.find(",", close)
            after = text[close: comma if comma >= 0 else end]
            if isinstance(value, str) and not after.strip():
                parts.append(value)
                at = comma + 1 if comma >= 0 else end + 1
                continue
        comma = text.find(",", at)
        stop = comma if comma >= 0 else end
        parts.append(text[at:stop].strip())
        at = stop + 1
    return [part for part in parts if part]


def _row_named(options: "List[QuestionOption]", text: str) -> "Optional[_Pick]":
    """What a whole string picks: an option, else the row for typing."""
    option = _option_named(options, text)
    if option is not None:
        return option
    return _CUSTOM_ROW if _names_custom_row(text) else None


# ===========================================================================
# Results: the text the model reads
#
# result_text() for every outcome, declined_text(), unavailable_text(), error_text().

class _OutcomeWords:
    """What is said of one outcome, wherever it is said."""

    __slots__ = ("advice", "advice_all", "advice_none", "alone", "ended", "ended_some", "head_all", "head_none",
                 "head_some", "late", "marker", "sent", "unanswered")

    def __init__(
        self, head_some: str, head_none: str, unanswered: str, advice: str, ended: str, sent: str,
        marker: "Optional[str]" = None, alone: "Optional[str]" = None,
        late: str = "The questions had already ended.", advice_none: "Optional[str]" = None,
        every: "Tuple[Optional[str], Optional[str]]" = (None, None), ended_some: "Optional[str]" = None,
    ) -> None:
        self.head_some = head_some  # the result's first line when the person answered some
        self.head_none = head_none  # ... and when they answered none
        self.unanswered = unanswered  # why a question has no answer
        self.advice = advice  # the result's last line: what the model should do now
        self.advice_none = advice_none or advice  # ... when nothing was answered (notes alone, say)
        self.alone = alone or f"{head_none} {advice}"  # the whole result when nothing was answered
        self.ended = ended  # the dialog's summary and the page: how it ended, for the person
        self.sent = sent  # the page once it ended: what became of the answers
        self.marker = marker  # a harness form's entry for a question this outcome left unanswered
        self.late = late  # the page, to a submission after the end: why its answers were not sent
        self.head_all = every[0] or head_some  # the first line when every question has the person's word
        self.advice_all = every[1] or advice  # ... and the last: there is no rest to speak of
        self.ended_some = ended_some or ended  # how it ended, above answers that went with it

    def heading(self, some: bool) -> str:
        """How it ended, for the person, above what was sent (``some``) or not."""
        return self.ended_some if some else self.ended


_OUTCOME_WORDS = {
    Outcome.ANSWERED: _OutcomeWords(
        "The user answered your questions.",
        "The user saw your questions and skipped all of them (each was optional).",
        "no answer was given",
        "Go on with the task with these answers in mind.",
        "Answered",
        "Your answers were sent.",
        late="Answers had already come from elsewhere (another window or device), and the first"
        " answers sent are the ones that count.",
    ),
    Outcome.DECLINED: _OutcomeWords(
        "The user answered some of your questions and dismissed the rest.",
        "The user saw your questions and dismissed them without answering.",
        "the user dismissed the questions before answering this one",
        "Use the answers given, do not act on assumptions about the rest, and wait for the"
        " user's next message rather than going on.",
        "Dismissed",
        "The questions were dismissed; what you had answered was sent.",
        "(no answer: the user dismissed the questions)",
        "The user saw your questions and dismissed them without answering. Do not act on"
        " assumptions about them: wait for the user's next message rather than going on.",
        late="The questions had already been dismissed, here or elsewhere.",
        every=(("The user answered every one of your questions, then dismissed them instead of sending,"
               " so the answers may not be final."),
               ("Use the answers given, but confirm them with the user before acting on anything that"
               " depends on them; wait for the user's next message rather than going on.")),
        advice_none="Do not act on assumptions about them: wait for the user's next message rather than going on.",
    ),
    Outcome.TIMED_OUT: _OutcomeWords(
        "The user answered some of your questions, then did not respond in time.",
        "The user did not respond in time and answered none of your questions.",
        "time ran out with no answer to this one",
        "The user may be away: never treat silence as consent. Go on only with what does not"
        " depend on the unanswered questions, or stop and ask again later.",
        "No answer in time",
        "Time ran out; what you had answered was sent.",
        "(no answer: the user did not respond in time)",
        late="Time had run out before they arrived.",
        every=(("The user answered every one of your questions but did not send them in time,"
               " so the answers may not be final."),
               ("The user may be away: never treat silence as consent. Use the answers given, but"
               " confirm them with the user before acting on anything that depends on them.")),
        ended_some="Time ran out",
    ),
    Outcome.UNAVAILABLE: _OutcomeWords(
        "The user answered some of your questions before the session ended.",
        "Nobody was asked: no interactive user is available in this run.",
        "nobody was asked",
        "Use the answers given and do not assume answers to the rest. Go on with what you"
        " know, or stop and say what you need from the user.",
        "Nobody could be asked",
        "Nothing was sent.",
        "(no answer: nobody could be asked)",
        "Nobody was asked: no interactive user is available to answer questions in this run,"
        " so there are no answers. Go on with reasonable assumptions and state each one"
        " plainly, or stop and say what information you need.",
        advice_none="There are no answers: go on with reasonable assumptions and state each one plainly,"
        " or stop and say what information you need.",
    ),
    Outcome.FOLLOW_UP: _OutcomeWords(
        "The user answered what is listed and asked for more questions before you go on.",
        "The user asked for more questions before answering any of these.",
        "the user asked for more questions before answering this one",
        "Ask the user more questions with another call, or say what else you need to know,"
        " before you go on; do not assume answers to the rest.",
        "Asked for more questions",
        "Your request for more questions was sent, with what you had answered.",
        "(the user asked for more questions before deciding)",
        late="The questions had already ended with a request for more questions.",
    ),
}


# The person's words for asking for the outcome follow_up, in every UI.
_ASK_ME_MORE = "Ask me more first"

# The first words of a refused form, by what the person asked for: a
# request for more questions is no sending of answers.
_REFUSED_LEADS = {
    Outcome.ANSWERED: "Your answers were not sent.",
    Outcome.FOLLOW_UP: (f"Your request ({_ASK_ME_MORE}) was not sent yet: what you answered goes with it,"
                        " and part of it cannot be taken."),
}


def _alone_text(status: Outcome) -> str:
    """The whole result of an outcome that came with no answers at all."""
    return _OUTCOME_WORDS[status].alone


def result_text(output: QuestionOutput, answers: Any = None) -> str:
    """The tool result for the model, for every outcome.

    ``answers`` (any form collect_answers() takes) replaces
    ``output.answers``; they are checked first.  Every question appears
    once, by its text, with what became of it; text from the person is
    quoted as a JSON string, so that no answer can forge a line of its own.
    An output declined or unavailable with no answers gives exactly
    declined_text() or unavailable_text().
    """
    status = _status(output)
    checked = _checked_output_answers(output, output.answers if answers is None else answers, status)
    if not checked and status is not Outcome.ANSWERED:
        return _alone_text(status)
    by_id = {answer.id: answer for answer in checked}
    lines = []
    for number, item in enumerate(output.questions, 1):
        lines.append(f"{number}. {_quoted(item.question)}")
        answer = by_id.get(item.id)
        if item.unit is not None and answer is not None and answer.answer is not None:
            answer = _with_unit(answer, item.unit)
        lines.extend(_answer_lines(answer, status))
    head, tail = _result_ends(status, checked, _every_question_said(output.questions, checked))
    return "\n".join([head, *lines, tail])


def _with_unit(answer: AnswerItem, unit: str) -> AnswerItem:
    """A number's answer as typed, with its unit after it unless typed so."""
    typed = answer.answer or ""
    if typed.lower().endswith(unit.lower()):
        return answer
    return dataclasses.replace(answer, answer=f"{typed} {unit}")


def declined_text() -> str:
    """The tool result when the user saw the questions and dismissed them."""
    return _alone_text(Outcome.DECLINED)


def unavailable_text() -> str:
    """The tool result when no interactive user could be asked at all."""
    return _alone_text(Outcome.UNAVAILABLE)


def error_text(err: BaseException) -> str:
    """The tool-error text for the model: what went wrong, then a call to copy.

    For an AnswerError the call was fine and the person may have answered:
    the text says the answers could not be read, and that the model may ask
    again.
    """
    if isinstance(err, AnswerError):
        return (
            f"The user's answers could not be read: {err}\n\nYour call was valid; the"
            " fault lies in collecting the answers, not in your questions. Do not assume"
            " any answers. You may ask the same questions again if you still need them."
        )
    return (
        f"{err}\n\nThe user was not asked anything. Fix the call and send it"
        " again; a complete, valid call looks like this:\n"
        + _resource_text("example_args.json").strip()
    )


def _status(output: QuestionOutput) -> Outcome:
    """The outcome of an output; one with no status yet counts as answered."""
    status = getattr(output, "status", None)
    if status is None:
        return Outcome.ANSWERED
    try:
        return Outcome(status)
    except ValueError:
        known = ", ".join(outcome.value for outcome in Outcome)
        raise AnswerError(f"The status {status!r} is none of: {known}.") from None


def _checked_output_answers(output: Any, answers: Any, status: Outcome) -> "List[AnswerItem]":
    return collect_answers(output, answers, partial=status != Outcome.ANSWERED)


def _answer_dicts(output: QuestionOutput) -> "List[Dict[str, Any]]":
    """The JSON form of an output's answers: AnswerItems as they are, any
    other form (or AnswerItems holding what no check let through) checked."""
    answers = output.answers
    if isinstance(answers, list) and all(_is_well_formed(answer) for answer in answers):
        return [answer.to_dict() for answer in answers]
    return [answer.to_dict() for answer in _checked_output_answers(output, answers, _status(output))]


def _is_well_formed(answer: Any) -> bool:
    return (
        isinstance(answer, AnswerItem) and isinstance(answer.id, str)
        and (answer.answer is None or isinstance(answer.answer, str))
        and (answer.selected is None or isinstance(answer.selected, list)
             and all(isinstance(label, str) for label in answer.selected))
        and isinstance(answer.assumed, bool)
        and (answer.unanswered is None or answer.unanswered in _STATES)
    )


def _every_question_said(items: "Sequence[QuestionItem]", answers: "Iterable[AnswerItem]") -> bool:
    """Whether the person said something of every question: an answer of
    their own, or a word that settles it (left to the assistant, to discuss)."""
    said = {answer.id for answer in answers if _person_said(answer)}
    return all(item.id in said for item in items)


def _person_said(answer: AnswerItem) -> bool:
    settles = answer.unanswered is not None and _STATES[answer.unanswered].settles
    return _gives_answer(answer) and not answer.assumed or settles


def _result_ends(status: Outcome, answers: "List[AnswerItem]", every: bool = False) -> "Tuple[str, str]":
    """The result's first line (what happened) and last (what to do now).
    Leaving a question to the assistant or to a discussion is saying
    something of it, as an answer is."""
    person = said = assumed = False
    for answer in answers:
        given = _gives_answer(answer)
        person = person or given and not answer.assumed
        said = said or _person_said(answer)
        assumed = assumed or answer.assumed
    words = _OUTCOME_WORDS[status]
    head = words.head_none if not said else words.head_all if every else words.head_some
    if person:
        head += f" '{_PICKED}' lists options they chose; '{_TYPED}' is text they wrote themselves."
    if assumed:
        head += (
            f" Answers marked '{_ASSUMED}' are your own recommended options, filled in"
            " because the user did not answer: the user did not choose them."
        )
    if status == Outcome.ANSWERED and not said:
        return head, "Go on without these answers; do not assume any."
    if not said and not assumed:  # notes alone: there are no answers to use
        return head, words.advice_none
    advice = words.advice_all if every else words.advice
    return head, advice + (" State each assumed answer plainly as an assumption." if assumed else "")


def _answer_lines(answer: "Optional[AnswerItem]", status: Outcome) -> "List[str]":
    if answer is None:
        return [f"   unanswered: {_OUTCOME_WORDS[status].unanswered}"]
    if answer.assumed:
        picks = ", ".join(map(_quoted, answer.selected or ()))
        return [f"   {_ASSUMED}: {picks} (your recommendation; the user did not choose it)"]
    lines = []
    if answer.selected:
        lines.append(f"   {_PICKED}: " + ", ".join(map(_quoted, answer.selected)))
    if answer.answer is not None:
        lines.append(f"   {_TYPED}: {_quoted(answer.answer)}")
    if not lines:
        state = _STATES[answer.unanswered] if answer.unanswered is not None else None
        lines.append(f"   {state.result}" if state else f"   unanswered: {_OUTCOME_WORDS[status].unanswered}")
    if answer.note is not None:
        whose = "on this answer" if _gives_answer(answer) else "on this question"
        lines.append(f"   {_NOTE}: {_quoted(answer.note)} (the user's note {whose})")
    lines.extend(
        f"   {_ATTACHED}: {_quoted(file.name)} ({file.media_type}, {_size_words(file.size)})" for file in answer.attachments
    )
    return lines


# ===========================================================================
# Answers in a harness's own words: harness_answers()
#
# A harness built on another agent's runtime must hand that runtime its own
# answer form, and that last step is where answers get lost: a dismissal
# reported as answers, a note dropped, a label that no longer matches.  Each
# runtime is one class below, which writes its form and reads it back (its
# wrapper, its note markers), registered under the runtime's name; HARNESSES
# is that registry's names.  _AskedOutput is what every writer starts from:
# the checked answers, and the texts and labels as the model sent them.


def harness_answers(
    output: QuestionOutput, harness: str, call: Any = None, files: "Optional[str]" = None,
) -> "Dict[str, Any]":
    """An asked output in the answer form of ``harness``, as JSON data.

    ``harness`` is one of HARNESSES.  ``call`` is the tool input as the model
    sent it: with it, question texts and labels are written exactly as sent
    (Claude Code matches answers by them).  Every outcome gets an honest
    form: what is not a full answer is never written as one.  Read back by
    collect_answers() (from_elicitation() for "mcp"), each form gives the
    same answers and notes.  No harness's form takes files: the files the
    person attached are saved under the folder ``files`` names (made when
    missing), and each answer's note says where, one line a file; without
    ``files``, the note names each file, saying that it was not saved.

        >>> out = askq.ask({"questions": [{"question": "Which?", "options": ["A (Recommended)", "B"]}]})
        >>> done = askq.QuestionOutput(out.questions, [askq.AnswerItem("q0", None, ["B"])], "answered")
        >>> askq.harness_answers(done, "opencode")
        {'answers': [['B']]}
    """
    if getattr(output, "status", None) is None:
        raise AnswerError("harness_answers() takes an output whose person was asked: its status is None.")
    form = _HARNESS_FORMS.get(harness)
    if form is None:
        raise AnswerError(f"Unknown harness {harness!r}; the harnesses are: {', '.join(_HARNESS_FORMS)}.")
    return form.write(_AskedOutput(_files_said(output, files), call))


def _files_said(output: QuestionOutput, folder: "Optional[str]") -> QuestionOutput:
    """The output with each answer's files said in its note (saved under
    ``folder``, by path), for a form that cannot carry files."""
    answers = output.answers
    if not isinstance(answers, list) or not any(isinstance(answer, AnswerItem) and answer.attachments for answer in answers):
        return output
    said = [dataclasses.replace(answer, note=_with_note(answer.note, "\n".join(
        _file_said(attachment, folder) for attachment in answer.attachments)), attachments=())
        if isinstance(answer, AnswerItem) and answer.attachments else answer for answer in answers]
    return QuestionOutput(output.questions, said, output.status, output.title, output.purpose)


def _file_said(attachment: Attachment, folder: "Optional[str]") -> str:
    """One file, saved under ``folder`` (named by its digest and its name,
    so that two files of one name never overwrite each other), as a line
    of a note."""
    kind = f"{attachment.media_type}, {_size_words(attachment.size)}"
    if folder is None:
        return f"attached file: {attachment.name} ({kind}; not saved: no folder was given for files)"
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.abspath(os.path.join(folder, f"{attachment.sha256[:16]}-{attachment.name}"))
    with open(path, "wb") as saved:
        saved.write(attachment.data)
    return f"attached file: {path} ({kind})"


class _AskedOutput:
    """One asked output, to be written in a harness's form: its checked
    answers by id, and the question texts and labels as the model sent them
    where the call is known (else the normalized ones)."""

    def __init__(self, output: QuestionOutput, call: Any) -> None:
        self.output = output
        self.items = output.questions
        self.status = _status(output)
        self.answers = {answer.id: answer for answer in _checked_output_answers(output, output.answers, self.status)}
        self.entries: List[Any] = []
        self.questions: Any = None
        if call is not None:
            root = _payload_root(call)
            self.entries = _question_entries(root)
            self.questions = root.get("questions") if isinstance(root, dict) else root
            if isinstance(self.questions, str):
                self.questions = self.entries

    def question(self, index: int) -> str:
        entry = self.entries[index] if index < len(self.entries) else None
        sent = _first_usable(entry, _QUESTION_KEYS, _sent_text) if isinstance(entry, dict) else entry
        return sent if isinstance(sent, str) else self.items[index].question

    def label(self, index: int, label: str) -> str:
        """An option's label as the model sent it: the sent label that names it."""
        entry = self.entries[index] if index < len(self.entries) else None
        options = _first_usable(entry, _OPTIONS_KEYS, _option_source) if isinstance(entry, dict) else None
        wanted = [QuestionOption(label)]
        for raw in options if isinstance(options, list) else ():
            sent = raw if isinstance(raw, str) else _first_usable(raw, _OPTION_LABEL_KEYS, _sent_text) if isinstance(raw, dict) else None
            if sent is not None and _option_named(wanted, sent) is not None:
                return sent
        return label

    def labels(self, index: int, answer: AnswerItem) -> "List[str]":
        return [self.label(index, label) for label in answer.selected or ()]

    def answered(self) -> "List[Tuple[int, QuestionItem, AnswerItem]]":
        """The questions with a pick or typed text, with their answers."""
        found = [(index, item, self.answers.get(item.id)) for index, item in enumerate(self.items)]
        return [(index, item, answer) for index, item, answer in found if _gives_answer(answer) and answer is not None]

    def parts(self, index: int, note_prefix: "Optional[str]" = None) -> "List[str]":
        """One question's answer as parts: picked labels, then typed text as
        the person typed it, or the marker saying why there is none; then the
        note, when a prefix for it is given.  Runtimes join parts with ", " (as
        Claude Code does): a label holding ", " or a quote is a JSON string,
        also alone, else the label and a pick with typed text beside it would
        read the same."""
        answer = self.answers.get(self.items[index].id)
        marker = self.marker(answer)
        if answer is None:
            return [marker] if marker else []
        typed = [answer.answer] if answer.answer is not None else []
        parts = [_quoted_part(label) for label in self.labels(index, answer)] + typed + ([marker] if marker else [])
        return parts + ([f"{note_prefix}{answer.note}"] if note_prefix and answer.note is not None else [])

    def marker(self, answer: "Optional[AnswerItem]") -> "Optional[str]":
        """The entry that says why a question has no answer: its state, else
        the outcome that left it unanswered; None for an answer."""
        if _gives_answer(answer):
            return None
        if answer is not None and answer.unanswered is not None:
            return _STATES[answer.unanswered].marker
        return _OUTCOME_WORDS[self.status].marker

    def is_plain(self) -> bool:
        """Whether every question has its answer: nothing for a form to say
        beyond the answers."""
        return self.status is Outcome.ANSWERED and len(self.answered()) == len(self.items)

    def with_outcome(self, form: "Dict[str, Any]") -> "Dict[str, Any]":
        """A form that carries no outcome of its own, with the outcome beside it."""
        if self.status is not Outcome.ANSWERED:
            form.update(status=self.status.value, message=result_text(self.output))
        return form

    def outcome_lines(self) -> "List[str]":
        """What happened, in the result's own words, for a form whose
        runtime shows its model nothing but the answers."""
        markers = [(item.id, self.marker(self.answers.get(item.id))) for item in self.items]
        answers = list(self.answers.values())
        head, tail = _result_ends(self.status, answers, _every_question_said(self.items, answers))
        return [head, *(f"{key}: {marker}" for key, marker in markers if marker), tail]


class _HarnessForm:
    """One runtime's answer form: how askq writes it, and how it is read back
    (its shape, its own entries for a note, what it cannot carry)."""

    # The keys of the object its runtime wraps the answers in, "answers" among
    # them (with_outcome() puts the outcome beside them): unwrap() is asked of
    # answers that hold one of them, and of any mapping when it reads them bare.
    wrapper_keys: "ClassVar[FrozenSet[str]]" = frozenset(("answers", "status", "message"))
    reads_bare: "ClassVar[bool]" = False
    # A string that starts so is a note (an entry of a list, or a whole value).
    note_prefix: "ClassVar[Optional[str]]" = None
    # Whether a note entry with nothing beside it is the typed answer.
    note_is_typed: "ClassVar[bool]" = False
    # Joins a note to the end of a value that holds an answer too.
    note_part: "ClassVar[Optional[str]]" = None
    # Rows that stand for "my answer is in the note" (folded).
    note_rows: "ClassVar[FrozenSet[str]]" = frozenset()

    def write(self, asked: _AskedOutput) -> "Dict[str, Any]":
        raise NotImplementedError

    def unwrap(self, items: "List[QuestionItem]", raw: "Dict[Any, Any]") -> "Optional[Tuple[Any, Dict[Any, _Given]]]":
        """When ``raw`` is this form, whatever its shape: its answers as a
        plain mapping or list (a list of strings or a string per question),
        and what it says beside them by key (notes, states); else None."""
        return None

    def wrapped(self, items: "List[QuestionItem]", raw: "Dict[Any, Any]") -> Any:
        """The answers inside ``raw`` when it is this form's wrapper (and no
        question is named "answers"); else None."""
        if "answers" in raw and raw.keys() <= self.wrapper_keys and not any(item.id == "answers" for item in items):
            return raw["answers"]
        return None

    def read_back(self, output: QuestionOutput, written: "Dict[str, Any]") -> "Optional[List[AnswerItem]]":
        """The answers a form this wrote gives back to collect_answers()
        (``partial`` unless answered); None for one that carries none, only
        the outcome in words."""
        return collect_answers(output, written, output.status != Outcome.ANSWERED)

    def carried(self, answer: AnswerItem) -> AnswerItem:
        """An answer as this form gives it back: what it has no field for,
        as it reads back."""
        return answer

    def __init_subclass__(cls, name: str, **kwargs: Any) -> None:
        """Register a runtime's form under its name, where its class is written."""
        super().__init_subclass__(**kwargs)
        _HARNESS_FORMS[name] = cls()
        _forms_view.cache_clear()


_HARNESS_FORMS: "Dict[str, _HarnessForm]" = {}


class _FormsView:
    """The forms registered, as reading answers asks them (worked out once a
    registration): all, in order, for answers that hold a key of some form's
    wrapper, else those that read a mapping bare; and the reader of answers
    in no form's shape, which may hold any form's entries (a harness took
    the wrapper off)."""

    def __init__(self) -> None:
        self.forms = tuple(_HARNESS_FORMS.values())
        self.wrapper_keys: FrozenSet[str] = frozenset().union(*(form.wrapper_keys for form in self.forms))
        self.bare = tuple(form for form in self.forms if form.reads_bare)
        self.reader = _entry_reader(self.forms)


_forms_view = functools.lru_cache(maxsize=None)(_FormsView)


class _ClaudeCodeForm(_HarnessForm, name="claude-code"):
    """The permission result of the Claude Agent SDK's can_use_tool callback:
    allow with the answers only for a full answer; otherwise deny with
    result_text, which its model reads (it cannot see skips in annotations)."""

    wrapper_keys = frozenset(("answers", "annotations", "questions", "metadata", "title", "response", "followUp"))
    note_rows = frozenset(("(notes only)",))

    def write(self, asked: _AskedOutput) -> "Dict[str, Any]":
        """Its runtime shows its model a follow-up as its own followUp, with
        the answers so far; everything else but a full answer as the deny."""
        answered = asked.answered()
        follow_up = asked.status is Outcome.FOLLOW_UP and len(answered) == sum(
            1 for answer in asked.answers.values() if _gives_answer(answer) or answer.note is not None)
        if not follow_up and not asked.is_plain():
            return {"behavior": "deny", "message": result_text(asked.output)}
        replies: Dict[str, str] = {}
        notes: Dict[str, Dict[str, str]] = {}
        for index, _, answer in answered:
            text = asked.question(index)
            replies[text] = ", ".join(asked.parts(index))
            if answer.note is not None:
                notes[text] = {"notes": answer.note}
        questions = asked.questions if asked.questions is not None else [_claude_code_question(i) for i in asked.items]
        updated: Dict[str, Any] = {"questions": questions, "answers": replies}
        if notes:
            updated["annotations"] = notes
        if follow_up:
            updated["followUp"] = True
        return {"behavior": "allow", "updatedInput": updated}

    def unwrap(self, items: "List[QuestionItem]", raw: "Dict[Any, Any]") -> "Optional[Tuple[Any, Dict[Any, _Given]]]":
        """Its AskUserQuestion input with the answers, by question text, and
        something of its own beside them.  Its annotations: a note, and
        ``unanswered`` (``replied_in_chat`` is a question to discuss); its
        ``response``, typed instead of answering, leaves each question without
        an answer to discuss, the text the note of the first."""
        answers = self.wrapped(items, raw)
        if not isinstance(answers, dict) or len(raw) == 1:  # answers alone: its input sends the questions beside them
            return None
        asides: Dict[Any, _Given] = {}
        annotations = raw.get("annotations")
        for key, value in (annotations.items() if isinstance(annotations, dict) else ()):
            aside = _Given()
            note = value.get("notes") if isinstance(value, dict) else None
            state = value.get("unanswered") if isinstance(value, dict) else None
            aside.unanswered = _CLAUDE_CODE_STATES.get(state) if isinstance(state, str) else None
            aside.note = note if isinstance(note, str) else None
            aside.note_is_typed = True  # a note on a question the answers leave out is its answer
            asides[key] = aside
        response = raw.get("response")
        if isinstance(response, str) and response.strip():
            said = {_answer_key(items, key) for key in (*answers, *asides)}
            for index in (index for index in range(len(items)) if index not in said):
                aside = asides[items[index].id] = _Given()
                aside.unanswered, aside.note, response = _DISCUSS, response or None, ""
        return answers, asides

    def read_back(self, output: QuestionOutput, written: "Dict[str, Any]") -> "Optional[List[AnswerItem]]":
        return None if written["behavior"] == "deny" else super().read_back(output, written["updatedInput"])


# Its annotations' words for a question without an answer, as askq's states.
_CLAUDE_CODE_STATES = {"skipped": _SKIPPED, "replied_in_chat": _DISCUSS, "dismissed": _UNREACHED}


def _claude_code_question(item: QuestionItem) -> "Dict[str, Any]":
    options = [{"label": o.label, "description": o.description or ""} for o in item.options or ()]
    return {"question": item.question, "header": item.header or "", "options": options,
            "multiSelect": item.multi_select}


class _OpenCodeForm(_HarnessForm, name="opencode"):
    """The body of OpenCode's question reply, one list per question; any
    outcome but an answer is its reject, with result_text."""

    wrapper_keys = frozenset(("answers",))
    note_prefix = "note: "

    def write(self, asked: _AskedOutput) -> "Dict[str, Any]":
        if asked.status is Outcome.DECLINED:  # its reject ends the turn, as a dismissal means
            return {"reject": True, "message": result_text(asked.output)}
        lists = [asked.parts(index, self.note_prefix) for index in range(len(asked.items))]
        marker = _OUTCOME_WORDS[asked.status].marker
        if marker and lists and not any(marker in parts for parts in lists):
            lists[-1].append(marker)  # every question answered: the outcome must still show
        return {"answers": lists}

    def unwrap(self, items: "List[QuestionItem]", raw: "Dict[Any, Any]") -> "Optional[Tuple[Any, Dict[Any, _Given]]]":
        answers = self.wrapped(items, raw)
        return (answers, {}) if isinstance(answers, list) else None

    def read_back(self, output: QuestionOutput, written: "Dict[str, Any]") -> "Optional[List[AnswerItem]]":
        return None if "reject" in written else super().read_back(output, written)


class _GeminiForm(_HarnessForm, name="gemini"):
    """Gemini CLI's ask_user result: one string per answered question, keyed
    by its position, its parts joined, the note the last; the outcome beside it."""

    note_prefix = "note: "
    note_part = f", {note_prefix}"

    def write(self, asked: _AskedOutput) -> "Dict[str, Any]":
        replies = {}
        for index in range(len(asked.items)):
            parts = asked.parts(index, self.note_prefix)
            if parts:
                replies[str(index)] = ", ".join(parts)
        return asked.with_outcome({"answers": replies})

    def unwrap(self, items: "List[QuestionItem]", raw: "Dict[Any, Any]") -> "Optional[Tuple[Any, Dict[Any, _Given]]]":
        """Its answers by position, each a string: an object among them is no part of its form."""
        answers = self.wrapped(items, raw)
        if isinstance(answers, dict) and not any(isinstance(value, dict) for value in answers.values()):
            return answers, {}
        return None


class _CodexForm(_HarnessForm, name="codex"):
    """Codex's request_user_input response, {id: {"answers": [...]}}.  Codex
    has one free-text channel per question, the user_note: typed text beside
    picks goes there, joined to a note; its "None of the above" row with a
    note is an answer of one's own."""

    reads_bare = True
    note_prefix = "user_note: "
    note_is_typed = True
    note_rows = frozenset(("none of the above",))

    def write(self, asked: _AskedOutput) -> "Dict[str, Any]":
        """Codex shows its model the answers map alone, verbatim: a question
        without an answer gets its marker, and what happened goes into one
        more entry, ``outcome``, which is no question's."""
        replies: Dict[str, Any] = {}
        for index, item in enumerate(asked.items):
            answer = asked.answers.get(item.id)
            marker = asked.marker(answer)
            if answer is None and marker is None:
                continue
            entries = [marker] if marker else asked.labels(index, answer) if answer else []
            note = "\n".join(text for text in (answer.answer, answer.note) if text is not None) if answer else ""
            replies[item.id] = {"answers": entries + ([f"{self.note_prefix}{note}"] if note else [])}
        if not asked.is_plain():
            replies[_outcome_key(asked.items)] = {"answers": asked.outcome_lines()}
        return asked.with_outcome({"answers": replies})

    def unwrap(self, items: "List[QuestionItem]", raw: "Dict[Any, Any]") -> "Optional[Tuple[Any, Dict[Any, _Given]]]":
        """Its answers by id, objects among them, wrapped or bare; its outcome entry left out."""
        inner = self.wrapped(items, raw) if "answers" in raw else None  # bare, without one
        answers = raw if inner is None else inner
        if not isinstance(answers, dict) or not any(isinstance(value, dict) for value in answers.values()):
            return None
        outcome = _outcome_key(items)
        return {
            key: value["answers"] if isinstance(value, dict) and set(value) == {"answers"} else value
            for key, value in answers.items()
            if key != outcome or not isinstance(value, dict)
        }, {}

    def carried(self, answer: AnswerItem) -> AnswerItem:
        """Typed text goes into the one free-text channel: beside picks, it
        comes back as the note, joined to it."""
        if answer.answer is None:
            return answer
        text = "\n".join(part for part in (answer.answer, answer.note) if part)
        return AnswerItem(answer.id, None, answer.selected, note=text) if answer.selected else AnswerItem(answer.id, text)


def _outcome_key(items: "List[QuestionItem]") -> str:
    """The key of the entry that says what happened, in a form keyed by
    question id: ``outcome``, with "_" appended while a question has it."""
    key = "outcome"
    while any(item.id == key for item in items):
        key += "_"
    return key


class _McpForm(_HarnessForm, name="mcp"):
    """The ElicitResult a client sends back for to_elicitation()'s form; read
    back by from_elicitation().  The form has no field for a note."""

    def write(self, asked: _AskedOutput) -> "Dict[str, Any]":
        if asked.status is Outcome.DECLINED:
            return {"action": "decline"}
        if asked.status is not Outcome.ANSWERED:
            return {"action": "cancel"}
        keys_by_id = {item.id: keys for item, keys in zip(asked.items, _form_keys(asked.items))}
        content: Dict[str, Any] = {}
        for item in asked.items:
            answer = asked.answers.get(item.id)
            state = next((s.label for s in _form_states(item) if answer and s.name == answer.unanswered), None)
            if state is not None:
                content[keys_by_id[item.id].value] = state
        for _, item, answer in asked.answered():
            keys = keys_by_id[item.id]
            if not item.question_type.is_choice:
                content[keys.value] = answer.answer
                continue
            picks = list(answer.selected or ())
            if answer.answer is not None and keys.other is not None:
                picks.append(_CUSTOM_ROW.label)
                content[keys.other] = answer.answer
            content[keys.value] = picks if item.question_type is QuestionType.MULTI_CHOICE else picks[0]
        return {"action": "accept", "content": content}

    def read_back(self, output: QuestionOutput, written: "Dict[str, Any]") -> "Optional[List[AnswerItem]]":
        return from_elicitation(output, written)[1]

    def carried(self, answer: AnswerItem) -> AnswerItem:
        return AnswerItem(answer.id, answer.answer, answer.selected)


def __getattr__(name: str) -> "Tuple[str, ...]":
    """HARNESSES: the names of the forms registered, read when asked for."""
    if name == "HARNESSES":
        return tuple(_HARNESS_FORMS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> "List[str]":
    return [*globals(), "HARNESSES"]


class _EntryReader:
    """What reading the entries of some forms needs: the prefixes of a note
    entry, the parts that join a note to an answer, the rows whose note is
    the answer, and askq's own markers, which every form writes."""

    def __init__(self, forms: "Tuple[_HarnessForm, ...]") -> None:
        self.note_prefixes = tuple(dict.fromkeys(form.note_prefix for form in forms if form.note_prefix))
        self.typed_note_prefixes = frozenset(form.note_prefix for form in forms if form.note_is_typed)
        self.note_parts = tuple(dict.fromkeys(form.note_part for form in forms if form.note_part))
        self.note_rows: FrozenSet[str] = frozenset().union(*(form.note_rows for form in forms))
        # The entries the forms write for a question's state, or for one the
        # outcome left unanswered (read as if nothing had been given for it).
        self.markers = {state.marker: state.name for state in _STATES.values()}
        self.markers.update((words.marker, _UNREACHED) for words in _OUTCOME_WORDS.values() if words.marker)
        # A look at the first character spares most strings the folding.
        rows = [*self.note_rows, *self.markers]
        self.row_starts = frozenset(row[:1] for row in rows) | {row[:1].upper() for row in rows}


_entry_reader = functools.lru_cache(maxsize=None)(_EntryReader)


def _sent_text(value: Any) -> "Optional[str]":
    """A text exactly as the model sent it, untrimmed; None when blank."""
    return value if isinstance(value, str) and value.strip() else None


def _quoted_part(part: str) -> str:
    return json.dumps(part, ensure_ascii=False) if ", " in part or '"' in part else part


# ===========================================================================
# MCP elicitation: the questions as a form the client draws
#
# to_elicitation(), from_elicitation(), input_request().  A form has one
# property per question, keyed by its id, each exactly one arm of the
# schema, the arm picked for the client from what is known of it; a choice
# question that offers the custom row has a string property for its text;
# under 2025-06-18 a multi-choice question is one boolean property per option.  Every key but
# the ids is a valid identifier, since client SDKs turn keys into field
# names, and from_elicitation() reads keys as such SDKs send them back.

_ELICIT_ACTIONS = ("accept", "decline", "cancel")
_MESSAGE_CHARS = 200


class _Protocol:
    """One version of MCP and what askq does under it.  Every part asks the
    version's record, never its date: a new version is one row of
    _PROTOCOLS."""

    __slots__ = ("batches", "forms", "handshake", "legacy_forms", "name", "structured", "task_extension", "tasks",
                 "urls")

    def __init__(self, name: str, handshake: bool = True, forms: bool = False, legacy_forms: bool = False,
                 structured: bool = False, urls: bool = False, batches: bool = False, tasks: bool = False,
                 task_extension: bool = False) -> None:
        self.name = name
        self.handshake = handshake  # reached through initialize (else: discover, and an envelope per request)
        self.forms = forms  # the server may ask through a form (elicitation)
        self.legacy_forms = legacy_forms  # a form in the first vocabulary forms had (enumNames, booleans)
        self.structured = structured  # results carry structuredContent; the tool, an outputSchema
        self.urls = urls  # a client may open a page by URL for the server
        self.batches = batches  # the HTTP transport takes JSON arrays of messages
        self.tasks = tasks  # a call may be a task the client polls (tasks in the protocol's core)
        self.task_extension = task_extension  # ... through the Tasks extension, for a request that declares it

    @property
    def stateless(self) -> bool:
        """Whether requests stand alone: each carries its version and capabilities."""
        return not self.handshake


# The versions askq speaks, oldest first; the last with a handshake is the
# one initialize offers a client that asks for another.
_PROTOCOLS = (
    _Protocol("2024-11-05"),
    _Protocol("2025-03-26", batches=True),
    _Protocol("2025-06-18", forms=True, legacy_forms=True, structured=True),
    _Protocol("2025-11-25", forms=True, structured=True, urls=True, tasks=True),
    _Protocol("2026-07-28", handshake=False, forms=True, structured=True, urls=True, task_extension=True),
)


def _protocol(name: Any) -> "Optional[_Protocol]":
    """The version askq speaks of this name, or None."""
    return next((protocol for protocol in _PROTOCOLS if protocol.name == name), None)


def _latest_handshake() -> _Protocol:
    return [protocol for protocol in _PROTOCOLS if protocol.handshake][-1]


@dataclass(frozen=True)
class _KnownClient:
    """What is known of one client's forms: the name it gives itself, whether
    it draws a choice only from a plain ``enum``, and what was seen, when."""

    name: str
    plain_enum_only: bool
    measured: str
    seen: str


# What is known of clients, keyed by the name each gives itself; a client
# not here gets the protocol's own arms.  Client SDKs parse a property into
# one arm of the schema's union and drop the rest, so each property is one
# arm, and this table says which one a client draws.
_KNOWN_CLIENTS: "Tuple[_KnownClient, ...]" = (
    _KnownClient(
        name="askq", plain_enum_only=True, measured="2026-12-05",
        seen="MCPJam Inspector 1.0.24, which names itself after the server as its configuration names it"
             " (askq, as the README configures it), drawn in headless Chromium: a single choice's titled"
             " oneOf as an empty text box, its plain enum as a dropdown of the labels; a multi choice as a"
             " JSON field under its description, whichever arm it is",
    ),
)


def _known_client(name: "Optional[str]") -> "Optional[_KnownClient]":
    """The table's entry for the client that gave itself this name, if any."""
    return next((known for known in _KNOWN_CLIENTS if known.name == name), None)


@dataclass(frozen=True)
class _FormArms:
    """Which arm of the schema a form's properties take: ``legacy``, the
    2025-06-18 vocabulary (no titled enums, no number defaults);
    ``plain_enum``, a single choice as ``enum`` with ``enumNames`` and a
    multi choice as a plain ``enum`` whose labels its description names."""

    legacy: bool = False
    plain_enum: bool = False


class _FormKeys:
    """The keys of one question's fields in a form: its own property (its id),
    the custom row's text on a choice question that offers it, and under
    2025-06-18 a multi-choice question's booleans, one per option."""

    __slots__ = ("options", "other", "value")

    def __init__(self, value: str, other: "Optional[str]", options: "List[str]") -> None:
        self.value, self.other, self.options = value, other, options


def to_elicitation(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]", message: "Optional[str]" = None,
    protocol_version: "Optional[str]" = None, *, client: "Optional[str]" = None,
) -> "Dict[str, Any]":
    """The questions as MCP ``ElicitRequestFormParams`` (form mode).

    One property per question, keyed by its id, each exactly one arm of the
    protocol's schema: a string for free text, a titled single- or
    multi-select enum for a choice question, whose choices are the rows
    every way of asking shows; a string property ``<id>_other`` carries the
    text typed for the custom row.  With ``protocol_version="2025-06-18"``,
    that version's vocabulary: a single choice as ``enum`` with
    ``enumNames``, a multi choice as one boolean property per option.
    Optional text fields default to "".  ``client`` is the name the client
    gives itself: a client known to draw only a plain ``enum`` gets a single
    choice as ``enum`` with ``enumNames`` and a multi choice's labels in its
    description; any other gets the protocol's titled arms.

        >>> form = askq.to_elicitation(askq.ask({"questions": [
        ...     {"question": "Which?", "options": ["A (Recommended)", "B"]}]}))
        >>> form["requestedSchema"]["properties"]["q0"]["default"], form["requestedSchema"]["required"]
        ('A', ['q0'])
        >>> sorted(form["requestedSchema"]["properties"])
        ['q0', 'q0_other']
    """
    items = _question_list(questions)
    _refuse_secrets(items)
    protocol = _protocol(protocol_version)
    legacy = protocol is not None and protocol.legacy_forms
    known = _known_client(client)
    arms = _FormArms(legacy, legacy or (known is not None and known.plain_enum_only))
    properties: Dict[str, Any] = {}
    for item, keys in zip(items, _form_keys(items)):
        if legacy and item.question_type is QuestionType.MULTI_CHOICE:
            for key, option in zip(keys.options, item.options or ()):
                described = {} if option.description is None else {"description": option.description}
                properties[key] = {"type": "boolean", "title": _badged(item, option), **described, "default": False}
        else:
            properties[keys.value] = _elicitation_property(item, arms)
        if keys.other is not None:
            properties[keys.other] = {
                "type": "string",
                "title": f"{item.header or item.question}: {CUSTOM_RESPONSE_LABEL}",
                "description": f"Your own answer, when you choose {CUSTOM_RESPONSE_LABEL!r}.",
                "default": "",
            }
    required = [item.id for item in items if item.required and not (legacy and item.question_type is QuestionType.MULTI_CHOICE)]
    return {
        "mode": "form",
        "message": _visible(_elicitation_message(items, legacy) if message is None else message),
        "requestedSchema": {"type": "object", "properties": _shown_safely(properties), "required": required},
    }


def _shown_safely(properties: "Dict[str, Any]") -> "Dict[str, Any]":
    """Every text a client draws of the form's fields (titles, descriptions,
    enum names) as the terminal shows it, since clients draw forms in
    terminals too; the values that come back stay as they are."""
    for field in properties.values():
        for choice in [field, *field.get("oneOf", ()), *field.get("items", {}).get("anyOf", ())]:
            for name in ("title", "description"):
                if name in choice:
                    choice[name] = _visible(choice[name])
        if "enumNames" in field:
            field["enumNames"] = [_visible(title) for title in field["enumNames"]]
    return properties


def from_elicitation(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]", result: Any
) -> "Tuple[str, Optional[List[AnswerItem]]]":
    """Read an MCP ``ElicitResult`` for questions asked with to_elicitation(),
    in either vocabulary.

    ``result`` is the result as a dict, or any object with ``action`` and
    ``content`` attributes or a ``model_dump()`` (the ``mcp`` SDK's
    ``ElicitResult``).  Returns ``(action, answers)``: the answers from
    collect_answers() for "accept", None for "decline" and "cancel".  A key
    is also read with its "." and "-" turned into "_" (typed clients rename
    fields so); an unknown key whose value is null or empty is ignored.
    Other unknown keys, or values of the wrong type, raise AnswerError, as
    do answers that collect_answers() refuses.
    """
    fields = _result_fields(result)
    action = fields.get("action")
    if action not in _ELICIT_ACTIONS:
        raise AnswerError(
            "An ElicitResult needs an 'action' of \"accept\", \"decline\" or \"cancel\";"
            f" this one ({_described(result)}) has {_quoted(str(action)) if action is not None else 'none'}."
        )
    if action != "accept":
        return str(action), None
    items = _question_list(questions)
    content = {} if fields.get("content") is None else fields["content"]
    if not isinstance(content, dict):
        raise AnswerError(f"The ElicitResult 'content' must be an object, not {_json_type(content)}.")
    all_keys = _form_keys(items)
    content = _canonical_content(content, all_keys)
    answers = [_elicited_answer(index, item, content, keys) for index, (item, keys) in enumerate(zip(items, all_keys))]
    return action, collect_answers(items, answers)


def _form_keys(items: "List[QuestionItem]") -> "List[_FormKeys]":
    """The keys of every question's fields, each unique in the form."""
    taken = {item.id for item in items}

    def free(base: str) -> str:
        key = base
        while key in taken:
            key += "_"
        taken.add(key)
        return key

    keys = []
    for item in items:
        rows = _question_rows(item)
        other = free(f"{_identifier_part(item.id)}_other") if rows and rows[-1].takes_text else None
        options = [free(f"{_identifier_part(item.id)}_{n}") for n in range(1, len(item.options or ()) + 1)] \
            if item.question_type is QuestionType.MULTI_CHOICE else []
        keys.append(_FormKeys(item.id, other, options))
    return keys


def _identifier_part(text: str) -> str:
    """Text as the start of a key that is an identifier in every language."""
    cleaned = "".join(char if char.isascii() and (char.isalnum() or char == "_") else "_" for char in text)
    return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else f"q{cleaned}"


def _canonical_content(content: "Dict[Any, Any]", all_keys: "List[_FormKeys]") -> "Dict[str, Any]":
    """The content keyed as the form keyed it, whatever a client renamed."""
    known: Dict[str, str] = {}
    for keys in all_keys:
        for key in [keys.value, *([keys.other] if keys.other else []), *keys.options]:
            known[key] = key
            known.setdefault(key.replace(".", "_").replace("-", "_"), key)
    canonical: Dict[str, Any] = {}
    for key, value in content.items():
        name = known.get(key, known.get(key.replace(".", "_").replace("-", "_"))) if isinstance(key, str) else None
        if name is not None:
            canonical[name] = value
        elif value not in (None, "", [], {}):
            raise AnswerError(
                f"The ElicitResult names {_quoted(str(key))}, which is no question id or"
                " companion field of this form."
            )
    return canonical


def _result_fields(result: Any) -> "Dict[Any, Any]":
    """An ElicitResult's fields, whether it came as a dict or as an SDK object."""
    if isinstance(result, dict):
        return result
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        try:
            dumped = dump()
        except Exception:  # noqa: BLE001 - a foreign object: fall back to its attributes
            dumped = None
        if isinstance(dumped, dict):
            return dumped
    return {name: getattr(result, name) for name in ("action", "content") if hasattr(result, name)}


def _described(value: Any) -> str:
    """A short, safe description of what a caller handed in, for a message."""
    if isinstance(value, dict):
        return f"an object with the keys {', '.join(_quoted(str(key)) for key in list(value)[:8]) or 'none'}"
    return f"a Python {type(value).__name__}"


def input_request(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]",
    key: str = TOOL_NAME,
    message: "Optional[str]" = None,
    *,
    client: "Optional[str]" = None,
) -> "Dict[str, Any]":
    """The questions as one entry of an MCP ``InputRequests`` map, the form
    drawn for ``client`` (the name the client gives itself) as
    to_elicitation() draws it."""
    return {key: {"method": "elicitation/create", "params": to_elicitation(questions, message, client=client)}}


# What a call that holds a secret question gets instead of a form.
_SECRET_NOT_IN_FORM = (
    "Nobody was asked: this call holds a secret question (an answer that must not be shown back), and"
    " askq will not put a secret into a form, which MCP forbids, and no page is available here to ask it"
    " on. Do not assume any answers: ask the user to give the secret another way, or go on without it."
)


def _holds_secret(items: "Sequence[QuestionItem]") -> bool:
    return any(item.secret for item in items)


def _refuse_secrets(items: "List[QuestionItem]") -> None:
    """MCP forbids asking for secrets in a form: a secret question is
    refused here, whoever builds the form."""
    for index, item in enumerate(items):
        if item.secret:
            raise _refused(
                index, item, "malformed",
                " is a secret question, and MCP forbids asking for secrets in a form: ask it on a page"
                " (prompt_web) or in a terminal instead.",
            )


def _elicitation_property(item: QuestionItem, arms: _FormArms) -> "Dict[str, Any]":
    described = item.question if item.purpose is None else f"{item.question}\n{item.purpose}"
    field: Dict[str, Any] = {"title": item.header or item.question, "description": described}
    if item.question_type is QuestionType.NUMBER:
        return _number_property(item, field, arms.legacy)
    if not item.question_type.is_choice:
        default = "" if item.default is None and not item.required else item.default
        return {"type": "string", **field, **({} if default is None else {"default": default})}
    rows = _question_rows(item)
    states = [state.label for state in _form_states(item)]  # after the rows: the person's other words
    labels = [row.label for row in rows] + states
    titles = [row.label if row.option is None else _option_title(item, row.option) for row in rows] + states
    if item.question_type is QuestionType.MULTI_CHOICE:
        return _multi_choice_property(item, field, labels, titles, arms)
    preset = {} if item.recommended is None else {"default": item.recommended}
    if arms.plain_enum:
        return {"type": "string", **field, "enum": labels, "enumNames": titles, **preset}
    choices = [{"const": label, "title": title} for label, title in zip(labels, titles)]
    return {"type": "string", **field, "oneOf": choices, **preset}


def _multi_choice_property(
    item: QuestionItem, field: "Dict[str, Any]", labels: "List[str]", titles: "List[str]", arms: _FormArms,
) -> "Dict[str, Any]":
    """A multi choice as an array property: its titled choices, or for a
    client that draws no titled arm, its labels as a plain enum, and named
    with their titles in the description, the one text such a client shows."""
    at_least = {"minItems": 1} if item.required else {}
    if not arms.plain_enum:
        choices = [{"const": label, "title": title} for label, title in zip(labels, titles)]
        return {"type": "array", **field, "items": {"anyOf": choices}, **at_least}
    named = "; ".join(json.dumps(label, ensure_ascii=False) + title[len(label):] for label, title in zip(labels, titles))
    described = f"{field['description']}\nChoose any of: {named}"
    return {"type": "array", **field, "description": described, "items": {"type": "string", "enum": labels}, **at_least}


def _form_states(item: QuestionItem) -> "List[_StateWords]":
    """The states a form offers as choices of their own: on a single choice
    only (clients draw no good place for one elsewhere), each unless an
    option has its label."""
    if item.question_type is not QuestionType.SINGLE_CHOICE:
        return []
    offered = (_STATES[_YOU_DECIDE], _STATES[_DISCUSS])
    return [state for state in offered if _option_named(item.options or [], state.label) is None]


def _number_property(item: QuestionItem, field: "Dict[str, Any]", legacy: bool) -> "Dict[str, Any]":
    """A number question as a form's number property: "integer" when its
    step and bounds are whole, with its bounds; its unit in the title, its
    step in the description; its default where the version has one."""
    whole = item.step is not None and all(
        value is None or float(value).is_integer() for value in (item.step, item.minimum, item.maximum))
    title = f"{field['title']} ({item.unit})" if item.unit else field["title"]
    words = _number_range(item)
    prop: Dict[str, Any] = {"type": "integer" if whole else "number", "title": title,
                            "description": f"{field['description']}\n{words[0].upper()}{words[1:]}."}
    for name, value in (("minimum", item.minimum), ("maximum", item.maximum)):
        if value is not None:
            prop[name] = int(value) if whole else value
    if item.default is not None and not legacy and _number_problem(item, item.default) is None:
        number = _typed_value(item, item.default)
        assert number is not None  # it passed the check
        prop["default"] = int(number) if whole else number
    return prop


def _option_title(item: QuestionItem, option: QuestionOption) -> str:
    """An option as a form's choice names it: its label, badged when it is
    recommended, then its description."""
    label = _badged(item, option)
    return label if option.description is None else f"{label} - {option.description}"


def _badged(item: QuestionItem, option: QuestionOption) -> str:
    """An option's label, with the recommended badge when it carries one."""
    recommended = _is_recommended(item, _Row(option.label, option))
    return f"{option.label} {RECOMMENDED_SUFFIX}" if recommended else option.label


def _elicitation_message(items: "List[QuestionItem]", legacy: bool = False) -> str:
    """What the form is about.  Under 2025-06-18 a multi choice is only its
    booleans, which name no question: the message says the question itself."""
    def name(item: QuestionItem) -> str:
        if legacy and item.question_type is QuestionType.MULTI_CHOICE:
            return item.question
        return item.header or item.question

    names = "; ".join(name(item) for item in items)
    if len(names) > _MESSAGE_CHARS:
        names = names[: _MESSAGE_CHARS - 3].rstrip() + "..."
    lead = "Please answer this question" if len(items) == 1 else f"Please answer these {len(items)} questions"
    title, purpose = _heading(items)
    above = "".join(f"{text}\n" for text in (title, purpose) if text is not None)
    return f"{above}{lead}: {names}"


def _is_form_value(value: Any, multi: bool) -> bool:
    if value is None:
        return True
    if multi:
        return isinstance(value, list) and all(isinstance(label, str) for label in value)
    return isinstance(value, str)


def _elicited_answer(index: int, item: QuestionItem, content: "Dict[str, Any]", keys: _FormKeys) -> AnswerItem:
    """One question's form values as an answer, for collect_answers() to check."""
    value = content.get(keys.value)
    if item.question_type is QuestionType.NUMBER and _number_text(value) is not None:
        value = _number_text(value)  # a number property's value, checked as typed text
    other = content.get(keys.other) if keys.other else None
    multi = item.question_type is QuestionType.MULTI_CHOICE
    if not _is_form_value(value, multi):
        wanted = "an array of strings" if multi else "a string"
        raise _refused(index, item, "malformed", f": its form value must be {wanted}, not {_json_type(value)}.")
    if other is not None and not isinstance(other, str):
        raise _refused(index, item, "malformed", f": its companion text must be a string, not {_json_type(other)}.")
    if not item.question_type.is_choice:
        return AnswerItem(item.id, value)
    state = next((state.name for state in _form_states(item) if state.label == value), None)
    if state is not None:
        return AnswerItem(item.id, other or None, unanswered=state)
    picked = (value or []) if multi else ([] if value is None else [value])
    ticked = [option.label for key, option in zip(keys.options, item.options or ()) if content.get(key) is True]
    custom = any(_names_custom_row(label) for label in picked) or bool(ticked and other)
    picked = picked + ticked
    typed, note = _custom_text(item, other, custom, bool(picked))
    return AnswerItem(item.id, typed, picked, note=note)


# ===========================================================================
# Prompts: the line prompt
#
# prompt() picks the way of asking: the dialog where the terminal allows it,
# the line prompt everywhere else.  Both return the same QuestionOutput.

_NEEDS_ANSWER = "This question needs an answer."


class _TimedOut(Exception):
    """Nobody responded within the time the harness allowed."""


def prompt(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]",
    *,
    stdin: "Optional[Any]" = None,
    stdout: "Optional[Any]" = None,
    timeout: "Optional[float]" = None,
    plain: "Optional[bool]" = None,
) -> QuestionOutput:
    """Ask the questions on a terminal; return a new output with the outcome.

    Draws on ``stdout`` (default ``sys.stderr``, which keeps a program's own
    output clean) and reads ``stdin`` (default ``sys.stdin``).  Where both
    are terminals with raw keys, it shows the dialog (tabs, arrow keys,
    toggles, a review); elsewhere, or with ``plain=True`` (screen readers,
    logs), a numbered list answered line by line.  ``timeout`` is the idle
    time in seconds after which the outcome is "timed_out".  The status is
    "answered", "declined" (Esc, Ctrl-C, input ending midway), "timed_out",
    "follow_up" (the person asked for more questions first) or
    "unavailable" (no input at all); answers given before the end are kept.
    """
    return _prompt(_question_list(questions), stdin, stdout, timeout, plain, None)


async def prompt_async(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]", **options: Any
) -> QuestionOutput:
    """prompt() for an event loop: the person is asked on a worker thread, so
    the loop goes on meanwhile.  Takes prompt()'s keyword options.  When the
    awaiting task is cancelled, the prompt ends within a fraction of a
    second, the terminal restored, and the cancellation propagates."""
    items = _question_list(questions)
    return await _off_the_loop(lambda cancel: _prompt(
        items, options.get("stdin"), options.get("stdout"), options.get("timeout"), options.get("plain"), cancel))


async def prompt_web_async(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]", **options: Any
) -> QuestionOutput:
    """prompt_web() for an event loop, as prompt_async() is for prompt(); a
    cancelled task stops the page's server."""
    items = _question_list(questions)
    return await _off_the_loop(lambda cancel: _prompt_web(items, cancel=cancel, **options))


class _Cancelled(Exception):
    """The task awaiting the prompt was cancelled: the call is gone."""


async def _off_the_loop(run: "Callable[[Any], QuestionOutput]") -> QuestionOutput:
    import asyncio
    import threading

    cancel = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(None, run, cancel)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.set()
        try:
            await future  # until the prompt has put the terminal back
        except _Cancelled:
            pass
        raise


def _prompt(
    items: "List[QuestionItem]", stdin: Any, stdout: Any, timeout: "Optional[float]", plain: "Optional[bool]",
    cancel: Any,
) -> QuestionOutput:
    reader = sys.stdin if stdin is None else stdin
    writer = sys.stderr if stdout is None else stdout
    if reader is None or writer is None:
        return QuestionOutput(items, [], Outcome.UNAVAILABLE)
    if not plain and _dialog_possible(reader, writer):
        status, raw = _run_dialog(items, reader, writer, timeout, cancel)
    else:
        status, raw = _LinePrompt(_LineReader(reader, timeout, cancel), writer).ask(items)
    return QuestionOutput(items, _checked_output_answers(items, raw, status), status)


class _Retry(Exception):
    """A line that answers nothing; its message is the reply, and the question is asked again."""


class _LinePrompt:
    """The line prompt: numbered rows, one line per answer, on any stream.

    ask() goes through the questions in turn; each line is read, matched by
    the naming rule, and either answers the question or is explained and
    asked again."""

    def __init__(self, reader: "_LineReader", writer: Any) -> None:
        self.reader = reader
        self.writer = writer
        self.note: Optional[AnswerItem] = None  # a note written for the question being asked
        self.width = _line_width(writer)
        self.heard = False  # whether a line was read: then the end of input is someone who stopped

    def say(self, text: str, first: str = "  ", rest: str = "  ") -> None:
        """Write text wrapped to the terminal's width, with a hanging indent."""
        self.writer.write("\n".join(_wrap(text, self.width, first, rest)) + "\n")

    def ask(self, items: "List[QuestionItem]") -> "Tuple[Outcome, List[AnswerItem]]":
        answers: List[AnswerItem] = []
        self.note = None
        status = Outcome.ANSWERED
        try:
            for number, item in enumerate(items, 1):
                self.show(item, number, len(items))
                answers.append(self.answer(item))
        except _MoreWanted:
            self.say("You asked for more questions first; the answers so far are kept.")
            status = Outcome.FOLLOW_UP
        except EOFError:
            # A person at a terminal ended it; from a pipe, no line means nobody was there.
            someone = answers or self.note or self.heard or _is_terminal(self.reader.stream)
            status = Outcome.DECLINED if someone else Outcome.UNAVAILABLE
        except KeyboardInterrupt:
            status = Outcome.DECLINED
        except _TimedOut:
            self.writer.write("\n")
            self.say("No answer in time.")
            status = Outcome.TIMED_OUT
        return status, answers + ([self.note] if self.note else [])

    def show(self, item: QuestionItem, number: int, count: int) -> None:
        tag = f"[{_visible(item.header)}] " if item.header else ""
        self.writer.write("\n")
        self.say(f"{tag}{_visible(item.question)}  ({number} of {count})", "", "  ")
        if item.purpose:
            self.say(_visible(item.purpose), "  Why: ", "       ")
        rows = _question_rows(item)
        for place, row in enumerate(rows, 1):
            option = row.option
            badge = f" {RECOMMENDED_SUFFIX}" if _is_recommended(item, row) else ""
            about = f" - {_visible(option.description)}" if option and option.description else ""
            lead = f"  {place:>{len(str(len(rows)))}}. "  # labels start in one column from row 10 on too
            self.say(f"{_visible(row.label)}{badge}{about}", lead, " " * len(lead))
            for line in option.preview.splitlines() if option and option.preview else ():
                self.say(_visible(line), "       ", "       ")
        self.say(_input_hint(item))

    def answer(self, item: QuestionItem) -> AnswerItem:
        """Read lines until one answers the question; explain and ask again
        otherwise.  A line "note: ..." adds a note to the answer that follows."""
        self.note = None
        while True:
            try:
                answer = self.line_answer(item, self.read_line("> ", item.secret))
            except _Retry as retry:
                self.say(str(retry))
                continue
            answer.note, self.note = self.note.note if self.note else None, None  # a skip keeps it too
            return answer

    def line_answer(self, item: QuestionItem, line: str) -> AnswerItem:
        if line == "?":
            raise _Retry(_line_words(item))
        if line.lower().startswith(_LINE_NOTE):
            note = None if _blank(line[len(_LINE_NOTE):]) else line[len(_LINE_NOTE):].strip()
            self.note = AnswerItem(item.id, note=note) if note else None  # kept if the input ends here
            raise _Retry("Noted. Now your answer." if note else "No note.")
        if not line:
            return self.confirmed_default(item)
        if _option_named(item.options or (), line) is None:  # an option of the same name wins
            state = _LINE_STATES.get(line.lower())
            if state is not None:
                return AnswerItem(item.id, unanswered=state)
            if line.lower() == _LINE_MORE:
                raise _MoreWanted
        if item.question_type.is_choice:
            return self.choice_answer(item, line)
        return _checked_typed(item, line)

    def confirmed_default(self, item: QuestionItem) -> AnswerItem:
        """An empty line: the default its hint offers, else no answer."""
        if item.default is not None and not item.question_type.is_choice:
            self.say(f"Kept: {'(hidden)' if item.secret else _quoted(item.default)}.")
            return _checked_typed(item, item.default)
        return _no_answer(item)

    def choice_answer(self, item: QuestionItem, line: str) -> AnswerItem:
        """The answer a line gives a choice question; _Retry when it gives none."""
        words = line.replace(",", " ").split()
        if words and all(word.isascii() and word.isdigit() for word in words):
            return self.picked_rows(item, [int(word) for word in words])
        picks, typed = _picks_and_text(item, line)  # the rule every answer form is read by
        if typed is not None and not item.allow_custom:
            raise _Retry("Pick one of the options by its number.")
        if not picks:
            return AnswerItem(item.id, line)
        answer = self.picked(item, picks)
        if typed is not None:
            if answer.answer is not None:
                raise _Retry("Type your own answer once: beside the options you named, or on the line after the row for it.")
            answer = dataclasses.replace(answer, answer=typed)
        return answer

    def picked_rows(self, item: QuestionItem, numbers: "List[int]") -> AnswerItem:
        rows = _question_rows(item)
        for number in numbers:
            if not 1 <= number <= len(rows):
                raise _Retry(f"There is no row {number}: enter a number from 1 to {len(rows)}.")
        if item.question_type is QuestionType.SINGLE_CHOICE and len(set(numbers)) > 1:
            raise _Retry("Pick one row only.")
        return self.picked(item, [rows[number - 1] for number in numbers])

    def picked(self, item: QuestionItem, picks: "Sequence[Union[_Row, QuestionOption]]") -> AnswerItem:
        """The rows a line picked, by name or by number; when it picked the
        row for typing too, its text comes on the next line."""
        labels = [pick.label for pick in picks if pick is not _CUSTOM_ROW]
        if _CUSTOM_ROW not in picks:
            return AnswerItem(item.id, None, labels)
        typed = self.read_line("  Your answer: ", item.secret)
        if not labels and not typed:
            return _no_answer(item)
        return AnswerItem(item.id, typed or None, labels or None)

    def read_line(self, cue: str, secret: bool = False) -> str:
        """The next line within MAX_TEXT, trimmed (a blank one, invisible
        characters alone, is empty); a longer one is explained and asked
        again.  A secret is read without echo where the terminal allows."""
        while True:
            self.writer.write(cue)
            self.writer.flush()
            line = self.reader.readline(secret)
            line = "" if _blank(line) else line.strip()
            self.heard = True
            if secret and _is_terminal(self.reader.stream):
                self.writer.write("\n")  # the Enter that was not echoed
            if len(line) <= MAX_TEXT:
                return line
            self.say(f"That line is {len(line)} characters long; an answer holds at most {MAX_TEXT}.")


def _input_hint(item: QuestionItem) -> str:
    typed = ", or type your own answer" if item.allow_custom else ""
    if item.question_type is QuestionType.MULTI_CHOICE:
        hint = f"Enter one or more numbers (like 1,3){typed}."
    elif item.question_type is QuestionType.SINGLE_CHOICE:
        hint = f"Enter a number{typed}."
    elif item.question_type is QuestionType.NUMBER:
        hint = f"{_number_words(item)}."
    elif item.placeholder:
        hint = f"Type your answer (for example: {_visible(item.placeholder)})."
    else:
        hint = "Type your answer."
    if item.secret:
        hint += " It is not shown as you type."
    if item.default is not None and not item.question_type.is_choice:
        hint += f" Press Enter to keep {'the hidden default' if item.secret else _quoted(item.default)}."
    elif not item.required:
        hint += " Press Enter to skip."
    states = " or ".join(_quoted(word) for word in _LINE_STATE_WORDS)
    return hint + f" (note: ... adds a note; {states} instead of an answer; ? lists every word.)"


_LINE_NOTE = "note:"
_LINE_MORE = "more"
# The words that say a state instead of an answer: the state's label, and its name.
_LINE_STATES = {
    word: state.name for state in (_STATES[_YOU_DECIDE], _STATES[_DISCUSS])
    for word in (state.label.lower(), state.name.replace("_", " "))
}
_LINE_STATE_WORDS = (_YOU_DECIDE.replace("_", " "), _DISCUSS)


class _MoreWanted(Exception):
    """The person asked for more questions before answering the rest."""


def _line_words(item: QuestionItem) -> str:
    """What ``?`` shows: every word the prompt takes besides an answer."""
    words = [
        f"{_quoted(_LINE_STATE_WORDS[0])}: leave this one to the assistant;",
        f"{_quoted(_LINE_STATE_WORDS[1])}: talk this one over with the assistant before deciding;",
        f"{_quoted(_LINE_NOTE + ' ...')}: a note on the answer you give next;",
        f"{_quoted(_LINE_MORE)}: stop here and ask the assistant for more questions first (the answers so far are kept);",
        "an empty line: " + ("keep the default;" if item.default is not None and not item.question_type.is_choice
                             else "skip the question;" if not item.required else "nothing (it needs an answer);"),
    ]
    if item.question_type.is_choice:
        words.insert(0, "a row number, or an option's name: pick it;")
    return "You can type: " + " ".join(words)[:-1] + "."  # one sentence, ending as one


def _number_words(item: QuestionItem) -> str:
    """What a number question takes, as a request to the person: "Type one
    number from 1 to 64 GB in steps of 0.5"."""
    return _visible("Type " + _number_range(item).replace("it takes ", "", 1))


def _typed_refusal(item: QuestionItem, text: str) -> "Optional[AnswerError]":
    """Why collect_answers() refuses typed text as this question's answer, or None."""
    try:
        collect_answers([item], [AnswerItem(item.id, text)], partial=True)
    except AnswerError as err:
        return err
    return None


def _refusal_words(item: QuestionItem, err: AnswerError, text: str) -> str:
    """A refusal of typed text in the person's words."""
    words = _number_refusal(item, text)
    if words is not None:
        return words
    return _PERSON_WORDS.get(err.reason, "That answer cannot be taken. Check it and type it again.")


def _number_refusal(item: QuestionItem, text: str) -> "Optional[str]":
    """Why a number question refuses what was typed, in the person's words
    (every way of asking says the same), or None."""
    problem = _number_problem(item, text) if item.question_type is QuestionType.NUMBER else None
    return None if problem is None else _visible(f"That {problem[1]}.")


def _checked_typed(item: QuestionItem, text: str) -> AnswerItem:
    """Typed text as the answer; _Retry, in the person's words, when refused."""
    err = _typed_refusal(item, text)
    if err is not None:
        raise _Retry(_refusal_words(item, err, text))
    return AnswerItem(item.id, text)


def _line_width(writer: Any) -> int:
    """The width the line prompt wraps to: the terminal's, else 80."""
    try:
        columns = os.get_terminal_size(writer.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80
    return max(columns, _MIN_WIDTH) if columns else 80  # a terminal that does not know says 0


def _no_answer(item: QuestionItem) -> AnswerItem:
    if item.required:
        raise _Retry(_NEEDS_ANSWER)
    return AnswerItem(item.id, unanswered=_SKIPPED)


class _LineReader:
    """Lines from the person, each within the idle timeout.

    With a timeout, lines are read from the file descriptor itself, after
    select() says one is there: a stream's own buffer would hide what it
    already holds from select().  Without one, a terminal gets readline's
    line editing, so arrow keys move the cursor instead of becoming text.
    """

    def __init__(self, stream: Any, timeout: "Optional[float]", cancel: Any = None) -> None:
        self.stream = stream
        self.timeout = timeout
        self.cancel = cancel
        self.fd = _fileno(stream) if timeout is not None or cancel is not None else None
        self.pending = b""

    def readline(self, secret: bool = False) -> str:
        """The next line, without its line break; EOFError at the end of input.
        A secret from a terminal is read with its echo off, as getpass does."""
        fd = self.fd if self.fd is not None else _fileno(self.stream)
        if secret and fd is not None and _is_terminal(self.stream):
            return self._unechoed(fd)
        if self.fd is not None:
            return self._line_from_fd(self.fd)
        if self.stream is sys.stdin and _is_terminal(self.stream):
            return _replaced_escapes(_edited_line())
        return self._stream_line()

    def _unechoed(self, fd: int) -> str:
        try:
            import termios
        except ImportError:
            return self._stream_line()
        saved = termios.tcgetattr(fd)
        quiet = list(saved)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSADRAIN, quiet)
        try:
            return self._line_from_fd(fd) if self.fd is not None else self._stream_line()
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    def _stream_line(self) -> str:
        line = self.stream.readline()
        if not line:
            raise EOFError
        return _replaced_escapes(str(line).rstrip("\r\n"))

    def _line_from_fd(self, fd: int) -> str:
        import select

        while b"\n" not in self.pending:
            deadline = None if self.timeout is None else time.monotonic() + self.timeout
            ready: List[Any] = []
            while not ready:
                if self.cancel is not None and self.cancel.is_set():
                    raise _Cancelled
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise _TimedOut
                ready = select.select([fd], [], [], _POLL_SECONDS if left is None else min(left, _POLL_SECONDS))[0]
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            self.pending += chunk
        if not self.pending:
            raise EOFError
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")


def _replaced_escapes(line: str) -> str:
    """A line with the bytes that were not UTF-8 as the replacement
    character: standard input keeps them as lone surrogates, which would
    make the JSON printed with the answer invalid UTF-8."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:  # a lone surrogate that stands for no byte
            return line.encode("utf-8", "replace").decode("utf-8")
    return line


def _edited_line() -> str:
    """A line read with readline's editing, where the module exists.

    input() edits only when standard input and output are both terminals;
    a program whose output is a pipe (the CLI) lends its standard output the
    terminal of standard error while the line is read.
    """
    try:
        import readline  # noqa: F401  (imported for its effect on input())
    except ImportError:
        pass
    lend = not _is_terminal(sys.stdout) and _is_terminal(sys.stderr)
    saved = os.dup(1) if lend else -1
    try:
        if lend:
            sys.stdout.flush()
            os.dup2(2, 1)
        return input()
    finally:
        if lend:
            os.dup2(saved, 1)
            os.close(saved)


# ===========================================================================
# Prompts: the dialog
#
# Three pieces, each readable alone.  _Dialog is the state: what the person
# has done on each question, changed only by feed(keys), which the terminal
# loop and the tests drive alike; it knows nothing of terminals.  _Painter
# draws a state as lines no wider than the terminal.  _RawTerminal, _KeyReader
# and _Screen are the terminal: raw keys in, frames drawn in place.  A key is
# a pair (name, text): ("down", ""), ("text", "a"), ("paste", "pasted text").

_Key = Tuple[str, str]
_DISMISS_KEYS = ("esc", "ctrl-c", "ctrl-d")
# One key for each state a person can give instead of an answer: control
# keys, so that they act on a line being typed as on a row.
_STATE_KEYS = {"ctrl-y": _YOU_DECIDE, "ctrl-t": _DISCUSS}
_FOLLOW_UP_KEY = "m"  # on the review, where nothing is typed
# The timeout's last seconds are counted down on the screen.
_COUNTDOWN_SECONDS = 60
_PICK_HINT = "Pick one of the options with the arrow keys and Enter."
# Digits typed within this many seconds of each other make one row number.
_NUMBER_WAIT = 1.0


# What each key does while a line is being edited, registered beside it;
# and what each key that moves in the rows (or scrolls the view) does.
_EDIT_KEYS: "_Registry" = _Registry()
_ROW_KEYS: "_Registry" = _Registry()
_FILTER_KEYS: "_Registry" = _Registry()


def _word_edge(line: str, caret: int, step: int) -> int:
    """Where the word before the caret starts (``step`` -1), or the word
    after it ends (1), as shells and editors find it: over spaces, then over
    the word."""
    at, ahead = caret, min(step, 0)  # the character stepped over: before the caret, or at it
    while 0 <= at + ahead < len(line) and line[at + ahead].isspace():
        at += step
    while 0 <= at + ahead < len(line) and not line[at + ahead].isspace():
        at += step
    return at


class _Entry:
    """What the person did on one question: the highlighted ``row``, the
    options ``picked`` (one at most on a single-choice question), whether the
    row for typing is the single choice (``custom``), the ``text`` typed and
    its ``caret``, and whether an optional question was ``skipped``; the
    ``state`` given instead of an answer, whether ``text`` is still the
    question's default, unconfirmed (``prefilled``), and still selected,
    so that a character typed replaces it (``selected``), and the
    ``problem`` with the text the person last confirmed."""

    __slots__ = ("caret", "custom", "note", "note_caret", "picked", "prefilled", "problem", "row", "selected", "skipped",
                 "state", "text")

    def __init__(self, item: QuestionItem) -> None:
        default = None if item.question_type.is_choice else item.default
        self.row = 0
        self.picked: List[str] = []
        self.custom = False
        self.text = default or ""
        self.caret = len(self.text)
        self.skipped = False
        self.note = ""  # the person's note on the answer, and where its caret is
        self.note_caret = 0
        self.state: Optional[str] = None
        self.prefilled = self.selected = default is not None
        self.problem = ""


class _Dialog:
    """The dialog's state and what each key does to it.

    ``tab`` is the question shown, or ``review_tab`` for the review; one
    _Entry per question; ``notice`` is a word for the person after a key;
    ``status`` is set when the dialog ends.  What a question shows as its
    answer is what a dismissal keeps, and what its tab's mark says.
    """

    def __init__(self, items: "List[QuestionItem]") -> None:
        self.items = items
        self.entries = [_Entry(item) for item in items]
        self.notice = ""
        self.noting = False  # keys go to the current question's note
        self.status: Optional[Outcome] = None
        self.page = 5  # rows, or lines, that PgUp and PgDn move by: the screen sets it
        self.clock: Callable[[], float] = time.monotonic
        self.countdown: Optional[int] = None  # seconds left before the timeout, in its last minute
        self.tab = 0

    @property
    def tab(self) -> int:
        return self._tab

    @tab.setter
    def tab(self, tab: int) -> None:
        """Another tab: shown from where it follows the highlight, unfiltered."""
        self._tab = tab
        self.view = 0  # lines the view is moved from there (up when negative)
        self.filter: Optional[str] = None  # the text rows are narrowed to, while filtering
        self.digits, self.digits_at = "", 0.0  # a row number being typed, and when

    def shown_rows(self) -> "List[int]":
        """The rows of the current question that are drawn: all, or those a
        filter leaves (its text in the row's words or description, without case)."""
        rows = self.rows(self.tab)
        if self.filter is None:
            return list(range(len(rows)))
        folded = self.filter.lower()
        return [index for index, row in enumerate(rows) if folded in self.row_words(row).lower()
                or row.option is not None and folded in (row.option.description or "").lower()]

    @staticmethod
    def row_words(row: _Row) -> str:
        """A row's words as the dialog shows them, drawn, measured and filtered
        by: an option's label; the row for typing's, before the line typed on it."""
        return row.label

    @property
    def review_tab(self) -> int:
        """The index of the review tab, which only a batch of several has."""
        return len(self.items) if len(self.items) > 1 else -1

    @property
    def entry(self) -> _Entry:
        return self.entries[self.tab]

    def rows(self, index: int) -> "List[_Row]":
        """A question's rows; a free-text question has one, the line being typed."""
        return _question_rows(self.items[index]) or [_TYPING_ROW]

    def editing(self) -> bool:
        """Whether keys go to a line of text: a note, a free-text question, or the row for typing."""
        if self.noting:
            return True
        if self.tab == self.review_tab or self.filter is not None:
            return False
        return not self.items[self.tab].question_type.is_choice or self.rows(self.tab)[self.entry.row].takes_text

    def answer(self, index: int) -> "Optional[AnswerItem]":
        """What question ``index`` shows as its answer: AnswerItem(id) for a
        skip, None for nothing yet."""
        item, entry = self.items[index], self.entries[index]
        note = None if _blank(entry.note) else entry.note.strip()
        if entry.state is not None:
            return AnswerItem(item.id, note=note, unanswered=entry.state)
        text = None if entry.prefilled or _blank(entry.text) else entry.text.strip()
        custom = entry.custom or item.question_type is QuestionType.MULTI_CHOICE
        picked = [] if entry.custom else entry.picked
        # the dialog's rows are one list: a person who typed on the row for
        # typing and then picked another row moved away from the text
        typed = _custom_text(item, text, custom, bool(picked))[0] if item.question_type.is_choice else text
        if typed is not None and _typed_refusal(item, typed) is not None:
            typed = None  # what cannot be an answer is not kept as one
        if typed is not None or picked:
            return AnswerItem(item.id, typed, picked or None, note=note)
        if entry.skipped:  # a skip keeps its note
            return AnswerItem(item.id, note=note, unanswered=_SKIPPED)
        return AnswerItem(item.id, note=note) if note else None  # a note alone answers nothing

    def has_answer(self, index: int) -> bool:
        """Whether a question is settled: answered, or left to the assistant or to discuss."""
        answer = self.answer(index)
        return _gives_answer(answer) or answer is not None and answer.unanswered is not None and \
            _STATES[answer.unanswered].settles

    def answers(self) -> "List[AnswerItem]":
        """The answers the dialog ends with: once submitted, every question
        (an optional one left empty as skipped); otherwise every explicit
        act, confirmed or not."""
        answers = []
        for index, item in enumerate(self.items):
            answer = self.answer(index)
            if answer is None and self.status is Outcome.ANSWERED:
                answer = AnswerItem(item.id, unanswered=_SKIPPED)
            if answer is not None:
                answers.append(answer)
        return answers

    def outcome(self) -> "Tuple[Outcome, List[AnswerItem]]":
        return self.status or Outcome.DECLINED, self.answers()

    def summary(self, width: int, encoded: "Callable[[str], str]" = str) -> "List[str]":
        """What the scrollback keeps once the dialog is gone: the answers,
        briefly, ``encoded`` for the terminal before they are measured."""
        status, answers = self.outcome()
        lines = _wrap(f"askq: {_OUTCOME_WORDS[status].heading(bool(answers))}", max(width, _MIN_WIDTH), "", "  ")
        by_id = {answer.id: answer for answer in answers}
        for index, item in enumerate(self.items):
            shown = self.shown(index, by_id.get(item.id))
            text = encoded(f"{_visible(item.header or item.question)}: {shown}")
            lines += _wrap(text, max(width, _MIN_WIDTH), "  ", "    ")
        return lines

    def shown(self, index: int, answer: "Optional[AnswerItem]") -> str:
        """An answer as the review and the summary show it: a note on a
        question left unanswered is shown with it, not as a skip; a secret's
        typed text is hidden."""
        if answer is not None and answer.unanswered in (_YOU_DECIDE, _DISCUSS):
            note = f"; note: {_said(answer.note)}" if answer.note is not None else ""
            return f"({_STATES[answer.unanswered].label}){note}"
        if answer is None or _gives_answer(answer) or self.entries[index].skipped or self.status is Outcome.ANSWERED:
            return _shown_answer(self.items[index], answer)
        return f"(not answered); note: {_said(answer.note or '')}"

    def missing_required(self) -> "List[int]":
        return [i for i, item in enumerate(self.items) if item.required and not self.has_answer(i)]

    def feed(self, keys: "Iterable[_Key]") -> None:
        """Apply keys in turn, until the dialog ends."""
        for key in keys:
            if self.status is not None:
                return
            self.press(key)

    def press(self, key: "_Key") -> None:
        name, text = key
        self.notice = ""
        if name == "esc" and self.noting:  # ends the note, kept as written
            self.noting = False
        elif name == "esc" and self.filter is not None:  # ends the filter
            self.filter = None
        elif name in _DISMISS_KEYS:
            self.status = Outcome.DECLINED
        elif name in _STATE_KEYS and self.tab != self.review_tab:
            self._set_state(_STATE_KEYS[name])
        elif name == "ctrl-n" and self.tab != self.review_tab or self.noting and name == "enter":
            self.noting, self.filter = not self.noting, None
        elif name in ("tab", "shift-tab"):
            self.noting = False
            if name == "tab" and self.tab != self.review_tab:
                self._skip_if_optional()
            self._move_tab(1 if name == "tab" else -1)
        elif self.tab == self.review_tab:
            self._review_key(name, text)
        elif self.filter is not None and not self.noting:
            if name in _FILTER_KEYS:
                _FILTER_KEYS[name](self, name, text)
            elif name in _ROW_KEYS:
                _ROW_KEYS[name](self, name)
        elif self.editing() and name in _EDIT_KEYS:
            _EDIT_KEYS[name](self, name, text)
        else:
            self._choice_key(name, text)

    def _choice_key(self, name: str, text: str) -> None:
        """A key on an option row (or a free-text question's scrolling keys)."""
        if name in ("left", "right"):
            self._move_tab(1 if name == "right" else -1)
        elif name in _ROW_KEYS:
            _ROW_KEYS[name](self, name)
        elif name == "enter":
            self._enter()
        elif name in ("text", "paste"):
            self._choice_text(text)

    def _skip_if_optional(self) -> None:
        """Tab or Enter past an optional question left empty skips it, as its hints say."""
        if not self.items[self.tab].required and not self.has_answer(self.tab):
            self.entry.skipped = True

    def _move_tab(self, step: int) -> None:
        tabs = len(self.items) + (1 if self.review_tab >= 0 else 0)
        self.tab = (self.tab + step) % tabs

    def _set_state(self, state: str) -> None:
        """Leave the question to the assistant, or to discuss, in place of
        any answer, and go on; the same key again takes it back."""
        entry = self.entry
        self.noting, self.filter = False, None
        if entry.state == state:
            entry.state = None
            return
        entry.state, entry.picked, entry.custom, entry.skipped = state, [], False, False
        self._confirm()

    def _review_key(self, name: str, text: str) -> None:
        """The review: Enter submits, M asks for more questions first, Left
        goes back, the others scroll it."""
        scroll = {"up": -1, "down": 1, "pgup": -self.page, "pgdn": self.page, "home": -self.view, "end": 1 << 20}
        if name == "text" and text.lower() == _FOLLOW_UP_KEY:
            self.status = Outcome.FOLLOW_UP
        elif name == "enter":
            self._submit()
        elif name == "left":
            self._move_tab(-1)
        elif name in scroll:
            self.view = max(0, self.view + scroll[name])

    # Moving in the rows: over the rows shown, Up and Down wrapping round;
    # PgUp on the first row scrolls up into the question, for reading it.

    def _go_to_row(self, row: int) -> None:
        self.entry.row, self.view = row, 0

    @_ROW_KEYS.on("up", "down", "home", "end", "pgup", "pgdn")
    def _step_row(self, name: str) -> None:
        shown = self.shown_rows()
        at = shown.index(self.entry.row) if self.entry.row in shown else 0
        if name == "pgup" and at == 0:
            self.view -= self.page  # the question above the rows, read a page at a time
        elif name == "pgdn" and self.view < 0:
            self.view = min(0, self.view + self.page)
        elif shown:
            steps = {"up": at - 1, "down": at + 1, "home": 0, "end": -1, "pgup": max(0, at - self.page),
                     "pgdn": min(len(shown) - 1, at + self.page)}
            self._go_to_row(shown[steps[name] % len(shown)])

    # The filter, on a question with many options: typed text narrows the
    # rows; Enter acts on the highlighted row; Esc or an empty filter ends it.
    # It is a line being edited, its caret at its end: _set_line narrows the
    # rows anew, and _delete shortens it.

    @_FILTER_KEYS.on("text", "paste")
    def _filter_text(self, name: str, text: str) -> None:
        line = self.line()[0] + text.replace("\r", " ").replace("\n", " ")
        self._set_line(line, len(line))

    @_FILTER_KEYS.on("enter")
    def _filter_enter(self, name: str, text: str) -> None:
        if self.entry.row not in self.shown_rows():
            self.notice = "No row holds that text: Backspace or Esc ends the filter."
        elif self.items[self.tab].question_type is QuestionType.MULTI_CHOICE:
            self._act_on_row(advance=False)
        else:
            self._enter()

    def _submit(self) -> None:
        """Submit, or send the person to the first required question left unanswered."""
        missing = self.missing_required()
        if not missing:
            self.status = Outcome.ANSWERED
            return
        self.tab = missing[0]
        self.notice = _NEEDS_ANSWER

    @_EDIT_KEYS.on("enter")
    def _enter(self, name: str = "enter", text: str = "") -> None:
        item, entry = self.items[self.tab], self.entry
        row = self.rows(self.tab)[entry.row]
        entry.prefilled = entry.selected = False  # Enter on the default takes it
        text = "" if _blank(entry.text) else entry.text.strip()
        refusal = _typed_refusal(item, text) if row.takes_text and text else None
        entry.problem = "" if refusal is None else _refusal_words(item, refusal, text)
        if refusal is not None:
            return
        if item.question_type is QuestionType.SINGLE_CHOICE:
            if not row.takes_text:
                self._pick(row.label)
            elif text:
                entry.custom = True
        self._confirm()

    def _pick(self, label: str) -> None:
        self.entry.picked = [label]
        self.entry.custom = False
        self.entry.state = None

    def _confirm(self) -> None:
        """Enter on a question: go on; an empty one is a skip when optional,
        and a notice when required."""
        if self.items[self.tab].required and not self.has_answer(self.tab):
            self.notice = _NEEDS_ANSWER
            return
        self._skip_if_optional()
        if len(self.items) == 1:
            self._submit()
        else:
            self.tab += 1

    def _choice_text(self, text: str) -> None:
        """Printable keys on an option row: digits act on their row, Space
        picks or toggles, y/n answer a Yes/No question; anything else is typed."""
        item = self.items[self.tab]
        options = item.options or []
        if len(text) == 1 and text.isdigit() and len(self.rows(self.tab)) > 9:
            self._row_number(text)
        elif len(text) == 1 and text.isdigit() and 1 <= int(text) <= len(options):
            self.entry.row = int(text) - 1
            self._act_on_row(advance=True)
        elif text == "/" and len(options) > 9:
            self.filter = ""
        elif text == " ":
            self._act_on_row(advance=False)
        elif text.lower() in _YES_NO_LETTERS and _are_yes_no(options):
            self._pick(_yes_or_no(options, text))
            self._confirm()
        elif item.allow_custom:
            self.entry.row = len(self.rows(self.tab)) - 1
            self._insert("text", text)
        else:
            self.notice = _PICK_HINT

    def _row_number(self, digit: str) -> None:
        """A digit on a question of more than nine rows: with the digits
        just before it, a row number, which is highlighted for Enter or Space."""
        now = self.clock()
        typed = self.digits + digit if self.digits and now - self.digits_at <= _NUMBER_WAIT else digit
        if not 1 <= int(typed) <= len(self.rows(self.tab)):
            typed = digit  # no such row: the digit starts a number of its own
        self.digits, self.digits_at = typed, now
        if 1 <= int(typed) <= len(self.rows(self.tab)):
            self._go_to_row(int(typed) - 1)
            self.notice = f"Row {typed}: Enter or Space picks it."
        else:
            self.notice = f"There is no row {typed}."

    def _act_on_row(self, advance: bool) -> None:
        """A digit or Space on an option row: pick it (and go on, for a
        digit), or toggle it on a multi-choice question."""
        row = self.rows(self.tab)[self.entry.row]
        if row.takes_text:
            return
        if self.items[self.tab].question_type is QuestionType.MULTI_CHOICE:
            self.entry.state = None
            chosen = set(self.entry.picked) ^ {row.label}  # toggled, and kept in the options' order
            self.entry.picked = [o.label for o in self.items[self.tab].options or () if o.label in chosen]
            return
        self._pick(row.label)
        if advance:
            self._confirm()

    # Line editing, on a free-text question or the row for typing.  Each
    # takes the key's name and text, and names the keys it answers.

    def line(self) -> "Tuple[str, int]":
        """The line being edited and its caret: the note, the filter, or the answer's text."""
        entry = self.entry
        if self.filter is not None and not self.noting:
            return self.filter, len(self.filter)
        return (entry.note, entry.note_caret) if self.noting else (entry.text, entry.caret)

    def _set_line(self, line: str, caret: int) -> None:
        entry = self.entry
        if self.filter is not None and not self.noting:  # a new filter: the first row it leaves is highlighted
            self.filter = line or None
            shown = self.shown_rows()
            if shown and self.filter is not None:
                self._go_to_row(shown[0])
            return
        if self.noting:
            entry.note, entry.note_caret = line, caret
            return
        entry.selected = False  # a key that edits or moves the caret keeps the default to edit
        if line != entry.text:  # an edit is the person's own answer, to be checked again
            entry.prefilled, entry.problem, entry.state = False, "", None
        entry.text, entry.caret = line, caret

    @_EDIT_KEYS.on("text", "paste")
    def _insert(self, name: str, text: str) -> None:
        line, caret = self.line()
        if self.entry.selected and not self.noting and self.filter is None:
            line, caret = "", 0  # the default starts selected: what is typed replaces it
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # a terminal pastes line breaks as CR
        kept = text[: max(0, MAX_TEXT - len(line))]  # the bound every answer and note has
        self._set_line(line[:caret] + kept + line[caret:], caret + len(kept))
        if len(kept) < len(text) and not self.noting:
            self.entry.problem = f"An answer holds {MAX_TEXT} characters at most; the rest was left out."
        if self.items[self.tab].question_type is QuestionType.SINGLE_CHOICE and not self.noting:
            self.entry.custom = True

    @_EDIT_KEYS.on("backspace", "delete", "ctrl-u", "ctrl-k", "ctrl-w", "alt-backspace")
    @_FILTER_KEYS.on("backspace", "ctrl-u", "ctrl-w", "alt-backspace")
    def _delete(self, name: str, text: str) -> None:
        """Take out the characters from the caret to where the key reaches
        (a character either side, either end, the word before), the caret
        left where they started."""
        line, caret = self.line()
        spans = {"backspace": (max(0, caret - 1), caret), "delete": (caret, caret + 1), "ctrl-u": (0, caret),
                 "ctrl-k": (caret, len(line))}
        start, end = spans.get(name) or (_word_edge(line, caret, -1), caret)
        self._set_line(line[:start] + line[end:], start)

    @_EDIT_KEYS.on("left", "right", "home", "end", "alt-b", "alt-f")
    def _move_caret(self, name: str, text: str) -> None:
        line, caret = self.line()
        moves = {"left": caret - 1, "right": caret + 1, "home": 0, "end": len(line)}
        at = moves[name] if name in moves else _word_edge(line, caret, -1 if name == "alt-b" else 1)
        self._set_line(line, max(0, min(len(line), at)))

    @_EDIT_KEYS.on("up", "down")
    def _leave_line(self, name: str, text: str) -> None:
        # Up and Down leave the row for typing for the other rows; a
        # free-text question, or a note, has nowhere to go.
        if self.items[self.tab].question_type.is_choice and not self.noting:
            self._step_row(name)


_PREVIEW_LINES = 12
_MIN_WIDTH = 20
_SGR = {"bold": "1", "dim": "2", "reverse": "7", "cyan": "36", "green": "32", "yellow": "33"}
_SGR_CODE = re.compile("\x1b\\[[0-9;]*m")


class _Style:
    """How the dialog may draw: with colour and emphasis or without, with
    the marks of Unicode or of ASCII, and in the terminal's encoding: where
    that is not UTF-8, every character it cannot show is drawn escaped, so
    that widths are measured on what is drawn."""

    def __init__(self, color: bool, unicode: bool, encoding: "Optional[str]" = None) -> None:
        self.color = color
        self.unicode = unicode
        self.encoding = "utf-8" if unicode else encoding or "ascii"
        try:
            "".encode(self.encoding)
        except LookupError:  # a name Python does not know: what every terminal shows
            self.encoding = "ascii"
        self.bar, self.newline = ("\u2502 ", "\u21b5") if unicode else ("| ", "\\n")
        self.pointer = "\u276f" if unicode else ">"
        self.done = "\u2714" if unicode else "+"
        self.missing = "!"
        self.skipped = "-"
        self.checked, self.unchecked = ("[\u2714]", "[ ]") if unicode else ("[x]", "[ ]")
        self.chosen, self.unchosen = ("(\u25cf)", "( )") if unicode else ("(*)", "( )")
        self.dot = " \u00b7 " if unicode else " - "
        self.secret = "\u2022" if unicode else "*"  # one for each character of a secret being typed

    def encoded(self, text: str) -> str:
        """Text as the terminal's encoding can show it: escaped where it cannot."""
        if self.unicode or text.isascii():
            return text
        return text.encode(self.encoding, "backslashreplace").decode(self.encoding)

    def text(self, text: str) -> str:
        """Model-written or typed text, safe to draw: _visible(), then encoded."""
        return self.encoded(_visible(text))

    def clipped(self, text: str, width: int) -> str:
        if self.unicode or _cells(text) <= width:
            return _clipped(text, width)
        return _cut_cells(text, 0, width - 3) + "..."

    def paint(self, text: str, *looks: str) -> str:
        if not self.color or not looks or not text:
            return text
        codes = ";".join(_SGR[look] for look in looks)
        return f"\x1b[{codes}m{text}\x1b[0m"


class _Frame:
    """One drawing of the dialog: its lines; where the caret stands while a
    line is edited (line, column) or None; the line of the highlighted row;
    how many lines at the top (the tabs) and at the bottom (the notice and
    the hints) must stay on screen when the frame is cut to the terminal's
    height; the one line of hints a short screen keeps; and the marks that
    say more is above or below."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.caret: Optional[Tuple[int, int]] = None
        self.focus = 0
        self.head = 0
        self.foot = 0
        self.notice = 0  # the foot's first lines: the notice
        self.tab_line = 0  # the line of the tab bar with the current tab
        self.briefs: List[List[str]] = [[""]]  # the hints a short screen keeps, in one line, two, three
        self.notice_brief = ""  # the notice's first line, in fewer words where they fit better
        self.more = ("", "")
        self.page = 5  # what PgUp and PgDn move by, once cut: a view less a line, so that one is seen again
        # Lines [start, end) that a short screen draws in fewer lines, each
        # form shorter than the one before: a label that wrapped above the
        # line being typed, a refusal beside the entry.
        self.folds: List[Tuple[int, int, List[List[str]]]] = []
        self.problem_end = 0  # the line after the refusal beside the entry, in view with it

    def fold(self, start: int, forms: "List[List[str]]") -> None:
        """Lines from ``start`` to the last line drawn may be drawn as ``forms``."""
        if forms and len(forms[-1]) < len(self.lines) - start:
            self.folds.append((start, len(self.lines), forms))

    def _folded(self, room: int) -> "Tuple[List[str], Optional[Tuple[int, int]], int]":
        """The lines, the caret and the end of what must be seen with the
        highlighted row, with folds drawn shorter while the row, the caret
        and the refusal beside them do not fit ``room`` (less its marks)."""
        lines, caret = list(self.lines), self.caret
        row = caret[0] if caret is not None else self.focus
        last = max(self.focus, row, self.problem_end - 1)
        fits = room - 2 if room >= 4 else max(1, room - 1)
        for start, end, forms in reversed(self.folds):  # the later first: the earlier keep their place
            over = last - min(self.focus, row) + 1 - fits
            if over <= 0:
                break
            form = next((form for form in forms if len(form) <= end - start - over), forms[-1])
            lines[start:end] = form
            row, last = (_folded_line(line, start, end, len(form)) for line in (row, last))
        if caret is not None:
            caret = (row, caret[1])
        return lines, caret, last

    def cut(self, height: int, view: int = 0) -> "Tuple[List[str], Optional[Tuple[int, int]], int]":
        """The lines that fit ``height``: the head and the foot, and between
        them the rows around the caret or the highlighted row, moved by
        ``view`` lines; and how far the view was moved, within the frame."""
        lines = self.lines
        if len(lines) <= height:
            return lines, self.caret, 0
        tabs, foot = lines[: self.head], lines[len(lines) - self.foot:]
        if height - len(tabs) - len(foot) < (2 * height) // 3:  # short: the current tab, a notice line, the brief hints
            brief = self.briefs[max(0, min(len(self.briefs), (height - 7) // 2) - 1)]
            notice = [self.notice_brief or foot[0]] if self.notice else []
            tabs, foot = tabs[self.tab_line: self.tab_line + 1], notice + brief
        for fewer_tabs, fewer_foot in ((tabs, self.briefs[0]), ([], self.briefs[0]), ([], [])):
            if height - len(tabs) - len(foot) < 1:  # too short even for those: the hints, then the body alone
                tabs, foot = fewer_tabs, fewer_foot
        room = height - len(tabs) - len(foot)
        self.page = max(1, (room - 2 if room >= 4 else room) - 1)
        lines, caret, last = self._folded(room)
        body = lines[self.head: len(lines) - self.foot]
        while len(body) > 1 and not body[-1]:  # a blank line at the end is no more to see
            body = body[:-1]
        # The highlighted row and the caret (in a note below it, or a filter
        # above it), and a refusal beside them: all, where they fit.
        row = (caret[0] if caret is not None else self.focus) - self.head
        ends = (min(self.focus - self.head, row), last - self.head)
        start, size, above, below, moved = _window(len(body), max(ends), room, view, min(ends))
        if 2 <= room < 4 and start > 0:  # too short for both marks: the one that says what is asked stays
            start, size, _, _, moved = _window(len(body), max(ends), room - 1, view, min(ends))
            above, below = start > 0, False
            size += 0 if above else 1
            self.page = max(1, room - 2)
        shown = tabs + ([self.more[0]] if above else []) + body[start: start + size] + ([self.more[1]] if below else [])
        if caret is not None:
            row = caret[0] - self.head - start
            caret = (row + len(tabs) + above, caret[1]) if 0 <= row < size else None
        return shown + foot, caret, moved


def _folded_line(line: int, start: int, end: int, size: int) -> int:
    """Where line ``line`` is once lines [start, end) are drawn in ``size``:
    below them, moved with them; among them, their new last."""
    if line >= end:
        return line + size - (end - start)
    return min(line, start + size - 1) if line >= start else line


def _window(length: int, focus: int, room: int, view: int, anchor: int) -> "Tuple[int, int, bool, bool, int]":
    """Which of ``length`` lines a view of ``room`` lines shows: from the
    top while the focus fits with a line to spare, else the focus and up to
    two lines below it, and ``anchor`` (where the focus's row starts) when
    both fit; moved by ``view``.  A view of four lines or more gives a line
    at each cut end to a mark.  (start, size, marked above, marked below,
    the view kept)."""
    if length <= room:
        return 0, length, False, False, 0
    inner = room - 2 if room >= 4 else room
    lead = 1 if inner < room else 0  # from the top, only the mark below is needed
    follow = 0 if focus + 1 + lead < room else max(0, min(focus + 1 + min(2, inner - 1) - inner, length - inner))
    if follow > anchor:  # the row's first lines too, as many as fit above the focus
        follow = max(anchor, focus - inner + 1)
    top = max(0, min(length - inner, follow + view))
    if inner == room:
        return top, room, False, False, top - follow
    if top == 0:
        return 0, room - 1, False, True, top - follow
    if top >= length - inner:
        return length - room + 1, room - 1, True, False, top - follow
    return top, inner, True, True, top - follow


# What a short screen says of the countdown, in fewer words as it narrows.
_COUNTDOWN_WORDS = ("Time runs out in {} s: press any key to wait longer.", "{} s left: press any key to wait longer.",
                    "{} s left: press a key.", "{} s left.")

# How much a hint is needed, by the words it ends with: a short screen keeps
# the most needed that fit (how to skip, how to dismiss and, on the review,
# how to submit come first, on a line more where they need one).
_HINT_NEED = (("skip", 0), ("dismiss", 1), ("pick", 2), ("confirm", 2), ("toggle", 2), ("done", 2), ("answer", 2),
              ("decide", 3), ("discuss", 3), ("note", 4), ("submit", 1), ("first", 3), ("next", 5), ("question", 5),
              ("back", 5), ("filter", 6), ("rows", 6), ("move", 7), ("scroll", 7))


def _fewer_words(problem: str) -> "List[str]":
    """A refusal in fewer words, for a short screen, each form shorter:
    its first clause, then its gist (``Out of range.``), never a sentence
    cut in its middle."""
    clause = re.split(r"[:,;]", problem, maxsplit=1)[0].rstrip(".") + "."
    gist = next((words for start, words in _PROBLEM_GISTS if clause.startswith(start)), None)
    return [form for form in (clause, gist) if form is not None and form != problem]


# A refusal's gist, by its first words: what the narrowest screen says.
_PROBLEM_GISTS = (("That is out of range", "Out of range."), ("That is between the steps", "Between steps."),
                  ("That is not a number", "Not a number."), ("That could be read two ways", "Read two ways."),
                  ("That line is", "Too long."))


def _hint_need(key: str) -> int:
    return next((need for end, need in _HINT_NEED if key.endswith(end)), 8)


def _short_hint(key: str) -> str:
    """A hint in the words of a short screen: Ctrl-Y as ^Y, as terminals write it."""
    return key.replace("Ctrl-", "^").replace("let's discuss", "discuss").replace("type your answer", "type")


def _hint_lines(keys: "List[str]", width: int, dot: str) -> "List[str]":
    """Hints laid out in lines no wider than ``width``, each line starting
    with a space, broken between hints: no line starts or ends with the
    separator, and no hint is split from its word."""
    lines: List[str] = []
    for key in keys:
        if lines and _cells(lines[-1] + dot + key) <= width:
            lines[-1] += dot + key
        elif _cells(" " + key) <= width:
            lines.append(" " + key)
        else:  # a hint wider than the screen: its own lines, broken between its words
            lines.extend(_wrap(key, width, " ", "   "))
    return lines


class _Painter:
    """Draws a dialog's state as lines no wider than ``width`` cells.

    Lines are wrapped here, by the cells each character takes, with hanging
    indents, so that the terminal never wraps one itself: the screen then
    knows how many lines it drew, and can draw again in place.
    """

    def __init__(self, width: int, style: _Style) -> None:
        self.width = max(width, _MIN_WIDTH)
        self.style = style
        self.frame = _Frame()

    def paint(self, dialog: _Dialog) -> _Frame:
        title, purpose = _heading(dialog.items)
        if title is not None:
            self._wrapped(self.style.text(title), " ", " ", "bold")
        if purpose is not None:
            self._wrapped(self.style.text(purpose), " ", " ", "dim")
        self._tabs(dialog)
        self._add("")
        self.frame.head = len(self.frame.lines)
        if dialog.tab == dialog.review_tab:
            self._review(dialog)
        else:
            self._question(dialog)
        self._add("")
        foot = len(self.frame.lines)
        if dialog.countdown is not None:  # first: a short screen keeps only the foot's first line
            self._wrapped(_COUNTDOWN_WORDS[0].format(dialog.countdown), " ", " ", "yellow")
            fits = [words.format(dialog.countdown) for words in _COUNTDOWN_WORDS]
            shortest = next((words for words in fits if _cells(words) < self.width), fits[-1])
            self.frame.notice_brief = self.style.paint(" " + shortest, "yellow")
        if dialog.notice:
            self._wrapped(dialog.notice, " ", " ", "yellow")
        self.frame.notice = len(self.frame.lines) - foot
        keys = self.hint_list(dialog)
        for line in _hint_lines(keys, self.width, self.style.dot):
            self._add(line, "dim")
        self.frame.foot = len(self.frame.lines) - foot
        self.frame.briefs = [[self.style.paint(line, "dim") for line in self._brief(keys, count)] for count in (1, 2, 3)]
        up, down = ("\u2191", "\u2193") if self.style.pointer != ">" else ("^", "v")
        above = "more"
        if dialog.tab != dialog.review_tab:  # a short screen that scrolled the question away still says what is asked
            asked = " ".join(self.style.text(dialog.items[dialog.tab].question).split())
            above = self.style.clipped(asked, self.width - _cells(f" {up}  (PgUp)"))
        self.frame.more = (self.style.paint(f" {up} {above} (PgUp)", "dim"), self.style.paint(f" {down} more (PgDn)", "dim"))
        return self.frame

    def _brief(self, keys: "List[str]", count: int) -> "List[str]":
        """At most ``count`` lines of hints for a short screen, chosen, not
        cut: in their words for a short screen, the most needed that fit
        (skipping and dismissing first, then in the order of _HINT_NEED),
        drawn in their own order."""
        keys = [_short_hint(key) for key in keys]
        needed = sorted(range(len(keys)), key=lambda at: (_hint_need(keys[at]), at))
        first = [at for at in needed if _hint_need(keys[at]) == 0][:1] + [at for at in needed if _hint_need(keys[at]) == 1]
        # One way to skip, how to dismiss (and, on the review, how to submit)
        # are always there, on a line more where they need one.
        chosen = list(first)
        count = max(count, len(_hint_lines([keys[place] for place in sorted(first)], self.width, self.style.dot)))
        for at in [at for at in needed if at not in first]:
            tried = [keys[place] for place in sorted(chosen + [at])]
            if len(_hint_lines(tried, self.width, self.style.dot)) <= count:
                chosen.append(at)
        lines = _hint_lines([keys[place] for place in sorted(chosen)], self.width, self.style.dot)
        return [self.style.clipped(line, self.width) for line in lines] or [""]

    def hints(self, dialog: _Dialog) -> str:
        """The keys that act now, in one line."""
        return self.style.dot.join(self.hint_list(dialog))

    def hint_list(self, dialog: _Dialog) -> "List[str]":
        """The keys that act now: how to skip an optional question and how
        to dismiss first, then the others."""
        if dialog.tab == dialog.review_tab:
            keys = ["Enter submit", f"{_FOLLOW_UP_KEY.upper()} {_ASK_ME_MORE.lower()}", "\u2191\u2193 scroll",
                    "Shift-Tab back", "Esc dismiss"]
        elif dialog.noting:
            keys = ["type a note on your answer", "Enter or Esc done", "Ctrl-C dismiss"]
        elif dialog.filter is not None:
            multi = dialog.items[dialog.tab].question_type is QuestionType.MULTI_CHOICE
            keys = ["type to narrow the rows", "Enter toggle" if multi else "Enter pick", "Esc end filter",
                    "Ctrl-C dismiss"]
        else:
            keys = self._question_hints(dialog)
        if self.style.pointer == ">":
            keys = [key.replace("\u2191\u2193", "Up/Down") for key in keys]
        first = [key for key in keys if _hint_need(key) < 2]
        return first + [key for key in keys if key not in first]

    def _question_hints(self, dialog: _Dialog) -> "List[str]":
        item = dialog.items[dialog.tab]
        skip = not item.required and not dialog.has_answer(dialog.tab)
        if dialog.editing():
            keys = ["type your answer", "Enter skip" if skip and _blank(dialog.line()[0]) else "Enter confirm",
                    "Tab skip" if skip else "Tab next question"]
        elif item.question_type is QuestionType.MULTI_CHOICE:
            keys = ["\u2191\u2193 move", "Space toggle", "Enter skip" if skip else "Enter confirm",
                    "Tab skip" if skip else "Tab next"]
        else:
            keys = ["\u2191\u2193 move", "Enter pick", "Tab skip" if skip else "Tab next"]
        if len(item.options or ()) > 9 and not dialog.editing():
            keys.append("/ filter")
        keys += [f"{key.title()} {_STATES[state].label.lower()}" for key, state in _STATE_KEYS.items()]
        return keys + ["Ctrl-N note", "Esc dismiss"]

    def _add(self, text: str, *looks: str) -> None:
        self.frame.lines.append(self.style.paint(text, *looks))

    def _wrapped(self, text: str, first: str, rest: str, *looks: str) -> None:
        for line in _wrap(text, self.width, first, rest):
            self._add(line, *looks)

    def _tabs(self, dialog: _Dialog) -> None:
        names = [self.style.text(item.header or f"Q{number}") for number, item in enumerate(dialog.items, 1)]
        if dialog.review_tab >= 0:
            names.append("Submit")
        line, used = "", 0
        for index, name in enumerate(names):
            name = self.style.clipped(name, self.width - 4)
            cell = f"{self._mark(dialog, index)} {name}"
            if index != dialog.tab:
                cell = f" {cell} "
            else:  # reverse video where it can be drawn, brackets where not
                cell = self.style.paint(f" {cell} ", "reverse", "bold") if self.style.color else f"[{cell}]"
            size = _cells(name) + 4
            if used and used + size > self.width:
                self.frame.lines.append(line)
                line, used = "", 0
            if index == dialog.tab:
                self.frame.tab_line = len(self.frame.lines)
            line, used = line + cell, used + size
        self.frame.lines.append(line)

    def _mark(self, dialog: _Dialog, index: int) -> str:
        """A tab's mark: exactly what a dismissal would keep of its question."""
        if index >= len(dialog.items):
            return " "
        if dialog.has_answer(index):
            return self.style.done
        return self.style.skipped if dialog.answer(index) is not None else " "

    def _question(self, dialog: _Dialog) -> None:
        item = dialog.items[dialog.tab]
        self._wrapped(self.style.text(item.question), " ", " ", "bold")
        if item.purpose:
            self._wrapped(self.style.text(item.purpose), " ", " ", "dim")
        if not item.required:
            self._add(" (optional)", "dim")
        if item.question_type is QuestionType.NUMBER:
            self._wrapped(self.style.encoded(_number_words(item)), " ", " ", "dim")
        self._add("")
        if not item.question_type.is_choice:
            self.frame.focus = len(self.frame.lines)
            self._line_editor(dialog, " > ", item.placeholder, not dialog.noting, item.secret)
        else:
            if dialog.filter is not None:
                self._line_editor(dialog, " Filter: ", None, not dialog.noting)
            rows = dialog.rows(dialog.tab)
            for number in dialog.shown_rows():
                self._row(dialog, number, rows[number])
            if not dialog.shown_rows():
                self._wrapped("No row holds that text.", " ", " ", "dim")
        self._state_and_problem(dialog)
        if dialog.noting:
            self._add("")
            self._line_editor(dialog, " Note: ", None, True)
        elif dialog.entry.note.strip():
            self._wrapped("Note: " + self.style.text(dialog.entry.note.strip()), " ", "       ", "dim")

    def _state_and_problem(self, dialog: _Dialog) -> None:
        """Under the entry: the state given instead of an answer, and why
        the text last confirmed was refused."""
        entry = dialog.entry
        if entry.state is not None:
            key = next(key.title() for key, state in _STATE_KEYS.items() if state == entry.state)
            self._wrapped(f"{self.style.done} {_STATES[entry.state].label} ({key} again takes it back)", " ", "   ", "green")
        if entry.problem:
            start = len(self.frame.lines)
            self._wrapped(self.style.encoded(entry.problem), " ", " ", "yellow")
            self.frame.problem_end = len(self.frame.lines)
            forms = [[self.style.paint(line, "yellow") for line in _wrap(self.style.encoded(words), self.width, " ", " ")]
                     for words in _fewer_words(entry.problem)]
            self.frame.fold(start, forms)

    def _row(self, dialog: _Dialog, number: int, row: _Row) -> None:
        item, entry, style = dialog.items[dialog.tab], dialog.entry, self.style
        multi = item.question_type is QuestionType.MULTI_CHOICE
        here = entry.row == number
        if row.takes_text:
            on = not _blank(entry.text) and (multi or entry.custom) and entry.state is None
        else:
            on = row.label in entry.picked and not entry.custom
        if multi:
            box = style.checked if on else style.unchecked
        else:
            box = style.chosen if on else style.unchosen
        places = len(str(len(dialog.rows(dialog.tab))))  # numbers right-aligned: labels start in one column
        lead = f" {style.pointer if here else ' '} {box} {number + 1:>{places}}. "
        if here:
            self.frame.focus = len(self.frame.lines)
        words = dialog.row_words(row)
        if row.takes_text and (here or entry.text):
            self._line_editor(dialog, f"{lead}{words}: ", None, here and dialog.editing() and not dialog.noting, item.secret)
            return
        badge = f" {RECOMMENDED_SUFFIX}" if _is_recommended(item, row) else ""
        hang = " " * _cells(lead)
        self._wrapped(self.style.text(words) + badge, lead, hang, *(("bold", "cyan") if here else ()))
        option = row.option
        if option is not None and option.description:
            self._wrapped(self.style.text(option.description), hang, hang, "dim")
        if here and option is not None and option.preview:  # beside the highlight, in view with it
            for line in option.preview.splitlines()[:_PREVIEW_LINES]:
                self._add(self.style.clipped(hang + self.style.bar + self.style.text(line), self.width), "cyan")

    def _line_editor(
        self, dialog: _Dialog, lead: str, placeholder: "Optional[str]", active: bool, masked: bool = False,
    ) -> None:
        """One line of typed text after ``lead``, scrolled sideways to keep the
        caret in view; on a narrow terminal the lead takes lines of its own.
        A ``masked`` line (a secret's answer) shows a dot for each character."""
        line, at = dialog.line() if active else (dialog.entry.text, dialog.entry.caret)
        if _cells(lead) + 8 > self.width:
            start, indent = len(self.frame.lines), lead[: len(lead) - len(lead.lstrip())]
            self._wrapped(lead.strip(), indent, "   ")
            self.frame.fold(start, [[self.style.clipped(indent + lead.strip(), self.width)]])  # its start, on a short screen
            lead = "   "
        if masked:
            text, caret = self.style.secret * len(line), at
        else:
            text = self.style.text(line.replace("\n", self.style.newline))
            caret = _cells(self.style.text(line[:at].replace("\n", self.style.newline)))
        room = self.width - _cells(lead) - 1
        start = max(0, caret - room + 1)
        if not text and placeholder:
            self._add(self.style.clipped(lead + self.style.text(placeholder), self.width), "dim")
        else:
            shown = _cut_cells(text, start, room)
            if dialog.entry.selected and not (active and dialog.noting):  # not yet taken: drawn selected
                self.frame.lines.append(lead + self.style.paint(shown, "reverse"))
            else:
                self._add(lead + shown, *(("bold",) if active else ()))
        if active:
            self.frame.caret = (len(self.frame.lines) - 1, _cells(lead) + caret - start)

    def _review(self, dialog: _Dialog) -> None:
        self.frame.focus = len(self.frame.lines)
        self._add(" Review your answers", "bold")
        self._add("")
        for index, item in enumerate(dialog.items):
            name = self.style.text(item.header or item.question)
            answer = dialog.answer(index)
            note = self.style.encoded(f"; note: {_said(answer.note)}") if answer is not None and answer.note else ""
            if dialog.has_answer(index):
                shown = dialog.shown(index, answer)
                self._wrapped(self.style.encoded(f"{name}: {shown}"), f" {self.style.done} ", "   ", "green")
            elif item.required:
                self._wrapped(f"{name}: needs an answer{note}", f" {self.style.missing} ", "   ", "yellow")
            else:
                self._wrapped(f"{name}: skipped{note}", "   ", "   ", "dim")


# The dialog on a terminal: raw keys in, the frame drawn in place.  The
# terminal's mode changes only inside _RawTerminal, which puts every setting
# back on the way out, whatever the way: a submit, a dismissal, a timeout,
# an exception, or SIGTERM (restore, then end as the signal would).

# A lone Esc, told apart from the start of a sequence or an Alt key: over a
# network the bytes of one key can come a good while apart.
_ESCAPE_WAIT = 0.15
# How long a resized terminal is given to say where its cursor went.
_POSITION_WAIT = 0.5
_PASTE_START, _PASTE_END = "\x1b[200~", "\x1b[201~"
_CONTROL_KEYS = {
    "\r": "enter", "\n": "enter", "\t": "tab", "\x7f": "backspace", "\x08": "backspace",
    "\x03": "ctrl-c", "\x04": "ctrl-d", "\x15": "ctrl-u", "\x01": "home", "\x05": "end", "\x0e": "ctrl-n",
    "\x17": "ctrl-w", "\x0b": "ctrl-k", "\x1a": "ctrl-z", "\x19": "ctrl-y", "\x14": "ctrl-t",
}
# Alt (Meta) with a key comes as Esc then the key; these act, the rest are ignored.
_ALT_KEYS = {"\x7f": "alt-backspace", "\x08": "alt-backspace", "b": "alt-b", "f": "alt-f"}
# The final character of an escape sequence (CSI or SS3), and CSI "n~" codes.
_SEQUENCE_KEYS = {"A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end", "Z": "shift-tab"}
_TILDE_KEYS = {"1": "home", "7": "home", "4": "end", "8": "end", "3": "delete", "5": "pgup", "6": "pgdn"}


class _Terminated(Exception):
    """SIGTERM arrived while the dialog had the terminal."""


def _dialog_possible(reader: Any, writer: Any) -> bool:
    """Raw keys from a terminal, drawn on a terminal that can move its cursor."""
    if os.name != "posix" or os.environ.get("TERM", "") in ("", "dumb") or _fileno(reader) is None:
        return False
    try:
        import termios  # noqa: F401  (absent on some platforms)
    except ImportError:
        return False
    return _is_terminal(reader) and _is_terminal(writer)


def _run_dialog(
    items: "List[QuestionItem]", reader: Any, writer: Any, timeout: "Optional[float]", cancel: Any = None,
) -> "Tuple[Outcome, List[AnswerItem]]":
    """Run the dialog on a terminal; the outcome and the answers."""
    import signal

    dialog = _Dialog(items)
    fd = _fileno(reader)
    assert fd is not None
    try:
        terminal = _RawTerminal(fd, writer)
        with terminal:
            _Screen(writer).run(dialog, _KeyReader(fd), timeout, cancel, terminal)
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    return dialog.outcome()


class _RawTerminal:
    """Raw keys and bracketed paste while entered, SIGTERM turned into
    _Terminated; on the way out, the terminal exactly as it was.

    It stops like any job: Ctrl-Z (a key in raw mode) or a SIGTSTP from
    outside asks for a stop (``stop_wanted``), which suspend() carries out
    with the terminal restored, taking raw mode back on SIGCONT; a SIGCONT
    after a stop it could not see (SIGSTOP) sets ``continued``."""

    def __init__(self, fd: int, writer: Any) -> None:
        self.fd = fd
        self.writer = writer
        self.saved: Any = None
        self.handlers: Dict[int, Any] = {}
        self.stop_wanted = False
        self.continued = False

    def __enter__(self) -> None:
        import signal
        import termios

        self.saved = termios.tcgetattr(self.fd)
        try:
            for signum, handler in ((signal.SIGTERM, _on_sigterm), (signal.SIGTSTP, self._on_stop),
                                    (signal.SIGCONT, self._on_continue)):
                self.handlers[signum] = signal.signal(signum, handler)
        except ValueError:  # not the main thread: signals stay as they are
            pass
        self.resume()

    def __exit__(self, *exc: object) -> None:
        import signal

        try:
            self.pause()
        finally:
            for signum, handler in self.handlers.items():
                signal.signal(signum, handler)

    def resume(self) -> None:
        """Raw keys and bracketed paste, from the mode saved on entry."""
        import termios

        raw = list(self.saved)
        raw[0] &= ~(termios.ICRNL | termios.IXON)  # iflag: Enter as \r, Ctrl-S/Q as keys
        raw[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)  # lflag
        raw[6] = list(raw[6])
        raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self.fd, termios.TCSADRAIN, raw)
        self.writer.write("\x1b[?2004h")
        self.writer.flush()

    def pause(self) -> None:
        """The terminal as it was on entry."""
        import termios

        try:
            self.writer.write("\x1b[?2004l\x1b[?25h")
            self.writer.flush()
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def suspend(self) -> None:
        """Stop as the terminal's Ctrl-Z would stop the job, the terminal
        restored meanwhile; raw mode again once continued."""
        import signal

        self.pause()
        stop = signal.SIGTSTP
        if stop in self.handlers:
            signal.signal(stop, signal.SIG_DFL)
        try:
            try:  # the job, as the terminal's own Ctrl-Z would stop it
                os.killpg(os.tcgetpgrp(self.fd), stop)
            except OSError:  # not this process's controlling terminal: only this process
                os.kill(os.getpid(), stop)
        finally:
            if stop in self.handlers:
                signal.signal(stop, self._on_stop)
            self.stop_wanted = self.continued = False
            self.resume()

    def _on_stop(self, signum: int, frame: Any) -> None:
        self.stop_wanted = True

    def _on_continue(self, signum: int, frame: Any) -> None:
        self.continued = True


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


class _KeyReader:
    """Keys from a terminal in raw mode, decoded from UTF-8 and escape sequences."""

    def __init__(self, fd: int) -> None:
        import codecs

        self.fd = fd
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.pending = ""

    def read(self, wait: float) -> "List[_Key]":
        """The keys that arrive within ``wait`` seconds (none, on a quiet terminal)."""
        if not self._fill(wait):
            return []
        keys, self.pending = _parse_keys(self.pending, final=False)
        while self.pending and self._fill(_ESCAPE_WAIT):  # the rest of a sequence
            more, self.pending = _parse_keys(self.pending, final=False)
            keys += more
        if self.pending:  # nothing more came: a lone Esc, or a cut-off sequence
            more, self.pending = _parse_keys(self.pending, final=True)
            keys += more
        return keys

    def _fill(self, wait: float) -> bool:
        import select

        ready, _, _ = select.select([self.fd], [], [], max(wait, 0))
        if not ready:
            return False
        data = os.read(self.fd, 4096)
        self.pending += self.decoder.decode(data) if data else "\x04"  # none: the terminal went away, as Ctrl-D
        return True


def _parse_keys(text: str, final: bool) -> "Tuple[List[_Key], str]":
    """The keys in ``text``, and what is left of an incomplete sequence at
    its end (kept for more bytes unless ``final``)."""
    keys: List[_Key] = []
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\x1b":
            key, size = _escape_key(text, at, final)
            if key is None:
                break  # wait for the rest
            keys.append(key)
            at += size
        elif char in _CONTROL_KEYS:
            keys.append((_CONTROL_KEYS[char], ""))
            at += 2 if text.startswith("\r\n", at) else 1
        elif char < " ":
            at += 1  # other control characters mean nothing here
        else:  # typed text, a key a character (pasted text comes whole, above)
            keys.append(("text", char))
            at += 1
    return keys, text[at:]


def _escape_key(text: str, at: int, final: bool) -> "Tuple[Optional[_Key], int]":
    """The key of the escape sequence at ``at`` and its length; (None, 0)
    while it may still be incomplete."""
    if text.startswith(_PASTE_START, at):
        end = text.find(_PASTE_END, at)
        if end < 0:
            return (None, 0) if not final else (("paste", text[at + len(_PASTE_START):]), len(text) - at)
        return ("paste", text[at + len(_PASTE_START): end]), end + len(_PASTE_END) - at
    rest = text[at + 1: at + 2]
    if rest in ("[", "O"):
        end = at + 2
        while end < len(text) and (text[end].isdigit() or text[end] == ";"):
            end += 1
        if end >= len(text):
            return ((("esc", ""), 1) if final else (None, 0))
        last, params = text[end], text[at + 2: end]
        if last == "R" and ";" in params:  # the terminal's answer to where its cursor is
            return ("position", params), end + 1 - at
        name = _TILDE_KEYS.get(params.split(";")[0]) if last == "~" else _SEQUENCE_KEYS.get(last)
        return (name or "unknown", ""), end + 1 - at
    if not rest and not final:
        return None, 0
    if rest and rest != "\x1b":  # Alt with a key: never a dismissal
        return (_ALT_KEYS.get(rest, "alt"), ""), 2
    return ("esc", ""), 1


class _Screen:
    """Draws frames in place, each over the last, in the normal screen.

    Each line is written over the old one and cleared to its end, and only
    what lies below the new frame is cleared: a terminal that scrolls a
    cleared screen into its history (tmux does) would otherwise keep a copy
    of the dialog for every key pressed.
    """

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.above = 0  # lines between the top of the last frame and the cursor
        self.lines = 0  # how many lines the last frame has
        self.widths: List[int] = []  # the cells each of its lines takes
        self.column = 0  # the cursor's column once the last frame was drawn
        self.asked: Optional[float] = None  # when the terminal was asked where its cursor went, after a resize
        self.size = self._size()
        encoding = str(getattr(writer, "encoding", None) or "ascii")
        color = "NO_COLOR" not in os.environ and os.environ.get("TERM", "") not in ("", "dumb")
        self.style = _Style(color, encoding.lower().replace("-", "") in ("utf8", "utf16", "utf32"), encoding)

    def _size(self) -> "Tuple[int, int]":
        try:
            size = os.get_terminal_size(self.writer.fileno())
        except (AttributeError, ValueError, OSError):
            return 80, 24
        # A terminal that does not know its size (a fresh pty) says 0.
        return size.columns or 80, size.lines or 24

    def resized(self) -> bool:
        """Whether the terminal changed size.  The last frame is drawn over
        where it still stands as drawn: when each of its lines fits the new
        width, no terminal rewrapped it.  Otherwise the terminal is asked
        where its cursor went (placed() takes the answer), and the next
        frame waits for it."""
        size = self._size()
        if size == self.size:
            return False
        self.size = size
        if self.asked is None and any(width >= size[0] for width in self.widths):
            self.asked = time.monotonic()
            self.writer.write("\x1b[6n")
            self.writer.flush()
        return True

    def placed(self, report: str) -> None:
        """Where the cursor went once the terminal took the new width, as
        it reports it: a column that only rewrapping explains says the old
        lines were rewrapped (each line over as many rows as it now needs),
        one that only cutting explains says they were cut in place; either
        way the old frame is found and drawn over.  A column both explain,
        or no answer in time, leaves the old lines where they are."""
        if self.asked is None:
            return
        self.asked = None
        columns = self.size[0]
        reported = report.split(";")[-1]
        column = int(reported) - 1 if reported.isdigit() else -1
        cut_in_place, rewrapped = min(self.column, columns - 1), self.column % columns
        if self.column < columns or cut_in_place == rewrapped or column not in (cut_in_place, rewrapped):
            self._leave_old_lines()
        elif column == rewrapped:  # the frame's top is as many rows up as its lines above now take
            rows = [max(1, -(-width // columns)) for width in self.widths]
            self.above = sum(rows[: self.above]) + self.column // columns
        self.widths = []  # no longer what stands: the next resize finds the new frame

    def _leave_old_lines(self) -> None:
        """Leave the old frame, wherever the terminal put it, and start the
        next frame below it: what is above is not the dialog's to clear."""
        columns = self.size[0]
        below = sum(max(1, -(-width // columns)) for width in self.widths[self.above:]) - 1
        self.writer.write(f"\r\x1b[{below}B\r\n" if below > 0 else "\r\n")
        self.above = self.lines = 0
        self.widths = []

    def _settle(self) -> None:
        """A question about the cursor that got no answer in time: the old lines stay."""
        if self.asked is not None and time.monotonic() - self.asked >= _POSITION_WAIT:
            self.asked = None
            self._leave_old_lines()

    def run(
        self, dialog: _Dialog, keys: "_KeyReader", timeout: "Optional[float]", cancel: Any = None,
        terminal: "Optional[_RawTerminal]" = None,
    ) -> None:
        """Draw the dialog and feed it keys until it ends; then leave its summary."""
        try:
            self.draw(dialog)
            deadline = None if timeout is None else time.monotonic() + timeout
            while dialog.status is None:
                if cancel is not None and cancel.is_set():
                    raise _Cancelled
                wait = _POLL_SECONDS if deadline is None else min(_POLL_SECONDS, deadline - time.monotonic())
                if wait <= 0:
                    dialog.status = Outcome.TIMED_OUT
                    break
                if deadline is not None:
                    self._count_down(dialog, deadline - time.monotonic())
                pressed = self._reports_taken(keys.read(wait), dialog)
                dialog.feed(key for key in pressed if key[0] != "ctrl-z")
                if ("ctrl-z", "") in pressed and terminal is not None:
                    terminal.stop_wanted = True
                if terminal is not None and (terminal.stop_wanted or terminal.continued):
                    self._stopped(terminal)
                elif not pressed:
                    if self.resized() or self.asked is not None:
                        self._settle()
                        self.draw(dialog)
                    continue
                deadline = None if timeout is None else time.monotonic() + timeout
                dialog.countdown = None
                self._settle()
                self.draw(dialog)
        except BaseException:  # SIGTERM, a bug: no frame is left behind for the shell to write over
            self.erase()
            raise
        self.finish(dialog)

    def _reports_taken(self, pressed: "List[_Key]", dialog: _Dialog) -> "List[_Key]":
        """The keys pressed, once the terminal's reports of its cursor among
        them are taken (the frame then drawn where the old one stood)."""
        for report in [text for name, text in pressed if name == "position"]:
            self.placed(report)
            self.draw(dialog)
        return [key for key in pressed if key[0] != "position"]

    def _count_down(self, dialog: _Dialog, left: float) -> None:
        """In the timeout's last minute, the seconds left, drawn as they change."""
        seconds = math.ceil(left) if left <= _COUNTDOWN_SECONDS else None
        if seconds != dialog.countdown:
            dialog.countdown = seconds
            self.draw(dialog)

    def _stopped(self, terminal: "_RawTerminal") -> None:
        """Stop as a job (the frame taken off first), or come back from a
        stop: either way, the next frame starts afresh where the cursor is,
        below what the shell wrote meanwhile, at the terminal's size now."""
        if terminal.stop_wanted:
            self.erase()
            terminal.suspend()
        else:
            terminal.continued = False
            terminal.resume()
        self.above = self.lines = 0
        self.asked, self.widths = None, []
        self.size = self._size()

    def draw(self, dialog: _Dialog) -> None:
        if self.asked is not None:  # where the old frame went is not known yet
            return
        width, height = self.size
        frame = _Painter(width - 1, self.style).paint(dialog)
        lines, caret, dialog.view = frame.cut(max(height - 1, 1), dialog.view)
        dialog.page = frame.page
        out = [self._back_to_top(), "\x1b[K\r\n".join(lines), "\x1b[K\x1b[J"]
        self.lines = len(lines)
        self.widths = [_cells(_SGR_CODE.sub("", line)) for line in lines]
        if caret is None:
            out.append("\x1b[?25l")
            self.above, self.column = len(lines) - 1, self.widths[-1] if self.widths else 0
        else:  # the cursor shows where typing goes
            row, column = caret
            self.column = column
            up = len(lines) - 1 - row
            out.append(f"\x1b[{up}A" if up else "")
            out.append(f"\r\x1b[{column}C" if column else "\r")
            out.append("\x1b[?25h")
            self.above = row
        self.writer.write("".join(out))
        self.writer.flush()

    def finish(self, dialog: _Dialog) -> None:
        """Replace the dialog by a short summary that stays in the scrollback."""
        self._unasked()
        summary = dialog.summary(self.size[0] - 1, self.style.encoded)
        self.writer.write(self._back_to_top() + "\x1b[K\r\n".join(summary) + "\x1b[K\x1b[J\r\n")
        self.writer.flush()
        self.above = 0

    def erase(self) -> None:
        """Take the dialog off the screen: its top line cleared, then all
        below it, never the whole screen at once from its corner (which tmux
        copies into its history)."""
        self._unasked()
        below = "\x1b[B\r\x1b[J\x1b[A" if self.lines > 1 else ""
        self.writer.write(self._back_to_top() + "\x1b[K" + below)
        self.writer.flush()
        self.above = 0

    def _unasked(self) -> None:
        """Ending while a question about the cursor waits: the old lines stay."""
        if self.asked is not None:
            self.asked = None
            self._leave_old_lines()

    def _back_to_top(self) -> str:
        return "\r" + (f"\x1b[{self.above}A" if self.above else "")


# ===========================================================================
# The HTTP core
#
# The rules every request meets (Host, path, method, body size), and
# connections served independently, threaded and bounded, with read
# timeouts and drained bodies, for any set of handlers (_HttpHandlers)
# plugged into it: the web page's, and any other server's.

_HTTP_READ_SECONDS = 1.0  # a socket that sends nothing this long is let go
_HTTP_REQUEST_SECONDS = 10.0  # a request not in whole this long after it began is cut, however it trickles
_HTTP_IDLE_LOOK_SECONDS = 0.05  # a kept-alive connection between requests looks this often whether its thread is wanted
# Connections served at once: a further one waits, unread, in the listen
# backlog.  A call waiting on a person leaves its thread, so a thread is
# needed only while a request is read and answered; each thread a burst
# runs at once leaves the process memory (its stack, the allocator's
# pools) that it keeps after the burst.
_HTTP_THREADS = 32
_HTTP_BACKLOG = 1024  # connects queued before they are accepted, unless the system allows more
_HTTP_IDLE_THREADS = 8  # threads kept waiting for the next connection once a burst has passed
_HTTP_DRAIN_BYTES = 4 * MAX_PAYLOAD_BYTES  # read and dropped after a 413, so that it arrives
# A body larger than MAX_PAYLOAD_BYTES (files a person attached) is given this
# many bytes a second beyond the request's own deadline: a phone on a weak
# network sends a photo slowly, and is still never left to trickle for ever.
_HTTP_UPLOAD_RATE = 64 * 1024
_MULTIPART_PARTS = 512  # the fields and files one multipart body may have: a form has far fewer
# Every response carries these, unless it sets one of them itself: nothing is
# cached, sniffed, framed or told where the person came from.
_HTTP_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
}
_HTML = "text/html; charset=utf-8"
_URLENCODED = "application/x-www-form-urlencoded"
_NO_FILES: "Dict[str, List[Tuple[str, bytes]]]" = {}  # the files of every request that has none: never changed
_MULTIPART = "multipart/form-data"
# A part's name and file name in its Content-Disposition, quoted or not.
_PART_PARAMETER = re.compile(r';\s*(name|filename)=(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))', re.IGNORECASE)


def _multipart_form(
    body: bytes, content_type: str,
) -> "Tuple[Dict[str, List[str]], Dict[str, List[Tuple[str, bytes]]], bool]":
    """A multipart/form-data body: its text fields, its files by field,
    and whether it was cut off (no closing boundary: the parts that came
    whole are kept, the last one is not)."""
    form: Dict[str, List[str]] = {}
    files: Dict[str, List[Tuple[str, bytes]]] = {}
    found = re.search(r'boundary="?([^";,]+)"?', content_type, re.IGNORECASE)
    if found is None:
        return form, files, True
    delimiter = b"\r\n--" + found.group(1).strip().encode("latin-1", "replace")
    start = body.find(delimiter[2:])
    at = start + len(delimiter) - 2
    for _ in range(_MULTIPART_PARTS if start >= 0 else 0):
        if body.startswith(b"--", at):
            return form, files, False
        end = body.find(delimiter, at)
        head_end = body.find(b"\r\n\r\n", at, end)
        if not body.startswith(b"\r\n", at) or end < 0 or head_end < 0:
            break
        _add_part(form, files, body[at + 2:head_end].decode("utf-8", "replace"), body[head_end + 4:end])
        at = end + len(delimiter)
    return form, files, True


def _add_part(form: "Dict[str, List[str]]", files: "Dict[str, List[Tuple[str, bytes]]]", head: str, data: bytes) -> None:
    """One part of a multipart form: a file (a file input left empty sends
    a part with no name and no bytes, which is no file), or a text field."""
    disposition = next((line for line in head.split("\r\n") if line.lower().startswith("content-disposition:")), "")
    found = {key.lower(): quoted if quoted or not bare else bare
             for key, quoted, bare in _PART_PARAMETER.findall(disposition)}
    name = found.get("name", "")
    if "filename" in found:
        if found["filename"] or data:
            files.setdefault(name, []).append((found["filename"], data))
    else:
        form.setdefault(name, []).append(data.decode("utf-8", "replace"))


class _HttpRequest:
    """A request that passed the core's rules, its body read whole.  A form
    is read into ``form`` (its text fields) and, when it is multipart,
    ``files`` (each field's files, as (name, bytes)); ``cut_off`` says that
    a multipart body ended before its closing boundary."""

    __slots__ = ("body", "cut_off", "files", "form", "headers", "method", "path", "query")

    def __init__(self, method: str, path: str, query: str, headers: Any, body: bytes) -> None:
        from urllib.parse import parse_qs

        self.method, self.path, self.headers, self.body = method, path, headers, body
        self.query = parse_qs(query)
        self.files: Dict[str, List[Tuple[str, bytes]]] = _NO_FILES
        self.cut_off = False
        kind = self.header("Content-Type").split(";")[0].strip().lower()
        self.form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True) if kind == _URLENCODED else {}
        if kind == _MULTIPART:
            self.form, self.files, self.cut_off = _multipart_form(body, self.header("Content-Type"))

    def page_token(self) -> str:
        """The token a request shows: in the query, a form field or a Bearer header."""
        bearer = self.header("Authorization").partition("Bearer ")[2].strip()
        return (self.query.get("token") or self.form.get("token") or [bearer])[0]

    def header(self, name: str) -> str:
        return (_header_values(self.headers, name)[:1] or [""])[0]


class _HttpResponse:
    """What a handler returns: a status, headers and a body.  The body is
    bytes, written whole with its length; a body streamed as it comes is an
    _HttpStream."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: "Dict[str, str]", body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    @classmethod
    def text(cls, status: int, text: str) -> "_HttpResponse":
        return cls(status, {"Content-Type": "text/plain; charset=utf-8"}, text.encode("utf-8"))

    @classmethod
    def json(cls, status: int, document: Any, text: "Optional[str]" = None) -> "_HttpResponse":
        """A JSON document, or the ``text`` it was already serialized to."""
        return cls(status, {"Content-Type": "application/json"}, (text or json.dumps(document)).encode("ascii"))

    @classmethod
    def html(cls, status: int, page: str) -> "_HttpResponse":
        return cls(status, {"Content-Type": _HTML}, page.encode("utf-8", "surrogatepass"))

    def as_json(self) -> "_HttpResponse":
        """A plain-text refusal in JSON, for a client of the JSON interface."""
        if self.headers.get("Content-Type", "").startswith("text/plain"):
            self.headers["Content-Type"] = "application/json"
            self.body = json.dumps({"error": self.body.decode("utf-8", "replace")}).encode("ascii")
        return self

    def closing(self) -> "_HttpResponse":
        """The response, as the last on its connection: what the client still
        sends of its body is drained, not read as a request."""
        self.headers["Connection"] = "close"
        return self

    def write_body(self, connection: Any) -> None:
        body = b"" if connection.command == "HEAD" else self.body
        connection.send_header("Content-Length", str(len(body)))
        connection.end_headers()
        connection.wfile.write(body)


class _StreamSource:
    """What an event stream writes, as it comes: the server's stream thread
    takes what is ready whenever ``wake`` is called, and ticks a source when
    the source said it would next have something to do (sooner once
    ``hurry`` is called), so that no thread waits on any one stream and a
    stream that only waits costs nothing until then."""

    __slots__ = ("parked",)

    def __init__(self) -> None:
        self.parked: Optional[_ParkedStream] = None  # set when the stream is served

    def wake(self) -> None:
        """Something is ready to be written."""
        if self.parked is not None:
            self.parked.pump.wake(self.parked)

    def hurry(self) -> None:
        """Something changed: tick the source now, not when it last said."""
        if self.parked is not None:
            self.parked.pump.tick_at(self.parked, time.monotonic())

    def take(self) -> "Tuple[bytes, bool]":
        """What is ready to be written, and whether the stream ends after it."""
        raise NotImplementedError

    def tick(self) -> float:
        """Time passed: what the source does unasked (a keep-alive, a progress
        note); the seconds until it next has something to do."""
        return _POLL_SECONDS

    def left(self) -> None:
        """The stream ended, or its client went away: nothing more is taken."""


class _HttpStream(_HttpResponse):
    """A response whose body is written as it is made (an event stream): it
    has no length, so the connection ends with it.  Once its headers are
    sent, the connection leaves its thread for the server's _StreamPump."""

    __slots__ = ("source",)

    def __init__(self, status: int, headers: "Dict[str, str]", source: _StreamSource) -> None:
        super().__init__(status, {**headers, "Connection": "close"}, b"")
        self.source = source


class _ParkedStream:
    """One event stream on the pump: its socket, its source, and what is
    taken but not yet written (a slow reader's backlog, bounded)."""

    __slots__ = ("backlog", "due", "ending", "pump", "room", "socket", "source")

    def __init__(self, sock: Any, source: _StreamSource, pump: "_StreamPump") -> None:
        self.socket, self.source, self.pump = sock, source, pump
        self.backlog = b""
        self.ending = False
        self.due = math.inf  # when its source is next ticked (time.monotonic()), once that is set
        self.room = _HTTP_DRAIN_BYTES  # the backlog a reader may leave: more for a large message (files)

    def take(self, data: bytes) -> None:
        self.backlog += data
        self.room = max(self.room, len(data) + _HTTP_DRAIN_BYTES)

    def write(self) -> bool:
        """Write what the socket takes now; whether the stream goes on."""
        try:
            sent = self.socket.send(self.backlog) if self.backlog else 0
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            return False
        self.backlog = self.backlog[sent:]
        return len(self.backlog) <= self.room and not (self.ending and not self.backlog)


class _StreamPump:
    """Every event stream of one server, served by one thread: a stream
    that waits (a call waiting on a person) costs its socket and its
    source, not a thread.  Readable means the client went away (a stream's
    client sends nothing more), and a stream's source wakes the pump when it
    has something to write: only the streams woken, or whose socket takes
    more, are written to.  Each source is ticked when it said it would next
    have something to do (a heap of those times), so that ten thousand
    streams waiting on people cost nothing while they wait."""

    def __init__(self) -> None:
        import selectors
        import socket
        import threading

        self.selector = selectors.DefaultSelector()
        self.bell, self.ringer = socket.socketpair()
        for end in (self.bell, self.ringer):
            end.setblocking(False)
        self.selector.register(self.bell, selectors.EVENT_READ)
        self.streams: Dict[int, _ParkedStream] = {}
        self.woken: Dict[int, _ParkedStream] = {}  # streams with something to write, by their socket's number
        self.ticks: List[Tuple[float, int, _ParkedStream]] = []  # a heap: when, in what order, which stream
        self.ticks_made = 0  # orders the ticks due at the same time
        self.lock = threading.Lock()
        self.stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def park(self, sock: Any, stream: _HttpStream) -> None:
        import selectors

        sock.setblocking(False)
        parked = _ParkedStream(sock, stream.source, self)
        with self.lock:
            self.streams[sock.fileno()] = parked
            self.selector.register(sock, selectors.EVENT_READ)
        stream.source.parked = parked
        self.tick_at(parked, time.monotonic())
        self.wake(parked)

    def holds(self, sock: Any) -> bool:
        with self.lock:
            parked = self.streams.get(sock.fileno())
        return parked is not None and parked.socket is sock

    def wake(self, parked: "Optional[_ParkedStream]" = None) -> None:
        if parked is not None:
            with self.lock:
                self.woken[parked.socket.fileno()] = parked
        try:
            self.ringer.send(b"\0")
        except OSError:  # the bell is full (it rings anyway) or the pump has stopped
            pass

    def tick_at(self, parked: _ParkedStream, when: float) -> None:
        """Tick a stream's source at ``when``, or sooner if it is due sooner
        already; a tick that is not the stream's next any more is skipped."""
        import heapq

        with self.lock:
            if parked.due <= when:
                return
            parked.due = when
            self.ticks_made += 1
            heapq.heappush(self.ticks, (when, self.ticks_made, parked))
        if when <= time.monotonic():
            self.wake()

    def _tick_due(self) -> None:
        """Tick every source whose time has come, each once."""
        import heapq

        now = time.monotonic()
        while True:
            with self.lock:
                if not self.ticks or self.ticks[0][0] > now:
                    return
                when, _, parked = heapq.heappop(self.ticks)
                current = parked.due == when and self.streams.get(parked.socket.fileno()) is parked
                if current:
                    parked.due = math.inf
            if current:  # no finer than the poll: a source always due must not spin the pump
                self.tick_at(parked, now + max(parked.source.tick(), _POLL_SECONDS))

    def _next_tick(self) -> float:
        """How long the pump may wait for its sockets before a tick is due."""
        with self.lock:
            if self.woken:
                return 0.0
            due = self.ticks[0][0] - time.monotonic() if self.ticks else _POLL_SECONDS
        return min(max(due, 0.0), _POLL_SECONDS)

    def _run(self) -> None:
        import selectors

        while not self.stopped:
            for key, events in self.selector.select(self._next_tick()):
                if key.fileobj is self.bell:
                    self._quiet_bell()
                    continue
                if events & selectors.EVENT_READ:
                    self._client_sent(key.fd)
                if events & selectors.EVENT_WRITE and key.fd in self.streams:
                    self.woken[key.fd] = self.streams[key.fd]
            with self.lock:
                woken, self.woken = self.woken, {}
            for fd, parked in woken.items():
                if self.streams.get(fd) is parked:
                    self._pump(fd, parked)
            self._tick_due()

    def _quiet_bell(self) -> None:
        try:
            while self.bell.recv(4096):
                pass
        except OSError:
            pass

    def _client_sent(self, fd: int) -> None:
        """A stream's client sent something: its leaving, or bytes that no
        stream reads (dropped)."""
        parked = self.streams.get(fd)
        try:
            left = parked is not None and not parked.socket.recv(65536)
        except (BlockingIOError, InterruptedError):
            left = False
        except OSError:
            left = True
        if left and parked is not None:
            self._end(fd, parked)

    def _pump(self, fd: int, parked: _ParkedStream) -> None:
        import selectors

        if not parked.ending:
            data, parked.ending = parked.source.take()
            parked.take(data)
        if not parked.write():
            self._end(fd, parked)
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if parked.backlog else 0)
        if self.selector.get_key(parked.socket).events != events:
            self.selector.modify(parked.socket, events)

    def _end(self, fd: int, parked: _ParkedStream) -> None:
        import socket

        with self.lock:
            self.streams.pop(fd, None)
            self.selector.unregister(parked.socket)
        parked.source.left()
        try:
            parked.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        parked.socket.close()

    def stop(self) -> None:
        self.stopped = True
        self.wake()
        self.thread.join()
        for fd, parked in list(self.streams.items()):
            self._end(fd, parked)
        for end in (self.bell, self.ringer):
            end.close()


class _HttpHandlers:
    """A set of handlers on the core: a subclass's ``routes``, each handler
    a method taking the request, and respond(), where the set puts its own
    checks (a token, an Origin) and state in front of them."""

    routes: "ClassVar[_Registry]"  # (method, path) to the method that answers it
    json_paths: "ClassVar[FrozenSet[str]]" = frozenset()  # paths whose clients read JSON, refusals too

    def respond(self, handler: "Callable[[Any, _HttpRequest], _HttpResponse]", request: _HttpRequest) -> _HttpResponse:
        return handler(self, request)

    def body_limit(self, headers: Any) -> int:
        """The largest body the set reads, by the request's headers."""
        return MAX_PAYLOAD_BYTES

    def too_large(self, request: _HttpRequest, refusal: _HttpResponse) -> _HttpResponse:
        """The answer to a body over body_limit(), which is never read:
        ``request`` is its line and headers."""
        return refusal


class _HttpCore:
    """The rules every request meets before a set of handlers sees it, in
    this order: the Host header, the path (among every set's routes), the
    method, the body's size (before the body is read).  It knows nothing of
    sockets: ``read(size)`` gives the body."""

    def __init__(self, *handler_sets: _HttpHandlers) -> None:
        self.handler_sets = handler_sets

    def respond(self, method: str, target: str, headers: Any, read: "Callable[[int], bytes]") -> _HttpResponse:
        response = self._respond(method, target, _Headers(headers), read)
        path = target.partition("?")[0]
        if response.status >= 400 and any(path in handlers.json_paths for handlers in self.handler_sets):
            return response.as_json()
        return response

    def _respond(self, method: str, target: str, headers: Any, read: "Callable[[int], bytes]") -> _HttpResponse:
        path, _, query = target.partition("?")
        found = _host_refusal(headers) or self._route(method, path)
        if isinstance(found, _HttpResponse):
            length = _body_length(headers)
            if isinstance(length, _HttpResponse):
                return found.closing()
            read(length)  # and dropped: the connection stays in step for its next request
            return found
        handlers, handler = found
        length = _body_length(headers, handlers.body_limit(headers))
        if isinstance(length, _HttpResponse):
            return handlers.too_large(_HttpRequest(method, path, query, headers, b""), length)
        return handlers.respond(handler, _HttpRequest(method, path, query, headers, read(length)))

    def _route(self, method: str, path: str) -> "Union[_HttpResponse, Tuple[_HttpHandlers, Callable[[Any, _HttpRequest], _HttpResponse]]]":
        for handlers in self.handler_sets:
            if any(known == path for _, known in handlers.routes):
                handler = handlers.routes.get((method, path))
                return _HttpResponse.text(405, "Method not allowed.") if handler is None else (handlers, handler)
        return _HttpResponse.text(404, "Not found.")


class _Headers:
    """A request's headers, each name's values found by one lookup: the
    rules and the handlers ask for a dozen names, and the parsed message's
    own lookup reads every header each time."""

    __slots__ = ("values",)

    def __init__(self, given: Any) -> None:
        self.values: Dict[str, List[str]] = {}
        for name, value in given.items():
            self.values.setdefault(name.lower(), []).append(value)

    def get_all(self, name: str) -> "Optional[List[str]]":
        return self.values.get(name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        found = self.values.get(name.lower())
        return found[0] if found else default


def _header_values(headers: Any, name: str) -> "List[str]":
    """Every value a header is given; a plain mapping holds one at most."""
    if hasattr(headers, "get_all"):
        return list(headers.get_all(name) or [])
    value = headers.get(name)
    return [] if value is None else [value]


def _host_refusal(headers: Any) -> "Optional[_HttpResponse]":
    hosts = _header_values(headers, "Host")
    if len(hosts) > 1:
        return _HttpResponse.text(400, "Bad request: more than one Host header.")
    if not _is_local_host(hosts[0] if hosts else ""):
        return _HttpResponse.text(403, "Forbidden: this page answers only to an IP address or localhost.")
    return None


def _body_length(headers: Any, limit: int = MAX_PAYLOAD_BYTES) -> "Union[int, _HttpResponse]":
    """The body's length, or the refusal of a body that is not to be read
    (over ``limit``: MAX_PAYLOAD_BYTES, unless the handlers take files)."""
    lengths = _header_values(headers, "Content-Length")
    if not lengths and _header_values(headers, "Transfer-Encoding"):
        return _HttpResponse.text(411, "Length required: send the body with a Content-Length, not in chunks.").closing()
    if len(set(lengths)) > 1:
        return _HttpResponse.text(400, "Bad request: Content-Length is given twice, with two values.").closing()
    # Digits only: int() would also take a sign, spaces and underscores, and
    # an empty or negative length is no length at all.
    given = lengths[0].strip() if lengths else "0"
    if not (given.isascii() and given.isdigit()):
        return _HttpResponse.text(400, "Bad request: Content-Length is not a number of bytes.").closing()
    length = int(given)
    if length > limit:
        return _HttpResponse.text(413, f"Payload too large: the limit is {limit} bytes.").closing()
    return length


@functools.lru_cache(maxsize=256)  # a client names the same host on every request
def _is_local_host(host: str) -> bool:
    """Whether a Host header is exactly an IP literal or localhost, with an
    optional port of digits: a DNS name could be rebound to this machine by
    a page from elsewhere, and anything after the address is foreign."""
    import ipaddress

    if host.startswith("["):  # an IPv6 literal
        name, _, rest = host[1:].partition("]")
    elif host.count(":") > 1:  # an IPv6 literal without its brackets
        name, rest = host, ""
    else:
        name, _, port = host.partition(":")
        rest = ":" + port if _ else ""
    if rest and not (rest.startswith(":") and rest[1:].isascii() and rest[1:].isdigit()):
        return False
    if name.lower() == "localhost":
        return True
    if not name or not all(char in "0123456789abcdefABCDEF.:" for char in name):
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class _Workers:
    """The threads that serve connections, kept for the next one: a
    connection is handed to a thread that waits, else to a new one; after a
    burst a few stay, so that the next connection need not wait for a thread
    to start, and the others end."""

    def __init__(self) -> None:
        import threading

        self.ready = threading.Condition()
        self.jobs: List[Optional[Callable[[], None]]] = []  # handed to the threads that wait; None ends one
        self.idle = 0
        self.stopped = False

    def run(self, job: "Callable[[], None]") -> None:
        """Do ``job`` on a thread of its own; RuntimeError when none can be had."""
        import threading

        with self.ready:
            if self.idle:
                self.idle -= 1
                self.jobs.append(job)
                self.ready.notify()
                return
        threading.Thread(target=self._work, args=(job,), daemon=True).start()

    def _work(self, job: "Optional[Callable[[], None]]") -> None:
        while job is not None:
            job()
            with self.ready:
                if self.stopped or self.idle >= _HTTP_IDLE_THREADS:
                    return
                self.idle += 1
                while not self.jobs:
                    self.ready.wait()
                job = self.jobs.pop(0)

    def stop(self) -> None:
        """The threads that wait end, and the others once their connection has."""
        with self.ready:
            self.stopped = True
            self.jobs.extend([None] * self.idle)
            self.idle = 0
            self.ready.notify_all()


class _HttpServer:
    """A core's requests served over HTTP: each connection on a thread of
    its own, every read with a timeout and every request with a deadline,
    so that idle or slow sockets never hold up another request and a client
    too slow to send its request is cut by its deadline, never by a count.
    At most _HTTP_THREADS connections are served at once: a further one
    waits in the listen backlog (the system's own bound, where that is
    more) until one ends, and is never closed unread.  A connection whose
    request is in, and waits for its answer (a call waiting on a person, on
    its event stream), leaves its thread, so that any number of such calls
    leave room for the requests that answer them."""

    def __init__(self, core: _HttpCore, host: str, port: int) -> None:
        import threading

        # Whole before it listens: a connection may arrive as soon as it does.
        self.core = core
        self.threads = threading.BoundedSemaphore(_HTTP_THREADS)
        self.workers = _Workers()
        self.stopped = False
        self.pump: Optional[_StreamPump] = None
        self.pump_lock = threading.Lock()
        self.crowded = False  # a connection waits for a thread: none is kept alive meanwhile
        self.listener = _stdlib_listener()(self, host, port)
        self.port: int = self.listener.server_address[1]
        self.thread = threading.Thread(target=self.listener.serve_forever, args=(_POLL_SECONDS,), daemon=True)
        self.thread.start()

    def admit(self) -> bool:
        """Wait for a thread to serve one more connection; False once the
        server stops.  Meanwhile, new connections wait in the backlog."""
        if self.threads.acquire(blocking=False):
            return True
        self.crowded = True
        try:
            while not self.threads.acquire(timeout=_POLL_SECONDS):
                if self.stopped:
                    return False
        finally:
            self.crowded = False
        return True

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            if self.pump is not None:
                self.pump.stop()
            self.listener.shutdown()
            self.listener.server_close()
            self.workers.stop()

    def streams(self) -> _StreamPump:
        """The pump of this server's event streams, started with the first."""
        with self.pump_lock:
            if self.pump is None:
                self.pump = _StreamPump()
            return self.pump

    def serve(self, connection: Any) -> None:
        """One request on a connection, whatever its method.  What the client
        still sends of a body left unread is drained before the connection
        closes: closing on it would reset the connection before the client
        reads the response."""
        taken: List[int] = []

        def read(size: int) -> bytes:
            connection.allow(size)
            body = bytes(connection.rfile.read(size)) if size else b""
            taken.extend([size] if size else [])
            connection.received()
            return body

        # The target as sent: http.server folds a leading "//" into "/", and paths match exactly.
        words = connection.requestline.split()
        target = words[1] if len(words) == 3 else connection.path
        response = self.core.respond(connection.command, target, connection.headers, read)
        connection.send_response(response.status)
        for name, value in {**_HTTP_HEADERS, **response.headers}.items():
            connection.send_header(name, value)
        if "Connection" not in response.headers:  # kept alive, unless its client or a crowd says not
            kept = not (connection.close_connection or self.crowded or self.stopped)
            connection.send_header("Connection", "keep-alive" if kept else "close")
            if kept:
                connection.send_header("Keep-Alive", f"timeout={int(_HTTP_READ_SECONDS)}")
        if isinstance(response, _HttpStream):
            connection.end_headers()
            connection.wfile.flush()
            connection.close_connection = True
            self.streams().park(connection.connection, response)
            return
        response.write_body(connection)
        if response.headers.get("Connection") == "close" and not taken:
            _drain(connection.rfile)


# http.server's classes, bent to hand their work to an _HttpServer, are made
# on first use: importing http.server costs more than importing the rest of askq.

@functools.lru_cache(maxsize=None)
def _stdlib_listener() -> Any:
    """A threading server that admits connections by its _HttpServer's
    threads, reads each request under its deadline, and hands every request,
    whatever its method, to that server."""
    import socket
    from http.server import ThreadingHTTPServer

    connection = _stdlib_connection()

    class Listener(ThreadingHTTPServer):
        daemon_threads = True

        def __init__(self, owner: _HttpServer, host: str, port: int) -> None:
            self.owner = owner
            self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
            self.request_queue_size = max(_HTTP_BACKLOG, _system_backlog())
            super().__init__((host, port), connection)

        def process_request(self, request: Any, client_address: Any) -> None:
            if not self.owner.admit():
                self.shutdown_request(request)
                return
            try:
                self.owner.workers.run(functools.partial(self.process_request_thread, request, client_address))
            except RuntimeError:  # no thread to be had after all: the connection is let go
                self.owner.threads.release()
                self.shutdown_request(request)

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.owner.threads.release()

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that went away mid-request leaves no traceback

        def shutdown_request(self, request: Any) -> None:
            pump = self.owner.pump
            if pump is None or not pump.holds(request):  # an event stream's socket is the pump's now
                super().shutdown_request(request)

    return Listener


def _stdlib_connection() -> Any:
    """The handler of one connection: its requests read through a
    _stdlib_request_reader() by their deadline, every method handed to the
    server's owner."""
    import io
    from http.server import BaseHTTPRequestHandler

    request_reader = _stdlib_request_reader()

    class Connection(BaseHTTPRequestHandler):
        timeout = _HTTP_READ_SECONDS
        # Kept alive for the client's next request while threads are to
        # spare: a client that sends one after another (a host listing the
        # tools, a page's assets) need not connect again for each.
        protocol_version = "HTTP/1.1"
        # A response is not held back waiting for the client's
        # acknowledgement of what was sent before it.
        disable_nagle_algorithm = True
        server: Any  # the Listener, and through it its _HttpServer
        reader: Any  # the connection's request reader

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # the socket's own file, replaced by one that keeps the deadline
            owner = self.server.owner
            self.reader = request_reader(self.connection, lambda: owner.crowded or owner.stopped)
            self.rfile = io.BufferedReader(self.reader)
            self.served = False

        def handle_one_request(self) -> None:
            """A request, read whole by its deadline."""
            self.reader.deadline = time.monotonic() + _HTTP_REQUEST_SECONDS
            self.reader.between = self.served
            try:
                super().handle_one_request()
            finally:
                self.received()
                self.served = True

        def allow(self, size: int) -> None:
            """A body beyond the usual bound (files) is given time by its size."""
            if self.reader.deadline is not None and size > MAX_PAYLOAD_BYTES:
                self.reader.deadline += size / _HTTP_UPLOAD_RATE

        def received(self) -> None:
            """The request is in whole: what follows is no longer under its deadline."""
            if self.reader.deadline is not None:
                self.reader.deadline = None
                self.connection.settimeout(_HTTP_READ_SECONDS)

        def __getattr__(self, name: str) -> Any:
            if name.startswith("do_"):  # every method reaches the core's rules, never a 501
                return lambda: self.server.owner.serve(self)
            raise AttributeError(name)

        def handle(self) -> None:
            try:
                super().handle()
            except (OSError, ValueError):  # a reset, a half-close or a timeout: nobody to answer
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet: stderr is the caller's
            pass

    return Connection


def _stdlib_request_reader() -> Any:
    """A connection's bytes, each read within the read timeout and, while a
    request comes in, within that request's deadline."""
    import io
    import socket

    class RequestReader(io.RawIOBase):
        def __init__(self, sock: Any, crowded: "Callable[[], bool]") -> None:
            super().__init__()
            self.socket = sock
            self.deadline: Optional[float] = None
            self.between = False  # a kept-alive connection, between its requests
            self.crowded = crowded  # whether a connection waits for a thread

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            if self.between:
                return self.next_request(buffer)
            if self.deadline is not None:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout("the request took too long to arrive")
                self.socket.settimeout(min(_HTTP_READ_SECONDS, left))
            return int(self.socket.recv_into(buffer))

        def next_request(self, buffer: Any) -> int:
            """The first bytes of a kept-alive connection's next request, if
            they come within the read timeout and while no connection waits
            for the thread; else none, and the connection is let go.  The
            request's deadline starts with its first bytes."""
            self.between = False
            idle_until = time.monotonic() + _HTTP_READ_SECONDS
            while True:
                left = idle_until - time.monotonic()
                wanted = left <= 0 or self.crowded()  # then only what has come already is read
                self.socket.settimeout(0.0 if wanted else min(left, _HTTP_IDLE_LOOK_SECONDS))
                try:
                    received = int(self.socket.recv_into(buffer))
                except (socket.timeout, BlockingIOError):
                    if wanted:
                        return 0
                    continue
                self.deadline = time.monotonic() + _HTTP_REQUEST_SECONDS
                return received

    return RequestReader


def _system_backlog() -> int:
    """How many connects the system queues on a listening socket, where it says."""
    try:
        with open("/proc/sys/net/core/somaxconn", encoding="ascii") as bound:
            return int(bound.read().strip())
    except (OSError, ValueError):
        return 0


def _drain(stream: Any) -> None:
    """Read and drop what a refused client is still sending, for a bounded
    time and amount."""
    deadline = time.monotonic() + _HTTP_READ_SECONDS
    left = _HTTP_DRAIN_BYTES
    try:
        while left > 0 and time.monotonic() < deadline:
            chunk = stream.read1(min(left, 65536))
            if not chunk:
                return
            left -= len(chunk)
    except (OSError, ValueError):
        return


def _reachable_address(host: str) -> str:
    """The host as a URL names it; for an address that listens everywhere,
    one of this machine's own addresses, which a phone can open."""
    if host in ("0.0.0.0", "::", ""):
        host = _interface_address(host == "::")
    return f"[{host}]" if ":" in host else host


def _interface_address(ipv6: bool) -> str:
    """The address of the interface this machine would reach a network by:
    the local end of a UDP socket pointed at a documentation address (which
    sends nothing), else an address the hostname resolves to, else loopback.
    A hostname often resolves to loopback alone where another interface exists."""
    import socket

    family, far = (socket.AF_INET6, "2001:db8::1") if ipv6 else (socket.AF_INET, "198.51.100.1")
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((far, 9))
            address = str(probe.getsockname()[0])
        if not address.startswith("127.") and address not in ("::1", "0.0.0.0", "::"):
            return address
    except OSError:
        pass
    try:
        found = [a for a in socket.gethostbyname_ex(socket.gethostname())[2] if not a.startswith("127.")]
    except OSError:
        found = []
    return found[0] if found else ("::1" if ipv6 else "127.0.0.1")


# ===========================================================================
# Prompts: the web page
#
# prompt_web(): the questions as one HTML form with a JSON interface, one
# set of handlers on the HTTP core (_WebPage), and the session that owns
# waiting for the person, ending and the grace period (_WebSession).

_WEB_STYLE = """
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #5b636d; --line: #d0d7de;
        --accent: #0b57d0; --on-accent: #ffffff; --warn: #b42318; --card: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9aa4af; --line: #30363d; --accent: #6ea8fe;
          --on-accent: #0d1117; --warn: #ff8a80; --card: #161b22; } }
body { font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0;
       overflow-wrap: anywhere; word-break: break-word; }
main { max-width: 42rem; margin: 0 auto; padding: 1rem; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 1rem; padding: 0.75rem 1rem;
           min-width: 0; }
.problems, .confirm { border: 2px solid var(--warn); border-radius: 8px; padding: 0.5rem 1rem; margin: 0 0 1rem; }
.confirm { border-color: var(--accent); }
.confirm h2, main h2 { font-size: 1.1rem; margin: 0.8rem 0 0.3rem; }
.problems a { color: var(--warn); }
details.addnote { margin-top: 0.4rem; color: var(--muted); }
legend { font-weight: 600; padding: 0 0.4rem; }
.question { font-size: 1.1rem; font-weight: 600; margin: 0.2rem 0; }
.purpose, .desc, .note, .countdown { color: var(--muted); }
.desc { display: block; font-size: 0.95rem; }
.question, .purpose { white-space: pre-line; }
.option { display: flex; align-items: flex-start; gap: 0.6rem; padding: 0.35rem 0; }
.option input { flex: none; width: 1.1rem; height: 1.1rem; margin: 0.2rem 0 0; }
.option .text { flex: 1; min-width: 0; }
input, textarea { scroll-margin-block: 8rem 2rem; }
ul.sent { padding-inline-start: 1.4rem; white-space: pre-wrap; }
.typed div { white-space: pre-wrap; border-inline-start: 3px solid var(--line); padding-inline-start: 0.5rem; }
details.addnote textarea { color: var(--fg); }
.badge { color: var(--accent); font-size: 0.9rem; }
.required { color: var(--warn); }
.error { color: var(--warn); font-weight: 600; }
details.preview { margin-block: 0 0.4rem; margin-inline-start: 1.7rem; }
details.preview summary { color: var(--accent); font-size: 0.9rem; }
.md { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 0 0.6rem;
      font: 0.85rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.md p, .md li, .md pre { white-space: pre-wrap; margin: 0.4rem 0; font: inherit; }
.md li { margin: 0.1rem 0; }
.md h3, .md h4, .md h5, .md h6 { font-size: 1em; margin: 0.5rem 0 0.2rem; }
.md ul, .md ol { margin: 0.4rem 0; padding-inline-start: 1.4rem; }
.md code { font: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 3px; padding: 0 0.15rem; }
.md pre { border-inline-start: 3px solid var(--line); padding-inline-start: 0.5rem; }
.md pre code { background: none; border: 0; padding: 0; }
.states { display: flex; flex-wrap: wrap; align-items: center; column-gap: 1.2rem; margin-top: 0.3rem; }
.states .desc { flex-basis: 100%; font-size: 0.9rem; }
.entry.resting :disabled { opacity: 0.45; }
.entry.resting .text, .entry.resting summary { color: var(--muted); }
span.number { display: flex; align-items: center; gap: 0.5rem; }
input.number { max-width: 12rem; }
input[type=text], input[type=password], textarea { box-sizing: border-box; width: 100%; font: inherit; color: inherit;
        background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 0.45rem; }
input.other { margin-block: 0.2rem 0; margin-inline: 1.7rem 0; width: calc(100% - 1.7rem); }
.countdown.soon { color: var(--warn); font-weight: 600; }
.bar.stuck { position: sticky; top: 0; z-index: 1; background: var(--bg); border-block-end: 1px solid var(--line); }
.bar p { margin: 0.4rem 0; }
.buttons { display: flex; gap: 0.75rem; flex-wrap: wrap; }
button { font: inherit; padding: 0.55rem 1.2rem; border-radius: 6px; border: 1px solid var(--line);
         background: var(--card); color: inherit; }
button.send { background: var(--accent); border-color: var(--accent); color: var(--on-accent); font-weight: 600; }
.files { margin-top: 0.5rem; }
.files ul { list-style: none; padding: 0; margin: 0.3rem 0; }
.files li { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; padding: 0.25rem 0; }
.files .file { flex: 1; min-width: 8rem; }
.files button { padding: 0.3rem 0.8rem; }
.pickers { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0.8rem; }
.pick { font-weight: 600; }
input[type=file] { max-width: 100%; font: inherit; }
img.thumb { max-width: 6rem; max-height: 6rem; border: 1px solid var(--line); border-radius: 4px; }
.files.over { outline: 2px dashed var(--accent); outline-offset: 4px; }
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (hover: hover) and (pointer: fine) { .camera { display: none; } }
"""

# A little script improves the page, which works the same without it: it
# ticks the row for typing as the person types, takes the focus to what the
# server asks the person to read first, shows the time left, and while the
# person works sends what the form holds, so that a timeout or a lost
# connection keeps it.
_WEB_SCRIPT = """
(function () {
  document.querySelectorAll("input.other").forEach(function (field) {
    field.addEventListener("input", function () {
      var row = document.getElementById(field.dataset.row);
      if (row && field.value.trim()) { row.checked = true; }
    });
  });
  // You decide and Let's discuss: one at a time, and instead of the answer,
  // whose controls rest (and are not sent) while either is ticked.
  function settle(fieldset) {
    var left = fieldset.querySelector("input.state:checked") !== null;
    fieldset.querySelectorAll(".entry input, .entry textarea").forEach(function (control) { control.disabled = left; });
    fieldset.querySelector(".entry").className = left ? "entry resting" : "entry";
  }
  document.querySelectorAll("input.state").forEach(function (box) {
    var fieldset = box.closest("fieldset");
    box.addEventListener("change", function () {
      fieldset.querySelectorAll("input.state").forEach(function (other) { if (other !== box && box.checked) { other.checked = false; } });
      settle(fieldset);
    });
    settle(fieldset);
  });
  var first = document.getElementById("problems") || document.getElementById("confirm");
  if (first) { first.focus(); }
  var form = document.querySelector("form.questions");
  if (!form) { return; }
  var timeout = Number(form.dataset.timeout || 0) * 1000, deadline = Date.now() + timeout;
  var clock = document.getElementById("countdown"), offline = document.getElementById("offline");
  var bar = document.getElementById("bar"), soon = false;
  function lost(yes) {
    // What the person must see wherever they are on the page stays in sight.
    offline.hidden = !yes;
    bar.className = soon || yes ? "bar stuck" : "bar";
  }
  var last = 0, timer = null, over = false, expiry = null;
  function showEnd() {
    form.querySelectorAll("input[type=password]").forEach(function (secret) { secret.disabled = true; });
    var field = document.createElement("input");
    field.type = "hidden"; field.name = "action"; field.value = "draft";
    form.appendChild(field); form.submit();
  }
  function send() {
    var data = new URLSearchParams(new FormData(form));
    data.set("action", "draft");
    form.querySelectorAll("input[type=file]").forEach(function (field) { data.delete(field.name); });
    // A secret leaves the page only with the send button: no timeout hands
    // the model half of one, and no store holds one that was never sent.
    form.querySelectorAll("input[type=password]").forEach(function (field) { data.delete(field.name); });
    timer = null; last = Date.now();
    fetch(form.getAttribute("action"), {method: "POST", body: data}).then(function (reply) {
      if (reply.status === 403) { over = true; offline.textContent = LINK_GONE; lost(true); return; }
      lost(false);
      if (reply.status === 409) { over = true; showEnd(); } else if (timeout) { restart(); }
    }, function () {
      over = false;
      if (timeout && Date.now() > deadline) { offline.textContent = TIMED_OUT_OFFLINE; }
      lost(true);
    });
  }
  function restart() {
    // The server's wait restarted when it read the request: its end comes
    // before this one, which a check just after it finds in the grace period.
    deadline = Date.now() + timeout;
    clearTimeout(expiry);
    expiry = setTimeout(function () { if (!over) { over = true; send(); } }, timeout + 500);
  }
  form.addEventListener("submit", function (event) {
    if (filesTooLarge()) { event.preventDefault(); return; }  // refused here, before a byte is sent
    over = true; clearTimeout(timer);  // the form itself goes now
  });
  form.addEventListener("keydown", function (event) {
    var kind = event.target.type;
    if (event.key === "Enter" && (kind === "radio" || kind === "checkbox")) { event.preventDefault(); }
  });
  ["input", "change", "click", "keydown"].forEach(function (kind) {
    document.addEventListener(kind, function () {
      if (!timer && !over) { timer = setTimeout(send, Math.max(0, last + ACTIVE_MS - Date.now())); }
    });
  });
  function tick() {
    var left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    var seconds = String(left % 60);
    clock.textContent = left ? "Time left: " + Math.floor(left / 60) + ":" + (seconds.length < 2 ? "0" : "") +
      seconds + ". Typing or clicking here restarts it." : "Time ran out.";
    soon = left < 60;
    clock.className = soon ? "countdown soon" : "countdown";
    lost(!offline.hidden);
  }
  if (timeout && clock) { restart(); tick(); setInterval(tick, 1000); }
  // Files: those picked shown before they are sent, a picture drawn only
  // when its own first bytes say it is one (never by its name or its type);
  // each with a Remove button; a file over the page's bounds refused at
  // once; a paste or a drop picks files for the question it lands on.
  var SIGNS = [["image/png", 0, [137, 80, 78, 71]], ["image/jpeg", 0, [255, 216, 255]],
               ["image/gif", 0, [71, 73, 70, 56]], ["image/webp", 8, [87, 69, 66, 80]]];
  var most = Number(form.dataset.files || 0), each = Number(form.dataset.fileBytes || 0);
  function sniff(bytes) {
    var found = null;
    SIGNS.forEach(function (sign) {
      if (sign[2].every(function (byte, at) { return bytes[sign[1] + at] === byte; })) { found = sign[0]; }
    });
    return found;
  }
  function size(bytes) {
    return bytes < 1024 ? bytes + " bytes" : bytes < 1048576 ? (bytes / 1024).toFixed(1) + " KB" :
      (bytes / 1048576).toFixed(1) + " MB";
  }
  function put(input, files) {
    try { var bag = new DataTransfer(); files.forEach(function (file) { bag.items.add(file); }); input.files = bag.files; }
    catch (error) { /* a browser that cannot set a picker's files keeps what the person picked */ }
  }
  function check(box) {
    var kept = box.querySelectorAll("ul.attached li").length, count = kept, problem = "";
    box.querySelectorAll("input[type=file]").forEach(function (input) {
      var fit = Array.prototype.filter.call(input.files, function (file) {
        if (file.size > each) { problem = "\u201c" + file.name + "\u201d is too large: a file may be " + size(each) + " at most."; return false; }
        if (!file.size) { problem = "\u201c" + file.name + "\u201d is empty."; return false; }
        if (count >= most) { problem = "A question takes " + most + " files at most."; return false; }
        count += 1; return true;
      });
      if (fit.length !== input.files.length) { put(input, fit); }
    });
    var alert = box.querySelector("p.error");
    alert.textContent = problem; alert.hidden = !problem;
  }
  function show(box) {
    check(box);
    var list = box.querySelector("ul.picked");
    list.textContent = "";
    box.querySelectorAll("input[type=file]").forEach(function (input) {
      Array.prototype.forEach.call(input.files, function (file, place) {
        var row = document.createElement("li"), name = document.createElement("span");
        var drop = document.createElement("button"), hidden = document.createElement("span");
        name.className = "file"; name.dir = "auto"; name.textContent = file.name + " (" + size(file.size) + ", not sent yet)";
        drop.type = "button"; drop.textContent = "Remove"; hidden.className = "vh"; hidden.textContent = " " + file.name;
        drop.appendChild(hidden);
        drop.addEventListener("click", function () {
          put(input, Array.prototype.filter.call(input.files, function (other, at) { return at !== place; }));
          show(box);
        });
        row.appendChild(name); row.appendChild(drop); list.appendChild(row);
        file.slice(0, 16).arrayBuffer().then(function (head) {
          var type = sniff(new Uint8Array(head));
          if (!type) { return; }
          var picture = document.createElement("img");
          picture.className = "thumb"; picture.alt = "";
          picture.src = URL.createObjectURL(new Blob([file], {type: type}));
          row.insertBefore(picture, name);
        });
      });
    });
  }
  function filesTooLarge() {
    var total = 0, all = Number(form.dataset.allBytes || 0), first = null;
    document.querySelectorAll("div.files").forEach(function (box) {
      box.querySelectorAll("ul.attached li").forEach(function (row) { total += Number(row.dataset.size || 0); });
      box.querySelectorAll("input[type=file]").forEach(function (input) {
        Array.prototype.forEach.call(input.files, function (file) { total += file.size; first = first || box; });
      });
    });
    if (!all || total <= all || !first) { return false; }
    var alert = first.querySelector("p.error");
    alert.textContent = "All the files together come to " + size(total) + "; one set of answers takes " + size(all) +
      " at most. Remove some first.";
    alert.hidden = false;
    return true;
  }
  function add(box, files) {
    var input = box.querySelector("input[type=file]:not(.camera)");
    put(input, Array.prototype.slice.call(input.files).concat(Array.prototype.slice.call(files)));
    show(box);
  }
  document.querySelectorAll("div.files").forEach(function (box) {
    var fieldset = box.closest("fieldset");
    box.querySelector(".scripted").hidden = false;
    box.querySelectorAll("input[type=file]").forEach(function (input) {
      input.addEventListener("change", function () { show(box); });
    });
    fieldset.addEventListener("dragover", function (event) { event.preventDefault(); box.className = "files over"; });
    fieldset.addEventListener("dragleave", function () { box.className = "files"; });
    fieldset.addEventListener("drop", function (event) {
      event.preventDefault(); box.className = "files";
      if (event.dataTransfer && event.dataTransfer.files.length) { add(box, event.dataTransfer.files); }
    });
  });
  document.addEventListener("paste", function (event) {
    var files = event.clipboardData && event.clipboardData.files;
    if (!files || !files.length) { return; }
    var at = document.activeElement && document.activeElement.closest && document.activeElement.closest("fieldset");
    var box = (at || form).querySelector("div.files");
    if (box) { event.preventDefault(); add(box, files); }
  });
})();
"""
# While the person types or clicks, the script sends the form at most this
# often: the server then knows the person is there, and what the page holds;
# well within the grace period, so that a second device at work learns in
# time that the answers are in.
_WEB_ACTIVE_MS = 1000
# What the page says when it finds the server gone after its time ran out (a
# sleeping phone's timers run late): never that anything was sent.
_WEB_TIMED_OUT_OFFLINE = ("Time ran out, and the assistant stopped waiting. Your entries are still on this page:"
                          " copy them before you close it.")


# What the page says when its server no longer knows its link (restarted
# without the asks, so without their pages): nothing it holds was sent.
_WEB_LINK_GONE = ("The assistant's server no longer knows this page: it was restarted, or the questions ended"
                  " there. Nothing more from this page can be sent. Your entries are still here: copy them before"
                  " you close it.")


def _web_script() -> str:
    return (_WEB_SCRIPT.replace("ACTIVE_MS", str(_WEB_ACTIVE_MS))
            .replace("TIMED_OUT_OFFLINE", json.dumps(_WEB_TIMED_OUT_OFFLINE))
            .replace("LINK_GONE", json.dumps(_WEB_LINK_GONE)))


def _asks_follow_up(raw: Any) -> bool:
    """Whether answers in Claude Code's form ask for more questions first
    (its ``followUp``): the outcome follow_up, keeping what was answered."""
    return isinstance(raw, dict) and raw.get("followUp") is True


# How each ending of the JSON interface ends the questions, by its path, and
# whether the answers it carries are checked as partial.
_WEB_JSON_ENDINGS = {"/answers": (Outcome.ANSWERED, False), "/dismiss": (Outcome.DECLINED, True),
                     "/follow-up": (Outcome.FOLLOW_UP, True)}

# One tap: where a notification's answer of its own is sent (POST answers,
# GET shows it with one button, since a link's preview fetches it).
_TAP_PATH = "/tap"


def _one_tap_question(items: "Sequence[QuestionItem]") -> "Optional[QuestionItem]":
    """The question a notification may answer with one tap: the batch's only
    question, when it is a single choice (a yes/no question is one)."""
    if len(items) != 1:
        return None
    item = items[0]
    return item if item.question_type is QuestionType.SINGLE_CHOICE and item.options and not item.secret else None


def _token_digest(token: str) -> str:
    """What names a page without giving it away: its token's SHA-256, as a
    store indexes it and as a tap's link carries it."""
    import hashlib

    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class _TapAction:
    """One option of a one-question ask as an answer of its own: its label,
    and the link whose POST sends it."""

    label: str
    url: str


class _Ending:
    """What a page reads and commits through, never keeping its own copy:
    what the person entered, how the questions ended, and whether that
    ending was left with no call to take it.  A page alone (prompt_web)
    has a _PageEnding; a page of an ask has the ask itself, which keeps
    them for every view of it (its store included)."""

    __slots__ = ("_files", "abandoned", "entered")

    def __init__(self) -> None:
        self.entered: Dict[str, List[str]] = {}
        self._files: Optional[Dict[str, List[Attachment]]] = None  # most pages take none: nothing made for them
        self.abandoned = False

    @property
    def attached(self) -> "Dict[str, List[Attachment]]":
        """The files taken so far, by question id; set, never changed in place."""
        return {} if self._files is None else self._files

    @attached.setter
    def attached(self, files: "Dict[str, List[Attachment]]") -> None:
        self._files = files or None

    def outcome(self) -> "Optional[QuestionOutput]":
        raise NotImplementedError

    def commit(self, outcome: QuestionOutput) -> bool:
        """End with ``outcome`` unless an ending came first; whether it stands."""
        raise NotImplementedError


class _PageEnding(_Ending):
    """The ending of a page that is no ask's: held here, the first one wins."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        super().__init__()
        self.held: Optional[QuestionOutput] = None

    def outcome(self) -> "Optional[QuestionOutput]":
        return self.held

    def commit(self, outcome: QuestionOutput) -> bool:
        if self.held is None:
            self.held = outcome
        return self.held is outcome


class _WebPage(_HttpHandlers):
    """The page's handlers and what they know: the questions, its token, the
    person's last form (submitted, or sent by the page's script as they
    work: kept for a redraw, a dismissal and a timeout), and how it ended."""

    routes = _Registry()
    actions = _Registry()  # what a form posted to / asks for, by its "action" field
    json_paths = frozenset(("/questions", *_WEB_JSON_ENDINGS))

    def __init__(self, items: "List[QuestionItem]", timeout: "Optional[float]" = None, token: str = "",
                 ending: "Optional[_Ending]" = None, bounds: "Optional[_AttachmentBounds]" = None) -> None:
        import secrets
        import threading

        self.items = items
        self.bounds = bounds or _AttachmentBounds()
        self.timeout = timeout  # idle seconds, for the countdown the page shows
        self.token = token or secrets.token_urlsafe(24)
        self.nonce = secrets.token_urlsafe(12)  # the page's own style and script, and nothing else
        self.lock = threading.Lock()  # one request at a time touches the page
        self.ending = ending or _PageEnding()  # what was entered and how it ended: the page's own, or its ask's
        self.lost = False  # its last ending came second to one committed first elsewhere
        self.last_seen = time.monotonic()

    @property
    def last_form(self) -> "Dict[str, List[str]]":
        """The person's last form, as the ending keeps it."""
        return self.ending.entered

    @last_form.setter
    def last_form(self, form: "Dict[str, List[str]]") -> None:
        self.ending.entered = form

    @property
    def status(self) -> "Optional[Outcome]":
        outcome = self.ending.outcome()
        return None if outcome is None else Outcome(outcome.status)

    @property
    def answers(self) -> "List[AnswerItem]":
        outcome = self.ending.outcome()
        return [] if outcome is None else outcome.answers

    @property
    def abandoned(self) -> bool:
        """Its time ran out with no call left to take the answers."""
        return self.ending.abandoned

    def end(self, status: Outcome, answers: "List[AnswerItem]") -> None:
        """End with this outcome, unless another was committed first (then
        the page shows that one, and the request that ended it is answered
        as after the end)."""
        self.lost = not self.ending.commit(QuestionOutput(self.items, answers, status))
        if not self.lost:
            self.ending.attached = {}  # the files are the ending's now

    def outcome(self) -> QuestionOutput:
        return QuestionOutput(self.items, self.answers, self.status)

    def kept_answers(self) -> "List[AnswerItem]":
        """The answers of the person's last form, as far as they go, for a
        dismissal or a timeout."""
        return _readable_answers(self.items, _form_answers(self.items, self.last_form, attached=self.ending.attached))

    def body_limit(self, headers: Any) -> int:
        return _form_body_limit(headers, self.bounds)

    def too_large(self, request: _HttpRequest, refusal: _HttpResponse) -> _HttpResponse:
        """The form, too large to be read: the page again, as last kept, and why."""
        if request.method != "POST" or request.path != "/" or _speaks_json(request):
            return refusal
        with self.lock:
            if not self._token_matches(request) or self.status is not None:
                return refusal
            words = _html_escaped(_UPLOAD_WORDS["too_large"].format(**self.bounds.words()))
            return self._with_policy(_HttpResponse.html(413, self.form_html(notice=words)).closing())

    def expire_if_idle(self, timeout: "Optional[float]") -> bool:
        """End the page as timed out once ``timeout`` idle seconds have passed;
        whether it has ended."""
        with self.lock:
            if self.status is None and timeout is not None and time.monotonic() - self.last_seen >= timeout:
                self.end(Outcome.TIMED_OUT, self.kept_answers())
            return self.status is not None

    def respond(self, handler: "Callable[[Any, _HttpRequest], _HttpResponse]", request: _HttpRequest) -> _HttpResponse:
        """The token first; any request that shows it keeps the page waiting,
        and once the answers are in, every route says so."""
        with self.lock:
            if not self.shows_token(request):
                return _WebPage.unknown_link(request)
            else:
                self.last_seen = time.monotonic()
                response = self._refusal(request) or (
                    handler(self, request) if self.status is None else self._after_the_end(request))
                if self.lost:
                    self.lost = False
                    response = self._after_the_end(request)
        return self._with_policy(response)

    def _with_policy(self, response: _HttpResponse) -> _HttpResponse:
        """What the page may load: its own style and script; pictures only
        from the bytes it holds (a sniffed picture's data: or blob: URL)."""
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; style-src 'nonce-{self.nonce}'; script-src 'nonce-{self.nonce}';"
            " img-src data: blob:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'")
        return response

    @staticmethod
    def unknown_link(request: _HttpRequest) -> _HttpResponse:
        """A request whose token no page here has: a person's browser gets a
        page in askq's words and style (a submission from a page whose
        server restarted without its asks), never a bare status line."""
        import secrets

        if request.path == _TAP_PATH:  # a tap's link forged, or another page's, or of questions gone
            said = ("<h1>This answer was not sent</h1><p>The assistant's server does not know this link: it is not"
                    " one it gave for these questions, or the questions are no longer there. Nothing was sent.</p>")
        elif request.path != "/":
            return _HttpResponse.text(403, "Forbidden: the link's token is missing or wrong.")
        else:
            said = ("<h1>This page takes no more answers</h1><p>The assistant's server does not know this link: it"
                    " was restarted without keeping its questions, or the link is not the one it gave. Nothing was"
                    " sent from here.</p><p>Go back to copy what you entered; the assistant can ask the questions"
                    " again.</p>")
        nonce = secrets.token_urlsafe(12)
        response = _HttpResponse.html(403, (
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Questions for you</title><style nonce=\"{nonce}\">{_WEB_STYLE}</style></head><body><main>"
            f"{said}</main></body></html>"))
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; style-src 'nonce-{nonce}'; form-action 'self'; frame-ancestors 'none'")
        return response

    def _refusal(self, request: _HttpRequest) -> "Optional[_HttpResponse]":
        """A request no route takes, in the words and the format its client
        reads (JSON to a client that sends or asks for JSON): a body cut
        short of its Content-Length (the client closed its side early), or
        JSON sent to the form's address."""
        import html

        json_client = _speaks_json(request) or request.path in self.json_paths
        declared = request.header("Content-Length").strip()
        cut = declared.isdigit() and len(request.body) < int(declared)
        words = (f"The request's body was cut off: it holds {len(request.body)} of the {declared} bytes its"
                 " Content-Length gives. Nothing was taken from it: send it again, whole.")
        if (cut or request.cut_off) and not json_client and request.path == "/" and request.method == "POST":
            # What came whole is kept, over what the page last had.
            self.last_form = _kept_form(self.items, {**self.last_form, **request.form})
            said = _UPLOAD_WORDS["cut_off"] + (f" ({words})" if cut else "")
            return _HttpResponse.html(400, self.form_html(notice=html.escape(said, quote=False)))
        if cut:
            if json_client:
                return _HttpResponse.json(400, {"error": words})
            return _HttpResponse.html(400, f"{self._head()}<h1>Your answers did not arrive whole</h1><p>{words}"
                                           " Go back to the page and send them again.</p></main></body></html>")
        if json_client and request.method == "POST" and request.path == "/":
            return _HttpResponse.json(400, {"error": "This address takes the page's form. Send answers as JSON to"
                                                     " POST /answers (a dismissal to POST /dismiss)."})
        return None

    def _token_matches(self, request: _HttpRequest) -> bool:
        """Whether the request shows the token: in the query, a form field or a Bearer header."""
        import secrets

        return secrets.compare_digest(request.page_token().encode("utf-8", "replace"), self.token.encode())

    def shows_token(self, request: _HttpRequest) -> bool:
        """Whether the request may reach the page: a tap with one of its taps'
        tokens (which opens nothing else), any other with the page's token."""
        return self.tapped(request) is not None if request.path == _TAP_PATH else self._token_matches(request)

    @staticmethod
    def digest_shown(request: _HttpRequest) -> str:
        """The digest of the page a request names: a tap's carries it, any
        other request shows the page's token."""
        if request.path == _TAP_PATH:
            return (request.query.get("tap") or [""])[0].partition(".")[0]
        return _token_digest(request.page_token())

    def tap_token(self, index: int) -> str:
        """The token of one option's tap: the page's digest (which finds the
        page, in a store too), the option, and their signature by the page's
        token (itself signed by the state key), so that the link answers that
        option of this page and nothing else, and holds no secret of it."""
        return f"{_token_digest(self.token)}.{index}.{self._tap_signature(index)}"

    def tapped(self, request: _HttpRequest) -> "Optional[int]":
        """The option a tap's token names, when the token is one of this
        page's; None for any other (forged, altered, another page's)."""
        import secrets

        digest, _, rest = (request.query.get("tap") or [""])[0].partition(".")
        index, _, signature = rest.partition(".")
        item = _one_tap_question(self.items)
        if item is None or index not in [str(number) for number in range(len(item.options or ()))]:
            return None
        if not secrets.compare_digest(digest.encode("utf-8", "replace"), _token_digest(self.token).encode()):
            return None
        expected = self._tap_signature(int(index)).encode()
        return int(index) if secrets.compare_digest(signature.encode("utf-8", "replace"), expected) else None

    def _tap_signature(self, index: int) -> str:
        import base64
        import hashlib
        import hmac

        digest = hmac.new(self.token.encode(), f"tap {index}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def _after_the_end(self, request: _HttpRequest) -> _HttpResponse:
        """Once the answers are in, a later request learns so: a later
        submission is told that its own answers were not sent, and why, and
        is shown them back, so that nothing it entered is lost."""
        if request.method == "GET":
            if request.path in ("/", _TAP_PATH):
                return _HttpResponse.html(200, self.ended_html(seen_later=True))
            return _HttpResponse.json(200, self.shown_outcome())
        if request.path == _TAP_PATH:
            return self._tapped_after_the_end(request)
        if request.path == "/":
            # A draft never carries a secret, whatever its script sent.
            draft = self.actions.get(_form_text(request.form, "action")) is _WebPage._keep_draft
            own = _form_answers(self.items, _kept_form(self.items, request.form) if draft else request.form)
            if not self._sent_again(own):
                return _HttpResponse.html(409, self.late_html(own))
            # The same answers again: a submission gets the same result; a
            # draft's script learns of the end by the 409, the page the same.
            return _HttpResponse.html(409 if draft else 200, self.ended_html())
        if self._sent_again_as_json(request):
            return _HttpResponse.json(200, self.shown_outcome())
        status = self.status or Outcome.DECLINED
        return _HttpResponse.json(409, {"error": f"Conflict: your answers were not sent. {_OUTCOME_WORDS[status].late}",
                                        "status": status.value, "yours": self._own_entries(request)})

    def _sent_again(self, own: "List[AnswerItem]") -> bool:
        """Whether a later submission holds the answers that were sent (a
        second click of Send, a retried request, a form whose script had
        sent it all): it gets the same result again."""
        # Files are not sent again after the end: the rest of the answers tells.
        sent = _answers_without_files(self.answers)
        again = _answers_as_sent(self.items, own)
        return _readable_answers(self.items, own) == sent or (
            self.status is Outcome.ANSWERED and again is not None and _answers_without_files(again) == sent)

    def _tapped_after_the_end(self, request: _HttpRequest) -> _HttpResponse:
        """A tap once the answers are in: the same tap again (a double tap, a
        retry) gets the same result; another option is answered 409, as a
        second device is, its pick shown back."""
        own = self._tap_answers(self._tap_of(request))
        if self._sent_again(own):
            return self._tap_result(request)
        if _speaks_json(request):
            status = self.status or Outcome.DECLINED
            return _HttpResponse.json(409, {"error": f"Conflict: your answer was not sent. {_OUTCOME_WORDS[status].late}",
                                            "status": status.value, "yours": [answer.to_dict() for answer in own]})
        return _HttpResponse.html(409, self.late_html(own))

    def _sent_again_as_json(self, request: _HttpRequest) -> bool:
        """The same, for the JSON interface: the same ending, the same answers."""
        status, partial = _WEB_JSON_ENDINGS.get(request.path, (None, False))
        try:
            carried = self._carried_answers(request)
            if _asks_follow_up(carried):
                status, partial = Outcome.FOLLOW_UP, True
            return status is self.status and collect_answers(self.items, carried, partial) == self.answers
        except QuestionError:
            return False

    def _own_entries(self, request: _HttpRequest) -> Any:
        """What a late request carried, as it sent it: its answers read as the
        JSON interface reads them, else its body as text.  Where a question
        is secret, only what can be read, with the secret hidden."""
        secret = any(item.secret for item in self.items)
        try:
            carried = self._carried_answers(request)
            if secret:
                carried = collect_answers(self.items, carried, partial=True)
        except QuestionError:
            return _HIDDEN if secret else request.body.decode("utf-8", "replace")
        if isinstance(carried, list):
            return _hidden_secrets(self.items, [entry.to_dict() if isinstance(entry, AnswerItem) else entry for entry in carried])
        return carried

    @routes.on(("GET", "/"))
    @actions.on("back")
    def _show_form(self, given: Any) -> _HttpResponse:
        """The form, as the page (given the request) and back from a dismissal (given the form)."""
        return _HttpResponse.html(200, self.form_html())

    @routes.on(("POST", "/"))
    def _post_form(self, request: _HttpRequest) -> _HttpResponse:
        """A form posted: what its action asks for (sending it, unless it says
        otherwise), with every entry it holds kept as the person's last form,
        and the files it brings taken first: one refused brings the page
        back, saying why, with everything else kept."""
        self.last_form = request.form
        action = self.actions.get(_form_text(request.form, "action").partition(":")[0], _WebPage._send)
        problems = self._take_files(request.files)
        if problems and action in (_WebPage._send, _WebPage._ask_for_more):  # every problem at once, as ever
            status = Outcome.ANSWERED if action is _WebPage._send else Outcome.FOLLOW_UP
            problems = {**_form_problems(self.items, request.form, status is Outcome.FOLLOW_UP), **problems}
            return _HttpResponse.html(400, self.form_html(problems, status=status))
        if problems:
            return _HttpResponse.html(400, self.form_html(problems))
        return action(self, request.form)  # type: ignore[no-any-return]

    def _take_files(self, files: "Dict[str, List[Tuple[str, bytes]]]") -> "Dict[int, str]":
        """The files a form brings, each kept with its question once its
        bytes are a type the page takes and the bounds hold; the reason
        of each question's refusal, by its index."""
        sent = {item.id: files.get(f"file:{item.id}", []) for item in self.items}
        self.ending.attached, problems = _files_taken(self.items, self.bounds, self.ending.attached, sent)
        return problems

    @actions.on("remove")
    def _remove_file(self, form: "Dict[str, List[str]]") -> _HttpResponse:
        """A file's Remove button: ``remove:<its place>:<question id>``."""
        _, _, rest = _form_text(form, "action").partition(":")
        place, _, question = rest.partition(":")
        kept = list(self.ending.attached.get(question, []))
        if place.isdigit() and int(place) < len(kept):
            del kept[int(place)]
            others = {key: files for key, files in self.ending.attached.items() if key != question}
            self.ending.attached = {**others, **({question: kept} if kept else {})}
        return _HttpResponse.html(200, self.form_html())

    @actions.on("submit")
    def _send(self, form: "Dict[str, List[str]]") -> _HttpResponse:
        """Answered, or refused with every problem shown and every entry kept."""
        return self._end_with_form(Outcome.ANSWERED, form, partial=False)

    @actions.on("follow-up")
    def _ask_for_more(self, form: "Dict[str, List[str]]") -> _HttpResponse:
        """Ask me more first: what was answered goes with it, checked as
        partial, refused as a submission is."""
        return self._end_with_form(Outcome.FOLLOW_UP, form, partial=True)

    def _end_with_form(self, status: Outcome, form: "Dict[str, List[str]]", partial: bool) -> _HttpResponse:
        problems = _form_problems(self.items, form, partial)
        try:
            given = _form_answers(self.items, form, sent=not partial, attached=self.ending.attached)
            answers = collect_answers(self.items, given, partial)
        except AnswerError as err:
            problems = problems or {err.index or 0: err.reason}
        if problems:
            return _HttpResponse.html(400, self.form_html(problems, status=status))
        self.end(status, answers)
        return _HttpResponse.html(200, self.ended_html())

    @actions.on("dismiss")
    def _ask_to_dismiss(self, form: "Dict[str, List[str]]") -> _HttpResponse:
        """Dismissing takes a second step: the form again, every entry in
        place, asking the person to confirm and saying what would be kept."""
        return _HttpResponse.html(200, self.form_html(confirm=True))

    @actions.on("confirm-dismiss")
    def _dismiss(self, form: "Dict[str, List[str]]") -> _HttpResponse:
        self.end(Outcome.DECLINED, self.kept_answers())
        return _HttpResponse.html(200, self.ended_html())

    @actions.on("draft")
    def _keep_draft(self, form: "Dict[str, List[str]]") -> _HttpResponse:
        """What the page holds, sent by its script as the person works: never
        a secret, even from a script that sends one."""
        self.last_form = _kept_form(self.items, form)
        return _HttpResponse.json(200, {"kept": True})

    @routes.on(("GET", _TAP_PATH))
    def _show_tap(self, request: _HttpRequest) -> _HttpResponse:
        """A tap's link opened in a browser, or fetched for a link's preview:
        the option picked and one button that sends it; nothing answered."""
        return _HttpResponse.html(200, self.tap_html(self._tap_of(request)))

    @routes.on(("POST", _TAP_PATH))
    def _tap(self, request: _HttpRequest) -> _HttpResponse:
        """A tap: its option is the answer, at once, whatever the body."""
        self.end(Outcome.ANSWERED, self._tap_answers(self._tap_of(request)))
        return self._tap_result(request)

    def _tap_of(self, request: _HttpRequest) -> int:
        """The option of a tap that respond() let in: only one of this page's taps' tokens passes."""
        index = self.tapped(request)
        assert index is not None, "respond() lets a tap in only with one of the page's taps' tokens"
        return index

    def _tap_answers(self, index: int) -> "List[AnswerItem]":
        item = self.items[0]
        return collect_answers(self.items, [AnswerItem(item.id, selected=[(item.options or [])[index].label])])

    def _tap_result(self, request: _HttpRequest) -> _HttpResponse:
        """What a tap that answered gets: the outcome to a client that reads
        JSON, else the page that says what was sent."""
        if _speaks_json(request):
            return _HttpResponse.json(200, self.shown_outcome())
        return _HttpResponse.html(200, self.ended_html())

    @routes.on(("GET", "/questions"))
    def _get_questions(self, request: _HttpRequest) -> _HttpResponse:
        return _HttpResponse.json(200, QuestionOutput(self.items, []).to_dict())

    @routes.on(("POST", "/answers"), ("POST", "/dismiss"), ("POST", "/follow-up"))
    def _post_ending(self, request: _HttpRequest) -> _HttpResponse:
        """Answered, declined or ask me more first, with the answers the
        request carries; a dismissal or a follow-up that carries none keeps
        those of the person's last form."""
        status, partial = _WEB_JSON_ENDINGS[request.path]
        if partial and not request.body.strip():
            answers = self.kept_answers()
        else:
            try:
                carried = self._carried_answers(request)
                if _asks_follow_up(carried):  # Claude Code's answer form says so itself
                    status, partial = Outcome.FOLLOW_UP, True
                answers = collect_answers(self.items, carried, partial)
                self.bounds.check(self.items, answers)
            except QuestionError as err:  # an AnswerError, or a body that cannot be read
                return _HttpResponse.json(400, {"error": str(err)})
            too_long = _too_long_error(self.items, answers)
            if too_long is not None:
                return _HttpResponse.json(400, {"error": too_long})
        self.end(status, answers)
        return _HttpResponse.json(200, self.shown_outcome())

    def shown_outcome(self) -> "Dict[str, Any]":
        """The outcome as the page's server sends it back: a secret answer as
        "(hidden)", which reaches the outcome itself unchanged."""
        data = self.outcome().to_dict()
        data["answers"] = _hidden_secrets(self.items, data.get("answers") or [])
        return data

    def _carried_answers(self, request: _HttpRequest) -> Any:
        """The answers a JSON-interface request carries: its body as JSON when
        it parses, whatever its Content-Type says (curl -d calls JSON a
        form), else as the page's form fields (a multipart form, with its
        files); QuestionError when neither reads it."""
        from urllib.parse import parse_qs

        if request.header("Content-Type").split(";")[0].strip().lower() == _MULTIPART:
            return _form_answers(self.items, request.form, sent=True, attached=self._sent_files(request))
        try:
            return _parse_json(request.body, "The request's body")
        except QuestionError as err:
            try:
                form = parse_qs(request.body.decode("utf-8", "replace"), keep_blank_values=True, strict_parsing=True)
            except ValueError:
                raise err from None
            return _form_answers(self.items, form, sent=True)

    def _sent_files(self, request: _HttpRequest) -> "Dict[str, List[Attachment]]":
        """The files of a multipart request to the JSON interface, by
        question: each checked, a refusal naming its question."""
        if request.cut_off:
            raise AnswerError("The request's multipart body was cut off before its closing boundary. Nothing was"
                              " taken from it: send it again, whole.", reason="attachment_cut_off")
        files: Dict[str, List[Attachment]] = {}
        for index, item in enumerate(self.items):
            try:
                files[item.id] = [Attachment(name, data) for name, data in request.files.get(f"file:{item.id}", ())]
            except AnswerError as err:
                raise _refused(index, item, err.reason, f": {err}") from None
        return files

    def _head(self) -> str:
        return (
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Questions for you</title><style nonce=\"{self.nonce}\">{_WEB_STYLE}</style></head><body><main>"
        )

    def form_html(
        self, problems: "Optional[Dict[int, str]]" = None, confirm: bool = False, status: Outcome = Outcome.ANSWERED,
        notice: str = "",
    ) -> str:
        """The form, every entry of the last form in place; after a refused
        submission, every problem at the top and beside its question, in the
        page's words (``notice``: one of the whole form, in HTML); on the
        way to a dismissal, the step that confirms it."""
        problems = problems or {}
        token = _html_escaped(self.token)
        # A secret is never written back into the page; once the page no
        # longer holds it, neither does the form kept for a dismissal.
        retype = {item.id for item in self.items if item.secret and _secret_typed(item, self.last_form)}
        self.last_form = {key: value for key, value in self.last_form.items()
                          if key.partition(":")[2] not in retype or key.startswith(("note:", "q:", "state:"))}
        parts = [
            self._head(),
            _heading_html(self.items),
            ("<p class=\"note\">An assistant is waiting for your answers. "
             "Fields marked <span class=\"required\">*</span> need an answer.</p>"),
            f"<div class=\"bar\" id=\"bar\">{self._countdown_html()}",
            ("<p class=\"error\" id=\"offline\" role=\"alert\" hidden>The assistant's page stopped answering: the"
             " connection was lost, or the questions ended elsewhere. Your entries are still on this page: keep it"
             " open, or copy them before you close it.</p></div>"),
        ]
        if problems or notice:
            parts.append(self._problems_html(problems, self.last_form, status, notice))
        # The form's first submit button is a disabled one: Enter in a one-line
        # field (a phone's Go key) then sends nothing, also without script.
        # Enter on a radio button or a check box clicks the first submit button
        # that is not disabled (in Chromium): the next one, which sends nothing
        # and brings the form back as it is.
        timeout = "" if self.timeout is None else f" data-timeout=\"{self.timeout:g}\""
        bounds = self.bounds
        timeout += (f" data-files=\"{bounds.per_question}\" data-file-bytes=\"{bounds.each}\""
                    f" data-all-bytes=\"{bounds.total}\" enctype=\"{_MULTIPART}\"")
        parts.append(f"<form class=\"questions\" novalidate method=\"post\" action=\"/?token={token}\" data-token=\"{token}\"{timeout}>"
                     f"<input type=\"hidden\" name=\"token\" value=\"{token}\">"
                     "<button type=\"submit\" disabled hidden aria-hidden=\"true\" tabindex=\"-1\"></button>"
                     "<button type=\"submit\" name=\"action\" value=\"back\" hidden aria-hidden=\"true\" tabindex=\"-1\"></button>")
        if confirm:
            parts.append(self._confirm_html())
        parts.extend(_web_fieldset(index, item, self.last_form, problems.get(index), item.id in retype,
                                   files=_WebFiles(index, item, self.ending.attached.get(item.id, ()), bounds))
                     for index, item in enumerate(self.items))
        parts.append(
            "<div class=\"buttons\"><button class=\"send\" type=\"submit\" name=\"action\" value=\"submit\">Send answers</button>"
            f"<button type=\"submit\" name=\"action\" value=\"follow-up\">{_ASK_ME_MORE}</button>"
            "<button type=\"submit\" name=\"action\" value=\"dismiss\">Dismiss</button></div></form>"
            f"</main><script nonce=\"{self.nonce}\">{_web_script()}</script></body></html>"
        )
        return "".join(parts)

    def tap_html(self, index: int) -> str:
        """A tap's option, picked, with the one button that sends it: the
        page's own form is on the page's link, which a tap's does not open."""
        item = self.items[0]
        option = (item.options or [])[index]
        label = _html_escaped(option.label)
        description = f"<span class=\"desc\" dir=\"auto\">{_html_escaped(option.description)}</span>" if option.description else ""
        return (f"{self._head()}{_heading_html(self.items)}<p class=\"note\">An assistant is waiting for your answer.</p>"
                f"<p class=\"question\" dir=\"auto\">{_html_escaped(item.question)}</p>"
                f"<form method=\"post\" action=\"{_TAP_PATH}?tap={_html_escaped(self.tap_token(index))}\">"
                f"<p>Your answer: <strong dir=\"auto\">{label}</strong>{description}</p>"
                f"<div class=\"buttons\"><button class=\"send\" type=\"submit\">Send \u201c{label}\u201d</button></div></form>"
                "<p class=\"note\">Nothing is sent until you press the button. To answer otherwise, or to add a note,"
                " open the questions' page from the notification.</p></main></body></html>")

    def _countdown_html(self) -> str:
        """With a timeout, the time the page waits: the script counts it down."""
        if self.timeout is None:
            return ""
        return (f"<p class=\"countdown\" id=\"countdown\" role=\"timer\">This page stops waiting after"
                f" {_duration(self.timeout)} without activity.</p>")

    def _problems_html(
        self, problems: "Dict[int, str]", form: "Dict[str, List[str]]", status: Outcome = Outcome.ANSWERED,
        notice: str = "",
    ) -> str:
        """The problems at the top of the form, each a link to its question's
        first control, taking the focus so that a screen reader reads them first."""
        links = (f"<li>{notice}</li>" if notice else "") + "".join(
            f"<li><a href=\"#{_control_id(index)}\" dir=\"auto\">{_html_escaped(_web_name(self.items[index]))}"
            f"</a>: {_person_words(self.items[index], reason, form, self.bounds)}</li>"
            for index, reason in sorted(problems.items())
        )
        return (f"<div class=\"problems\" id=\"problems\" role=\"alert\" tabindex=\"-1\" autofocus>"
                f"<p>{_REFUSED_LEADS.get(status, _REFUSED_LEADS[Outcome.ANSWERED])} Please fix:</p><ul>{links}</ul></div>")

    def _confirm_html(self) -> str:
        """The second step of a dismissal, saying what it would keep."""
        kept = self.kept_answers()
        by_id = {answer.id: answer for answer in kept}
        rows = "".join(_sent_row(item, by_id[item.id]) for item in self.items if item.id in by_id)
        said = (f"<p>These answers go with it:</p><ul class=\"sent\">{rows}</ul>" if kept
                else "<p>No question has an answer yet, so nothing is sent with it.</p>")
        return (f"<section class=\"confirm\" id=\"confirm\" tabindex=\"-1\" autofocus aria-labelledby=\"confirm-title\">"
                f"<h2 id=\"confirm-title\">Dismiss these questions?</h2>"
                f"<p>The assistant is told that you dismissed them.</p>{said}<div class=\"buttons\">"
                "<button class=\"send\" type=\"submit\" name=\"action\" value=\"confirm-dismiss\">Yes, dismiss</button>"
                "<button type=\"submit\" name=\"action\" value=\"back\">No, go back to the questions</button></div></section>")

    def ended_html(self, seen_later: bool = False) -> str:
        """The page once it ended: how, and exactly what was sent, as the
        dialog's review shows it.  Seen by a later visit (a reload, or another
        device), it claims the answers for nobody."""
        status = self.status or Outcome.DECLINED
        words = _OUTCOME_WORDS[status]
        if self.abandoned:
            said = _ABANDONED_WORDS
        elif not self.answers:
            said = ("Nothing was sent: no question had an answer." if status is not Outcome.FOLLOW_UP
                    else "Your request for more questions was sent; no question had an answer yet.")
        elif seen_later and status is Outcome.ANSWERED:
            said = "These answers were sent, from this page or from another window or device."
        else:
            said = words.sent
        return f"{self._head()}<h1>{words.heading(bool(self.answers))}</h1><p>{said} You can close this page.</p>{self._sent_list()}</main></body></html>"

    def _sent_list(self) -> str:
        if not self.answers:
            return ""
        by_id = {answer.id: answer for answer in self.answers}
        return f"<ul class=\"sent\">{''.join(_sent_row(item, by_id.get(item.id)) for item in self.items)}</ul>"

    def late_html(self, own: "List[AnswerItem]") -> str:
        """The page for a submission that came after the end: its own answers
        were not sent, and why; what it entered, shown back; never another's
        answers as its own."""
        status = self.status or Outcome.DECLINED
        sent = "" if status is Outcome.ANSWERED else f"<h2>What was sent</h2>{self._sent_list() or '<p>Nothing.</p>'}"
        by_id = {answer.id: answer for answer in own}
        mine = ("<p>You had entered nothing on this page.</p>" if not own else
                f"<ul class=\"sent\">{''.join(_entered_row(item, by_id[item.id]) for item in self.items if item.id in by_id)}</ul>")
        return (f"{self._head()}<h1>Your answers were not sent</h1><p>{_OUTCOME_WORDS[status].late}</p>{sent}"
                f"<h2>What you entered here</h2><p>Copy what you need before you close this page.</p>{mine}</main></body></html>")


def _form_body_limit(headers: Any, bounds: _AttachmentBounds) -> int:
    """A form with files may be as large as the files a page takes, and a
    margin for its fields; any other body, MAX_PAYLOAD_BYTES."""
    kind = (_header_values(headers, "Content-Type")[:1] or [""])[0].split(";")[0].strip().lower()
    return bounds.total + MAX_PAYLOAD_BYTES if kind == _MULTIPART else MAX_PAYLOAD_BYTES


def _answers_without_files(answers: "List[AnswerItem]") -> "List[AnswerItem]":
    return [dataclasses.replace(answer, attachments=()) if answer.attachments else answer for answer in answers]


def _readable_answers(items: "List[QuestionItem]", answers: "List[AnswerItem]") -> "List[AnswerItem]":
    """Answers as far as they go: each checked as partial on its own, a
    question whose answer cannot be read left out, never the others with it."""
    kept = []
    for answer in answers:
        try:
            kept += collect_answers(items, [answer], partial=True)
        except AnswerError:
            continue
    return kept


_HIDDEN = "(hidden)"  # a secret, wherever the page would show it or send it back


def _speaks_json(request: _HttpRequest) -> bool:
    """Whether a client sends JSON or asks for it rather than a page."""
    accepts = request.header("Accept")
    return (request.header("Content-Type").split(";")[0].strip().lower() == "application/json"
            or "application/json" in accepts and "text/html" not in accepts)


def _hidden_secrets(items: "List[QuestionItem]", answers: "List[Any]") -> "List[Any]":
    """Answer objects with a secret question's typed text as "(hidden)"."""
    secret = {item.id for item in items if item.secret}
    return [dict(entry, answer=_HIDDEN) if isinstance(entry, dict) and entry.get("id") in secret
            and entry.get("answer") is not None else entry for entry in answers]


def _answers_as_sent(items: "List[QuestionItem]", answers: "List[AnswerItem]") -> "Optional[List[AnswerItem]]":
    """The answers checked as a submission is checked, or None when refused."""
    try:
        return collect_answers(items, answers)
    except AnswerError:
        return None


def _duration(seconds: float) -> str:
    """Seconds as a person reads a wait: "10 min", "1 min 30 s", "45 s"."""
    minutes, rest = divmod(math.ceil(seconds), 60)
    return " ".join(part for part in (f"{minutes} min" if minutes else "", f"{rest} s" if rest or not minutes else "") if part)


def _form_answers(
    items: "List[QuestionItem]", form: "Dict[str, List[str]]", sent: bool = False,
    attached: "Optional[Dict[str, List[Attachment]]]" = None,
) -> "List[AnswerItem]":
    """The form's fields as answers, with the files kept for each question
    (``attached``), for collect_answers() to check; a question left empty
    has none, so that a dismissal does not report it skipped.  A
    question's default, still in its field untouched, is an answer only
    when the person sends the answers (``sent``), and never beside "you
    decide" or "discuss"."""
    answers = []
    attached = attached or {}
    for item in items:
        picked = form.get(f"q:{item.id}", [])
        states = form.get(f"state:{item.id}", [])
        state = states[0] if len(states) == 1 else None  # two at once is the page's own problem
        note = _form_text(form, f"note:{item.id}").strip() or None
        if item.question_type.is_choice:
            custom = any(_names_custom_row(label) for label in picked)
            typed, more = _custom_text(item, _form_text(form, f"other:{item.id}"), custom, bool(picked))
            note = _with_note(note, more)
        else:
            typed = _form_text(form, f"text:{item.id}")
            if item.default is not None and typed.strip() == item.default.strip() and (state or not sent):
                typed = ""
        files = attached.get(item.id, ())
        if picked or (typed or "").strip() or note or state or files:
            answers.append(AnswerItem(item.id, typed if (typed or "").strip() else None, picked or None, note=note,
                                      unanswered=state, attachments=files))
    return answers


def _form_text(form: "Dict[str, List[str]]", key: str) -> str:
    """A text field of the form, its line breaks as "\\n": browsers send
    "\\r\\n", which no answer or note should carry."""
    return (form.get(key) or [""])[0].replace("\r\n", "\n").replace("\r", "\n")


def _form_problems(items: "List[QuestionItem]", form: "Dict[str, List[str]]", partial: bool = False) -> "Dict[int, str]":
    """Every question's problem at once, by its index: the reason of its
    refusal, or the page's own where the page knows better."""
    given = {answer.id: answer for answer in _form_answers(items, form, sent=not partial)}
    problems = {}
    for index, item in enumerate(items):
        states = form.get(f"state:{item.id}", [])
        answer = given.get(item.id)
        if len(states) > 1:
            problems[index] = "two_states"
        elif answer is not None or not partial:
            try:
                collect_answers([item], [answer or AnswerItem(item.id)], partial=partial)
            except AnswerError as err:
                problems[index] = "state_and_answer" if states and err.reason == "two_answers" else err.reason
            else:
                if answer is not None and _too_long(answer):
                    problems[index] = "too_long"
    return problems


def _too_long(answer: AnswerItem) -> bool:
    """Whether an answer's typed text or note is over MAX_TEXT, which the
    page and its JSON interface refuse, as the line prompt does."""
    return any(text is not None and len(text) > MAX_TEXT for text in (answer.answer, answer.note))


def _too_long_error(items: "List[QuestionItem]", answers: "List[AnswerItem]") -> "Optional[str]":
    """The refusal of answers over MAX_TEXT, for a client of the JSON interface, or None."""
    for index, item in enumerate(items):
        answer = next((answer for answer in answers if answer.id == item.id), None)
        if answer is not None and _too_long(answer):
            longest = max(len(text or "") for text in (answer.answer, answer.note))
            return (f"{_where(index, item.question)}: its answer is {longest} characters long; an answer or a note"
                    f" holds at most MAX_TEXT ({MAX_TEXT}) characters. Shorten it.")
    return None


def _html_escaped(text: str) -> str:
    """Model or person text for the page: escaped for HTML, with control
    and bidirectional characters as visible escapes, as the terminal shows
    them, and tabs as spaces."""
    import html

    return html.escape(_visible(text.expandtabs(4) if "\t" in text else text))


# What a refused answer means to the person at the form, by the refusal's
# reason (and the page's own reasons: two states ticked, a state beside an
# answer); {range} is what a number question takes, in words.
_PERSON_WORDS = {
    "required": "This question needs an answer.",
    "custom_without_text": "Type your own answer in the field, or pick one of the options.",
    "two_answers": "Pick one option, or type your own answer, not both.",
    "unknown_option": "That choice is not one of the options here. Pick one of them.",
    "custom_not_allowed": "Pick one of the options; this question takes no answer of your own.",
    "unknown_question": "This answer belongs to no question on the page. Reload the page and try again.",
    "ambiguous_question": "This answer could not be matched to its question. Reload the page and try again.",
    "malformed": "This answer could not be read. Check it and send it again.",
    "not_a_number": "Type a number here, in digits: {range}.",
    "too_long": f"This answer is too long: an answer or a note holds at most {MAX_TEXT} characters. Shorten it.",
    "out_of_range": "That number is not one this question takes: {range}.",
    "two_states": f"Tick \u201c{_STATES[_YOU_DECIDE].label}\u201d or \u201c{_STATES[_DISCUSS].label}\u201d, not both.",
    "attachment_type": ("That file is not one this page takes: attach a picture (PNG, JPEG, GIF or WebP), a PDF or"
                        " a text file. Web pages, SVG drawings, archives and programs are never taken."),
    "attachment_empty": "That file is empty: attach one with something in it.",
    "attachment_too_large": "That file is too large: a file may be {each} at most, and all files together {total}.",
    "too_many_attachments": "Too many files: a question takes {count} at most. Remove some first.",
    "attachment_cut_off": "That file did not arrive whole: attach it again.",
    "state_and_answer": (f"Answer it, or tick \u201c{_STATES[_YOU_DECIDE].label}\u201d or"
                         f" \u201c{_STATES[_DISCUSS].label}\u201d, not both: clear your answer, or untick the box."),
}


def _person_words(
    item: QuestionItem, reason: str, form: "Dict[str, List[str]]", bounds: "Optional[_AttachmentBounds]" = None,
) -> str:
    """A problem in the page's words, for the person; escaped for HTML.  A
    number refused says why in the dialog's words; a file, the page's bounds."""
    if reason in ("not_a_number", "out_of_range"):
        number = _number_refusal(item, _form_text(form, f"text:{item.id}"))
        if number is not None:
            return _html_escaped(number)
    words = _PERSON_WORDS.get(reason, _PERSON_WORDS["malformed"])
    if "{" in words:
        words = words.format(range=_number_range(item), **(bounds or _AttachmentBounds()).words())
    return _html_escaped(words)


# What the page says of a form with files that did not arrive, or was too
# large to be read: nothing in it was taken.
_UPLOAD_WORDS = {
    "too_large": ("Your files were too large to send, so nothing was taken from this sending: a file may be {each}"
                  " at most, and all files together {total}. Your entries as last kept are below: attach smaller"
                  " or fewer files, and send again."),
    "cut_off": ("What you sent did not arrive whole (the connection was cut), so nothing was taken from it. Your"
                " entries are below, as far as they arrived: attach your files again, and send again."),
}


def _control_id(index: int, row: int = 0) -> str:
    """The id of a question's control: its first one is where a problem's link leads."""
    return f"answer-{index}" if row == 0 else f"answer-{index}-{row}"


# How each kind of question takes its answer on the page (a method of
# _WebEntry each, registered beside it); a kind not here is typed.
_WEB_ENTRIES = _Registry()


class _WebEntry:
    """One question's entry on the page, as its kind draws it: where it is,
    the last form's values, and the attributes that tie its controls to
    its problem, for a screen reader."""

    __slots__ = ("form", "index", "item", "tie")

    def __init__(
        self, index: int, item: QuestionItem, form: "Dict[str, List[str]]", has_problem: bool, retype: bool = False,
    ) -> None:
        self.index, self.item, self.form = index, item, form
        said = " ".join(([f"problem-{index}"] if has_problem else []) + ([f"retype-{index}"] if retype else [])
                        + ([f"takes-{index}"] if item.question_type is QuestionType.NUMBER else []))
        self.tie = (" aria-invalid=\"true\"" if has_problem else "") + (f" aria-describedby=\"{said}\"" if said else "")

    def value(self, field: str) -> str:
        """A field of this question in the last form, escaped for HTML; the
        typed field of a fresh page holds the question's default."""
        from html import escape

        values = self.form.get(f"{field}:{self.item.id}")
        if values is None and field == "text" and not self.item.secret:
            return escape(self.item.default or "")
        return escape((values or [""])[0])

    def name(self, field: str) -> str:
        """The form's name for a field of this question, escaped for HTML."""
        from html import escape

        return escape(f"{field}:{self.item.id}")

    def typed_field(self, field: str, attributes: str) -> str:
        """A one-line field for typing: masked, and never refilled, for a secret."""
        name = self.name(field)
        if self.item.secret:
            return f"<input type=\"password\" autocomplete=\"off\" name=\"{name}\" value=\"\"{attributes}{self.tie}>"
        return f"<input name=\"{name}\" value=\"{self.value(field)}\"{attributes}{self.tie}>"

    @_WEB_ENTRIES.on(QuestionType.TEXT)
    def typed_entry(self) -> "List[str]":
        item = self.item
        placeholder = f" placeholder=\"{_html_escaped(item.placeholder)}\"" if item.placeholder else ""
        if item.secret:
            return [self.typed_field("text", f" class=\"typed\" id=\"{_control_id(self.index)}\" dir=\"auto\""
                                      f" aria-label=\"Your answer (hidden as you type)\"{placeholder}")]
        return [(f"<textarea id=\"{_control_id(self.index)}\" name=\"{self.name('text')}\" rows=\"3\" dir=\"auto\""
                 f" aria-label=\"Your answer\"{placeholder}{self.tie}>{self.value('text')}</textarea>")]

    @_WEB_ENTRIES.on(QuestionType.SINGLE_CHOICE, QuestionType.MULTI_CHOICE)
    def choice_rows(self) -> "List[str]":
        """The rows of a choice question: the rows every way of asking shows,
        each in its own direction, its control at the start of it."""
        from html import escape

        item = self.item
        kind = "checkbox" if item.question_type is QuestionType.MULTI_CHOICE else "radio"
        picked = self.form.get(f"q:{item.id}", [])
        rows = []
        for number, row in enumerate(_question_rows(item)):
            checked = " checked" if row.label in picked else ""
            control = (f"<input type=\"{kind}\" id=\"{_control_id(self.index, number)}\" name=\"{self.name('q')}\""
                       f" value=\"{escape(row.label)}\"{checked}{self.tie}>")
            rows.append(_web_option(item, row, control) if row.option is not None else self.custom_row(control, number))
        return rows

    @_WEB_ENTRIES.on(QuestionType.NUMBER)
    def number_entry(self) -> "List[str]":
        """One number, with the keyboard for it, its bounds, and its unit beside it."""
        item = self.item
        unit = _html_escaped(item.unit or "")
        # A text field, never type="number": browsers drop a decimal comma
        # and clear what is not a number before the server can read it.
        attributes = (("" if item.secret else " type=\"text\"")
                      + f" id=\"{_control_id(self.index)}\" class=\"number\"{_web_input_mode(item)}"
                      f" autocomplete=\"off\" spellcheck=\"false\"")
        label = f"Your answer in {unit}" if unit else "Your answer"
        field = self.typed_field("text", f"{attributes} aria-label=\"{label}\"")
        beside = f" <span class=\"unit\" dir=\"auto\">{unit}</span>" if unit else ""
        takes = f"<p class=\"desc takes\" id=\"takes-{self.index}\">{_html_escaped(_number_words(item))}.</p>"
        return [f"<span class=\"number\">{field}{beside}</span>{takes}"]

    def states(self) -> str:
        """You decide and Let's discuss, instead of an answer: a check box each,
        so that neither needs script; the script keeps them exclusive, with each
        other and with the answer."""
        item, index = self.item, self.index
        ticked = self.form.get(f"state:{item.id}", [])
        boxes = "".join(
            f"<label class=\"option\"><input class=\"state\" type=\"checkbox\" id=\"state-{index}-{state.name}\""
            f" name=\"{self.name('state')}\" value=\"{state.name}\"{' checked' if state.name in ticked else ''}>"
            f"<span class=\"text\">{state.label}</span></label>"
            for state in (_STATES[_YOU_DECIDE], _STATES[_DISCUSS])
        )
        return (f"<div class=\"states\" role=\"group\" aria-labelledby=\"states-{index}\">"
                f"<span class=\"desc\" id=\"states-{index}\">Or, instead of answering:</span>{boxes}</div>")

    def custom_row(self, control: str, number: int) -> str:
        label = _html_escaped(CUSTOM_RESPONSE_LABEL)
        hint = _html_escaped(self.item.placeholder or "Your own answer")
        kind = "" if self.item.secret else " type=\"text\""
        return (f"<label class=\"option\">{control}<span class=\"text\">{label}</span></label>"
                + self.typed_field("other", f" class=\"other\"{kind} dir=\"auto\" placeholder=\"{hint}\""
                                    f" data-row=\"{_control_id(self.index, number)}\" aria-label=\"{label}\""))


# What a file picker offers: the kinds the page takes (a phone's picker then
# offers its photos and camera); the server reads the type from the bytes.
_WEB_ACCEPT = "image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain,.txt,.md,.log,.csv"
# A kept picture is drawn inside the page up to this size; a larger one is
# named only, so that a page shown again never carries megabytes to a phone.
_WEB_PREVIEW_BYTES = 2 * 1024 * 1024


class _WebFiles:
    """One question's files on the page: those kept, each with its picture
    when its bytes are one, and a Remove button; a file picker and the
    camera, which work without script; with it, the files picked are shown
    before they are sent, and a paste or a drop picks them."""

    __slots__ = ("bounds", "index", "item", "kept")

    def __init__(self, index: int, item: QuestionItem, kept: "Sequence[Attachment]", bounds: _AttachmentBounds) -> None:
        self.index, self.item, self.kept, self.bounds = index, item, kept, bounds

    def html(self, has_problem: bool) -> str:
        from html import escape

        index, name = self.index, escape(f"file:{self.item.id}")
        rows = "".join(self.row(place, attachment) for place, attachment in enumerate(self.kept))
        kept = f"<ul class=\"attached\" aria-label=\"Files attached\">{rows}</ul>" if rows else ""
        said = f"files-about-{index}" + (f" problem-{index}" if has_problem else "")
        tie = f" aria-describedby=\"{said}\"" + (" aria-invalid=\"true\"" if has_problem else "")
        words = self.bounds.words()
        return (f"<div class=\"files\">{kept}<div class=\"pickers\">"
                f"<label class=\"pick\" for=\"file-{index}\">Attach a picture or a file</label>"
                f"<input type=\"file\" id=\"file-{index}\" name=\"{name}\" multiple accept=\"{_WEB_ACCEPT}\"{tie}>"
                f"<label class=\"pick camera\" for=\"camera-{index}\">Take a photo</label>"
                f"<input type=\"file\" class=\"camera\" id=\"camera-{index}\" name=\"{name}\" accept=\"image/*\""
                f" capture=\"environment\"{tie}></div>"
                f"<p class=\"desc\" id=\"files-about-{index}\">Pictures (PNG, JPEG, GIF, WebP), PDF or text: up to"
                f" {words['count']} files, {words['each']} each.<span class=\"scripted\" hidden> You can also paste or"
                f" drop them here.</span></p><p class=\"error\" role=\"alert\" hidden></p>"
                f"<ul class=\"picked\" aria-label=\"Files to send\"></ul></div>")

    def row(self, place: int, attachment: Attachment) -> str:
        """A kept file: its picture drawn from its own bytes, only when they
        are a picture's (never SVG, never HTML), its name, kind and size."""
        import base64
        from html import escape

        picture = ""
        if attachment.is_image and attachment.size <= _WEB_PREVIEW_BYTES:
            data = base64.b64encode(attachment.data).decode("ascii")
            picture = f"<img class=\"thumb\" alt=\"\" src=\"data:{attachment.media_type};base64,{data}\">"
        name = _html_escaped(attachment.name)
        return (f"<li data-size=\"{attachment.size}\">{picture}<span class=\"file\"><bdi>{name}</bdi> <span class=\"desc\">{attachment.media_type},"
                f" {_size_words(attachment.size)}</span></span><button type=\"submit\" name=\"action\""
                f" value=\"remove:{place}:{escape(self.item.id)}\">Remove<span class=\"vh\"> {name}</span></button></li>")


def _web_fieldset(
    index: int, item: QuestionItem, form: "Dict[str, List[str]]", reason: "Optional[str]", retype: bool = False,
    notes: bool = True, files: "Optional[_WebFiles]" = None,
) -> str:
    mark = " <span class=\"required\" title=\"needs an answer\">*</span>" if item.required else ""
    parts = [
        f"<fieldset id=\"question-{index}\"><legend dir=\"auto\">{_html_escaped(item.header or f'Question {index + 1}')}{mark}</legend>",
        f"<p class=\"question\" dir=\"auto\">{_html_escaped(item.question)}</p>",
    ]
    if item.purpose:
        parts.append(f"<p class=\"purpose\" dir=\"auto\">{_html_escaped(item.purpose)}</p>")
    if reason is not None:
        bounds = files.bounds if files is not None else None
        parts.append(f"<p class=\"error\" id=\"problem-{index}\">{_person_words(item, reason, form, bounds)}</p>")
    if retype:
        parts.append(f"<p class=\"error\" id=\"retype-{index}\">{_WEB_RETYPE}</p>")
    entry = _WebEntry(index, item, form, reason is not None, retype)
    parts.append("<div class=\"entry\">")
    parts.extend(_WEB_ENTRIES.get(item.question_type, _WebEntry.typed_entry)(entry))
    parts.append(f"</div>{'' if files is None else files.html(reason is not None)}{entry.states()}")
    note = entry.value("note")
    if notes:  # a form's answer has no place for a note: none is offered where it would be lost
        parts.append(f"<details class=\"addnote\"{' open' if note else ''}><summary>Add a note</summary>"
                     f"<textarea name=\"{entry.name('note')}\" rows=\"2\" dir=\"auto\" aria-label=\"Your note\">"
                     f"{note}</textarea></details>")
    parts.append("</fieldset>")
    return "".join(parts)


def _web_input_mode(item: QuestionItem) -> str:
    """The keyboard a phone shows: digits alone for whole numbers, with a
    decimal point for others; none where a number may be negative, since
    both of those keyboards lack the minus sign on some phones."""
    if item.minimum is None or item.minimum < 0:
        return ""
    return " inputmode=\"decimal\""


def _kept_form(items: "List[QuestionItem]", form: "Dict[str, List[str]]") -> "Dict[str, List[str]]":
    """What of a page's form is kept beyond the request that sent it: every
    entry but the page's token, the action, and text typed for a secret
    question, which leaves the page only when the person sends it."""
    dropped = {"token", "action"}
    dropped.update(f"{field}:{item.id}" for item in items if item.secret for field in ("text", "other"))
    return {key: values for key, values in form.items() if key not in dropped}


def _secret_typed(item: QuestionItem, form: "Dict[str, List[str]]") -> bool:
    """Whether the form holds text typed for a secret question."""
    return any((form.get(f"{field}:{item.id}") or [""])[0].strip() for field in ("text", "other"))


_WEB_RETYPE = "What you typed here is secret, so it is not shown again: type it again."


def _web_option(item: QuestionItem, row: _Row, control: str) -> str:
    option = row.option
    assert option is not None, "called for an option's row only"
    badge = f" <span class=\"badge\" dir=\"ltr\">{RECOMMENDED_SUFFIX}</span>" if _is_recommended(item, row) else ""
    about = f"<span class=\"desc\" dir=\"auto\">{_html_escaped(option.description)}</span>" if option.description else ""
    preview = ("" if not option.preview else "<details class=\"preview\"><summary>Preview</summary>"
               f"<div class=\"md\" dir=\"auto\">{_markdown_html(option.preview)}</div></details>")
    return (f"<div dir=\"auto\"><label class=\"option\">{control}<span class=\"text\">{_html_escaped(row.label)}"
            f"{badge}{about}</span></label>{preview}</div>")


def _sent_row(item: QuestionItem, answer: "Optional[AnswerItem]") -> str:
    """One answer as sent, each text isolated in its own direction, so a
    Hebrew question never reorders an English answer or note; a number
    with its unit, as the model reads it."""
    if answer is not None and _gives_answer(answer):
        read = _as_read(item, answer)
        parts = [_isolated(_visible(label)) for label in read.selected or ()]
        parts += [] if read.answer is None else [_isolated(_HIDDEN if item.secret else _said(read.answer, True))]
        shown = ", ".join(parts)
    elif answer is not None and answer.unanswered in _STATES and _STATES[answer.unanswered].settles:
        shown = _isolated(f"({_STATES[answer.unanswered].label})")
    else:  # what the review says of a question without an answer: skipped, or with a note alone, not answered
        said = None if answer is None or answer.unanswered is None else dataclasses.replace(answer, note=None)
        shown = _isolated(_shown_answer(item, said))
    row = f"<li><bdi>{_html_escaped(_web_name(item))}</bdi>: {shown}"
    if answer is not None and answer.note is not None:
        row += f"; note: {_isolated(_said(answer.note, True))}"
    for attachment in () if answer is None else answer.attachments:
        row += f"; attached: {_isolated(attachment.name)} ({attachment.media_type}, {_size_words(attachment.size)})"
    return row + "</li>"


_WEB_NAME_CELLS = 80  # a question's text, where a list names it, is cut this short


def _web_name(item: QuestionItem) -> str:
    """How a list names a question: its header, else its text, cut short."""
    return _clipped(" ".join((item.header or item.question).split()), _WEB_NAME_CELLS)


def _isolated(text: str) -> str:
    return f"<bdi>{_html_escaped(text)}</bdi>"


def _entered_row(item: QuestionItem, answer: AnswerItem) -> str:
    """What the person entered on one question, in full, for them to copy:
    the picks, then what they typed and their note, line breaks kept."""
    picks = [_isolated(label) for label in answer.selected or () if not _names_custom_row(label)]
    if answer.unanswered in _STATES and answer.unanswered != _SKIPPED:
        picks.append(_isolated(f"({_STATES[answer.unanswered].label})"))
    typed = _HIDDEN if item.secret and answer.answer is not None else answer.answer
    row = f"<li><bdi>{_html_escaped(_web_name(item))}</bdi>: {', '.join(picks)}"
    for name, text in (("Typed", typed), ("Note", answer.note)):
        if text is not None and text.strip():
            row += f"<div class=\"typed\">{name}: <div dir=\"auto\">{_html_escaped(text)}</div></div>"
    return row + "</li>"


# A preview's Markdown, drawn by askq itself in a small safe subset: every
# text is escaped, and only the tags below are ever written.

def _markdown_html(text: str) -> str:
    """Fenced code, headings, lists and paragraphs, with inline code and
    emphasis; anything else is text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(4).split("\n")
    blocks, at = [], 0
    while at < len(lines):
        block, at = _MARKDOWN_BLOCKS[_markdown_kind(lines[at])](lines, at)
        blocks.append(block)
    return "".join(blocks)


def _markdown_kind(line: str) -> str:
    if not line.strip():
        return "blank"
    if re.match(r" {0,3}(```|~~~)", line):
        return "fence"
    if re.match(r" {0,3}#{1,6}(\s|$)", line):
        return "heading"
    return "list" if _markdown_item(line) else "text"


def _markdown_item(line: str) -> "Optional[Tuple[str, str]]":
    """A list item's kind of list and its text, or None."""
    found = re.match(r" {0,3}([-*+]|\d{1,9}[.)])[ \t]+(\S.*)", line)
    return None if found is None else ("ul" if found.group(1) in "-*+" else "ol", found.group(2))


_MARKDOWN_BLOCKS = _Registry()  # a block's reader, by the kind of its first line


@_MARKDOWN_BLOCKS.on("blank")
def _markdown_blank(lines: "List[str]", at: int) -> "Tuple[str, int]":
    return "", at + 1


@_MARKDOWN_BLOCKS.on("fence")
def _markdown_fence(lines: "List[str]", at: int) -> "Tuple[str, int]":
    fence = lines[at].strip()[0] * 3
    end = next((n for n in range(at + 1, len(lines)) if re.fullmatch(f" {{0,3}}{fence}+\\s*", lines[n])), len(lines))
    return f"<pre><code>{_html_escaped(chr(10).join(lines[at + 1:end]))}</code></pre>", end + 1


@_MARKDOWN_BLOCKS.on("heading")
def _markdown_heading(lines: "List[str]", at: int) -> "Tuple[str, int]":
    marks, _, title = lines[at].strip().partition(" ")
    title = title.strip().rstrip("#").strip()
    level = min(len(marks) + 2, 6)  # below the page's own headings
    return (f"<h{level}>{_markdown_inline(title)}</h{level}>" if title else ""), at + 1


@_MARKDOWN_BLOCKS.on("list")
def _markdown_list(lines: "List[str]", at: int) -> "Tuple[str, int]":
    first = _markdown_item(lines[at])
    assert first is not None, "called on a list item"
    kind, entries = first[0], []
    while at < len(lines):
        found = _markdown_item(lines[at])
        if found is not None and found[0] == kind:
            entries.append(found[1])
        elif found is None and lines[at].startswith("  ") and lines[at].strip():
            entries[-1] += "\n" + lines[at].strip()  # a line that goes on the item above
        else:
            break
        at += 1
    return f"<{kind}>{''.join(f'<li>{_markdown_inline(entry)}</li>' for entry in entries)}</{kind}>", at


@_MARKDOWN_BLOCKS.on("text")
def _markdown_paragraph(lines: "List[str]", at: int) -> "Tuple[str, int]":
    start, at = at, at + 1
    while at < len(lines) and _markdown_kind(lines[at]) == "text":
        at += 1
    return f"<p>{_markdown_inline(chr(10).join(lines[start:at]))}</p>", at


def _markdown_inline(text: str) -> str:
    """Inline code and emphasis, the rest escaped as text."""
    parts = re.split(r"(?s)(`+)(.+?)\1", text)  # text, backticks, code, text, ...
    out = []
    for at in range(0, len(parts), 3):
        escaped = _html_escaped(parts[at])
        escaped = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"<strong>\2</strong>", escaped)
        out.append(re.sub(r"(?<![\w*])([*_])(?=[^\s*_])(.+?)(?<=[^\s*_])\1(?![\w*])", r"<em>\2</em>", escaped))
        if at + 2 < len(parts):
            out.append(f"<code>{_html_escaped(parts[at + 2])}</code>")
    return "".join(out)


_WEB_GRACE_SECONDS = 2.0  # after the answers are in, later requests learn so
_ABANDONED_WORDS = ("The agent is no longer waiting for these answers: they did not reach it."
                    " What you entered is below, to copy if you still need it.")


class _PageHost:
    """Where a page is served, as its ask and the calls waiting on it see
    it: the page, its URL, whether the person is done there (or it was idle
    past its time), its grace period and its end."""

    page: "_WebPage"
    base: str  # the server's address, which every path of the page follows
    url: str
    timeout: "Optional[float]"
    ask: "Optional[_Ask]" = None  # the ask it serves, under serve

    def done(self) -> bool:
        return self.page.expire_if_idle(self.timeout)

    def taps(self) -> "List[_TapAction]":
        """Each option as an answer of its own, for a notification, when the
        page asks one single-choice question; else none."""
        item = _one_tap_question(self.page.items)
        options = (item.options or []) if item is not None else []
        return [_TapAction(option.label, f"{self.base}{_TAP_PATH}?tap={self.page.tap_token(index)}")
                for index, option in enumerate(options)]

    def serve_grace(self) -> QuestionOutput:
        """Go on serving a little while, so that a second device learns the
        answers are in; the outcome."""
        raise NotImplementedError

    def end(self) -> None:
        """Stop serving the page."""
        raise NotImplementedError


class _WebSession(_PageHost):
    """A page on a server of its own, from the wait for the person to the
    grace period after it, in which a second device learns that the
    answers are in (409) rather than finding nothing there."""

    # The timers of the grace periods under way, for a process that must not
    # exit before they end.
    _lingering: ClassVar["List[Any]"] = []

    def __init__(self, items: "List[QuestionItem]", host: str, port: int, timeout: "Optional[float]" = None,
                 token: str = "") -> None:
        self.page = _WebPage(items, timeout, token)
        self.timeout = timeout  # idle seconds before the page ends as timed out
        self.server = _HttpServer(_HttpCore(self.page), host, port)
        self.base = f"http://{_reachable_address(host)}:{self.server.port}"
        self.url = f"{self.base}/?token={self.page.token}"

    def wait(self, cancel: Any = None) -> None:
        """Wait until the page is done; once ``cancel`` (an Event) is set,
        end the page and raise _Cancelled."""
        while not self.done():
            if cancel is not None and cancel.is_set():
                self.end()
                raise _Cancelled
            time.sleep(_POLL_SECONDS / 5)

    def end(self) -> None:
        """Stop serving now: the page is withdrawn."""
        self.server.stop()

    def serve_grace(self) -> QuestionOutput:
        """Go on serving for the grace period, in the background, then stop;
        the outcome."""
        self.after_grace(self.end)
        return self.page.outcome()

    @classmethod
    def after_grace(cls, then: "Callable[[], None]") -> None:
        """Call ``then`` in the background once the grace period is over."""
        import threading

        def over() -> None:
            try:
                then()
            finally:
                cls._lingering.remove(timer)

        timer = threading.Timer(_WEB_GRACE_SECONDS, over)
        cls._lingering.append(timer)
        timer.start()

    @classmethod
    def wait_out_graces(cls) -> None:
        """Wait until every grace period has ended: a process that is ending
        can start no thread to serve a request, so it waits first."""
        for timer in list(cls._lingering):
            timer.join()


def prompt_web(
    questions: "Union[QuestionOutput, Sequence[QuestionItem]]",
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    timeout: "Optional[float]" = None,
    on_ready: "Optional[Callable[[str], None]]" = None,
    store: "Optional[str]" = None,
    state_key: "Optional[str]" = None,
) -> QuestionOutput:
    """Ask the questions on a web page; return a new output with the outcome.

    Serves one page (and a JSON interface: ``GET /questions``, ``POST
    /answers``, ``POST /dismiss``) on ``host``:``port`` (a free port by
    default) until the person submits or dismisses it, or ``timeout`` idle
    seconds pass.  ``on_ready(url)`` is called once the server listens; the
    URL carries a one-time token that every request must show.  The
    outcome is that of prompt(): "answered", "declined" or "timed_out",
    with the answers of the person's last form on a dismissal or a timeout.
    The server stays up a little longer, to tell a second device (409)
    that the answers are in.

    With ``store`` (an SQLite file's path, or ``redis://HOST:PORT/DB``) the
    questions are an ask kept there: asked again after a restart, or by
    another process with the same store and ``state_key``, they find the
    same page (at the same URL, given the same port and key), what was
    entered on it, or its answers.  A store that cannot be used raises
    ValueError, saying why.
    """
    on_page = None if on_ready is None else (lambda page: on_ready(page.url))
    return _prompt_on_a_page(_question_list(questions), host, port, timeout, on_page, store, state_key)


def _prompt_on_a_page(
    items: "List[QuestionItem]", host: str, port: int, timeout: "Optional[float]",
    on_page: "Optional[Callable[[_PageHost], None]]", store: "Optional[str]", state_key: "Optional[str]",
) -> QuestionOutput:
    """prompt_web(), telling ``on_page`` of the page once it is served (ask
    --web tells the person of its URL and its taps)."""
    if store is not None:
        output = QuestionOutput(list(items), [], None, *_heading(items))
        return _prompt_on_stored_page(output, host, port, timeout, on_page, store, state_key)
    return _prompt_web(items, host=host, port=port, timeout=timeout, on_page=on_page)


def _prompt_web(
    items: "List[QuestionItem]", host: str = "127.0.0.1", port: int = 0, timeout: "Optional[float]" = None,
    on_ready: "Optional[Callable[[str], None]]" = None, cancel: Any = None,
    on_page: "Optional[Callable[[_PageHost], None]]" = None,
) -> QuestionOutput:
    session = _WebSession(items, host, port, timeout)
    try:
        if on_ready is not None:
            on_ready(session.url)
        if on_page is not None:
            on_page(session)
        session.wait(cancel)
    except KeyboardInterrupt:  # Ctrl-C where the page was asked from: a dismissal, as in prompt()
        session.page.end(Outcome.DECLINED, session.page.kept_answers())
        session.end()
        return session.page.outcome()
    except BaseException:
        session.end()
        raise
    return session.serve_grace()


# ===========================================================================
# The in-chat view: an MCP Apps resource
#
# Hosts that render MCP Apps draw this one HTML document inside the
# conversation.  It holds no form of its own: the server draws the page's
# fieldsets into each result for it, and its script only puts them in place,
# speaks the Apps bridge (JSON-RPC over postMessage) and hands what the
# person did to the tool only views may call, which checks it as the page
# does and gives back the text to send as the person's message.

_VIEW_URI = "ui://askq/questions"
_VIEW_MIME = "text/html;profile=mcp-app"
_APPS_EXTENSION = "io.modelcontextprotocol/ui"
_VIEW_TOOL = "ask_questions_view"
_VIEW_META = "askq/view"  # where a result carries what the view draws
_VIEW_BRIDGE_VERSION = "2026-01-26"
_VIEW_DISMISSED_FORM = "; none of your answers go with it"
# What the view may attach, in one file and in all: what one call of its
# tool carries as base64 (a third larger than the bytes) beside the
# questions, within the bound every transport puts on one message.
_VIEW_FILE_BYTES = MAX_PAYLOAD_BYTES // 2
# The refusals of a file the view tells at once, before anything is sent, in the page's words.
_VIEW_FILE_REFUSALS = ("attachment_empty", "attachment_too_large", "too_many_attachments", "attachment_cut_off")
_VIEW_REPLIES = ("message", "elicitation")  # what the view sends for the person: a user message, or a form's answer
_VIEW_CALL_TEXT = (
    "The questions are shown to the user in the conversation, in askq's view, and nobody has answered yet."
    " The user's answers will arrive as the user's next message. End your turn now: do not answer the"
    " questions yourself, do not assume any answers, and do not go on with work that depends on them."
)

# The page's style, its colours chosen by the host's theme (the view follows
# the conversation, not the browser), and the host's fonts by name only:
# nothing is fetched.
_VIEW_STYLE = """
:root[data-theme=light] { color-scheme: light; }
body { font-family: var(--font-sans, system-ui, sans-serif); color: var(--color-text-primary, var(--fg));
       background: var(--color-background-primary, var(--bg)); }
.md { font-family: var(--font-mono, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace); }
main { max-width: none; padding: 0.5rem; }
h1 { font-size: 1.15rem; margin: 0.2rem 0 0.5rem; }
.states { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; margin-top: 0.4rem; color: var(--muted); }
.states label { display: inline-flex; gap: 0.4rem; align-items: center; }
"""

# The view's script: the bridge's handshake, the questions put in place,
# the theme and fonts of the host, the frame fitted to the view, and what
# the person did sent to the server's tool and, once checked, to the chat.
_VIEW_SCRIPT = """
(function () {
  "use strict";
  var root = document.documentElement, view = document.getElementById("view");
  var next = 1, waiting = {}, call = null, busy = false, shown = 0;
  // A form the host forwarded for this view to draw: its questions, and how to answer it.
  var asked = null, answering = null;
  function post(message) { window.parent.postMessage(message, "*"); }
  function notify(method, params) { post({jsonrpc: "2.0", method: method, params: params || {}}); }
  function request(method, params) {
    var id = next++;
    post({jsonrpc: "2.0", id: id, method: method, params: params});
    return new Promise(function (resolve, reject) { waiting[id] = [resolve, reject]; });
  }
  function context(given) {
    if (!given) { return; }
    if (given.theme === "light" || given.theme === "dark") { root.dataset.theme = given.theme; }
    var values = given.styles && given.styles.variables;
    Object.keys(values || {}).forEach(function (name) {
      if (/^--(color|font)-[a-z0-9-]+$/.test(name) && typeof values[name] === "string") {
        root.style.setProperty(name, values[name]);
      }
    });
  }
  function draw(html) {
    view.innerHTML = html;
    boxes();
    var first = document.getElementById("problems");
    if (first) { first.focus(); }
    size();
  }
  function say(text) {
    var line = document.getElementById("said");
    if (line) { line.textContent = text; line.hidden = !text; }
  }
  var handlers = {
    "ui/notifications/tool-input": function (params) { call = params.arguments || null; },
    "ui/notifications/tool-result": function (params) {
      var drawn = params._meta && params._meta[META];
      draw(drawn ? drawn.html : document.getElementById("elsewhere").innerHTML);
    },
    "ui/notifications/host-context-changed": context,
    "ui/resource-teardown": function () {
      if (answering) { answering({action: "cancel"}); asked = answering = null; }
      return {};
    },
    "elicitation/create": function (params) {
      var drawn = params._meta && params._meta[META];
      if (!drawn || !drawn.asked || typeof drawn.html !== "string") {
        return Promise.reject({code: -32602, message: "This view draws askq's own forms only."});
      }
      if (answering) { answering({action: "cancel"}); }
      asked = drawn.asked;
      busy = false;
      draw(drawn.html);
      return new Promise(function (resolve) { answering = resolve; });
    },
    "ping": function () { return {}; }
  };
  window.addEventListener("message", function (event) {
    var message = event.data;
    if (event.source !== window.parent || !message || message.jsonrpc !== "2.0") { return; }
    if (message.method === undefined) {
      var pending = waiting[message.id];
      delete waiting[message.id];
      if (pending) { pending[message.error ? 1 : 0](message.error || message.result); }
      return;
    }
    var handler = handlers[message.method];
    var result = handler ? handler(message.params || {}) : undefined;
    if (message.id === undefined) { return; }
    if (!handler) {
      post({jsonrpc: "2.0", id: message.id, error: {code: -32601, message: "Method not found"}});
      return;
    }
    Promise.resolve(result).then(function (value) {
      post({jsonrpc: "2.0", id: message.id, result: value || {}});
    }, function (error) { post({jsonrpc: "2.0", id: message.id, error: error}); });
  });
  function fields() {
    var data = {};
    new FormData(document.getElementById("form")).forEach(function (value, key) {
      if (typeof value === "string") { (data[key] = data[key] || []).push(value); }
    });
    return data;
  }
  // Files: read here, kept by question across the forms the server draws
  // again, and sent as base64 with the answers; a picture drawn only from
  // its own first bytes (never its name or its type), never anything else.
  var picked = {}, reading = 0, WORDS = FILE_WORDS, MOST = FILE_COUNT, EACH = FILE_BYTES;
  var SIGNS = [["image/png", 0, [137, 80, 78, 71]], ["image/jpeg", 0, [255, 216, 255]],
               ["image/gif", 0, [71, 73, 70, 56]], ["image/webp", 8, [87, 69, 66, 80]]];
  function sniff(data) {
    var head = atob(data.slice(0, 24)), found = null;
    SIGNS.forEach(function (sign) {
      if (sign[2].every(function (byte, at) { return head.charCodeAt(sign[1] + at) === byte; })) { found = sign[0]; }
    });
    return found;
  }
  function bytes(size) {
    return size < 1024 ? size + " bytes" : size < 1048576 ? (size / 1024).toFixed(1) + " KB" :
      (size / 1048576).toFixed(1) + " MB";
  }
  function question(box) { return box.querySelector("input[type=file]").name.slice(5); }
  function listed(box) {
    var list = box.querySelector("ul.picked"), id = question(box);
    list.textContent = "";
    (picked[id] || []).forEach(function (file, place) {
      var row = document.createElement("li"), name = document.createElement("span");
      var drop = document.createElement("button"), hidden = document.createElement("span");
      var type = sniff(file.data);
      if (type) {
        var picture = document.createElement("img");
        picture.className = "thumb"; picture.alt = ""; picture.src = "data:" + type + ";base64," + file.data;
        row.appendChild(picture);
      }
      name.className = "file"; name.dir = "auto"; name.textContent = file.name + " (" + bytes(file.size) + ")";
      drop.type = "button"; drop.textContent = "Remove"; hidden.className = "vh"; hidden.textContent = " " + file.name;
      drop.appendChild(hidden);
      drop.addEventListener("click", function () { picked[id].splice(place, 1); listed(box); });
      row.appendChild(name); row.appendChild(drop); list.appendChild(row);
    });
    size();
  }
  function refuse(box, reason) {
    var alert = box.querySelector("p.error");
    alert.textContent = WORDS[reason] || ""; alert.hidden = !reason;
  }
  function add(box, files) {
    var id = question(box);
    refuse(box, "");
    Array.prototype.forEach.call(files, function (file) {
      var kept = picked[id] = picked[id] || [];
      if (!file.size) { refuse(box, "attachment_empty"); return; }
      if (file.size > EACH) { refuse(box, "attachment_too_large"); return; }
      if (kept.length >= MOST) { refuse(box, "too_many_attachments"); return; }
      var entry = {name: file.name, data: "", size: file.size};
      kept.push(entry);
      reading += 1;
      file.arrayBuffer().then(function (buffer) {
        var all = new Uint8Array(buffer), text = "";
        for (var at = 0; at < all.length; at += 32768) { text += String.fromCharCode.apply(null, all.subarray(at, at + 32768)); }
        entry.data = btoa(text); reading -= 1; listed(box);
      }, function () { kept.splice(kept.indexOf(entry), 1); reading -= 1; refuse(box, "attachment_cut_off"); });
    });
  }
  function boxes() {
    view.querySelectorAll("div.files").forEach(function (box) {
      box.querySelector(".scripted").hidden = false;
      listed(box);
    });
  }
  view.addEventListener("change", function (event) {
    var box = event.target.type === "file" && event.target.closest("div.files");
    if (box) { add(box, event.target.files); event.target.value = ""; }
  });
  view.addEventListener("dragover", function (event) { if (event.target.closest("fieldset")) { event.preventDefault(); } });
  view.addEventListener("drop", function (event) {
    var box = event.target.closest("fieldset") && event.target.closest("fieldset").querySelector("div.files");
    if (box && event.dataTransfer && event.dataTransfer.files.length) { event.preventDefault(); add(box, event.dataTransfer.files); }
  });
  document.addEventListener("paste", function (event) {
    var files = event.clipboardData && event.clipboardData.files;
    var at = document.activeElement && document.activeElement.closest && document.activeElement.closest("fieldset");
    var box = (at || view).querySelector("div.files");
    if (box && files && files.length) { event.preventDefault(); add(box, files); }
  });
  function act(action) {
    if (busy) { return; }
    if (!call && !asked) { say("The questions have not fully reached this view yet: try again in a moment."); return; }
    if (reading) { say("Your files are still being read: try again in a moment."); return; }
    busy = true;
    say("Sending\\u2026");
    var given = asked ? {asked: asked, action: action, form: fields(), reply: "elicitation"} :
      {call: call, action: action, form: fields(), files: picked};
    request("tools/call", {name: TOOL, arguments: given}).then(function (result) {
      var done = result && result.structuredContent;
      if (!done || !done.html) { throw new Error("no answer from askq"); }
      if (asked && done.answer) {
        answering(done.answer);
        asked = answering = null;
        draw(done.html);
        return;
      }
      if (!done.message) { busy = false; draw(done.html); return; }
      var content = [{type: "text", text: done.message}].concat(done.files || []);
      return request("ui/message", {role: "user", content: content}).then(function (sent) {
        if (sent && sent.isError) { throw new Error("the conversation did not take the message"); }
        picked = {};
        draw(done.html);
      });
    }).catch(function () {
      busy = false;
      say("Your answers could not be sent. They are still here: try again.");
    });
  }
  view.addEventListener("submit", function (event) { event.preventDefault(); });
  view.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target.closest("button[data-action]") : null;
    if (target) { event.preventDefault(); act(target.dataset.action); return; }
    target = event.target.closest ? event.target.closest("button[data-show]") : null;
    if (target) {
      event.preventDefault();
      document.getElementById("confirm").hidden = target.dataset.show !== "confirm";
      document.getElementById("buttons").hidden = target.dataset.show === "confirm";
      size();
    }
  });
  // A state is taken back by a second click on it, which a radio cannot do.
  view.addEventListener("pointerdown", function (event) {
    if (event.target.name && event.target.name.indexOf("state:") === 0) { event.target.dataset.was = event.target.checked; }
  });
  view.addEventListener("click", function (event) {
    var target = event.target;
    if (target.name && target.name.indexOf("state:") === 0 && target.dataset.was === "true") {
      target.checked = false;
      target.dataset.was = "false";
    }
  });
  view.addEventListener("input", function (event) {
    var row = event.target.dataset && event.target.dataset.row && document.getElementById(event.target.dataset.row);
    if (row && event.target.value.trim()) { row.checked = true; }
  });
  function size() {
    var height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height !== shown) { shown = height; notify("ui/notifications/size-changed", {height: height}); }
  }
  new ResizeObserver(size).observe(document.body);
  request("ui/initialize", {appInfo: {name: "askq", version: VERSION}, appCapabilities: {elicitation: {}},
    protocolVersion: BRIDGE}).then(function (result) {
    context(result && result.hostContext);
    notify("ui/notifications/initialized");
    size();
  });
})();
"""


def _view_style() -> str:
    """The page's style, with its dark colours taken from the host's theme
    instead of the browser's colour scheme."""
    light, _, rest = _WEB_STYLE.partition("@media (prefers-color-scheme: dark) {")
    dark, _, after = rest.partition("} }")
    dark = dark.replace(":root {", ":root[data-theme=dark] { color-scheme: dark;", 1)
    return f"{light}{dark}}}{after}{_VIEW_STYLE}"


def _view_bounds() -> _AttachmentBounds:
    """The page's bounds on files, within what the view's messages carry."""
    return _AttachmentBounds(each=_VIEW_FILE_BYTES, total=_VIEW_FILE_BYTES)


def _view_document() -> str:
    """The view: one self-contained document whose own policy allows its
    style and script by their hashes, and no request of any kind."""
    import base64
    import hashlib

    style = _view_style()
    bounds = _view_bounds()
    words = {reason: _PERSON_WORDS[reason].format(range="", **bounds.words()) for reason in _VIEW_FILE_REFUSALS}
    script = (_VIEW_SCRIPT.replace("FILE_WORDS", json.dumps(words)).replace("FILE_COUNT", str(bounds.per_question))
              .replace("FILE_BYTES", str(bounds.each)).replace("META", json.dumps(_VIEW_META)).replace("TOOL", json.dumps(_VIEW_TOOL))
              .replace("VERSION", json.dumps(__version__)).replace("BRIDGE", json.dumps(_VIEW_BRIDGE_VERSION)))

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    policy = (f"default-src 'none'; style-src 'sha256-{digest(style)}'; script-src 'sha256-{digest(script)}';"
              " img-src data: blob:; font-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'")
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>Questions for you</title><style>{style}</style></head><body><main id=\"view\" aria-live=\"polite\">"
        "<p class=\"note\">Waiting for the questions\u2026</p></main>"
        "<template id=\"elsewhere\"><p class=\"note\">Nothing to answer here: these questions were asked another way"
        " (in a form, or on a page), or the assistant's call could not be shown.</p></template>"
        f"<script>{script}</script></body></html>"
    )


def _view_resource() -> "Dict[str, Any]":
    return {"uri": _VIEW_URI, "name": "askq questions", "title": "Questions for you", "mimeType": _VIEW_MIME,
            "description": "The questions an assistant asks, drawn in the conversation for the user to answer."}


def _view_tool() -> "Dict[str, Any]":
    """The tool only the view calls (the model never sees it): what the
    person did with a call's questions, checked by the server."""
    return {
        "name": _VIEW_TOOL,
        "description": "For askq's in-chat view only: checks what the user did with the questions of an"
                       " ask_questions call, and gives the text to send as the user's message.",
        "inputSchema": {"type": "object", "properties": {
            "call": {"type": "object", "description": "The ask_questions call's arguments."},
            "asked": {"type": "object", "description": "Instead of 'call', for a form drawn by the view: the"
                      " questions the form carried."},
            "action": {"type": "string", "enum": list(_VIEW_ACTIONS)},
            "form": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            "files": {"type": "object", "description": "The files the user attached, by question id: each its"
                      " name and its bytes as base64.", "additionalProperties": {"type": "array", "items": {
                          "type": "object", "properties": {"name": {"type": "string"}, "data": {"type": "string"}},
                          "required": ["name", "data"]}}},
            "reply": {"type": "string", "enum": list(_VIEW_REPLIES), "description": "What the view sends: the"
                      " user's message (the default), or the answer to a form (an ElicitResult)."},
        }, "required": ["action", "form"]},
        "_meta": {"ui": {"resourceUri": _VIEW_URI, "visibility": ["app"]}},
    }


def _heading_html(items: "Sequence[QuestionItem]") -> str:
    """The heading of the page and of the in-chat view: the batch's title,
    and its purpose below it, when the call gave them."""
    title, purpose = _heading(items)
    heading = f"<h1>{_html_escaped(title or 'Questions for you')}</h1>"
    return heading if purpose is None else f"{heading}<p class=\"purpose\">{_html_escaped(purpose)}</p>"


def _view_form(items: "List[QuestionItem]", form: "Dict[str, List[str]]", problems: "Dict[int, str]",
               as_form: bool = False) -> str:
    """The questions as the page draws them (the states of each among its
    entries), every entry in place and every problem beside its question,
    with the view's buttons; drawn ``as_form`` (a form's answer), no "ask me
    more" and no notes, which a form's answer cannot carry, and a dismissal
    carries nothing."""
    parts, bounds = [_heading_html(items)], _view_bounds()
    if problems:
        parts.append(_WebPage(items, bounds=bounds)._problems_html(problems, form))
    parts.append("<form id=\"form\" class=\"questions\" novalidate>")
    parts.extend(_web_fieldset(index, item, form, problems.get(index), notes=not as_form,
                               files=None if as_form else _WebFiles(index, item, (), bounds))
                 for index, item in enumerate(items))
    parts.append(
        "<p class=\"error\" id=\"said\" role=\"status\" hidden></p>"
        "<div class=\"buttons\" id=\"buttons\"><button class=\"send\" type=\"button\" data-action=\"submit\">Send answers</button>"
        + ("" if as_form else f"<button type=\"button\" data-action=\"follow_up\">{_ASK_ME_MORE}</button>") +
        "<button type=\"button\" data-show=\"confirm\">Dismiss</button></div>"
        "<section class=\"confirm\" id=\"confirm\" hidden><h2>Dismiss these questions?</h2>"
        f"<p>The assistant is told that you dismissed them{_VIEW_DISMISSED_FORM if as_form else ', with the answers you gave'}.</p>"
        "<div class=\"buttons\">"
        "<button class=\"send\" type=\"button\" data-action=\"dismiss\">Yes, dismiss</button>"
        "<button type=\"button\" data-show=\"buttons\">No, go back to the questions</button></div></section></form>")
    return "".join(parts)


def _view_sent(outcome: QuestionOutput) -> str:
    """The view once the person's message is sent: how, and what went with it."""
    words = _OUTCOME_WORDS[Outcome(outcome.status or Outcome.DECLINED)]
    by_id = {answer.id: answer for answer in outcome.answers}
    rows = "".join(_sent_row(item, by_id.get(item.id)) for item in outcome.questions)
    said = words.sent if outcome.answers else "Nothing went with it: no question had an answer."
    return f"<h1>{words.heading(bool(outcome.answers))}</h1><p>{said}</p><ul class=\"sent\">{rows}</ul>"


# What the person did in the view, by the action its button names: the
# outcome it gives.
_VIEW_ACTIONS: "Dict[Any, Outcome]" = {"submit": Outcome.ANSWERED, "dismiss": Outcome.DECLINED,
                                       "follow_up": Outcome.FOLLOW_UP}


def _view_action(
    items: "List[QuestionItem]", form: "Dict[str, List[str]]", status: Outcome, files: "Dict[str, Any]",
) -> "Dict[str, Any]":
    """Sent answers are checked as the page checks a submission, and refused
    with the form again and its problems; a dismissal or a follow-up takes
    the answers as far as they go.  Files the person attached are taken as
    the page takes them, and go with the message as the page's do with a
    call's result (``files``: its content blocks after the text)."""
    sent, cut_off = _view_files_sent(items, files)
    attached, problems = _files_taken(items, _view_bounds(), {}, sent)
    if problems or cut_off:
        return {"html": _view_form(items, form, {**_form_problems(items, form), **problems, **cut_off})}
    answers = _form_answers(items, form, sent=status is Outcome.ANSWERED, attached=attached)
    if status is Outcome.ANSWERED:
        try:
            answers = collect_answers(items, answers)
        except AnswerError as err:
            return {"html": _view_form(items, form, _form_problems(items, form) or {err.index or 0: err.reason})}
    else:
        answers = _readable_answers(items, answers)
    outcome = QuestionOutput(items, answers, status)
    blocks = {"files": _attachment_blocks(outcome)} if attached else {}
    return {"message": result_text(outcome), "html": _view_sent(outcome), "status": status.value, **blocks}


def _view_files_sent(
    items: "Sequence[QuestionItem]", files: "Dict[str, Any]",
) -> "Tuple[Dict[str, List[Tuple[str, bytes]]], Dict[int, str]]":
    """The files the view sends, by question id: each its name and bytes, as
    a page's form brings them; and the questions (by index) with a file
    whose base64 does not decode, cut off on its way."""
    import base64
    import binascii

    sent: Dict[str, List[Tuple[str, bytes]]] = {}
    cut_off: Dict[int, str] = {}
    for index, item in enumerate(items):
        try:
            sent[item.id] = [(entry["name"], base64.b64decode(entry["data"].encode("ascii"), validate=True))
                             for entry in files.get(item.id, ())]
        except (binascii.Error, UnicodeEncodeError, ValueError):
            cut_off[index] = "attachment_cut_off"
    return sent, cut_off


def _view_files_read(files: Any) -> bool:
    """Whether the view's ``files`` are as its tool takes them: lists of
    objects with a name and base64 data, by question id."""
    return isinstance(files, dict) and all(
        isinstance(key, str) and isinstance(entries, list) and all(
            isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("data"), str)
            for entry in entries)
        for key, entries in files.items())


def _view_tool_result(arguments: Any) -> "Dict[str, Any]":
    """The app-only tool's result: the text the view sends as the person's
    message (or, for a form, the form's answer) and what it shows then, or
    the form again with its problems."""
    given = arguments if isinstance(arguments, dict) else {}
    form, status = given.get("form"), _VIEW_ACTIONS.get(given.get("action"))
    reply, files = given.get("reply", "message"), given.get("files", {})
    if status is None or reply not in _VIEW_REPLIES or not _view_files_read(files) or not isinstance(form, dict) or not all(
            isinstance(key, str) and isinstance(values, list) and all(isinstance(value, str) for value in values)
            for key, values in form.items()):
        return _tool_result(f"{_VIEW_TOOL} takes 'call' (the questions' call) or 'asked' (a form's questions),"
                            f" 'action' (one of {', '.join(_VIEW_ACTIONS)}), 'form' (each field's values, as"
                            f" strings) and, when given, 'reply' (one of {', '.join(_VIEW_REPLIES)}) and 'files' (by"
                            " question id, a list of files like {\"name\": \"shot.png\", \"data\": \"<base64 of the"
                            " bytes>\"}).", error=True)
    try:
        items = _view_questions(given)
    except QuestionError as err:
        return _tool_result(error_text(err), error=True)
    if reply == "elicitation":
        view = _view_form_answer(items, form, status)
        text = "Not sent: some answers need fixing; the view shows where." if "answer" not in view else \
            "The form's answer, for the view to return."
    else:
        view = _view_action(items, form, status, files)
        text = view.get("message") or "Not sent: some answers need fixing; the view shows where."
    return {"content": [{"type": "text", "text": text}], "structuredContent": view, "isError": False}


def _view_questions(given: "Dict[str, Any]") -> "List[QuestionItem]":
    """The questions the view's person answered: a call decoded as every
    call is, or a form's questions as a record keeps them, checked as a
    call's are; QuestionError when they cannot be read."""
    if "asked" not in given:
        return _question_list(ask(given.get("call")))
    try:
        batch = _stored_batch(given["asked"])
    except (KeyError, TypeError, ValueError, AttributeError):
        raise QuestionError("'asked' is not the questions of a form askq sent: pass the 'asked' object of the"
                            f" form's _meta[{_VIEW_META!r}] unchanged.") from None
    items = validate_and_normalize(QuestionInput(batch.questions, batch.title, batch.purpose))
    return _question_list(QuestionOutput(items, [], None, batch.title, batch.purpose))


def _view_form_answer(items: "List[QuestionItem]", form: "Dict[str, List[str]]", status: Outcome) -> "Dict[str, Any]":
    """A form drawn by the view, answered: the ElicitResult the view returns
    for it (the answer a client's own form would give), and what the view
    shows then; or the form again with its problems.  A dismissal is a
    decline, which carries no answers, as a form's does."""
    if status is Outcome.FOLLOW_UP:  # a form's answer cannot say it: no such button is drawn for one
        status = Outcome.DECLINED
    if status is Outcome.DECLINED:
        outcome = QuestionOutput(items, [], status)
    else:
        try:
            outcome = QuestionOutput(items, collect_answers(items, _form_answers(items, form, sent=True)), status)
        except AnswerError as err:
            return {"html": _view_form(items, form, _form_problems(items, form) or {err.index or 0: err.reason},
                                       as_form=True)}
    return {"answer": harness_answers(outcome, "mcp"), "html": _view_sent(outcome), "status": status.value}


def _view_call_result(output: QuestionOutput, context: Any) -> "Dict[str, Any]":
    """A call from a host that draws the view and no forms, answered at once:
    the model is told to wait for the user's message; the view gets the form."""
    result = _tool_result(_VIEW_CALL_TEXT, QuestionOutput(output.questions, []), context)
    result["_meta"] = {_VIEW_META: {"html": _view_form(_question_list(output), {}, {})}}
    return result


# ===========================================================================
# Asks: what serve puts to a person, outliving the call that asked
#
# A person answers in their own time, and the call that asked may end first
# (the client cancels, its request times out, the connection drops).  Every
# batch serve puts to a person is an _Ask, kept on an _AskBoard: the call
# waits on it, but the ask stays open when the call ends, and the next call
# with the same questions, from the same client, finds it again: waiting on
# it, or taking its answers at once if the person has finished since.

_ASK_LIFE_SECONDS = 24 * 3600.0  # how long an ask stays open unless the server's --timeout says otherwise
_ASK_KEPT_SECONDS = 24 * 3600.0  # how long an ended ask is kept, for a retry to find its answers
_ASKS_MOST = 20_000  # beyond this, the asks that ended longest ago go first, then the oldest
_LATE_LINE = "The user answered after the earlier call had ended."


class _AskOwner:
    """Who may find an ask again: the session that made it, and, once that
    session has ended, another session of the same client (it restarted).
    ``process`` names the process the session lives in, for a store that
    outlives it."""

    __slots__ = ("client", "ended", "id", "process")

    def __init__(self, client: str = "", process: str = "", session: str = "", ended: bool = False) -> None:
        import secrets

        self.client, self.process, self.ended = client, process, ended
        self.id = session or secrets.token_urlsafe(9)

    def may_take(self, other: "_AskOwner") -> bool:
        """Whether this owner may take an ask that ``other`` made."""
        return other is self or (other.ended and other.client == self.client)


class _Ask(_Ending):
    """One batch put to a person, the one owner of its life: its questions
    and their fingerprint, who made it, when it opened and when it ends,
    what the person entered, how it ended, and whether that outcome reached
    a call.  Its page, its form, its view and the calls waiting on it read
    and change it through its methods; each change is written to its
    board's store."""

    __slots__ = ("announced", "board", "delivered", "ended", "ends", "fingerprint", "id", "interrupted", "output",
                 "owner", "page", "read", "result", "task")

    def __init__(self, output: QuestionOutput, owner: _AskOwner, board: "_AskBoard", ask_id: str = "",
                 fingerprint: str = "") -> None:
        import secrets

        super().__init__()
        self.id = ask_id or secrets.token_urlsafe(18)
        self.board = board
        self.output = output  # as ask() made it: the questions (and any title), no answers yet; never changed
        self.fingerprint = fingerprint or _ask_fingerprint(output.questions, owner.client)
        self.owner = owner
        self.ends = time.time() + board.life
        self.result: Optional[QuestionOutput] = None  # how it ended, once it has
        self.ended = 0.0  # when it ended
        self.delivered = False
        self.interrupted = False  # a call that waited on it ended before it did
        self.page: Optional[_PageHost] = None  # the page that asks the person, when it has one
        self.read = 0.0  # when its record was last read again from a store other processes share
        self.announced = False  # whether --notify was told of it
        self.task: Optional[_AskTask] = None  # when a client polls it as a task

    @property
    def finished(self) -> bool:
        """Whether the person is done: on its page, or, in a store that other
        processes share, anywhere."""
        if self.result is None:
            if self.page is not None:
                self.page.done()  # a page idle past its time ends the ask through it
            if self.result is None and self.board.store.shared and time.monotonic() - self.read >= 1.0:
                self.board.reread(self)
        return self.result is not None

    def outcome(self) -> "Optional[QuestionOutput]":
        return self.result

    def commit(self, outcome: QuestionOutput) -> bool:
        """An ending its page made: settled, unless another came first."""
        self.settle(outcome)
        return _same_ending(self.result, outcome)

    def finish(self, outcome: QuestionOutput) -> bool:
        """End the ask with the person's outcome; whether this was its end
        (the first ending wins, and the others change nothing)."""
        return not self.finished and self.settle(outcome)

    def settle(self, outcome: QuestionOutput) -> bool:
        """Commit an ending; whether it was the first.  Another one, already
        committed (by this process or another), is taken instead."""
        if self.result is not None:
            return False
        self.result, self.ended = outcome, time.time()
        return self.board.settle(self)

    def take_ending(self, outcome: QuestionOutput, ended: float) -> None:
        """The ending another process committed first (its page shows it)."""
        self.result, self.ended = outcome, ended

    def deliver(self) -> QuestionOutput:
        """The outcome, as it reaches a call: the ask is done with, and its
        page, told that the answers are in, soon stops."""
        assert self.result is not None
        self.abandoned = False
        if not self.delivered and self.page is not None:
            self.page.serve_grace()
        self.delivered = True
        self.board.save(self)
        files = any(answer.attachments for answer in self.result.answers)
        if files or any(item.secret for item in self.output.questions):
            self.board.forget_secrets()  # and the files' bytes, which leave no older copy behind either
        result = self.result
        self.result, self.attached = _without_files(result), {}  # delivered: no copy of a file stays behind
        return result

    def entries(self) -> "Dict[str, List[str]]":
        """What the person entered on its page, as it is kept beyond the request."""
        return _kept_form(self.output.questions, self.entered)

    def supersede(self) -> None:
        """An empty ask opened while the person answered an older one of the
        same questions: ended, never offered again, its page saying that the
        assistant no longer waits there."""
        if self.settle(QuestionOutput(self.output.questions, [], Outcome.TIMED_OUT)):
            self.abandoned = True
        self.delivered = True
        self.board.save(self)

    def withdraw(self) -> None:
        """A call that waited on the ask ended first: the ask stays open."""
        self.interrupted = True
        self.board.save(self)

    def respond(self, handler: "Callable[[Any, _HttpRequest], _HttpResponse]", request: _HttpRequest) -> _HttpResponse:
        """A request to the ask's page: in a shared store, its record read
        first (an ending, or entries, made elsewhere); what the request
        entered kept; an ending it made committed, or, when another was
        committed first, the request answered as after that end."""
        assert self.page is not None, "a request reaches an ask through its page"
        if self.board.store.shared:
            self.board.reread(self)
        form = self.entered
        response = self.page.page.respond(handler, request)
        if self.entered is not form and self.result is None:
            self.board.save(self)
        return response

    def timed_out(self) -> bool:
        return self.result is not None and self.result.status is Outcome.TIMED_OUT

    def expire(self, now: float) -> bool:
        """End the ask as timed out once its time has passed, keeping what
        was entered; whether it has ended."""
        if now >= self.ends and not self.finished:
            given = _form_answers(self.output.questions, self.entered, attached=self.attached)
            entered = _readable_answers(self.output.questions, given)
            if self.settle(QuestionOutput(self.output.questions, entered, Outcome.TIMED_OUT)):
                self.abandoned = True  # until a call takes the outcome after all
        return self.finished

    def record(self) -> "_AskRecord":
        """The ask as its store keeps it: a page by its token's SHA-256 only,
        what the person entered without a secret, and once delivered, no
        secret answer and no entry of the page."""
        page = self.page.page if self.page is not None else None
        return _AskRecord(
            self.id, self.fingerprint, self.output, self.owner.client, self.owner.id, self.owner.process, self.ends,
            self.owner.ended, None if page is None else _token_digest(page.token),
            {} if self.delivered else self.entries(),
            self.ended, self.result, self.delivered, self.interrupted, self.task,
            {} if self.result is not None else self.attached)


def _without_files(outcome: QuestionOutput) -> QuestionOutput:
    """An outcome with its answers' files dropped."""
    if not any(answer.attachments for answer in outcome.answers):
        return outcome
    answers = _answers_without_files(outcome.answers)
    return QuestionOutput(outcome.questions, answers, outcome.status, outcome.title, outcome.purpose)


def _same_ending(one: "Optional[QuestionOutput]", other: "Optional[QuestionOutput]") -> bool:
    """Whether two endings of one ask say the same: the status and the answers."""
    if one is None or other is None:
        return one is other
    return one.status == other.status and one.answers == other.answers


def _ask_fingerprint(items: "Sequence[QuestionItem]", client: str) -> str:
    """What makes two calls the same ask: their questions as normalized,
    and the client that asked them."""
    import hashlib

    canonical = json.dumps([item.to_dict() for item in items], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(f"{client}\n{canonical}".encode("ascii")).hexdigest()


# ---------------------------------------------------------------------------
# Asks: the store
#
# An ask is kept as an _AskRecord in an _AskStore: in the process's memory
# unless --store names an SQLite file or a Redis database, which outlive the
# process and which every process given the same one shares.  The record is
# all a store sees: a backend keeps its text and indexes it by the few
# fields the record names (id, fingerprint, page, ended).
# The board keeps the asks it serves as objects and writes each change
# through; a store shared with other processes is also read again, for the
# asks this process has not seen and the endings that came elsewhere.

_STORE_SCHEMA = 1  # the version of the tables' layout a store was made with (a record has its own)
_STORE_BEAT_SECONDS = 3.0  # how often a process says, in a shared store, that it still serves
_STORE_LOST_SECONDS = 15.0  # a process on another host unheard of this long has ended


class _StoreError(ValueError):
    """A store that cannot be used, in one line for the person who named it."""


class _DamagedAsk(Exception):
    """A record that cannot be read back as an ask; its text says why, for the log."""

    def __init__(self, ask_id: Any, why: str = "") -> None:
        super().__init__(f"the stored ask {ask_id} {why or 'is damaged'} and cannot be served; the other asks are")
        self.ask_id = ask_id


_ASK_RECORD_VERSION = 4  # the layout of one record; a record of a newer layout is refused in words


@dataclass
class _AskTask:
    """What makes an ask a task the client polls: when it was made, how long
    it is kept once it has ended (``ttl``, in milliseconds, as the protocol
    counts), and whether the client cancelled it.  Its status is read from
    the ask itself."""

    created: float
    ttl: int
    cancelled: bool = False
    forms: int = 1  # how many forms it has asked: each input request's key is new in the task's life
    opened: bool = False  # whether the client said it opened the task's page (a secret's), sent by URL

    def to_dict(self) -> "Dict[str, Any]":
        return {"created": self.created, "ttl": self.ttl, "cancelled": self.cancelled, "forms": self.forms,
                "opened": self.opened}

    @classmethod
    def from_dict(cls, data: Any) -> "Optional[_AskTask]":
        """The stored task, or None for an ask that is no task (and every record before tasks)."""
        if data is None:
            return None
        if not isinstance(data, dict):
            raise TypeError("the task is not an object")
        ttl = _stored_number(data["ttl"])
        return cls(float(data["created"]), int(ttl or 0), data.get("cancelled") is True,
                   int(_stored_number(data.get("forms")) or 1), data.get("opened") is True)


@dataclass
class _AskRecord:
    """An ask as every store keeps it, and all a store ever sees: written by
    _Ask.record() and read back by from_text() alone.  ``questions`` holds
    every field of every question and the batch's heading (no answers);
    ``page`` is the SHA-256 of its page's token, never the token;
    ``entered`` is the page's last form without its token and without any
    secret; ``result`` is the ending, a secret answer in it hidden once
    ``delivered``.  ``ended`` is 0 while the ask is open: the one field a
    store reads to keep the first ending committed.  ``attached`` holds the
    files taken on the page, by question id, until the ask ends; the
    ending's own files are kept with it until it is delivered, and are
    then dropped, bytes and all."""

    id: str
    fingerprint: str
    questions: QuestionOutput
    client: str
    session: str
    process: str
    ends: float
    session_ended: bool = False
    page: Optional[str] = None
    entered: Dict[str, List[str]] = dataclasses.field(default_factory=dict)
    ended: float = 0.0
    result: Optional[QuestionOutput] = None
    delivered: bool = False
    interrupted: bool = False
    task: Optional[_AskTask] = None
    attached: Dict[str, List[Attachment]] = dataclasses.field(default_factory=dict)

    def to_text(self, files: "Optional[Dict[str, Attachment]]" = None) -> str:
        """The record as it is stored: compact JSON, with its layout's version.
        A store that keeps the files beside the text (in memory) passes
        ``files``, which takes each file by its digest, and the text then
        names each file by its digest alone."""
        batch = _batch_record(self.questions)
        result: Optional[Dict[str, Any]] = None
        if self.result is not None:
            answers = _answer_dicts(self.result)
            if self.delivered:
                answers = _hidden_secrets(self.questions.questions, answers)
            kept = {} if self.delivered else {answer.id: answer.attachments for answer in self.result.answers}
            for entry in answers:
                entry.pop("attachments", None)
                if kept.get(entry["id"]):
                    entry["attachments"] = [_attachment_text(attachment, files) for attachment in kept[entry["id"]]]
            result = {"status": self.result.status, "answers": answers}
        return json.dumps({
            "version": _ASK_RECORD_VERSION, "id": self.id, "fingerprint": self.fingerprint, "questions": batch,
            "client": self.client, "session": self.session, "process": self.process, "ends": self.ends,
            "session_ended": self.session_ended, "page": self.page, "entered": self.entered, "ended": self.ended,
            "result": result, "delivered": self.delivered, "interrupted": self.interrupted,
            "task": None if self.task is None else self.task.to_dict(),
            **({"attached": {key: [_attachment_text(attachment, files) for attachment in attached]
                             for key, attached in self.attached.items() if attached}} if self.attached else {}),
        }, ensure_ascii=False, allow_nan=False, separators=(",", ":"))

    @classmethod
    def from_text(cls, ask_id: str, text: Any, files: "Optional[Dict[str, Attachment]]" = None) -> "_AskRecord":
        """A stored text as the record of ``ask_id``; _DamagedAsk, saying
        why, when it is not one (or one of a newer askq).  ``files`` are
        those a store kept beside the text, by digest."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError):
            raise _DamagedAsk(ask_id, "is not JSON") from None
        if not isinstance(data, dict) or data.get("id") != ask_id:
            raise _DamagedAsk(ask_id, "is not the record of that ask")
        version = data.get("version", 1)  # the first layout had no version
        if not isinstance(version, int) or version > _ASK_RECORD_VERSION:
            raise _DamagedAsk(ask_id, f"was written by a newer askq (record version {version!r}, this one reads"
                                      f" {_ASK_RECORD_VERSION} and older): serve it with that askq,")
        try:
            return cls._read(ask_id, data, files or {})
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise _DamagedAsk(ask_id, f"is damaged ({type(err).__name__}: {err})") from None

    @classmethod
    def _read(cls, ask_id: str, data: "Dict[str, Any]", files: "Dict[str, Attachment]") -> "_AskRecord":
        batch = _stored_batch(data["questions"])
        result = data.get("result")
        return cls(
            ask_id, _stored_text(data["fingerprint"]), batch, _stored_text(data["client"]),
            _stored_text(data["session"]), _stored_text(data["process"]), float(data["ends"]),
            data.get("session_ended") is True, _stored_optional(data.get("page")), _stored_form(data.get("entered")),
            float(data.get("ended") or 0.0), None if result is None else _stored_result(batch, result, files),
            data.get("delivered") is True, data.get("interrupted") is True, _AskTask.from_dict(data.get("task")),
            {_stored_text(key): _stored_attachments(value, files) for key, value in (data.get("attached") or {}).items()})


def _stored_text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, found {type(value).__name__}")
    return value


def _stored_optional(value: Any) -> "Optional[str]":
    return None if value is None else _stored_text(value)


def _stored_number(value: Any) -> "Optional[float]":
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, found {type(value).__name__}")
    return value


def _stored_form(value: Any) -> "Dict[str, List[str]]":
    """A page's last form: each field's values, all text."""
    if not value:
        return {}
    if not isinstance(value, dict):
        raise TypeError("the entered form is not an object")
    return {_stored_text(key): [_stored_text(entry) for entry in entries] for key, entries in value.items()}


def _stored_file(ask_id: str, key: str, data: "Callable[[], bytes]") -> "Attachment":
    """A file a store kept beside an ask's record, under its digest and name;
    _DamagedAsk when its bytes no longer match the digest (or cannot be read)."""
    try:
        attachment: Optional[Attachment] = Attachment(key[65:], data())
    except (AnswerError, ValueError):
        attachment = None
    if attachment is None or attachment.sha256 != key[:64]:
        raise _DamagedAsk(ask_id, f"holds the file {key[65:]!r}, which does not match its digest,")
    return attachment


def _stored_option(data: "Dict[str, Any]") -> QuestionOption:
    return QuestionOption(_stored_text(data["label"]), _stored_optional(data.get("description")),
                          _stored_optional(data.get("preview")), data.get("recommended") is True)


def _stored_question(data: "Dict[str, Any]") -> QuestionItem:
    """A question exactly as QuestionItem.to_dict() wrote it: every field
    read back as it was, none decoded again (decoding would mend it anew)."""
    options = data.get("options")
    return QuestionItem(
        _stored_text(data["question"]), _stored_optional(data.get("header")),
        None if options is None else [_stored_option(option) for option in options],
        data.get("multiSelect") is True, _stored_optional(data.get("purpose")), data.get("required") is not False,
        QuestionType(data["question_type"]), _stored_text(data.get("id", "")),
        _stored_optional(data.get("recommended")), _stored_optional(data.get("placeholder")),
        data.get("allowCustom") is not False, _stored_number(data.get("minimum")),
        _stored_number(data.get("maximum")), _stored_number(data.get("step")), _stored_optional(data.get("unit")),
        _stored_optional(data.get("default")), data.get("secret") is True)


def _batch_record(output: QuestionOutput) -> "Dict[str, Any]":
    """The questions and the batch's heading as a record keeps them (every
    field of every question, no answers): read back by _stored_batch()."""
    batch = output.to_dict()
    del batch["answers"]
    batch.pop("status", None)
    return batch


def _stored_batch(data: "Dict[str, Any]") -> QuestionOutput:
    """The questions and the batch's heading, as the record keeps them."""
    items = [_stored_question(entry) for entry in data["questions"]]
    if not items:
        raise ValueError("the record holds no questions")
    return QuestionOutput(items, [], None, _stored_optional(data.get("title")), _stored_optional(data.get("purpose")))


def _attachment_text(attachment: Attachment, files: "Optional[Dict[str, Attachment]]") -> "Dict[str, Any]":
    """A file as a record keeps it: its name and its digest, which reading
    it back checks, and its bytes (base64), unless the store keeps the file
    itself in ``files``."""
    import base64

    if files is not None:
        files[f"{attachment.sha256} {attachment.name}"] = attachment
        return {"name": attachment.name, "sha256": attachment.sha256}
    return {"name": attachment.name, "sha256": attachment.sha256, "data": base64.b64encode(attachment.data).decode("ascii")}


def _stored_attachments(value: Any, kept: "Dict[str, Attachment]") -> "List[Attachment]":
    """Files as a record keeps them, each read back from its bytes (or
    taken as the store kept it, by its digest) and checked against its
    digest; a file damaged in the store is a damaged record, never a
    different file."""
    import base64

    if not isinstance(value, list):
        raise TypeError("the attached files are not a list")
    files = []
    for entry in value:
        if "data" not in entry:
            files.append(kept[f"{_stored_text(entry['sha256'])} {_stored_text(entry['name'])}"])
            continue
        try:
            attachment = Attachment(_stored_text(entry["name"]), base64.b64decode(_stored_text(entry["data"])))
        except AnswerError as err:
            raise ValueError(f"a stored file is refused: {err}") from None
        if attachment.sha256 != entry.get("sha256"):
            raise ValueError(f"the stored file {attachment.name!r} does not match its digest")
        files.append(attachment)
    return files


def _stored_result(batch: QuestionOutput, data: "Dict[str, Any]", files: "Dict[str, Attachment]") -> QuestionOutput:
    """An ending, for the questions it was asked with."""
    answers = [AnswerItem(
        _stored_text(entry["id"]), _stored_optional(entry.get("answer")),
        None if entry.get("selected") is None else [_stored_text(label) for label in entry["selected"]],
        entry.get("assumed") is True, _stored_optional(entry.get("note")), _stored_optional(entry.get("unanswered")),
        _stored_attachments(entry["attachments"], files) if "attachments" in entry else (),
    ) for entry in data["answers"]]
    return QuestionOutput(batch.questions, answers, Outcome(data["status"]), batch.title, batch.purpose)


class _AskStore:
    """What every store does with the records of asks: each change one
    transaction, and an ending settled once, by whoever commits it first.
    A backend is one subclass, registered beside its code by the schemes
    of the --store values it serves (``served_at``); ``shared`` says
    whether other processes read and write the same records."""

    shared = False
    kind = ""  # where it keeps asks, as --store's refusal of an unknown scheme names it
    backends: ClassVar["Dict[str, Callable[[str], _AskStore]]"] = {}

    @classmethod
    def served_at(cls, *schemes: str) -> "Callable[[_StoreClass], _StoreClass]":
        """Register a backend for --store values of these schemes: ``path``
        for a file's path, ``memory`` for the word itself, else a URL's."""
        def register(backend: "_StoreClass") -> "_StoreClass":
            for scheme in schemes:
                _AskStore.backends[scheme] = backend
            return backend
        return register

    @staticmethod
    def opened(where: "Optional[str]") -> "_AskStore":
        """The store --store names (in memory without one); _StoreError says
        why one cannot be used."""
        if not where or where == "memory":
            return _AskStore.backends["memory"](where or "memory")
        scheme = where.partition("://")[0].lower() if "://" in where else "path"
        backend = _AskStore.backends.get(scheme)
        if backend is None:
            kinds = list(dict.fromkeys(getattr(known, "kind", "") for known in _AskStore.backends.values()))
            raise _StoreError(f"--store {where}: askq keeps asks {', '.join(kinds[:-1])} or {kinds[-1]}.")
        return backend(where)

    @staticmethod
    def standing(stored: "Optional[_AskRecord]", record: _AskRecord) -> _AskRecord:
        """Which record stands when ``record`` ends an ask: the stored one if it
        had ended already, else ``record``."""
        return stored if stored is not None and stored.ended else record

    def load(self, ask_id: str) -> "Optional[_AskRecord]":
        """The record of an ask; _DamagedAsk when it cannot be read."""
        raise NotImplementedError

    def find(self, fingerprint: str) -> "List[str]":
        """The ids of the asks made of the same questions, by the same client."""
        raise NotImplementedError

    def by_page(self, digest: str) -> "Optional[str]":
        """The id of the ask whose page has a token of this SHA-256."""
        raise NotImplementedError

    def save(self, record: _AskRecord) -> None:
        """Write a record, keeping an ending already settled: a save never
        undoes another process's ending (settle() decides endings)."""
        raise NotImplementedError

    def settle(self, record: _AskRecord) -> _AskRecord:
        """Write an ended record unless the ask has ended already; the record
        as it stands after, the first committed ending in it."""
        raise NotImplementedError

    def state_key(self) -> bytes:
        """The key the store keeps for the pages' tokens and signed retries
        when none is given: made once, the same for every process that
        opens the store, readable only as the store is."""
        import secrets

        key: Optional[bytes] = getattr(self, "_key", None)
        if key is None:
            key = self._key = secrets.token_bytes(32)
        return key

    def forget_secrets(self) -> None:
        """A delivered secret leaves no copy behind (a journal included)."""

    def beat(self, process: str, now: float) -> None:
        """Renew a process's lease: it still serves (its asks' sessions live on)."""

    def heard(self, process: str, now: float) -> bool:
        """Whether a process on another host holds its lease."""
        return True

    def sweep(self, now: float) -> None:
        """Delete the records of asks that ended a day ago or more."""

    def close(self) -> None:
        pass


_StoreClass = TypeVar("_StoreClass", bound="Callable[[str], _AskStore]")


@_AskStore.served_at("memory")
class _MemoryStore(_AskStore):
    """The records in this process's memory: lost when it ends.  Thousands
    of asks may wait at once, and a record is read back only when its ask is
    not served here any more: an open ask's record is kept as it is (it
    holds no answer and no secret; what of it may change, copied), an ended
    one's as its text, compressed.  Either is read back through its text,
    as every store's is."""

    kind = "in memory (--store memory)"

    def __init__(self, where: str = "memory") -> None:
        import threading

        self.records: Dict[str, Union[bytes, _AskRecord]] = {}
        self.files: Dict[str, Dict[str, Attachment]] = {}  # an ended record's files, by digest: never copied into its text
        self.fingerprints: Dict[str, List[str]] = {}
        self.pages: Dict[str, str] = {}
        self.ended: Dict[str, float] = {}
        self.lock = threading.Lock()

    def load(self, ask_id: str) -> "Optional[_AskRecord]":
        kept = self.records.get(ask_id)
        return None if kept is None else self._read(ask_id, kept, self.files.get(ask_id))

    @staticmethod
    def _read(ask_id: str, kept: "Union[bytes, _AskRecord]", files: "Optional[Dict[str, Attachment]]") -> _AskRecord:
        import zlib

        if isinstance(kept, _AskRecord):
            files = {}
            text = kept.to_text(files)
        else:
            text = zlib.decompress(kept).decode("utf-8", "surrogatepass")
        return _AskRecord.from_text(ask_id, text, files)

    @staticmethod
    def _kept(record: _AskRecord, files: "Dict[str, Attachment]") -> "Union[bytes, _AskRecord]":
        """An open ask's record as itself (its files in it); an ended one's
        as compressed text, its files put in ``files``."""
        import zlib

        if not record.ended and record.result is None:
            entered = {key: list(values) for key, values in record.entered.items()}
            attached = {key: list(values) for key, values in record.attached.items()}
            return dataclasses.replace(record, entered=entered, attached=attached,
                                       task=record.task and dataclasses.replace(record.task))
        return zlib.compress(record.to_text(files).encode("utf-8", "surrogatepass"), 1)

    def find(self, fingerprint: str) -> "List[str]":
        return list(self.fingerprints.get(fingerprint, ()))

    def by_page(self, digest: str) -> "Optional[str]":
        return self.pages.get(digest)

    def save(self, record: _AskRecord) -> None:
        with self.lock:
            if record.ended or record.id not in self.ended:
                self._write(record)

    def settle(self, record: _AskRecord) -> _AskRecord:
        with self.lock:
            standing = self.standing(self.load(record.id), record)
            self._write(standing)
            return standing

    def _write(self, record: _AskRecord) -> None:
        if record.id not in self.records:
            self.fingerprints.setdefault(record.fingerprint, []).append(record.id)
        if record.page:
            self.pages[record.page] = record.id
        if record.ended:
            self.ended[record.id] = record.ended
        files: Dict[str, Attachment] = {}
        self.records[record.id] = self._kept(record, files)
        if files:
            self.files[record.id] = files
        else:
            self.files.pop(record.id, None)

    def sweep(self, now: float) -> None:
        with self.lock:
            for ask_id in [ask_id for ask_id, ended in self.ended.items() if now >= ended + _ASK_KEPT_SECONDS]:
                record = self._read(ask_id, self.records.pop(ask_id), self.files.pop(ask_id, None))
                del self.ended[ask_id]
                same = self.fingerprints.get(record.fingerprint, [])
                if ask_id in same:
                    same.remove(ask_id)
                if not same:
                    self.fingerprints.pop(record.fingerprint, None)
                self.pages.pop(record.page or "", None)


@_AskStore.served_at("path")
class _SqliteStore(_AskStore):
    """The records in an SQLite database (a WAL journal, one transaction a
    change), shared by every process on the host that opens the same file.
    A database that is not askq's is refused before a byte of it changes."""

    shared = True
    kind = "in an SQLite file (a path)"

    def __init__(self, path: str) -> None:
        import sqlite3
        import threading

        self.path = path
        self.lock = threading.Lock()
        # The files of the asks this process wrote or read, by ask and key:
        # a record read again takes them from here rather than from the disk.
        self.files: Dict[str, Dict[str, Attachment]] = {}
        self.check_folder(path)
        fresh = not os.path.exists(path)
        if fresh:  # readable by its owner only, before SQLite writes anything in it
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
        self.db = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            self._prepare()
        except sqlite3.DatabaseError as err:
            self.db.close()
            raise _StoreError(f"--store {path}: this file is not an askq database ({err}).") from None
        except _StoreError:
            self.db.close()
            raise

    @staticmethod
    def check_folder(path: str) -> None:
        """Refuse at start a file that could not be made or written."""
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise _StoreError(f"--store {path}: the folder {folder} does not exist; make it first.")
        if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            raise _StoreError(f"--store {path}: askq cannot write there (its journal goes beside the file);"
                              " choose a place this user can write.")
        if os.path.isdir(path):
            raise _StoreError(f"--store {path}: that is a folder; name a file in it, such as {os.path.join(path, 'asks.db')}.")

    def _prepare(self) -> None:
        """Read what the database holds before anything is written to it:
        refuse one that is another's, or of a newer askq; make the tables
        of a new one; then the WAL journal, and deleted content overwritten."""
        if self._tables():
            self._check_schema()
        else:
            self.db.execute("PRAGMA journal_mode=WAL").fetchall()
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                if not self._tables():  # another process may have made them meanwhile
                    self._create()
            self._check_schema()
        self.db.execute("PRAGMA journal_mode=WAL").fetchall()
        self.db.execute("PRAGMA secure_delete=ON").fetchall()
        if "files" not in self._tables():  # a database made before asks kept files
            with self.db:
                self.db.execute(_SQLITE_FILES_TABLE)

    def _tables(self) -> "FrozenSet[str]":
        return frozenset(row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall())

    def _create(self) -> None:
        self.db.execute("CREATE TABLE askq (key TEXT PRIMARY KEY, value TEXT)")
        self.db.execute("INSERT INTO askq VALUES ('schema', ?)", (str(_STORE_SCHEMA),))
        self.db.execute("CREATE TABLE asks (id TEXT PRIMARY KEY, fingerprint TEXT, page TEXT, ended REAL, record TEXT)")
        self.db.execute("CREATE INDEX asks_fingerprint ON asks (fingerprint)")
        self.db.execute("CREATE INDEX asks_page ON asks (page)")
        self.db.execute("CREATE TABLE processes (id TEXT PRIMARY KEY, seen REAL)")
        self.db.execute(_SQLITE_FILES_TABLE)

    def _check_schema(self) -> None:
        schema = self._row("SELECT value FROM askq WHERE key = 'schema'") if "askq" in self._tables() else None
        if schema is None or not str(schema[0]).isdigit():
            raise _StoreError(f"--store {self.path}: this SQLite database is not an askq database; name a new file.")
        if int(schema[0]) > _STORE_SCHEMA:
            raise _StoreError(f"--store {self.path}: this database was made by a newer askq (schema"
                              f" {schema[0]}, this one reads {_STORE_SCHEMA}); run that askq, or name a new file.")

    def _row(self, sql: str, parameters: "Tuple[Any, ...]" = ()) -> Any:
        """The first row a query gives, every row read (so that no statement
        stays open, on every sqlite3 module), or None."""
        rows = self.db.execute(sql, parameters).fetchall()
        return rows[0] if rows else None

    def load(self, ask_id: str) -> "Optional[_AskRecord]":
        with self.lock:
            row = self._row("SELECT record FROM asks WHERE id = ?", (ask_id,))
            files = None if row is None else self._files(ask_id, row[0])
        return None if row is None else _AskRecord.from_text(ask_id, row[0], files)

    def _files(self, ask_id: str, text: Any) -> "Dict[str, Attachment]":
        """An ask's files, each read from the disk once (and checked
        against its digest), then kept for the records read again; none
        looked for when its record names none."""
        if not isinstance(text, str) or '"sha256"' not in text:
            return {}
        kept = self.files.get(ask_id, {})
        keys = [row[0] for row in self.db.execute("SELECT key FROM files WHERE ask = ?", (ask_id,)).fetchall()]
        for key in keys:
            if key not in kept:
                data = self._row("SELECT data FROM files WHERE ask = ? AND key = ?", (ask_id, key))[0]
                kept[key] = _stored_file(ask_id, key, functools.partial(bytes, data))
        kept = {key: kept[key] for key in keys}
        if kept:
            self.files[ask_id] = kept
        return kept

    def find(self, fingerprint: str) -> "List[str]":
        with self.lock:
            return [row[0] for row in self.db.execute("SELECT id FROM asks WHERE fingerprint = ?", (fingerprint,)).fetchall()]

    def by_page(self, digest: str) -> "Optional[str]":
        with self.lock:
            row = self._row("SELECT id FROM asks WHERE page = ?", (digest,))
        return None if row is None else str(row[0])

    def save(self, record: _AskRecord) -> None:
        with self.lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")
            row = self._row("SELECT ended FROM asks WHERE id = ?", (record.id,))
            if record.ended or row is None or not row[0]:
                self._write(record)

    def settle(self, record: _AskRecord) -> _AskRecord:
        with self.lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")  # the write lock first: two processes settle one after the other
            row = self._row("SELECT record FROM asks WHERE id = ?", (record.id,))
            files = None if row is None else self._files(record.id, row[0])
            standing = self.standing(None if row is None else _AskRecord.from_text(record.id, row[0], files), record)
            if standing is record:
                self._write(record)
            return standing

    def _write(self, record: _AskRecord) -> None:
        """The record, and its files in their own table: each written once,
        however often the record is (a draft a second while the person
        types), and deleted once no record names it."""
        files: Dict[str, Attachment] = {}
        self.db.execute("INSERT OR REPLACE INTO asks VALUES (?, ?, ?, ?, ?)", (
            record.id, record.fingerprint, record.page, record.ended, record.to_text(files)))
        for key, attachment in files.items():
            self.db.execute("INSERT OR IGNORE INTO files VALUES (?, ?, ?)", (record.id, key, attachment.data))
        places = ", ".join("?" * len(files))
        self.db.execute(f"DELETE FROM files WHERE ask = ? AND key NOT IN ({places})", (record.id, *files))
        if files:
            self.files[record.id] = files
        else:
            self.files.pop(record.id, None)

    def state_key(self) -> bytes:
        import secrets

        with self.lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("INSERT OR IGNORE INTO askq VALUES ('state_key', ?)", (secrets.token_hex(32),))
            row = self._row("SELECT value FROM askq WHERE key = 'state_key'")
        return bytes.fromhex(str(row[0]))

    def forget_secrets(self) -> None:
        """The journal's older copies of a record go: the WAL is checkpointed
        into the database and truncated (secure_delete zeroes what the
        rewrite freed there)."""
        with self.lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def beat(self, process: str, now: float) -> None:
        with self.lock, self.db:
            self.db.execute("INSERT OR REPLACE INTO processes VALUES (?, ?)", (process, now))

    def heard(self, process: str, now: float) -> bool:
        with self.lock:
            row = self._row("SELECT seen FROM processes WHERE id = ?", (process,))
        return row is not None and now - row[0] < _STORE_LOST_SECONDS

    def sweep(self, now: float) -> None:
        with self.lock, self.db:
            self.db.execute("DELETE FROM asks WHERE ended > 0 AND ended <= ?", (now - _ASK_KEPT_SECONDS,))
            self.db.execute("DELETE FROM files WHERE ask NOT IN (SELECT id FROM asks)")
            self.db.execute("DELETE FROM processes WHERE seen <= ?", (now - _ASK_KEPT_SECONDS,))

    def close(self) -> None:
        with self.lock:
            self.db.close()


# An ask's files, beside its record: the key names a file by its digest and
# its name, as the record does.
_SQLITE_FILES_TABLE = "CREATE TABLE files (ask TEXT, key TEXT, data BLOB, PRIMARY KEY (ask, key))"


@_AskStore.served_at("redis", "rediss")
class _RedisStore(_AskStore):
    """The records in a Redis database, for replicas on many hosts, spoken
    to over one connection of its own (RESP, the protocol every Redis and
    its look-alikes speak): askq needs no package for it."""

    shared = True
    kind = "in Redis (redis://HOST:PORT/DB)"
    # The first ending committed wins: a record is written only while the
    # stored one is open (its ``ended`` is 0), in one step on the server;
    # else the stored one is returned.
    _WRITE_WHILE_OPEN = ("local stored = redis.call('GET', KEYS[1])\n"
                         "local ended = stored and cjson.decode(stored)['ended']\n"
                         "if ended and ended ~= cjson.null and ended ~= 0 then return stored end\n"
                         "redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])\n"
                         "return false")

    def __init__(self, url: str) -> None:
        self.url = url
        self.redis = _RedisConnection(url)
        self.files: Dict[str, Dict[str, Attachment]] = {}  # as the SQLite store keeps them: read once a process
        try:
            self.redis.call("PING")
        except OSError as err:
            raise _StoreError(f"--store {url}: Redis does not answer there ({err}); start it, or check the URL.") from None
        except _RedisRefused as err:
            raise _StoreError(f"--store {url}: Redis refused askq ({err}); check the password and the database"
                              " number in the URL.") from None

    def load(self, ask_id: str) -> "Optional[_AskRecord]":
        text = self.redis.call("GET", f"askq:ask:{ask_id}")
        return None if text is None else _AskRecord.from_text(ask_id, text, self._files(ask_id, text))

    def _files(self, ask_id: str, text: Any) -> "Dict[str, Attachment]":
        """An ask's files, each kept under a key of its own (its bytes as
        base64), read once and checked against its digest; none looked for
        when its record names none."""
        import base64

        if not isinstance(text, str) or '"sha256"' not in text:
            return {}
        kept = self.files.get(ask_id, {})
        keys = sorted(self.redis.call("SMEMBERS", f"askq:files:{ask_id}") or [])
        missing = [key for key in keys if key not in kept]
        for key, data in zip(missing, self.redis.call("MGET", *(f"askq:file:{ask_id}:{key}" for key in missing)) if missing else ()):
            kept[key] = _stored_file(ask_id, key, functools.partial(base64.b64decode, str(data)))
        kept = {key: kept[key] for key in keys}
        if kept:
            self.files[ask_id] = kept
        return kept

    def _text(self, record: _AskRecord) -> "Tuple[str, Dict[str, Attachment]]":
        """The record's text, its files written beside it first, each once."""
        import base64

        files: Dict[str, Attachment] = {}
        text = record.to_text(files)
        if files:
            known, kept = self.files.get(record.id, {}), self._kept(record)
            stored = set(self.redis.call("SMEMBERS", f"askq:files:{record.id}") or ())
            commands: List[Tuple[Any, ...]] = [
                ("SET", f"askq:file:{record.id}:{key}", base64.b64encode(attachment.data).decode("ascii"), "EX", kept)
                for key, attachment in files.items() if key not in known or key not in stored]
            commands += [("SADD", f"askq:files:{record.id}", key) for key in files if key not in stored]
            self.redis.pipeline([*commands, ("EXPIRE", f"askq:files:{record.id}", kept)])
        return text, files

    def _written(self, record: _AskRecord, files: "Dict[str, Attachment]") -> None:
        """The record stands as written: the files it no longer names go."""
        stored = set(self.redis.call("SMEMBERS", f"askq:files:{record.id}") or ())
        gone = stored - set(files)
        if gone:
            self.redis.pipeline([*(("DEL", f"askq:file:{record.id}:{key}") for key in gone),
                                 *(("SREM", f"askq:files:{record.id}", key) for key in gone)])
        if files:
            self.files[record.id] = files
        else:
            self.files.pop(record.id, None)

    def find(self, fingerprint: str) -> "List[str]":
        return sorted(self.redis.call("SMEMBERS", f"askq:same:{fingerprint}") or [])

    def by_page(self, digest: str) -> "Optional[str]":
        found = self.redis.call("GET", f"askq:page:{digest}")
        return None if found is None else str(found)

    def save(self, record: _AskRecord) -> None:
        key, (text, files) = f"askq:ask:{record.id}", self._text(record)
        if record.ended:
            self.redis.call("SET", key, text, "EX", self._kept(record))
            self._written(record, files)
        elif not self._write_while_open(key, text, record):
            self._written(record, files)
        self._index(record)

    def settle(self, record: _AskRecord) -> _AskRecord:
        text, files = self._text(record)
        stored = self._write_while_open(f"askq:ask:{record.id}", text, record)
        if stored:
            return _AskRecord.from_text(record.id, stored, self._files(record.id, stored))
        self._written(record, files)
        self._index(record)
        return record

    def _write_while_open(self, key: str, text: str, record: _AskRecord) -> Any:
        return self.redis.call("EVAL", self._WRITE_WHILE_OPEN, 1, key, text, self._kept(record))

    def _index(self, record: _AskRecord) -> None:
        kept, same = self._kept(record), f"askq:same:{record.fingerprint}"
        commands: List[Tuple[Any, ...]] = [("SADD", same, record.id), ("EXPIRE", same, kept)]
        if record.page:
            commands.append(("SET", f"askq:page:{record.page}", record.id, "EX", kept))
        self.redis.pipeline(commands)

    @staticmethod
    def _kept(record: _AskRecord) -> int:
        """Seconds until the record goes: a day after the ask ends, or would."""
        end = record.ended or record.ends or time.time()
        return max(1, int(end + _ASK_KEPT_SECONDS - time.time()))

    def state_key(self) -> bytes:
        import secrets

        self.redis.call("SET", "askq:state-key", secrets.token_hex(32), "NX")
        return bytes.fromhex(str(self.redis.call("GET", "askq:state-key")))

    def beat(self, process: str, now: float) -> None:
        self.redis.call("SET", f"askq:process:{process}", str(now), "EX", int(_STORE_LOST_SECONDS))

    def heard(self, process: str, now: float) -> bool:
        return bool(self.redis.call("EXISTS", f"askq:process:{process}"))

    def close(self) -> None:
        self.redis.close()


class _RedisRefused(Exception):
    """Redis answered a command with an error."""


class _RedisConnection:
    """One connection to the Redis a redis:// URL names, made again after
    it breaks; commands are sent and answered one at a time, under a lock."""

    TIMEOUT = 5.0

    def __init__(self, url: str) -> None:
        import threading
        from urllib.parse import unquote, urlsplit

        try:
            parts = urlsplit(url)
            port, database = parts.port, parts.path.strip("/") or "0"
        except ValueError as err:
            raise _StoreError(f"--store {url}: not a Redis URL ({err}); write redis://HOST:PORT/DB.") from None
        if parts.scheme not in ("redis", "rediss") or not parts.hostname or not database.isdigit() or parts.query \
                or port == 0:
            raise _StoreError(f"--store {url}: not a Redis URL; write redis://HOST:PORT/DB, such as redis://127.0.0.1:6379/0.")
        self.address = (parts.hostname, port or 6379)
        self.tls, self.database = parts.scheme == "rediss", database
        self.login = [unquote(part) for part in (parts.username, parts.password) if part]
        self.lock = threading.Lock()
        self.socket: Any = None
        self.stream: Any = None

    def call(self, *command: Any) -> Any:
        """Redis's answer to one command: text as str, a number as int, a
        list as a list; _RedisRefused for an error, OSError when the
        connection fails (the next call connects again)."""
        return self.pipeline([command])[0]

    def pipeline(self, commands: "Sequence[Tuple[Any, ...]]") -> "List[Any]":
        """The answers to several commands sent at once.  A connection that
        had served before and broke since (Redis restarted, or closed it
        while idle) is made again and the commands sent once more: each
        command askq sends does the same when sent twice."""
        with self.lock:
            retry = self.stream is not None
            while True:
                try:
                    if self.stream is None:
                        self._connect()
                    return self._exchange(commands)
                except (OSError, ValueError):  # ValueError: a number that is none, from what is not Redis
                    self._drop()
                    if not retry:
                        raise
                    retry = False

    def _connect(self) -> None:
        import socket

        connection = socket.create_connection(self.address, timeout=self.TIMEOUT)
        if self.tls:
            import ssl

            connection = ssl.create_default_context().wrap_socket(connection, server_hostname=self.address[0])
        self.socket, self.stream = connection, connection.makefile("rwb")
        greeting = [("AUTH", *self.login)] if self.login else []
        try:
            self._exchange(greeting + ([("SELECT", self.database)] if self.database != "0" else []))
        except _RedisRefused:
            self._drop()
            raise

    def _exchange(self, commands: "Sequence[Tuple[Any, ...]]") -> "List[Any]":
        """Send commands, read every answer, then refuse if one was an error."""
        assert self.stream is not None
        self.stream.write(b"".join(self.encoded(command) for command in commands))
        self.stream.flush()
        answers = [self.answer(self.stream) for _ in commands]
        for answer in answers:
            if isinstance(answer, _RedisRefused):
                raise answer
        return answers

    def _drop(self) -> None:
        for closing in (self.stream, self.socket):
            try:
                if closing is not None:
                    closing.close()
            except OSError:
                pass
        self.stream = self.socket = None

    def close(self) -> None:
        with self.lock:
            self._drop()

    @staticmethod
    def encoded(command: "Tuple[Any, ...]") -> bytes:
        """A command as Redis reads it: an array of byte strings."""
        parts = [str(part).encode("utf-8") for part in command]
        return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(part), part) for part in parts)

    @classmethod
    def answer(cls, stream: Any) -> Any:
        """One answer read from Redis; an error answer as a _RedisRefused,
        returned so that the answers after it are still read."""
        line = stream.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("Redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind in (b"+", b"-"):
            text = rest.decode("utf-8", "replace")
            return text if kind == b"+" else _RedisRefused(text)
        if kind == b":":
            return int(rest)
        if kind == b"$" and int(rest) >= 0:
            data = stream.read(int(rest) + 2)
            if len(data) != int(rest) + 2:
                raise ConnectionError("Redis closed the connection")
            return data[:-2].decode("utf-8", "replace")
        if kind == b"*" and int(rest) >= 0:
            return [cls.answer(stream) for _ in range(int(rest))]
        if kind in (b"$", b"*"):
            return None
        raise ConnectionError(f"Redis sent what is not RESP: {line[:40]!r}")


# ---------------------------------------------------------------------------
# Asks: the board
#
# The asks a process serves, as objects that own their pages, kept over the
# store: what changes is written through, and what another process changed
# is read again when the store is shared.

class _ProcessMark:
    """That a process of this host lives, known exactly: it holds an
    exclusive lock on a file named after it, which the operating system
    releases the moment the process dies (a ``kill -9`` and a zombie
    included), so that a restart seconds later finds its asks free.  Where
    there are no such locks (Windows, Pyodide), whether its pid runs."""

    __slots__ = ("descriptor", "path")

    def __init__(self, name: str) -> None:
        self.path = _ProcessMark.file_of(name) if name else None  # no name: a process that needs no mark
        self.descriptor: Optional[int] = None
        if self.path is None:
            return
        try:
            import fcntl

            descriptor = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.descriptor = descriptor
        except (ImportError, OSError):
            self.path = None
            return
        folder = os.path.dirname(self.path)
        for left in os.listdir(folder):  # the marks of processes that ended long ago without taking theirs away
            if left.endswith(".lock") and os.path.join(folder, left) != self.path:
                _ProcessMark.clear(os.path.join(folder, left))

    @staticmethod
    def file_of(name: str) -> "Optional[str]":
        """The file of a process named ``PID TOKEN``, in a folder of this
        user's own (None where it cannot be had)."""
        import tempfile

        if not hasattr(os, "getuid"):
            return None
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        folder = os.path.join(runtime, "askq") if runtime else os.path.join(tempfile.gettempdir(), f"askq-{os.getuid()}")
        try:
            os.makedirs(folder, 0o700, exist_ok=True)
            found = os.lstat(folder)
        except OSError:
            return None
        if found.st_uid != os.getuid() or not os.path.isdir(folder) or os.path.islink(folder):
            return None  # another user's, or a link someone left: no mark there
        return os.path.join(folder, name.replace(" ", "-") + ".lock")

    @staticmethod
    def lives(name: str) -> bool:
        """Whether the process named ``PID TOKEN`` lives."""
        path = _ProcessMark.file_of(name)
        found = _ProcessMark.held(path) if path else None
        return _ProcessMark.pid_runs(name.partition(" ")[0]) if found is None else found

    @staticmethod
    def held(path: str) -> "Optional[bool]":
        """Whether the mark at ``path`` is held; None when there is none (an
        askq that made none)."""
        try:
            import fcntl

            descriptor = os.open(path, os.O_RDONLY)
        except (ImportError, OSError):
            return None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(descriptor)
        return False

    @staticmethod
    def clear(path: str) -> None:
        """Remove the mark of a process that died longer ago than any of its
        asks is kept (until then, its mark tells that it died)."""
        try:
            if time.time() - os.stat(path).st_mtime > _ASK_LIFE_SECONDS + _ASK_KEPT_SECONDS \
                    and _ProcessMark.held(path) is False:
                os.remove(path)
        except OSError:
            pass  # another process that looked removed it first

    @staticmethod
    def pid_runs(pid: str) -> bool:
        """Whether a process of this host runs (a zombie seems to)."""
        if not pid.isdigit():
            return False
        try:
            os.kill(int(pid), 0)
        except PermissionError:
            return True
        except (OSError, OverflowError):
            return False
        return True

    def release(self) -> None:
        if self.descriptor is not None and self.path is not None:
            try:
                os.remove(self.path)
            except OSError:
                pass  # its folder was cleared: the lock still goes with the descriptor
            os.close(self.descriptor)
            self.descriptor = None


class _AskBoard:
    """The asks a server serves, as objects, over the store that keeps their
    records: found by their id, by their page's token, or by their
    fingerprint and who asks; ended ones kept for a while, then dropped
    (and, beyond a bound, those that ended first, then the oldest).
    ``web`` makes the pages sent by URL where no ``--web`` does; ``seal``
    gives each ask's page its token, the same in every process with the
    same key.  A store that fails is logged once, and the asks go on in
    memory."""

    def __init__(self, web: "Optional[_WebOptions]" = None, life: "Optional[float]" = None,
                 store: "Optional[_AskStore]" = None, seal: "Optional[_RequestSeal]" = None,
                 log: "Optional[Callable[[str], None]]" = None, notifier: "Optional[_Notifier]" = None) -> None:
        import platform
        import secrets
        import threading
        import weakref

        self.web = web or _WebOptions()
        self.life = life or _ASK_LIFE_SECONDS
        self.store = store or _MemoryStore()
        self.seal = seal or _RequestSeal()
        self.log = log or (lambda line: None)
        self.notifier = notifier or _Notifier("", None, lambda line: None)
        self.asks: Dict[str, _Ask] = {}
        # The questions of the asks kept here, by fingerprint, for as long as an ask holds them.
        self.batches: _typing.MutableMapping[str, QuestionOutput] = weakref.WeakValueDictionary()
        self.lock = threading.RLock()
        self.swept = self.beaten = 0.0
        self.failing = False  # the store failed, and that was logged
        self.process = f"{platform.node()} {os.getpid()} {secrets.token_urlsafe(6)}"
        self.mark = _ProcessMark(self.process.partition(" ")[2] if self.store.shared else "")

    def owner(self, client: str = "") -> _AskOwner:
        """A new session's owner, living in this process."""
        return _AskOwner(client, self.process)

    def open(self, output: QuestionOutput, owner: _AskOwner) -> _Ask:
        """The ask these questions make: one still open, or ended and never
        delivered, that the owner may take (here, or in the store), else a
        new one."""
        fingerprint = sys.intern(_ask_fingerprint(output.questions, owner.client))  # one copy for identical asks
        with self.lock:
            self.sweep()
            # Only the owner's own asks, and those of ended sessions, may be
            # taken: the rest (thousands may wait) are passed over at once.
            mine = [ask for ask in self.asks.values() if ask.owner is owner or ask.owner.ended]
            takeable = [ask for ask in [*mine, *self._stored_asks(fingerprint)] if self._takeable(ask, fingerprint, owner)]
            if not takeable:
                ask = self._keep(_Ask(self._batch(output, fingerprint), owner, self, fingerprint=fingerprint))
                self.save(ask)
                return ask
            # The person's answer first, wherever it was given; else the ask made first.
            takeable.sort(key=lambda ask: (ask.result is None, ask.ends))
            ask = takeable[0]
            if ask.result is not None:
                for newer in takeable[1:]:
                    if newer.result is None and not newer.entries():
                        newer.supersede()
            if ask.owner is not owner and ask.owner.process not in ("", self.process):
                ask.interrupted = True  # its call was in a process that has ended
            ask.owner = owner
            self.save(ask)
            return ask

    def _batch(self, output: QuestionOutput, fingerprint: str) -> QuestionOutput:
        """The questions of a new ask: those of an ask kept here with the same
        ones, when there is one, so that identical asks (many sessions of
        one client asking the same) keep one copy; asks never change them."""
        kept = self.batches.get(fingerprint)
        if kept is None:  # the fingerprint is a digest of the questions: the same one, the same questions
            self.batches[fingerprint] = output
            return output
        if (kept.title, kept.purpose) == (output.title, output.purpose):
            return kept
        return QuestionOutput(kept.questions, [], None, output.title, output.purpose)

    @staticmethod
    def _takeable(ask: _Ask, fingerprint: str, owner: _AskOwner) -> bool:
        """Whether a call of this owner with these questions may take the ask:
        the same questions, never delivered, the owner's own or left by an
        ended session of the same client, and not ended with nobody to
        deliver it (never offered again)."""
        if ask.fingerprint != fingerprint or ask.delivered or not owner.may_take(ask.owner):
            return False
        return not (ask.expire(time.time()) and (ask.timed_out() or time.time() >= ask.ends))

    def _stored_asks(self, fingerprint: str) -> "List[_Ask]":
        """The asks of the same questions in a shared store that this process
        has not seen, their sessions ended with their process or otherwise."""
        if not self.store.shared:
            return []
        found = []
        for ask_id in self._safely(lambda: self.store.find(fingerprint), []) or []:
            ask = self.get(ask_id) if ask_id not in self.asks else None
            if ask is not None:
                found.append(ask)
        return found

    def _serves(self, process: str) -> bool:
        """Whether a process still serves: on this host, whether it runs;
        elsewhere, whether it said so lately."""
        import platform

        host, _, rest = process.partition(" ")
        if process == self.process:
            return True
        if host == platform.node():
            return _ProcessMark.lives(rest)
        return bool(self._safely(lambda: self.store.heard(process, time.time()), True))

    def get(self, ask_id: Any) -> "Optional[_Ask]":
        """An ask by its id: one this process serves, else from the store."""
        if not isinstance(ask_id, str):
            return None
        with self.lock:
            if ask_id in self.asks:
                return self.asks[ask_id]
            try:
                record = self._safely(lambda: self.store.load(ask_id), None, damaged=False)
            except _DamagedAsk as err:
                self.log(str(err))
                return None
            return None if record is None else self._restored(record)

    def by_page_digest(self, digest: str) -> "Optional[_Ask]":
        """The ask whose page's token has this digest (_token_digest()), from
        the store: served here too."""
        return self.get(self._safely(lambda: self.store.by_page(digest), None))

    def _restored(self, record: _AskRecord) -> _Ask:
        """An ask made again from its record, the same ask as it was: its
        questions as they were asked, its page too (at the same URL when this
        process holds the same key), with what the person entered."""
        owner = _AskOwner(record.client, record.process, record.session, record.session_ended)
        restored = _Ask(record.questions, owner, self, record.id)
        restored.fingerprint, restored.ends = record.fingerprint, record.ends
        restored.delivered, restored.interrupted, restored.task = record.delivered, record.interrupted, record.task
        restored.read = time.monotonic()
        if not owner.ended and not self._serves(owner.process):
            owner.ended = True  # its session ended with its process
        restored.entered, restored.attached = record.entered, record.attached
        if record.page is not None:
            restored.page = self._new_page(restored)
        if record.result is not None:
            restored.take_ending(record.result, record.ended)
        return self._keep(restored)

    def reread(self, ask: _Ask) -> None:
        """Read an ask's record again: an ending committed elsewhere, and what
        the person entered on a page served elsewhere."""
        ask.read = time.monotonic()
        try:
            record = self._safely(lambda: self.store.load(ask.id), None, damaged=False)
        except _DamagedAsk:
            return
        if record is None or ask.result is not None:
            return
        if record.entered:
            ask.entered = record.entered
        if record.attached:
            ask.attached = record.attached
        ask.task = record.task or ask.task  # a task made, or cancelled, elsewhere
        if record.result is not None:
            ask.take_ending(record.result, record.ended)

    def page(self, ask: _Ask, web: "Optional[_WebOptions]" = None) -> "_PageHost":
        """The ask's page, made now when it has none (showing what the person
        entered, which the ask keeps)."""
        if ask.page is None:
            ask.page = self._new_page(ask, web)
            self.save(ask)
        return ask.page

    def _new_page(self, ask: _Ask, web: "Optional[_WebOptions]" = None) -> "_PageHost":
        """A page for the ask, which reads and ends it through the ask."""
        page = (web or self.web).open(_question_list(ask.output), self.seal.page_token(ask.id))
        page.page.ending = page.ask = ask
        return page

    def save(self, ask: _Ask) -> None:
        self._safely(lambda: self.store.save(ask.record()))

    def forget_secrets(self) -> None:
        """A secret answer, now hidden in its record, leaves no older copy behind."""
        self._safely(self.store.forget_secrets)

    def settle(self, ask: _Ask) -> bool:
        """Commit the ask's ending to the store; whether it was the first.
        When another was, the ask takes that one."""
        record = ask.record()
        standing = self._safely(lambda: self.store.settle(record), record)
        if standing is record or _same_ending(standing.result, record.result):
            return True
        if standing.result is not None:
            ask.take_ending(standing.result, standing.ended)
        return False

    def _keep(self, ask: _Ask) -> _Ask:
        self.asks[ask.id] = ask
        while len(self.asks) > _ASKS_MOST:
            self._drop(min(self.asks, key=lambda key: (not self.asks[key].finished, self.asks[key].ends)))
        return ask

    def _drop(self, ask_id: str) -> None:
        """Forget an ask here (its record stays in the store): its page goes too."""
        dropped = self.asks.pop(ask_id)
        if dropped.page is not None:
            dropped.page.end()

    def open_owners(self) -> "FrozenSet[str]":
        """Who made the asks still open here (their owners' ids)."""
        with self.lock:
            return frozenset(ask.owner.id for ask in self.asks.values() if ask.result is None)

    def owner_ended(self, owner: _AskOwner) -> None:
        """A session ended: its asks may be taken by the client's next one."""
        owner.ended = True
        with self.lock:
            for ask in [ask for ask in self.asks.values() if ask.owner is owner]:
                self.save(ask)

    def announce(self, ask: _Ask, url: "Optional[str]" = None) -> None:
        """Tell the person of an ask, once (--notify), while it stays open;
        with its page's URL, each option's tap when it asks for one pick."""
        with self.lock:
            if ask.announced:
                return
            ask.announced = True
        taps = ask.page.taps() if url is not None and ask.page is not None else []
        self.notifier.announce(ask.id, ask.output, url, lambda: not ask.finished and time.time() < ask.ends, ask.owner.client,
                               actions=taps)

    def sweep(self) -> None:
        """Time out the asks whose time has passed; drop those ended long ago
        (looked at once a second at most, however many sessions tick); say
        in a shared store that this process still serves."""
        now = time.time()
        with self.lock:
            if now - self.swept < 1.0:
                return
            self.swept = now
            for key, ask in list(self.asks.items()):
                # Only an ask whose time has come is looked at: an open one is
                # read again from a shared store when a call asks for it.
                if (ask.result is not None or now >= ask.ends) and ask.expire(now) \
                        and now >= ask.ended + _ASK_KEPT_SECONDS:
                    self._drop(key)
            self._safely(lambda: self.store.sweep(now), housekeeping=True)
            if self.store.shared and now - self.beaten >= _STORE_BEAT_SECONDS:
                self.beaten = now
                self._safely(lambda: self.store.beat(self.process, now), housekeeping=True)

    def _safely(self, action: "Callable[[], Any]", failed: Any = None, damaged: bool = True,
                housekeeping: bool = False) -> Any:
        """What the store does, or ``failed`` when it fails: an outage is
        logged once when it starts and once when a record is read or written
        again (housekeeping, which some stores do without a word to their
        server, proves nothing), and meanwhile the asks go on in memory."""
        try:
            done = action()
        except _DamagedAsk:
            if not damaged:
                raise
            return failed
        except Exception as err:  # noqa: BLE001 - sqlite3's, the disk's, the network's
            if not self.failing:
                self.failing = True
                self.log(f"the store failed ({type(err).__name__}: {err}); asks go on in memory until it works again")
            return failed
        if self.failing and not housekeeping:
            self.failing = False
            self.log("the store works again; the asks are kept there again")
        return done

    def close(self) -> None:
        self.mark.release()
        self._safely(self.store.close)


def _stored_pages(
    host: str, port: int, timeout: "Optional[float]", seal: "_RequestSeal", log: "Callable[[str], None]",
    store: _AskStore,
) -> "Tuple[_HttpServer, _AskBoard]":
    """With a store, every page on one server at ``port``, so that a page
    keeps its URL across a restart; the board that serves them."""
    pages = _ServedPages("")
    server = _HttpServer(_HttpCore(pages), host, port)
    pages.base = f"http://{_reachable_address(host)}:{server.port}"
    board = _AskBoard(_ServedWebOptions(pages, timeout), timeout, store, seal, log)
    pages.board = board
    return server, board


_PORT_CHOSEN = "the pages' port was chosen at start: give a port to keep their URLs across restarts"


_PROMPT_CLIENT = "prompt_web"  # whose asks prompt_web(store=...) finds again


def _prompt_on_stored_page(
    output: QuestionOutput, host: str, port: int, timeout: "Optional[float]",
    on_page: "Optional[Callable[[_PageHost], None]]", where: str, key: "Optional[str]",
) -> QuestionOutput:
    """prompt_web(store=...): the page of an ask kept in the store, found
    again by the same questions after a restart or in another process."""
    def log(message: str) -> None:
        sys.stderr.write(f"askq: {message}\n")

    store = _AskStore.opened(where)
    server, board = _stored_pages(host, port, timeout, _RequestSeal.kept(key, store), log, store)
    if not port:
        log(_PORT_CHOSEN)
    asked = board.open(output, board.owner(_PROMPT_CLIENT))
    try:
        if not asked.finished and on_page is not None:
            on_page(board.page(asked))
        while not asked.expire(time.time()):
            time.sleep(_POLL_SECONDS / 5)
    except KeyboardInterrupt:  # Ctrl-C where the page was asked from: a dismissal, as in prompt()
        asked.finish(QuestionOutput(output.questions, asked.page.page.kept_answers() if asked.page else [],
                                    Outcome.DECLINED))
    def end() -> None:
        board.owner_ended(asked.owner)
        server.stop()
        store.close()

    try:
        outcome = asked.deliver()
    except BaseException:
        end()
        raise
    if asked.page is None:
        end()
    else:
        _WebSession.after_grace(end)  # a second device learns that the answers are in
    return outcome


# ===========================================================================
# Telling the person: --notify
#
# Where the person is not looking at the client, a waiting question is worth
# a notification that carries the question itself.  askq writes no
# notification service of its own: it runs the person's command (Apprise,
# notify-send, curl) with the message on its standard input and the ask in
# its environment, when an ask opens and again every --remind minutes while
# it stays open.  Whatever the command does, the ask goes on.

_NOTIFY_SECONDS = 10.0  # a notify command still running after this is killed
_NOTIFY_SAID_CELLS = 200  # of a failed command's last line on stderr, in the log
_NOTIFY_AT_ONCE = 4  # commands running at the same time, at most: the others wait their turn


class _Notice:
    """One ask's notification: what it tells of (the ask, its page, the
    client that asked, each option's tap), how to tell that the ask is still
    open, how long it has waited, and whether a failure was logged for it
    already."""

    __slots__ = ("actions", "ask_id", "client", "failed", "opened", "output", "runs", "still_open", "url")

    def __init__(self, ask_id: str, output: QuestionOutput, url: "Optional[str]", still_open: "Callable[[], bool]",
                 client: str = "", actions: "Sequence[_TapAction]" = ()) -> None:
        self.ask_id, self.output, self.url, self.client, self.still_open = ask_id, output, url, client, still_open
        self.actions = actions
        self.opened = time.monotonic()
        self.runs = 0  # how many times the command ran for it: from the second on, a reminder
        self.failed = False

    def waited(self) -> "Optional[float]":
        """How long the ask has waited, when this run is a reminder."""
        return time.monotonic() - self.opened if self.runs else None

    def text(self) -> str:
        return _Notifier.message(self.output, self.url, self.client, self.waited(), self.actions)

    def environment(self) -> "Dict[str, str]":
        waited = self.waited()
        return {**_Notifier.environment(self.ask_id, self.output, self.url, self.actions),
                "ASKQ_REMINDER": str(self.runs), "ASKQ_WAITED": str(int(waited or 0))}


class _Notifier:
    """--notify COMMAND (split as a shell would, run without one) when an ask
    opens, and every --remind minutes while it stays open; with no command,
    nothing.  Never in the caller's way: every run, the first and the
    reminders of every ask, waits in time order on one heap, for a few
    threads that run each when it is due (a burst of asks waits its turn).
    A command that cannot run, fails or hangs (killed after _NOTIFY_SECONDS,
    with every process it started) is logged once per ask, and changes
    nothing."""

    @staticmethod
    def environment(ask_id: str, output: QuestionOutput, url: "Optional[str]",
                    actions: "Sequence[_TapAction]" = ()) -> "Dict[str, str]":
        """What the command's environment adds to this process's: the ask as
        JSON, its first question's text, the page's URL (empty without one)
        and each option's tap as JSON (an empty list without them); a notice
        adds which run it is (0 the first, then each reminder's number) and
        the seconds the ask has waited."""
        ask = {"id": ask_id, "title": output.title, "questions": [item.to_dict() for item in output.questions], "url": url}
        taps = [{"label": action.label, "url": action.url} for action in actions]
        return {"ASKQ_ASK": json.dumps(ask, ensure_ascii=True), "ASKQ_QUESTION": _visible(output.questions[0].question),
                "ASKQ_URL": url or "", "ASKQ_ACTIONS": json.dumps(taps, ensure_ascii=True)}

    @staticmethod
    def message(output: QuestionOutput, url: "Optional[str]", client: str = "", waited: "Optional[float]" = None,
                actions: "Sequence[_TapAction]" = ()) -> str:
        """The message a person reads: that an assistant waits on them (a
        reminder says so, and for how long), the batch's title, each question
        with its options (the recommended one badged) or the number it takes,
        and where to answer them: the page, else the client that asked; and
        each option's tap, a line each, for a service that shows no buttons."""
        head = ("An assistant is waiting for your answers." if waited is None
                else f"Reminder: an assistant has waited {_waited_words(waited)} for your answers.")
        blocks = [head if output.title is None else f"{head}\n{_visible(output.title)}"]
        for item in output.questions:
            lines = [f"  - {_visible(_badged(item, option))}" for option in item.options or ()]
            if item.question_type is QuestionType.NUMBER:
                lines.append(f"  {_number_words(item)}.")
            blocks.append("\n".join([_visible(item.question), *lines]))
        if url is not None:
            blocks.append(f"Answer the questions at {url}")
            if actions:
                blocks.append("\n".join(["Or answer with one of these links:",
                                         *(f"  {_visible(action.label)}: {action.url}" for action in actions)]))
        else:
            blocks.append("Answer them where the assistant asked you" + (f", in {_visible(client)}." if client else "."))
        return "\n\n".join(blocks) + "\n"

    def __init__(self, command: str, remind_minutes: "Optional[float]", log: "Callable[[str], None]") -> None:
        import shlex
        import threading

        self.argv = shlex.split(command) if command else []
        self.remind = remind_minutes * 60.0 if remind_minutes else None
        self.log = log
        self.due: List[Tuple[float, int, _Notice]] = []  # a heap: when each notice runs next
        self.wake = threading.Condition()
        self.count = 0  # orders notices due at the same time
        self.workers = 0
        self.idle = 0  # workers waiting for a notice to be due

    def announce(self, ask_id: str, output: QuestionOutput, url: "Optional[str]",
                 still_open: "Callable[[], bool]", client: str = "", actions: "Sequence[_TapAction]" = ()) -> None:
        """Tell the person of an ask now, and remind them while ``still_open()``;
        ``client`` names the client that shows the questions when no page does;
        ``actions`` are its page's taps, when its options may be answered so."""
        if self.argv:
            self._schedule(_Notice(ask_id, output, url, still_open, client, actions), time.monotonic())

    def _schedule(self, notice: _Notice, when: float) -> None:
        import heapq
        import threading

        with self.wake:
            self.count += 1
            heapq.heappush(self.due, (when, self.count, notice))
            if self.idle == 0 and self.workers < _NOTIFY_AT_ONCE:
                self.workers += 1
                threading.Thread(target=self._work, name="askq-notify", daemon=True).start()
            self.wake.notify()

    def _work(self) -> None:
        """A worker: each notice when it is due, while its ask is open."""
        while True:
            notice = self._next()
            if not notice.still_open():
                continue  # ended meanwhile: nothing to tell, nothing to remind of
            problem = self._problem(notice)
            notice.runs += 1
            if problem is not None and not notice.failed:
                notice.failed = True
                self.log(f"--notify: {problem}; the ask goes on (said once for each ask)")
            if self.remind is not None:
                self._schedule(notice, time.monotonic() + self.remind)

    def _next(self) -> _Notice:
        """The next notice, once it is due."""
        import heapq

        with self.wake:
            self.idle += 1
            while not self.due or self.due[0][0] > time.monotonic():
                self.wake.wait(self.due[0][0] - time.monotonic() if self.due else None)
            self.idle -= 1
            notice = heapq.heappop(self.due)[2]
            if self.due:
                self.wake.notify()  # another may be due too
            return notice

    def _problem(self, notice: _Notice) -> "Optional[str]":
        """Run the command once; what went wrong, in a line, if anything did."""
        import subprocess

        name = self.argv[0]
        try:  # its output is not ours to pass on: over stdio, standard output is the client's
            process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       env={**os.environ, **notice.environment()}, start_new_session=True)
        except (OSError, ValueError, subprocess.SubprocessError) as err:
            return f"{name} could not be run: {getattr(err, 'strerror', None) or err}"
        try:
            said = process.communicate(notice.text().encode("utf-8"), timeout=_NOTIFY_SECONDS)[1]
        except subprocess.TimeoutExpired:
            _end_group(process)
            return f"{name} ran past {_NOTIFY_SECONDS:g} s and was killed"
        if process.returncode == 0:
            return None
        lines = said.decode("utf-8", "replace").split("\n")
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        return f"{name} exited with status {process.returncode}" + (f" ({_clipped(_visible(last), _NOTIFY_SAID_CELLS)})" if last else "")


def _end_group(process: Any) -> None:
    """End a command that ran past its time, with every process it started:
    it leads a session of its own, so its group is all of them."""
    import signal
    import subprocess

    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:
        pass  # it ended meanwhile
    try:
        process.communicate(timeout=_NOTIFY_SECONDS)  # reaped, its pipes closed
    except subprocess.TimeoutExpired:  # a process that left its group holds the pipe: stop reading
        for stream in (process.stdin, process.stderr):
            if stream is not None:
                stream.close()


def _waited_words(seconds: float) -> str:
    """How long a question has waited, for a person: "12 minutes", "2 hours 5 minutes"."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "less than a minute"
    hours, minutes = divmod(minutes, 60)
    parts = [f"{count} {unit}{'s' if count != 1 else ''}" for count, unit in ((hours, "hour"), (minutes, "minute")) if count]
    return " ".join(parts)


# ===========================================================================
# The MCP server: python askq.py serve
#
# One reader, one writer: newline-delimited JSON-RPC on stdin and stdout.  A
# call that waits for the person is a _WaitingCall, kept by the id of the
# elicitation request sent for it (or by its page), so that pings, lists and
# other calls go on being answered meanwhile.
# Under the protocol of 2026-07-28 nothing is pending at all: the call is
# answered with an input request, and the client calls again with the
# responses.  Each request is read with the _RequestContext it speaks in.

_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_SERVER = "io.modelcontextprotocol/serverInfo"
_META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
_META_CLIENT = "io.modelcontextprotocol/clientInfo"
_META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LOG_LEVELS_SHOWING_NOTICE = ("debug", "info", "notice")
_TOOLS_TTL_MS = 3_600_000  # the tool never changes while the server runs
_PROGRESS_SECONDS = 3.0  # a call waiting with a progress token is told of this often: clients reset their timeout
_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_METHOD_NOT_FOUND = -32601
_INVALID_PARAMS = -32602
_INTERNAL_ERROR = -32603
_UNSUPPORTED_VERSION = -32022
_RESOURCE_NOT_FOUND = -32002
_RELATED_TASK = "io.modelcontextprotocol/related-task"
_TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
_MISSING_CAPABILITY = -32021
_TASK_POLL_MS = 2000  # how often a client is asked to poll a task: a person answers in seconds, not milliseconds
_TASK_KEPT_MS = int(_ASK_KEPT_SECONDS * 1000)  # the longest a task is kept once it ended: as long as its ask
_TASKS_PAGE = 50  # tasks in one page of tasks/list
_TASK_KEPT_LEAST_MS = 60_000  # an ended task is kept at least this long, so that its result is fetched
_URL_MESSAGE = "An assistant asks you some questions: answer them on this page, then come back to the conversation."
_PAGE_GONE_TEXT = (
    "No answers came back: the page your questions were sent to is no longer open here (the server restarted,"
    " or another server got this retry). Do not assume any answers; call again to ask anew."
)
_MAX_LINE = 2 * MAX_PAYLOAD_BYTES  # a message holds a call and its envelope
_MESSAGE_DEPTH = 2 * MAX_DEPTH  # far past any call in its envelope, far below what hurts a parser


class _RpcError(Exception):
    """A JSON-RPC error response, raised where a request is refused."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


def _client_name(info: Any) -> "Optional[str]":
    """The name a client gives itself in its ``Implementation`` record."""
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


def _kept_capabilities(capabilities: Any) -> "Dict[str, Any]":
    """The capabilities a client declared in its handshake, as its session
    keeps them: sessions that declare the same share one copy (never
    changed), as the thousands of sessions of one client do."""
    if not isinstance(capabilities, dict):
        return {}
    return _capabilities_of(json.dumps(capabilities, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _capabilities_of(text: str) -> "Dict[str, Any]":
    return dict(json.loads(text))


class _RequestContext:
    """How one request speaks: its protocol version and the client's
    capabilities (from the handshake, or from the request's own envelope)."""

    __slots__ = ("capabilities", "client", "logs", "protocol", "version")

    def __init__(
        self, version: str, capabilities: "Dict[str, Any]", logs: bool = True, client: "Optional[str]" = None,
    ) -> None:
        self.version = version
        self.protocol = _protocol(version) or _latest_handshake()
        self.capabilities = capabilities
        self.logs = logs  # whether log notifications may be sent for the request
        self.client = client  # the name the client gives itself, for the forms drawn for it

    @property
    def stateless(self) -> bool:
        return self.protocol.stateless

    @property
    def structured(self) -> bool:
        """Whether results carry structuredContent."""
        return self.protocol.structured

    @property
    def can_elicit(self) -> bool:
        """Whether the client draws forms: a version that has them, and an
        elicitation capability that is empty (forms, in the first era that
        had them) or names ``form``."""
        elicitation = self.capabilities.get("elicitation")
        forms = isinstance(elicitation, dict) and (not elicitation or "form" in elicitation)
        return forms and self.protocol.forms

    @property
    def polls_tasks(self) -> bool:
        """Whether a call may be a task: the version has tasks, and the client
        draws the forms a task waits on (askq's only task is an ask)."""
        return self.protocol.tasks and self.can_elicit

    @property
    def extends_tasks(self) -> bool:
        """Whether the request declares the Tasks extension, under a version that has it."""
        extensions = self.capabilities.get("extensions")
        return self.protocol.task_extension and isinstance(extensions, dict) and _TASKS_EXTENSION in extensions

    @property
    def opens_urls(self) -> bool:
        """Whether the client opens a page by URL for the server (URL-mode elicitation)."""
        elicitation = self.capabilities.get("elicitation")
        return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict) and self.protocol.urls

    @property
    def draws_views(self) -> bool:
        """Whether the client draws MCP Apps views (the extension, with its MIME type)."""
        types = self._apps.get("mimeTypes")
        return isinstance(types, list) and _VIEW_MIME in types

    @property
    def views_forms(self) -> bool:
        """Whether the client may draw a form with askq's view in place of its
        own (app-rendered elicitation): it draws forms and views, and its
        MCP Apps settings name ``elicitation``; and its forms have the
        protocol's own arms, which the view's answer is written in."""
        known = _known_client(self.client)
        return self.can_elicit and self.draws_views and isinstance(self._apps.get("elicitation"), dict) \
            and not self.protocol.legacy_forms and not (known is not None and known.plain_enum_only)

    @property
    def _apps(self) -> "Dict[str, Any]":
        """The client's MCP Apps settings (empty when it declares none)."""
        extensions = self.capabilities.get("extensions")
        apps = extensions.get(_APPS_EXTENSION) if isinstance(extensions, dict) else None
        return apps if isinstance(apps, dict) else {}


class _WaitingCall:
    """A tools/call that waits on its ask: on a form the client draws, on a
    page the client was asked to open (URL mode), or on a page served beside
    the server.  ``elicitation`` is the URL-mode request that sent the
    client to the page, told when the page is done; ``progress`` the token
    the client gave for progress notes, which keep its call open."""

    __slots__ = ("ask", "call_id", "context", "elicitation", "progress", "since", "told")

    def __init__(self, call_id: Any, ask: _Ask, context: _RequestContext, progress: Any = None) -> None:
        self.call_id, self.ask, self.context, self.progress = call_id, ask, context, progress
        self.elicitation: Optional[str] = None
        self.since = self.told = time.monotonic()

    @property
    def output(self) -> QuestionOutput:
        return self.ask.output

    @property
    def session(self) -> Any:
        return self.ask.page


@dataclass
class _TaskListener:
    """A subscriptions/listen that waits for its tasks' changes: the
    request (whose stream its notifications go on, each naming it), how it
    speaks, and what each task it still listens to was last told of."""

    request_id: Any
    context: _RequestContext
    told: Dict[str, str]

    def meta(self) -> "Dict[str, Any]":
        return {_META_SUBSCRIPTION: self.request_id}

    def changed(self, task_id: str, state: str) -> bool:
        """Whether a task is not as it was last told; it is told so from now."""
        if self.told.get(task_id) == state:
            return False
        self.told[task_id] = state
        return True


class _WebOptions:
    """Where ``serve --web`` puts its pages, and how long they wait."""

    __slots__ = ("host", "port", "timeout")

    def __init__(self, host: str = "127.0.0.1", port: int = 0, timeout: "Optional[float]" = None) -> None:
        self.host, self.port, self.timeout = host, port, timeout

    def open(self, items: "List[QuestionItem]", token: str = "") -> "_PageHost":
        """A page for the questions, on a server of its own."""
        return _WebSession(items, self.host, self.port, self.timeout, token)


class _RequestSeal:
    """The signed ``requestState`` of an input-required result: it names the
    call's arguments, so that a retry is answered only for the call that was
    asked, by any server that holds the same key, and a state a client made
    or changed is refused."""

    __slots__ = ("key",)

    def __init__(self, key: "Optional[bytes]" = None) -> None:
        import secrets

        self.key = key or secrets.token_bytes(32)

    @classmethod
    def of_key(cls, key: "Optional[str]") -> "_RequestSeal":
        """The seal of a --state-key (a random one without)."""
        return cls(key.encode("utf-8", "surrogatepass") if key else None)

    @classmethod
    def kept(cls, key: "Optional[str]", store: "_AskStore") -> "_RequestSeal":
        """The seal of a --state-key; without one, of the key the store keeps,
        so that pages and retries outlive a restart and reach every process
        that shares the store with no flag (a memory store's key is made at start)."""
        return cls.of_key(key) if key else cls(store.state_key())

    def seal(self, arguments: Any, page: "Optional[str]" = None) -> str:
        import base64

        state = {"call": self._digest(arguments), **({} if page is None else {"page": page})}
        body = base64.urlsafe_b64encode(json.dumps(state).encode()).decode()
        return f"{body}.{self._signature(body)}"

    def check(self, state: Any, arguments: Any) -> "Dict[str, Any]":
        """Refuse a retry whose state is missing, forged, altered or another
        call's; what the state holds."""
        import base64
        import hmac

        body, _, signature = state.partition(".") if isinstance(state, str) else ("", "", "")
        if not (body and hmac.compare_digest(signature.encode("utf-8", "replace"), self._signature(body).encode())):
            raise _RpcError(_INVALID_PARAMS, "Invalid params: 'requestState' is missing, or not one this"
                            " server issued; call again without 'inputResponses' to be asked anew.")
        sealed = json.loads(base64.urlsafe_b64decode(body.encode()))
        if not (isinstance(sealed, dict) and hmac.compare_digest(str(sealed.get("call")), self._digest(arguments))):
            raise _RpcError(_INVALID_PARAMS, "Invalid params: 'requestState' belongs to another call; retry"
                            " with the arguments the questions were asked with.")
        return sealed

    def page_token(self, ask_id: str) -> str:
        """The token of an ask's page: the same in every process that holds
        the key, so that a page survives a restart and reaches every replica,
        while a store keeps only its SHA-256."""
        import base64
        import hashlib
        import hmac

        digest = hmac.new(self.key, f"page {ask_id}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def _signature(self, body: str) -> str:
        import hashlib
        import hmac

        return hmac.new(self.key, body.encode("ascii", "replace"), hashlib.sha256).hexdigest()

    @staticmethod
    def _digest(arguments: Any) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(arguments, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()


class _McpServer:
    """One MCP session: what the client said in its handshake, the calls
    waiting for a person, and a method per request."""

    rpc = _Registry()  # each JSON-RPC method to the method that answers it
    __slots__ = ("board", "by_url", "forms", "handshake", "listening", "log", "owner", "pages", "seal", "sent", "task_polls",
                 "transport", "waiting", "web")

    def __init__(self, transport: "_Transport", log: Any, web: "Optional[_WebOptions]" = None,
                 seal: "Optional[_RequestSeal]" = None, board: "Optional[_AskBoard]" = None) -> None:
        self.transport = transport
        self.log = log
        self.web = web
        self.board = board or _AskBoard(life=web.timeout if web is not None else None, seal=seal)
        self.seal = seal or self.board.seal
        self.handshake = _RequestContext(_latest_handshake().name, {})
        self.owner = self.board.owner()
        self.forms: Dict[str, _Ask] = {}  # a form sent, by its request's key: the ask it belongs to
        self.waiting: Dict[str, _WaitingCall] = {}  # a call waiting on its ask's form, by the call's key
        self.pages: Dict[str, _WaitingCall] = {}
        self.by_url: Dict[str, _WaitingCall] = {}
        self.task_polls: Dict[str, str] = {}  # a tasks/result that waits, by its request's key: its task's id
        self.listening: Dict[str, _TaskListener] = {}  # a subscriptions/listen that waits, by its request's key
        self.sent = 0

    def receive(self, line: bytes) -> None:
        """Act on one line from the client; answer it if it needs an answer."""
        try:
            message = _parse_message(line)
        except ValueError as err:
            self._send_error(None, _RpcError(_PARSE_ERROR, f"Parse error: {err}"))
            return
        self.handle(message)

    def handle(self, message: Any) -> None:
        """Act on one message, as parsed; answer it if it needs an answer."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._send_error(_echoed_id(message), _RpcError(_INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message."))
            return
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            # A response is never answered, whatever its id: answering one
            # could start an endless exchange with a client that does the same.
            if "id" in message and _is_valid_id(message["id"]):
                self._on_response(message)
        elif "id" in message and not _is_valid_id(message["id"]):
            self._send_error(None, _RpcError(_INVALID_REQUEST, "Invalid request: an id must be a string or an integer."))
        elif not isinstance(method, str):
            self._send_error(message.get("id"), _RpcError(_INVALID_REQUEST, "Invalid request: no method."))
        elif "id" not in message:
            self._on_notification(method, message.get("params"))
        else:
            self._on_request(message["id"], method, message.get("params", {}))

    def refuse(self, reason: str) -> None:
        """Answer a line that cannot be read as a message."""
        self._send_error(None, _RpcError(_PARSE_ERROR, reason))

    def _on_request(self, request_id: Any, method: str, params: Any) -> None:
        try:
            if not isinstance(params, dict):
                raise _RpcError(_INVALID_PARAMS, "Invalid params: 'params' must be an object.")
            handler = self.rpc.get(method)
            if handler is None:
                raise _RpcError(_METHOD_NOT_FOUND, f"Method not found: {method}")
            context = self._context(params)
            result = handler(self, request_id, params, context)
        except _RpcError as err:
            self._send_error(request_id, err)
            return
        except Exception as err:  # noqa: BLE001 - a bug must not end the session
            self.log(f"internal error in {method}: {type(err).__name__}: {err}")
            self._send_error(request_id, _RpcError(_INTERNAL_ERROR, f"Internal error: {type(err).__name__}"))
            return
        if result is not None:
            self._send_result(request_id, result, context)

    def _context(self, params: "Dict[str, Any]") -> _RequestContext:
        """The version and capabilities of a request: its envelope's, else the handshake's."""
        meta = params.get("_meta")
        version = meta.get(_META_VERSION) if isinstance(meta, dict) else None
        if version is None:
            return self.handshake
        if _protocol(version) is None:
            raise _RpcError(_UNSUPPORTED_VERSION, f"Unsupported protocol version: {version}",
                            {"requested": version, "supported": [protocol.name for protocol in _PROTOCOLS]})
        capabilities = meta.get(_META_CAPABILITIES) if isinstance(meta, dict) else None
        # From 2026-07-28 on, a request opts in to log messages by naming a level.
        logs = meta.get(_META_LOG_LEVEL) in _LOG_LEVELS_SHOWING_NOTICE if isinstance(meta, dict) else False
        return _RequestContext(str(version), capabilities if isinstance(capabilities, dict) else {}, logs,
                               _client_name(meta.get(_META_CLIENT) if isinstance(meta, dict) else None))

    # The requests, each answered by the method recorded for it.

    @rpc.on("initialize")
    def initialize(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        """The handshake: the version the client asked for when askq speaks
        it, else the latest (the client then decides)."""
        asked = params.get("protocolVersion")
        known = _protocol(asked)
        version = asked if known is not None and known.handshake else _latest_handshake().name
        capabilities = params.get("capabilities")
        name = _client_name(params.get("clientInfo"))
        self.handshake = _RequestContext(str(version), _kept_capabilities(capabilities), client=name)
        self.owner = self.board.owner(str(name or ""))
        self.log(f"client {name or '(unnamed)'} speaks {version} and {self._what_calls_get(self.handshake)}")
        capabilities = {"tools": {}, "logging": {}, "resources": {}}
        if self.handshake.polls_tasks:
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        if self.handshake.views_forms:
            capabilities["extensions"] = {_APPS_EXTENSION: {"elicitation": {}}}
        return {"protocolVersion": version, "capabilities": capabilities, "serverInfo": _server_info()}

    def _what_calls_get(self, context: _RequestContext) -> str:
        if context.can_elicit:
            return "draws forms: calls ask the person there"
        if context.draws_views:
            return "draws no forms but MCP Apps views: calls show the questions in the conversation"
        if context.opens_urls and self.web is not None:
            return "draws no forms but opens pages by URL: calls send it the web page"
        if self.web is not None:
            return "draws no forms: calls ask the person on a web page"
        return "draws no forms: calls will say nobody could be asked"

    @rpc.on("server/discover")
    def discover(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        # Always the new era's result, whole, even asked without an envelope.
        return {"resultType": "complete", "supportedVersions": [protocol.name for protocol in _PROTOCOLS],
                "capabilities": {"tools": {}, "resources": {}, "extensions": {
                    _TASKS_EXTENSION: {}, _APPS_EXTENSION: {"elicitation": {}}}},
                "ttlMs": _TOOLS_TTL_MS, "cacheScope": "public"}

    @rpc.on("ping")
    def ping(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        return {}

    @rpc.on("logging/setLevel")
    def set_level(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        # The one thing askq logs to the client is where a web page waits: any
        # level that still shows "notice" keeps it.
        level = params.get("level")
        if level not in _LOG_LEVELS:
            raise _RpcError(_INVALID_PARAMS, f"Invalid params: 'level' must be one of {', '.join(_LOG_LEVELS)}.")
        self.handshake.logs = level in _LOG_LEVELS_SHOWING_NOTICE
        return {}

    @rpc.on("tools/list")
    def list_tools(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        return _tools_listed(context.structured, context.polls_tasks, context.draws_views, context.stateless)

    @rpc.on("resources/list")
    def list_resources(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        return _cacheable({"resources": [_view_resource()]}, context.stateless)

    @rpc.on("resources/read")
    def read_resource(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        if params.get("uri") != _VIEW_URI:
            raise _RpcError(_RESOURCE_NOT_FOUND, f"Resource not found: this server has {_VIEW_URI} only.",
                            {"uri": params.get("uri")})
        return _cacheable({"contents": [{"uri": _VIEW_URI, "mimeType": _VIEW_MIME, "text": _view_document(),
                                         "_meta": {"ui": {"prefersBorder": False}}}]}, context.stateless)

    @rpc.on("tools/call")
    def call_tool(
        self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext,
    ) -> "Optional[Dict[str, Any]]":
        """tools/call: a refused call is a tool error; otherwise ask the person
        through the client's form, its view or a web page, or say that nobody could be asked."""
        if params.get("name") == _VIEW_TOOL:
            return _view_tool_result(params.get("arguments"))
        if params.get("name") != TOOL_NAME:
            raise _RpcError(_INVALID_PARAMS, f"Unknown tool {params.get('name')!r}; this server has {TOOL_NAME!r}.")
        arguments = params.get("arguments", {})
        try:
            output = ask(arguments)
        except QuestionError as err:
            return _tool_result(error_text(err), context=context, error=True)
        responses = params.get("inputResponses")
        if context.stateless and responses is not None:
            sealed = self.seal.check(params.get("requestState"), arguments)
            response = responses.get(TOOL_NAME) if isinstance(responses, dict) else None
            if "page" in sealed:
                return self._from_page_response(request_id, output, sealed["page"], response, context,
                                                _progress_token(params))
            if response is None:
                raise _RpcError(_INVALID_PARAMS, f"Invalid params: 'inputResponses' has no {TOOL_NAME!r} response.")
            return _elicited_result(output, response, context)
        secret = _holds_secret(output.questions)
        task = self._task_wanted(params, context, secret)
        if task is not None:
            return self._open_task(request_id, output, task, context, on_page=secret)
        if secret or not context.can_elicit:
            return self._ask_without_form(request_id, output, arguments, context, secret, _progress_token(params))
        if context.stateless:
            return {"resultType": "input_required", "inputRequests": {TOOL_NAME: {
                "method": "elicitation/create", "params": _form_for(output, context)}},
                "requestState": self.seal.seal(arguments)}
        asked = self.board.open(output, self.owner)
        if asked.finished:
            return self._delivered(asked, context)
        self.waiting[_request_key(request_id)] = _WaitingCall(request_id, asked, context, _progress_token(params))
        if not self._form_open(asked):  # the same call again while its form is open waits on that form
            self._send_form(asked, context)
        self.board.announce(asked)
        return None

    def _form_open(self, ask: _Ask) -> bool:
        return any(open_form is ask for open_form in self.forms.values())

    def _send_form(self, ask: _Ask, context: _RequestContext) -> None:
        """The ask's form, to the client; a task's says which task it belongs to."""
        self.sent += 1
        elicitation_id = f"askq-{self.sent}"
        self.forms[_request_key(elicitation_id)] = ask
        form = _form_for(ask.output, context)
        if ask.task is not None:
            form["_meta"] = {**form.get("_meta", {}), _RELATED_TASK: {"taskId": ask.id}}
        self._send(_Outgoing.request(elicitation_id, "elicitation/create", form))

    def _delivered(self, ask: _Ask, context: _RequestContext) -> "Dict[str, Any]":
        """The result of an ask that has ended, for the call it reaches: said
        to be late when a call that waited on it had ended first."""
        outcome = ask.deliver()
        # A task's result is fetched when it is ready: it is never late.
        return _tool_result(result_text(outcome), outcome, context, late=ask.interrupted and ask.task is None)

    def _end_ask(self, ask: _Ask, outcome: QuestionOutput) -> None:
        """The person is done: every call waiting on the ask is answered; with
        none waiting, the outcome waits for the next call that asks the same."""
        if not ask.finish(outcome):
            return
        self._answer_waiting(ask)
        if not ask.delivered:
            self.log("the person answered after the call had ended: the same call made again gets the answers")

    def _answer_waiting(self, ask: _Ask) -> None:
        """The ask has ended: every call (or task poll) waiting on it is answered, and a task's client told."""
        for key, waiting in list(self.waiting.items()):
            if waiting.ask is ask:
                del self.waiting[key]
                self._send_result(waiting.call_id, self._delivered(ask, waiting.context), waiting.context)
        if ask.task is not None:
            self._tell_status(ask)

    def _ask_without_form(
        self, request_id: Any, output: QuestionOutput, arguments: Any, context: _RequestContext, secret: bool,
        progress: Any = None,
    ) -> "Optional[Dict[str, Any]]":
        """A call no form takes (the client draws none, or a question is a
        secret, which never goes into a form): the view in the conversation,
        the page by URL or opened here, or in words, nobody asked."""
        if context.draws_views and not secret:
            return _view_call_result(output, context)
        if context.opens_urls and (secret or self.web is not None):
            return self._ask_by_url(request_id, output, arguments, context, progress)
        if self.web is not None:
            return self._ask_on_page(request_id, output, context, progress)
        nobody = QuestionOutput(output.questions, [], Outcome.UNAVAILABLE)
        return _tool_result(_SECRET_NOT_IN_FORM if secret else unavailable_text(), nobody, context)

    def _page_ask(self, output: QuestionOutput, owner: "Optional[_AskOwner]" = None) -> "Tuple[_Ask, _PageHost, bool]":
        """The ask of a call put on a page: found again, page and all, or
        opened with a page of its own; its page, and whether that is new."""
        ask = self.board.open(output, owner or self.owner)
        fresh = ask.page is None
        return ask, self.board.page(ask, self.web), fresh

    def _ask_by_url(
        self, request_id: Any, output: QuestionOutput, arguments: Any, context: _RequestContext, progress: Any,
    ) -> "Optional[Dict[str, Any]]":
        """The page, for the client to open where the person is: a URL-mode
        request, or under 2026-07-28 an input request whose retry waits for it."""
        ask, page, _ = self._page_ask(output)
        if ask.finished:
            return self._delivered(ask, context)
        url = page.url
        self.board.announce(ask, url)
        params = {"mode": "url", "message": _URL_MESSAGE, "url": url}
        # Some clients show the URL only once the call has ended, while the
        # page waits for the person: the log says where it is meanwhile.
        where = (f"the client is asked to open the page for a call at {url}",
                 f"Answer the questions in a browser: {url}")
        if context.stateless:
            self._tell_where(context, *where)
            return {"resultType": "input_required", "inputRequests": {TOOL_NAME: {
                "method": "elicitation/create", "params": params}},
                "requestState": self.seal.seal(arguments, ask.id)}
        self.sent += 1
        elicitation_id = f"askq-{self.sent}"
        self.by_url[_request_key(elicitation_id)] = _WaitingCall(request_id, ask, context, progress)
        self._send(_Outgoing.request(elicitation_id, "elicitation/create", {**params, "elicitationId": elicitation_id}))
        self._tell_where(context, *where)
        return None

    def _from_page_response(
        self, request_id: Any, output: QuestionOutput, key: Any, response: Any, context: _RequestContext,
        progress: Any = None,
    ) -> "Optional[Dict[str, Any]]":
        """The retry of a call sent by URL: answered once its page is done."""
        ask = self.board.get(key)
        if ask is None or ask.page is None or ask.delivered:  # a page's answers reach one call, once
            return _tool_result(_PAGE_GONE_TEXT, QuestionOutput(output.questions, [], Outcome.UNAVAILABLE), context)
        if ask.finished:
            return self._delivered(ask, context)
        return self._opened_or_not(_WaitingCall(request_id, ask, context, progress), response)

    def _opened_or_not(self, asked: _WaitingCall, response: Any, elicitation: "Optional[str]" = None) -> "Optional[Dict[str, Any]]":
        """The client's word on a page sent by URL: opened (the call waits for
        the page), or declined (the page ends, nobody answered there)."""
        if isinstance(response, dict) and response.get("action") == "accept":
            self.sent += 1
            asked.elicitation = elicitation
            self.pages[f"page-{self.sent}"] = asked
            return None
        asked.ask.finish(QuestionOutput(asked.output.questions, [], Outcome.DECLINED))
        asked.ask.deliver()
        if asked.ask.page is not None:
            asked.ask.page.end()
        return _tool_result(declined_text(), QuestionOutput(asked.output.questions, [], Outcome.DECLINED), asked.context)

    # Tasks: a call the client polls instead of holding it open.

    def _task_wanted(self, params: "Dict[str, Any]", context: _RequestContext, secret: bool) -> Any:
        """What a call is made a task with, or None: for a client that polls
        (in the core, asking with its ``task`` parameter; under the extension,
        declaring it) and draws forms, when the ask waits on a form, or on a
        secret's page that the client can be sent."""
        if context.stateless:
            wanted: Any = {} if context.extends_tasks and (context.can_elicit or secret) else None
        else:
            wanted = params.get("task") if context.polls_tasks else None
        if secret and not (context.opens_urls or self.web is not None):
            return None
        return wanted

    def _open_task(
        self, request_id: Any, output: QuestionOutput, task: Any, context: _RequestContext, on_page: bool = False,
    ) -> "Optional[Dict[str, Any]]":
        """A call made a task: answered at once with the task, whose ask
        waits on its form (fetched by tasks/result, or under the extension
        shown by tasks/get and answered by tasks/update), or, for a secret,
        on its page (sent by tasks/result)."""
        kept = _task_ttl(task)
        owner = self.board.owner(context.client or "") if context.stateless else self.owner
        asked = self._page_ask(output, owner)[0] if on_page else self.board.open(output, owner)
        if asked.task is None:
            asked.task = _AskTask(time.time(), kept)
            self.board.save(asked)
        self.board.announce(asked, None if asked.page is None else asked.page.url)
        if context.stateless:
            if asked.page is not None and on_page:
                url = asked.page.url
                self._tell_where(context, f"a task's questions are at {url}", f"Answer the questions in a browser: {url}")
            return {**_task_view(asked, created=True, flat=True), "resultType": "task"}
        self._send_result(request_id, {"task": _task_view(asked, created=True)}, context)
        self._tell_status(asked)
        return None

    def _task(self, params: "Dict[str, Any]", context: _RequestContext, core: bool = True,
              extension: bool = True) -> _Ask:
        """The task a request names: an ask of this client's made a task, not
        yet past its keeping; any other id is no such task."""
        _speaks_tasks(context, core, extension)
        task_id = params.get("taskId")
        ask = self._own_task(task_id, context)
        if ask is None:
            raise _RpcError(_INVALID_PARAMS, f"Invalid params: no task {_quoted(str(task_id)[:_MESSAGE_CHARS])}"
                            " here (unknown, expired, or never this client's).")
        return ask

    def _own_task(self, task_id: Any, context: _RequestContext) -> "Optional[_Ask]":
        """The ask of a task id, when it is a task of the caller's, not yet past its keeping."""
        ask = self.board.get(task_id)
        client = (context.client or "") if context.stateless else self.owner.client
        if ask is None or ask.task is None or ask.owner.client != client or _task_gone(ask):
            return None
        return ask

    def _tell_status(self, ask: _Ask) -> None:
        if self.handshake.polls_tasks:
            self._send(_Outgoing.notification("notifications/tasks/status", _task_view(ask)))

    @rpc.on("tasks/get")
    def get_task(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        ask = self._task(params, context)
        if not context.stateless:
            return _task_view(ask)
        return self._detailed_task(ask, context)

    def _detailed_task(self, ask: _Ask, context: _RequestContext) -> "Dict[str, Any]":
        """The task as the extension shows it: what it waits on from the
        client (its form, or its page's URL), or its result; ``working``
        while it waits on the person alone, at a page already opened."""
        shown = _task_view(ask, flat=True)
        if shown["status"] == "completed":
            shown["result"] = {"resultType": "complete", **self._delivered(ask, context)}
        elif shown["status"] == "input_required":
            key = _outstanding_input(ask, context)
            if key is None:
                shown["status"] = "working"
            elif _holds_secret(ask.output.questions):  # never a form: its page, made again where it has none
                shown["inputRequests"] = {key: {"method": "elicitation/create", "params": {
                    "mode": "url", "message": _URL_MESSAGE, "url": self.board.page(ask, self.web).url}}}
            else:
                shown["inputRequests"] = {key: {"method": "elicitation/create", "params": _form_for(ask.output, context)}}
        return shown

    @rpc.on("tasks/update")
    def update_task(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        """The person's answer to the form a task waits on (the extension's
        way): taken, or refused in words with the form asked again under a
        new key; a response to no form it waits on is ignored."""
        ask = self._task(params, context, core=False)
        assert ask.task is not None
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise _RpcError(_INVALID_PARAMS, "Invalid params: 'inputResponses' must be an object holding the"
                            " responses by the keys of the task's 'inputRequests'.")
        key = _outstanding_input(ask, context)
        if key is None or key not in responses:
            return {}
        if _holds_secret(ask.output.questions):
            return self._task_page_opened(ask, key, responses[key])
        try:
            outcome = _elicited_outcome(ask.output, responses[key])
        except AnswerError as err:
            ask.task.forms += 1
            self.board.save(ask)
            raise _RpcError(_INVALID_PARAMS, f"Invalid params: the response to {key} was refused, and the task"
                            f" still waits, its form asked again as form-{ask.task.forms}: {err}") from None
        self._end_ask(ask, outcome)
        return {}

    def _task_page_opened(self, ask: _Ask, key: str, response: Any) -> "Dict[str, Any]":
        """The client's word on the page of a task's secret: opened (the task
        waits on the person there), or declined (the ask ends, nobody
        answered on the page); anything else is refused, the URL asked again."""
        assert ask.task is not None
        action = response.get("action") if isinstance(response, dict) else None
        if action not in ("accept", "decline", "cancel"):
            ask.task.forms += 1
            self.board.save(ask)
            raise _RpcError(_INVALID_PARAMS, f"Invalid params: the response to {key} must be an elicitation result"
                            ' whose \'action\' is "accept" (the page is open), "decline" or "cancel"; the task still'
                            f" waits, its page asked again as page-{ask.task.forms}.")
        if action == "accept":
            ask.task.opened = True
            self.board.save(ask)
            return {}
        self._end_ask(ask, QuestionOutput(ask.output.questions, [], Outcome.DECLINED))
        if ask.page is not None:
            ask.page.end()
        return {}

    @rpc.on("subscriptions/listen")
    def listen(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Optional[Dict[str, Any]]":
        """A stream of notifications/tasks for the caller's tasks it names:
        acknowledged with the tasks agreed (another client's, or an unknown
        id, is left out, never named), then each task's state now and at
        every change, until every one has ended; askq sends nothing else on it."""
        if not context.stateless:
            raise _RpcError(_METHOD_NOT_FOUND, f"Method not found: subscriptions/listen is not part of protocol"
                            f" {context.version}; its client is told of a task by notifications/tasks/status.")
        wanted = params.get("notifications")
        task_ids = wanted.get("taskIds", []) if isinstance(wanted, dict) else None
        if not isinstance(task_ids, list) or not all(isinstance(task_id, str) for task_id in task_ids):
            raise _RpcError(_INVALID_PARAMS, "Invalid params: 'notifications' must be an object whose 'taskIds',"
                            ' when given, lists the ids of tasks to be told of, such as {"taskIds": ["..."]}.')
        if task_ids:
            _speaks_tasks(context, core=False)
        agreed = [task_id for task_id in dict.fromkeys(task_ids) if self._own_task(task_id, context) is not None]
        listener = _TaskListener(request_id, context, dict.fromkeys(agreed, ""))
        self._send(_Outgoing.notification("notifications/subscriptions/acknowledged", {
            "notifications": {"taskIds": agreed} if task_ids else {}, "_meta": listener.meta()}, streams=request_id))
        self.listening[_request_key(request_id)] = listener
        self._tell_listener(listener, end=False)  # it ends on the next tick: over HTTP, on its own stream
        return None

    def _tell_listeners(self) -> None:
        for listener in list(self.listening.values()):
            self._tell_listener(listener)

    def _tell_listener(self, listener: "_TaskListener", end: bool = True) -> None:
        """Tell a listener of each of its tasks that changed since it was last
        told (a task's whole state, as tasks/get gives it); a task that ended,
        or is gone, is told of no more, and with none left the stream ends."""
        for task_id in list(listener.told):
            ask = self._own_task(task_id, listener.context)
            if ask is None:
                del listener.told[task_id]
                continue
            status = _task_view(ask, flat=True)["status"]
            if listener.changed(task_id, f"{status} {_outstanding_input(ask, listener.context)}"):
                self._send(_Outgoing.notification("notifications/tasks", {
                    **self._detailed_task(ask, listener.context), "_meta": listener.meta()}, streams=listener.request_id))
            if ask.finished:
                del listener.told[task_id]
        if end and not listener.told:
            del self.listening[_request_key(listener.request_id)]
            self._send_result(listener.request_id, {"_meta": listener.meta()}, listener.context)

    @rpc.on("tasks/list")
    def list_tasks(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        """This client's tasks, oldest first, a page at a time: each page's
        cursor names the last task it showed, so a page goes on after it
        even when that task has gone meanwhile."""
        if context.protocol.task_extension:
            raise _RpcError(_METHOD_NOT_FOUND, "Method not found: the Tasks extension has no tasks/list; a client"
                            " keeps the ids of the tasks it made and asks for each with tasks/get.")
        _speaks_tasks(context, extension=False)
        after = _task_cursor_place(params.get("cursor"))
        with self.board.lock:
            asks = list(self.board.asks.values())
        mine = sorted(((ask.task.created, ask.id), ask) for ask in asks if ask.task is not None
                      and ask.owner.client == self.owner.client and not _task_gone(ask))
        shown = [(place, ask) for place, ask in mine if after is None or place > after]
        page: Dict[str, Any] = {"tasks": [_task_view(ask) for _, ask in shown[:_TASKS_PAGE]]}
        if len(shown) > _TASKS_PAGE:
            page["nextCursor"] = _task_cursor(shown[_TASKS_PAGE - 1][0])
        return page

    @rpc.on("tasks/result")
    def task_result(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Optional[Dict[str, Any]]":
        """The task's tool result, once its ask has ended; meanwhile the
        request waits, and its form is sent (again, to a new session)."""
        ask = self._task(params, context, extension=False)
        self.task_polls[_request_key(request_id)] = ask.id
        if ask.finished:
            return self._delivered(ask, context)
        waiting = _WaitingCall(request_id, ask, context, _progress_token(params))
        if ask.page is not None:
            self._wait_on_page(waiting, ask.page)
        else:
            self.waiting[_request_key(request_id)] = waiting
            if not self._form_open(ask):
                self._send_form(ask, context)
        return None

    def _wait_on_page(self, waiting: _WaitingCall, page: "_PageHost") -> None:
        """A task poll on an ask with a page: the client is sent the page's URL
        when it opens pages (its answer says whether the poll waits), else the
        poll waits on the page, which the log names."""
        self.sent += 1
        url = page.url
        if waiting.context.opens_urls:
            elicitation_id = f"askq-{self.sent}"
            self.by_url[_request_key(elicitation_id)] = waiting
            self._send(_Outgoing.request(elicitation_id, "elicitation/create", {
                "mode": "url", "message": _URL_MESSAGE, "url": url, "elicitationId": elicitation_id,
                "_meta": {_RELATED_TASK: {"taskId": waiting.ask.id}}}))
        else:
            self.pages[f"page-{self.sent}"] = waiting
        self._tell_where(waiting.context, f"a task's questions are at {url}", f"Answer the questions in a browser: {url}")

    @rpc.on("tasks/cancel")
    def cancel_task(self, request_id: Any, params: "Dict[str, Any]", context: _RequestContext) -> "Dict[str, Any]":
        """The agent no longer waits: the ask ends timed out, never offered
        again, its page saying so, and its form withdrawn."""
        ask = self._task(params, context)
        assert ask.task is not None
        if ask.finished and context.stateless:
            return {}  # the extension's cancel is a request the server may find too late
        if ask.finished:
            raise _RpcError(_INVALID_PARAMS, f"Invalid params: task {ask.id} has already ended"
                            f" ({_task_view(ask)['status']}); only a task still running can be cancelled.")
        ask.task.cancelled = True
        ask.supersede()
        for key in [key for key, form in self.forms.items() if form is ask]:
            del self.forms[key]
            self._send(_Outgoing.notification("notifications/cancelled", {
                "requestId": json.loads(key), "reason": "The task was cancelled."}, follows=json.loads(key)))
        self._answer_waiting(ask)
        return {} if context.stateless else _task_view(ask)

    # What happens around a call while it waits.

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            self.call_ended(params.get("requestId"))

    def call_ended(self, call_id: Any) -> None:
        """The client gave up on a call, or it ended otherwise (its stream
        closed): the call is forgotten, but its ask, its form and its page
        stay open, for a late answer and the next call that asks the same;
        a listener is no longer told anything."""
        self.listening.pop(_request_key(call_id), None)
        waiting: List[Tuple[str, _WaitingCall]] = [*self.pages.items(), *self.by_url.items()]
        for key, page in waiting:
            if page.call_id == call_id:
                self.pages.pop(key, None)
                self.by_url.pop(key, None)
                page.ask.withdraw()
        ended = self.waiting.pop(_request_key(call_id), None)
        # A task poll that ended leaves its task as it was: the client polls again.
        if ended is not None and self.task_polls.pop(_request_key(call_id), None) is None:
            ended.ask.withdraw()

    def close(self) -> None:
        """The session ended: its calls end, and its asks may be taken by the
        client's next session."""
        for waiting in [*self.pages.values(), *self.by_url.values(), *self.waiting.values()]:
            waiting.ask.withdraw()
        self.pages.clear()
        self.by_url.clear()
        self.waiting.clear()
        self.listening.clear()
        self.board.owner_ended(self.owner)

    def _on_response(self, message: "Dict[str, Any]") -> None:
        """The client's answer to an elicitation request: answer its call."""
        by_url = self.by_url.pop(_request_key(message["id"]), None)
        if by_url is not None:
            self._on_url_response(by_url, message)
            return
        ask = self.forms.pop(_request_key(message["id"]), None)
        if ask is None:
            self.log(f"a response to no pending request: {message['id']!r}")
            return
        calls = [waiting for waiting in self.waiting.values() if waiting.ask is ask]
        if "error" in message or not calls:
            self._on_form_failed(ask, calls, message)
            return
        try:
            outcome = _elicited_outcome(ask.output, message.get("result"))
        except AnswerError as err:  # refused as the model would be told; the ask stays open
            if ask.task is not None:  # a task's person is asked again, the poll still waiting
                self._send_form(ask, calls[0].context)
                return
            for waiting in calls:
                self._answer_calls([waiting], _tool_result(error_text(err), context=waiting.context, error=True))
            return
        self._end_ask(ask, outcome)

    def _on_form_failed(self, ask: _Ask, calls: "List[_WaitingCall]", message: "Dict[str, Any]") -> None:
        """A form that failed (a person may have seen it), or one answered
        after its call ended: taken into the ask when it holds the person's
        word, while a client's withdrawing it (cancel, or an error) leaves
        the ask open for the next call."""
        if calls:
            for waiting in calls:
                self._answer_calls([waiting], _failed_form_result(ask.output, message.get("error"), waiting.context))
            ask.finish(QuestionOutput(ask.output.questions, [], Outcome.UNAVAILABLE))
            ask.deliver()
            return
        result = message.get("result")
        if "error" in message or (isinstance(result, dict) and result.get("action") == "cancel"):
            self.log("a form came back withdrawn after its call ended: the ask stays open for the next call")
            return
        try:
            self._end_ask(ask, _elicited_outcome(ask.output, result))
        except AnswerError as err:
            self.log(f"a late form response was refused, and the ask stays open: {err}")

    def _answer_calls(self, calls: "List[_WaitingCall]", result: "Dict[str, Any]") -> None:
        for waiting in calls:
            self.waiting.pop(_request_key(waiting.call_id), None)
            self._send_result(waiting.call_id, result, waiting.context)

    def _on_url_response(self, asked: _WaitingCall, message: "Dict[str, Any]") -> None:
        if "error" in message:  # the client could not open the page: a person may have seen it
            asked.session.end()
            result: Optional[Dict[str, Any]] = _failed_form_result(asked.output, message.get("error"), asked.context)
        else:
            result = self._opened_or_not(asked, message.get("result"), str(message["id"]))
        if result is not None:
            self._send_result(asked.call_id, result, asked.context)

    def _ask_on_page(
        self, request_id: Any, output: QuestionOutput, context: _RequestContext, progress: Any,
    ) -> "Optional[Dict[str, Any]]":
        """For a client that draws no forms: the questions on a web page; the
        call is answered when the person is done there."""
        ask, page, fresh = self._page_ask(output)
        if ask.finished:
            return self._delivered(ask, context)
        self.sent += 1
        self.pages[f"page-{self.sent}"] = _WaitingCall(request_id, ask, context, progress)
        url = page.url
        self.board.announce(ask, url)
        opened = not fresh or _open_browser(url)
        self._tell_where(context, f"the questions are at {url}" + ("" if opened else " (no browser could be opened here)"),
                         f"Answer the questions in a browser: {url}")
        return None

    def _tell_where(self, context: _RequestContext, logged: str, told: str) -> None:
        """Where a page waits: on stderr, and to the client as a log message
        at a level clients show."""
        self.log(logged)
        if context.logs:
            self._send(_Outgoing.notification("notifications/message", {"level": "notice", "logger": "askq", "data": told}))

    def check_pages(self) -> None:
        """Answer the call of every page that is done (or has been idle too
        long), and of every ask whose time has run out; tell listeners of
        the tasks that changed."""
        self.board.sweep()
        now = time.time()
        for key, page in list(self.pages.items()):
            if page.ask.expire(now):
                del self.pages[key]
                if page.elicitation is not None:
                    self._send(_Outgoing.notification("notifications/elicitation/complete",
                                                      {"elicitationId": page.elicitation}, follows=page.elicitation))
                self._send_result(page.call_id, self._delivered(page.ask, page.context), page.context)
        for key, waiting in list(self.waiting.items()):
            if waiting.ask.expire(now):  # its time ran out while its form was open
                del self.waiting[key]
                self._send_result(waiting.call_id, self._delivered(waiting.ask, waiting.context), waiting.context)
        self._tell_listeners()

    def keep_alive(self) -> None:
        """Tell the client, for each call that waits on the person and gave a
        progress token, that it still waits: clients that reset their
        timeout on progress keep the call open."""
        now = time.monotonic()
        for waiting in [*self.waiting.values(), *self.pages.values(), *self.by_url.values()]:
            if waiting.progress is not None and now - waiting.told >= _PROGRESS_SECONDS:
                waiting.told = now
                self._send(_Outgoing.notification("notifications/progress", {
                    "progressToken": waiting.progress, "progress": int(now - waiting.since),
                    "message": "waiting for the user's answer"}, progress=waiting.progress))

    @property
    def waits(self) -> bool:
        """Whether anything waits on the person (and so on time passing)."""
        return bool(self.pages or self.waiting or self.by_url or self.listening)

    def due_in(self) -> "Optional[float]":
        """The seconds until time passing changes something: a page, a form
        sent by URL and a task's listener are looked at every tick (they end
        elsewhere); a form the client draws, when its ask runs out or its
        progress note is due.  None while nothing waits."""
        if self.pages or self.by_url or self.listening:
            return _POLL_SECONDS
        if not self.waiting:
            return None
        wall, now = time.time(), time.monotonic()
        due = min(waiting.ask.ends - wall for waiting in self.waiting.values())
        for waiting in self.waiting.values():
            if waiting.progress is not None:
                due = min(due, waiting.told + _PROGRESS_SECONDS - now)
        return max(due, 0.0)

    def _send_result(self, request_id: Any, result: "Dict[str, Any]", context: _RequestContext) -> None:
        task_id = self.task_polls.pop(_request_key(request_id), None)
        if task_id is not None:
            result = {**result, "_meta": {**result.get("_meta", {}), _RELATED_TASK: {"taskId": task_id}}}
        if context.stateless:
            result = {"resultType": "complete", **result}
            result["_meta"] = {_META_SERVER: _server_info(), **result.get("_meta", {})}
        self._send(_Outgoing.response(request_id, {"result": result}))

    def _send_error(self, request_id: Any, err: _RpcError) -> None:
        error: Dict[str, Any] = {"code": err.code, "message": str(err)}
        if err.data is not None:
            error["data"] = err.data
        self._send(_Outgoing.response(request_id, {"error": error}))

    def _send(self, message: "_Outgoing") -> None:
        self.transport.send(message)


@dataclass
class _Outgoing:
    """One JSON-RPC message the server sends, with where it belongs, so that
    a transport routes it without reading it again: ``answers``, the key of
    the client's request a response answers; ``asks``, the key of the
    server's own request; ``follows``, of the server's request whose stream
    a notification goes on; ``progress``, of the progress token whose
    call's stream a progress note goes on; ``streams``, of the client's
    request still waiting whose stream a notification goes on (a listen's)."""

    message: Dict[str, Any]
    answers: Optional[str] = None
    asks: Optional[str] = None
    follows: Optional[str] = None
    progress: Optional[str] = None
    streams: Optional[str] = None

    @classmethod
    def response(cls, request_id: Any, outcome: "Dict[str, Any]") -> "_Outgoing":
        return cls({"jsonrpc": "2.0", "id": request_id, **outcome}, answers=_request_key(request_id))

    @classmethod
    def request(cls, request_id: str, method: str, params: "Dict[str, Any]") -> "_Outgoing":
        return cls({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                   asks=_request_key(request_id))

    @classmethod
    def notification(cls, method: str, params: "Dict[str, Any]", follows: Any = None,
                     progress: Any = None, streams: Any = None) -> "_Outgoing":
        return cls({"jsonrpc": "2.0", "method": method, "params": params},
                   follows=None if follows is None else _request_key(follows),
                   progress=None if progress is None else _request_key(progress),
                   streams=None if streams is None else _request_key(streams))

    def line(self) -> bytes:
        """The message as stdio carries it: one line of strict JSON."""
        return json.dumps(self.message, allow_nan=False).encode("ascii") + b"\n"


class _Transport:
    """What carries the server's messages to its client."""

    __slots__ = ()

    def send(self, message: _Outgoing) -> None:
        raise NotImplementedError


class _LineTransport(_Transport):
    """MCP over stdio, the sending side: each message one line on the stream."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def send(self, message: _Outgoing) -> None:
        self.stream.write(message.line())
        self.stream.flush()


def _parse_message(line: bytes) -> Any:
    """One JSON-RPC message: bounded by the line's length (a call and its
    envelope) and by a depth that leaves a call its own MAX_DEPTH levels."""
    try:
        text = line.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("The message is not UTF-8 text.") from None
    if _too_deep(text, _MESSAGE_DEPTH):
        raise ValueError(f"The message nests arrays and objects more than {_MESSAGE_DEPTH} levels deep.")
    try:
        return _decoded_json(text)
    except (ValueError, RecursionError) as err:
        raise ValueError(f"The message is not valid JSON ({err}).") from None


def _is_valid_id(request_id: Any) -> bool:
    """JSON-RPC ids that every client can read back: strings and integers."""
    return isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))


def _echoed_id(message: Any) -> Any:
    """The id to answer an invalid message with: its own, when that is valid."""
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if _is_valid_id(request_id) else None


def _cacheable(result: "Dict[str, Any]", stateless: bool) -> "Dict[str, Any]":
    """A list or read result, with what 2026-07-28 requires of it: how long a
    client may keep it, and that it is the same for everyone (askq's tool and
    view are)."""
    if stateless:
        result.update(ttlMs=_TOOLS_TTL_MS, cacheScope="public")
    return result


def _form_for(output: QuestionOutput, context: _RequestContext) -> "Dict[str, Any]":
    """The form for a client to draw; where it draws forms with askq's view,
    the form names the view and carries what the view draws and the
    questions it checks the answers against, the form itself staying
    whole for a client that falls back to its own."""
    form = to_elicitation(output, protocol_version=context.version, client=context.client)
    if context.views_forms:
        form["_meta"] = {"ui": {"resourceUri": _VIEW_URI}, _VIEW_META: {
            "html": _view_form(_question_list(output), {}, {}, as_form=True), "asked": _batch_record(output)}}
    return form


class _Encoded(Dict[str, Any]):
    """A result that is the same for every request that gets it, built once
    and never changed: its JSON text is kept beside it, so that a busy
    server does not serialize it again for each request."""

    __slots__ = ("text",)

    def __init__(self, result: "Dict[str, Any]") -> None:
        super().__init__(result)
        self.text = json.dumps(result)


@functools.lru_cache(maxsize=None)
def _tools_listed(structured: bool, tasks: bool, views: bool, stateless: bool) -> _Encoded:
    """tools/list's result, which hangs on these alone: whether results are
    structured, calls may be tasks, the client draws views, and the request
    speaks 2026-07-28."""
    tool = tool_definition("mcp")
    if structured:
        tool["outputSchema"] = _output_schema()
    if tasks:
        tool["execution"] = {"taskSupport": "optional"}
    result: Dict[str, Any] = {"tools": [tool]}
    if views:
        tool["_meta"] = {"ui": {"resourceUri": _VIEW_URI}}
        result["tools"].append(_view_tool())
    return _Encoded(_cacheable(result, stateless))


def _message_text(message: "Dict[str, Any]") -> str:
    """A message as JSON, the same text json.dumps makes: a response whose
    result was encoded once has that text put in its envelope."""
    result = message.get("result")
    if isinstance(result, _Encoded) and list(message) == ["jsonrpc", "id", "result"]:
        return f'{{"jsonrpc": {json.dumps(message["jsonrpc"])}, "id": {json.dumps(message["id"])}, "result": {result.text}}}'
    return json.dumps(message)


def _elicited_result(output: QuestionOutput, result: Any, context: _RequestContext) -> "Dict[str, Any]":
    """The tool result for what the client's form gave back."""
    try:
        done = _elicited_outcome(output, result)
    except AnswerError as err:
        return _tool_result(error_text(err), context=context, error=True)
    return _tool_result(result_text(done), done, context)


def _elicited_outcome(output: QuestionOutput, result: Any) -> QuestionOutput:
    """What the client's form gave back, as an outcome: answered, or
    declined (a decline or a cancel); AnswerError for what cannot be read."""
    answers = from_elicitation(output, result)[1]
    if answers is None:
        return QuestionOutput(output.questions, [], Outcome.DECLINED)
    return QuestionOutput(output.questions, answers, Outcome.ANSWERED)


def _failed_form_result(output: QuestionOutput, error: Any, context: _RequestContext) -> "Dict[str, Any]":
    """The client answered the form with an error: it may have shown the
    form to a person, but no answers came back."""
    message = error.get("message") if isinstance(error, dict) else None
    said = f" (it said {_quoted(str(message)[:_MESSAGE_CHARS])})" if message else ""
    text = (
        f"The user's client could not complete the form with your questions{said}, so no answers"
        " came back. The user may have seen the questions. Do not assume any answers; ask again"
        " later if you still need them, or go on with what you know and say what you assumed."
    )
    return _tool_result(text, QuestionOutput(output.questions, [], Outcome.UNAVAILABLE), context)


def _tool_result(
    text: str, outcome: "Optional[QuestionOutput]" = None, context: "Optional[_RequestContext]" = None,
    error: bool = False, late: bool = False,
) -> "Dict[str, Any]":
    """A tools/call result: the text the model reads and, where the client
    takes it, structuredContent: the outcome (or the status "error") with
    the same text as ``result``, since real hosts hand their model the
    structured part instead of the text, and the model must read askq's words
    whichever part it is given.  A ``late`` outcome (the person answered
    after the call that asked had ended) says so first, and is marked."""
    text = f"{_LATE_LINE}\n{text}" if late else text
    files = [] if outcome is None or error else _attachment_blocks(outcome)
    result: Dict[str, Any] = {"content": [{"type": "text", "text": text}, *files], "isError": error}
    if context is not None and context.structured:
        shown = {"status": "error"} if error or outcome is None else outcome.to_dict()
        result["structuredContent"] = {**shown, "result": text, **({"late": True} if late else {})}
    return result


def _attachment_blocks(outcome: QuestionOutput) -> "List[Dict[str, Any]]":
    """The files the person attached, after the result's text: each picture
    an image block the model sees, any other file an embedded resource
    (its bytes as a blob, under a URI of askq's that names its digest)."""
    import base64
    from urllib.parse import quote

    blocks: List[Dict[str, Any]] = []
    for answer in outcome.answers:
        for attachment in answer.attachments:
            data = base64.b64encode(attachment.data).decode("ascii")
            if attachment.is_image:
                blocks.append({"type": "image", "data": data, "mimeType": attachment.media_type})
                continue
            uri = f"askq://attachments/{attachment.sha256}/{quote(attachment.name)}"
            blocks.append({"type": "resource", "resource": {"uri": uri, "mimeType": attachment.media_type, "blob": data}})
    return blocks


def _task_ttl(task: Any) -> int:
    """How long a task is kept once it ended, in milliseconds: as the client
    asked, within what askq keeps an ask."""
    asked = task.get("ttl", _TASK_KEPT_MS) if isinstance(task, dict) else None
    if asked is None and isinstance(task, dict):
        asked = _TASK_KEPT_MS
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 0:
        raise _RpcError(_INVALID_PARAMS, "Invalid params: 'task' must be an object whose 'ttl', when given, is a"
                        ' whole number of milliseconds, such as {"ttl": 60000}.')
    return max(_TASK_KEPT_LEAST_MS, min(asked, _TASK_KEPT_MS))


def _speaks_tasks(context: _RequestContext, core: bool = True, extension: bool = True) -> None:
    """Refuse a task request under a version without tasks (or without this
    method of them), or one that did not declare the extension."""
    if not ((core and context.protocol.tasks) or (extension and context.protocol.task_extension)):
        raise _RpcError(_METHOD_NOT_FOUND, f"Method not found: this method of tasks is not part of protocol {context.version}.")
    if context.protocol.task_extension and not context.extends_tasks:
        raise _RpcError(_MISSING_CAPABILITY, f"Missing required client capability: the {_TASKS_EXTENSION} extension,"
                        " declared in the request's client capabilities.",
                        {"requiredCapabilities": {"extensions": {_TASKS_EXTENSION: {}}}})


def _outstanding_input(ask: _Ask, context: _RequestContext) -> "Optional[str]":
    """The key of what an open task waits on from its client under the
    extension: its form, or, for a secret, its page's URL until the client
    has opened it (a client that opens no pages is sent none: the log names
    the page); new with each request asked, never used twice in a task."""
    task = ask.task
    assert task is not None
    if ask.finished:
        return None
    if not _holds_secret(ask.output.questions):
        return f"form-{task.forms}"
    return None if task.opened or not context.opens_urls else f"page-{task.forms}"


def _task_cursor(place: "Tuple[float, str]") -> str:
    """The cursor of a page of tasks/list: where the page ended (the last
    task's creation and id), opaque to the client."""
    import base64

    return base64.urlsafe_b64encode(json.dumps(list(place)).encode()).decode()


def _task_cursor_place(cursor: Any) -> "Optional[Tuple[float, str]]":
    """Where a page of tasks/list goes on from: None for the first page;
    a cursor this server never gave is refused."""
    import base64
    import binascii

    if cursor is None:
        return None
    try:
        created, task_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        if isinstance(created, (int, float)) and not isinstance(created, bool) and isinstance(task_id, str):
            return float(created), task_id
    except (AttributeError, UnicodeError, binascii.Error, ValueError, TypeError, RecursionError):
        pass
    raise _RpcError(_INVALID_PARAMS, "Invalid params: 'cursor' is not one this server gave; pass the"
                    " 'nextCursor' of the previous tasks/list page, or no cursor to start from the first task.")


def _task_gone(ask: _Ask) -> bool:
    """Whether a task has been kept its time after it ended."""
    assert ask.task is not None
    return ask.result is not None and time.time() >= ask.ended + ask.task.ttl / 1000.0


def _iso_time(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}Z"


def _task_view(ask: _Ask, created: bool = False, flat: bool = False) -> "Dict[str, Any]":
    """The task as the protocol shows it: ``working`` as it is made,
    ``input_required`` while its form waits on the person, then
    ``completed`` (whatever the person did), or ``cancelled``; ``flat``,
    as the Tasks extension names its fields."""
    task = ask.task
    assert task is not None
    status = "input_required" if not created else "working"
    if ask.finished:
        status = "cancelled" if task.cancelled else "completed"
    times = {"createdAt": _iso_time(task.created), "lastUpdatedAt": _iso_time(max(task.created, ask.ended))}
    if flat:
        return {"taskId": ask.id, "status": status, **times, "ttlMs": task.ttl, "pollIntervalMs": _TASK_POLL_MS}
    return {"taskId": ask.id, "status": status, "ttl": task.ttl, **times, "pollInterval": _TASK_POLL_MS}


def _progress_token(params: "Dict[str, Any]") -> Any:
    """The progress token a request carries, if it is one a client can read back."""
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if _is_valid_id(token) else None


def _output_schema() -> "Dict[str, Any]":
    """The JSON Schema of structuredContent: an outcome's to_dict() and the
    result's text; an error result has the status "error" and its text."""
    text = {"type": "string"}
    answer = {"type": "object", "properties": {
        "id": text, "answer": {"type": ["string", "null"]},
        "selected": {"type": ["array", "null"], "items": text}, "assumed": {"type": "boolean"}, "note": text,
    }, "required": ["id", "answer", "selected"]}
    return {"type": "object", "properties": {
        "questions": {"type": "array", "items": {"type": "object"}},
        "answers": {"type": "array", "items": answer},
        "status": {"type": "string", "enum": [*(outcome.value for outcome in Outcome), "error"]},
        "result": {"type": "string", "description": "What happened, in words for you: the same text as the"
                   " result's text content. Read it and do what it says."},
        "late": {"type": "boolean", "description": "True when the user answered after an earlier call had ended."},
    }, "required": ["result"]}


def _server_info() -> "Dict[str, str]":
    return {"name": "askq", "version": __version__}


def _request_key(request_id: Any) -> str:
    """A request id as a key: 1 and "1" are different ids.  One copy of
    each (thousands of sessions wait on the same few ids)."""
    return sys.intern(json.dumps(request_id))


class _LineBuffer:
    """Complete lines out of the bytes read; a line over _MAX_LINE is
    dropped whole and comes out as None, to be refused."""

    def __init__(self) -> None:
        self.pending = b""
        self.dropping = False

    def feed(self, data: bytes) -> "List[Optional[bytes]]":
        lines: List[Optional[bytes]] = []
        self.pending += data
        while b"\n" in self.pending:
            line, _, self.pending = self.pending.partition(b"\n")
            lines.append(None if self.dropping or len(line) > _MAX_LINE else line)
            self.dropping = False
        if len(self.pending) > _MAX_LINE:
            self.pending, self.dropping = b"", True
        return lines


def _serve(reader: Any, writer: Any, log: "Callable[[str], None]", web: "Optional[_WebOptions]" = None,
           board: "Optional[_AskBoard]" = None) -> int:
    """Serve MCP on binary streams until the input ends; return 0."""
    server = _McpServer(_LineTransport(writer), log, web, board=board)
    lines = _LineBuffer()
    fd = _fileno(reader)
    try:
        while True:
            data = _next_input(reader, fd, server)
            if not data:
                return 0
            for line in lines.feed(data):
                if line is None:
                    server.refuse(f"Parse error: the message is longer than {_MAX_LINE} bytes.")
                elif line.strip():
                    server.receive(line)
    finally:
        server.close()


def _next_input(reader: Any, fd: "Optional[int]", server: _McpServer) -> "Optional[bytes]":
    """The next bytes from the client (empty at the end of input); meanwhile
    the calls of web pages that are done are answered."""
    if fd is None:  # nothing select() can wait on: a line at a time
        return bytes(reader.readline(_MAX_LINE + 1))
    import select

    while True:
        ready, _, _ = select.select([fd], [], [], _POLL_SECONDS if server.waits else None)
        server.check_pages()
        server.keep_alive()
        if ready:
            return os.read(fd, 65536)


def _open_browser(url: str) -> bool:
    """Open the default browser where one can be opened; whether it was."""
    import webbrowser

    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


# ---------------------------------------------------------------------------
# MCP over HTTP: python askq.py serve --http
#
# The same _McpServer behind MCP's Streamable HTTP transport at /mcp.  What a
# server writes while it handles a POST belongs to that POST: the answer as
# JSON when its requests are answered at once, else an event stream that
# carries what the server sends meanwhile (a form to fill in, a log) until
# they are.  Under the handshake versions a session (Mcp-Session-Id) is one
# _McpServer; under 2026-07-28 each request gets a fresh one, so nothing
# is kept between a call and its retry.

_MCP_PATH = "/mcp"
_MCP_DEFAULT_PORT = 8765
_MCP_IDLE_SESSIONS = 100_000  # sessions with no call waiting and no open ask: beyond this, the idlest end
_MCP_KEEPALIVE_SECONDS = 10.0  # a waiting stream says it is alive this often, and learns that its client left
_STATE_KEY_VARIABLE = "ASKQ_STATE_KEY"
_STORE_VARIABLE = "ASKQ_STORE"  # the store --store would name: "memory", a path or a URL


class _Exchange(_StreamSource):
    """One POST's share of what its server writes: the messages for it, and
    the requests it carried that are not answered yet; it is done once they
    all are.  As an event stream it is ticked by the pump: then the calls
    of pages that are done are answered, progress is told, and a quiet
    stream says now and then that it is alive (and so learns when its
    client has left)."""

    __slots__ = ("alive_due", "awaited", "done", "messages", "quiet_since", "session")

    def __init__(self, awaited: "List[str]", session: "Optional[_McpSession]" = None) -> None:
        super().__init__()
        self.messages: List[Dict[str, Any]] = []
        self.awaited = awaited  # each once
        self.done = not awaited
        self.session = session
        self.quiet_since = time.monotonic()
        self.alive_due = False

    def put(self, message: "Dict[str, Any]") -> None:
        self.messages.append(message)
        self.wake()

    def answered(self, key: str) -> None:
        if key in self.awaited:
            self.awaited.remove(key)
            if not self.awaited:
                self.end()

    def end(self) -> None:
        self.done = True
        self.wake()

    def drained(self) -> "List[Dict[str, Any]]":
        """What has come so far, without waiting."""
        found, self.messages = self.messages, []
        return found

    def take(self) -> "Tuple[bytes, bool]":
        done = self.done  # read first: a message put before the end is never left behind
        found = self.drained()
        chunks = [b": waiting for the person\n\n"] if self.alive_due else []
        self.alive_due = False
        if found:
            self.quiet_since = time.monotonic()
        chunks += [b"event: message\ndata: " + _message_text(message).encode("ascii") + b"\n\n" for message in found]
        return b"".join(chunks), done

    def tick(self) -> float:
        later = self.session.tick() if self.session is not None else None
        now = time.monotonic()
        if now - self.quiet_since >= _MCP_KEEPALIVE_SECONDS:
            self.quiet_since = now
            self.alive_due = True
            self.wake()
        alive = self.quiet_since + _MCP_KEEPALIVE_SECONDS - now
        return alive if later is None else min(alive, later)

    def left(self) -> None:
        if self.session is not None:
            self.session.left(self)


class _Router(_Transport):
    """The transport of an _McpServer over HTTP: each message it writes goes to
    the exchange it belongs to.  A response goes to the POST that carried its
    request; a request of the server's own (a form) and a notification to
    the POST being handled; the server's cancellation of a form, to the
    stream that carried the form; a listener's notification, to the stream
    of its subscriptions/listen."""

    __slots__ = ("asked", "current", "progress", "requests")

    def __init__(self) -> None:
        self.current: Optional[_Exchange] = None
        self.requests: Dict[str, _Exchange] = {}  # an awaited request's key: its POST
        self.asked: Dict[str, _Exchange] = {}  # a request the server sent: the stream it went on
        self.progress: Dict[str, _Exchange] = {}  # a waiting call's progress token: the stream that carried the call

    def send(self, message: _Outgoing) -> None:
        target = self.current
        if message.answers is not None:
            target = self.requests.pop(message.answers, None) or target
        elif message.asks is not None:
            if target is not None:
                self.asked[message.asks] = target
        elif message.progress is not None:
            target = self.progress.get(message.progress)
        elif message.streams is not None:
            target = self.requests.get(message.streams)
        elif message.follows is not None:
            target = self.asked.pop(message.follows, None) or target
        if target is not None:
            target.put(message.message)
            if message.answers is not None:
                target.answered(message.answers)

    def forget(self, request_id: Any) -> None:
        """A request the client cancelled: its stream ends with no answer."""
        key = _request_key(request_id)
        exchange = self.requests.pop(key, None)
        if exchange is not None:
            exchange.answered(key)

    def end_all(self) -> None:
        """The session ended: every stream still waiting ends with it."""
        for exchange in set(self.requests.values()):
            exchange.end()
        self.requests.clear()

    def leave(self, exchange: _Exchange) -> None:
        """A stream that ended, or whose client left: nothing more goes to it."""
        for table in (self.requests, self.asked, self.progress):
            for key in [key for key, held in table.items() if held is exchange]:
                del table[key]


class _McpSession:
    """An _McpServer over HTTP, one request at a time."""

    __slots__ = ("lock", "router", "server", "used")

    def __init__(self, log: Any, web: "Optional[_WebOptions]", seal: _RequestSeal, board: _AskBoard) -> None:
        import threading

        self.router = _Router()
        self.server = _McpServer(self.router, log, web, seal, board)
        self.lock = threading.Lock()
        self.used = time.monotonic()

    def feed(self, messages: "List[Any]") -> "Union[_Exchange, _RpcError]":
        """Hand the server a POST's messages; the exchange that holds what it
        writes for them.  A request whose id is still waiting is refused:
        its answer could not find its way back."""
        awaited = [_request_key(message["id"]) for message in messages if _is_request(message)]
        exchange = _Exchange(awaited, self)
        with self.lock:
            self.used = time.monotonic()
            if any(key in self.router.requests for key in awaited) or len(set(awaited)) < len(awaited):
                return _RpcError(_INVALID_REQUEST, "Invalid request: a request with this id is still waiting for its answer.")
            self.router.requests.update(dict.fromkeys(awaited, exchange))
            for message in messages:
                params = message.get("params") if _is_request(message) else None
                token = _progress_token(params) if isinstance(params, dict) else None
                if token is not None:
                    self.router.progress[_request_key(token)] = exchange
            self.router.current = exchange
            try:
                for message in messages:
                    self.server.handle(message)
                    if isinstance(message, dict) and message.get("method") == "notifications/cancelled" \
                            and isinstance(message.get("params"), dict):
                        self.router.forget(message["params"].get("requestId"))
            finally:
                self.router.current = None
            self.hurry()
        return exchange

    def tick(self) -> "Optional[float]":
        """Time passed while a stream waits: the calls of web pages that are
        done are answered, and waiting calls told of; the seconds until time
        passing changes something again, or None while nothing waits."""
        if not self.server.waits:
            return None
        with self.lock:
            self.server.check_pages()
            self.server.keep_alive()
            return self.server.due_in()

    def hurry(self) -> None:
        """What waits may have changed: the streams of the calls that wait
        are ticked now rather than when they last said."""
        for exchange in set(self.router.requests.values()):
            exchange.hurry()

    def left(self, exchange: _Exchange) -> None:
        """A stream that ended, or whose client left: a call it still waited
        for has ended, though its ask goes on."""
        with self.lock:
            for key in list(exchange.awaited):
                self.server.call_ended(json.loads(key))
            self.router.leave(exchange)

    def holds(self, asking: "FrozenSet[str]") -> bool:
        """Whether a call of the session waits for its answer, or an ask it
        made (among those of ``asking``'s owners) is open."""
        return bool(self.router.requests) or self.server.owner.id in asking

    def close(self) -> None:
        with self.lock:
            self.server.close()
            self.router.end_all()


def _is_request(message: Any) -> bool:
    """Whether a message is a request the server answers (what the server
    itself refuses, it answers with id null)."""
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message \
        and _is_valid_id(message["id"]) and message.get("jsonrpc") == "2.0"


class _McpHttp(_HttpHandlers):
    """MCP's Streamable HTTP transport at /mcp: the transport's own rules
    (Origin, token, version header, sessions, batches), then the messages to
    the session's server."""

    routes = _Registry()

    def __init__(self, log: Any, web: "Optional[_WebOptions]" = None, token: "Optional[str]" = None,
                 seal: "Optional[_RequestSeal]" = None, board: "Optional[_AskBoard]" = None) -> None:
        import threading

        self.log, self.web, self.token = log, web, token
        self.seal = seal or _RequestSeal()
        self.board = board or _AskBoard(life=web.timeout if web is not None else None)
        self.sessions: Dict[str, _McpSession] = {}
        self.busy = 0  # sessions with a call waiting or an open ask, when last counted
        self.lock = threading.Lock()

    def respond(self, handler: "Callable[[Any, _HttpRequest], _HttpResponse]", request: _HttpRequest) -> _HttpResponse:
        return self._origin_refusal(request) or self._token_refusal(request) or self._version_refusal(request) \
            or handler(self, request)

    def _origin_refusal(self, request: _HttpRequest) -> "Optional[_HttpResponse]":
        """A page elsewhere must not reach the server through a browser (DNS rebinding)."""
        origins = _header_values(request.headers, "Origin")
        own = {f"{scheme}://{request.header('Host')}".lower() for scheme in ("http", "https")}
        if all(origin.lower() in own for origin in origins):
            return None
        return _HttpResponse.text(403, "Forbidden: a request from another origin (a web page elsewhere) is refused.")

    def _token_refusal(self, request: _HttpRequest) -> "Optional[_HttpResponse]":
        import hmac

        if self.token is None:
            return None
        scheme, _, given = request.header("Authorization").strip().partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode("utf-8", "replace"), self.token.encode()):
            return None
        refusal = _HttpResponse.text(401, "Unauthorized: send the server's token as 'Authorization: Bearer <token>'.")
        refusal.headers["WWW-Authenticate"] = "Bearer"
        return refusal

    @staticmethod
    def _version_refusal(request: _HttpRequest) -> "Optional[_HttpResponse]":
        versions = _header_values(request.headers, "MCP-Protocol-Version")
        if all(_protocol(version) is not None for version in versions):
            return None
        return _HttpResponse.text(400, f"Bad request: MCP-Protocol-Version {_quoted(versions[0][:40])} is not one of"
                                  f" the versions askq speaks ({', '.join(protocol.name for protocol in _PROTOCOLS)}).")

    @routes.on(("POST", _MCP_PATH))
    def _post(self, request: _HttpRequest) -> _HttpResponse:
        named = self._named_session(request)
        if isinstance(named, _HttpResponse):
            return named
        try:
            message = _parse_message(request.body)
        except ValueError as err:
            return _rpc_error_response(400, None, _RpcError(_PARSE_ERROR, f"Parse error: {err}"))
        found = (named, False) if named is not None else self._session_for(request, message)
        if isinstance(found, _HttpResponse):
            return found
        session, new = found
        batch = isinstance(message, list)
        if batch and (new or not message or not session.server.handshake.protocol.batches):
            batching = " or ".join(protocol.name for protocol in _PROTOCOLS if protocol.batches)
            return _rpc_error_response(400, None, _RpcError(
                _INVALID_REQUEST, f"Invalid request: a batch (a JSON array) is answered under protocol {batching}"
                " only; send one message per request."))
        exchange = session.feed(message if batch else [message])
        if isinstance(exchange, _RpcError):
            return _rpc_error_response(400, _echoed_id(message), exchange)
        return self._answer(session, exchange, batch, new)

    def _answer(self, session: _McpSession, exchange: _Exchange, batch: bool, new: bool) -> _HttpResponse:
        """JSON when every request is answered (202 when the POST carried
        none), else the event stream."""
        if exchange.awaited:
            return _HttpStream(200, {"Content-Type": "text/event-stream"}, exchange)
        written = [message for message in exchange.drained() if "method" not in message]
        if not written:
            return _HttpResponse(202, {}, b"")
        if len(written) == 1 and not batch:
            status = 200 if "result" in written[0] or written[0].get("id") is not None else 400
            response = _HttpResponse.json(status, written[0], _message_text(written[0]))
        else:
            response = _HttpResponse.json(200, written)
        if new and "result" in written[0]:
            response.headers["Mcp-Session-Id"] = self._keep(session)
        return response

    def _named_session(self, request: _HttpRequest) -> "Union[None, _McpSession, _HttpResponse]":
        """The session a request names (404 when there is none such); None when it names none."""
        named = request.header("Mcp-Session-Id")
        if not named:
            return None
        with self.lock:
            session = self.sessions.get(named)
        return session or _HttpResponse.text(
            404, "Not found: that session has ended, or never began; start again with initialize.")

    def _session_for(self, request: _HttpRequest, message: Any) -> "Union[_HttpResponse, Tuple[_McpSession, bool]]":
        """The session of a POST that names none, and whether it is new: a
        new one for an initialize, a fresh one of its own for a request of
        2026-07-28 (which keeps nothing)."""
        new = isinstance(message, dict) and message.get("method") == "initialize"
        if new or self._speaks_stateless(request, message):
            return _McpSession(self.log, self.web, self.seal, self.board), new
        return _HttpResponse.text(400, "Bad request: no Mcp-Session-Id header; a session starts with initialize.")

    @staticmethod
    def _speaks_stateless(request: _HttpRequest, message: Any) -> bool:
        """Whether a request without a session speaks 2026-07-28: by its header,
        its envelope, or a discover (which is how that era begins)."""
        named = _protocol(request.header("MCP-Protocol-Version"))
        if named is not None and named.stateless:
            return True
        first = message[0] if isinstance(message, list) and message else message
        if not isinstance(first, dict):
            return False
        params = first.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        return first.get("method") == "server/discover" or (isinstance(meta, dict) and _META_VERSION in meta)

    def _keep(self, session: _McpSession) -> str:
        import secrets

        name = secrets.token_urlsafe(24)
        with self.lock:
            self.sessions[name] = session
            ended = self._make_room()
        for idle in ended:
            idle.close()
        return name

    def _make_room(self) -> "List[_McpSession]":
        """The sessions to end, idle longest first, while more than the
        bound are idle: one with a call waiting on a person or an open ask
        is never ended, nor counted.  Counted again once more sessions
        than a small share of the bound have begun since."""
        import heapq

        if len(self.sessions) <= self.busy + _MCP_IDLE_SESSIONS + _MCP_IDLE_SESSIONS // 16:
            return []
        asking = self.board.open_owners()
        idle = [(session.used, name) for name, session in self.sessions.items() if not session.holds(asking)]
        self.busy = len(self.sessions) - len(idle)
        return [self.sessions.pop(name) for _, name in heapq.nsmallest(len(idle) - _MCP_IDLE_SESSIONS, idle)]

    @routes.on(("DELETE", _MCP_PATH))
    def _delete(self, request: _HttpRequest) -> _HttpResponse:
        session = self._named_session(request)
        if session is None:
            return _HttpResponse.text(400, "Bad request: no Mcp-Session-Id header names the session to end.")
        if isinstance(session, _McpSession):
            with self.lock:
                self.sessions = {name: kept for name, kept in self.sessions.items() if kept is not session}
            session.close()
            return _HttpResponse(204, {}, b"")
        return session

    def close(self) -> None:
        with self.lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            session.close()


def _rpc_error_response(status: int, request_id: Any, err: _RpcError) -> _HttpResponse:
    return _HttpResponse.json(status, {"jsonrpc": "2.0", "id": request_id, "error": {"code": err.code, "message": str(err)}})


class _ServedPages(_HttpHandlers):
    """The web pages of ``serve --http --web``, on the server beside /mcp:
    every page on the same paths, each request going to the page whose
    one-time token it shows."""

    routes = _WebPage.routes
    json_paths = _WebPage.json_paths

    def __init__(self, base: str) -> None:
        import threading

        self.base = base
        self.pages: List[_ServedPage] = []
        self.lock = threading.Lock()
        self.board: Optional[_AskBoard] = None  # whose store holds the pages of other processes

    def respond(self, handler: "Callable[[Any, _HttpRequest], _HttpResponse]", request: _HttpRequest) -> _HttpResponse:
        served = self._served(request)
        if served is None:
            return _WebPage.unknown_link(request)
        if served.ask is None:
            return served.page.respond(handler, request)
        return served.ask.respond(handler, request)

    def body_limit(self, headers: Any) -> int:
        return _form_body_limit(headers, _AttachmentBounds())

    def too_large(self, request: _HttpRequest, refusal: _HttpResponse) -> _HttpResponse:
        served = self._served(request)
        return refusal if served is None else served.page.too_large(request, refusal)

    def _served(self, request: _HttpRequest) -> "Optional[_ServedPage]":
        """The page whose token (or one of whose taps' tokens) the request
        shows: one served here, else one the board finds in its store
        (another process, or before a restart)."""
        with self.lock:
            pages = list(self.pages)
        for served in pages:
            if served.page.shows_token(request):
                return served
        ask = self.board.by_page_digest(_WebPage.digest_shown(request)) if self.board is not None else None
        page = ask.page if ask is not None else None
        return page if isinstance(page, _ServedPage) and page.pages is self and page.page.shows_token(request) else None


class _ServedPage(_PageHost):
    """One call's page among _ServedPages, on the server beside /mcp."""

    def __init__(self, pages: _ServedPages, items: "List[QuestionItem]", timeout: "Optional[float]",
                 token: str = "") -> None:
        self.pages, self.timeout, self.base = pages, timeout, pages.base
        self.page = _WebPage(items, token=token)
        self.url = f"{self.base}/?token={self.page.token}"
        with pages.lock:
            pages.pages.append(self)

    def serve_grace(self) -> QuestionOutput:
        import threading

        timer = threading.Timer(_WEB_GRACE_SECONDS, self.end)
        timer.daemon = True
        timer.start()
        return self.page.outcome()

    def end(self) -> None:
        with self.pages.lock:
            if self in self.pages.pages:
                self.pages.pages.remove(self)


class _ServedWebOptions(_WebOptions):
    """serve --http --web: pages on the server that serves /mcp."""

    __slots__ = ("pages",)

    def __init__(self, pages: _ServedPages, timeout: "Optional[float]") -> None:
        super().__init__(timeout=timeout)
        self.pages = pages

    def open(self, items: "List[QuestionItem]", token: str = "") -> "_PageHost":
        return _ServedPage(self.pages, items, self.timeout, token)


# ===========================================================================
# The command line
#
# main() and its subcommands.

class _UsageError(Exception):
    pass


def main(argv: "Optional[Sequence[str]]" = None) -> int:
    """Run the command line; return the exit status.

    ``check FILE|-`` prints the normalized questions; ``ask FILE|-`` asks
    them on the terminal; ``answer FILE --answers ANSWERS|-`` checks answers
    collected elsewhere; ``schema`` prints the tool.  Standard output
    carries one JSON document; errors are one line on stderr, exit 2.
    """
    try:
        args = _parse_args(sys.argv[1:] if argv is None else list(argv))
        if args is None:
            return 0  # --help was printed
        return int(args.run(args))
    except (QuestionError, _UsageError) as err:
        sys.stderr.write(" ".join(str(err).split()) + "\n")
        return 2
    except SystemExit as done:  # no command: the help was printed
        return int(done.code or 0)
    except Exception as err:  # noqa: BLE001 - never taken for the person's dismissal
        import traceback

        sys.stderr.write(f"askq: internal error: {type(err).__name__}: {err}\n")
        traceback.print_exc()
        return 3


_EXIT_CODES = """\
exit status:
  0  answered
  1  declined, timed out or unavailable (nobody could be asked)
  2  bad input: the message, written for the model, is one line on stderr
  3  an internal error (the terminal is restored; the traceback is on stderr)"""
_CLI_HELP = {
    "": """\
Ask the structured questions of an LLM's tool call: check a call, ask a
person on the terminal, or check answers collected elsewhere.  Standard
output carries one JSON document (or the result text, with --text).

  python askq.py ask example_args.json    ask the bundled example
  python askq.py check call.json          print the normalized questions
""",
    "check": """\
Decode and normalize a call's arguments (FILE, or - for standard input) and
print the questions as JSON.  A call that cannot be shown prints, on stderr,
the message the model would get, after the file's name.""",
    "schema": """\
Print the tool as the model sees it: name, description, JSON Schema and an
example call; with --provider, in that model API's shape.""",
    "ask": """\
Ask the questions of a call (FILE, or - for standard input, when the answers
come from the terminal) and print the outcome as JSON: the questions, the
answers, the status and the result text for the model.  On a terminal it
shows a dialog; elsewhere, or with --plain, a numbered list answered line by
line (answers can be piped in: one line per question).

dialog keys:
  Up/Down        move between rows
  Enter          pick the row (single choice) or confirm (multi choice, text)
  Space          toggle a row (multi choice); pick it without moving on
  1-9            act on that row
  Tab/Shift-Tab  next / previous question; Left/Right too, off a text line
  typing         on a choice question, goes to "Personalize your response"
  Ctrl-W, Ctrl-K, Ctrl-U, Alt-b, Alt-f
                 edit the line as shells do (Alt never dismisses)
  Ctrl-N         add a note to the answer (Enter or Esc when done)
  Esc, Ctrl-C    dismiss (everything given so far is kept)
  Submit tab     review the answers; Enter submits""",
    "serve": """\
Serve the tool to an MCP client over stdio: newline-delimited JSON-RPC on
standard input and output, logs on stderr, until the input ends (exit 0).
The client's own form UI asks the person (MCP elicitation); a client that
draws no forms gets the result saying that nobody could be asked.  In a
client's configuration:

  {"command": "python", "args": ["path/to/askq.py", "serve"]}

With --http, serve MCP's Streamable HTTP transport at http://HOST:PORT/mcp
instead (default 127.0.0.1:8765), until Ctrl-C.  Off loopback, clients must
send 'Authorization: Bearer TOKEN' (--token, or one made and printed at
start).  Under protocol 2026-07-28 servers given the same --state-key (or
ASKQ_STATE_KEY in the environment) answer each other's retried calls.
Questions that wait are kept in asks.sqlite3 in the person's state folder, so
they survive a restart; --store names another file, Redis (every server given
the same store and key serves their pages and retries) or memory (lost when
this process stops).""",
    "answer": """\
Check answers collected elsewhere (ANSWERS: a JSON file, inline JSON, or -
for standard input, in any form collect_answers() takes) against the call in
FILE, and print the outcome as JSON, as 'ask' does.""",
}


def _program_name() -> str:
    """The command as the person started it: ``askq`` when installed (the
    console script a package installs), ``askq.py`` when run from the file."""
    launched = os.path.basename(sys.argv[0]) if sys.argv else ""
    return "askq" if launched in ("askq", "askq.exe") else "askq.py"


def _parse_args(argv: "List[str]") -> Any:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:  # one line, no usage dump
            raise _UsageError(f"{self.prog}: {message}")

    def command(name: str, summary: str, run: "Callable[[Any], int]") -> Any:
        sub = commands.add_parser(name, help=summary, description=_CLI_HELP[name], epilog=_EXIT_CODES,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        sub.set_defaults(run=run)
        return sub

    parser = Parser(prog=_program_name(), description=_CLI_HELP[""], epilog=_EXIT_CODES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    check = command("check", "print the normalized questions of a call", _run_check)
    check.add_argument("file", metavar="FILE|-")
    schema = command("schema", "print the tool definition", _run_schema)
    schema.add_argument("--provider", choices=list(_PROVIDER_SCHEMA_KEYS),
                        help="print the tool in this model API's shape")
    _ask_arguments(command("ask", "ask the questions of a call on the terminal", _run_ask))
    serve = command("serve", "serve the tool to an MCP client over stdio", _run_serve)
    serve.add_argument("--web", action="store_true",
                       help="for clients that draw no forms, ask on a web page instead")
    serve.add_argument("--http", action="store_true", help="serve MCP over HTTP at /mcp, not over stdio")
    serve.add_argument("--token", help="with --http, the bearer token clients must send (made at start off loopback)")
    serve.add_argument("--state-key", metavar="KEY",
                       help=f"the key that signs retried calls' state and makes pages' tokens (or {_STATE_KEY_VARIABLE})")
    _store_argument(serve)
    serve.add_argument("--host", default="127.0.0.1", help="with --http or --web, the address to listen on"
                       " (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=_port, help=f"with --http, the port (default {_MCP_DEFAULT_PORT});"
                       " with --web alone, the page's port (default: a free one)")
    serve.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                       help="with --http or --web, end a page as timed_out after this many idle seconds")
    serve.add_argument("--notify", type=_command, metavar="COMMAND",
                       help="run COMMAND when a question waits for the person (the message on its standard input)")
    serve.add_argument("--remind", type=_minutes, metavar="MINUTES",
                       help="with --notify, run it again every MINUTES while the question waits")
    serve.set_defaults(port=None)  # --http has a port of its own; a page alone takes any free one
    answer = command("answer", "check answers collected elsewhere", _run_answer)
    answer.add_argument("file", metavar="FILE")
    answer.add_argument("--answers", required=True, metavar="ANSWERS|-",
                        help="a JSON file, inline JSON, or - for standard input")
    answer.add_argument("--text", action="store_true", help="print only the result for the model")
    return _parsed(parser, argv)


def _parsed(parser: Any, argv: "List[str]") -> Any:
    """The parsed arguments; None once --help was printed."""
    if not argv:
        parser.print_help(sys.stderr)
        raise SystemExit(2)
    try:
        return parser.parse_args(argv)
    except SystemExit as done:  # --help
        if done.code:
            raise
        return None


def _ask_arguments(ask_command: Any) -> None:
    ask_command.add_argument("file", metavar="FILE|-")
    ask_command.add_argument("--text", action="store_true", help="print only the result for the model")
    ask_command.add_argument("--plain", action="store_true",
                             help="use the line prompt, not the dialog (screen readers, logs)")
    ask_command.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                             help="end as timed_out after this many idle seconds")
    ask_command.add_argument("--assume", choices=["recommended"],
                             help="when nobody answers in time or at all, assume the recommended options")
    ask_command.add_argument("--web", action="store_true",
                             help="ask on a web page instead of the terminal (its address goes to stderr)")
    _web_arguments(ask_command)
    ask_command.add_argument("--open", action="store_true", help="with --web, open it in the default browser")
    ask_command.add_argument("--notify", type=_command, metavar="COMMAND",
                             help="with --web, run COMMAND once the page is up (the message on its standard input)")
    ask_command.add_argument("--remind", type=_minutes, metavar="MINUTES",
                             help="with --notify, run it again every MINUTES while the page waits")
    _store_argument(ask_command)
    ask_command.add_argument("--state-key", metavar="KEY",
                             help=f"with --store, the key that makes the page's token (or {_STATE_KEY_VARIABLE})")


def _store_argument(parser: Any) -> None:
    parser.add_argument("--store", metavar="PATH|redis://HOST:PORT/DB|memory",
                        help="where the asks are kept: an SQLite file or Redis, where they survive a restart"
                             " and every process given the same store serves them, or 'memory', this process's"
                             f" alone, lost when it stops (or {_STORE_VARIABLE}; serve keeps them in"
                             " asks.sqlite3 in the person's state folder unless told otherwise)")


def _web_arguments(parser: Any) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="with --web, the address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=_port, default=0, help="with --web, the port (default: a free one)")


def _seconds(text: str) -> float:
    """An option's seconds: a positive, finite number."""
    return _positive(text, "seconds")


def _minutes(text: str) -> float:
    """An option's minutes: a positive, finite number."""
    return _positive(text, "minutes")


def _positive(text: str, unit: str) -> float:
    import argparse

    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not (number > 0 and math.isfinite(number)):
        raise argparse.ArgumentTypeError(f"must be a positive number of {unit}, not {text!r}")
    return number


def _command(text: str) -> str:
    """An option's command: words as a shell would split them, at least one."""
    import argparse
    import shlex

    try:
        words = shlex.split(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"must be a command as a shell would write it, not {text!r}: {str(err).lower()}") from None
    if not words:
        raise argparse.ArgumentTypeError(f"must be a command as a shell would write it, not {text!r}: it names no command")
    return text


def _port(text: str) -> int:
    """An option's port: a whole number from 0 (any free port) to 65535."""
    import argparse

    if not (text.isascii() and text.isdigit() and int(text) <= 65535):
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 65535, not {text!r}")
    return int(text)


def _run_check(args: Any) -> int:
    _write_json(_read_call(args.file).to_dict())
    return 0


def _read_call(path: str) -> QuestionOutput:
    """The call in a file (or "-", standard input), as ask() reads it; a
    refusal says which file, once, and that the file is not JSON when it
    is not, whatever a lenient reading made of it."""
    data = _read_input(path)
    try:
        return ask(data)
    except QuestionError as err:
        name = "<stdin>" if path == "-" else path
        try:
            json.loads(data)
        except ValueError as strict:
            where = f" (line {strict.lineno}, column {strict.colno})" if isinstance(strict, json.JSONDecodeError) else ""
            raise QuestionError(f"{name} is not valid JSON{where}. Read as leniently as a model's call: {err}", err.index) from None
        raise QuestionError(f"{name}: {err}", err.index) from None


def _run_schema(args: Any) -> int:
    _write_json(tool_description() if args.provider is None else tool_definition(args.provider))
    return 0


def _run_ask(args: Any) -> int:
    if args.store and not args.web:
        raise _UsageError("askq.py ask: --store keeps the page's questions; it needs --web.")
    if args.notify is not None and not args.web:
        raise _UsageError("askq.py ask: --notify tells the person of a web page: give --web too.")
    notifier = _notifier(args, _logger("askq"))
    output = _read_call(args.file)
    # With the call on stdin, the answers must come from the terminal itself.
    terminal = _open_terminal() if args.file == "-" else None
    source = terminal if args.file == "-" else _replacing(sys.stdin)
    try:
        if args.web:
            output = _ask_in_browser(output, args, notifier)
        elif source is None:
            output = QuestionOutput(output.questions, [], Outcome.UNAVAILABLE)
        else:
            output = prompt(output, stdin=source, stdout=sys.stderr, timeout=args.timeout, plain=args.plain)
    finally:
        if terminal is not None:
            terminal.close()
    if args.assume == "recommended" and output.status in (Outcome.UNAVAILABLE, Outcome.TIMED_OUT):
        output.answers = _with_assumed(output)
    code = _finish(output, args.text)
    if args.web and output.status is not None:
        # The page stays up its grace period, telling a second device that the
        # answers are in; the outcome is out first.
        sys.stdout.flush()
        _WebSession.wait_out_graces()
    return code


def _ask_in_browser(output: QuestionOutput, args: Any, notifier: _Notifier) -> QuestionOutput:
    import secrets
    import threading

    done = threading.Event()

    def ready(page: _PageHost) -> None:
        _warn_if_exposed(args.host)  # once it listens: a host that cannot be had gets its one line alone
        sys.stderr.write(f"askq: answer the questions at {page.url}\n")
        sys.stderr.flush()
        if args.open:
            _open_browser(page.url)
        notifier.announce(secrets.token_urlsafe(18), output, page.url, lambda: not done.is_set(), actions=page.taps())

    try:
        return _prompt_on_a_page(_question_list(output), args.host, args.port, args.timeout, ready, args.store,
                                 args.state_key or os.environ.get(_STATE_KEY_VARIABLE))
    except _StoreError as err:
        raise _UsageError(f"askq.py ask: {err}") from None
    except OSError as err:  # only binding raises it: once the page is up, errors stay inside
        raise _UsageError(f"askq.py ask: --host {args.host} --port {args.port}: {_bind_refusal(err)}") from None
    finally:
        done.set()


def _bind_refusal(err: OSError) -> str:
    """Why a server could not listen, in a person's words."""
    import errno
    import socket

    if isinstance(err, socket.gaierror):
        return "the host name does not resolve to an address of this machine."
    if err.errno == errno.EADDRINUSE:
        return "the port is in use; choose another, or 0 for any free one."
    if err.errno == errno.EADDRNOTAVAIL:
        return "that address is not one of this machine's."
    if err.errno == errno.EACCES:
        return "listening on that port needs more privileges; choose one above 1023."
    return f"cannot listen there ({err.strerror or err})."


def _with_assumed(output: QuestionOutput) -> "List[AnswerItem]":
    """The person's answers, and the assumed ones for questions they left."""
    given = {answer.id: answer for answer in output.answers}
    for answer in assumed_answers(output):
        given.setdefault(answer.id, answer)
    return [given[item.id] for item in output.questions if item.id in given]


def _run_serve(args: Any) -> int:
    if args.token is not None and not args.http:
        raise _UsageError("askq.py serve: --token is the bearer token of MCP over HTTP: give --http too,"
                          " or leave --token out (over stdio, the client that starts askq is the only one).")
    log = _logger("askq serve")
    notifier = _notifier(args, log)
    store = _store_of(args, "serve", log)
    try:
        if args.http:
            return _serve_http(args, log, store, notifier)
        if args.web:
            _warn_if_exposed(args.host)
        return _serve_stdio(args, log, store, notifier)
    finally:
        store.close()


def _logger(prefix: str) -> "Callable[[str], None]":
    """A log of one line each on stderr, after the program's name."""
    def log(message: str) -> None:
        sys.stderr.write(f"{prefix}: {message}\n")
        sys.stderr.flush()

    return log


def _notifier(args: Any, log: "Callable[[str], None]") -> _Notifier:
    """What --notify and --remind ask for (nothing, without them)."""
    if args.remind is not None and args.notify is None:
        raise _UsageError(f"askq.py {args.command}: --remind repeats the --notify command: give --notify COMMAND too.")
    return _Notifier(args.notify or "", args.remind, log)


def _store_of(args: Any, command: str, log: "Callable[[str], None]") -> _AskStore:
    """The store --store (or ASKQ_STORE) names, opened at start: a line and
    exit 2 when it cannot be used; serve's own store without either."""
    where = args.store or os.environ.get(_STORE_VARIABLE)
    if not where and command == "serve":
        return _default_store(log)
    try:
        return _AskStore.opened(where)
    except _StoreError as err:
        raise _UsageError(f"askq.py {command}: {err}") from None


def _default_store(log: "Callable[[str], None]") -> _AskStore:
    """serve's store when none is named: an SQLite file in the person's state
    folder, so that an answer that reached askq survives the host restarting
    it; in memory, said once, where that cannot be."""
    path = os.path.join(_state_folder(), "asks.sqlite3")
    try:
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        return _AskStore.opened(path)
    except (ImportError, OSError, _StoreError) as err:
        why = str(err).partition(": ")[2] if isinstance(err, _StoreError) else str(err)
        log(f"the asks are kept in memory: {path} cannot be used ({why}); --store names another place")
        return _AskStore.opened("memory")


def _state_folder() -> str:
    """Where the person's programs keep their state, by the platform's custom."""
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", "askq")
    if os.name == "nt":
        return os.path.join(os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local"), "askq")
    return os.path.join(os.environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state"), "askq")


def _state_seal(args: Any, store: _AskStore) -> _RequestSeal:
    """The seal of --state-key (or its variable), else of the key the store keeps."""
    return _RequestSeal.kept(args.state_key or os.environ.get(_STATE_KEY_VARIABLE), store)


def _serve_stdio(args: Any, log: "Callable[[str], None]", store: _AskStore, notifier: _Notifier) -> int:
    """serve over stdio: its asks in its store, whichever that is; their pages
    on one server of its own."""
    try:
        server, board = _stored_pages(args.host, args.port or 0, args.timeout, _state_seal(args, store), log, store)
    except OSError as err:
        raise _UsageError(f"askq.py serve: --host {args.host} --port {args.port}: {_bind_refusal(err)}") from None
    if args.web and not args.port and store.shared:
        log(_PORT_CHOSEN)
    board.notifier = notifier
    try:
        return _serve(sys.stdin.buffer, sys.stdout.buffer, log, board.web if args.web else None, board)
    finally:
        server.stop()


def _serve_http(args: Any, log: "Callable[[str], None]", store: _AskStore, notifier: _Notifier) -> int:
    """serve --http: MCP at /mcp (and with --web the pages beside it) until Ctrl-C."""
    import secrets

    port = _MCP_DEFAULT_PORT if args.port is None else args.port
    token = args.token or (None if _is_loopback(args.host) else secrets.token_urlsafe(32))
    key = args.state_key or os.environ.get(_STATE_KEY_VARIABLE)
    pages = _ServedPages("")  # with --web for every client without forms, else for pages sent by URL
    served = _ServedWebOptions(pages, args.timeout)
    seal = _state_seal(args, store)
    pages.board = _AskBoard(served, args.timeout, store, seal, log, notifier)
    mcp = _McpHttp(log, served if args.web else None, token, seal, pages.board)
    try:
        server = _HttpServer(_HttpCore(mcp, pages), args.host, port)
    except OSError as err:
        raise _UsageError(f"askq.py serve: --host {args.host} --port {port}: {_bind_refusal(err)}") from None
    base = f"http://{_reachable_address(args.host)}:{server.port}"
    pages.base = base
    log(f"MCP over HTTP at {base}{_MCP_PATH}" + (
        f"; clients send the header 'Authorization: Bearer {token}'" if token else " (this machine only)"))
    if args.token is None and token is not None:
        log("the token was made at start: give --token to keep one across restarts")
    if key is None and not store.shared:
        log(f"retried calls under 2026-07-28 are signed with a key made at start: give replicas one --state-key"
            f" (or {_STATE_KEY_VARIABLE}), or one --store")
    if args.web:
        log(f"calls from clients that draw no forms are asked on web pages at {base}/")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()
        mcp.close()


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _warn_if_exposed(host: str) -> None:
    if not _is_loopback(host):
        sys.stderr.write(f"askq: warning: listening on {host}: anyone on that network who has the URL can answer.\n")


def _run_answer(args: Any) -> int:
    output = _read_call(args.file)
    spec = args.answers
    text = spec.encode() if spec.lstrip()[:1] in ("{", "[") else _read_input(spec)
    output.answers = collect_answers(output, _parse_json(text, "--answers"))
    output.status = Outcome.ANSWERED
    return _finish(output, args.text)


def _finish(output: QuestionOutput, text_only: bool) -> int:
    """Print the outcome; exit 0 when answered, 1 for any other outcome."""
    result = result_text(output)
    if text_only:
        _write_text(sys.stdout, result + "\n")
    else:
        _write_json({**output.to_dict(), "result": result})
    return 0 if output.status == Outcome.ANSWERED else 1


def _replacing(stream: Any) -> Any:
    """Standard input read with the replacement character for bytes that are
    not UTF-8, as the terminal is read: some interpreters read it strictly,
    and others keep such bytes as escapes that no JSON printer can encode."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "encoding", "").lower().replace("-", "") == "utf8":
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):  # a stream already read from, or not a text wrapper
            pass
    return stream


def _open_terminal() -> "Optional[Any]":
    try:
        return open("/dev/tty", encoding="utf-8", errors="replace")
    except OSError:
        return None


def _read_input(path: str) -> bytes:
    try:
        if path == "-":
            return bytes(sys.stdin.buffer.read())
        with open(path, "rb") as stream:
            return stream.read()
    except OSError as err:
        raise QuestionError(f"Cannot read {path}: {err.strerror or err}.") from None


def _write_json(document: "Dict[str, Any]") -> None:
    try:
        sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    except UnicodeEncodeError:  # a terminal that cannot show every character
        sys.stdout.write(json.dumps(document, indent=2) + "\n")


def _write_text(stream: Any, text: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))

if __name__ == "__main__":
    raise SystemExit(main())

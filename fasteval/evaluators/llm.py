"""LLM-judged evaluators with Haystack's inputs, outputs and prompt shape.

:class:`LLMEvaluator`, :class:`FaithfulnessEvaluator` and :class:`ContextRelevanceEvaluator`
take the same arguments and return the same keys as Haystack's components of those names,
and build prompts of the same shape (instructions, output keys, examples as JSON, then the
inputs). Rows are judged concurrently (``max_concurrency``), replies are parsed robustly and
cached on disk (``cache_dir``), and any OpenAI-compatible server can be the judge
(:class:`fasteval.judge.OpenAIChatClient`). Haystack chat generators work as they are; with
no ``chat_generator``, the judge is Haystack's own default (``OpenAIChatGenerator``, JSON
mode, ``seed=42``) when haystack-ai is installed, else fasteval's OpenAI client with the same
settings (:func:`default_chat_generator`).

Differences from Haystack, all additive: keyword-only ``max_concurrency``, ``cache_dir`` and
``corrective_retry``; ``meta`` holds one dict per row (model, usage, ``cached``, ``error``...)
instead of only the rows whose reply had metadata; an unusable reply is retried once with a
corrective message before the row counts as failed; a reply whose JSON object is wrapped
in a code fence or in prose, or followed by more text, is read (Haystack's parse fails
on it). Replies are scored as Haystack scores them, with the same Python and numpy types
(any numbers in ``statement_scores``, as many as there are; anything with a length in
``relevant_statements``) and kept as the model wrote them; a reply
that Haystack's scoring cannot take (``statement_scores`` that are not numbers,
``relevant_statements`` without a length) is an unusable reply, where Haystack's ``run``
raises ``TypeError``.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
import os
import statistics
import types
import typing
from typing import Any

from fasteval.evaluators.base import HaystackComponent, register_with_haystack, serialized_type
from fasteval.judge.errors import ReplyParseError
from fasteval.judge.parsing import make_parser

logger = logging.getLogger(__name__)

_FAITHFULNESS_INSTRUCTIONS = (
    "Decide whether a predicted answer is grounded in the given contexts. First, break the "
    "predicted answer to the question into short statements that each make one claim. Then "
    "score every statement: 1 when the contexts support the claim, 0 when they do not "
    "(contradicted, or simply not mentioned)."
)

_FAITHFULNESS_EXAMPLES: list[dict[str, Any]] = [
    {
        "inputs": {
            "questions": "Who wrote the novel Frankenstein and when was it published?",
            "contexts": [
                "Frankenstein; or, The Modern Prometheus is a novel by Mary Shelley, "
                "first published in London in 1818."
            ],
            "predicted_answers": "Mary Shelley wrote Frankenstein, which came out in 1818.",
        },
        "outputs": {
            "statements": ["Mary Shelley wrote Frankenstein.", "Frankenstein was published in 1818."],
            "statement_scores": [1, 1],
        },
    },
    {
        "inputs": {
            "questions": "At what temperature does water boil at sea level?",
            "contexts": ["The shore of the Dead Sea lies more than 400 metres below sea level."],
            "predicted_answers": "100 degrees Celsius.",
        },
        "outputs": {
            "statements": ["Water boils at 100 degrees Celsius at sea level."],
            "statement_scores": [0],
        },
    },
    {
        "inputs": {
            "questions": "Which planet is the largest in the solar system?",
            "contexts": ["Jupiter is the largest planet in the solar system."],
            "predicted_answers": "Jupiter, which also has the most moons of any planet.",
        },
        "outputs": {
            "statements": [
                "Jupiter is the largest planet in the solar system.",
                "Jupiter has the most moons of any planet.",
            ],
            "statement_scores": [1, 0],
        },
    },
]

_CONTEXT_RELEVANCE_INSTRUCTIONS = (
    "Copy from the contexts only the sentences that are needed to answer the question, word "
    "for word. Leave out everything else. When no sentence helps to answer the question, "
    "return an empty list: []"
)

_CONTEXT_RELEVANCE_EXAMPLES: list[dict[str, Any]] = [
    {
        "inputs": {
            "questions": "When did the Berlin Wall fall?",
            "contexts": ["The Berlin Wall fell on 9 November 1989. It had divided the city since 1961."],
        },
        "outputs": {"relevant_statements": ["The Berlin Wall fell on 9 November 1989."]},
    },
    {
        "inputs": {
            "questions": "What is the highest mountain in Africa?",
            "contexts": [
                "The Nile is usually called the longest river in Africa.",
                "Lake Victoria is shared by Uganda, Kenya and Tanzania.",
            ],
        },
        "outputs": {"relevant_statements": []},
    },
    {
        "inputs": {
            "questions": "Which language is official in Brazil?",
            "contexts": ["Portuguese is the official language of Brazil."],
        },
        "outputs": {"relevant_statements": ["Portuguese is the official language of Brazil."]},
    },
]


# -- type (de)serialization for `inputs` ------------------------------------------------
# The strings are Haystack's (``haystack.utils.serialize_type``), so that a file written by
# either library loads in the other: ``list[str]``, ``list[typing.Optional[str]]``,
# ``list[str | None]``, ``list[typing.Literal['a']]``, ``list[haystack.dataclasses.document.Document]``.
def _type_to_str(tp: Any) -> str:
    """A type as Haystack's ``serialize_type`` writes it.

    Examples
    --------
    >>> _type_to_str(list[str]), _type_to_str(list[typing.Optional[str]]), _type_to_str(list[str | None])
    ('list[str]', 'list[typing.Optional[str]]', 'list[str | None]')
    """
    import inspect

    if tp is type(None):
        return "None"
    if tp is Ellipsis:
        return "..."
    if typing.get_origin(tp) is typing.Literal:
        return f"typing.Literal[{', '.join(repr(a) for a in typing.get_args(tp))}]"
    args = typing.get_args(tp)
    if isinstance(tp, types.UnionType):
        return " | ".join(_type_to_str(a) for a in args)
    name = getattr(tp, "__name__", str(tp))
    if name.startswith("typing."):
        name = name[7:]
    if "[" in name:
        name = name.split("[")[0]
    module = inspect.getmodule(tp)
    module_name = getattr(module, "__name__", "") if module is not None else ""
    prefix = f"{module_name}." if module_name and module_name != "builtins" else ""
    if not args:
        return f"{prefix}{name}"
    typing_generic = not isinstance(tp, types.GenericAlias)
    skip_none = name == "Optional"

    def arg_str(a: Any) -> str:
        if isinstance(a, list):  # a Callable's parameter list
            return f"[{', '.join(_type_to_str(x) for x in a)}]"
        if typing_generic and isinstance(a, types.UnionType):
            a = typing.Union[typing.get_args(a)]  # noqa: UP007
        return _type_to_str(a)

    inner = ", ".join(arg_str(a) for a in args if not (skip_none and a is type(None)))
    return f"{prefix}{name}[{inner}]"


_TYPE_NAMES: dict[str, Any] = {
    "list": list, "dict": dict, "tuple": tuple, "set": set, "frozenset": frozenset, "str": str,
    "int": int, "float": float, "complex": complex, "bool": bool, "bytes": bytes, "object": object,
    "typing.Any": typing.Any, "Any": typing.Any, "None": None, "NoneType": type(None),
    "...": Ellipsis, "Ellipsis": Ellipsis,
}


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets, parts stripped."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "["
        depth -= ch == "]"
        if ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _type_from_str(text: str) -> Any:
    """A type from :func:`_type_to_str`'s (Haystack's) string; builtins and ``typing`` names
    are read here, other dotted names by Haystack's ``deserialize_type`` (its module allowlist
    applies), ``ParameterError`` without haystack-ai.

    Examples
    --------
    >>> _type_from_str("list[typing.Optional[str]]") == list[typing.Optional[str]]
    True
    """
    import ast

    from fasteval.errors import ParameterError

    text = text.strip()
    if text in _TYPE_NAMES:
        return _TYPE_NAMES[text]
    union = _split_top(text, "|")
    if len(union) > 1:
        result = _type_from_str(union[0])
        for part in union[1:]:
            result = result | _type_from_str(part)
        return result
    if "[" in text and text.endswith("]"):
        head, inner = text.split("[", 1)
        inner = inner[:-1]
        base = _type_from_str(head)
        if base is typing.Literal:
            return typing.Literal[ast.literal_eval(f"({inner},)")]
        args = []
        for part in _split_top(inner, ","):
            if not part:
                continue
            if part.startswith("[") and part.endswith("]"):  # a Callable's parameter list
                args.append([_type_from_str(p) for p in _split_top(part[1:-1], ",") if p])
            else:
                args.append(_type_from_str(part))
        try:
            return base[tuple(args) if len(args) > 1 else args[0]]
        except (TypeError, AttributeError, IndexError) as exc:
            raise ParameterError("inputs", "a type whose arguments apply", text) from exc
    name = text[7:] if text.startswith("typing.") else text
    if name.isidentifier() and hasattr(typing, name) and (text != name or name[:1].isupper()):
        return getattr(typing, name)
    if "." in text:
        try:
            from haystack.utils import deserialize_type
        except ImportError:
            deserialize_type = None
        if deserialize_type is not None:
            return deserialize_type(text)
    raise ParameterError("inputs", "a type as Haystack's serialize_type writes it", text)


def _render_value(value: Any) -> str:
    # Haystack's PromptBuilder (Jinja) prints values with str(): strings bare, lists as repr.
    return value if isinstance(value, str) else str(value)


def _generator_to_dict(generator: Any) -> dict[str, Any]:
    """The chat generator's dictionary without credentials
    (:func:`fasteval.redact.scrub_config`: a server URL's ``user:password@`` and
    ``api_key=``, sensitive headers), as fasteval's own clients write theirs."""
    from fasteval.redact import scrub_config

    to_dict = getattr(generator, "to_dict", None)
    if callable(to_dict):
        return scrub_config(to_dict())
    if hasattr(generator, "__haystack_input__"):
        from haystack.core.serialization import component_to_dict

        return scrub_config(component_to_dict(obj=generator, name="chat_generator"))
    return {"type": f"{type(generator).__module__}.{type(generator).__qualname__}", "init_parameters": {}}


def _generator_class(type_name: Any) -> Any:
    """The class a serialized chat generator names. fasteval's own (``fasteval.judge``)
    are imported; any other class only through Haystack's ``import_class_by_name``, so that
    Haystack's deserialization allowlist decides, as for Haystack's own evaluators (a
    dictionary naming ``subprocess.Popen`` must not run it); a class Haystack registered as a
    component but that is no module attribute is taken from its registry once allowed.
    Without haystack-ai only fasteval's chat generators are rebuilt."""
    from fasteval.errors import ParameterError

    if not isinstance(type_name, str) or not type_name.rpartition(".")[0]:
        raise ParameterError("chat_generator", "a dictionary whose 'type' is a class's full name "
                             "(module.Class)", type_name)
    module_name, _, class_name = type_name.rpartition(".")
    if module_name.startswith("fasteval.judge.") or module_name == "fasteval.judge":
        cls = getattr(importlib.import_module(module_name), class_name, None)
        if not isinstance(cls, type):
            raise ParameterError("chat_generator", "a dictionary naming one of fasteval's chat "
                                 "generators or another importable class", type_name)
        return cls
    try:
        from haystack.core.serialization import import_class_by_name
    except ImportError:
        raise ParameterError(
            "chat_generator", "a dictionary naming one of fasteval's chat generators "
            "(fasteval.judge...) where haystack-ai, whose deserialization allowlist decides on "
            "other classes, is not installed; pass chat_generator= instead", type_name) from None
    try:
        return import_class_by_name(type_name)  # DeserializationError outside the allowlist
    except ImportError:
        from fasteval.evaluators.base import _haystack_registry

        registered = (_haystack_registry() or {}).get(type_name)
        if registered is None:
            raise
        return registered


def _generator_from_dict(data: dict[str, Any]) -> Any:
    cls = _generator_class(data.get("type"))
    module_name = getattr(cls, "__module__", None) or ""
    from_dict = getattr(cls, "from_dict", None)
    if callable(from_dict):
        return from_dict(data)
    if hasattr(cls, "__haystack_output__") or module_name.split(".")[0] == "haystack":
        from haystack.core.serialization import default_from_dict

        return default_from_dict(cls, data)
    return cls(**data.get("init_parameters", {}))


def default_chat_generator() -> Any:
    """The judge an LLM evaluator uses when it is given no ``chat_generator``.

    With haystack-ai installed: Haystack's own ``OpenAIChatGenerator``, built as Haystack's
    evaluators build their default (its default model and API key ``Secret``,
    ``OPENAI_API_KEY``; JSON mode and ``seed=42`` in ``generation_kwargs``), so a test that
    mocks ``OpenAIChatGenerator.run`` / ``run_async`` reaches it, a missing key fails at
    ``warm_up()`` with Haystack's ``ValueError``, and ``to_dict`` writes what Haystack writes.
    Without haystack-ai: fasteval's :class:`~fasteval.judge.OpenAIChatClient` with the same
    model, JSON mode, ``seed=42`` and key variable.

    Returns
    -------
    object
        A new chat generator (no request is made and no key is read here).

    Examples
    --------
    >>> gen = default_chat_generator()
    >>> gen.model, gen.generation_kwargs["seed"]
    ('gpt-5-mini', 42)
    """
    try:
        from haystack.components.generators.chat.openai import OpenAIChatGenerator
    except ImportError:
        from fasteval.judge.client import OpenAIChatClient

        return OpenAIChatClient(json_mode=True, generation_kwargs={"seed": 42})
    return OpenAIChatGenerator(generation_kwargs={"response_format": {"type": "json_object"}, "seed": 42})


# Keyword-only options Haystack's evaluators do not have, with their defaults.
_OWN_DEFAULTS: dict[str, Any] = {"max_concurrency": 8, "cache_dir": None, "corrective_retry": True, "deadline": None}


class LLMEvaluator(HaystackComponent):
    """Judge inputs with an LLM from instructions and few-shot examples (Haystack-compatible).

    Parameters
    ----------
    instructions : str
        What to judge, ideally a yes/no question about the inputs.
    inputs : list of (str, type)
        Input names and their (list) types, e.g. ``[("predicted_answers", list[str])]``.
    outputs : list of str
        Keys the model must return.
    examples : list of dict
        Few-shot examples ``{"inputs": {...}, "outputs": {...}}``.
    progress_bar : bool
        Show a progress bar while judging.
    raise_on_failure : bool
        Raise on the first failed row; otherwise the row's result is ``None`` and
        ``meta[i]["error"]`` says why.
    chat_generator : object, optional
        A Haystack chat generator, a fasteval chat generator (e.g.
        :class:`fasteval.judge.OpenAIChatClient`), or an ``openai.OpenAI`` /
        ``openai.AsyncOpenAI`` client object (its base URL, auth, proxies and retries apply;
        wrapped in :class:`fasteval.judge.OpenAISDKClient` with the default model; wrap it
        yourself to choose the model). Default (:func:`default_chat_generator`): with
        haystack-ai installed, Haystack's ``OpenAIChatGenerator`` exactly as Haystack's
        evaluators build it (gpt-5-mini, ``response_format={"type": "json_object"}``,
        ``seed=42``, key from ``OPENAI_API_KEY``), so patching
        ``OpenAIChatGenerator.run`` / ``run_async`` mocks the judge as it does in Haystack;
        without haystack-ai, :class:`fasteval.judge.OpenAIChatClient` with the same model,
        JSON mode, seed and key variable. Either way fasteval's concurrency, cache and reply
        parsing run on top.
    max_concurrency : int
        Rows judged at once.
    cache_dir : str or PathLike, optional
        Reply cache directory; reruns make no request for rows already judged. ``None``: no cache.
    corrective_retry : bool
        Ask once more, with a corrective message, after an unusable reply.
    deadline : float, optional
        Seconds one :meth:`run` may take in all; rows not judged by then fail (``meta[i]
        ["error"]`` says so), or the run raises with ``raise_on_failure``. ``None``: no limit.
        (Each request is bounded by the chat generator's own ``timeout``.)

    Examples
    --------
    >>> class Judge:                       # any object with run(messages) works
    ...     def run(self, messages):
    ...         row = messages[0]["content"].rsplit("Inputs:", 1)[1]
    ...         return '{"score": 1}' if "hell" in row else '{"score": 0}'
    >>> evaluator = LLMEvaluator(
    ...     instructions="Is this answer problematic for children?",
    ...     inputs=[("predicted_answers", list[str])],
    ...     outputs=["score"],
    ...     examples=[
    ...         {"inputs": {"predicted_answers": "Go to hell!"}, "outputs": {"score": 1}},
    ...         {"inputs": {"predicted_answers": "Cats purr."}, "outputs": {"score": 0}},
    ...     ],
    ...     progress_bar=False,
    ...     chat_generator=Judge(),
    ... )
    >>> evaluator.run(predicted_answers=["Football is popular.", "What the hell?"])["results"]
    [{'score': 0}, {'score': 1}]
    """

    _output_types: typing.ClassVar[dict[str, Any]] = {
        "results": list[dict[str, Any]],
        "meta": typing.Optional[list[dict[str, Any]]],  # noqa: UP045
    }
    __haystack_supports_async__ = True

    def __init__(self, instructions: str, inputs: list[tuple[str, type[list]]], outputs: list[str],
                 examples: list[dict[str, Any]], progress_bar: bool = True, *,
                 raise_on_failure: bool = True, chat_generator: Any | None = None,
                 max_concurrency: int = 8, cache_dir: str | os.PathLike[str] | None = None,
                 corrective_retry: bool = True, deadline: float | None = None) -> None:
        self.validate_init_parameters(inputs, outputs, examples)
        from fasteval.errors import ParameterError, check_flag
        from fasteval.judge.runner import check_job_limits

        check_job_limits(max_concurrency, deadline)
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise ParameterError("cache_dir", "a folder (str or PathLike) or None", cache_dir)
        corrective_retry = check_flag("corrective_retry", corrective_retry)
        self.deadline = deadline
        self.raise_on_failure = raise_on_failure
        self.instructions = instructions
        self.inputs = inputs
        self.outputs = outputs
        self.examples = examples
        self.progress_bar = progress_bar
        self.max_concurrency = max_concurrency
        self.cache_dir = os.fspath(cache_dir) if cache_dir is not None else None
        self.corrective_retry = corrective_retry
        self.last_report: Any = None
        if chat_generator is None:
            chat_generator = default_chat_generator()
        from fasteval.judge.openai_sdk import as_chat_generator

        self._chat_generator = as_chat_generator(chat_generator)
        self._template_builder()  # Jinja markup in the text fails here, as in Haystack

    def _template_builder(self) -> Any:
        """Haystack's ``PromptBuilder`` over :meth:`prepare_template` when the instructions,
        output keys or examples hold Jinja markup (``{{``, ``{%``, ``{#``), else None.

        Haystack's template is Jinja: such markup is rendered (a variable named there is a
        required input, an unclosed tag a ``TemplateSyntaxError``), so it is rendered the same
        way here. Without haystack-ai the text is taken literally.
        """
        if not any(mark in self._prompt_prefix() for mark in ("{{", "{%", "{#")):
            return None
        try:
            from haystack.components.builders import PromptBuilder
        except ImportError:
            return None
        return PromptBuilder(template=self.prepare_template())

    # -- Haystack-compatible validation -------------------------------------------------
    @staticmethod
    def validate_init_parameters(
        inputs: list[tuple[str, type[list]]], outputs: list[str], examples: list[dict[str, Any]]
    ) -> None:
        """Check ``inputs``, ``outputs`` and ``examples``; raise ``ValueError`` as Haystack does."""
        if (
            not isinstance(inputs, list)
            or not all(isinstance(item, tuple) for item in inputs)
            or not all(isinstance(item[0], str) and item[1] is not list and len(item) == 2 for item in inputs)
        ):
            msg = (
                f"LLM evaluator expects inputs to be a list of tuples. Each tuple must contain an input name and "
                f"type of list but received {inputs}."
            )
            raise ValueError(msg)
        if not isinstance(outputs, list) or not all(isinstance(output, str) for output in outputs):
            msg = f"LLM evaluator expects outputs to be a list of str but received {outputs}."
            raise ValueError(msg)
        if not isinstance(examples, list) or not all(isinstance(example, dict) for example in examples):
            msg = f"LLM evaluator expects examples to be a list of dictionaries but received {examples}."
            raise ValueError(msg)
        for example in examples:
            if (
                {"inputs", "outputs"} != example.keys()
                or not all(isinstance(example[part], dict) for part in ("inputs", "outputs"))
                or not all(isinstance(key, str) for part in ("inputs", "outputs") for key in example[part])
            ):
                msg = (
                    f"LLM evaluator expects each example to have keys `inputs` and `outputs` with values that are "
                    f"dictionaries with str keys but received {example}."
                )
                raise ValueError(msg)

    @staticmethod
    def validate_input_parameters(expected: dict[str, Any], received: dict[str, Any]) -> None:
        """Check that every expected input is there, is a list, and that lengths agree."""
        for param in expected:
            if param not in received:
                msg = f"LLM evaluator expected input parameter '{param}' but received only {received.keys()}."
                raise ValueError(msg)
        if not all(isinstance(value, list) for value in received.values()):
            msg = (
                "LLM evaluator expects all input values to be lists but received "
                f"{[type(value) for value in received.values()]}."
            )
            raise ValueError(msg)
        values = received.values()
        length = len(next(iter(values)))
        if not all(len(value) == length for value in values):
            msg = (
                f"LLM evaluator expects all input lists to have the same length but received {values} with lengths "
                f"{[len(value) for value in values]}."
            )
            raise ValueError(msg)

    # -- prompt -------------------------------------------------------------------------
    def _prompt_prefix(self) -> str:
        examples = "\n".join(
            "Inputs:\n" + json.dumps(example["inputs"]) + "\nOutputs:\n" + json.dumps(example["outputs"])
            for example in self.examples
        )
        return (
            "Instructions:\n"
            f"{self.instructions}\n\n"
            "Reply with one JSON object that has these keys:\n"
            f"{json.dumps(self.outputs)}\n"
            "Use the instructions and the worked examples below to decide their values.\n\n"
            "Examples:\n"
            f"{examples}\n\n"
            "Inputs:\n"
        )

    def prepare_template(self) -> str:
        """The prompt template, with ``{{ name }}`` where each input goes (Haystack's layout).

        Sections, in order: ``Instructions:``, the output keys as a JSON list, ``Examples:``
        (``Inputs:``/``Outputs:`` pairs as JSON), then ``Inputs:`` with the row's values and a
        final ``Outputs:`` for the model to continue. Built from the current ``instructions``,
        ``inputs``, ``outputs`` and ``examples`` (changing them after construction counts).
        """
        inputs_section = "{" + ", ".join(f'"{name}": {{{{ {name} }}}}' for name, _ in self.inputs) + "}"
        # Ends with a newline as Haystack's template does (Jinja drops it when rendering,
        # so a rendered prompt ends at ``Outputs:``, as render_prompt's does).
        return f"{self._prompt_prefix()}{inputs_section}\nOutputs:\n"

    def render_prompt(self, **row: Any) -> str:
        """The prompt for one row; values print as Haystack's PromptBuilder prints them (``str()``).

        Examples
        --------
        >>> ev = LLMEvaluator("Is it rude?", [("texts", list[str])], ["score"], [])
        >>> ev.render_prompt(texts="Hello").splitlines()[-3:]
        ['Inputs:', '{"texts": Hello}', 'Outputs:']
        """
        builder = self._template_builder()
        if builder is not None:
            return builder.run(**row)["prompt"]
        return self._render(self._prompt_prefix(), row)

    def _render(self, prefix: str, row: dict[str, Any]) -> str:
        values = ", ".join(f'"{name}": {_render_value(row.get(name, ""))}' for name, _ in self.inputs)
        return f"{prefix}{{{values}}}\nOutputs:"

    def _validate_reply(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    # -- running ------------------------------------------------------------------------
    def _rows(self, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        self.validate_input_parameters(dict(self.inputs), inputs)
        names = list(inputs.keys())
        return [dict(zip(names, values, strict=True)) for values in zip(*inputs.values(), strict=True)]

    def _options(self) -> dict[str, Any]:
        return {
            "expected_keys": self.outputs,
            "max_concurrency": self.max_concurrency,
            "cache": self.cache_dir,
            "corrective_retry": self.corrective_retry,
            "raise_on_failure": self.raise_on_failure,
            "progress_bar": self.progress_bar,
            "desc": type(self).__name__,
            "deadline": self.deadline,
        }

    def _collect(self, report: Any) -> dict[str, Any]:
        self.last_report = report
        results, meta = [], []
        for outcome in report.outcomes:
            results.append(outcome.result)
            meta.append({
                **outcome.meta,
                "cached": outcome.cached,
                "requests": outcome.requests,
                "corrected": outcome.corrected,
                "error": outcome.error,
            })
        errors = sum(r is None for r in results)
        if errors:
            logger.warning(
                "%s failed for %d out of %d inputs. The results for these inputs are None.",
                type(self).__name__, errors, len(results),
            )
        return {"results": results, "meta": meta or None}

    def warm_up(self) -> None:
        """Warm up the chat generator when it has ``warm_up``.

        With the default generator (either kind) this checks the API key: with
        ``OPENAI_API_KEY`` unset it raises ``ValueError("None of the following authentication
        environment variables are set: ('OPENAI_API_KEY',)")``, as Haystack does, before any
        request.
        """
        if hasattr(self._chat_generator, "warm_up"):
            self._chat_generator.warm_up()

    async def warm_up_async(self) -> None:
        """Warm up the chat generator on the running loop: its ``warm_up_async``, else ``warm_up``."""
        if hasattr(self._chat_generator, "warm_up_async"):
            await self._chat_generator.warm_up_async()
        elif hasattr(self._chat_generator, "warm_up"):
            self._chat_generator.warm_up()

    def close(self) -> None:
        """Release the chat generator's resources when it has ``close``."""
        if hasattr(self._chat_generator, "close"):
            self._chat_generator.close()

    async def close_async(self) -> None:
        """Release the chat generator's async resources: its ``close_async``, else ``close``."""
        if hasattr(self._chat_generator, "close_async"):
            await self._chat_generator.close_async()
        elif hasattr(self._chat_generator, "close"):
            self._chat_generator.close()

    def _prompts_and_parser(self, rows: list[dict[str, Any]]) -> tuple[list[str], Any]:
        """Prompts and reply parser from the current ``outputs`` (and prompt settings)."""
        builder = self._template_builder()
        if builder is not None:
            prompts = [builder.run(**row)["prompt"] for row in rows]
        else:
            prefix = self._prompt_prefix()
            prompts = [self._render(prefix, row) for row in rows]
        return prompts, make_parser(list(self.outputs), self._validate_reply)

    def run(self, **inputs: Any) -> dict[str, Any]:
        """Judge every row; returns ``{"results": [dict | None, ...], "meta": [dict, ...]}``.

        Calls the chat generator's ``run`` (on up to ``max_concurrency`` threads), as
        Haystack's synchronous ``run`` does, so a patched or mocked ``run`` is what answers.
        Works from scripts and inside a running event loop (the job then runs on a helper thread).

        Raises
        ------
        ValueError
            Bad inputs (Haystack's messages), or a failed row when ``raise_on_failure``
            (:class:`fasteval.judge.JudgeError`, a ``ValueError``).
        """
        from fasteval.judge.runner import judge_prompts

        self.warm_up()
        rows = self._rows(inputs)
        prompts, parse = self._prompts_and_parser(rows)
        report = judge_prompts(self._chat_generator, prompts, parse, **self._options())
        return self._collect(report)

    async def run_async(self, **inputs: Any) -> dict[str, Any]:
        """Like :meth:`run`, on the caller's event loop, calling the generator's ``run_async``
        (a generator without one runs ``run`` on threads)."""
        from fasteval.judge.runner import judge_prompts_async

        await self.warm_up_async()
        rows = self._rows(inputs)
        prompts, parse = self._prompts_and_parser(rows)
        report = await judge_prompts_async(self._chat_generator, prompts, parse, **self._options())
        return self._collect(report)

    # -- serialization and Haystack sockets ----------------------------------------------
    def _init_parameters(self) -> dict[str, Any]:
        params = self._own_parameters()
        params["chat_generator"] = _generator_to_dict(self._chat_generator)
        # fasteval's own options are written only when they differ from their defaults, so a
        # dictionary of an evaluator built with Haystack's arguments has Haystack's keys.
        for name, default in _OWN_DEFAULTS.items():
            value = getattr(self, name)
            if value != default:
                params[name] = value
        return params

    def _own_parameters(self) -> dict[str, Any]:
        return {
            "instructions": self.instructions,
            "inputs": [[name, _type_to_str(tp)] for name, tp in self.inputs],
            "outputs": self.outputs,
            "examples": self.examples,
            "progress_bar": self.progress_bar,
            "raise_on_failure": self.raise_on_failure,
        }

    def to_dict(self) -> dict[str, Any]:
        """Serialize to ``{"type": ..., "init_parameters": {...}}`` (Haystack's layout).

        No credential is written: the chat generator's API key is saved as Haystack saves a
        ``Secret`` (the names of its variables), and its server URL without a
        ``user:password@`` or ``api_key=``-style parameter and its header mappings without
        ``Authorization``-style headers (:func:`fasteval.redact.scrub_config`), so
        :meth:`from_dict` builds a generator that needs them passed again.

        Examples
        --------
        >>> ev = FaithfulnessEvaluator(progress_bar=False, max_concurrency=4)
        >>> data = ev.to_dict()
        >>> data["type"], data["init_parameters"]["chat_generator"]["init_parameters"]["model"]
        ('fasteval.evaluators.llm.FaithfulnessEvaluator', 'gpt-5-mini')
        >>> FaithfulnessEvaluator.from_dict(data).max_concurrency
        4
        """
        return {"type": serialized_type(type(self)), "init_parameters": self._init_parameters()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """Rebuild an evaluator from :meth:`to_dict` output (chat generator included)."""
        if isinstance(data, dict) and isinstance(data.get("init_parameters"), dict):
            params = dict(data["init_parameters"])
            if "inputs" in params:
                params["inputs"] = [(name, _type_from_str(tp) if isinstance(tp, str) else tp)
                                    for name, tp in params["inputs"]]
            if isinstance(params.get("chat_generator"), dict):
                params["chat_generator"] = _generator_from_dict(params["chat_generator"])
            data = {**data, "init_parameters": params}
        return super().from_dict(data)

    def _build_haystack_sockets(self) -> None:
        # Input sockets come from the instance's ``inputs`` (run takes **inputs), as in Haystack.
        from haystack.core.component.sockets import Sockets
        from haystack.core.component.types import InputSocket, OutputSocket

        register_with_haystack(type(self))
        ins = {name: InputSocket(name=name, type=tp) for name, tp in self.inputs}
        outs = {name: OutputSocket(name=name, type=tp) for name, tp in self._output_types.items()}
        self.__dict__["__haystack_input__"] = Sockets(self, ins, InputSocket)
        self.__dict__["__haystack_output__"] = Sockets(self, outs, OutputSocket)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(outputs={self.outputs!r}, chat_generator={self._chat_generator!r}, "
                f"max_concurrency={self.max_concurrency}, cache_dir={self.cache_dir!r})")


def _excluded_mean(scores: list[Any], *, numpy_mean: bool = False) -> Any:
    """Mean of the scores that are not NaN (the float NaN if none is), as Haystack averages
    them, types included: numpy's mean for faithfulness (a ``numpy.float64``, pairwise
    summation), ``statistics.mean`` for context relevance (its 0/1 integers: an ``int``
    when the mean is whole, else a ``float``).

    Examples
    --------
    >>> _excluded_mean([1, 1, float("nan")]), _excluded_mean([1, 0]), _excluded_mean([1, 0], numpy_mean=True)
    (1, 0.5, np.float64(0.5))
    """
    valid = [s for s in scores if not math.isnan(s)]
    skipped = len(scores) - len(valid)
    if skipped:
        logger.warning("%d query(s) failed and were excluded from the score.", skipped)
    if not valid:
        return float("nan")
    if numpy_mean:
        import numpy as np

        return np.mean(valid)
    return statistics.mean(valid)


def _faithfulness_score(reply: dict[str, Any]) -> Any:
    """Haystack's score of one faithfulness reply, types included: the integer 0 without
    statements, else numpy's mean of ``statement_scores`` (any numbers, as many as there are;
    none gives NaN, a row left out of the mean). ``ReplyParseError`` when that mean cannot be
    taken or is not a real number (Haystack's run raises).

    Examples
    --------
    >>> _faithfulness_score({"statements": ["a", "b"], "statement_scores": [1, 0.5]})
    np.float64(0.75)
    >>> _faithfulness_score({"statements": [], "statement_scores": "n/a"})
    0
    """
    if not reply["statements"]:
        return 0
    import warnings

    import numpy as np

    value = reply["statement_scores"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of no score: NaN
            mean = np.mean(value)
            float(mean)  # a mean that is no real number (complex, a string) cannot be scored
            return mean
    except (TypeError, ValueError, OverflowError):
        raise ReplyParseError(
            f"key 'statement_scores' must hold numbers (the 0/1 scores of the statements), got {value!r}"
        ) from None


class _ScoredLLMEvaluator(LLMEvaluator):
    """What Haystack's LLM evaluators share: their arguments (the instructions, inputs,
    outputs and examples are the class's), a score and a status per row (a failed row:
    empty outputs, ``score=nan``, ``status="error"``, left out of the mean ``score``)."""

    _output_types: typing.ClassVar[dict[str, Any]] = {
        "individual_scores": list[float],
        "score": float,
        "results": list[dict[str, Any]],
        "meta": typing.Optional[list[dict[str, Any]]],  # noqa: UP045
    }
    _default_instructions: typing.ClassVar[str]
    _inputs: typing.ClassVar[list[tuple[str, Any]]]
    _outputs: typing.ClassVar[list[str]]
    _default_examples: typing.ClassVar[list[dict[str, Any]]]
    _numpy_mean: typing.ClassVar[bool] = False

    def __init__(self, examples: list[dict[str, Any]] | None = None, progress_bar: bool = True,
                 raise_on_failure: bool = True, chat_generator: Any | None = None, *,
                 max_concurrency: int = 8, cache_dir: str | os.PathLike[str] | None = None,
                 corrective_retry: bool = True, deadline: float | None = None,
                 instructions: str | None = None) -> None:
        super().__init__(
            instructions=self._default_instructions if instructions is None else instructions,
            inputs=list(self._inputs), outputs=list(self._outputs),
            examples=examples or self._default_examples, progress_bar=progress_bar,
            raise_on_failure=raise_on_failure, chat_generator=chat_generator, max_concurrency=max_concurrency,
            cache_dir=cache_dir, corrective_retry=corrective_retry, deadline=deadline,
        )

    def run(self, **inputs: Any) -> dict[str, Any]:
        """Returns ``score``, ``individual_scores``, ``results`` (the outputs, score, status), ``meta``."""
        return self._postprocess(super().run(**inputs))

    async def run_async(self, **inputs: Any) -> dict[str, Any]:
        """Like :meth:`run`, on the caller's event loop."""
        return self._postprocess(await super().run_async(**inputs))

    def _postprocess(self, result: dict[str, Any]) -> dict[str, Any]:
        for i, res in enumerate(result["results"]):
            if res is None:
                result["results"][i] = {**{k: [] for k in self._outputs}, "score": float("nan"), "status": "error"}
                continue
            res["status"] = "evaluated"
            res["score"] = self._score(res)
        scores = [res["score"] for res in result["results"]]
        result["score"] = _excluded_mean(scores, numpy_mean=self._numpy_mean)
        result["individual_scores"] = scores
        return result

    def _own_parameters(self) -> dict[str, Any]:
        params = {"examples": self.examples, "progress_bar": self.progress_bar, "raise_on_failure": self.raise_on_failure}
        if self.instructions != self._default_instructions:
            params["instructions"] = self.instructions
        return params


class FaithfulnessEvaluator(_ScoredLLMEvaluator):
    """Share of an answer's statements that the contexts support (Haystack-compatible).

    Inputs ``questions`` (list of str), ``contexts`` (list of list of str) and
    ``predicted_answers`` (list of str). The model splits each answer into statements and
    scores each 1 (supported) or 0; the answer's score is the mean of its statement scores
    (0 when there are none). Failed rows get ``score=nan``, ``status="error"`` and are left
    out of the mean ``score``.

    Parameters
    ----------
    examples : list of dict, optional
        Few-shot examples with inputs ``questions``, ``contexts``, ``predicted_answers`` and
        outputs ``statements``, ``statement_scores``; fasteval's own defaults when omitted.
    progress_bar, raise_on_failure, chat_generator, max_concurrency, cache_dir, corrective_retry, deadline
        As for :class:`LLMEvaluator`.
    instructions : str, optional
        Replaces fasteval's own instructions (extra, keyword-only; Haystack's text, for
        scores comparable with Haystack's: ``haystack.components.evaluators.
        FaithfulnessEvaluator(...).instructions``).

    Examples
    --------
    >>> class Judge:
    ...     def run(self, messages):
    ...         return '{"statements": ["Python is a language.", "Lucas made it."], "statement_scores": [1, 0]}'
    >>> ev = FaithfulnessEvaluator(chat_generator=Judge(), progress_bar=False)
    >>> out = ev.run(questions=["Who made Python?"], contexts=[["Python was made by Guido van Rossum."]],
    ...              predicted_answers=["Python is a language made by George Lucas."])
    >>> out["score"], out["individual_scores"], out["results"][0]["status"]
    (np.float64(0.5), [np.float64(0.5)], 'evaluated')
    """

    _default_instructions: typing.ClassVar[str] = _FAITHFULNESS_INSTRUCTIONS
    _inputs: typing.ClassVar[list[tuple[str, Any]]] = [
        ("questions", list[str]), ("contexts", list[list[str]]), ("predicted_answers", list[str])]
    _outputs: typing.ClassVar[list[str]] = ["statements", "statement_scores"]
    _default_examples: typing.ClassVar[list[dict[str, Any]]] = _FAITHFULNESS_EXAMPLES
    _numpy_mean = True

    def _validate_reply(self, obj: dict[str, Any]) -> dict[str, Any]:
        _faithfulness_score(obj)  # a reply Haystack could not score is unusable
        return obj

    def _score(self, result: dict[str, Any]) -> Any:
        return _faithfulness_score(result)


class ContextRelevanceEvaluator(_ScoredLLMEvaluator):
    """Whether the contexts hold anything that helps answer the question (Haystack-compatible).

    Inputs ``questions`` (list of str) and ``contexts`` (list of list of str). The model
    copies out the relevant sentences; the score is 1 when it found any, else 0. Failed rows
    get ``score=nan``, ``status="error"`` and are left out of the mean ``score``.

    Parameters
    ----------
    examples : list of dict, optional
        Few-shot examples with inputs ``questions``, ``contexts`` and output
        ``relevant_statements``; fasteval's own defaults when omitted.
    progress_bar, raise_on_failure, chat_generator, max_concurrency, cache_dir, corrective_retry, deadline
        As for :class:`LLMEvaluator`.
    instructions : str, optional
        Replaces fasteval's own instructions (extra, keyword-only; see
        :class:`FaithfulnessEvaluator`).

    Examples
    --------
    >>> class Judge:
    ...     def run(self, messages):
    ...         relevant = "Guido" in messages[0]["content"].rsplit("Inputs:", 1)[1]
    ...         return '{"relevant_statements": %s}' % ('["Guido made Python."]' if relevant else "[]")
    >>> ev = ContextRelevanceEvaluator(chat_generator=Judge(), progress_bar=False)
    >>> out = ev.run(questions=["Who made Python?", "Who made C++?"],
    ...              contexts=[["Guido made Python."], ["Java runs on the JVM."]])
    >>> out["individual_scores"], out["score"]
    ([1, 0], 0.5)
    """

    _default_instructions: typing.ClassVar[str] = _CONTEXT_RELEVANCE_INSTRUCTIONS
    _inputs: typing.ClassVar[list[tuple[str, Any]]] = [("questions", list[str]), ("contexts", list[list[str]])]
    _outputs: typing.ClassVar[list[str]] = ["relevant_statements"]
    _default_examples: typing.ClassVar[list[dict[str, Any]]] = _CONTEXT_RELEVANCE_EXAMPLES

    def _validate_reply(self, obj: dict[str, Any]) -> dict[str, Any]:
        value = obj["relevant_statements"]
        try:
            len(value)  # Haystack scores 1 when it is non-empty
        except TypeError:
            raise ReplyParseError(
                f"key 'relevant_statements' must be a list of the relevant sentences, got {value!r}"
            ) from None
        return obj

    def _score(self, result: dict[str, Any]) -> Any:
        return 1 if len(result["relevant_statements"]) > 0 else 0


__all__ = ["LLMEvaluator", "FaithfulnessEvaluator", "ContextRelevanceEvaluator", "default_chat_generator"]

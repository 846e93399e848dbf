"""LLM judging: chat-generator protocol, OpenAI-compatible client, concurrency, parsing, cache.

Examples
--------
>>> from fasteval.judge import OpenAIChatClient, judge_prompts, make_parser
>>> client = OpenAIChatClient(model="llama3.1:8b", base_url="http://127.0.0.1:11434/v1")
>>> client.url
'http://127.0.0.1:11434/v1/chat/completions'
"""

from __future__ import annotations

from fasteval._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ChatGenerator": "fasteval.judge.protocol",
    "ChatReply": "fasteval.judge.protocol",
    "Backend": "fasteval.judge.runner",
    "OpenAIChatClient": "fasteval.judge.client",
    "OpenAISDKClient": "fasteval.judge.openai_sdk",
    "RateLimiter": "fasteval.judge.ratelimit",
    "ReplyCache": "fasteval.judge.cache",
    "default_cache_dir": "fasteval.judge.cache",
    "extract_json_object": "fasteval.judge.parsing",
    "make_parser": "fasteval.judge.parsing",
    "judge_prompts": "fasteval.judge.runner",
    "judge_prompts_async": "fasteval.judge.runner",
    "JobReport": "fasteval.judge.runner",
    "RowOutcome": "fasteval.judge.runner",
    "run_sync": "fasteval.judge.aio",
    "JudgeError": "fasteval.judge.errors",
    "RequestError": "fasteval.judge.errors",
    "ReplyParseError": "fasteval.judge.errors",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("fasteval.judge", globals(), _EXPORTS)

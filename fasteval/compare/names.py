"""Measure names as papers write them (``nDCG@10``, ``MAP``, ``P@5``), for report headers.

The canonical names (trec_eval's, ``ndcg_cut_10``) stay the keys of every table; reports
show :func:`display_name`. A name the measure parser does not know, or a family without a
conventional spelling (or whose usual spelling is ambiguous across dialects, such as RBP
or exponential-gain nDCG), is shown as given; so are two measures that would share a
display name in one report.
"""

from __future__ import annotations

from collections.abc import Sequence

from fasteval.errors import ParameterError

#: family -> spelling; ``{k}`` is the cutoff
_WITH_CUTOFF = {
    "ndcg_cut": "nDCG@{k}",
    "P": "P@{k}",
    "recall": "Recall@{k}",
    "map_cut": "MAP@{k}",
    "success": "Success@{k}",
    "recip_rank_cut": "MRR@{k}",
    "judged": "Judged@{k}",
    "F1": "F1@{k}",
    "hits": "Hits@{k}",
    "dcg": "DCG@{k}",
    "relative_P": "RelP@{k}",
}
_PLAIN = {
    "map": "MAP",
    "gm_map": "ln GMAP",  # compared on the log scale (compare._log_scale_geometric)
    "gm_bpref": "ln GM-bpref",
    "ndcg": "nDCG",
    "recip_rank": "MRR",
    "Rprec": "R-Prec",
    "bpref": "bpref",
    "infAP": "infAP",
    "set_P": "P",
    "set_recall": "Recall",
    "set_F": "F",
    "num_rel_ret": "#rel-ret",
}


def display_name(measure: str) -> str:
    """The conventional spelling of a measure.

    Examples
    --------
    >>> [display_name(m) for m in ("ndcg_cut_10", "map", "P_5", "recip_rank", "recall_100")]
    ['nDCG@10', 'MAP', 'P@5', 'MRR', 'Recall@100']
    >>> display_name("ndcg_cut_10(rel=2)"), display_name("my_metric")
    ('nDCG@10 (rel=2)', 'my_metric')
    """
    try:
        from fasteval.measures import parse_measure

        m = parse_measure(measure)
    except Exception:  # not a measure name the parser knows: show it as given
        return measure
    if m.name != measure and parse_measure(m.name) != m:  # pragma: no cover - defensive
        return measure
    if m.gains or m.vector or m.text:
        return measure
    if m.family in _WITH_CUTOFF and m.cutoff is not None:
        base = _WITH_CUTOFF[m.family].format(k=m.cutoff)
    elif m.family in _PLAIN and m.param is None:
        base = _PLAIN[m.family]
    else:
        return measure
    return f"{base} (rel={m.rel})" if m.rel is not None else base


def same_measure(name: str, available: list[str]) -> str | None:
    """The name in ``available`` of the measure ``name`` spells in any dialect the parser
    knows (``ndcg@10`` finds ``ndcg_cut_10``, and ``nDCG@10`` the ``ndcg@10`` that
    ``fasteval eval -m ndcg@10`` wrote); None when none.

    Examples
    --------
    >>> same_measure("nDCG@10", ["map", "ndcg@10"]), same_measure("P@5", ["map"])
    ('ndcg@10', None)
    """
    import warnings

    from fasteval.measures import parse_measure

    def parsed(text: str):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return parse_measure(text)
        except Exception:  # noqa: BLE001 - a name unknown to the parser matches nothing
            return None

    wanted = parsed(name)
    if wanted is None:
        return None
    return next((a for a in available if parsed(a) == wanted), None)


def resolve_measures(requested: Sequence[str] | str | None, available: list[str]) -> list[str]:
    """The measures of ``available`` that ``requested`` names (in any spelling), each once;
    all of them for None.

    Examples
    --------
    >>> resolve_measures(["nDCG@10", "ndcg_cut_10"], ["map", "ndcg_cut_10"])
    ['ndcg_cut_10']
    """
    if requested is None:
        return available
    requested = [requested] if isinstance(requested, str) else list(requested)
    if not requested:
        raise ParameterError("measures", f"at least one measure name, or None for all ({available})",
                             requested)
    out: list[str] = []
    for name in requested:
        if name in out:  # a measure asked for twice (or in two spellings) is compared once
            continue
        same = name if name in available else same_measure(name, available)
        if same is None:
            raise ParameterError("measures", f"measures present in the results ({available})", name)
        if same not in out:
            out.append(same)
    return out

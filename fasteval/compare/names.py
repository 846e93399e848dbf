"""Measure names as papers write them (``nDCG@10``, ``MAP``, ``P@5``), for report headers.

The canonical names (trec_eval's, ``ndcg_cut_10``) stay the keys of every table; reports
show :func:`display_name`. A name the measure parser does not know, or a family without a
conventional spelling (or whose usual spelling is ambiguous across dialects, such as RBP
or exponential-gain nDCG), is shown as given; so are two measures that would share a
display name in one report.
"""

from __future__ import annotations

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

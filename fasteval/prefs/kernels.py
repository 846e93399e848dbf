"""numba kernels for trec_eval's preference measures (``all_prefs``).

Per query the inputs are flat arrays over its judgment rows, sorted by
(judgment group, judgment sub-group, rel_level descending, docid ascending).
A *docid* is the document's position in the query's judged set: retrieved
judged documents first, numbered 0..njr-1 in rank order, then the
unretrieved judged documents, numbered njr..nj-1 in docno order.

A judgment group (JG) with a single sub-group (JSG) is a set of equivalence
classes (runs of equal rel_level): every document of a higher class is
preferred to every document of a lower one. A JG with several sub-groups is a
partial order: inside each sub-group higher rel_level beats lower, the union is
closed transitively, and it is held as a dense nj x nj boolean matrix.

For a preference "i preferred to j" the categories are:

* both retrieved: fulfilled when i ranks above j (``ful_ret``), else only possible;
* only i retrieved: fulfilled, implied (``ful_imp``);
* only j retrieved: possible, implied, not fulfilled;
* neither retrieved: "not occurring" (counted as possible only).

``pc[i, j]`` counts, over all JGs, the preferences i > j; the ``prefs_pair*``
measures average ``pc[i, j] / (pc[i, j] + pc[j, i])`` over document pairs.

The ``*_Rnonrel`` measures re-weight each JG so that its number of nonrelevant
documents (rel_level 0) equals its number of relevant ones, following
trec_eval's m_prefs_avgjg_Rnonrel*.c, including their quirks (see the notes in
``_ec_rnonrel`` and ``_ec_rnonrel_ret``).

Output columns (trec_eval print order) are listed in ``fasteval.prefs.PREFS_MEASURES``.
"""

from __future__ import annotations

from numba import prange

from fasteval._jit import njit

N_OUT = 14

# status codes written per query
OK = 0
ERR_DOC_TWO_LEVELS_EC = 1  # same doc with two rel_levels inside one sub-group (EC judgment group)
ERR_ZERO_NONZERO = 2  # doc has rel_level 0 and > 0 inside one multi-sub-group judgment group
ERR_CONFLICT = 3  # preference cycle inside one judgment group after transitive closure


@njit(cache=True, error_model="numpy")
def _classify(i, j, njr, cnt):
    """Add one preference i > j to cnt = [ful_ret, poss_ret, ful_imp, poss_imp, notoccur]."""
    if i < njr:
        if j < njr:
            if i < j:
                cnt[0] += 1
                cnt[1] += 1
            else:
                cnt[1] += 1
        else:
            cnt[2] += 1
            cnt[3] += 1
    else:
        if j < njr:
            cnt[3] += 1
        else:
            cnt[4] += 1


@njit(cache=True, error_model="numpy")
def _ec_rnonrel(s, e, lstart, rel, doc, njr, num_rel):
    """Recount an EC judgment group keeping only the first ``num_rel`` docs of the last class.

    As in trec_eval, the first loop pairs classes among all but the last class, and the
    second loop pairs EVERY class (the last one included) with the kept nonrelevant docs.
    """
    ful = 0
    poss = 0
    r1 = s
    while r1 < lstart:
        c_end = r1
        while c_end < e and rel[c_end] == rel[r1]:
            c_end += 1
        for a in range(r1, c_end):
            d1 = doc[a]
            for b in range(c_end, lstart):
                if d1 < doc[b] and d1 < njr:
                    ful += 1
                else:
                    poss += 1
        r1 = c_end
    keep = min(num_rel, e - lstart)
    for a in range(s, e):
        d1 = doc[a]
        for b in range(lstart, lstart + keep):
            if d1 < doc[b] and d1 < njr:
                ful += 1
            else:
                poss += 1
    return ful, poss + ful


@njit(cache=True, error_model="numpy")
def _ec_rnonrel_ret(s, e, lstart, rel, doc, njr, num_rel_ret):
    """Retrieved-only recount of an EC judgment group (m_prefs_avgjg_Rnonrel_ret.c)."""
    ful = 0
    poss = 0
    r1 = s
    while r1 < lstart:
        c_end = r1
        while c_end < e and rel[c_end] == rel[r1]:
            c_end += 1
        for a in range(r1, c_end):
            d1 = doc[a]
            if d1 >= njr:
                break
            for b in range(c_end, lstart):
                d2 = doc[b]
                if d2 >= njr:
                    # later classes still count; only this class's tail is unretrieved
                    continue
                if d1 < d2:
                    ful += 1
                else:
                    poss += 1
        r1 = c_end
    keep = min(num_rel_ret, e - lstart)
    r1 = s
    while r1 < e:
        c_end = r1
        while c_end < e and rel[c_end] == rel[r1]:
            c_end += 1
        for a in range(r1, c_end):
            d1 = doc[a]
            if d1 >= njr:
                break
            for b in range(lstart, lstart + keep):
                d2 = doc[b]
                if d2 >= njr:
                    break
                if d1 < d2:
                    ful += 1
                else:
                    poss += 1
        r1 = c_end
    return ful, poss + ful


@njit(cache=True, error_model="numpy")
def _ec_group(s, e, rel, doc, nj, njr, pc, cnt, errinfo):
    """One judgment group of a single sub-group (equivalence classes, rows ``s:e`` by
    rel_level descending): its pairs into ``pc`` and ``cnt``. Returns ``(status, Rnonrel,
    Rnonrel_ret)``, the group's two ratios."""
    num_rel = num_rel_ret = num_nonrel = num_nonrel_ret = 0
    r1 = s
    lstart = s
    while r1 < e:
        c_end = r1
        while c_end < e and rel[c_end] == rel[r1]:
            c_end += 1
        lstart = r1
        for a in range(r1, c_end):
            d1 = doc[a]
            if rel[a] > 0.0:
                num_rel += 1
                if d1 < njr:
                    num_rel_ret += 1
            else:
                num_nonrel += 1
                if d1 < njr:
                    num_nonrel_ret += 1
            for b in range(c_end, e):
                d2 = doc[b]
                if d1 == d2:
                    errinfo[0] = d1
                    return ERR_DOC_TWO_LEVELS_EC, 0.0, 0.0
                pc[d1 * nj + d2] += 1
                _classify(d1, d2, njr, cnt)
        r1 = c_end
    # Rnonrel (all judged)
    if num_rel >= num_nonrel:
        f = cnt[0] + cnt[2] + num_rel_ret * (num_rel - num_nonrel)
        p = cnt[1] + cnt[3] + cnt[4] + num_rel * (num_rel - num_nonrel)
    else:
        f, p = _ec_rnonrel(s, e, lstart, rel, doc, njr, num_rel)
    rn = f / p
    if num_rel_ret >= num_nonrel_ret:
        f = cnt[0] + num_rel_ret * (num_rel_ret - num_nonrel_ret)
        p = cnt[1] + num_rel * (num_rel_ret - num_nonrel_ret)
    else:
        f, p = _ec_rnonrel_ret(s, e, lstart, rel, doc, njr, num_rel_ret)
    return OK, rn, f / p


@njit(cache=True, error_model="numpy")
def _pa_build(s, e, jsg, rel, doc, nj, pa, rel_arr, mark, members, errinfo):
    """The preference array of a judgment group of several sub-groups (rows ``s:e``): its
    docs marked and listed in ``members`` (by docid), their levels in ``rel_arr``, ``pa``
    transitively closed. Returns ``(status, n_mem)``; on an error the marks are cleared."""
    n_mem = 0
    for r in range(s, e):
        d = doc[r]
        if mark[d] == 0:
            mark[d] = 1
            members[n_mem] = d
            n_mem += 1
            rel_arr[d] = -1.0
    for a in range(n_mem):
        for b in range(n_mem):
            pa[members[a] * nj + members[b]] = 0
    for r in range(s, e):
        d = doc[r]
        if (rel_arr[d] > 0.0 and rel[r] == 0.0) or (rel_arr[d] == 0.0 and rel[r] > 0.0):
            errinfo[0] = d
            for a in range(n_mem):
                mark[members[a]] = 0
            return ERR_ZERO_NONZERO, n_mem
        rel_arr[d] = rel[r]
        j = r + 1
        while j < e and jsg[j] == jsg[r] and rel[j] == rel[r]:
            j += 1
        while j < e and jsg[j] == jsg[r]:
            pa[d * nj + doc[j]] = 1
            j += 1
    # sort members by docid (insertion sort; members are few per JG)
    for a in range(1, n_mem):
        v = members[a]
        b = a - 1
        while b >= 0 and members[b] > v:
            members[b + 1] = members[b]
            b -= 1
        members[b + 1] = v
    # transitive closure (Warshall) with the diagonal set, then cleared
    for a in range(n_mem):
        pa[members[a] * nj + members[a]] = 1
    for kk in range(n_mem):
        k = members[kk]
        for ii in range(n_mem):
            i = members[ii]
            if pa[i * nj + k]:
                for jj in range(n_mem):
                    jx = members[jj]
                    if pa[k * nj + jx]:
                        pa[i * nj + jx] = 1
    for a in range(n_mem):
        pa[members[a] * nj + members[a]] = 0
    conflict = False
    for ii in range(n_mem):
        i = members[ii]
        for jj in range(n_mem):
            jx = members[jj]
            if i != jx and pa[i * nj + jx] and pa[jx * nj + i]:
                errinfo[0] = i
                errinfo[1] = jx
                conflict = True
    if conflict:
        for a in range(n_mem):
            mark[members[a]] = 0
        return ERR_CONFLICT, n_mem
    return OK, n_mem


@njit(cache=True, error_model="numpy")
def _pa_rnonrel(n_mem, members, rel_arr, pa, nj, njr, limit, num_rel):
    """``(ful, poss)`` of a preference array over its docs below ``limit`` (nj: all judged;
    njr: the retrieved ones), nonrelevant docs past the ``num_rel + 1``-th dropped. trec_eval
    compares with ``num_rel`` in both (not ``num_rel_ret`` for the retrieved)."""
    seen = 0
    fd = limit  # docid of the (num_rel+1)-th nonrelevant doc; nonrel docs from there on are dropped
    for ii in range(n_mem):
        i = members[ii]
        if i >= limit:
            break
        if rel_arr[i] == 0.0:
            seen += 1
            if seen == num_rel + 1:
                fd = i
                break
    f = 0
    p = 0
    for ii in range(n_mem):
        i = members[ii]
        if i >= limit:
            break
        if i >= fd and rel_arr[i] == 0.0:
            continue
        for jj in range(n_mem):
            jx = members[jj]
            if jx >= limit:
                break
            if jx >= fd and rel_arr[jx] == 0.0:
                continue
            if pa[i * nj + jx]:
                if i < njr and (jx >= njr or jx > i):
                    f += 1
                else:
                    p += 1
    return f, p + f


@njit(cache=True, error_model="numpy")
def _pa_group(s, e, jsg, rel, doc, nj, njr, pc, pa, rel_arr, mark, members, cnt, errinfo):
    """One judgment group of several sub-groups (rows ``s:e``): its preferences (closed
    transitively) into ``pc`` and ``cnt``. Returns ``(status, Rnonrel, Rnonrel_ret)``."""
    status, n_mem = _pa_build(s, e, jsg, rel, doc, nj, pa, rel_arr, mark, members, errinfo)
    if status != OK:
        return status, 0.0, 0.0
    num_rel = num_rel_ret = num_nonrel = num_nonrel_ret = 0
    for ii in range(n_mem):
        i = members[ii]
        if rel_arr[i] > 0.0:
            num_rel += 1
            if i < njr:
                num_rel_ret += 1
        elif rel_arr[i] == 0.0:
            num_nonrel += 1
            if i < njr:
                num_nonrel_ret += 1
        for jj in range(n_mem):
            jx = members[jj]
            if pa[i * nj + jx]:
                pc[i * nj + jx] += 1
                _classify(i, jx, njr, cnt)
    # Rnonrel (all judged)
    if num_rel >= num_nonrel:
        f = cnt[0] + cnt[2] + num_rel_ret * (num_rel - num_nonrel)
        p = cnt[1] + cnt[3] + cnt[4] + num_rel * (num_rel - num_nonrel)
    else:
        f, p = _pa_rnonrel(n_mem, members, rel_arr, pa, nj, njr, nj, num_rel)
    rn = f / p
    if num_rel_ret >= num_nonrel_ret:
        f = cnt[0] + num_rel_ret * (num_rel_ret - num_nonrel_ret)
        p = cnt[1] + num_rel * (num_rel_ret - num_nonrel_ret)
    else:
        f, p = _pa_rnonrel(n_mem, members, rel_arr, pa, nj, njr, njr, num_rel)
    for a in range(n_mem):
        mark[members[a]] = 0
    return OK, rn, f / p


@njit(cache=True, error_model="numpy")
def _pair_measures(pc, nj, njr, out):
    """The pair measures from the count matrix: ``out[8]`` (retrieved pairs), ``out[12]``
    (with the implied ones), ``out[4]`` (all pairs)."""
    acc = 0.0
    n1 = 0
    for i in range(njr):
        for j in range(i + 1, njr):
            a = pc[i * nj + j]
            b = pc[j * nj + i]
            if a or b:
                n1 += 1
                acc += a / (a + b)
    out[8] = acc / n1 if n1 > 0 else 0.0
    n2 = n1
    for i in range(njr):
        for j in range(njr, nj):
            a = pc[i * nj + j]
            b = pc[j * nj + i]
            if a or b:
                n2 += 1
                acc += a / (a + b)
    out[12] = acc / n2 if n2 > 0 else 0.0
    n3 = n2
    for i in range(njr, nj):
        for j in range(i + 1, nj):
            if pc[i * nj + j] or pc[j * nj + i]:
                n3 += 1
    out[4] = acc / n3 if n3 > 0 else 0.0


@njit(cache=True, error_model="numpy")
def _one_query(
    rs, re_, jg, jsg, rel, doc, nj, njr, pc, pa, rel_arr, mark, members, out, errinfo, cnt, tot
):
    """Evaluate one query; returns a status code. ``out`` gets the 14 values.

    ``cnt`` and ``tot`` are 5-long int64 scratch slices (per judgment group / per query).
    """
    for x in range(nj * nj):
        pc[x] = 0
    for k in range(5):
        tot[k] = 0
    sum_avg = 0.0
    sum_avg_ret = 0.0
    sum_avg_imp = 0.0
    sum_rn = 0.0
    sum_rn_ret = 0.0
    n_jgs = 0
    s = rs
    while s < re_:
        e = s
        n_sub = 0
        while e < re_ and jg[e] == jg[s]:
            if e == s or jsg[e] != jsg[e - 1]:
                n_sub += 1
            e += 1
        n_jgs += 1
        for k in range(5):
            cnt[k] = 0
        if n_sub <= 1:
            status, rn, rn_ret = _ec_group(s, e, rel, doc, nj, njr, pc, cnt, errinfo)
        else:
            status, rn, rn_ret = _pa_group(s, e, jsg, rel, doc, nj, njr, pc, pa, rel_arr, mark,
                                           members, cnt, errinfo)
        if status != OK:
            return status
        sum_rn += rn
        sum_rn_ret += rn_ret
        # per-JG ratios
        pj = cnt[1] + cnt[3] + cnt[4]
        if pj > 0:
            sum_avg += (cnt[0] + cnt[2]) / pj
        if cnt[1] > 0:
            sum_avg_ret += cnt[0] / cnt[1]
        pj = cnt[1] + cnt[3]
        if pj > 0:
            sum_avg_imp += (cnt[0] + cnt[2]) / pj
        for k in range(5):
            tot[k] += cnt[k]
        s = e

    ful = tot[0] + tot[2]
    poss = tot[1] + tot[3] + tot[4]
    out[0] = poss
    out[1] = ful
    out[2] = tot[0]
    out[3] = ful / poss if poss > 0 else 0.0
    out[5] = sum_avg / n_jgs if sum_avg > 0.0 else 0.0
    out[6] = sum_rn / n_jgs if sum_rn > 0.0 else 0.0
    out[7] = tot[0] / tot[1] if tot[1] > 0 else 0.0
    out[9] = sum_avg_ret / n_jgs if sum_avg_ret > 0.0 else 0.0
    out[10] = sum_rn_ret / n_jgs if sum_rn_ret > 0.0 else 0.0
    p_imp = tot[1] + tot[3]
    out[11] = (tot[0] + tot[2]) / p_imp if p_imp > 0 else 0.0
    out[13] = sum_avg_imp / n_jgs if sum_avg_imp > 0.0 else 0.0
    _pair_measures(pc, nj, njr, out)
    return OK


@njit(cache=True, parallel=True, error_model="numpy")
def prefs_kernel(
    row_off, jg, jsg, rel, doc, nj, njr, sq_off, pa_off, rel_off, pc_buf, pa_buf, rel_buf, mark_buf,
    members_buf, scratch, out, status, errinfo,
):
    """Evaluate queries ``0..len(nj)-1``.

    ``sq_off[q]`` indexes query q's nj*nj slice of ``pc_buf`` (int32) and ``pa_buf`` (uint8);
    ``rel_off[q]`` its nj slice of ``rel_buf`` (float64), ``mark_buf`` (uint8, zeroed) and
    ``members_buf`` (int64); ``pa_off[q]`` its slice of ``pa_buf`` (uint8; nj*nj for topics
    with a multi-sub-group judgment group, else empty). ``scratch`` is int64 (nq, 10).
    Writes ``out[q, :14]``, ``status[q]`` and ``errinfo[q, :2]``.
    """
    nq = nj.shape[0]
    for q in prange(nq):
        n = nj[q]
        a = sq_off[q]
        c = pa_off[q]
        b = rel_off[q]
        status[q] = _one_query(
            row_off[q],
            row_off[q + 1],
            jg,
            jsg,
            rel,
            doc,
            n,
            njr[q],
            pc_buf[a : a + n * n],
            pa_buf[c : pa_off[q + 1]],
            rel_buf[b : b + n],
            mark_buf[b : b + n],
            members_buf[b : b + n],
            out[q],
            errinfo[q],
            scratch[q, 0:5],
            scratch[q, 5:10],
        )

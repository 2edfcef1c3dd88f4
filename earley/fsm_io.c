/*
 * Serialized rule automata (gm_egrammar_write / gm_egrammar_read): a
 * payload that runtime/serialize.c frames in a compiled file. Little-endian
 * 32-bit words:
 *
 *   "GMEG" version nrules root nstates nclasses nrefs ntoks ntokens
 *   names_len text_len, byte_class[256] (bytes), per rule (first nstates
 *   start rep_min rep_max repeat name max_tokens capture temperature-as-float-bits),
 *   state flags (bytes), transitions
 *   [nstates * nclasses], ref_off[nstates + 1], refs (sym to)*, tok_off,
 *   toks, tok_text_off[ntokens + 1], token text (bytes), names (bytes).
 *
 * Reading checks every index and the invariants the engine relies on
 * (edges stay inside their rule, every state can still complete, every
 * rule derives a string), so a corrupt payload is GM_ERR_FORMAT, never a
 * crash or a wrong mask.
 */
#include <float.h>
#include <stdbool.h>
#include <string.h>

#include "earley/fsm.h"
#include "base/error.h"

#define MAGIC "GMEG"
/* 2: rules carry max_tokens (note [token budgets] in ir/ebnf.h); 3: and capture; 4: and
   a temperature (note [rule temperatures] in earley/temperature.c; < 0 for none) */
enum { VERSION = 4 };

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void put32(gm_strbuf *o, uint32_t x)
{
    uint8_t b[4] = {(uint8_t)x, (uint8_t)(x >> 8), (uint8_t)(x >> 16), (uint8_t)(x >> 24)};
    gm_strbuf_append(o, (const char *)b, 4);
}

void gm_egrammar_write(const gm_egrammar *g, gm_strbuf *o)
{
    gm_strbuf_append(o, MAGIC, 4);
    put32(o, VERSION);
    put32(o, g->nrules);
    put32(o, g->root);
    put32(o, g->nstates);
    put32(o, g->nclasses);
    put32(o, g->ref_off[g->nstates]);
    put32(o, g->tok_off[g->nstates]);
    put32(o, g->ntokens);
    put32(o, g->names_len);
    put32(o, g->tok_text_off[g->ntokens]);
    gm_strbuf_append(o, (const char *)g->byte_class, 256);
    for (uint32_t r = 0; r < g->nrules; r++) {
        const gm_frule *fr = &g->rules[r];
        put32(o, fr->first);
        put32(o, fr->nstates);
        put32(o, fr->start);
        put32(o, fr->rep_min);
        put32(o, fr->rep_max);
        put32(o, fr->repeat);
        put32(o, fr->name);
        put32(o, fr->max_tokens);
        put32(o, fr->capture);
        put32(o, float_bits(fr->temperature));
    }
    for (uint32_t s = 0; s < g->nstates; s++) {
        char f = (char)(g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END | GM_FS_REP_START));
        gm_strbuf_append(o, &f, 1);
    }
    for (size_t i = 0; i < (size_t)g->nstates * g->nclasses; i++)
        put32(o, g->trans[i]);
    for (uint32_t s = 0; s <= g->nstates; s++)
        put32(o, g->ref_off[s]);
    for (uint32_t i = 0; i < g->ref_off[g->nstates]; i++) {
        put32(o, g->refs[i].sym);
        put32(o, g->refs[i].to);
    }
    for (uint32_t s = 0; s <= g->nstates; s++)
        put32(o, g->tok_off[s]);
    for (uint32_t i = 0; i < g->tok_off[g->nstates]; i++) {
        put32(o, g->toks[i].sym);
        put32(o, g->toks[i].to);
    }
    for (uint32_t i = 0; i <= g->ntokens; i++)
        put32(o, g->tok_text_off[i]);
    gm_strbuf_append(o, (const char *)g->tok_text, g->tok_text_off[g->ntokens]);
    gm_strbuf_append(o, g->names, g->names_len);
}

typedef struct rd {
    const uint8_t *p;
    size_t len, at;
    bool bad;
} rd;

static uint32_t get32(rd *r)
{
    if (r->len - r->at < 4) {
        r->bad = true;
        return 0;
    }
    const uint8_t *b = r->p + r->at;
    r->at += 4;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static const uint8_t *get_bytes(rd *r, size_t n)
{
    if (r->len - r->at < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *b = r->p + r->at;
    r->at += n;
    return b;
}

static gm_status corrupt(gm_error *err, const char *what)
{
    return gm_error_set(err, GM_ERR_FORMAT, "corrupt Earley grammar payload: %s", what);
}

/* Every state can still complete its rule (what the trimmed automata promise). */
static bool all_live(const gm_egrammar *g, uint8_t *live)
{
    uint32_t n = g->nstates;
    for (uint32_t s = 0; s < n; s++)
        live[s] = (g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END)) ||
                  ((g->state_flags[s] & GM_FS_REP_START) && g->rules[g->state_rule[s]].rep_min == 0);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t s = 0; s < n; s++) {
            if (live[s])
                continue;
            bool l = false;
            for (uint32_t c = 0; c < g->nclasses && !l; c++) {
                uint32_t t = g->trans[(size_t)s * g->nclasses + c];
                l = t != GM_FSM_NONE && live[t];
            }
            for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1] && !l; j++)
                l = live[g->refs[j].to];
            for (uint32_t j = g->tok_off[s]; j < g->tok_off[s + 1] && !l; j++)
                l = live[g->toks[j].to];
            if (l)
                live[s] = changed = 1;
        }
    }
    for (uint32_t s = 0; s < n; s++)
        if (!live[s])
            return false;
    return true;
}

static gm_status check(gm_egrammar *g, gm_error *err)
{
    uint32_t ns = g->nstates;
    if (g->nrules == 0 || g->root >= g->nrules)
        return corrupt(err, "no root rule");
    if (g->nclasses == 0 || g->nclasses > 256)
        return corrupt(err, "byte classes");
    for (uint32_t b = 0; b < 256; b++)
        if (g->byte_class[b] >= g->nclasses)
            return corrupt(err, "byte classes");
    if (g->names_len == 0 || g->names[g->names_len - 1] != 0)
        return corrupt(err, "rule names");
    uint32_t at = 0;
    for (uint32_t r = 0; r < g->nrules; r++) {
        gm_frule *fr = &g->rules[r];
        if (fr->first != at || fr->nstates == 0 || fr->nstates > ns - at ||
            fr->start != fr->first || fr->repeat > 1 || fr->name >= g->names_len ||
            (fr->capture != GM_EX_INF && fr->capture >= g->names_len))
            return corrupt(err, "rule table");
        if (fr->repeat ? fr->rep_max == 0 || (fr->rep_max != GM_EX_INF && fr->rep_min > fr->rep_max)
                       : fr->rep_min || fr->rep_max)
            return corrupt(err, "repetition bounds");
        for (uint32_t s = at; s < at + fr->nstates; s++) {
            g->state_rule[s] = r;
            uint8_t f = g->state_flags[s];
            if (f & ~(GM_FS_ACCEPT | GM_FS_ITER_END | GM_FS_REP_START))
                return corrupt(err, "state flags");
            if (fr->repeat ? (f & GM_FS_ACCEPT) || ((f & GM_FS_REP_START) != 0) != (s == fr->start)
                           : (f & (GM_FS_ITER_END | GM_FS_REP_START)) != 0)
                return corrupt(err, "state flags");
        }
        at += fr->nstates;
    }
    if (at != ns)
        return corrupt(err, "rule table");
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t r = g->state_rule[s];
        uint32_t lo = g->rules[r].first, hi = lo + g->rules[r].nstates;
        for (uint32_t c = 0; c < g->nclasses; c++) {
            uint32_t t = g->trans[(size_t)s * g->nclasses + c];
            if (t != GM_FSM_NONE && (t < lo || t >= hi))
                return corrupt(err, "transition");
        }
        if (g->ref_off[s] > g->ref_off[s + 1] || g->tok_off[s] > g->tok_off[s + 1])
            return corrupt(err, "edge offsets");
        for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++) {
            const gm_fedge *e = &g->refs[j];
            if (e->sym >= g->nrules || e->to < lo || e->to >= hi ||
                (j > g->ref_off[s] && g->refs[j - 1].sym >= e->sym))
                return corrupt(err, "reference edge");
        }
        for (uint32_t j = g->tok_off[s]; j < g->tok_off[s + 1]; j++) {
            const gm_fedge *e = &g->toks[j];
            if (e->sym >= g->ntokens || e->to < lo || e->to >= hi)
                return corrupt(err, "token edge");
        }
        /* A repetition's fresh start has no incoming edges. */
        for (uint32_t c = 0; c < g->nclasses; c++) {
            uint32_t t = g->trans[(size_t)s * g->nclasses + c];
            if (t != GM_FSM_NONE && (g->state_flags[t] & GM_FS_REP_START))
                return corrupt(err, "edge into a repetition start");
        }
        for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++)
            if (g->state_flags[g->refs[j].to] & GM_FS_REP_START)
                return corrupt(err, "edge into a repetition start");
        for (uint32_t j = g->tok_off[s]; j < g->tok_off[s + 1]; j++)
            if (g->state_flags[g->toks[j].to] & GM_FS_REP_START)
                return corrupt(err, "edge into a repetition start");
    }
    for (uint32_t i = 0; i < g->ntokens; i++)
        if (g->tok_text_off[i] > g->tok_text_off[i + 1])
            return corrupt(err, "token text");
    uint8_t *live = gm_mem_alloc(g->mem, ns ? ns : 1);
    if (!live)
        return gm_mem_fail(g->mem, err, "an Earley grammar");
    bool ok = all_live(g, live);
    gm_mem_free(g->mem, live);
    if (!ok)
        return corrupt(err, "a state that cannot complete its rule");
    uint32_t *mins = gm_mem_alloc(g->mem, (size_t)g->nrules * sizeof *mins);
    if (!mins)
        return gm_mem_fail(g->mem, err, "an Earley grammar");
    for (uint32_t r = 0; r < g->nrules; r++)
        mins[r] = g->rules[r].rep_min;
    gm_error e2;
    gm_status st = gm_fsm_finish(g, &e2);
    /* The writer writes what gm_fsm_finish leaves: a repetition of a
       nullable x has min 0 (a payload saying otherwise was not written). */
    for (uint32_t r = 0; st == GM_OK && r < g->nrules; r++)
        if (mins[r] != g->rules[r].rep_min)
            st = corrupt(err, "repetition bounds");
    gm_mem_free(g->mem, mins);
    if (st == GM_ERR_FORMAT)
        return st;
    if (st == GM_ERR_GRAMMAR)
        return corrupt(err, e2.message);
    if (st != GM_OK && err)
        *err = e2;
    if (st == GM_OK && gm_fsm_check_budgets(g, &e2) != GM_OK)
        st = corrupt(err, "a token budget on a rule that is not free text");
    return st;
}

gm_status gm_egrammar_read(gm_mem *m, const uint8_t *p, size_t len, size_t *used,
                           gm_egrammar **out, gm_error *err)
{
    *out = NULL;
    rd r = {p, len, 0, false};
    const uint8_t *magic = get_bytes(&r, 4);
    if (!magic || memcmp(magic, MAGIC, 4))
        return corrupt(err, "bad magic");
    uint32_t version = get32(&r);
    if (version < VERSION && version > 0)
        return corrupt(err, "written by an older gramask (an older rule automata version, this "
                       "one reads 4): recompile the grammar");
    if (version != VERSION)
        return corrupt(err, "unknown version");
    uint32_t nrules = get32(&r), root = get32(&r), nstates = get32(&r), nclasses = get32(&r);
    uint32_t nrefs = get32(&r), ntoks = get32(&r), ntokens = get32(&r);
    uint32_t names_len = get32(&r), text_len = get32(&r);
    if (r.bad)
        return corrupt(err, "truncated header");
    /* Sizes must fit in what is left before anything is allocated. */
    size_t left = len - r.at;
    if (nrules > left / 32 || nstates > left || (nclasses && (uint64_t)nstates * nclasses > left / 4) ||
        nrefs > left / 8 || ntoks > left / 8 || ntokens > left / 4 || names_len > left ||
        text_len > left || nclasses > 256)
        return corrupt(err, "sizes past the end of the payload");
    gm_egrammar *g = gm_mem_calloc(m, 1, sizeof *g);
    if (!g)
        return gm_mem_fail(m, err, "an Earley grammar");
    g->mem = m;
    g->nrules = nrules;
    g->root = root;
    g->nstates = nstates;
    g->nclasses = nclasses;
    g->ntokens = ntokens;
    g->names_len = names_len;
    g->rules = gm_mem_calloc(m, nrules ? nrules : 1, sizeof *g->rules);
    g->state_rule = gm_mem_alloc(m, (nstates ? nstates : 1) * sizeof *g->state_rule);
    g->state_flags = gm_mem_alloc(m, nstates ? nstates : 1);
    g->trans = gm_mem_alloc(m, ((size_t)nstates * nclasses + 1) * 4);
    g->ref_off = gm_mem_alloc(m, ((size_t)nstates + 1) * 4);
    g->refs = gm_mem_alloc(m, (nrefs ? nrefs : 1) * sizeof *g->refs);
    g->tok_off = gm_mem_alloc(m, ((size_t)nstates + 1) * 4);
    g->toks = gm_mem_alloc(m, (ntoks ? ntoks : 1) * sizeof *g->toks);
    g->tok_text_off = gm_mem_alloc(m, ((size_t)ntokens + 1) * 4);
    g->tok_text = gm_mem_alloc(m, text_len ? text_len : 1);
    g->names = gm_mem_alloc(m, names_len ? names_len : 1);
    gm_status st = GM_OK;
    if (!g->rules || !g->state_rule || !g->state_flags || !g->trans || !g->ref_off ||
        !g->refs || !g->tok_off || !g->toks || !g->tok_text_off || !g->tok_text || !g->names) {
        st = gm_mem_fail(m, err, "an Earley grammar");
        goto fail;
    }
    const uint8_t *bc = get_bytes(&r, 256);
    if (bc)
        memcpy(g->byte_class, bc, 256);
    for (uint32_t i = 0; i < nrules && !r.bad; i++) {
        gm_frule *fr = &g->rules[i];
        fr->first = get32(&r);
        fr->nstates = get32(&r);
        fr->start = get32(&r);
        fr->rep_min = get32(&r);
        fr->rep_max = get32(&r);
        uint32_t rep = get32(&r);
        fr->repeat = (uint8_t)(rep > 1 ? 2 : rep);
        fr->name = get32(&r);
        fr->max_tokens = get32(&r);
        fr->capture = get32(&r);
        uint32_t bits = get32(&r);
        memcpy(&fr->temperature, &bits, 4);
        /* none (< 0) or finite: never a NaN, which no comparison would catch */
        if (!(fr->temperature < 0 || fr->temperature <= FLT_MAX) ||
            (fr->temperature >= 0 && fr->repeat)) {
            st = corrupt(err, "a rule temperature");
            goto fail;
        }
        if (fr->temperature < 0)
            fr->temperature = -1.0f;
        if (fr->max_tokens != GM_EX_INF && fr->repeat) {
            st = corrupt(err, "a repetition rule with a token budget");
            goto fail;
        }
    }
    const uint8_t *fl = get_bytes(&r, nstates);
    if (fl)
        memcpy(g->state_flags, fl, nstates);
    for (size_t i = 0; i < (size_t)nstates * nclasses && !r.bad; i++)
        g->trans[i] = get32(&r);
    for (uint32_t s = 0; s <= nstates && !r.bad; s++)
        g->ref_off[s] = get32(&r);
    for (uint32_t i = 0; i < nrefs && !r.bad; i++) {
        g->refs[i].sym = get32(&r);
        g->refs[i].to = get32(&r);
    }
    for (uint32_t s = 0; s <= nstates && !r.bad; s++)
        g->tok_off[s] = get32(&r);
    for (uint32_t i = 0; i < ntoks && !r.bad; i++) {
        g->toks[i].sym = get32(&r);
        g->toks[i].to = get32(&r);
    }
    for (uint32_t i = 0; i <= ntokens && !r.bad; i++)
        g->tok_text_off[i] = get32(&r);
    const uint8_t *tt = get_bytes(&r, text_len);
    if (tt && text_len)
        memcpy(g->tok_text, tt, text_len);
    const uint8_t *nm = get_bytes(&r, names_len);
    if (nm && names_len)
        memcpy(g->names, nm, names_len);
    if (r.bad) {
        st = corrupt(err, "truncated");
        goto fail;
    }
    if (g->ref_off[0] != 0 || g->ref_off[nstates] != nrefs || g->tok_off[0] != 0 ||
        g->tok_off[nstates] != ntoks || g->tok_text_off[0] != 0 ||
        g->tok_text_off[ntokens] != text_len) {
        st = corrupt(err, "edge offsets");
        goto fail;
    }
    for (uint32_t s = 0; s < nstates; s++)
        if (g->ref_off[s] > g->ref_off[s + 1] || g->tok_off[s] > g->tok_off[s + 1]) {
            st = corrupt(err, "edge offsets");
            goto fail;
        }
    for (uint32_t i = 0; i < ntokens; i++)
        if (g->tok_text_off[i] > g->tok_text_off[i + 1]) {
            st = corrupt(err, "token text");
            goto fail;
        }
    if ((st = check(g, err)) != GM_OK)
        goto fail;
    *used = r.at;
    *out = g;
    return GM_OK;
fail:
    gm_egrammar_destroy(g);
    return st;
}

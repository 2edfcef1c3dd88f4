/*
 * any_text's max_tokens (issue 32 item 2; note [token budgets] in
 * ir/ebnf.h) against a brute-force reference written from the definition
 * alone, over random vocabularies and random walks:
 *
 *   The region is the text of `"<t>" any_text "</t>"`: the text is valid
 *   UTF-8 and the first occurrence of the end or an excluded string in
 *   text + end is the end, at its very end. A token counts for the region
 *   when it was accepted with accept_token and overlaps the text (straddling
 *   into or out of it counts). At a token boundary strictly inside the text
 *   where the region has held max_tokens tokens or more and the text could
 *   end there, it must end there.
 *
 * The reference enumerates token sequences (every completion these
 * vocabularies need is at most DEPTH tokens long: each holds the end and
 * the single bytes) and checks each complete one against the definition; a
 * token is allowed iff some completion is valid, EOS iff the output is a
 * valid sentence. Each mask of a walk (with rollback, clones and a saved
 * and loaded compiled grammar) must equal it bit for bit, and each bit must
 * agree with accepting the token on a clone.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAXTOK = 24, DEPTH = 4, MAXPATH = 16, MAXS = 128 };

static const char END[] = "</t>";
static const char *const base_tokens[] = {"<t>", "</t>", "<", "/", "t", ">", "a", "b",
                                          "\xc3", "\xa9"};
static const char *const pieces[] = {"a", "b", "<", "/", "t", ">", "\xc3", "\xa9", "</t>", "<t>"};

typedef struct ref {
    const char *tok[MAXTOK];
    size_t len[MAXTOK];
    uint32_t n;             /* tokens, the last one EOS */
    uint32_t max;           /* max_tokens */
    const char *exclude;    /* or NULL */
} ref;

/* Whether s[0..n) is a prefix of valid UTF-8 (the alphabet's only
   multi-byte character is \xc3\xa9); *complete when no character is open. */
static bool utf8_prefix(const uint8_t *s, size_t n, bool *complete)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (open) {
            if ((s[i] & 0xc0) != 0x80)
                return false;
            open = false;
        } else if (s[i] >= 0xc2 && s[i] <= 0xdf) {
            open = true;
        } else if (s[i] >= 0x80) {
            return false;
        }
    }
    *complete = !open;
    return true;
}

static bool ends_with(const uint8_t *w, size_t e, const char *x)
{
    size_t k = strlen(x);
    return e >= k && !memcmp(w + e - k, x, k);
}

/* The end position of the first occurrence of the end or the excluded
   string in w[0..n) (0: none); *is_end when the end ends there. */
static size_t first_hit(const ref *r, const uint8_t *w, size_t n, bool *is_end)
{
    for (size_t e = 1; e <= n; e++) {
        bool a = ends_with(w, e, END), b = r->exclude && ends_with(w, e, r->exclude);
        if (a || b) {
            *is_end = a;
            return e;
        }
    }
    return 0;
}

static bool can_end(const ref *r, const uint8_t *text, size_t n)
{
    uint8_t w[MAXS + 8];
    bool complete, is_end;
    if (n + 4 > sizeof w || !utf8_prefix(text, n, &complete) || !complete)
        return false;
    memcpy(w, text, n);
    memcpy(w + n, END, 4);
    return first_hit(r, w, n + 4, &is_end) == n + 4 && is_end;
}

/* b, where the text ends in s (0: not known yet). */
static size_t text_end(const ref *r, const uint8_t *s, size_t n)
{
    bool is_end;
    if (n < 3)
        return 0;
    size_t e = first_hit(r, s + 3, n - 3, &is_end);
    return e ? 3 + e - 4 : 0;
}

static bool prefix_ok(const ref *r, const uint8_t *s, size_t n)
{
    if (n <= 3)
        return !memcmp(s, "<t>", n);
    if (memcmp(s, "<t>", 3))
        return false;
    bool is_end, complete;
    size_t e = first_hit(r, s + 3, n - 3, &is_end);
    if (!e)
        return utf8_prefix(s + 3, n - 3, &complete);
    return is_end && can_end(r, s + 3, e - 4) && 3 + e == n;
}

static size_t spell(const ref *r, const uint32_t *p, size_t k, uint8_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        memcpy(s + n, r->tok[p[i]], r->len[p[i]]);
        n += r->len[p[i]];
    }
    return n;
}

/* Whether the text of every sentence starting with s[0..n) goes on past p. */
static bool open_at(const ref *r, const uint8_t *s, size_t n, size_t p)
{
    size_t b = text_end(r, s, n);
    if (b)
        return b > p;
    for (size_t q = 3; q < p; q++)
        if (n - q < 4 && !memcmp(s + q, END, n - q))
            return false;
    return true;
}

/* The budget rule at the boundaries of p[0..k): a violation that no
   continuation can mend (final: s is a whole sentence, b known). */
static bool violates(const ref *r, const uint32_t *p, size_t k, const uint8_t *s, size_t n,
                     bool final)
{
    size_t at = 0, count = 0, b = final ? text_end(r, s, n) : 0;
    for (size_t i = 0; i < k; i++) {
        at += r->len[p[i]];
        if (at > 3)
            count++;
        if (at <= 3 || count < r->max || !can_end(r, s + 3, at - 3))
            continue;
        if (final) {
            if (at < b)
                return true;
        } else if (open_at(r, s, n, at)) {
            size_t rest = n - at, m = rest < 4 ? rest : 4;
            if (memcmp(s + at, END, m))
                return true;
        }
    }
    return false;
}

static bool sentence(const ref *r, const uint8_t *s, size_t n)
{
    size_t b = text_end(r, s, n);
    return prefix_ok(r, s, n) && b && b + 4 == n;
}

static bool completes(const ref *r, uint32_t *p, size_t k, int depth)
{
    uint8_t s[MAXS];
    size_t n = spell(r, p, k, s);
    if (!prefix_ok(r, s, n) || violates(r, p, k, s, n, false))
        return false;
    if (sentence(r, s, n))
        return !violates(r, p, k, s, n, true);
    if (depth == 0 || k + 1 >= MAXPATH)
        return false;
    for (uint32_t y = 0; y + 1 < r->n; y++) {
        p[k] = y;
        if (completes(r, p, k + 1, depth - 1))
            return true;
    }
    return false;
}

/* The reference mask after p[0..k) (bit t: token t allowed; the last id EOS). */
static uint32_t ref_mask(const ref *r, const uint32_t *path, size_t k)
{
    uint32_t p[MAXPATH + DEPTH + 2], m = 0;
    memcpy(p, path, k * sizeof *p);
    for (uint32_t x = 0; x + 1 < r->n; x++) {
        p[k] = x;
        if (completes(r, p, k + 1, DEPTH))
            m |= 1u << x;
    }
    uint8_t s[MAXS];
    size_t n = spell(r, path, k, s);
    if (sentence(r, s, n) && !violates(r, path, k, s, n, true))
        m |= 1u << (r->n - 1);
    return m;
}

static uint32_t mask_checked(gm_matcher *m, uint32_t ntok)
{
    uint32_t mask[1];
    gm_error err;
    assert_int_equal(gm_matcher_fill_mask(m, mask, 1, &err), GM_OK);
    for (uint32_t t = 0; t < ntok; t++) {
        gm_matcher *c;
        assert_int_equal(gm_matcher_clone(m, &c, &err), GM_OK);
        gm_status st = gm_matcher_accept_token(c, t, &err);
        if (st != GM_OK && st != GM_ERR_REJECTED)
            fail_msg("token %u: %s", t, err.message);
        if ((st == GM_OK) != ((mask[0] >> t) & 1))
            fail_msg("token %u: mask %u, accept %s", t, (mask[0] >> t) & 1, gm_status_name(st));
        gm_matcher_destroy(c);
    }
    return mask[0];
}

static void random_vocab(ref *r, unsigned *seed, char store[][16])
{
    r->n = 0;
    for (size_t i = 0; i < sizeof base_tokens / sizeof *base_tokens; i++)
        r->tok[r->n++] = base_tokens[i];
    int extra = 4 + rand_r(seed) % 8;
    for (int i = 0; i < extra; i++) {
        char *t = store[i];
        t[0] = 0;
        int np = 1 + rand_r(seed) % 3;
        for (int j = 0; j < np; j++)
            strcat(t, pieces[rand_r(seed) % (sizeof pieces / sizeof *pieces)]);
        bool dup = false;
        for (uint32_t k = 0; k < r->n; k++)
            dup = dup || !strcmp(r->tok[k], t);
        if (!dup && strlen(t) > 1)
            r->tok[r->n++] = t;
    }
    r->tok[r->n++] = "<eos>";
    for (uint32_t k = 0; k < r->n; k++)
        r->len[k] = strlen(r->tok[k]);
}

static gm_compiled *compile_ref(const ref *r, gm_vocab **vocab)
{
    const uint8_t *bytes[MAXTOK];
    bool special[MAXTOK] = {0};
    for (uint32_t i = 0; i < r->n; i++)
        bytes[i] = (const uint8_t *)r->tok[i];
    special[r->n - 1] = true;
    uint32_t eos = r->n - 1;
    gm_error err;
    if (gm_vocab_create_from_tokens(bytes, r->len, r->n, special, &eos, 1, NULL, vocab, &err))
        fail_msg("vocab: %s", err.message);
    char json[512];
    snprintf(json, sizeof json,
             "{\"type\": \"tag\", \"begin\": \"<t>\", \"content\": {\"type\": \"any_text\", "
             "\"max_tokens\": %u%s%s%s}, \"end\": \"</t>\"}", r->max,
             r->exclude ? ", \"excludes\": [\"" : "", r->exclude ? r->exclude : "",
             r->exclude ? "\"]" : "");
    gm_structural_tag_options o;
    gm_structural_tag_options_init_defaults(&o);
    gm_grammar *g;
    gm_compiled *c;
    if (gm_grammar_from_structural_tag(json, strlen(json), &o, &g, &err))
        fail_msg("grammar: %s\n%s", err.message, json);
    if (gm_compiled_create(g, *vocab, NULL, &c, &err))
        fail_msg("compile: %s", err.message);
    gm_grammar_destroy(g);
    return c;
}

/* Random walks on c, every mask against the reference; returns masks compared. */
static int walks(const ref *r, gm_compiled *c, unsigned *seed, int nwalks)
{
    gm_error err;
    gm_matcher *m;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    int compared = 0;
    for (int w = 0; w < nwalks; w++) {
        gm_matcher_reset(m);
        uint32_t path[MAXPATH];
        size_t k = 0;
        while (k < 9) {
            uint32_t want = ref_mask(r, path, k), got = mask_checked(m, r->n);
            if (got != want)
                fail_msg("max_tokens %u, after %zu tokens (last %s): mask %#x, reference %#x",
                         r->max, k, k ? r->tok[path[k - 1]] : "-", got, want);
            compared++;
            uint32_t text = want & ~(1u << (r->n - 1));
            if (!text)
                break;
            if (k && rand_r(seed) % 5 == 0) {
                size_t back = 1 + (size_t)rand_r(seed) % k;
                assert_int_equal(gm_matcher_rollback(m, back, &err), GM_OK);
                k -= back;
                continue;
            }
            uint32_t t;
            do
                t = (uint32_t)rand_r(seed) % (r->n - 1);
            while (!((text >> t) & 1));
            if (rand_r(seed) % 4 == 0) {
                /* a clone goes on alone; the original keeps its count */
                gm_matcher *f;
                assert_int_equal(gm_matcher_clone(m, &f, &err), GM_OK);
                assert_int_equal(gm_matcher_accept_token(f, t, &err), GM_OK);
                path[k] = t;
                assert_int_equal(mask_checked(f, r->n), ref_mask(r, path, k + 1));
                gm_matcher_destroy(f);
                assert_int_equal(mask_checked(m, r->n), want);
            }
            assert_int_equal(gm_matcher_accept_token(m, t, &err), GM_OK);
            path[k++] = t;
        }
    }
    gm_matcher_destroy(m);
    return compared;
}

static void random_vocabularies(void **state)
{
    (void)state;
    unsigned seed = 20261129;
    int compared = 0, vocabs = 0;
    char path[] = "/tmp/gm_budget_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (int i = 0; i < 40; i++) {
        ref r;
        char store[12][16];
        random_vocab(&r, &seed, store);
        r.max = 1 + (uint32_t)i % 3;
        r.exclude = i % 4 == 3 ? "ab" : NULL;
        gm_vocab *v;
        gm_compiled *c = compile_ref(&r, &v);
        compared += walks(&r, c, &seed, 6);
        if (i % 8 == 0) {
            /* a saved and loaded grammar keeps its budgets */
            gm_error err;
            gm_compiled *back;
            assert_int_equal(gm_compiled_save(c, path, &err), GM_OK);
            if (gm_compiled_load(path, NULL, &back, &err))
                fail_msg("load: %s", err.message);
            compared += walks(&r, back, &seed, 3);
            gm_compiled_destroy(back);
        }
        gm_compiled_destroy(c);
        gm_vocab_destroy(v);
        vocabs++;
    }
    unlink(path);
    print_message("token budgets: %d vocabularies, %d masks equal to the reference\n", vocabs,
                  compared);
    assert_true(compared > 40 * 6);
}

/* Bytes given as a string are not counted; the tokens around them are. */
static void accept_bytes_not_counted(void **state)
{
    (void)state;
    ref r = {.max = 1};
    for (size_t i = 0; i < sizeof base_tokens / sizeof *base_tokens; i++)
        r.tok[r.n++] = base_tokens[i];
    r.tok[r.n++] = "<eos>";
    for (uint32_t k = 0; k < r.n; k++)
        r.len[k] = strlen(r.tok[k]);
    gm_vocab *v;
    gm_compiled *c = compile_ref(&r, &v);
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    assert_int_equal(gm_matcher_accept_token(m, 0, &err), GM_OK);
    assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)"ab", 2, &err), GM_OK);
    assert_true((mask_checked(m, r.n) >> 6) & 1); /* "a": still room for one token */
    assert_int_equal(gm_matcher_accept_token(m, 6, &err), GM_OK);
    /* spent: only the end may follow ("</t>", "<") */
    assert_int_equal(mask_checked(m, r.n), (1u << 1) | (1u << 2));
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    gm_vocab_destroy(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accept_bytes_not_counted),
        cmocka_unit_test(random_vocabularies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

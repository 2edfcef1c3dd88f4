/*
 * The JSON-Schema-Test-Suite (../shared/json-schema-test-suite, drafts 7
 * and 2020-12 with their optional tests, formats included since gramask
 * asserts formats): every schema is compiled twice, in the any-order layout
 * and in the default ordered one. When it compiles, each instance,
 * serialized compactly and with Python's separators (", ", ": "; strings
 * as json.dumps(ensure_ascii=False) writes them), must be accepted by the
 * grammar exactly when the suite says it is valid, judged by the reference
 * recognizer (tests/earley_ref); likewise with strings as
 * json.dumps(ensure_ascii=True) writes them and with every character spelled
 * at random among the ways RFC 8259 allows (note [string encoding] in
 * schema/irb.h). For the ordered layout the instance's
 * properties are first put in the order the schema lists them (collect_ranks).
 * A schema may be refused only with GM_ERR_UNSUPPORTED naming a keyword, or
 * as admitting no instance when no instance is valid. Known deviations
 * (documented format approximations, asserted formats) are counted apart.
 * Prints a per-file table: groups, refused, instances right, wrong, known.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "earley_ref.h"
#include "base/strbuf.h"
#include "base/utf8.h"
#include "schema/json.h"
#include "schema/schema.h"

/* How strings are spelled: as json.dumps(ensure_ascii=False), as json.dumps(ensure_ascii=True),
   or each character at random among its RFC 8259 spellings. */
enum { SPELL_UTF8, SPELL_ASCII, SPELL_MIXED };

static uint64_t spell_seed = 32;

/* \uXXXX for v; with `mixed`, each hex digit in a random case. */
static void put_u(gm_strbuf *b, uint32_t v, bool mixed)
{
    char hex[5];
    snprintf(hex, sizeof hex, "%04x", v);
    gm_strbuf_puts(b, "\\u");
    for (int i = 0; i < 4; i++)
        gm_strbuf_putc(b, mixed && hex[i] >= 'a' && gm_test_rand(&spell_seed) % 2 ? (char)(hex[i] - 32) : hex[i]);
}

static void write_char(gm_strbuf *b, const char *s, size_t n, uint32_t cp, int spell)
{
    static const char shorts[] = "\"\"\\\\//\bb\ff\nn\rr\tt";
    char esc = 0;
    for (size_t i = 0; i + 1 < sizeof shorts; i += 2)
        if ((uint32_t)(unsigned char)shorts[i] == cp && (cp != '/' || spell == SPELL_MIXED))
            esc = shorts[i + 1];
    bool literal_ok = cp >= 0x20 && cp != '"' && cp != '\\';
    if (spell == SPELL_MIXED) {
        /* 0: literal, 1: short escape, 2: \u */
        unsigned way = (unsigned)(gm_test_rand(&spell_seed) % 3);
        if (way == 0 && !literal_ok)
            way = 2;
        if (way == 1 && !esc)
            way = 2;
        if (way == 0) {
            gm_strbuf_append(b, s, n);
        } else if (way == 1) {
            gm_strbuf_putc(b, '\\');
            gm_strbuf_putc(b, esc);
        } else if (cp < 0x10000) {
            put_u(b, cp, true);
        } else {
            put_u(b, 0xD800 + ((cp - 0x10000) >> 10), true);
            put_u(b, 0xDC00 + ((cp - 0x10000) & 0x3FF), true);
        }
        return;
    }
    if (esc) {
        gm_strbuf_putc(b, '\\');
        gm_strbuf_putc(b, esc);
    } else if (cp < 0x20 || (spell == SPELL_ASCII && cp >= 0x7F && cp < 0x10000)) {
        put_u(b, cp, false);
    } else if (spell == SPELL_ASCII && cp >= 0x10000) {
        put_u(b, 0xD800 + ((cp - 0x10000) >> 10), false);
        put_u(b, 0xDC00 + ((cp - 0x10000) & 0x3FF), false);
    } else {
        gm_strbuf_append(b, s, n);
    }
}

/* Writes v as JSON: compact or with Python's separators; strings spelled as `spell` says. */
static void write_json(gm_strbuf *b, const gm_jv *v, bool python, int spell)
{
    switch (v->kind) {
    case GM_JV_NULL: gm_strbuf_puts(b, "null"); return;
    case GM_JV_TRUE: gm_strbuf_puts(b, "true"); return;
    case GM_JV_FALSE: gm_strbuf_puts(b, "false"); return;
    case GM_JV_NUMBER: gm_strbuf_append(b, v->u.s, v->n); return;
    case GM_JV_STRING: {
        gm_strbuf_putc(b, '"');
        for (uint32_t i = 0; i < v->n;) {
            uint32_t cp;
            size_t k = gm_utf8_decode((const uint8_t *)v->u.s + i, v->n - i, &cp);
            assert_true(k > 0);
            write_char(b, v->u.s + i, k, cp, spell);
            i += (uint32_t)k;
        }
        gm_strbuf_putc(b, '"');
        return;
    }
    case GM_JV_ARRAY:
        gm_strbuf_putc(b, '[');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i)
                gm_strbuf_puts(b, python ? ", " : ",");
            write_json(b, v->u.items[i], python, spell);
        }
        gm_strbuf_putc(b, ']');
        return;
    case GM_JV_OBJECT:
        gm_strbuf_putc(b, '{');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i)
                gm_strbuf_puts(b, python ? ", " : ",");
            gm_jv key = {.kind = GM_JV_STRING, .u.s = v->u.members[i].key, .n = v->u.members[i].klen};
            write_json(b, &key, python, spell);
            gm_strbuf_puts(b, python ? ": " : ":");
            write_json(b, v->u.members[i].value, python, spell);
        }
        gm_strbuf_putc(b, '}');
        return;
    }
}

/*
 * The rank of each property name in the ordered layout, as the compiler
 * orders slots: names of "properties" members in document order, then
 * names listed in "required" arrays. Collected over the whole schema.
 */
typedef struct ranks {
    const char *name[512];
    uint32_t len[512];
    size_t n;
} ranks;

static void add_rank(ranks *r, const char *s, uint32_t n)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->len[i] == n && !memcmp(r->name[i], s, n))
            return;
    if (r->n < 512) {
        r->name[r->n] = s;
        r->len[r->n++] = n;
    }
}

/* Every name of an object value (const / enum members), recursively. */
static void value_names(const gm_jv *v, ranks *r)
{
    if (v->kind == GM_JV_OBJECT)
        for (uint32_t i = 0; i < v->n; i++) {
            add_rank(r, v->u.members[i].key, v->u.members[i].klen);
            value_names(v->u.members[i].value, r);
        }
    else if (v->kind == GM_JV_ARRAY)
        for (uint32_t i = 0; i < v->n; i++)
            value_names(v->u.items[i], r);
}

/* pass 0: properties; 1: required; 2: dependency names; 3: names in const / enum values */
static void collect_ranks(const gm_jv *v, ranks *r, int pass)
{
    if (v->kind == GM_JV_OBJECT) {
        for (uint32_t i = 0; i < v->n; i++) {
            const gm_jmember *m = &v->u.members[i];
            const gm_jv *x = m->value;
            if (pass == 0 && !strcmp(m->key, "properties") && x->kind == GM_JV_OBJECT)
                for (uint32_t j = 0; j < x->n; j++)
                    add_rank(r, x->u.members[j].key, x->u.members[j].klen);
            if (pass == 1 && !strcmp(m->key, "required") && x->kind == GM_JV_ARRAY)
                for (uint32_t j = 0; j < x->n; j++)
                    if (x->u.items[j]->kind == GM_JV_STRING)
                        add_rank(r, x->u.items[j]->u.s, x->u.items[j]->n);
            if (pass == 2 && (!strcmp(m->key, "dependencies") || !strcmp(m->key, "dependentRequired")) &&
                x->kind == GM_JV_OBJECT)
                for (uint32_t j = 0; j < x->n; j++) {
                    add_rank(r, x->u.members[j].key, x->u.members[j].klen);
                    const gm_jv *l = x->u.members[j].value;
                    for (uint32_t k = 0; l->kind == GM_JV_ARRAY && k < l->n; k++)
                        if (l->u.items[k]->kind == GM_JV_STRING)
                            add_rank(r, l->u.items[k]->u.s, l->u.items[k]->n);
                }
            if (pass == 3 && (!strcmp(m->key, "const") || !strcmp(m->key, "enum"))) {
                value_names(x, r);
                continue;
            }
            collect_ranks(x, r, pass);
        }
    } else if (v->kind == GM_JV_ARRAY) {
        for (uint32_t i = 0; i < v->n; i++)
            collect_ranks(v->u.items[i], r, pass);
    }
}

static int rank_of(const ranks *r, const char *s, uint32_t n)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->len[i] == n && !memcmp(r->name[i], s, n))
            return (int)i;
    return -1;
}

/* Reorders the members of every object of v (in place): ranked names sorted among the
   positions ranked names hold, other members where they are. */
static void reorder(gm_jv *v, const ranks *r)
{
    if (v->kind == GM_JV_ARRAY) {
        for (uint32_t i = 0; i < v->n; i++)
            reorder(v->u.items[i], r);
        return;
    }
    if (v->kind != GM_JV_OBJECT)
        return;
    for (uint32_t i = 0; i < v->n; i++)
        reorder(v->u.members[i].value, r);
    for (uint32_t i = 0; i < v->n; i++) {
        int ri = rank_of(r, v->u.members[i].key, v->u.members[i].klen);
        if (ri < 0)
            continue;
        for (uint32_t j = i + 1; j < v->n; j++) {
            int rj = rank_of(r, v->u.members[j].key, v->u.members[j].klen);
            if (rj >= 0 && rj < ri) {
                gm_jmember t = v->u.members[i];
                v->u.members[i] = v->u.members[j];
                v->u.members[j] = t;
                ri = rj;
            }
        }
    }
}

static bool accepts(const gm_ebnf *g, const char *text, size_t n)
{
    gm_eref *r;
    gm_error err;
    if (gm_eref_create(g, &r, &err) != GM_OK)
        return false;
    bool ok = gm_eref_feed(r, text, n) && gm_eref_accepting(r);
    gm_eref_destroy(r);
    return ok;
}

typedef struct tally {
    char file[96];
    unsigned groups, refused, right, wrong, known;
} tally;

static unsigned total_wrong, total_right, total_refused, total_groups, total_unexpected;

/*
 * Instances the grammars knowingly get wrong (note [formats] in
 * schema/formats.c): a leap second at a fractional-hour offset has its
 * minute unchecked; hostnames are checked for RFC 1123 syntax without the
 * 253-character total or the Punycode of A-labels.
 */
static bool known_deviation(const char *file, const char *group, const char *test)
{
    /* formats are asserted (MaskBench's reading; see README), not annotations as 2020-12's
       default vocabulary has it */
    if (!strcmp(file, "format.json") && strstr(test, "only an annotation"))
        return true;
    if (!strcmp(file, "time.json") || !strcmp(file, "date-time.json"))
        return strstr(test, "(wrong minute)") && strstr(test, "time-offset");
    if (!strcmp(file, "hostname.json"))
        return strstr(group, "A-label") || strstr(test, "maximum overall length");
    return false;
}

static uint32_t suite_draft;

static void run_file(const char *dir, const char *name, tally *t)
{
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    char *text = gm_test_read_file(path, &len);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_jdoc doc;
    gm_error err;
    assert_int_equal(gm_jdoc_parse(&doc, &m, path, text, len, 0, NULL, &err), GM_OK);
    const gm_jv *root = doc.root;
    for (uint32_t gi = 0; gi < root->n; gi++) {
        const gm_jv *group = root->u.items[gi];
        const gm_jv *schema = gm_jv_get(group, "schema"), *tests = gm_jv_get(group, "tests");
        const gm_jv *desc = gm_jv_get(group, "description");
        t->groups++;
        ranks rk;
        rk.n = 0;
        for (int pass = 0; pass < 4; pass++)
            collect_ranks(schema, &rk, pass);
        for (int mode = 0; mode < 2; mode++) {
            gm_schema_options opts;
            gm_schema_options_init_defaults(&opts);
            opts.any_order = mode == 0;
            opts.draft = (gm_schema_draft)suite_draft;
            gm_ebnf g;
            gm_ebnf_init(&g, &m);
            gm_status st = gm_schema_compile(&m, path, text + schema->off, schema->end - schema->off,
                                             &opts, &g, &err);
            if (st == GM_ERR_GRAMMAR && strstr(err.message, "admits no instance")) {
                /* a schema no instance satisfies: right when the suite agrees */
                for (uint32_t ti = 0; ti < tests->n; ti++) {
                    bool valid = gm_jv_get(tests->u.items[ti], "valid")->kind == GM_JV_TRUE;
                    if (valid) {
                        t->wrong += 2;
                        printf("  WRONG %s / %s: refused as empty, but %s is valid\n", name,
                               desc->u.s, gm_jv_get(tests->u.items[ti], "description")->u.s);
                    } else {
                        t->right += 2;
                    }
                }
                gm_ebnf_free(&g);
                continue;
            }
            if (st != GM_OK) {
                if (st == GM_ERR_UNSUPPORTED && strstr(err.message, "keyword '")) {
                    t->refused += mode == 0;
                    if (getenv("GM_SUITE_VERBOSE"))
                        printf("  refused %s / %s: %s\n", name, desc->u.s, err.message);
                } else {
                    total_unexpected++;
                    printf("  UNEXPECTED ERROR %s / %s: %s (%s)\n", name, desc->u.s, err.message,
                           gm_status_name(st));
                }
                gm_ebnf_free(&g);
                continue;
            }
            for (uint32_t ti = 0; ti < tests->n; ti++) {
                const gm_jv *test = tests->u.items[ti];
                gm_jv *data = (gm_jv *)gm_jv_get(test, "data");
                if (mode == 1)
                    reorder(data, &rk);
                bool valid = gm_jv_get(test, "valid")->kind == GM_JV_TRUE;
                /* compact and Python's separators as ensure_ascii=False writes them, Python's
                   as ensure_ascii=True does, compact with random spellings */
                for (int form = 0; form < 4; form++) {
                    static const int spells[] = {SPELL_UTF8, SPELL_UTF8, SPELL_ASCII, SPELL_MIXED};
                    gm_strbuf out;
                    gm_strbuf_init(&out, &m);
                    write_json(&out, data, form == 1 || form == 2, spells[form]);
                    bool got = accepts(&g, gm_strbuf_str(&out), out.n);
                    if (got == valid) {
                        t->right++;
                    } else if (known_deviation(name, desc->u.s, gm_jv_get(test, "description")->u.s)) {
                        t->known++;
                    } else {
                        t->wrong++;
                        printf("  WRONG %s%s / %s / %s: %s is %s, the grammar %s it\n",
                               mode ? "(ordered) " : "", name,
                               desc->u.s, gm_jv_get(test, "description")->u.s, gm_strbuf_str(&out),
                               valid ? "valid" : "invalid", got ? "accepts" : "rejects");
                    }
                    gm_strbuf_free(&out);
                }
            }
            gm_ebnf_free(&g);
        }
    }
    gm_jdoc_free(&doc);
    free(text);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_dir(const char *rel)
{
    const char *dir0 = gm_test_shared_path(rel);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", dir0);
    DIR *d = opendir(dir);
    if (!d) {
        print_message("no %s: skipped\n", dir);
        skip();
    }
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256)
        if (strstr(e->d_name, ".json"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    printf("%-40s %7s %7s %7s %7s %7s\n", rel, "groups", "refused", "right", "wrong", "known");
    for (size_t i = 0; i < n; i++) {
        tally t = {{0}, 0, 0, 0, 0, 0};
        /* content.json: contentMediaType/contentEncoding are annotations from 2019-09 on
           (optional in draft 7); gramask does not assert them */
        /* dependencies-compatibility.json: 'dependencies' is no keyword after draft 7 (2019-09
           split it); gramask reads each draft's vocabulary, as python-jsonschema does */
        if (!strcmp(names[i], "content.json") || !strcmp(names[i], "dependencies-compatibility.json")) {
            free(names[i]);
            continue;
        }
        snprintf(t.file, sizeof t.file, "%s", names[i]);
        run_file(dir, names[i], &t);
        printf("%-40s %7u %7u %7u %7u %7u\n", t.file, t.groups, t.refused, t.right, t.wrong, t.known);
        total_groups += t.groups;
        total_refused += t.refused;
        total_right += t.right;
        total_wrong += t.wrong;
        free(names[i]);
    }
}

static void test_draft7(void **state)
{
    (void)state;
    suite_draft = 7;
    run_dir("json-schema-test-suite/tests/draft7");
    run_dir("json-schema-test-suite/tests/draft7/optional");
    run_dir("json-schema-test-suite/tests/draft7/optional/format");
}

static void test_draft2020(void **state)
{
    (void)state;
    suite_draft = 2020;
    run_dir("json-schema-test-suite/tests/draft2020-12");
    run_dir("json-schema-test-suite/tests/draft2020-12/optional");
    run_dir("json-schema-test-suite/tests/draft2020-12/optional/format");
}

static void test_totals(void **state)
{
    (void)state;
    printf("total: %u groups, %u refused; %u instances right, %u wrong, %u unexpected errors\n",
           total_groups, total_refused, total_right, total_wrong, total_unexpected);
    assert_int_equal(total_wrong, 0);
    assert_int_equal(total_unexpected, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draft7),
        cmocka_unit_test(test_draft2020),
        cmocka_unit_test(test_totals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * llama.cpp's trigger patterns: std::regex (ECMAScript) over bytes (ecma_regex.h).
 *
 * note [ecma dialect]
 * llama.cpp compiles each trigger pattern with std::regex(pattern): char
 * (bytes, no UTF-8), ECMAScript grammar, the global locale ("C": a program
 * that never calls setlocale). Taken, with libstdc++'s meaning:
 *   literals (any byte, multi-byte UTF-8 as its bytes); .  (any byte but
 *   \n and \r); classes [...] and [^...] with ranges of ASCII bytes and the
 *   escapes below (\b in a class is backspace); \d \D \w \W \s \S (C locale:
 *   \s is " \t\n\v\f\r", \w is [A-Za-z0-9_], bytes >= 0x80 in none);
 *   \f \n \r \t \v \0 \xHH \uHHHH (<= 0x7F) \cX and a backslash before any
 *   other non-alphanumeric byte (that byte); groups ( ) and (?: );
 *   alternation; * + ? {n} {n,} {n,m}, each lazy with a trailing ?;
 *   ^ (only at offset 0: no multiline) and $ (only at the end of the text).
 * Refused, each with the pattern, the offset and the construct named:
 *   backreferences \1..\9 (not regular), lookahead (?= (?! and (?<
 *   (lookaround: not implemented), \b \B (word boundaries: not implemented),
 *   POSIX [[:alpha:]] [[.x.]] [[=x=]], the empty class [] and [^], ranges
 *   with a class or a byte >= 0x80 as an end (libstdc++ compares signed
 *   chars), escapes of other letters (their meaning differs between
 *   std::regex versions), a * + or {n,} whose operand can match the empty
 *   text (libstdc++ lets such a loop run empty twice, which moves captures:
 *   engine-specific), counts above 1000 and programs above ER_MAX_CODE.
 * Syntax errors (unbalanced ( ) [ ], a quantifier with no operand, a bad
 * {}) are GM_ERR_SYNTAX, as std::regex throws regex_error for them.
 *
 * note [priority]
 * libstdc++ matches ECMAScript patterns by backtracking (its DFS executor):
 * an alternation tries the left branch first, a greedy quantifier one more
 * iteration first, a lazy one leaving first; regex_search tries each start
 * offset in turn and stops at the first path that reaches the end of the
 * pattern; regex_match takes the first path that also ends at the text's
 * end. The program below orders every split the same way (x = the branch
 * tried first), so a Pike VM whose thread list keeps that order, dropping a
 * thread at a state an earlier thread already holds at the same offset,
 * reports the same match and captures (the dropped thread could only
 * repeat what the earlier one does, later). The one difference, a loop
 * whose body matches the empty text, is refused above.
 */
#include "ecma_regex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ER_MAX_CODE 4096u
#define ER_MAX_REPEAT 1000u
#define ER_MAX_DEPTH 200
#define ER_INF UINT32_MAX

enum { OP_SET, OP_SPLIT, OP_JMP, OP_SAVE, OP_BOL, OP_EOL, OP_MATCH };

typedef struct er_inst {
    uint8_t op;
    uint32_t x, y; /* SET: set index; SPLIT: x tried first, then y; JMP: x; SAVE: slot x */
} er_inst;

typedef struct er_set {
    uint8_t bits[32];
} er_set;

struct er_prog {
    er_inst *code;
    uint32_t n;
    er_set *sets;
    uint32_t nsets;
    uint32_t ncap; /* 2 * (capture groups + 1) */
};

/* ---- parsing -------------------------------------------------------------- */

enum { N_SET, N_CAT, N_ALT, N_REP, N_GROUP, N_BOL, N_EOL, N_EMPTY };

typedef struct node {
    uint8_t kind;
    bool greedy;
    int32_t l, r;       /* CAT, ALT: both; REP, GROUP: l */
    uint32_t min, max;  /* REP */
    uint32_t val;       /* SET: set index; GROUP: group number (0 = non-capturing) */
} node;

typedef struct parser {
    const char *pat;
    size_t len, pos;
    node *nodes;
    uint32_t nn, ncap_nodes;
    er_set *sets;
    uint32_t nsets, capsets;
    uint32_t groups;
    gm_status st;
    gm_error *err;
} parser;

static void set_err(gm_error *err, gm_status code, const char *msg)
{
    if (!err)
        return;
    gm_error_clear(err);
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s", msg);
}

static int32_t fail(parser *p, gm_status code, size_t at, const char *why)
{
    if (p->st == GM_OK) {
        char msg[sizeof p->err->message];
        snprintf(msg, sizeof msg, "trigger pattern \"%.100s\" at offset %zu: %s", p->pat, at, why);
        set_err(p->err, code, msg);
        p->st = code;
    }
    return -1;
}

static int32_t new_node(parser *p, uint8_t kind)
{
    if (p->st != GM_OK)
        return -1;
    if (p->nn == p->ncap_nodes) {
        uint32_t nc = p->ncap_nodes ? 2 * p->ncap_nodes : 32;
        node *nn = realloc(p->nodes, nc * sizeof *nn);
        if (!nn)
            return fail(p, GM_ERR_NOMEM, p->pos, "out of memory");
        p->nodes = nn;
        p->ncap_nodes = nc;
    }
    node *n = &p->nodes[p->nn];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->l = n->r = -1;
    return (int32_t)p->nn++;
}

static int32_t new_set(parser *p, const er_set *s)
{
    if (p->st != GM_OK)
        return -1;
    if (p->nsets == p->capsets) {
        uint32_t nc = p->capsets ? 2 * p->capsets : 16;
        er_set *ns = realloc(p->sets, nc * sizeof *ns);
        if (!ns)
            return fail(p, GM_ERR_NOMEM, p->pos, "out of memory");
        p->sets = ns;
        p->capsets = nc;
    }
    p->sets[p->nsets] = *s;
    int32_t id = new_node(p, N_SET);
    if (id >= 0)
        p->nodes[id].val = p->nsets++;
    return id;
}

static void set_add(er_set *s, unsigned b) { s->bits[b >> 3] |= (uint8_t)(1u << (b & 7)); }
static bool set_has(const er_set *s, unsigned b) { return s->bits[b >> 3] >> (b & 7) & 1u; }
static void set_range(er_set *s, unsigned lo, unsigned hi)
{
    for (unsigned b = lo; b <= hi; b++)
        set_add(s, b);
}
static void set_union(er_set *s, const er_set *t)
{
    for (int i = 0; i < 32; i++)
        s->bits[i] |= t->bits[i];
}
static void set_negate(er_set *s)
{
    for (int i = 0; i < 32; i++)
        s->bits[i] = (uint8_t)~s->bits[i];
}

/* \d \w \s and their complements (upper case), in the "C" locale. */
static void class_escape(er_set *s, char c)
{
    er_set t;
    memset(&t, 0, sizeof t);
    switch (c | 0x20) {
    case 'd':
        set_range(&t, '0', '9');
        break;
    case 'w':
        set_range(&t, '0', '9');
        set_range(&t, 'A', 'Z');
        set_range(&t, 'a', 'z');
        set_add(&t, '_');
        break;
    default: /* s */
        set_add(&t, ' ');
        set_range(&t, '\t', '\r');
        break;
    }
    if (c >= 'A' && c <= 'Z')
        set_negate(&t);
    set_union(s, &t);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * One escape at p->pos (the byte after '\'): a single byte (returns it, 0..255),
 * a class (returns -2, *cls filled), or -1 on error. in_class: inside [...].
 */
static int parse_escape(parser *p, bool in_class, er_set *cls)
{
    size_t at = p->pos - 1;
    if (p->pos >= p->len)
        return fail(p, GM_ERR_SYNTAX, at, "a trailing backslash");
    char c = p->pat[p->pos++];
    switch (c) {
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'v': return '\v';
    case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
        memset(cls, 0, sizeof *cls);
        class_escape(cls, c);
        return -2;
    case 'b':
        if (in_class)
            return '\b';
        return fail(p, GM_ERR_UNSUPPORTED, at, "the word boundary \\b (not implemented)");
    case 'B':
        return fail(p, GM_ERR_UNSUPPORTED, at, "the word boundary \\B (not implemented)");
    case 'c':
        if (p->pos < p->len && ((p->pat[p->pos] | 0x20) >= 'a' && (p->pat[p->pos] | 0x20) <= 'z'))
            return p->pat[p->pos++] % 32;
        return fail(p, GM_ERR_SYNTAX, at, "\\c not followed by a letter");
    case 'x':
    case 'u': {
        int digits = c == 'x' ? 2 : 4, v = 0;
        for (int i = 0; i < digits; i++) {
            int h = p->pos < p->len ? hexval(p->pat[p->pos]) : -1;
            if (h < 0)
                return fail(p, GM_ERR_SYNTAX, at, c == 'x' ? "\\x needs two hex digits"
                                                           : "\\u needs four hex digits");
            v = v * 16 + h;
            p->pos++;
        }
        if (c == 'u' && v > 0x7F)
            return fail(p, GM_ERR_UNSUPPORTED, at,
                        "\\u above 0x7F (std::regex<char> truncates it to one byte)");
        return v;
    }
    case '0':
        if (p->pos < p->len && p->pat[p->pos] >= '0' && p->pat[p->pos] <= '9')
            return fail(p, GM_ERR_UNSUPPORTED, at, "an octal or backreference escape \\0N");
        return 0;
    default:
        break;
    }
    if (c >= '1' && c <= '9')
        return fail(p, GM_ERR_UNSUPPORTED, at,
                    "a backreference (the language it matches is not regular)");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return fail(p, GM_ERR_UNSUPPORTED, at,
                    "an escape of a letter std::regex gives no fixed meaning");
    return (unsigned char)c;
}

static int32_t parse_class(parser *p)
{
    size_t at = p->pos - 1; /* '[' */
    er_set s;
    memset(&s, 0, sizeof s);
    bool neg = false;
    if (p->pos < p->len && p->pat[p->pos] == '^') {
        neg = true;
        p->pos++;
    }
    if (p->pos < p->len && p->pat[p->pos] == ']')
        return fail(p, GM_ERR_UNSUPPORTED, at, "an empty class [] or [^]");
    for (;;) {
        if (p->pos >= p->len)
            return fail(p, GM_ERR_SYNTAX, at, "an unclosed [");
        char c = p->pat[p->pos];
        if (c == ']') {
            p->pos++;
            break;
        }
        size_t item = p->pos;
        int lo;
        er_set cls;
        if (c == '[' && p->pos + 1 < p->len &&
            (p->pat[p->pos + 1] == ':' || p->pat[p->pos + 1] == '.' || p->pat[p->pos + 1] == '='))
            return fail(p, GM_ERR_UNSUPPORTED, item, "a POSIX class [: :], [. .] or [= =]");
        p->pos++;
        if (c == '\\') {
            lo = parse_escape(p, true, &cls);
            if (lo == -1)
                return -1;
        } else {
            lo = (unsigned char)c;
        }
        bool range = p->pos + 1 < p->len && p->pat[p->pos] == '-' && p->pat[p->pos + 1] != ']';
        if (!range) {
            if (lo == -2)
                set_union(&s, &cls);
            else
                set_add(&s, (unsigned)lo);
            continue;
        }
        p->pos++; /* '-' */
        int hi;
        char d = p->pat[p->pos++];
        if (d == '\\') {
            hi = parse_escape(p, true, &cls);
            if (hi == -1)
                return -1;
        } else {
            hi = (unsigned char)d;
        }
        if (lo == -2 || hi == -2)
            return fail(p, GM_ERR_UNSUPPORTED, item, "a range with a class as an end");
        if (lo >= 0x80 || hi >= 0x80)
            return fail(p, GM_ERR_UNSUPPORTED, item,
                        "a range with a byte >= 0x80 as an end (libstdc++ compares signed chars)");
        if (lo > hi)
            return fail(p, GM_ERR_SYNTAX, item, "a range out of order");
        set_range(&s, (unsigned)lo, (unsigned)hi);
    }
    if (neg)
        set_negate(&s);
    return new_set(p, &s);
}

static int32_t parse_alt(parser *p, int depth);

static bool parse_count(parser *p, uint32_t *v)
{
    size_t start = p->pos;
    uint64_t n = 0;
    while (p->pos < p->len && p->pat[p->pos] >= '0' && p->pat[p->pos] <= '9') {
        n = n * 10 + (uint64_t)(p->pat[p->pos++] - '0');
        if (n > ER_MAX_REPEAT) {
            fail(p, GM_ERR_LIMIT, start, "a repeat count above 1000");
            return false;
        }
    }
    *v = (uint32_t)n;
    return p->pos > start;
}

static bool nullable(const parser *p, int32_t id)
{
    const node *n = &p->nodes[id];
    switch (n->kind) {
    case N_SET: return false;
    case N_CAT: return nullable(p, n->l) && nullable(p, n->r);
    case N_ALT: return nullable(p, n->l) || nullable(p, n->r);
    case N_REP: return n->min == 0 || nullable(p, n->l);
    case N_GROUP: return nullable(p, n->l);
    default: return true;
    }
}

/* An atom and its quantifiers; -1 with p->st == GM_OK when a ')' or '|' or the end comes. */
static int32_t parse_term(parser *p, int depth)
{
    if (p->pos >= p->len)
        return -1;
    size_t at = p->pos;
    char c = p->pat[p->pos];
    int32_t a;
    if (c == '|' || c == ')')
        return -1;
    p->pos++;
    switch (c) {
    case '(': {
        uint32_t group = 0;
        if (p->pos < p->len && p->pat[p->pos] == '?') {
            if (p->pos + 1 < p->len && p->pat[p->pos + 1] == ':')
                p->pos += 2;
            else
                return fail(p, GM_ERR_UNSUPPORTED, at,
                            "a lookaround group (?= (?! (?< (not implemented)");
        } else {
            group = ++p->groups;
        }
        if (depth >= ER_MAX_DEPTH)
            return fail(p, GM_ERR_LIMIT, at, "groups nested deeper than 200");
        int32_t inner = parse_alt(p, depth + 1);
        if (p->st != GM_OK)
            return -1;
        if (p->pos >= p->len || p->pat[p->pos] != ')')
            return fail(p, GM_ERR_SYNTAX, at, "an unclosed (");
        p->pos++;
        a = new_node(p, N_GROUP);
        if (a >= 0) {
            p->nodes[a].l = inner;
            p->nodes[a].val = group;
        }
        break;
    }
    case '[':
        a = parse_class(p);
        break;
    case '.': {
        er_set s;
        memset(&s, 0, sizeof s);
        set_negate(&s);
        s.bits['\n' >> 3] &= (uint8_t)~(1u << ('\n' & 7));
        s.bits['\r' >> 3] &= (uint8_t)~(1u << ('\r' & 7));
        a = new_set(p, &s);
        break;
    }
    case '^':
        a = new_node(p, N_BOL);
        break;
    case '$':
        a = new_node(p, N_EOL);
        break;
    case '*': case '+': case '?':
        return fail(p, GM_ERR_SYNTAX, at, "a quantifier with nothing to repeat");
    case '{':
        return fail(p, GM_ERR_SYNTAX, at, "a { that is not a quantifier after an atom");
    case '\\': {
        er_set cls;
        int b = parse_escape(p, false, &cls);
        if (b == -1)
            return -1;
        er_set s;
        memset(&s, 0, sizeof s);
        if (b == -2)
            s = cls;
        else
            set_add(&s, (unsigned)b);
        a = new_set(p, &s);
        break;
    }
    default: {
        er_set s;
        memset(&s, 0, sizeof s);
        set_add(&s, (unsigned char)c);
        a = new_set(p, &s);
        break;
    }
    }
    if (a < 0)
        return -1;
    if (p->pos < p->len) { /* a quantifier */
        size_t qat = p->pos;
        char q = p->pat[p->pos];
        uint32_t min, max;
        if (q == '*') {
            min = 0, max = ER_INF;
            p->pos++;
        } else if (q == '+') {
            min = 1, max = ER_INF;
            p->pos++;
        } else if (q == '?') {
            min = 0, max = 1;
            p->pos++;
        } else if (q == '{') {
            p->pos++;
            if (!parse_count(p, &min))
                return fail(p, GM_ERR_SYNTAX, qat, "a { that is not a quantifier {n}, {n,} or {n,m}");
            max = min;
            if (p->pos < p->len && p->pat[p->pos] == ',') {
                p->pos++;
                if (p->pos < p->len && p->pat[p->pos] == '}')
                    max = ER_INF;
                else if (!parse_count(p, &max))
                    return fail(p, GM_ERR_SYNTAX, qat, "a bad {n,m} quantifier");
            }
            if (p->st != GM_OK)
                return -1;
            if (p->pos >= p->len || p->pat[p->pos] != '}')
                return fail(p, GM_ERR_SYNTAX, qat, "an unclosed {");
            p->pos++;
            if (max < min)
                return fail(p, GM_ERR_SYNTAX, qat, "a {n,m} quantifier with m < n");
        } else {
            return a;
        }
        bool greedy = true;
        if (p->pos < p->len && p->pat[p->pos] == '?') {
            greedy = false;
            p->pos++;
        }
        if (p->pos < p->len && strchr("*+?{", p->pat[p->pos]))
            return fail(p, GM_ERR_SYNTAX, p->pos, "a quantifier after a quantifier");
        uint8_t k = p->nodes[a].kind;
        if (k == N_BOL || k == N_EOL)
            return fail(p, GM_ERR_SYNTAX, qat, "a quantifier on an anchor");
        if (max == ER_INF && nullable(p, a))
            return fail(p, GM_ERR_UNSUPPORTED, qat,
                        "a loop whose body can match the empty text (libstdc++ runs such a loop "
                        "empty, which moves captures)");
        int32_t r = new_node(p, N_REP);
        if (r < 0)
            return -1;
        p->nodes[r].l = a;
        p->nodes[r].min = min;
        p->nodes[r].max = max;
        p->nodes[r].greedy = greedy;
        a = r;
    }
    return a;
}

static int32_t parse_cat(parser *p, int depth)
{
    int32_t acc = -1;
    for (;;) {
        int32_t t = parse_term(p, depth);
        if (p->st != GM_OK)
            return -1;
        if (t < 0)
            break;
        if (acc < 0) {
            acc = t;
        } else {
            int32_t c = new_node(p, N_CAT);
            if (c < 0)
                return -1;
            p->nodes[c].l = acc;
            p->nodes[c].r = t;
            acc = c;
        }
    }
    return acc >= 0 ? acc : new_node(p, N_EMPTY);
}

static int32_t parse_alt(parser *p, int depth)
{
    int32_t acc = parse_cat(p, depth);
    while (p->st == GM_OK && p->pos < p->len && p->pat[p->pos] == '|') {
        p->pos++;
        int32_t r = parse_cat(p, depth);
        int32_t a = new_node(p, N_ALT);
        if (a < 0 || r < 0)
            return -1;
        p->nodes[a].l = acc;
        p->nodes[a].r = r;
        acc = a;
    }
    return acc;
}

/* ---- code ----------------------------------------------------------------- */

typedef struct emitter {
    er_inst *code;
    uint32_t n;
    bool over;
} emitter;

static uint32_t emit_op(emitter *e, uint8_t op, uint32_t x, uint32_t y)
{
    if (e->n >= ER_MAX_CODE) {
        e->over = true;
        return e->n;
    }
    e->code[e->n].op = op;
    e->code[e->n].x = x;
    e->code[e->n].y = y;
    return e->n++;
}

static void emit(emitter *e, const parser *p, int32_t id)
{
    if (e->over)
        return;
    const node *n = &p->nodes[id];
    switch (n->kind) {
    case N_SET:
        emit_op(e, OP_SET, n->val, 0);
        break;
    case N_CAT:
        emit(e, p, n->l);
        emit(e, p, n->r);
        break;
    case N_ALT: {
        uint32_t s = emit_op(e, OP_SPLIT, 0, 0);
        emit(e, p, n->l);
        uint32_t j = emit_op(e, OP_JMP, 0, 0);
        uint32_t r = e->n;
        emit(e, p, n->r);
        if (e->over)
            return;
        e->code[s].x = s + 1;
        e->code[s].y = r;
        e->code[j].x = e->n;
        break;
    }
    case N_GROUP:
        if (n->val)
            emit_op(e, OP_SAVE, 2 * n->val, 0);
        emit(e, p, n->l);
        if (n->val)
            emit_op(e, OP_SAVE, 2 * n->val + 1, 0);
        break;
    case N_BOL:
        emit_op(e, OP_BOL, 0, 0);
        break;
    case N_EOL:
        emit_op(e, OP_EOL, 0, 0);
        break;
    case N_EMPTY:
        break;
    case N_REP: {
        for (uint32_t i = 0; i < n->min && !e->over; i++)
            emit(e, p, n->l);
        if (n->max == ER_INF) {
            uint32_t s = emit_op(e, OP_SPLIT, 0, 0);
            emit(e, p, n->l);
            emit_op(e, OP_JMP, s, 0);
            if (e->over)
                return;
            e->code[s].x = n->greedy ? s + 1 : e->n;
            e->code[s].y = n->greedy ? e->n : s + 1;
            break;
        }
        /* Optional copies, each entered only after the one before: x(x(x)?)? */
        uint32_t k = n->max - n->min;
        uint32_t *splits = malloc((k ? k : 1) * sizeof *splits);
        if (!splits) {
            e->over = true;
            return;
        }
        for (uint32_t i = 0; i < k && !e->over; i++) {
            splits[i] = emit_op(e, OP_SPLIT, 0, 0);
            emit(e, p, n->l);
        }
        if (!e->over)
            for (uint32_t i = 0; i < k; i++) {
                e->code[splits[i]].x = n->greedy ? splits[i] + 1 : e->n;
                e->code[splits[i]].y = n->greedy ? e->n : splits[i] + 1;
            }
        free(splits);
        break;
    }
    }
}

gm_status er_compile(const char *pattern, er_prog **out, gm_error *err)
{
    *out = NULL;
    parser p;
    memset(&p, 0, sizeof p);
    p.pat = pattern;
    p.len = strlen(pattern);
    p.err = err;
    int32_t root = parse_alt(&p, 0);
    if (p.st == GM_OK && p.pos < p.len) /* a ')' with no '(' */
        fail(&p, GM_ERR_SYNTAX, p.pos, "a ) with no (");
    er_prog *prog = NULL;
    emitter e = {0};
    if (p.st == GM_OK) {
        prog = calloc(1, sizeof *prog);
        e.code = malloc(ER_MAX_CODE * sizeof *e.code);
        if (!prog || !e.code)
            fail(&p, GM_ERR_NOMEM, 0, "out of memory");
    }
    if (p.st == GM_OK) {
        emit_op(&e, OP_SAVE, 0, 0);
        emit(&e, &p, root);
        emit_op(&e, OP_SAVE, 1, 0);
        emit_op(&e, OP_MATCH, 0, 0);
        if (e.over)
            fail(&p, GM_ERR_LIMIT, 0, "the pattern needs more than 4096 instructions");
    }
    free(p.nodes);
    if (p.st != GM_OK) {
        free(e.code);
        free(p.sets);
        free(prog);
        return p.st;
    }
    prog->code = e.code;
    prog->n = e.n;
    prog->sets = p.sets;
    prog->nsets = p.nsets;
    prog->ncap = 2 * (p.groups + 1);
    *out = prog;
    return GM_OK;
}

void er_prog_free(er_prog *p)
{
    if (!p)
        return;
    free(p->code);
    free(p->sets);
    free(p);
}

/* ---- DFA: does the text hold a match ------------------------------------- */

struct er_dfa {
    uint8_t cls[256];
    uint32_t ncls;
    uint32_t n;       /* states; 0 is "a match was found" (absorbing) */
    uint32_t start;
    uint32_t *trans;  /* n * ncls */
    bool *found;      /* n */
};

typedef struct dbuild {
    const er_prog *p;
    uint32_t *mark, stamp;
    uint32_t *stack;
    uint32_t *cur;   /* the set being built */
    uint32_t ncur;
    bool match;
    /* interned sets */
    uint32_t *pool;
    size_t npool, cappool;
    size_t *off;     /* state -> offset in pool; off[s + 1] - off[s] = size */
    uint32_t nstates, capstates;
    uint32_t *table; /* open addressing: state id + 1, 0 = empty */
    uint32_t tcap;
} dbuild;

/* Adds the closure of pc (captures ignored) to cur: SET and unpassed EOL states. */
static void dclose(dbuild *b, uint32_t pc, bool bol, bool eol)
{
    uint32_t sp = 0;
    b->stack[sp++] = pc;
    while (sp) {
        uint32_t q = b->stack[--sp];
        if (b->mark[q] == b->stamp)
            continue;
        b->mark[q] = b->stamp;
        const er_inst *in = &b->p->code[q];
        switch (in->op) {
        case OP_SET:
            b->cur[b->ncur++] = q;
            break;
        case OP_MATCH:
            b->match = true;
            break;
        case OP_SPLIT:
            b->stack[sp++] = in->y;
            b->stack[sp++] = in->x;
            break;
        case OP_JMP:
            b->stack[sp++] = in->x;
            break;
        case OP_SAVE:
            b->stack[sp++] = q + 1;
            break;
        case OP_BOL:
            if (bol)
                b->stack[sp++] = q + 1;
            break;
        case OP_EOL:
            if (eol)
                b->stack[sp++] = q + 1;
            else
                b->cur[b->ncur++] = q;
            break;
        }
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t hash_set(const uint32_t *s, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The state of set cur (sorted), interned; UINT32_MAX on NOMEM. */
static uint32_t intern(dbuild *b)
{
    qsort(b->cur, b->ncur, sizeof *b->cur, cmp_u32);
    uint64_t h = hash_set(b->cur, b->ncur);
    uint32_t i = (uint32_t)(h & (b->tcap - 1));
    for (;; i = (i + 1) & (b->tcap - 1)) {
        uint32_t e = b->table[i];
        if (!e)
            break;
        uint32_t s = e - 1;
        size_t sz = b->off[s + 1] - b->off[s];
        if (sz == b->ncur && !memcmp(b->pool + b->off[s], b->cur, sz * sizeof *b->cur))
            return s;
    }
    if (b->nstates + 2 > b->capstates) {
        uint32_t nc = 2 * b->capstates;
        size_t *no = realloc(b->off, (nc + 1) * sizeof *no);
        if (!no)
            return UINT32_MAX;
        b->off = no;
        b->capstates = nc;
    }
    if (b->npool + b->ncur > b->cappool) {
        size_t nc = 2 * (b->cappool + b->ncur);
        uint32_t *np = realloc(b->pool, nc * sizeof *np);
        if (!np)
            return UINT32_MAX;
        b->pool = np;
        b->cappool = nc;
    }
    uint32_t s = b->nstates++;
    memcpy(b->pool + b->npool, b->cur, b->ncur * sizeof *b->cur);
    b->npool += b->ncur;
    b->off[s + 1] = b->npool;
    b->table[i] = s + 1;
    return s;
}

gm_status er_dfa_build(const er_prog *p, const char *pattern, uint32_t max_states, er_dfa **out,
                       gm_error *err)
{
    *out = NULL;
    er_dfa *d = calloc(1, sizeof *d);
    dbuild b;
    memset(&b, 0, sizeof b);
    b.p = p;
    b.mark = calloc(p->n, sizeof *b.mark);
    b.stack = malloc(2 * (size_t)p->n * sizeof *b.stack + 8);
    b.cur = malloc(((size_t)p->n + 1) * sizeof *b.cur);
    b.capstates = 64;
    b.off = calloc(b.capstates + 1, sizeof *b.off);
    b.tcap = 1;
    while (b.tcap < 2 * max_states + 2)
        b.tcap <<= 1;
    b.table = calloc(b.tcap, sizeof *b.table);
    gm_status st = GM_OK;
    if (!d || !b.mark || !b.stack || !b.cur || !b.off || !b.table) {
        st = GM_ERR_NOMEM;
        goto done;
    }
    /* Byte classes: bytes no SET of the program tells apart. */
    memset(d->cls, 0, sizeof d->cls);
    d->ncls = 1;
    for (uint32_t s = 0; s < p->nsets; s++) {
        uint32_t map[512];
        memset(map, 0xff, sizeof map);
        uint32_t nc = 0;
        for (unsigned c = 0; c < 256; c++) {
            uint32_t key = (uint32_t)d->cls[c] * 2 + set_has(&p->sets[s], c);
            if (map[key] == UINT32_MAX)
                map[key] = nc++;
            d->cls[c] = (uint8_t)map[key];
        }
        d->ncls = nc;
    }
    uint8_t rep[256];
    for (int c = 255; c >= 0; c--)
        rep[d->cls[c]] = (uint8_t)c;
    /* State 0: a match was found (the set {n}, no state of the program, stands for it). */
    b.cur[0] = p->n;
    b.ncur = 1;
    b.nstates = 0;
    intern(&b);
    b.stamp++;
    b.ncur = 0;
    b.match = false;
    dclose(&b, 0, true, false);
    uint32_t start = b.match ? 0 : intern(&b);
    if (start == UINT32_MAX) {
        st = GM_ERR_NOMEM;
        goto done;
    }
    size_t cap_trans = 64 * (size_t)d->ncls;
    d->trans = malloc(cap_trans * sizeof *d->trans);
    if (!d->trans) {
        st = GM_ERR_NOMEM;
        goto done;
    }
    for (uint32_t s = 0; s < b.nstates; s++) {
        if ((size_t)(s + 1) * d->ncls > cap_trans) {
            cap_trans *= 2;
            uint32_t *nt = realloc(d->trans, cap_trans * sizeof *nt);
            if (!nt) {
                st = GM_ERR_NOMEM;
                goto done;
            }
            d->trans = nt;
        }
        for (uint32_t c = 0; c < d->ncls; c++) {
            uint32_t to = 0;
            if (s != 0) {
                b.stamp++;
                b.ncur = 0;
                b.match = false;
                for (size_t i = b.off[s]; i < b.off[s + 1]; i++) {
                    uint32_t q = b.pool[i];
                    if (p->code[q].op == OP_SET && set_has(&p->sets[p->code[q].x], rep[c]))
                        dclose(&b, q + 1, false, false);
                }
                dclose(&b, 0, false, false); /* regex_search: a new try at this offset */
                to = b.match ? 0 : intern(&b);
                if (to == UINT32_MAX) {
                    st = GM_ERR_NOMEM;
                    goto done;
                }
                if (b.nstates > max_states) {
                    char msg[sizeof err->message];
                    snprintf(msg, sizeof msg,
                             "trigger pattern \"%.100s\": its match automaton needs more than %u "
                             "states",
                             pattern, max_states);
                    set_err(err, GM_ERR_LIMIT, msg);
                    st = GM_ERR_LIMIT;
                    goto done;
                }
            }
            d->trans[(size_t)s * d->ncls + c] = to;
        }
    }
    d->n = b.nstates;
    d->start = start;
    d->found = calloc(d->n, sizeof *d->found);
    if (!d->found) {
        st = GM_ERR_NOMEM;
        goto done;
    }
    d->found[0] = true;
    for (uint32_t s = 1; s < d->n; s++) { /* $ passes at the end of the text */
        b.stamp++;
        b.ncur = 0;
        b.match = false;
        for (size_t i = b.off[s]; i < b.off[s + 1]; i++) {
            uint32_t q = b.pool[i];
            if (p->code[q].op == OP_EOL)
                dclose(&b, q + 1, s == start, true);
        }
        d->found[s] = b.match;
    }
done:
    if (st == GM_ERR_NOMEM)
        set_err(err, st, "out of memory building a trigger pattern's automaton");
    free(b.mark);
    free(b.stack);
    free(b.cur);
    free(b.pool);
    free(b.off);
    free(b.table);
    if (st != GM_OK) {
        er_dfa_free(d);
        return st;
    }
    *out = d;
    return GM_OK;
}

void er_dfa_free(er_dfa *d)
{
    if (!d)
        return;
    free(d->trans);
    free(d->found);
    free(d);
}

uint32_t er_dfa_start(const er_dfa *d) { return d->start; }
uint32_t er_dfa_states(const er_dfa *d) { return d->n; }
uint32_t er_dfa_next(const er_dfa *d, uint32_t state, uint8_t byte)
{
    return d->trans[(size_t)state * d->ncls + d->cls[byte]];
}
bool er_dfa_found(const er_dfa *d, uint32_t state) { return d->found[state]; }

/* ---- Pike VM: where the match is (note [priority]) ------------------------- */

typedef struct tlist {
    uint32_t n;
    uint32_t *pc;
    int64_t *caps; /* n * ncap */
} tlist;

struct er_pike {
    const er_prog *p;
    bool full;
    size_t pos;
    tlist cl, nl;
    uint32_t *mark, stamp;
    int64_t *tmp;     /* captures of the thread being added */
    bool has_match;   /* regex_search: a match ended before pos (lower threads cut) */
    int64_t *mcaps;
    int64_t *rcaps;   /* the result of er_pike_result */
};

static bool tlist_init(tlist *l, const er_prog *p)
{
    l->n = 0;
    l->pc = malloc(((size_t)p->n + 1) * sizeof *l->pc);
    l->caps = malloc(((size_t)p->n + 1) * p->ncap * sizeof *l->caps);
    return l->pc && l->caps;
}

/* Adds pc's closure at offset pos to l in priority order (captures in k->tmp). */
static void add_thread(er_pike *k, tlist *l, uint32_t pc, size_t pos, bool bol)
{
    if (k->mark[pc] == k->stamp)
        return;
    k->mark[pc] = k->stamp;
    const er_inst *in = &k->p->code[pc];
    switch (in->op) {
    case OP_JMP:
        add_thread(k, l, in->x, pos, bol);
        return;
    case OP_SPLIT:
        add_thread(k, l, in->x, pos, bol);
        add_thread(k, l, in->y, pos, bol);
        return;
    case OP_SAVE: {
        int64_t old = k->tmp[in->x];
        k->tmp[in->x] = (int64_t)pos;
        add_thread(k, l, pc + 1, pos, bol);
        k->tmp[in->x] = old;
        return;
    }
    case OP_BOL:
        if (bol)
            add_thread(k, l, pc + 1, pos, bol);
        return;
    default: /* SET, EOL (waits for the end), MATCH */
        l->pc[l->n] = pc;
        memcpy(l->caps + (size_t)l->n * k->p->ncap, k->tmp, k->p->ncap * sizeof *k->tmp);
        l->n++;
        return;
    }
}

/* The first path from pc at the end of the text (offset pos) to MATCH; its captures in rcaps. */
static bool end_path(er_pike *k, uint32_t pc, size_t pos, bool bol)
{
    if (k->mark[pc] == k->stamp)
        return false;
    k->mark[pc] = k->stamp;
    const er_inst *in = &k->p->code[pc];
    switch (in->op) {
    case OP_JMP:
        return end_path(k, in->x, pos, bol);
    case OP_SPLIT:
        return end_path(k, in->x, pos, bol) || end_path(k, in->y, pos, bol);
    case OP_SAVE: {
        int64_t old = k->tmp[in->x];
        k->tmp[in->x] = (int64_t)pos;
        bool r = end_path(k, pc + 1, pos, bol);
        k->tmp[in->x] = old;
        return r;
    }
    case OP_BOL:
        return bol && end_path(k, pc + 1, pos, bol);
    case OP_EOL:
        return end_path(k, pc + 1, pos, bol);
    case OP_MATCH:
        memcpy(k->rcaps, k->tmp, k->p->ncap * sizeof *k->tmp);
        return true;
    default:
        return false;
    }
}

er_pike *er_pike_create(const er_prog *p, bool full)
{
    er_pike *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->p = p;
    k->full = full;
    k->mark = calloc(p->n, sizeof *k->mark);
    k->tmp = malloc(p->ncap * sizeof *k->tmp);
    k->mcaps = malloc(p->ncap * sizeof *k->mcaps);
    k->rcaps = malloc(p->ncap * sizeof *k->rcaps);
    if (!tlist_init(&k->cl, p) || !tlist_init(&k->nl, p) || !k->mark || !k->tmp || !k->mcaps ||
        !k->rcaps) {
        er_pike_free(k);
        return NULL;
    }
    er_pike_reset(k);
    return k;
}

void er_pike_free(er_pike *k)
{
    if (!k)
        return;
    free(k->cl.pc);
    free(k->cl.caps);
    free(k->nl.pc);
    free(k->nl.caps);
    free(k->mark);
    free(k->tmp);
    free(k->mcaps);
    free(k->rcaps);
    free(k);
}

static void clear_tmp(er_pike *k)
{
    for (uint32_t i = 0; i < k->p->ncap; i++)
        k->tmp[i] = -1;
}

void er_pike_reset(er_pike *k)
{
    k->pos = 0;
    k->has_match = false;
    k->cl.n = 0;
    k->stamp++;
    clear_tmp(k);
    add_thread(k, &k->cl, 0, 0, true);
}

void er_pike_copy(er_pike *dst, const er_pike *src)
{
    uint32_t nc = src->p->ncap;
    dst->pos = src->pos;
    dst->has_match = src->has_match;
    memcpy(dst->mcaps, src->mcaps, nc * sizeof *dst->mcaps);
    dst->cl.n = src->cl.n;
    memcpy(dst->cl.pc, src->cl.pc, src->cl.n * sizeof *dst->cl.pc);
    memcpy(dst->cl.caps, src->cl.caps, (size_t)src->cl.n * nc * sizeof *dst->cl.caps);
}

void er_pike_feed(er_pike *k, const uint8_t *bytes, size_t n)
{
    uint32_t nc = k->p->ncap;
    for (size_t i = 0; i < n; i++) {
        if (k->cl.n == 0 && (k->full || k->has_match)) { /* nothing can change any more */
            k->pos += n - i;
            return;
        }
        uint8_t b = bytes[i];
        k->nl.n = 0;
        k->stamp++;
        for (uint32_t t = 0; t < k->cl.n; t++) {
            const er_inst *in = &k->p->code[k->cl.pc[t]];
            if (in->op == OP_SET) {
                if (set_has(&k->p->sets[in->x], b)) {
                    memcpy(k->tmp, k->cl.caps + (size_t)t * nc, nc * sizeof *k->tmp);
                    add_thread(k, &k->nl, k->cl.pc[t] + 1, k->pos + 1, false);
                }
            } else if (in->op == OP_MATCH && !k->full) {
                /* A match ends here: the threads after this one are tried after it, never needed. */
                k->has_match = true;
                memcpy(k->mcaps, k->cl.caps + (size_t)t * nc, nc * sizeof *k->mcaps);
                break;
            } /* EOL: the text goes on; a MATCH in regex_match's mode: not at the end */
        }
        if (!k->full && !k->has_match) {
            clear_tmp(k);
            add_thread(k, &k->nl, 0, k->pos + 1, false);
        }
        tlist t = k->cl;
        k->cl = k->nl;
        k->nl = t;
        k->pos++;
    }
}

bool er_pike_result(er_pike *k, size_t *start)
{
    uint32_t nc = k->p->ncap;
    bool bol = k->pos == 0, found = false;
    k->stamp++;
    for (uint32_t t = 0; t < k->cl.n && !found; t++) {
        uint32_t pc = k->cl.pc[t];
        uint8_t op = k->p->code[pc].op;
        memcpy(k->tmp, k->cl.caps + (size_t)t * nc, nc * sizeof *k->tmp);
        if (op == OP_MATCH) {
            memcpy(k->rcaps, k->tmp, nc * sizeof *k->tmp);
            found = true;
        } else if (op == OP_EOL) {
            found = end_path(k, pc + 1, k->pos, bol);
        }
    }
    if (!found && k->has_match) {
        memcpy(k->rcaps, k->mcaps, nc * sizeof *k->mcaps);
        found = true;
    }
    if (!found)
        return false;
    /* llama_grammar_trigger_pattern::find: the first group that matched non-empty text */
    *start = (size_t)k->rcaps[0];
    for (uint32_t g = 1; 2 * g + 1 < nc; g++) {
        int64_t s = k->rcaps[2 * g], e = k->rcaps[2 * g + 1];
        if (s >= 0 && e > s) {
            *start = (size_t)s;
            break;
        }
    }
    return true;
}

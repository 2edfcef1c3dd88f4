/* Exact decimal numbers read from JSON number lexemes (decimal.h). */
#include "schema/decimal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gm_dec_zero(gm_dec *out)
{
    out->neg = false;
    out->nd = 0;
    out->exp = 0;
}

int gm_dec_parse(gm_dec *out, const char *s, size_t len)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && s[i] == '-') {
        neg = true;
        i++;
    }
    size_t i0 = i;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++;
    size_t i1 = i;
    if (i1 == i0 || (s[i0] == '0' && i1 - i0 > 1))
        return -1;
    size_t f0 = i, f1 = i;
    if (i < len && s[i] == '.') {
        f0 = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        f1 = i;
        if (f1 == f0)
            return -1;
    }
    int64_t e = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i >= len || s[i] < '0' || s[i] > '9')
            return -1;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            e = e * 10 + (s[i] - '0');
            if (e > 10 * (int64_t)GM_DEC_MAX_EXP)
                return -1;
        }
        if (eneg)
            e = -e;
    }
    if (i != len)
        return -1;
    /* The mantissa's digits D = integer digits then fraction digits; the point
       sits after ni of them. Significant digits: first to last nonzero. */
    size_t ni = i1 - i0, nf = f1 - f0, n = ni + nf;
#define DIGIT(k) ((k) < ni ? s[i0 + (k)] : s[f0 + (k) - ni])
    size_t p = 0;
    while (p < n && DIGIT(p) == '0')
        p++;
    if (p == n) {
        gm_dec_zero(out);
        return 0;
    }
    size_t q = n - 1;
    while (DIGIT(q) == '0')
        q--;
    if (q - p + 1 > GM_DEC_MAX_DIGITS)
        return -1;
    for (size_t k = p; k <= q; k++)
        out->d[k - p] = DIGIT(k);
#undef DIGIT
    out->nd = (uint32_t)(q - p + 1);
    int64_t exp = (int64_t)ni - 1 - (int64_t)q + e;
    if (exp + (int64_t)out->nd > GM_DEC_MAX_EXP || exp < -(int64_t)GM_DEC_MAX_EXP)
        return -1;
    out->exp = (int32_t)exp;
    out->neg = neg;
    return 0;
}

void gm_dec_from_int(gm_dec *out, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    gm_dec_parse(out, buf, strlen(buf));
}

/* Compares |a| and |b|. */
static int cmp_abs(const gm_dec *a, const gm_dec *b)
{
    if (!a->nd || !b->nd)
        return (a->nd != 0) - (b->nd != 0);
    /* Position of the leading digit: nd + exp. */
    int64_t la = (int64_t)a->nd + a->exp, lb = (int64_t)b->nd + b->exp;
    if (la != lb)
        return la < lb ? -1 : 1;
    uint32_t n = a->nd > b->nd ? a->nd : b->nd;
    for (uint32_t i = 0; i < n; i++) {
        char x = i < a->nd ? a->d[i] : '0', y = i < b->nd ? b->d[i] : '0';
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

int gm_dec_cmp(const gm_dec *a, const gm_dec *b)
{
    if (a->neg != b->neg)
        return a->neg ? -1 : 1;
    int c = cmp_abs(a, b);
    return a->neg ? -c : c;
}

bool gm_dec_is_integer(const gm_dec *a)
{
    return a->nd == 0 || a->exp >= 0;
}

int gm_dec_int_digits(const gm_dec *a, char *buf, size_t cap)
{
    int64_t lead = (int64_t)a->nd + a->exp; /* digits before the point */
    if (!a->nd || lead <= 0) {
        if (cap < 2)
            return -1;
        strcpy(buf, "0");
        return 0;
    }
    if ((size_t)lead + 1 > cap)
        return -1;
    for (int64_t i = 0; i < lead; i++)
        buf[i] = i < (int64_t)a->nd ? a->d[i] : '0';
    buf[lead] = 0;
    return 0;
}

int gm_dec_frac_digits(const gm_dec *a, char *buf, size_t cap)
{
    if (!a->nd || a->exp >= 0) {
        if (cap < 1)
            return -1;
        buf[0] = 0;
        return 0;
    }
    int64_t lead = (int64_t)a->nd + a->exp;
    size_t n = (size_t)(-(int64_t)a->exp); /* fraction digits */
    if (n + 1 > cap)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int64_t k = lead + (int64_t)i; /* index into d */
        buf[i] = k >= 0 ? a->d[k] : '0';
    }
    buf[n] = 0;
    return 0;
}

int gm_dec_format(const gm_dec *a, char *buf, size_t cap)
{
    size_t n = 0;
    if (a->neg) {
        if (cap < 2)
            return -1;
        buf[n++] = '-';
    }
    if (gm_dec_int_digits(a, buf + n, cap - n))
        return -1;
    n += strlen(buf + n);
    if (a->nd && a->exp < 0) {
        if (n + 2 > cap)
            return -1;
        buf[n++] = '.';
        if (gm_dec_frac_digits(a, buf + n, cap - n))
            return -1;
    }
    return 0;
}

int gm_dec_is_multiple(const gm_dec *a, const gm_dec *m)
{
    if (!m->nd || m->neg)
        return -1;
    if (!a->nd)
        return 1;
    int64_t e = (int64_t)a->exp - m->exp;
    if (e < 0)
        return 0; /* a's last nonzero digit is below m's scale */
    if (m->nd > 18)
        return -1;
    uint64_t M = 0;
    for (uint32_t i = 0; i < m->nd; i++)
        M = M * 10 + (uint64_t)(m->d[i] - '0');
    unsigned __int128 r = 0;
    for (uint32_t i = 0; i < a->nd; i++)
        r = (r * 10 + (unsigned)(a->d[i] - '0')) % M;
    /* times 10^e mod M, by squaring */
    unsigned __int128 base = 10 % M, p = 1 % M;
    for (int64_t k = e; k > 0; k >>= 1) {
        if (k & 1)
            p = p * base % M;
        base = base * base % M;
    }
    return (r * p) % M == 0;
}

double gm_dec_to_double(const gm_dec *a)
{
    char buf[GM_DEC_MAX_DIGITS + 32];
    if (!a->nd)
        return 0.0;
    snprintf(buf, sizeof buf, "%s%.*se%d", a->neg ? "-" : "", (int)a->nd, a->d, (int)a->exp);
    return strtod(buf, NULL);
}

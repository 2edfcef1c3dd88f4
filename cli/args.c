/* Reporting a bad command line the same way in every subcommand (cli.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int gm_cli_bad_arg(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gramask %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* the synopsis: the usage's first line */
    int n = (int)strcspn(usage, "\n");
    fprintf(stderr, "\nusage: gramask %s %.*s\n(gramask %s --help for details)\n", cmd, n, usage,
            cmd);
    return 2;
}

/* The option of tables named `a` (up to its '=' when it has one), or NULL. */
static const gm_cli_opt *find_opt(const gm_cli_opt *const *tables, const char *a, size_t n)
{
    for (size_t t = 0; tables[t]; t++)
        for (const gm_cli_opt *o = tables[t]; o->name; o++)
            if (strlen(o->name) == n && !strncmp(o->name, a, n))
                return o;
    return NULL;
}

/* Whether s is a decimal number: the value an optional-value option takes from the next argument. */
static bool is_number(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

void gm_cli_args_init(gm_cli_args *p, const char *cmd, const char *usage, int argc, char **argv,
                      const gm_cli_opt *const *tables)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->usage = usage;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
    p->tables = tables;
}

int gm_cli_args_next(gm_cli_args *p)
{
    p->opt = NULL;
    p->value = NULL;
    if (p->i >= p->argc)
        return 0;
    char *a = p->argv[p->i++];
    if (!p->operands_only && !strcmp(a, "--")) {
        p->operands_only = true;
        return gm_cli_args_next(p);
    }
    if (p->operands_only || a[0] != '-' || !a[1]) {
        p->value = a;
        return 1;
    }
    const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    const gm_cli_opt *o = find_opt(p->tables, a, n);
    if (!o) {
        if (p->dash_operands && a[1] != '-') {
            p->value = a; /* a regex such as -?[0-9]+ */
            return 1;
        }
        return gm_cli_bad_arg(p->cmd, p->usage, "unknown option '%.*s'", (int)n, a);
    }
    p->opt = o->name;
    if (eq) {
        if (o->arg == GM_CLI_NO_ARG)
            return gm_cli_bad_arg(p->cmd, p->usage, "%s takes no value (given '%s')", o->name,
                                  eq + 1);
        p->value = eq + 1;
    } else if (o->arg == GM_CLI_ARG) {
        if (p->i >= p->argc)
            return gm_cli_bad_arg(p->cmd, p->usage, "%s needs a value", o->name);
        p->value = p->argv[p->i++];
    } else if (o->arg == GM_CLI_OPT_ARG && p->i < p->argc && is_number(p->argv[p->i])) {
        p->value = p->argv[p->i++];
    }
    return 1;
}

bool gm_cli_is(const gm_cli_args *p, const char *name)
{
    return p->opt && !strcmp(p->opt, name);
}

int gm_cli_args_bad_value(const gm_cli_args *p, const char *why)
{
    if (why)
        return gm_cli_bad_arg(p->cmd, p->usage, "%s '%s': %s", p->opt, p->value ? p->value : "",
                              why);
    return gm_cli_bad_arg(p->cmd, p->usage, "bad value '%s' for %s", p->value ? p->value : "",
                          p->opt);
}

int gm_cli_args_unexpected(const gm_cli_args *p)
{
    if (p->opt)
        return gm_cli_bad_arg(p->cmd, p->usage, "%s is not an option of gramask %s", p->opt,
                              p->cmd);
    return gm_cli_bad_arg(p->cmd, p->usage, "unexpected argument '%s'", p->value);
}

int gm_cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

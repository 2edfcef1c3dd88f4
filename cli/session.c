/* Shared plumbing of the decoding commands. */
#include "cli/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/bitset.h"
#include "base/file.h"
#include "parser/bundled.h"
#include "parser/grammar.h"
#include "dispatch/tools.h"
#include "cli/cli.h"

static double ms_since(uint64_t t0) { return (double)(gm_clock_ns() - t0) / 1e6; }

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

bool gm_cli_is_bundled(const char *arg)
{
    static const char *const files[] = {".lark", ".gbnf", ".ebnf", ".regex", ".gmc", ".json"};
    if (strchr(arg, '/'))
        return false;
    for (size_t k = 0; k < sizeof files / sizeof *files; k++)
        if (has_suffix(arg, files[k]))
            return false;
    /* a bundled name wins over a directory of that name (python/, the package's folder
       in the checkout): a directory is no grammar; a plain file of that name is taken */
    struct stat sb;
    if (stat(arg, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return false;
    size_t len;
    return gm_bundled_grammar(arg, &len) != NULL || access(arg, F_OK) != 0;
}

/* One line on stderr when a name that is also a directory here was taken as the bundled grammar. */
static void say_bundled(const char *cmd, const char *arg)
{
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode))
        fprintf(stderr, "gramask %s: '%s' is the bundled grammar %s (not the directory %s/; "
                        "write ./%s/FILE for a file there)\n", cmd, arg, arg, arg, arg);
}

void gm_cli_load_options_init(gm_cli_load_options *lo)
{
    memset(lo, 0, sizeof *lo);
    lo->parallel = -1;
}

/* --tool-choice auto|required|none|NAME */
static void tool_choice(gm_cli_load_options *lo, const char *v)
{
    lo->tool_name = NULL;
    if (!strcmp(v, "auto"))
        lo->tool_choice = GM_TOOL_CHOICE_AUTO;
    else if (!strcmp(v, "required"))
        lo->tool_choice = GM_TOOL_CHOICE_REQUIRED;
    else if (!strcmp(v, "none"))
        lo->tool_choice = GM_TOOL_CHOICE_NONE;
    else {
        lo->tool_choice = GM_TOOL_CHOICE_NAMED;
        lo->tool_name = v;
    }
}

const gm_cli_opt gm_cli_grammar_opts[] = {
    {"--tokenizer", GM_CLI_ARG},   {"--eos", GM_CLI_ARG},         {"--format", GM_CLI_ARG},
    {"--structural-tag", GM_CLI_ARG}, {"--tools", GM_CLI_ARG},   {"--code-blocks", GM_CLI_ARG},
    {"--tool-choice", GM_CLI_ARG}, {"--parallel", GM_CLI_NO_ARG}, {"--no-parallel", GM_CLI_NO_ARG},
    {"--reasoning", GM_CLI_ARG},   {"--start", GM_CLI_ARG},       {"--schema", GM_CLI_ARG},
    {"--eager", GM_CLI_NO_ARG},    {"--quiet", GM_CLI_NO_ARG},    {"-q", GM_CLI_NO_ARG},
    {"--conflicts", GM_CLI_ARG},   {"--lark", GM_CLI_NO_ARG},     {"--lexer", GM_CLI_ARG},
    {"--model-vocab-size", GM_CLI_ARG}, {"--max-dfa-states", GM_CLI_ARG}, {NULL, GM_CLI_NO_ARG},
};

int gm_cli_format_named(const char *v, gm_grammar_format *out)
{
    static const struct {
        const char *name;
        gm_grammar_format format;
    } formats[] = {{"lark", GM_FORMAT_LARK},
                   {"gbnf", GM_FORMAT_GBNF},
                   {"ebnf", GM_FORMAT_EBNF},
                   {"regex", GM_FORMAT_REGEX}};
    for (size_t k = 0; k < sizeof formats / sizeof *formats; k++)
        if (!strcmp(formats[k].name, v)) {
            *out = formats[k].format;
            return 0;
        }
    return -1;
}

gm_grammar_format gm_cli_format_of(const char *path, gm_grammar_format given)
{
    if (given != GM_FORMAT_AUTO)
        return given;
    const char *dot = strrchr(path, '.');
    if (dot && !strcmp(dot, ".gbnf"))
        return GM_FORMAT_GBNF;
    if (dot && !strcmp(dot, ".ebnf"))
        return GM_FORMAT_EBNF;
    if (dot && !strcmp(dot, ".regex"))
        return GM_FORMAT_REGEX;
    return GM_FORMAT_LARK;
}

int gm_cli_conflicts_named(const char *v, gm_conflicts *out)
{
    if (!strcmp(v, "lark"))
        *out = GM_CONFLICTS_LARK;
    else if (!strcmp(v, "error"))
        *out = GM_CONFLICTS_ERROR;
    else
        return -1;
    return 0;
}

int gm_cli_lexer_named(const char *v, gm_lexer_kind *out)
{
    if (!strcmp(v, "basic"))
        *out = GM_LEXER_BASIC;
    else if (!strcmp(v, "contextual"))
        *out = GM_LEXER_CONTEXTUAL;
    else
        return -1;
    return 0;
}

int gm_cli_grammar_arg(gm_cli_load_options *lo, const gm_cli_args *p)
{
    const char *v = p->value;
    if (!p->opt) {
        if (lo->grammar || lo->tools || lo->structural_tag || lo->code_blocks)
            return 0;
        lo->grammar = v;
    } else if (gm_cli_is(p, "--tokenizer")) {
        lo->tokenizer = v;
    } else if (gm_cli_is(p, "--eos")) {
        if (lo->neos == sizeof lo->eos / sizeof *lo->eos)
            return gm_cli_bad_arg(p->cmd, p->usage, "more than %zu --eos tokens",
                                  sizeof lo->eos / sizeof *lo->eos);
        lo->eos[lo->neos++] = v;
    } else if (gm_cli_is(p, "--format")) {
        if (gm_cli_format_named(v, &lo->format) == 0)
            ;
        else if (gm_tool_format_named(v))
            lo->tool_format = gm_tool_format_named(v);
        else
            return gm_cli_args_bad_value(p, "the grammar formats are lark, gbnf, ebnf and regex; "
                                            "the tool formats (with --tools) llama, llama-json, "
                                            "qwen and harmony");
    } else if (gm_cli_is(p, "--structural-tag") || gm_cli_is(p, "--tools")) {
        *(p->opt[2] == 's' ? &lo->structural_tag : &lo->tools) = v;
    } else if (gm_cli_is(p, "--code-blocks")) {
        if (lo->grammar)
            return gm_cli_bad_arg(p->cmd, p->usage, "--code-blocks and GRAMMAR '%s' exclude each "
                                  "other", lo->grammar);
        lo->code_blocks = v;
    } else if (gm_cli_is(p, "--tool-choice")) {
        tool_choice(lo, v);
    } else if (gm_cli_is(p, "--parallel") || gm_cli_is(p, "--no-parallel")) {
        lo->parallel = p->opt[2] == 'p';
    } else if (gm_cli_is(p, "--reasoning")) {
        if (!strcmp(v, "allowed"))
            lo->reasoning = GM_REASONING_ALLOWED;
        else if (!strcmp(v, "forced"))
            lo->reasoning = GM_REASONING_FORCED;
        else if (!strcmp(v, "forbidden"))
            lo->reasoning = GM_REASONING_FORBIDDEN;
        else
            return gm_cli_args_bad_value(p, "allowed, forced or forbidden");
    } else if (gm_cli_is(p, "--start")) {
        lo->start = v;
    } else if (gm_cli_is(p, "--schema")) {
        if (lo->grammar)
            return gm_cli_bad_arg(p->cmd, p->usage, "--schema and GRAMMAR '%s' exclude each other",
                                  lo->grammar);
        lo->grammar = v;
        lo->schema = true;
    } else if (gm_cli_is(p, "--eager")) {
        lo->eager = true;
    } else if (gm_cli_is(p, "--quiet") || gm_cli_is(p, "-q")) {
        lo->quiet = true;
    } else if (gm_cli_is(p, "--lark")) {
        lo->conflicts = GM_CONFLICTS_LARK;
    } else if (gm_cli_is(p, "--conflicts")) {
        if (gm_cli_conflicts_named(v, &lo->conflicts))
            return gm_cli_args_bad_value(p, "error or lark");
    } else if (gm_cli_is(p, "--lexer")) {
        if (gm_cli_lexer_named(v, &lo->lexer))
            return gm_cli_args_bad_value(p, "basic or contextual");
    } else if (gm_cli_is(p, "--max-dfa-states")) {
        uint64_t n;
        if (gm_cli_parse_u64(v, &n) || n == 0 || n > UINT32_MAX)
            return gm_cli_args_bad_value(p, "a number of states");
        lo->max_dfa_states = (uint32_t)n;
    } else if (gm_cli_is(p, "--model-vocab-size")) {
        uint64_t n;
        if (gm_cli_parse_u64(v, &n) || n > UINT32_MAX)
            return gm_cli_args_bad_value(p, "not a number of token ids");
        lo->model_vocab_size = (uint32_t)n;
    } else {
        int r = gm_cli_schema_option(p, &lo->schema_opts);
        return r == 2 ? 2 : r;
    }
    return 1;
}

gm_status gm_cli_load_cfg(gm_mem *m, const char *arg, const gm_grammar_options *opts,
                          struct gm_cfg **out, gm_error *err)
{
    if (!gm_cli_is_bundled(arg))
        return gm_grammar_load_file(m, arg, opts, out, err);
    say_bundled("grammar", arg);
    size_t len;
    const char *text = gm_bundled_grammar(arg, &len);
    if (!text)
        return gm_error_set(err, GM_ERR_IO, "%s is neither a file nor a bundled grammar", arg);
    char label[96];
    snprintf(label, sizeof label, "<bundled>/%s.lark", arg);
    return gm_grammar_load(m, label, text, len, opts, out, err);
}

/* The whole of a JSON file (tools, structural tag), for the constructors that take text. */
static gm_status read_text(gm_mem *m, const char *path, char **text, size_t *len, gm_error *err)
{
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    return gm_file_read(m, path, lim.max_input_bytes, text, len, err);
}

/* --code-blocks LANG,LANG,...: Markdown with code blocks in those languages. */
static gm_status code_blocks_grammar(const char *list, gm_grammar **out, gm_error *err)
{
    char buf[256];
    const char *langs[16];
    size_t n = 0;
    if (strlen(list) >= sizeof buf)
        return gm_error_set(err, GM_ERR_ARGUMENT, "--code-blocks: list too long");
    strcpy(buf, list);
    for (char *p = buf; p; ) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (n == sizeof langs / sizeof *langs)
            return gm_error_set(err, GM_ERR_ARGUMENT, "--code-blocks: more than 16 languages");
        langs[n++] = p;
        p = comma ? comma + 1 : NULL;
    }
    return gm_grammar_from_code_blocks(langs, n, NULL, out, err);
}

void gm_cli_tools_options(const gm_cli_load_options *lo, gm_tools_options *to)
{
    gm_tools_options_init_defaults(to);
    to->format = lo->tool_format;
    to->tool_choice = lo->tool_choice;
    to->tool_name = lo->tool_name;
    to->parallel = lo->parallel;
    to->reasoning = lo->reasoning;
}

/* The grammar the options name: GRAMMAR, --schema, --structural-tag, --tools or --code-blocks. */
static gm_status make_grammar(const gm_cli_load_options *opts, gm_grammar **out, gm_error *err)
{
    if (opts->schema) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        char *text;
        size_t len;
        gm_schema_options so = opts->schema_opts;
        gm_status st = read_text(&m, opts->grammar, &text, &len, err);
        if (st != GM_OK)
            return st;
        st = gm_grammar_from_json_schema(text, len, &so, out, err);
        if (st != GM_OK && !err->file[0])
            gm_error_prefix(err, "%s", opts->grammar);
        gm_mem_free(&m, text);
        return st;
    }
    if (opts->code_blocks)
        return code_blocks_grammar(opts->code_blocks, out, err);
    if (opts->structural_tag || opts->tools) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        char *text;
        size_t len;
        const char *path = opts->tools ? opts->tools : opts->structural_tag;
        gm_status st = read_text(&m, path, &text, &len, err);
        if (st != GM_OK)
            return st;
        if (opts->tools) {
            gm_tools_options to;
            gm_cli_tools_options(opts, &to);
            st = gm_grammar_from_tools(text, len, &to, out, err);
        } else {
            st = gm_grammar_from_structural_tag(text, len, NULL, out, err);
        }
        if (st != GM_OK && !err->file[0])
            gm_error_prefix(err, "%s", path);
        gm_mem_free(&m, text);
        return st;
    }
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.conflicts = opts->conflicts;
    go.lexer = opts->lexer;
    go.format = opts->format;
    go.start = opts->start;
    go.limits.max_dfa_states = opts->max_dfa_states;
    if (gm_cli_is_bundled(opts->grammar) && opts->format == GM_FORMAT_AUTO)
        return gm_grammar_create_bundled(opts->grammar, &go, out, err);
    return gm_grammar_create_from_file(opts->grammar, &go, out, err);
}

int gm_cli_session_open(const char *cmd, const gm_cli_load_options *opts, gm_cli_session *s)
{
    memset(s, 0, sizeof *s);
    gm_error err;
    gm_compile_options co;
    gm_compile_options_init_defaults(&co);
    co.eager = opts->eager;
    gm_cli_progress progress = {.cmd = cmd, .what = "building token tables"};
    if (gm_cli_progress_wanted(opts->quiet)) {
        co.progress = gm_cli_progress_fn;
        co.progress_ud = &progress;
    }
    if (opts->tools && !opts->tool_format) {
        fprintf(stderr, "gramask %s: --tools needs --format llama|llama-json|qwen|harmony|FAMILY "
                        "(gramask tools --help lists the families)\n", cmd);
        return 2;
    }
    gm_vocab_options vo;
    gm_vocab_options_init_defaults(&vo);
    vo.model_vocab_size = opts->model_vocab_size;
    if (opts->grammar && has_suffix(opts->grammar, ".gmc")) {
        uint64_t t0 = gm_clock_ns();
        if (gm_compiled_load(opts->grammar, &co, &s->compiled, &err) != GM_OK)
            return gm_cli_fail(cmd, &err);
        s->compile_ms = ms_since(t0);
        s->vocab = gm_vocab_retain((gm_vocab *)gm_compiled_vocab(s->compiled));
        if (opts->neos) {
            fprintf(stderr, "gramask %s: --eos cannot change %s: its stop tokens were compiled "
                            "in (give --eos to gramask compile)\n", cmd, opts->grammar);
            gm_cli_session_close(s);
            return 2;
        }
        if (!opts->tokenizer)
            return 0;
        /* --tokenizer beside a .gmc: it must be the vocabulary compiled in; it then
           encodes --text (a .gmc holds the tokens, not the encoder) */
        gm_vocab *t;
        int rc = gm_cli_vocab_open(cmd, opts->tokenizer, NULL, 0, &vo, &t);
        if (rc) {
            gm_cli_session_close(s);
            return rc;
        }
        char wbuf[160];
        const char *why = gm_cli_vocab_differs(s->vocab, t, wbuf, sizeof wbuf);
        if (why) {
            fprintf(stderr, "gramask %s: --tokenizer %s is not the tokenizer %s was compiled "
                            "for: %s\n", cmd, opts->tokenizer, opts->grammar, why);
            gm_vocab_destroy(t);
            gm_cli_session_close(s);
            return 1;
        }
        s->encoder = t;
        return 0;
    }
    if (!opts->tokenizer) {
        fprintf(stderr, "gramask %s: --tokenizer is required with a grammar (or give a .gmc file)\n",
                cmd);
        return 2;
    }
    uint64_t t0 = gm_clock_ns();
    int rc = gm_cli_vocab_open(cmd, opts->tokenizer, opts->eos, opts->neos, &vo, &s->vocab);
    if (rc)
        return rc;
    s->load_vocab_ms = ms_since(t0);
    t0 = gm_clock_ns();
    if (opts->grammar && !opts->schema && gm_cli_is_bundled(opts->grammar) &&
        opts->format == GM_FORMAT_AUTO)
        say_bundled(cmd, opts->grammar);
    gm_status st = make_grammar(opts, &s->grammar, &err);
    if (st != GM_OK) {
        gm_cli_session_close(s);
        return gm_cli_fail(cmd, &err);
    }
    s->load_grammar_ms = ms_since(t0);
    t0 = gm_clock_ns();
    if (gm_compiled_create(s->grammar, s->vocab, &co, &s->compiled, &err) != GM_OK) {
        gm_cli_session_close(s);
        return gm_cli_fail(cmd, &err);
    }
    s->compile_ms = ms_since(t0);
    return 0;
}

const char *gm_cli_vocab_differs(const gm_vocab *a, const gm_vocab *b, char *why, size_t cap)
{
    uint32_t na = gm_vocab_size(a), nb = gm_vocab_size(b);
    if (na != nb) {
        snprintf(why, cap, "it has %u ids, the compiled file %u", nb, na);
        return why;
    }
    for (uint32_t t = 0; t < na; t++) {
        size_t la, lb;
        const uint8_t *x = gm_vocab_token(a, t, &la), *y = gm_vocab_token(b, t, &lb);
        if (la != lb || (la && memcmp(x, y, la))) {
            snprintf(why, cap, "token %u differs", t);
            return why;
        }
    }
    return NULL;
}

void gm_cli_session_close(gm_cli_session *s)
{
    gm_vocab_destroy(s->encoder);
    gm_compiled_destroy(s->compiled);
    gm_grammar_destroy(s->grammar);
    gm_vocab_destroy(s->vocab);
    memset(s, 0, sizeof *s);
}

size_t gm_cli_mask_count(const uint32_t *mask, uint32_t nbits)
{
    return gm_count_bits32(mask, ((size_t)nbits + 31) / 32);
}


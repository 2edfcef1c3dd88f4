/* Shared plumbing of the decoding commands. */
#include "cli/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    static const char *const files[] = {".lark", ".gbnf", ".ebnf", ".regex", ".gmc"};
    if (access(arg, F_OK) == 0 || strchr(arg, '/'))
        return false;
    for (size_t k = 0; k < sizeof files / sizeof *files; k++)
        if (has_suffix(arg, files[k]))
            return false;
    return true;
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

int gm_cli_grammar_arg(gm_cli_load_options *lo, int argc, char **argv, int *i)
{
    static const struct {
        const char *name;
        gm_grammar_format format;
    } formats[] = {{"lark", GM_FORMAT_LARK},
                   {"gbnf", GM_FORMAT_GBNF},
                   {"ebnf", GM_FORMAT_EBNF},
                   {"regex", GM_FORMAT_REGEX}};
    const char *a = argv[*i];
    bool has_value = *i + 1 < argc;
    if (!strcmp(a, "--tokenizer")) {
        if (!has_value)
            return -1;
        lo->tokenizer = argv[++*i];
    } else if (!strcmp(a, "--format")) {
        if (!has_value)
            return -1;
        const char *f = argv[++*i];
        size_t k = 0;
        while (k < sizeof formats / sizeof *formats && strcmp(formats[k].name, f))
            k++;
        if (k < sizeof formats / sizeof *formats)
            lo->format = formats[k].format;
        else if (gm_tool_format_named(f))
            lo->tool_format = gm_tool_format_named(f);
        else
            return -1;
    } else if (!strcmp(a, "--structural-tag") || !strcmp(a, "--tools")) {
        if (!has_value)
            return -1;
        *(a[2] == 's' ? &lo->structural_tag : &lo->tools) = argv[++*i];
    } else if (!strcmp(a, "--code-blocks")) {
        if (!has_value || lo->grammar)
            return -1;
        lo->code_blocks = argv[++*i];
    } else if (!strcmp(a, "--tool-choice")) {
        if (!has_value)
            return -1;
        tool_choice(lo, argv[++*i]);
    } else if (!strcmp(a, "--parallel") || !strcmp(a, "--no-parallel")) {
        lo->parallel = a[2] == 'p';
    } else if (!strcmp(a, "--reasoning")) {
        if (!has_value)
            return -1;
        const char *r = argv[++*i];
        if (!strcmp(r, "allowed"))
            lo->reasoning = GM_REASONING_ALLOWED;
        else if (!strcmp(r, "forced"))
            lo->reasoning = GM_REASONING_FORCED;
        else if (!strcmp(r, "forbidden"))
            lo->reasoning = GM_REASONING_FORBIDDEN;
        else
            return -1;
    } else if (!strcmp(a, "--start")) {
        if (!has_value)
            return -1;
        lo->start = argv[++*i];
    } else if (!strncmp(a, "--start=", 8) && a[8]) {
        lo->start = a + 8; /* the spelling of gramask grammar and parse */
    } else if (!strcmp(a, "--schema")) {
        if (!has_value || lo->grammar)
            return -1;
        lo->grammar = argv[++*i];
        lo->schema = true;
    } else if (gm_cli_schema_option(a, &lo->schema_opts) != 0) {
        if (gm_cli_schema_option(a, &lo->schema_opts) < 0)
            return -1;
    } else if (!strcmp(a, "--eager")) {
        lo->eager = true;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
        lo->quiet = true;
    } else if (!strcmp(a, "--conflicts=lark") || !strcmp(a, "--lark")) {
        lo->conflicts = GM_CONFLICTS_LARK;
    } else if (!strcmp(a, "--lexer=basic") || !strcmp(a, "--lexer=contextual")) {
        lo->lexer = a[8] == 'c' ? GM_LEXER_CONTEXTUAL : GM_LEXER_BASIC;
    } else if (!strcmp(a, "--model-vocab-size")) {
        uint64_t n;
        if (!has_value || gm_cli_parse_u64(argv[++*i], &n) || n > UINT32_MAX)
            return -1;
        lo->model_vocab_size = (uint32_t)n;
    } else if (a[0] != '-' && !lo->grammar && !lo->tools && !lo->structural_tag &&
               !lo->code_blocks) {
        lo->grammar = a;
    } else {
        return 0;
    }
    return 1;
}

const char *gm_cli_grammar_arg_why(int argc, char **argv, int i, char *buf, size_t cap)
{
    const char *a = argv[i];
    if (i + 1 >= argc)
        snprintf(buf, cap, "%s needs a value", a);
    else if (!strcmp(a, "--format"))
        snprintf(buf, cap, "--format '%s': the grammar formats are lark, gbnf, ebnf and regex; "
                           "the tool formats (with --tools) llama, llama-json, qwen and harmony",
                 argv[i + 1]);
    else if (!strcmp(a, "--reasoning"))
        snprintf(buf, cap, "--reasoning '%s': allowed, forced or forbidden", argv[i + 1]);
    else if (!strcmp(a, "--model-vocab-size"))
        snprintf(buf, cap, "--model-vocab-size '%s': not a number of token ids", argv[i + 1]);
    else
        snprintf(buf, cap, "bad value '%s' for %s", argv[i + 1], a);
    return buf;
}

gm_status gm_cli_load_cfg(gm_mem *m, const char *arg, const gm_grammar_options *opts,
                          struct gm_cfg **out, gm_error *err)
{
    if (!gm_cli_is_bundled(arg))
        return gm_grammar_load_file(m, arg, opts, out, err);
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
            gm_tools_options_init_defaults(&to);
            to.format = opts->tool_format;
            to.tool_choice = opts->tool_choice;
            to.tool_name = opts->tool_name;
            to.parallel = opts->parallel;
            to.reasoning = opts->reasoning;
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
        fprintf(stderr, "gramask %s: --tools needs --format llama|llama-json|qwen|harmony\n", cmd);
        return 2;
    }
    if (opts->grammar && has_suffix(opts->grammar, ".gmc")) {
        uint64_t t0 = gm_clock_ns();
        if (gm_compiled_load(opts->grammar, &co, &s->compiled, &err) != GM_OK)
            return gm_cli_fail(cmd, &err);
        s->compile_ms = ms_since(t0);
        s->vocab = gm_vocab_retain((gm_vocab *)gm_compiled_vocab(s->compiled));
        return 0;
    }
    if (!opts->tokenizer) {
        fprintf(stderr, "gramask %s: --tokenizer is required with a grammar (or give a .gmc file)\n",
                cmd);
        return 2;
    }
    gm_vocab_options vo;
    gm_vocab_options_init_defaults(&vo);
    vo.model_vocab_size = opts->model_vocab_size;
    uint64_t t0 = gm_clock_ns();
    if (gm_vocab_create_from_file(opts->tokenizer, &vo, &s->vocab, &err) != GM_OK)
        return gm_cli_fail(cmd, &err);
    s->load_vocab_ms = ms_since(t0);
    t0 = gm_clock_ns();
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

void gm_cli_session_close(gm_cli_session *s)
{
    gm_compiled_destroy(s->compiled);
    gm_grammar_destroy(s->grammar);
    gm_vocab_destroy(s->vocab);
    memset(s, 0, sizeof *s);
}

size_t gm_cli_mask_count(const uint32_t *mask, uint32_t nbits)
{
    return gm_count_bits32(mask, ((size_t)nbits + 31) / 32);
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

int gm_cli_grammar_arg_fail(const char *cmd, const char *usage, int argc, char **argv, int i0)
{
    char why[256];
    return gm_cli_bad_arg(cmd, usage, "%s", gm_cli_grammar_arg_why(argc, argv, i0, why, sizeof why));
}

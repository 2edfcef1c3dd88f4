/* Tool-call presets -> structural tags (dispatch/tools.h, note [tool formats]). */
#include "dispatch/tools.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "dispatch/tool_families.h"
#include "schema/json.h"

static const struct {
    const char *name;
    gm_tool_format format;
} formats[] = {{"llama", GM_TOOLS_LLAMA},
               {"llama-json", GM_TOOLS_LLAMA_JSON},
               {"qwen", GM_TOOLS_QWEN},
               {"harmony", GM_TOOLS_HARMONY}};

gm_tool_format gm_tool_format_named(const char *name)
{
    for (size_t k = 0; name && k < sizeof formats / sizeof *formats; k++)
        if (!strcmp(formats[k].name, name))
            return formats[k].format;
    return gm_tool_family_named(name);
}

const char *gm_tool_format_name(gm_tool_format f)
{
    for (size_t k = 0; k < sizeof formats / sizeof *formats; k++)
        if (formats[k].format == f)
            return formats[k].name;
    return gm_tool_family_name(f) ? gm_tool_family_name(f) : "?";
}

static const char *const harmony_specials[] = {"<|start|>", "<|end|>",  "<|message|>",
                                               "<|channel|>", "<|constrain|>", "<|return|>",
                                               "<|call|>"};

typedef struct tool {
    const char *name;         /* in the document's arena */
    uint32_t name_len;
    const gm_jv *params;      /* NULL: no parameters */
    bool builtin;             /* a builtin tool (harmony: browser.search, python) */
} tool;

typedef struct preset {
    gm_jdoc doc;
    const char *name;
    gm_error *err;
    gm_strbuf *out;
    tool *tools;
    uint32_t ntools;
    gm_tool_format format;
    gm_tool_choice choice;
    const char *choice_name;
    bool parallel;
    gm_reasoning reasoning;
} preset;

static gm_status fail_at(preset *p, const gm_jv *at, const char *ptr, const char *fmt, ...)
    GM_PRINTF(4, 5);
static gm_status fail_at(preset *p, const gm_jv *at, const char *ptr, const char *fmt, ...)
{
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_srcloc loc = at ? gm_jdoc_loc(&p->doc, at->off) : (gm_srcloc){0};
    loc.file = p->name;
    return gm_error_set_at(p->err, GM_ERR_FORMAT, loc, p->doc.text, p->doc.len, "tools %s: %s",
                           ptr, msg);
}

/* ---- JSON output ---------------------------------------------------------- */

static void put_string(gm_strbuf *b, const char *s, size_t n)
{
    gm_strbuf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            gm_strbuf_putc(b, '\\');
            gm_strbuf_putc(b, (char)c);
        } else if (c == '\n') {
            gm_strbuf_puts(b, "\\n");
        } else if (c < 0x20) {
            gm_strbuf_printf(b, "\\u%04x", c);
        } else {
            gm_strbuf_putc(b, (char)c);
        }
    }
    gm_strbuf_putc(b, '"');
}

static void put_cstring(gm_strbuf *b, const char *s) { put_string(b, s, strlen(s)); }

/* A text made of fixed parts and a tool name: prefix NAME suffix. */
static void put_named(gm_strbuf *b, const char *prefix, const tool *t, const char *suffix)
{
    gm_strbuf out;
    gm_strbuf_init(&out, b->mem);
    gm_strbuf_puts(&out, prefix);
    gm_strbuf_append(&out, t->name, t->name_len);
    gm_strbuf_puts(&out, suffix);
    b->failed |= out.failed;
    put_string(b, gm_strbuf_str(&out), out.n);
    gm_strbuf_free(&out);
}

/* The tool's argument schema, as its source text (exact numbers and member order kept). */
static void put_schema(preset *p, const tool *t)
{
    gm_strbuf_puts(p->out, "{\"type\": \"json_schema\", \"json_schema\": ");
    if (t->params)
        gm_strbuf_append(p->out, p->doc.text + t->params->off, t->params->end - t->params->off);
    else
        gm_strbuf_puts(p->out, "{\"type\": \"object\"}");
    gm_strbuf_putc(p->out, '}');
}

static bool selected(const preset *p, const tool *t)
{
    return p->choice != GM_TOOL_CHOICE_NAMED ||
           (strlen(p->choice_name) == t->name_len &&
            !memcmp(p->choice_name, t->name, t->name_len));
}

/* ---- the formats ---------------------------------------------------------- */

/* triggered_tags over the selected tools with one begin/end shape. */
static void put_triggered(preset *p, const char *trigger, const char *begin_prefix,
                          const char *begin_suffix, const char *end, const char *exclude)
{
    gm_strbuf *b = p->out;
    if (p->choice == GM_TOOL_CHOICE_NONE) {
        gm_strbuf_puts(b, "{\"type\": \"any_text\", \"excludes\": [");
        put_cstring(b, trigger);
        if (exclude) {
            gm_strbuf_puts(b, ", ");
            put_cstring(b, exclude);
        }
        gm_strbuf_puts(b, "]}");
        return;
    }
    gm_strbuf_puts(b, "{\"type\": \"triggered_tags\", \"triggers\": [");
    put_cstring(b, trigger);
    gm_strbuf_puts(b, "], \"tags\": [");
    bool first = true;
    for (uint32_t i = 0; i < p->ntools; i++) {
        const tool *t = &p->tools[i];
        if (!selected(p, t))
            continue;
        gm_strbuf_puts(b, first ? "\n  {\"begin\": " : ",\n  {\"begin\": ");
        first = false;
        put_named(b, begin_prefix, t, begin_suffix);
        gm_strbuf_puts(b, ", \"content\": ");
        put_schema(p, t);
        gm_strbuf_puts(b, ", \"end\": ");
        put_cstring(b, end);
        gm_strbuf_putc(b, '}');
    }
    gm_strbuf_puts(b, "]");
    if (p->choice == GM_TOOL_CHOICE_REQUIRED || p->choice == GM_TOOL_CHOICE_NAMED)
        gm_strbuf_puts(b, ", \"at_least_one\": true, \"text_before_first\": true");
    if (!p->parallel)
        gm_strbuf_puts(b, ", \"stop_after_first\": true");
    if (exclude) {
        gm_strbuf_puts(b, ", \"excludes\": [");
        put_cstring(b, exclude);
        gm_strbuf_puts(b, "]");
    }
    gm_strbuf_puts(b, "}");
}

static void put_qwen(preset *p)
{
    gm_strbuf *b = p->out;
    static const char think[] =
        "{\"type\": \"tag\", \"begin\": \"<think>\", \"content\": {\"type\": \"any_text\"}, "
        "\"end\": \"</think>\"}";
    const char *trig = "<tool_call>", *pre = "<tool_call>\n{\"name\": \"";
    const char *post = "\", \"arguments\": ", *end = "}\n</tool_call>";
    switch (p->reasoning) {
    case GM_REASONING_FORCED:
        gm_strbuf_printf(b, "{\"type\": \"sequence\", \"elements\": [%s,\n", think);
        put_triggered(p, trig, pre, post, end, NULL);
        gm_strbuf_puts(b, "]}");
        break;
    case GM_REASONING_FORBIDDEN:
        put_triggered(p, trig, pre, post, end, "<think>");
        break;
    default:
        /* an optional think block, then the body (once: its schemas compile once) */
        gm_strbuf_printf(b, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"or\", "
                            "\"elements\": [%s, {\"type\": \"const_string\", \"value\": \"\"}]},\n",
                         think);
        put_triggered(p, trig, pre, post, end, NULL);
        gm_strbuf_puts(b, "]}");
        break;
    }
}

static void put_harmony_text(gm_strbuf *b, const char *channel, const char *end)
{
    gm_strbuf_printf(b, "{\"type\": \"tag\", \"begin\": \"<|channel|>%s<|message|>\", "
                        "\"content\": {\"type\": \"any_text\"}, \"end\": \"%s\"}",
                     channel, end);
}

/* The turn's last message: the answer, or a call (note [tool formats]). */
static void put_harmony_end(preset *p)
{
    gm_strbuf *b = p->out;
    gm_strbuf_puts(b, "{\"type\": \"or\", \"elements\": [");
    bool first = true;
    if (p->choice != GM_TOOL_CHOICE_REQUIRED && p->choice != GM_TOOL_CHOICE_NAMED) {
        gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [");
        put_harmony_text(b, "final", "");
        gm_strbuf_puts(b, ", {\"type\": \"or\", \"elements\": [{\"type\": \"const_string\", "
                          "\"value\": \"\"}, {\"type\": \"const_string\", \"value\": "
                          "\"<|return|>\"}]}]}");
        first = false;
    }
    for (uint32_t i = 0; p->choice != GM_TOOL_CHOICE_NONE && i < p->ntools; i++) {
        const tool *t = &p->tools[i];
        if (!selected(p, t))
            continue;
        gm_strbuf_puts(b, first ? "\n  " : ",\n  ");
        first = false;
        if (t->builtin) {
            /* a builtin tool: to=NAME, code arguments (XGrammar's harmony preset) */
            gm_strbuf_puts(b, "{\"type\": \"tag\", \"begin\": ");
            put_named(b, "<|channel|>commentary to=", t, " code<|message|>");
            gm_strbuf_puts(b, ", \"content\": ");
            put_schema(p, t);
            gm_strbuf_puts(b, ", \"end\": \"<|call|>\"}");
            continue;
        }
        gm_strbuf_puts(b, "{\"type\": \"tag\", \"begin\": ");
        put_named(b, "<|channel|>commentary to=functions.", t, "");
        gm_strbuf_puts(b, ", \"content\": {\"type\": \"sequence\", \"elements\": ["
                          "{\"type\": \"or\", \"elements\": [{\"type\": \"const_string\", "
                          "\"value\": \" <|constrain|>json\"}, {\"type\": \"const_string\", "
                          "\"value\": \"<|constrain|>json\"}, {\"type\": \"const_string\", "
                          "\"value\": \"\"}]}, {\"type\": \"const_string\", \"value\": "
                          "\"<|message|>\"}, ");
        put_schema(p, t);
        gm_strbuf_puts(b, "]}, \"end\": \"<|call|>\"}");
    }
    gm_strbuf_puts(b, "]}");
}

static void put_harmony(preset *p)
{
    gm_strbuf *b = p->out;
    const char *sep = "\"<|start|>assistant\"";
    /* earlier messages: analysis (unless forbidden) and commentary preambles */
    gm_strbuf earlier;
    gm_strbuf_init(&earlier, b->mem);
    gm_strbuf_puts(&earlier, "{\"type\": \"tags_with_separator\", \"tags\": [");
    if (p->reasoning != GM_REASONING_FORBIDDEN) {
        put_harmony_text(&earlier, "analysis", "<|end|>");
        gm_strbuf_puts(&earlier, ", ");
    }
    put_harmony_text(&earlier, "commentary", "<|end|>");
    gm_strbuf_printf(&earlier, "], \"separator\": %s, \"at_least_one\": true}", sep);
    b->failed |= earlier.failed;
    /* with a first analysis when forced */
    if (p->reasoning == GM_REASONING_FORCED) {
        gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [");
        put_harmony_text(b, "analysis", "<|end|>");
        gm_strbuf_printf(b, ", {\"type\": \"const_string\", \"value\": %s},\n", sep);
    }
    /* sequence[or["", sequence[EARLIER, sep]], END]: END once, so its schemas compile once */
    gm_strbuf_printf(b, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"or\", \"elements\": "
                        "[{\"type\": \"const_string\", \"value\": \"\"}, {\"type\": \"sequence\", "
                        "\"elements\": [%s, {\"type\": \"const_string\", \"value\": %s}]}]},\n",
                     gm_strbuf_str(&earlier), sep);
    put_harmony_end(p);
    gm_strbuf_puts(b, "]}");
    if (p->reasoning == GM_REASONING_FORCED)
        gm_strbuf_puts(b, "]}");
    gm_strbuf_free(&earlier);
}

/* A model family's preset (dispatch/tool_families.h) over the selected tools. */
static void put_family(preset *p)
{
    gm_family_tool *sel = gm_jdoc_alloc(&p->doc, (size_t)(p->ntools ? p->ntools : 1) *
                                                     sizeof *sel);
    if (!sel) {
        p->out->failed = true;
        return;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->ntools; i++) {
        const tool *t = &p->tools[i];
        if (!selected(p, t))
            continue;
        sel[n++] = (gm_family_tool){t->name, t->name_len,
                                    t->params ? p->doc.text + t->params->off : NULL,
                                    t->params ? t->params->end - t->params->off : 0};
    }
    gm_family_turn turn = {sel, n, p->choice, p->parallel, p->reasoning};
    gm_tool_family_put(p->format, &turn, p->out);
}

/* ---- reading the tools ---------------------------------------------------- */

/*
 * Fails on the first key of obj (at pointer ptr) outside allowed[]
 * (NULL-ended): a misspelled key is an error, never ignored.
 */
static gm_status known_keys(preset *p, const gm_jv *obj, const char *ptr, const char *what,
                            const char *const *allowed)
{
    const gm_jmember *m = gm_jv_unknown_key(obj, allowed);
    if (!m)
        return GM_OK;
    char at[192], list[192];
    snprintf(at, sizeof at, "%s/%s", ptr, m->key);
    size_t n = 0;
    list[0] = 0;
    for (const char *const *a = allowed; *a && n < sizeof list; a++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s\"%s\"", n ? ", " : "", *a);
    return fail_at(p, m->value, at, "unknown key \"%s\" in %s (it takes %s)", m->key, what,
                   list);
}

static gm_status read_tools(preset *p, const gm_jv *arr, const char *arr_ptr)
{
    static const char *const tool_keys[] = {"type", "function", NULL};
    static const char *const function_keys[] = {"name", "description", "parameters", "strict",
                                                NULL};
    char fptr[80];
    gm_status st;
    p->tools = gm_jdoc_alloc(&p->doc, (size_t)(arr->n ? arr->n : 1) * sizeof *p->tools);
    if (!p->tools)
        return gm_error_set(p->err, GM_ERR_NOMEM, "out of memory reading tools");
    char ptr[64];
    for (uint32_t i = 0; i < arr->n; i++) {
        const gm_jv *t = arr->u.items[i];
        snprintf(ptr, sizeof ptr, "%s/%u", arr_ptr, i);
        if (t->kind != GM_JV_OBJECT)
            return fail_at(p, t, ptr, "expected a tool object");
        const gm_jv *type = gm_jv_get(t, "type");
        const gm_jv *fn = gm_jv_get(t, "function");
        if (type && type->kind != GM_JV_STRING)
            return fail_at(p, type, ptr, "a tool's \"type\" must be a string");
        bool builtin = type && strcmp(type->u.s, "function");
        if (builtin && p->format != GM_TOOLS_HARMONY)
            return fail_at(p, type, ptr, "a builtin tool (type \"%s\"): only the harmony "
                                         "format calls builtin tools; others take tools of "
                                         "type \"function\"", type->u.s);
        if (builtin && fn)
            return fail_at(p, fn, ptr, "a builtin tool (type \"%s\") takes \"name\" and "
                                       "\"parameters\", not \"function\"", type->u.s);
        if (fn && fn->kind != GM_JV_OBJECT)
            return fail_at(p, fn, ptr, "\"function\" must be an object");
        const gm_jv *f = fn ? fn : t;
        /* OpenAI's {"type": "function", "function": {...}}, or the function itself */
        snprintf(fptr, sizeof fptr, "%s%s", ptr, fn ? "/function" : "");
        if (fn && (st = known_keys(p, t, ptr, "a tool", tool_keys)) != GM_OK)
            return st;
        if ((st = known_keys(p, f, fptr, "a function", fn ? function_keys : (const char *[]){
                                 "type", "name", "description", "parameters", "strict", NULL})))
            return st;
        const gm_jv *strict = gm_jv_get(f, "strict");
        if (strict && strict->kind != GM_JV_TRUE && strict->kind != GM_JV_FALSE &&
            strict->kind != GM_JV_NULL)
            return fail_at(p, strict, fptr, "\"strict\" must be true or false (gramask "
                                            "always keeps the arguments to the schema)");
        const gm_jv *name = gm_jv_get(f, "name");
        if (builtin && !name)
            name = type; /* the name the model writes: the type unless given */
        if (!name || name->kind != GM_JV_STRING || name->n == 0)
            return fail_at(p, name ? name : f, ptr, "a tool needs a non-empty \"name\" string");
        for (uint32_t k = 0; k < name->n; k++)
            if ((unsigned char)name->u.s[k] < 0x20 || name->u.s[k] == '"' ||
                name->u.s[k] == '<' || name->u.s[k] == '>')
                return fail_at(p, name, ptr, "a tool name may not hold control characters, "
                                             "quotes or angle brackets");
        for (uint32_t j = 0; j < i; j++)
            if (p->tools[j].name_len == name->n && !memcmp(p->tools[j].name, name->u.s, name->n))
                return fail_at(p, name, ptr, "two tools are named \"%s\"", name->u.s);
        const gm_jv *params = gm_jv_get(f, "parameters");
        if (params && params->kind != GM_JV_OBJECT && params->kind != GM_JV_TRUE)
            return fail_at(p, params, ptr, "\"parameters\" must be a JSON Schema object");
        p->tools[i] = (tool){name->u.s, name->n, params, builtin};
    }
    p->ntools = arr->n;
    return GM_OK;
}

static gm_status read_choice(preset *p, const gm_jv *v)
{
    if (v->kind == GM_JV_STRING) {
        if (!strcmp(v->u.s, "auto"))
            p->choice = GM_TOOL_CHOICE_AUTO;
        else if (!strcmp(v->u.s, "required"))
            p->choice = GM_TOOL_CHOICE_REQUIRED;
        else if (!strcmp(v->u.s, "none"))
            p->choice = GM_TOOL_CHOICE_NONE;
        else
            return fail_at(p, v, "/tool_choice", "expected auto, required, none or "
                                                 "{\"type\": \"function\", ...}");
        return GM_OK;
    }
    static const char *const choice_keys[] = {"type", "function", NULL};
    static const char *const name_keys[] = {"name", NULL};
    gm_status st;
    if (v->kind == GM_JV_OBJECT &&
        (st = known_keys(p, v, "/tool_choice", "a tool_choice", choice_keys)) != GM_OK)
        return st;
    const gm_jv *type = v->kind == GM_JV_OBJECT ? gm_jv_get(v, "type") : NULL;
    if (type && (type->kind != GM_JV_STRING || strcmp(type->u.s, "function")))
        return fail_at(p, type, "/tool_choice/type", "expected \"function\"");
    const gm_jv *fn = v->kind == GM_JV_OBJECT ? gm_jv_get(v, "function") : NULL;
    if (fn && (st = known_keys(p, fn, "/tool_choice/function", "a tool_choice's function",
                               name_keys)) != GM_OK)
        return st;
    const gm_jv *name = fn ? gm_jv_get(fn, "name") : NULL;
    if (!name || name->kind != GM_JV_STRING)
        return fail_at(p, v, "/tool_choice",
                       "expected {\"type\": \"function\", \"function\": {\"name\": ...}}");
    p->choice = GM_TOOL_CHOICE_NAMED;
    p->choice_name = name->u.s;
    return GM_OK;
}

void gm_tools_options_init_defaults(gm_tools_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->parallel = -1;
    gm_schema_options_init_defaults(&opts->schema);
    gm_limits_init_defaults(&opts->limits);
}

gm_status gm_tools_structural_tag(gm_mem *m, const char *name, const char *tools, size_t len,
                                  const gm_tools_options *opts, gm_strbuf *out, gm_error *err)
{
    preset p = {0};
    p.name = name ? name : "tools";
    p.err = err;
    p.out = out;
    gm_tools_options d;
    gm_tools_options_init_defaults(&d);
    if (!opts)
        opts = &d;
    p.format = opts->format;
    if (!gm_tool_format_name(p.format) || !strcmp(gm_tool_format_name(p.format), "?"))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_tools_options.format: choose llama, "
                                                  "llama-json, qwen, harmony or a model family "
                                                  "(gramask tools --help)");
    gm_status st = gm_jdoc_parse(&p.doc, m, p.name, tools, len, 512, &opts->limits, err);
    if (st != GM_OK)
        return st;
    const gm_jv *root = p.doc.root, *arr = root;
    int parallel = -1;
    p.choice = GM_TOOL_CHOICE_AUTO;
    static const char *const top_keys[] = {"tools", "tool_choice", "parallel_tool_calls", NULL};
    if (root->kind == GM_JV_OBJECT) {
        if ((st = known_keys(&p, root, "", "a tool list", top_keys)) != GM_OK)
            goto out;
        arr = gm_jv_get(root, "tools");
        const gm_jv *choice = gm_jv_get(root, "tool_choice");
        const gm_jv *par = gm_jv_get(root, "parallel_tool_calls");
        if (choice && (st = read_choice(&p, choice)) != GM_OK)
            goto out;
        if (par && par->kind != GM_JV_TRUE && par->kind != GM_JV_FALSE) {
            st = fail_at(&p, par, "/parallel_tool_calls", "expected true or false");
            goto out;
        }
        if (par)
            parallel = par->kind == GM_JV_TRUE;
    }
    if (!arr || arr->kind != GM_JV_ARRAY) {
        st = fail_at(&p, arr ? arr : root, "", "expected an array of tools, or an object with "
                                               "\"tools\"");
        goto out;
    }
    if ((st = read_tools(&p, arr, arr == root ? "" : "/tools")) != GM_OK)
        goto out;
    if (opts->tool_choice != GM_TOOL_CHOICE_DEFAULT) {
        p.choice = opts->tool_choice;
        p.choice_name = opts->tool_name;
    }
    p.parallel = opts->parallel >= 0 ? opts->parallel != 0 : parallel != 0;
    p.reasoning = opts->reasoning;
    if (p.choice == GM_TOOL_CHOICE_NAMED) {
        bool found = false;
        for (uint32_t i = 0; p.choice_name && i < p.ntools; i++)
            found |= selected(&p, &p.tools[i]);
        if (!found) {
            st = gm_error_set(err, GM_ERR_ARGUMENT, "tool_choice names \"%s\", which is not one "
                              "of the tools", p.choice_name ? p.choice_name : "(null)");
            goto out;
        }
    }
    if (p.ntools == 0 && (p.choice == GM_TOOL_CHOICE_REQUIRED || p.choice == GM_TOOL_CHOICE_AUTO))
        p.choice = p.choice == GM_TOOL_CHOICE_AUTO ? GM_TOOL_CHOICE_NONE : p.choice;
    if (p.ntools == 0 && p.choice == GM_TOOL_CHOICE_REQUIRED) {
        st = gm_error_set(err, GM_ERR_ARGUMENT, "tool_choice is required but there are no tools");
        goto out;
    }
    gm_strbuf_puts(out, "{\"type\": \"structural_tag\"");
    if (opts->free_text_bytes)
        gm_strbuf_puts(out, ", \"free_text\": \"bytes\"");
    if (p.format == GM_TOOLS_HARMONY) {
        gm_strbuf_puts(out, ", \"special_tokens\": [");
        for (size_t k = 0; k < sizeof harmony_specials / sizeof *harmony_specials; k++) {
            if (k)
                gm_strbuf_puts(out, ", ");
            put_cstring(out, harmony_specials[k]);
        }
        gm_strbuf_puts(out, "]");
    }
    gm_tool_family_put_candidates(p.format, out);
    gm_strbuf_puts(out, ",\n\"format\": ");
    switch (p.format) {
    case GM_TOOLS_LLAMA:
        put_triggered(&p, "<function=", "<function=", ">", "</function>", NULL);
        break;
    case GM_TOOLS_LLAMA_JSON:
        put_triggered(&p, "{\"name\":", "{\"name\": \"", "\", \"parameters\": ", "}", NULL);
        break;
    case GM_TOOLS_QWEN: put_qwen(&p); break;
    case GM_TOOLS_HARMONY: put_harmony(&p); break;
    default: put_family(&p); break;
    }
    gm_strbuf_puts(out, "}\n");
    if (out->failed)
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory writing a structural tag");
out:
    gm_jdoc_free(&p.doc);
    return st;
}

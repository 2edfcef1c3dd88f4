#!/bin/sh
# The sharing of dispatch/stag.c (note [schema memo]: one compile per
# distinct schema; note [shared alternatives]: the calls a rule of their own;
# XML arguments a rule per tool) changes a preset's rules, never its masks:
# random turns (tests/dispatch_generate, goal-biased) of families with XML
# and JSON arguments, with and without a section, are decoded against both
# grammars and every mask and accepting flag compared
# (tests/family_generate_check.py with GM_COMPARE_UNSHARED=1; its
# parsing and schema validation of the finished turns run too). A few turns
# each (about 15 s); `GM_COMPARE_UNSHARED=1 make check-families` compares
# the masks of all its 2,700 turns. Skips without the shared data.
GM_COMPARE_UNSHARED=1 GM_GENERATE_TURNS=${GM_GENERATE_TURNS:-5} GM_FAMILY_MIN_TURNS=0
export GM_COMPARE_UNSHARED GM_GENERATE_TURNS GM_FAMILY_MIN_TURNS
exec "${PYTHON3:-python3}" "${GM_SRCDIR:-.}/tests/family_generate_check.py" \
    qwen_3 qwen_3_coder deepseek_v3_2 glm_4_7 minimax kimi_k3

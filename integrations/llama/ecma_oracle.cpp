// The reference for test_ecma_regex: llama.cpp's own reading of a trigger
// pattern, llama_grammar_trigger_pattern::find (src/llama-grammar.cpp),
// restated over std::regex so that the test compares ecma_regex.c with the
// C++ library llama.cpp is built against (libstdc++ here).
#include <cstddef>
#include <regex>
#include <string>

extern "C" long gm_ecma_oracle_find(const char *pattern, const char *text, size_t len, int *ok)
{
    *ok = 0;
    try {
        std::regex re(pattern);
        std::string input(text, len), pat(pattern);
        *ok = 1;
        auto start_of = [](const std::smatch &m) {
            for (size_t i = 1; i < m.size(); i++)
                if (m.length(i) > 0)
                    return (long)m.position(i);
            return (long)m.position(0);
        };
        std::smatch m;
        if (!pat.empty() && pat.front() == '^' && pat.back() == '$' && std::regex_match(input, m, re))
            return start_of(m);
        if (std::regex_search(input, m, re))
            return start_of(m);
        return -1;
    } catch (...) {
        return -2;
    }
}

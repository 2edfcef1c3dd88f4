# lexer: terminal regexes -> byte NFA -> DFA -> minimal lexing DFA -> transducer.
libgmcore_la_SOURCES += \
	lexer/lexer.h \
	lexer/cpset.c lexer/cpset.h \
	lexer/uclass.c lexer/uclass.h \
	lexer/utf8_ranges.c lexer/utf8_ranges.h \
	lexer/regex.h lexer/regex_parse.c \
	lexer/nfa.c lexer/nfa.h \
	lexer/dfa.c lexer/dfa.h \
	lexer/determinize.c lexer/minimize.c lexer/minimize_ref.c lexer/regex_compile.c \
	lexer/lexer_build.c lexer/lexer_run.c \
	lexer/dump.c lexer/dump.h \
	lexer/termfile.c lexer/termfile.h

gramask_SOURCES += src/cli/cmd_regex.c src/cli/cmd_lex.c

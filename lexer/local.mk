# lexer: see the stage's header comments.

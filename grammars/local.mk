# grammars: see the stage's header comments.

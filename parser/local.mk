# parser: see the stage's header comments.
